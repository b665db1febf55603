"""`tierjit run --report`: one row per jitted function that did anything, and the totals.

Columns: calls that went through Python (cold calls and calls native code did not take; calls
that went straight into native code are not counted by tierjit), the highest tier reached, time
per tier as sampled (tools/sampler.py says how), compile time per tier (from the compile events),
deopts with where they resumed (line, op) and give-ups, and the specialisations with their tiers
(`*` marks the one in the dispatch slot). Rendered with rich when it is installed
(`pip install 'tierjit[report]'`), as a plain text table otherwise.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from dataclasses import dataclass, field

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .sampler import Sampler

# Order in which tiers are shown and "highest tier reached" is decided; unknown tiers (a new
# one) rank between tier 0 and the optimising tier.
TIER_RANK = {"python": 0, "interp": 1, "baseline": 2, "opt": 3}
HEADERS = ("function", "calls", "tier", "time per tier (sampled)", "compile time",
           "deopts", "specialisations")


@dataclass
class Row:
    """One jitted function's line in the report."""

    name: str
    calls: int = 0
    tier: str = "python"
    why: str = ""                                          # why not higher, when known
    times: dict[str, float] = field(default_factory=dict)  # tier -> sampled seconds
    compiles: dict[str, list[float]] = field(default_factory=dict)  # tier -> [seconds]
    deopts: int = 0
    deopt_sites: list[tuple[str, int]] = field(default_factory=list)  # ("line 11 (lt)", n)
    gave_up: list[str] = field(default_factory=list)
    specs: list[str] = field(default_factory=list)


def rank(tier: str) -> float:
    return TIER_RANK.get(tier, 1.5)


def collect(sampler: Sampler | None = None) -> tuple[list[Row], Row]:
    """The rows (functions that were called, compiled or sampled) and the totals row."""
    from ..runtime import events
    from ..runtime.dispatch import _fmt_types, _frame_state_detail, dispatchers

    compiles: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for ev in events.events("compile"):
        compiles[ev.function][ev.tier].append(ev.seconds)
    times: dict[str, dict[str, float]] = defaultdict(dict)
    if sampler is not None:
        for (fn, tier), seconds in sampler.times.items():
            if fn:
                times[fn][tier] = times[fn].get(tier, 0.0) + seconds
    rows = []
    for d in dispatchers():
        d.settle()
        name = d.__qualname__
        row = Row(name if d.__module__ == "__main__" else f"{d.__module__}.{name}",
                  calls=d.calls, compiles=dict(compiles.get(name, {})),
                  times=dict(times.get(name, {})))
        if not (row.calls or row.compiles or row.times):
            continue
        ir_error = getattr(d, "_ir_error", None)
        if ir_error is not None:
            row.why = ir_error.describe()
        for spec in d.versions():
            if rank(spec.tier) > rank(row.tier):
                row.tier = spec.tier
            if spec.reason is not None and not row.why:
                row.why = spec.reason.describe()
            mark = "*" if spec.installed else ""
            row.specs.append(f"{_fmt_types(spec.arg_types, spec.values)} {spec.tier}{mark}")
            row.deopts += spec.deopt_count
            for index, n in sorted(list(spec.deopts.items()), key=lambda kv: -kv[1]):
                detail = _frame_state_detail(spec, index)
                where = (f"line {detail['line']} ({detail['op']})" if "line" in detail
                         else f"frame state {index}")
                row.deopt_sites.append((where, n))
            if spec.gave_up:
                row.gave_up.append(spec.gave_up)
        rows.append(row)
    rows.sort(key=lambda r: -(sum(r.times.values()) + sum(map(sum, r.compiles.values()))))
    total = Row("total", calls=sum(r.calls for r in rows), tier="")
    for r in rows:
        for tier, s in r.times.items():
            total.times[tier] = total.times.get(tier, 0.0) + s
        for tier, spans in r.compiles.items():
            total.compiles.setdefault(tier, []).extend(spans)
        total.deopts += r.deopts
    if sampler is not None and sampler.times.get(("", "other")):
        total.times["other"] = sampler.times[("", "other")]
    return rows, total


def _types(arg_types) -> str:
    return "(" + ", ".join("?" if t is None else str(t) for t in arg_types) + ")"


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms" if seconds < 10 else f"{seconds:.2f} s"


def cells(row: Row) -> list[str]:
    """The row's table cells, as text."""
    order = sorted(set(row.times), key=rank)
    times = ", ".join(f"{t} {_ms(row.times[t])}" for t in order) or "-"
    comp = ", ".join(f"{t} {_ms(sum(s))}" + (f" ({len(s)}x)" if len(s) > 1 else "")
                     for t, s in sorted(row.compiles.items(), key=lambda kv: rank(kv[0])))
    deopts = str(row.deopts) if row.deopts else "0"
    if row.deopt_sites:
        deopts += ": " + "; ".join(f"{w} x{n}" for w, n in row.deopt_sites[:3])
        if len(row.deopt_sites) > 3:
            deopts += f"; {len(row.deopt_sites) - 3} more sites"
    if row.gave_up:
        deopts += "; gave up: " + "; ".join(row.gave_up)
    tier = row.tier + (f" ({row.why})" if row.why and row.tier != "opt" else "")
    return [row.name, str(row.calls), tier, times, comp or "-", deopts,
            ", ".join(row.specs) or "-"]


def footer(sampler: Sampler | None) -> str:
    if sampler is None or not sampler.samples:
        return ("time per tier: no samples (the run was too short, or this platform has no "
                "profiling timer)")
    mean = sampler.seconds / sampler.samples
    return (f"time per tier: {sampler.samples} samples of the main thread, one per "
            f"{mean * 1e3:.1f} ms on average (a profiling timer set to "
            f"{sampler.interval * 1e3:g} ms of CPU time), {_ms(sampler.seconds)} in all; "
            "native time is credited to the jitted function whose call the main thread is "
            "in; 'other' is time outside jitted functions. calls: calls through Python only "
            "(native calls are not counted).")


def render_plain(rows: list[Row], total: Row, sampler: Sampler | None) -> str:
    """A plain text table, for when rich is not installed."""
    table = [list(HEADERS)] + [cells(r) for r in rows] + [cells(total)]
    widths = [min(max(len(r[i]) for r in table), 60) for i in range(len(HEADERS))]
    lines = ["tierjit report"]
    for k, r in enumerate(table):
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
        if k == 0 or k == len(table) - 2:
            lines.append("  ".join("-" * w for w in widths))
    lines.append(footer(sampler))
    return "\n".join(lines)


def print_report(sampler: Sampler | None = None, file=None) -> None:
    """Print the report (rich if available) to `file` (stderr by default)."""
    file = sys.stderr if file is None else file
    rows, total = collect(sampler)
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        print(render_plain(rows, total, sampler), file=file, flush=True)
        return
    table = Table(title="tierjit report", title_justify="left")
    for h in HEADERS:
        table.add_column(h, overflow="fold", justify="right" if h == "calls" else "left",
                         no_wrap=h == "function")
    for r in rows:
        table.add_row(*cells(r))
    table.add_section()
    table.add_row(*cells(total), style="bold")
    width = None if file.isatty() else 160
    console = Console(file=file, width=width)
    console.print(table)
    console.print(footer(sampler), soft_wrap=True)
    file.flush()
