"""Render a run as a terminal table and as the Markdown that goes into docs/performance.md."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from harness.kernel import JIT_COLUMNS, Column
from harness.summary import RATIOS, Cell, FirstCall, KernelRow, ratio

TITLES: dict[Column, str] = {"cpython": "CPython", "tierjit": "tierjit", "numba": "Numba", "c": "C"}
CHECKED: tuple[Column, ...] = ("tierjit", "numba", "c")
MARKS = {"identical": "=", "close": "~", "mismatch": "X"}
LEGEND = (
    (
        "Times: best steady-state call at the run's scale (JITs after warm-up); "
        "* = CPython ran at a smaller scale, time scaled by the kernel's work."
    ),
    (
        "Ratios: CPy/C, tj/C, Nb/C = times slower than C; CPy/tj, CPy/Nb = speed-up over "
        "CPython; geomean over the kernels in (n), mismatches left out."
    ),
    (
        "check (tierjit Numba C): = bit-identical to CPython, ~ within 1e-9 relative, "
        "X MISMATCH, E failed, ? no CPython result to compare, . not available."
    ),
)
FIRST_CALL = (
    "First call in a fresh process (imports excluded; decorate + compile + one run at the "
    "run's scale; ≈ compile = first call − steady best):"
)


@dataclass(slots=True)
class Report:
    """Everything a rendering needs; built by run.py from summary.py's figures."""

    rows: list[KernelRow]
    geomeans: dict[str, tuple[float, int]]
    first_calls: dict[str, dict[Column, FirstCall]]
    header: list[str]  # machine and version lines
    call_overhead: list[str] = field(default_factory=list)
    explains: dict[str, list[str]] = field(default_factory=dict)  # kernel -> tierjit.explain
    footnotes: list[str] = field(default_factory=list)  # filled by `footnote`

    def footnote(self, error: str) -> int:
        """Number of the footnote that holds this error (identical errors share one)."""
        if error not in self.footnotes:
            self.footnotes.append(error)
        return self.footnotes.index(error) + 1


def fmt_time(seconds: float | None) -> str:
    if seconds is None or math.isnan(seconds) or seconds < 0:
        return "—"
    if seconds >= 10:
        return f"{seconds:.1f} s"
    if seconds >= 1:
        return f"{seconds:.2f} s"
    ms = seconds * 1e3
    if ms >= 100:
        return f"{ms:.0f} ms"
    if ms >= 10:
        return f"{ms:.1f} ms"
    if ms >= 1:
        return f"{ms:.2f} ms"
    return f"{seconds * 1e6:.0f} µs"


def fmt_ratio(value: float | None) -> str:
    if value is None or math.isnan(value):
        return "—"
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def error_text(report: Report, error: str) -> str:
    """The exception's type and the number of the footnote holding the whole message."""
    return f"{error.split(':', 1)[0][:20]}[{report.footnote(error)}]"


def cell_text(report: Report, cell: Cell, markdown: bool = False) -> str:
    if cell.absent:
        return "n/a"
    if cell.error is not None:
        return error_text(report, cell.error)
    text = fmt_time(cell.seconds) + ("*" if cell.extrapolated else "")
    if cell.verdict == "mismatch":
        text += " **MISMATCH**" if markdown else " MISMATCH"
    return text


def check_marks(row: KernelRow) -> str:
    marks = []
    for column in CHECKED:
        cell = row.cells[column]
        if cell.absent:
            marks.append(".")
        elif cell.error is not None:
            marks.append("E")
        else:
            marks.append(MARKS[cell.verdict] if cell.verdict else "?")
    return " ".join(marks)


def _geomean_text(value: tuple[float, int]) -> str:
    mean, count = value
    return f"{fmt_ratio(mean)} ({count})" if count else "—"


def _table_lines(report: Report, markdown: bool) -> list[str]:
    times = [TITLES[c] for c in TITLES]
    ratios = [label for label, _, _ in RATIOS]
    head = ["kernel", "scale", *times, *ratios, "check"]
    body = []
    for row in report.rows:
        scale = f"{row.bench_scale:,}"
        cells = [cell_text(report, row.cells[c], markdown) for c in TITLES]
        values = [fmt_ratio(ratio(row, num, den)) for _, num, den in RATIOS]
        body.append([row.name, scale, *cells, *values, check_marks(row)])
    means = [_geomean_text(report.geomeans[label]) for label in ratios]
    body.append(["geomean", "", "", "", "", "", *means, ""])
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * 2 + "---:|" * 9 + "---|"]
        return lines + ["| " + " | ".join(cells) + " |" for cells in body]
    widths = [max(len(r[i]) for r in [head, *body]) for i in range(len(head))]

    def line(cells: list[str]) -> str:
        parts = [cells[0].ljust(widths[0])]
        parts += [c.rjust(w) for c, w in zip(cells[1:-1], widths[1:-1], strict=True)]
        return "  ".join(parts) + "  " + cells[-1]

    rule = "-" * (sum(widths) + 2 * len(widths))
    return [line(head), rule, *[line(r) for r in body[:-1]], rule, line(body[-1])]


def _first_call_lines(report: Report, markdown: bool) -> list[str]:
    head = ["kernel"]
    for column in JIT_COLUMNS:
        head += [f"{TITLES[column]} first call", "≈ compile"]
    body = []
    for name, calls in report.first_calls.items():
        cells = [name]
        for column in JIT_COLUMNS:
            call = calls.get(column, FirstCall())
            if call.error is not None:
                cells += [error_text(report, call.error), ""]
            else:
                cells += [fmt_time(call.seconds), fmt_time(call.compile_estimate)]
        body.append(cells)
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
        return lines + ["| " + " | ".join(cells) + " |" for cells in body]
    widths = [max(len(r[i]) for r in [head, *body]) for i in range(len(head))]

    def line(cells: list[str]) -> str:
        parts = [cells[0].ljust(widths[0])]
        parts += [c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True)]
        return "  ".join(parts)

    return [line(r) for r in [head, *body]]


def _mismatch_lines(report: Report) -> list[str]:
    return [f"!! RESULT MISMATCH  {m}" for row in report.rows for m in row.mismatches]


def text(report: Report) -> str:
    out = [*report.header, "", *_table_lines(report, markdown=False), "", *LEGEND]
    mismatches = _mismatch_lines(report)
    if mismatches:
        out += ["", *mismatches]
    if report.first_calls:
        out += ["", FIRST_CALL, ""]
        out += _first_call_lines(report, markdown=False)
    if report.explains:
        out += ["", "Where tierjit ran each kernel (tierjit.explain of each jitted function):"]
        out += [f"  {line}" for lines in report.explains.values() for line in lines]
    if report.call_overhead:
        out += ["", "bench/call_overhead.py:", *("  " + line for line in report.call_overhead)]
    if report.footnotes:
        out += ["", "Errors:", *(f"  [{i}] {e}" for i, e in enumerate(report.footnotes, 1))]
    return "\n".join(out)


def markdown(report: Report, command: str) -> str:
    out = [f"Command: `{command}`", ""]
    out += [f"- {line}" for line in report.header]
    out += ["", *_table_lines(report, markdown=True), ""]
    out += [f"{line}" + "  " for line in LEGEND]
    mismatches = _mismatch_lines(report)
    if mismatches:
        out += ["", *(f"- **{m}**" for m in mismatches)]
    if report.first_calls:
        out += ["", FIRST_CALL, ""]
        out += _first_call_lines(report, markdown=True)
    if report.explains:
        out += ["", "Where tierjit ran each kernel (`tierjit.explain` of each jitted function):"]
        out += ["", "```"]
        out += [line for lines in report.explains.values() for line in lines] + ["```"]
    if report.call_overhead:
        out += ["", "`bench/call_overhead.py`:", "", "```", *report.call_overhead, "```"]
    if report.footnotes:
        out += ["", "Errors:", ""]
        out += [f"{i}. `{e}`" for i, e in enumerate(report.footnotes, 1)]
    return "\n".join(out)
