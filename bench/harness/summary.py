"""Turn raw worker records into the figures a report shows: times, checks, ratios, geomeans.

The raw records (one per worker process, see worker.py) stay as they are in the JSON file; this
module only derives from them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.compare import Verdict, compare
from harness.kernel import COLUMNS, Column, Kernel, extrapolate, geomean

# Ratio columns of the table: (label, numerator column, denominator column), time over time.
# The first three say how many times slower than C; the last two are speed-ups over CPython
# (CPython's own speed-up to C is the first).
RATIOS: tuple[tuple[str, Column, Column], ...] = (
    ("CPy/C", "cpython", "c"),
    ("tj/C", "tierjit", "c"),
    ("Nb/C", "numba", "c"),
    ("CPy/tj", "cpython", "tierjit"),
    ("CPy/Nb", "cpython", "numba"),
)


@dataclass(slots=True)
class Cell:
    """One column of one kernel, as shown: analogous to a spreadsheet cell with a footnote."""

    seconds: float | None = None  # best time at the bench scale (CPython: maybe extrapolated)
    extrapolated: bool = False  # CPython ran at a smaller scale; seconds is scaled by work
    error: str | None = None  # first line of the failure, when the column failed
    verdict: Verdict | None = None  # result vs CPython's (None: CPython or nothing to compare)
    absent: bool = False  # the column does not exist here (no Numba, no gcc)

    @property
    def ok(self) -> bool:
        return self.seconds is not None and self.verdict != "mismatch"


@dataclass(slots=True)
class KernelRow:
    name: str
    bench_scale: int
    cpython_scale: int
    cells: dict[Column, Cell]
    mismatches: list[str] = field(default_factory=list)


@dataclass(slots=True)
class FirstCall:
    """Import-excluded first call (decorate + compile + one run) of one JIT on one kernel."""

    seconds: float | None = None
    compile_estimate: float | None = None  # first call minus the steady-state best
    error: str | None = None


def _error_line(rec: dict[str, Any]) -> str:
    where = f" (during {rec['phase']})" if rec.get("phase") else ""
    first = str(rec.get("error", "")).strip().splitlines() or ["unknown error"]
    return first[0] + where


def kernel_row(
    kernel: Kernel, recs: dict[Column, dict[str, Any] | None], quick: bool
) -> KernelRow:
    """Cells for one kernel; `recs[column]` is None when that column does not exist here."""
    bench_scale, cpython_scale = kernel.scales(quick)
    row = KernelRow(kernel.name, bench_scale, cpython_scale, {})
    for column in COLUMNS:
        rec = recs.get(column)
        if rec is None:
            row.cells[column] = Cell(absent=True)
        elif "error" in rec:
            row.cells[column] = Cell(error=_error_line(rec))
        else:
            seconds = rec["best_s"]
            scaled = column == "cpython" and rec["scale"] != bench_scale
            if scaled:
                seconds = extrapolate(kernel, seconds, rec["scale"], bench_scale)
            row.cells[column] = Cell(seconds=seconds, extrapolated=scaled)
    _check(row, recs)
    return row


def _worst(verdicts: list[Verdict]) -> Verdict:
    for verdict in ("mismatch", "close"):
        if verdict in verdicts:
            return verdict  # type: ignore[return-value]
    return "identical"


def _check(row: KernelRow, recs: dict[Column, dict[str, Any] | None]) -> None:
    """Each column's result against CPython's at CPython's scale and, when CPython ran smaller,
    against a column that agreed with CPython (C first) at the bench scale."""
    oracle = recs.get("cpython")
    if not oracle or "error" in oracle:
        return
    expected = oracle["check"]["result"]
    agreed: list[Column] = []
    for column in ("c", "numba", "tierjit"):
        rec = recs.get(column)
        if not rec or "error" in rec:
            continue
        got = rec["check"]["result"]
        verdict = compare(got, expected)
        row.cells[column].verdict = verdict
        if verdict == "mismatch":
            row.mismatches.append(
                f"{row.name}: {column} returned {got!r}, CPython {expected!r}"
                f" (scale {rec['check']['scale']})"
            )
        else:
            agreed.append(column)
    if row.cpython_scale == row.bench_scale or not agreed:
        return
    reference = agreed[0]
    ref_result = recs[reference]["result"]  # type: ignore[index]
    for column in agreed[1:]:
        got = recs[column]["result"]  # type: ignore[index]
        verdict = compare(got, ref_result)
        cell = row.cells[column]
        cell.verdict = _worst([cell.verdict or "identical", verdict])
        if verdict == "mismatch":
            row.mismatches.append(
                f"{row.name}: {column} returned {got!r}, {reference} {ref_result!r}"
                f" (scale {row.bench_scale}; CPython did not run at this scale)"
            )


def ratio(row: KernelRow, numerator: Column, denominator: Column) -> float | None:
    top, bottom = row.cells[numerator], row.cells[denominator]
    if not (top.ok and bottom.ok):
        return None
    return top.seconds / bottom.seconds  # type: ignore[operator]


def geomeans(rows: list[KernelRow]) -> dict[str, tuple[float, int]]:
    """Per ratio column: (geometric mean, number of kernels it covers); mismatches left out."""
    out = {}
    for label, numerator, denominator in RATIOS:
        values = [r for row in rows if (r := ratio(row, numerator, denominator)) is not None]
        out[label] = (geomean(values), len(values))
    return out


def first_call(rec: dict[str, Any] | None, steady: Cell) -> FirstCall:
    if rec is None:
        return FirstCall()
    if "error" in rec:
        return FirstCall(error=_error_line(rec))
    seconds = rec["first_call_s"]
    estimate = seconds - steady.seconds if steady.seconds is not None else None
    if estimate is not None and estimate <= 0:  # noise, or the first call ran as fast as any
        estimate = None
    return FirstCall(seconds=seconds, compile_estimate=estimate)
