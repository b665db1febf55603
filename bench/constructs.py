"""Functions written with constructs that made a whole function run as plain CPython before
2026-11-23 (for over enumerate/zip, NumPy ufuncs on scalars, array methods, arithmetic on
whole arrays), side by side: CPython, the baseline tier and the LLVM tier, in one process.

    python bench/constructs.py             (TIERJIT_BENCH_QUICK=1: 10**5 elements, not 10**6)

Each time is the best of several calls of the compiled function (2 for CPython), one array of
10**6 float64 elements; the compile is not timed.
"""

from __future__ import annotations

import linecache
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import tierjit
from tierjit.runtime import compiler

N = 100_000 if os.environ.get("TIERJIT_BENCH_QUICK") == "1" else 1_000_000
SOURCE = '''
import numpy as np


def zip_dot(a, b):
    s = 0.0
    for x, y in zip(a, b):
        s += x * y
    return s


def enum_weighted(a):
    s = 0.0
    for i, x in enumerate(a, 1):
        s += i * x
    return s


def ufunc_norm(a):
    s = 0.0
    for x in a:
        s += np.sqrt(np.abs(x))
    return s


def normalise(a, out):
    lo = a.min()
    span = a.max() - lo
    for i in range(len(a)):
        out[i] = (a[i] - lo) / span
    return out.mean()


def centred_energy(a):
    d = a - a.mean()
    s = 0.0
    for x in d:
        s += x * x
    return s
'''


def _best(f, args: tuple, n: int) -> float:
    best = float("inf")
    for _ in range(n):
        t = time.perf_counter()
        f(*args)
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    path = Path(tempfile.mkdtemp()) / "constructs.py"      # tierjit reads the source
    path.write_text(SOURCE)
    ns: dict = {}
    exec(compile(SOURCE, str(path), "exec"), ns)
    linecache.checkcache(str(path))
    a = np.random.default_rng(1).random(N) - 0.3
    cases = {"zip_dot": (a, a[::-1].copy()), "enum_weighted": (a,), "ufunc_norm": (a,),
             "normalise": (a, np.zeros_like(a)), "centred_energy": (a,)}
    print(f"{N:,} float64 elements; best of 7 (CPython: of 2)")
    print(f"{'function':16s} {'CPython':>10s} {'baseline':>10s} {'LLVM':>10s}"
          "   CPython/baseline  CPython/LLVM")
    for name, args in cases.items():
        fs = {t: tierjit.jit(ns[name], tier=t) for t in ("baseline", "opt")}
        for f in fs.values():
            f(*args)
        compiler.wait_idle(60)
        tp = _best(ns[name], args, 2)
        tb = _best(fs["baseline"], args, 7)
        to = _best(fs["opt"], args, 7)
        print(f"{name:16s} {tp * 1e3:8.1f}ms {tb * 1e3:8.2f}ms {to * 1e3:8.2f}ms"
              f"   {tp / tb:14.0f}x {tp / to:12.0f}x", flush=True)


if __name__ == "__main__":
    main()
