"""`make bench`: the kernel suite side by side — CPython, tierjit, Numba, C — plus first calls.

    bench/run.py [--kernels fib,nbody] [--quick] [--no-first-call] [--repeat N]
                 [--timeout S] [--no-save] [--docs | --no-docs]

Each (kernel, column) cell is measured by harness/worker.py in its own process; a column that
fails (tierjit not ready, a crash, a timeout) shows its error and the run goes on. The table is
printed, the raw timings go to bench/results/<UTC time>.json, and a full run (all kernels, not
--quick) rewrites the table in docs/performance.md between its bench markers.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from harness import cbuild, machine, render, store, summary
from harness.kernel import COLUMNS, JIT_COLUMNS, Column, load
from harness.worker import MARKER
from kernels import KERNELS

WORKER = BENCH / "harness" / "worker.py"
CALL_OVERHEAD = BENCH / "call_overhead.py"
CELL_BUDGET_S = 3.0  # timed calls of one cell stop once they have used this much


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kernels", help="comma-separated subset of: " + ",".join(KERNELS))
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: small scales everywhere, one timed call")
    parser.add_argument("--no-first-call", action="store_true",
                        help="skip the fresh-process first-call measurements")
    parser.add_argument("--repeat", type=int, default=5,
                        help="timed calls per JIT and C cell, best taken (default 5)")
    parser.add_argument("--timeout", type=float, default=120.0,
                        help="seconds before one cell's worker is killed (default 120)")
    parser.add_argument("--no-save", action="store_true", help="do not write bench/results/")
    parser.add_argument("--no-baseline", action="store_true",
                        help="skip bench/baseline.py (baseline tier vs CPython and LLVM)")
    docs = parser.add_mutually_exclusive_group()
    docs.add_argument("--docs", action="store_true", default=None,
                      help="update docs/performance.md even for a partial or quick run")
    docs.add_argument("--no-docs", dest="docs", action="store_false",
                      help="never update docs/performance.md")
    return parser.parse_args(argv)


def available_columns() -> dict[Column, bool]:
    """Columns that can exist here; tierjit is always tried so that its failures show."""
    return {
        "cpython": True,
        "tierjit": True,
        "numba": importlib.util.find_spec("numba") is not None,
        "c": cbuild.compiler() is not None,
    }


def worker_args(column: Column, opts: argparse.Namespace) -> list[str]:
    if opts.quick:
        return ["--quick", "--repeat", "1", "--warmup", "0" if column == "cpython" else "1"]
    if column == "cpython":  # slow: once, or a few times when that is cheap
        return ["--repeat", "3", "--warmup", "0", "--budget", str(CELL_BUDGET_S)]
    warmup = "1" if column == "c" else "2"
    return ["--repeat", str(opts.repeat), "--warmup", warmup, "--budget", str(CELL_BUDGET_S)]


def run_worker(args: list[str], timeout: float) -> dict[str, Any]:
    """Run one worker process and return its record; every failure becomes an error record."""
    cmd = [sys.executable, str(WORKER), *args]
    # as users run Python: bytecode cached (else a first call would include compiling
    # tierjit's own modules from source)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                              check=False, stdin=subprocess.DEVNULL, env=env)
    except subprocess.TimeoutExpired:
        return {"error": f"Timeout: no answer after {timeout:g} s (worker killed)"}
    for line in reversed(done.stdout.splitlines()):
        if line.startswith(MARKER):
            return json.loads(line[len(MARKER):])
    if done.returncode < 0:
        try:
            why = f"killed by {signal.Signals(-done.returncode).name}"
        except ValueError:
            why = f"killed by signal {-done.returncode}"
    else:
        why = f"exit status {done.returncode}"
    tail = done.stderr.strip().splitlines()[-6:]
    return {"error": f"WorkerDied: {why} without a result", "stderr_tail": tail}


def run_call_overhead(quick: bool) -> dict[str, Any]:
    """Run bench/call_overhead.py if it exists and keep its lines."""
    if not CALL_OVERHEAD.exists():
        return {"ran": False}
    env = dict(os.environ, TIERJIT_BENCH_QUICK="1" if quick else "0")
    try:
        done = subprocess.run([sys.executable, str(CALL_OVERHEAD)], capture_output=True,
                              text=True, timeout=120 if quick else 300, env=env,
                              check=False, stdin=subprocess.DEVNULL, cwd=BENCH.parent)
    except subprocess.TimeoutExpired:
        return {"ran": True, "lines": [], "error": "timed out"}
    lines = [line.rstrip() for line in done.stdout.strip("\n").splitlines()]
    result: dict[str, Any] = {"ran": True, "lines": lines, "exit_status": done.returncode}
    if done.returncode != 0:
        result["error"] = (done.stderr.strip().splitlines() or ["failed"])[-1]
    return result


def progress(text: str, end: str = "") -> None:
    print(text, end=end, flush=True)


Records = dict[str, dict[Column, dict[str, Any] | None]]  # kernel -> column -> worker record


def measure_steady(names: list[str], present: dict[Column, bool],
                   opts: argparse.Namespace) -> Records:
    """One worker per (kernel, column), one at a time, printing each figure as it comes."""
    cells: Records = {}
    for name in names:
        progress(f"  {name:<14}")
        cells[name] = {}
        bench_scale = load(name, "_run").scales(opts.quick)[0]
        for column in COLUMNS:
            if not present[column]:
                cells[name][column] = None
                continue
            rec = run_worker(["steady", name, column, *worker_args(column, opts)], opts.timeout)
            rec.setdefault("kernel", name)
            rec.setdefault("column", column)
            cells[name][column] = rec
            shown = "error" if "error" in rec else render.fmt_time(rec["best_s"])
            if column == "cpython" and rec.get("scale", bench_scale) != bench_scale:
                shown += f" at scale {rec['scale']:,}"
            progress(f" {column} {shown};")
        progress("", end="\n")
    return cells


def measure_first_calls(names: list[str], present: dict[Column, bool],
                        opts: argparse.Namespace) -> Records:
    firsts: Records = {}
    progress("  first calls:")
    for name in names:
        firsts[name] = {}
        for column in JIT_COLUMNS:
            if present[column]:
                args = ["first", name, column] + (["--quick"] if opts.quick else [])
                firsts[name][column] = run_worker(args, opts.timeout)
        progress(f" {name}")
    progress("", end="\n")
    return firsts


def build_report(names: list[str], cells: Records, firsts: Records,
                 info: dict[str, Any], overhead: dict[str, Any], quick: bool) -> render.Report:
    rows = [summary.kernel_row(load(name, "_report"), cells[name], quick) for name in names]
    first_calls = {
        row.name: {column: summary.first_call(rec, row.cells[column])
                   for column, rec in firsts[row.name].items()}
        for row in rows if row.name in firsts
    }
    report = render.Report(
        rows=rows,
        geomeans=summary.geomeans(rows),
        first_calls=first_calls,
        header=machine.header_lines(info),
        call_overhead=overhead.get("lines", [])
        + ([f"(error: {overhead['error']})"] if overhead.get("error") else []),
    )
    for name in names:
        explain = (cells[name].get("tierjit") or {}).get("explain")
        if explain:
            report.explains[name] = [line[:200] for line in explain.splitlines()[:16]]
    scaled = [f"{r.name} at {r.cpython_scale:,}" for r in rows if r.cells["cpython"].extrapolated]
    if scaled:
        report.header.append(
            "CPython ran at a smaller scale, time scaled by work (*): " + ", ".join(scaled)
        )
    return report


def raw_data(opts: argparse.Namespace, names: list[str], cells: Records, firsts: Records,
             info: dict[str, Any], overhead: dict[str, Any], report: render.Report,
             started: datetime, elapsed: float, command: str) -> dict[str, Any]:
    """Everything measured, for bench/results/<UTC time>.json."""
    def number(x: float) -> float | None:
        return None if math.isnan(x) else x

    return {
        "schema": 1,
        "started_utc": started.isoformat(timespec="seconds"),
        "duration_s": round(elapsed, 1),
        "command": command,
        "quick": opts.quick,
        "kernels": names,
        "machine": info,
        "scales": {r.name: {"bench": r.bench_scale, "cpython": r.cpython_scale}
                   for r in report.rows},
        "cells": [rec for name in names for rec in cells[name].values() if rec is not None],
        "first_calls": [rec for name in firsts for rec in firsts[name].values() if rec],
        "mismatches": [m for r in report.rows for m in r.mismatches],
        "geomeans": {k: {"value": number(v), "kernels": n}
                     for k, (v, n) in report.geomeans.items()},
        "call_overhead": overhead,
    }


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(argv)
    names = list(KERNELS)
    if opts.kernels:
        names = [n.strip() for n in opts.kernels.split(",") if n.strip()]
        unknown = [n for n in names if n not in KERNELS]
        if unknown:
            print(f"unknown kernel(s): {', '.join(unknown)}; known: {', '.join(KERNELS)}")
            return 2
    started = datetime.now(UTC)
    clock = time.perf_counter()
    info = machine.info()
    present = available_columns()
    progress(f"bench: {len(names)} kernels, {'quick' if opts.quick else 'full'} run; "
             f"columns: {', '.join(c for c in COLUMNS if present[c])}\n")

    cells = measure_steady(names, present, opts)
    firsts = {} if opts.no_first_call else measure_first_calls(names, present, opts)
    overhead = run_call_overhead(opts.quick)
    info["load_average_end"] = machine.load_average()
    report = build_report(names, cells, firsts, info, overhead, opts.quick)
    print()
    print(render.text(report))

    elapsed = time.perf_counter() - clock
    command = " ".join(["bench/run.py", *(sys.argv[1:] if argv is None else argv)])
    if not opts.no_save:
        data = raw_data(opts, names, cells, firsts, info, overhead, report, started, elapsed,
                        command)
        path = store.write_json(data, started.strftime("%Y%m%dT%H%M%SZ"))
        print(f"\nraw timings: {path.relative_to(BENCH.parent)}")
    full = not opts.quick and names == list(KERNELS)
    if opts.docs or (opts.docs is None and full):
        body = f"Run {started:%Y-%m-%d %H:%M} UTC, {elapsed:.0f} s in all.\n\n"
        body += render.markdown(report, command)
        print(f"table written to {store.update_docs(body).relative_to(BENCH.parent)}")
    print(f"total {elapsed:.0f} s")
    if not opts.no_baseline:      # the baseline tier side by side (bench/baseline.py)
        print("\nbaseline tier (bench/baseline.py):", flush=True)
        subprocess.run([sys.executable, str(BENCH / "baseline.py"), "--kernels",
                        ",".join(names), "--scale", "quick"], check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
