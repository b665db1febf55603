"""Measure one (kernel, column) cell in this fresh process and print it as one JSON line.

    worker.py steady KERNEL COLUMN [--quick] [--repeat N] [--budget S] [--warmup W]
    worker.py first  KERNEL COLUMN [--quick]

`steady`: build the column, run it once at CPython's scale when that differs (so its result can
be checked against CPython's), warm up, then time up to N calls within a budget.
`first`: with imports already done, time decorating + the first call (compile included).
Every failure is caught and reported with the phase it happened in, never raised.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(BENCH))
sys.path.insert(1, str(BENCH.parent))

from harness import kernel as kernels
from harness.compare import plain
from harness.measure import repeat_calls, timed_call

MARKER = "@@bench-cell@@ "


def steady(rec: dict[str, Any], opts: argparse.Namespace) -> None:
    rec["phase"] = "load"
    kernel = kernels.load(opts.kernel, f"_{opts.column}")
    run_scale, cpython_scale = kernel.scales(opts.quick)
    scale = cpython_scale if opts.column == "cpython" else run_scale
    rec["scale"] = scale
    rec["phase"] = "build"
    start = time.perf_counter()
    fn = kernels.build(kernel, opts.column)
    rec["build_s"] = time.perf_counter() - start
    if scale != cpython_scale:
        rec["phase"] = f"check run (scale {cpython_scale})"
        seconds, result = timed_call(fn, kernel.setup(cpython_scale))
        rec["check"] = {"scale": cpython_scale, "seconds": seconds, "result": plain(result)}
    args = kernel.setup(scale)
    rec["phase"] = "warm-up"
    rec["warmup_s"] = []
    for _ in range(opts.warmup):  # a slow column (a JIT fallen back to Python) warms up once
        seconds, result = timed_call(fn, args)
        rec["warmup_s"].append(seconds)
        if sum(rec["warmup_s"]) >= opts.budget:
            break
    rec["phase"] = "timed runs"
    times, result = repeat_calls(fn, args, opts.repeat, opts.budget)
    rec["times_s"] = times
    rec["best_s"] = min(times)
    rec["result"] = plain(result)
    if "check" not in rec:
        rec["check"] = {"scale": scale, "seconds": min(times), "result": rec["result"]}
    if opts.column == "tierjit":
        module = kernel.module
        rec["explain"] = "\n".join(_explain(getattr(module, name)) for name in module.JIT)


def _explain(fn: Any) -> str:
    """tierjit's own account of where a function runs (tier, fallbacks), kept in the JSON."""
    try:
        import tierjit

        return str(tierjit.explain(fn)).rstrip()
    except Exception as exc:  # noqa: BLE001 -- a diagnostic must not fail the cell
        return f"explain failed: {type(exc).__name__}: {exc}"


def first(rec: dict[str, Any], opts: argparse.Namespace) -> None:
    rec["phase"] = "load"
    kernel = kernels.load(opts.kernel, f"_{opts.column}")
    scale = kernel.scales(opts.quick)[0]
    rec["scale"] = scale
    rec["phase"] = "import"
    kernels.jit_decorator(opts.column)  # imports excluded from the figure
    args = kernel.setup(scale)
    rec["phase"] = "first call"
    start = time.perf_counter()
    fn = kernels.build(kernel, opts.column)
    decorated = time.perf_counter()
    result = fn(*args)
    done = time.perf_counter()
    rec["decorate_s"] = decorated - start
    rec["first_call_s"] = done - start
    rec["result"] = plain(result)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("mode", choices=("steady", "first"))
    parser.add_argument("kernel")
    parser.add_argument("column", choices=kernels.COLUMNS)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--budget", type=float, default=3.0)
    parser.add_argument("--warmup", type=int, default=2)
    opts = parser.parse_args(argv)
    rec: dict[str, Any] = {"kernel": opts.kernel, "column": opts.column, "mode": opts.mode}
    try:
        (steady if opts.mode == "steady" else first)(rec, opts)
        del rec["phase"]
    except Exception as exc:  # noqa: BLE001 -- the cell reports it; the run goes on
        rec["error"] = f"{type(exc).__name__}: {exc}".strip()
        rec["traceback"] = traceback.format_exc(limit=-8)
    sys.stdout.flush()
    sys.stdout.write("\n" + MARKER + json.dumps(rec) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
