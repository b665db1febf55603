"""The baseline tier side by side: compile time against LLVM -O0, code speed against CPython
and the LLVM tier.

    bench/baseline.py [--kernels fib,nbody] [--scale quick|bench] [--repeat N] [--first-call]

Times are CPU time of the calling thread (time.thread_time), best of N.

Compile time: one 10-operation function and each kernel's functions, typed and optimised
once; then copy-and-patch (`compile_baseline`, Python work included) and the LLVM tier at -O0
(IR generation and LLVM) are timed on that same typed IR, best of several; each function's
ratio is printed, and their geomean over the kernels' functions.

--first-call: each kernel's first call in a fresh process (imports excluded: tierjit, NumPy
and the kernel are imported, the arguments built, then the clock starts) against the best of
3 calls of the kernel's C twin (-O3). --tier auto (default): adaptive tiering with the default
settings: a call given a large argument (config.watch_size) builds baseline code for its
argument types and runs it from its start (counting tier 0 and OSR where the baseline tier
cannot take it), any other first call runs as CPython; --hot0: the same, hot at the first
call (hot_calls=0: the function's own baseline and LLVM builds are queued too); --tier
baseline: pinned, the first call builds baseline code (front half and copy-and-patch) and
runs it.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))

import tierjit  # noqa: E402
from tierjit.runtime.dispatch import dispatcher_of  # noqa: E402

TEN_OPS = """
def ten(a, b):
    c = a + b
    d = c * a
    e = d - b
    f = e * 3
    g = f + 7
    h = g * c
    i = h - d
    j = i + e
    k = j * 2
    return k - a
"""


def _best(fn, n: int) -> float:
    """The least CPU time of this thread over n calls (not wall time: the machine is shared,
    and a preempted call should not count the other work)."""
    best = math.inf
    for _ in range(n):
        t = time.thread_time()
        fn()
        best = min(best, time.thread_time() - t)
    return best


def compile_times(d, key) -> tuple[float, float]:
    """(baseline, LLVM -O0) seconds to compile d's specialisation `key` from typed IR."""
    from tierjit.backends.llvm import codegen, engine
    from tierjit.backends.stencils.code import compile_baseline
    spec = d.specs[key]
    t_base = _best(lambda: compile_baseline(d, spec), 200)
    real = engine.compile_ir
    engine.compile_ir = lambda text, opt=0: real(text, opt=0)
    try:
        t_llvm = _best(lambda: codegen.compile_native(d, spec), 10)
    finally:
        engine.compile_ir = real
    return t_base, t_llvm


def load_kernel(name: str, tier: str | None):
    spec = importlib.util.spec_from_file_location(f"k_{name}_{tier}", BENCH / "kernels" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    if tier is not None:
        for f in mod.JIT:
            setattr(mod, f, tierjit.jit(getattr(mod, f), tier=tier))
    return mod


def first_one(name: str, scale_name: str, tier: str, hot0: bool) -> None:
    """In a fresh process: the first call of kernel `name`, adaptive tiering with baseline
    (tier "auto"; hot at the first call with `hot0`) or pinned to the baseline tier."""
    import json
    import numpy  # noqa: F401 - imports excluded from the figure
    mod = load_kernel(name, None)
    scale = mod.SCALES[scale_name]
    args = mod.setup(scale)
    from tierjit.runtime import baseline  # noqa: F401
    if hot0:
        tierjit.config.hot_calls, tierjit.config.hot_seconds = 0, None
    t0 = time.perf_counter()
    for f in mod.JIT:
        setattr(mod, f, tierjit.jit(getattr(mod, f), tier=tier))
    result = getattr(mod, mod.ENTRY)(*args)
    seconds = time.perf_counter() - t0
    print(json.dumps({"seconds": seconds, "result": repr(result)}))


def first_calls(names: list[str], scale_name: str, tier: str, hot0: bool) -> None:
    import json
    import subprocess
    sys.path.insert(0, str(BENCH))
    from harness import cbuild
    ratios = []
    for name in names:
        out = subprocess.run([sys.executable, __file__, "--first-one", name, "--scale",
                              scale_name, "--tier", tier] + ["--hot0"] * hot0,
                             capture_output=True, text=True, timeout=600)
        if out.returncode != 0:
            print(f"{name:14s} first call failed: {out.stderr.strip().splitlines()[-1:]}")
            continue
        rec = json.loads(out.stdout.strip().splitlines()[-1])
        mod = load_kernel(name, None)
        lib = cbuild.load(name)
        args = mod.setup(mod.SCALES[scale_name])
        t_c = _best(lambda: mod.call_c(lib, *args), 3)
        ratio = rec["seconds"] / t_c
        ratios.append(ratio)
        label = f"tier={tier}{', hot_calls=0' if hot0 else ''}"
        print(f"{name:14s} first call ({label}) {rec['seconds'] * 1e3:9.2f} ms   "
              f"C -O3 {t_c * 1e3:9.2f} ms   ratio {ratio:6.2f}x", flush=True)
    if ratios:
        g = math.exp(sum(map(math.log, ratios)) / len(ratios))
        print(f"geomean first call / C -O3 over {len(ratios)} kernels: {g:.2f}x")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--kernels", default="fib,mandelbrot,closest,nbody,spectral_norm,sieve,"
                   "collatz,mc_pi,sum_sqrt,matmul")
    p.add_argument("--scale", default="quick", choices=("quick", "bench"))
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--first-call", action="store_true")
    p.add_argument("--first-one", help=argparse.SUPPRESS)
    p.add_argument("--tier", default="auto", choices=("auto", "baseline"),
                   help="with --first-call: adaptive tiering, or pinned to the baseline tier")
    p.add_argument("--hot0", action="store_true",
                   help="with --first-call --tier auto: hot at the first call (hot_calls=0)")
    opts = p.parse_args(argv)
    if opts.first_one:
        first_one(opts.first_one, opts.scale, opts.tier, opts.hot0)
        return 0
    if opts.first_call:
        first_calls(opts.kernels.split(","), opts.scale, opts.tier, opts.hot0)
        return 0

    import linecache
    import tempfile
    src = Path(tempfile.mkdtemp()) / "ten.py"
    src.write_text(TEN_OPS)
    ns: dict = {}
    exec(compile(TEN_OPS, str(src), "exec"), ns)
    linecache.checkcache(str(src))
    ten = tierjit.jit(ns["ten"], tier="baseline")
    ten(3, 4)
    d = dispatcher_of(ten)
    key = next(iter(d.specs))
    tb, tl = compile_times(d, key)
    print(f"compile, 10-op function: baseline {tb * 1e6:8.1f} us   LLVM -O0 {tl * 1e6:8.1f} us"
          f"   ratio {tl / tb:6.1f}x")
    rows = []
    for name in opts.kernels.split(","):
        base = load_kernel(name, "baseline")
        opt = load_kernel(name, "opt")
        py = load_kernel(name, None)
        scale = base.SCALES[opts.scale]
        args = base.setup(scale)
        entry = base.ENTRY
        t0 = time.perf_counter()
        r_base = getattr(base, entry)(*base.setup(scale))
        first = time.perf_counter() - t0
        compiled = [dispatcher_of(getattr(base, f)) for f in base.JIT]
        tiers = {f: [s.tier for s in c.specs.values() if s.requested] for f, c in
                 zip(base.JIT, compiled)}
        # every signature compiled ran in baseline (a callee generated in place in its
        # callers has none of its own), the kernel's entry included
        in_base = bool(tiers[entry]) and all(x == "baseline" for ts in tiers.values()
                                              for x in ts)
        t_base = _best(lambda: getattr(base, entry)(*args), opts.repeat)
        getattr(opt, entry)(*opt.setup(scale))
        t_opt = _best(lambda: getattr(opt, entry)(*args), opts.repeat)
        t_py = _best(lambda: getattr(py, entry)(*py.setup(scale)), 1)
        r_py = getattr(py, entry)(*py.setup(scale))
        same = repr(r_py) == repr(r_base)
        cts = []
        for c in compiled:
            for k, s in c.specs.items():
                if s.tier == "baseline":
                    cts.append(compile_times(c, k))
        rows.append((name, t_py, t_base, t_opt, first, in_base, same, cts))
        print(f"{name:14s} cpython {t_py * 1e3:9.2f} ms  baseline {t_base * 1e3:8.2f} ms "
              f"({t_py / t_base:6.1f}x cpython, {t_base / t_opt:5.2f}x llvm)  llvm {t_opt * 1e3:8.2f} ms"
              f"  first baseline call {first * 1e3:8.2f} ms  all-baseline={in_base} same={same}  "
              + "  ".join(f"compile {a * 1e6:.0f}us vs -O0 {b * 1e6:.0f}us ({b / a:.1f}x)"
                          for a, b in cts),
              flush=True)
    ok = [r for r in rows if r[5]]
    if ok:
        g_py = math.exp(sum(math.log(r[1] / r[2]) for r in ok) / len(ok))
        g_llvm = math.exp(sum(math.log(r[2] / r[3]) for r in ok) / len(ok))
        print(f"geomean over {len(ok)} kernels in baseline: {g_py:.1f}x faster than CPython, "
              f"{g_llvm:.2f}x the LLVM tier's time")
    # the compile-time target is per function: every kernel function's ratio, not only the
    # 10-operation one's
    ratios = [b / a for r in rows for a, b in r[7]]
    if ratios:
        g = math.exp(sum(map(math.log, ratios)) / len(ratios))
        print(f"compile, LLVM -O0 time / baseline time over {len(ratios)} kernel functions: "
              f"geomean {g:.1f}x, lowest {min(ratios):.1f}x, highest {max(ratios):.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
