"""tierjit in four short acts: speed, exact big ints, exact exceptions, honest fallback.

Run with `make demo` (or `.venv/bin/python examples/demo.py`). Takes a few seconds.
"""

from __future__ import annotations

import math
import time

import numpy as np

import tierjit

N = 3_000_000


@tierjit.jit
def closest(v, q):
    """Index and distance of the element of v nearest to q (a linear scan)."""
    best = 0
    best_d = abs(v[0] - q)
    for i in range(1, len(v)):
        d = abs(v[i] - q)
        if d < best_d:
            best_d = d
            best = i
    return best, best_d


@tierjit.jit(tier="opt")
def factorial(n):
    r = 1
    for i in range(2, n + 1):
        r *= i
    return r


@tierjit.jit
def root(x):
    return math.sqrt(x)


@tierjit.jit
def element(a, i):
    return a[i]


@tierjit.jit
def shout(x):
    print(x)                # print() is outside the subset: the function stays CPython
    return x


def best_time(f, args, repeat):
    best, result = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        result = f(*args)
        best = min(best, time.perf_counter() - t)
    return best, result


def heading(text):
    print(f"\n== {text}")


def speed():
    heading(f"(a) speed: closest(v, q) over {N:,} float64 values")
    v = np.random.default_rng(2024).random(N) * 1000.0
    q = 123.456789
    t = time.perf_counter()
    closest(v, q)                                   # first call: compile, then run
    first = time.perf_counter() - t
    t_py, r_py = best_time(closest.py_func, (v, q), repeat=2)    # the undecorated function
    t_jit, r_jit = best_time(closest, (v, q), repeat=5)
    same = r_py == r_jit and [type(x) for x in r_py] == [type(x) for x in r_jit]
    print(f"   CPython            {t_py * 1e3:9.1f} ms   -> {r_py}")
    print(f"   tierjit (steady)   {t_jit * 1e3:9.1f} ms   -> {r_jit}")
    print(f"   speed-up           {t_py / t_jit:9.1f} x    (first call incl. compile: "
          f"{first * 1e3:.0f} ms)")
    print(f"   identical results (values and types): {same}")
    print("   " + tierjit.explain(closest).replace("\n", "\n   "))


def big_ints():
    heading("(b) exact big ints: factorial(25) overflows 64 bits inside native code")
    small, big = factorial(20), factorial(25)
    print(f"   factorial(20) = {small}   (fits in 64 bits: stays native)")
    print(f"   factorial(25) = {big}")
    print(f"   == math.factorial(25): {big == math.factorial(25)};  "
          f"> 2**63 - 1: {big > 2**63 - 1}")
    print("   the overflow guard on `r *= i` failed, and tier 0 finished the call with "
          "Python ints")
    print("   " + tierjit.explain(factorial).replace("\n", "\n   "))


def outcome(f, *args):
    try:
        return f"returned {f(*args)!r}"
    except Exception as e:                          # noqa: BLE001 - shown, not handled
        return f"{type(e).__name__}: {e}"


def exceptions():
    heading("(c) exceptions from native code carry CPython's exact type and message")
    a = np.arange(5.0)
    root(4.0)                                       # compile root(float) and element(...)
    element(a, 0)
    for name, f, args in (("root(-1.0)", root, (-1.0,)), ("element(a, 7)", element, (a, 7))):
        jit, ref = outcome(f, *args), outcome(f.py_func, *args)
        print(f"   {name:<14} tierjit: {jit}")
        print(f"   {'':<14} CPython: {ref}   same: {jit == ref}")
    print("   " + tierjit.explain(root).replace("\n", "\n   "))
    print("   " + tierjit.explain(element).replace("\n", "\n   "))


def fallback():
    heading("(d) code outside the subset runs as plain CPython, and explain() says why")
    print("   " + tierjit.explain(shout).replace("\n", "\n   "))


def main():
    t = time.perf_counter()
    speed()
    big_ints()
    exceptions()
    fallback()
    print(f"\ndemo finished in {time.perf_counter() - t:.1f} s")


if __name__ == "__main__":
    main()
