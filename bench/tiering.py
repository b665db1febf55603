"""Tiering benchmarks (issue 3): what the adaptive default costs and how fast it gets going.

    bench/tiering.py [--parts fifty,first,osr,values,warmup,pause,long] [--runs N] [--kernels fib,closest] [--quick]

fifty   A script of 50 small numeric functions, each called at most 10 times, run in fresh
        processes with `@tierjit.jit` and with an identity decorator (plain CPython), alternately,
        N times each: whole-process wall time, min and median, and their ratio (issue target:
        within 1.1x). Two flavours: the script imports NumPy (a numeric program), or only math.
first   Per kernel of bench/kernels, in a fresh process with imports and argument setup done:
        decorating plus the first call, for plain CPython, tier="auto" (the default) and
        tier="opt" (compiles synchronously before running).
osr     One call of closest() over 10**7 elements (bench/kernels/closest.py) in a fresh process:
        plain CPython; tier="auto" with the default settings (an array of watch_size elements
        predicts a long call: the first call builds baseline code for its argument types and
        runs it from its start), the same with the JIT already warm (another function
        compiled first through the default tiers: the compiler, the stencil library and LLVM
        loaded); auto with watch_size=None (watched only after watch_seconds of cold calls:
        the first call runs as CPython); auto with watch_size=None and watch_seconds=0
        (counting tier 0 from every first call, whose loop moves into native code by OSR once
        the compiler thread has built it), cold and warm; and the second call, with the
        function compiled. Ratios against the compiled call (issue target: <= 1.3x).
values  Value specialisation: an LCG filling an array, whose multiplier, increment and modulus
        are arguments, called with the same ones every time; and 4x4 matrix products over
        arrays of one shape (the shapes compiled in). The generic version
        (specialise_values=False) against the value-specialised one, best of 30 calls each,
        alternating, in one process (issue target: >= 1.5x).
warmup  Warm-up curves: per kernel (quick scale) and column (CPython, tierjit's default, Numba),
        a fresh process calls the kernel over and over for about WARMUP_SECONDS (setup and
        imports done, decoration included in the clock) and reports the time per call at points
        of the elapsed time: when each column reaches its steady speed shows its warm-up.
pause   The longest main-thread pause caused by the JIT: every kernel (at a small scale) is
        made hot, so all ten compile on the compiler thread, while the main thread runs a
        heartbeat loop of ~20 us ticks; the longest gap between ticks, against the same loop with
        no JIT activity. Also tierjit.stats()["pauses"] (JIT work done on the main thread).
        Then the same for one function of a module of ~4,500 lines.
long    One long call per kernel (a few seconds of baseline code: mandelbrot, nbody, mc_pi,
        fib, matmul at large scales) in a fresh process, with the default settings (the call
        moves from baseline code into LLVM's once it is built: runtime/tierup.py) and with
        TIERJIT_TIERUP_MS=never, against the compiled call (the second call).

Child processes run without PYTHONDONTWRITEBYTECODE, as users run Python (bytecode cached).
Each figure is printed as it comes; nothing is written to disk.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
MARKER = "@@tiering@@ "
KERNELS = ("fib", "mandelbrot", "closest", "nbody", "spectral_norm", "sieve", "collatz",
           "mc_pi", "sum_sqrt", "matmul")


def child_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k != "PYTHONDONTWRITEBYTECODE" and not k.startswith("TIERJIT_")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(BENCH)])
    env.update(extra)
    return env


def run_child(args: list[str], timeout: float = 600, **env: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True,
                          env=child_env(**env), timeout=timeout, check=False)
    for line in reversed(done.stdout.splitlines()):
        if line.startswith(MARKER):
            return json.loads(line[len(MARKER):])
    return {"error": (done.stderr.strip().splitlines() or ["no output"])[-1]}


def emit(record: dict[str, Any]) -> None:
    print(MARKER + json.dumps(record), flush=True)


# -- fifty small functions -----------------------------------------------------------------------

# Each template is a function body over (a, b): ints and floats; some loop a little.
TEMPLATES = [
    "return a * b + {k}",
    "return (a + {k}) * (b - {k}) // 3",
    "return math.sqrt(a * a + b * b) + {k}",
    "s = 0\n    for i in range({n}):\n        s += i * a\n    return s + b",
    "return a if a > b else b + {k}",
    "x = a * 0.5 + b\n    return x * x - {k}.0",
    "return abs(a - b) % {m}",
    "t = 0.0\n    for i in range({n}):\n        t += (a + i) / (b + {k})\n    return t",
    "return min(a, b) * {k} + max(a, b)",
    "return math.floor(a / (b + {k}.5)) + math.cos(b)",
]


def fifty_source(decorate: bool, with_numpy: bool) -> str:
    lines = ["import math"]
    if with_numpy:
        lines.append("import numpy as np")
    if decorate:
        lines += ["import tierjit", "jit = tierjit.jit"]
    else:
        lines.append("def jit(f):\n    return f")
    calls = []
    for i in range(50):
        body = TEMPLATES[i % len(TEMPLATES)].format(k=i + 1, n=5 + i % 20, m=7 + i)
        lines.append(f"\n@jit\ndef f{i}(a, b):\n    {body}\n")
        ncalls = 1 + (i * 7) % 10                         # 1..10 calls each
        calls.append(f"    for j in range({ncalls}):\n"
                     f"        acc += f{i}(j + {i}, {i % 5} + 1.5 * j)")
    if with_numpy:
        lines.append("\n@jit\ndef arr_total(x):\n    s = 0.0\n    for i in range(len(x)):\n"
                     "        s += x[i]\n    return s\n")
        calls.append("    for j in range(10):\n"
                     "        acc += arr_total(np.arange(100.0) * j)")
    lines.append("\ndef main():\n    acc = 0.0\n" + "\n".join(calls) + "\n    return acc\n")
    lines.append("print(main())")
    return "\n".join(lines) + "\n"


def part_fifty(runs: int) -> None:
    print(f"fifty: 50 small functions, each called <= 10 times; {runs} fresh processes each")
    with tempfile.TemporaryDirectory() as tmp:
        for with_numpy in (True, False):
            paths = {}
            for decorate in (False, True):
                p = Path(tmp) / f"fifty_{'jit' if decorate else 'plain'}_{int(with_numpy)}.py"
                p.write_text(fifty_source(decorate, with_numpy))
                paths[decorate] = p
            outputs = {}
            times: dict[bool, list[float]] = {False: [], True: []}
            env = child_env()
            for decorate in (False, True):       # warm the bytecode caches once
                subprocess.run([sys.executable, str(paths[decorate])], env=env, check=True,
                               capture_output=True)
            for _ in range(runs):
                for decorate in (False, True):
                    start = time.perf_counter()
                    out = subprocess.run([sys.executable, str(paths[decorate])], env=env,
                                         check=True, capture_output=True, text=True)
                    times[decorate].append(time.perf_counter() - start)
                    outputs[decorate] = out.stdout.strip()
            same = "same output" if outputs[False] == outputs[True] else \
                f"OUTPUT DIFFERS: {outputs[False]} != {outputs[True]}"
            p_min, j_min = min(times[False]), min(times[True])
            p_med, j_med = statistics.median(times[False]), statistics.median(times[True])
            flavour = "imports numpy" if with_numpy else "math only   "
            print(f"  script {flavour}: CPython min {p_min * 1e3:7.1f} ms median "
                  f"{p_med * 1e3:7.1f} ms | tierjit min {j_min * 1e3:7.1f} ms median "
                  f"{j_med * 1e3:7.1f} ms | ratio min {j_min / p_min:.3f} median "
                  f"{j_med / p_med:.3f} ({same})")


# -- first calls ---------------------------------------------------------------------------------

def child_first(kernel: str, mode: str, quick: bool) -> None:
    from harness import kernel as kernels
    k = kernels.load(kernel, f"_{mode}")
    scale = k.scales(quick)[0]
    args = k.setup(scale)
    module = k.module
    if mode != "cpython":
        import tierjit
        decorate = tierjit.jit if mode == "auto" else tierjit.jit(tier=mode)
    start = time.perf_counter()
    if mode != "cpython":
        for name in module.JIT:
            setattr(module, name, decorate(getattr(module, name)))
    fn = getattr(module, module.ENTRY)
    fn(*args)
    seconds = time.perf_counter() - start
    rec: dict[str, Any] = {"kernel": kernel, "mode": mode, "scale": scale, "seconds": seconds}
    if mode != "cpython":
        import tierjit
        s = tierjit.stats()
        rec["events"] = [f"{e['kind']} {e['function']}{e['types']} {e['tier']} "
                         f"{e['seconds'] * 1e3:.1f}ms [{e['thread']}]" for e in s["events"]
                         if e["kind"] in ("compile", "tier-up", "give-up")]
        rec["max_pause"] = s["pauses"]["max_seconds"]
    emit(rec)


def part_first(names: list[str], quick: bool) -> None:
    print(f"first calls ({'quick' if quick else 'bench'} scale; fresh process, imports and "
          "setup excluded; decorate + first call)")
    print(f"  {'kernel':<14} {'scale':>11} {'CPython':>10} {'auto':>10} {'opt':>10}  "
          "auto/CPython  opt/CPython")
    for name in names:
        recs = {mode: run_child(["_first", name, mode] + (["--quick"] if quick else []))
                for mode in ("cpython", "auto", "opt")}
        cells = []
        for mode in ("cpython", "auto", "opt"):
            r = recs[mode]
            cells.append(f"{r['seconds']:9.3f}s" if "seconds" in r else f"{'error':>10}")
        base = recs["cpython"].get("seconds")
        ratios = [f"{recs[m]['seconds'] / base:12.2f}" if base and "seconds" in recs[m]
                  else f"{'-':>12}" for m in ("auto", "opt")]
        scale = recs["cpython"].get("scale", "?")
        print(f"  {name:<14} {scale:>11,} {' '.join(cells)}  {' '.join(ratios)}", flush=True)
        for mode in ("auto", "opt"):
            if "error" in recs[mode]:
                print(f"      {mode}: {recs[mode]['error']}")
        auto_events = recs["auto"].get("events", [])
        if auto_events:
            print(f"      auto: {'; '.join(auto_events[:4])}"
                  + (" ..." if len(auto_events) > 4 else ""))


# -- OSR -----------------------------------------------------------------------------------------

OSR_MODES = ("cpython", "default", "default-warm", "size-never", "watch0", "watch0-warm")


def child_osr(mode: str, n: int) -> None:
    import numpy as np

    from kernels.closest import QUERY, closest
    v = np.random.default_rng(20240601).random(n) * 1000.0
    rec: dict[str, Any] = {"mode": mode}
    if mode == "cpython":
        start = time.perf_counter()
        closest(v, QUERY)
        rec["first"] = time.perf_counter() - start
        emit(rec)
        return
    import tierjit
    from tierjit.runtime import compiler
    if mode.startswith("watch0"):   # OSR: counting tier 0 from the first call
        tierjit.config.watch_seconds = 0.0
    if mode.startswith(("watch0", "size-never")):
        tierjit.config.watch_size = None    # no argument predicts a long call
    if mode.endswith("warm"):
        # another function compiled first, through the default tiers (baseline, then LLVM):
        # the compiler, the stencil library and LLVM are loaded
        w = tierjit.jit(_warm_up)
        with tierjit.config.override(hot_calls=1):
            w(1.0)
            w(1.0)
        compiler.wait_idle(120)
    f = tierjit.jit(closest)
    start = time.perf_counter()
    f(v, QUERY)
    rec["first"] = time.perf_counter() - start
    compiler.wait_idle(120)
    start = time.perf_counter()
    f(v, QUERY)
    rec["compiled"] = time.perf_counter() - start
    rec["osr"] = [e["detail"].get("line") for e in tierjit.stats()["events"]
                  if e["kind"] == "osr"]
    emit(rec)


def part_osr(n: int) -> None:
    print(f"OSR: one call of closest() over {n:,} elements, fresh process each")
    recs = {m: run_child(["_osr", m, str(n)]) for m in OSR_MODES}
    compiled = min(r["compiled"] for r in recs.values() if "compiled" in r)
    print(f"  compiled call (second call, best of the tierjit runs): {compiled * 1e3:8.1f} ms")
    for m in OSR_MODES:
        r = recs[m]
        if "error" in r:
            print(f"  {m:<12} error: {r['error']}")
            continue
        osr = f"  OSR entries: {len(r['osr'])}" if "osr" in r else ""
        print(f"  {m:<12} first call {r['first'] * 1e3:8.1f} ms  = {r['first'] / compiled:6.2f}x "
              f"the compiled call{osr}", flush=True)


# -- long calls: tier-up out of baseline code -------------------------------------------------------

# (kernel, scale): one call of several seconds' baseline work at the default settings
LONG_CALLS = (("mandelbrot", 2000), ("nbody", 2_000_000), ("mc_pi", 200_000_000), ("fib", 38),
              ("matmul", 700))


def child_long(kernel: str, scale: int) -> None:
    import importlib

    import tierjit
    from tierjit.runtime import compiler
    mod = importlib.import_module(f"kernels.{kernel}")
    args = mod.setup(scale)
    for f in mod.JIT:
        setattr(mod, f, tierjit.jit(getattr(mod, f)))
    entry = getattr(mod, mod.ENTRY)
    start = time.perf_counter()
    entry(*args)
    rec: dict[str, Any] = {"first": time.perf_counter() - start}
    compiler.wait_idle(300)
    args = mod.setup(scale)
    start = time.perf_counter()
    entry(*args)
    rec["compiled"] = time.perf_counter() - start
    rec["left"] = sum(1 for e in tierjit.stats()["events"]
                      if e["kind"] == "osr" and e["detail"].get("from_tier") == "baseline")
    emit(rec)


def part_long() -> None:
    print("Long calls: one call of each kernel at a large scale in a fresh process, with the "
          "default settings (a call running baseline code moves into LLVM's code once built: "
          "runtime/tierup.py) and with TIERJIT_TIERUP_MS=never; the compiled call is the "
          "second call, once the compiler thread is idle")
    for kernel, scale in LONG_CALLS:
        on = run_child(["_long", kernel, str(scale)])
        off = run_child(["_long", kernel, str(scale)], TIERJIT_TIERUP_MS="never")
        if "error" in on or "error" in off:
            print(f"  {kernel:<12} error: {on.get('error') or off.get('error')}")
            continue
        c = min(on["compiled"], off["compiled"])
        print(f"  {kernel:<12} {scale:>11,}  tier-up {on['first'] * 1e3:8.1f} ms "
              f"({on['first'] / c:5.2f}x, {on['left']} loop exits)   never "
              f"{off['first'] * 1e3:8.1f} ms ({off['first'] / c:5.2f}x)   compiled "
              f"{c * 1e3:8.1f} ms", flush=True)


def _warm_up(x):
    return x + 1.0


# -- value specialisation ------------------------------------------------------------------------

def lcg_uniform(out, seed, a, c, m):
    state = seed
    for i in range(out.shape[0]):
        state = (a * state + c) % m
        out[i] = state / m
    return state


def products_4x4(a, b, out):
    for k in range(a.shape[0]):
        for i in range(a.shape[1]):
            for j in range(b.shape[2]):
                s = 0.0
                for m in range(a.shape[2]):
                    s += a[k, i, m] * b[k, m, j]
                out[k, i, j] = s
    return out[0, 0, 0]


def part_values(rounds: int = 3) -> None:
    import numpy as np

    import tierjit
    rng = np.random.default_rng(7)
    cases = [("LCG with its constants as arguments, 200,000 draws per call", lcg_uniform,
              (np.empty(200_000), 12345, 1664525, 1013904223, 2**32)),
             ("4x4 matrix products of 20,000 pairs (array shapes compiled in)", products_4x4,
              (rng.random((20_000, 4, 4)), rng.random((20_000, 4, 4)), np.empty((20_000, 4, 4))))]
    for title, fn, args in cases:
        print(f"values: {title}, best of 30")
        ref = fn(*args), [a.copy() for a in args if isinstance(a, np.ndarray)]
        for r in range(rounds):
            best = {}
            for values in (False, True):
                with tierjit.config.override(hot_calls=5, hot_seconds=None, background=False,
                                             specialise_values=values):
                    f = tierjit.jit(fn)
                    for _ in range(10):
                        f(*args)
                    assert f(*args) == ref[0]
                    assert all((a == b).all() for a, b in
                               zip([a for a in args if isinstance(a, np.ndarray)], ref[1]))
                    best[values] = min(_timed(f, args) for _ in range(30))
            print(f"  round {r}: generic {best[False] * 1e3:7.3f} ms  value-specialised "
                  f"{best[True] * 1e3:7.3f} ms  speed-up {best[False] / best[True]:5.2f}x",
                  flush=True)


def _timed(f, args) -> float:
    start = time.perf_counter()
    f(*args)
    return time.perf_counter() - start


# -- warm-up curves ------------------------------------------------------------------------------

WARMUP_SECONDS = 2.0
WARMUP_MARKS = (0.0, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0)
WARMUP_COLUMNS = ("cpython", "tierjit", "numba")


def child_warmup(kernel: str, column: str) -> None:
    from harness import kernel as kernels
    k = kernels.load(kernel, f"_{column}")
    args = k.setup(k.quick_scale)
    module = k.module
    start = time.perf_counter()
    if column == "tierjit":
        import tierjit
        for name in module.JIT:
            setattr(module, name, tierjit.jit(getattr(module, name)))
    elif column == "numba":
        import numba
        for name in module.JIT:
            setattr(module, name, numba.njit(getattr(module, name)))
    fn = getattr(module, module.ENTRY)
    calls: list[tuple[float, float]] = []            # (elapsed at the end, duration)
    while True:
        t = time.perf_counter()
        fn(*args)
        end = time.perf_counter()
        calls.append((end - start, end - t))
        if end - start > WARMUP_SECONDS:
            break
    emit({"kernel": kernel, "column": column, "calls": calls[:20000]})


def part_warmup(names: list[str]) -> None:
    print(f"warm-up: time per call (ms) from each mark (s since decoration) to the next: median "
          f"of the calls ending there, or the call running across it; quick scale, fresh "
          f"process, ~{WARMUP_SECONDS:g} s per column")
    marks = "".join(f"{m:>9g}s" for m in WARMUP_MARKS)
    print(f"  {'kernel':<14} {'column':<8} {'calls':>7}{marks}")
    for name in names:
        for column in WARMUP_COLUMNS:
            r = run_child(["_warmup", name, column])
            if "error" in r:
                print(f"  {name:<14} {column:<8} error: {r['error']}")
                continue
            calls = r["calls"]
            cells = []
            for m, m2 in zip(WARMUP_MARKS, WARMUP_MARKS[1:] + (float("inf"),)):
                # the median call ending between this mark and the next (the machine is
                # noisy); else the call that was running at the mark
                window = [d for end, d in calls if m <= end < m2]
                d = statistics.median(window) if window else \
                    next((d for end, d in calls if end >= m), calls[-1][1])
                cells.append(f"{d * 1e3:10.3f}")
            print(f"  {name:<14} {column:<8} {len(calls):>7}{''.join(cells)}", flush=True)


# -- main-thread pauses --------------------------------------------------------------------------

def heartbeat(seconds: float, until_idle: bool = False) -> tuple[float, int]:
    """Ticks of ~20 us of pure Python; returns the longest time between two tick ends."""
    from tierjit.runtime import compiler
    worst, ticks = 0.0, 0
    last = time.perf_counter()
    deadline = last + seconds
    while True:
        x = 0
        for i in range(200):
            x += i * i
        now = time.perf_counter()
        worst = max(worst, now - last)
        last = now
        ticks += 1
        if now > deadline and (not until_idle or compiler.get_compiler().pending() == 0):
            break
    return worst, ticks


def child_pause(names: list[str]) -> None:
    import tierjit
    from harness import kernel as kernels
    entries = []
    for name in names:
        k = kernels.load(name, "_pause")
        module = k.module
        for fn_name in module.JIT:
            setattr(module, fn_name, tierjit.jit(getattr(module, fn_name)))
        scale = max(2, k.quick_scale // 100) if name != "fib" else 12
        entries.append((getattr(module, module.ENTRY), k.setup(scale)))
    measure_pause(entries)


# A function in a module of a few thousand lines: finding its definition must not mean
# parsing the whole file (one C call holding the GIL for tens of milliseconds).
BIG_FILLERS = 1500


def big_module_source() -> str:
    lines = ["def hot(n):", "    s = 0.0", "    for i in range(n):", "        s += i * 0.5",
             "    return s", ""]
    for k in range(BIG_FILLERS):
        lines += [f"def filler{k}(a, b=({k}, '{k}')):",
                  f"    return [x * {k} for x in range(a) if x % 3] + list(b)", ""]
    return "\n".join(lines) + "\n"


def child_pause_big(path: str) -> None:
    import importlib.util

    import tierjit
    spec = importlib.util.spec_from_file_location("big_module", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    measure_pause([(tierjit.jit(module.hot), (100,))])


def measure_pause(entries: list) -> None:
    """Make every (function, args) hot at once, then tick until the compiler thread is idle."""
    import gc

    import tierjit
    from tierjit.runtime import compiler
    gc.disable()
    base_gap, _ = heartbeat(1.0)
    start = time.perf_counter()
    worst_call = 0.0
    with tierjit.config.override(hot_calls=2):
        for fn, args in entries:                # three calls each: the third queues a compile
            for _ in range(3):
                t = time.perf_counter()
                fn(*args)
                worst_call = max(worst_call, time.perf_counter() - t)
    queued = time.perf_counter() - start
    gap, ticks = heartbeat(0.2, until_idle=True)
    compiling = time.perf_counter() - start
    s = tierjit.stats()
    emit({"baseline_gap": base_gap, "gap": gap, "ticks": ticks, "compiling_s": compiling,
          "queue_s": queued, "worst_call": worst_call,
          "compiles": sum(1 for e in s["events"] if e["kind"] == "compile"),
          "compile_s": sum(e["seconds"] for e in s["events"] if e["kind"] == "compile"),
          "max_pause": s["pauses"]["max_seconds"], "pending": compiler.get_compiler().pending()})


def part_pause(names: list[str], runs: int) -> None:
    print("pause: all kernels made hot at once (small scale), compiled on the compiler thread "
          "while the main thread ticks")
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "big_module.py"
        big.write_text(big_module_source())
        lines = big_module_source().count("\n")
        for label, args in ((f"{len(names)} kernels", ["_pause", ",".join(names)]),
                            (f"one function of a {lines:,}-line module", ["_pause_big", str(big)])):
            for i in range(runs):
                r = run_child(args)
                if "error" in r:
                    print(f"  {label}, run {i}: error: {r['error']}")
                    continue
                print(f"  {label}, run {i}: {r['compiles']} compiles, {r['compile_s'] * 1e3:.0f} ms "
                      f"of compile work, done {r['compiling_s'] * 1e3:.0f} ms after the first hot "
                      f"call | longest gap between heartbeat ticks {r['gap'] * 1e3:.2f} ms (no JIT "
                      f"activity: {r['baseline_gap'] * 1e3:.2f} ms) | JIT work on the main thread, "
                      f"longest {r['max_pause'] * 1e3:.2f} ms", flush=True)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "_first":
        child_first(argv[1], argv[2], "--quick" in argv)
        return 0
    if argv and argv[0] == "_warmup":
        child_warmup(argv[1], argv[2])
        return 0
    if argv and argv[0] == "_osr":
        child_osr(argv[1], int(argv[2]))
        return 0
    if argv and argv[0] == "_long":
        child_long(argv[1], int(argv[2]))
        return 0
    if argv and argv[0] == "_pause":
        child_pause(argv[1].split(","))
        return 0
    if argv and argv[0] == "_pause_big":
        child_pause_big(argv[1])
        return 0
    parser = argparse.ArgumentParser(description=textwrap.dedent(__doc__).split("\n\n")[0])
    parser.add_argument("--parts", default="fifty,first,osr,values,warmup,pause,long")
    parser.add_argument("--runs", type=int, default=15, help="processes per fifty variant")
    parser.add_argument("--kernels", default=",".join(KERNELS))
    parser.add_argument("--quick", action="store_true", help="first calls at quick scale")
    opts = parser.parse_args(argv)
    parts = opts.parts.split(",")
    names = [n for n in opts.kernels.split(",") if n]
    if "fifty" in parts:
        part_fifty(opts.runs)
    if "first" in parts:
        part_first(names, opts.quick)
    if "osr" in parts:
        part_osr(100_000 if opts.quick else 10_000_000)
    if "values" in parts:
        part_values()
    if "warmup" in parts:
        part_warmup(names)
    if "pause" in parts:
        part_pause(names, 3)
    if "long" in parts:
        part_long()
    return 0


if __name__ == "__main__":
    sys.exit(main())
