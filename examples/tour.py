"""tierjit in seven short acts: speed, exact big ints, exact exceptions, adaptive tiering,
variants, honest fallback, names bound again.

Run with `.venv/bin/python examples/tour.py` (`make demo` runs it last). Takes a few seconds.
"""

from __future__ import annotations

import math
import time

import numpy as np

import tierjit
from tierjit.runtime import compiler

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


@tierjit.jit(tier="opt")          # native from the first call (the default waits until hot)
def root(x):
    return math.sqrt(x)


@tierjit.jit(tier="opt")
def element(a, i):
    return a[i]


@tierjit.jit
def horner(c, x):
    """c[0] + c[1]*x + c[2]*x**2 + ..., by Horner's rule."""
    s = 0.0
    for i in range(len(c) - 1, -1, -1):
        s = s * x + c[i]
    return s


def calc(x):
    return (x + myplus) * mymul     # noqa: F821 - myplus, mymul: the template's params


CALC_SOURCE = "def calc(x):\n    return (x + {myplus!r}) * {mymul!r}\n"


@tierjit.jit
def shout(x):
    print(x)                # print() is outside the subset: the function stays CPython
    return x


@tierjit.jit
def feet(x):
    return x * 0.3048


@tierjit.jit
def yards(x):
    return x * 0.9144


unit = feet                 # what `length` calls: bound again in act (g)


@tierjit.jit(tier="opt")
def length(xs):
    """Metres, adding up lengths in `unit`."""
    s = 0.0
    for i in range(len(xs)):
        s += unit(xs[i])
    return s


def best_time(f, args, repeat):
    best, result = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        result = f(*args)
        best = min(best, time.perf_counter() - t)
    return best, result


def heading(text):
    print(f"\n== {text}")


def indented(text):
    print("   " + text.replace("\n", "\n   "))


def compile_event(name):
    """The latest event of a native compile of `name` (from tierjit.stats())."""
    found = [e for e in tierjit.stats()["events"]
             if e["kind"] == "compile" and e["function"] == name and e["tier"] == "opt"]
    return found[-1] if found else None


def osr_count(name):
    """How many calls of `name` moved into native code mid-loop (from tierjit.stats())."""
    return sum(e["kind"] == "osr" and e["function"] == name for e in tierjit.stats()["events"])


def built_here(name):
    """The compile of baseline code for `name` made by a call on the program's thread (a call
    predicted long), or None (from tierjit.stats())."""
    found = [e for e in tierjit.stats()["events"] if e["kind"] == "compile"
             and e["function"] == name and e["tier"] == "baseline" and e["thread"] == "MainThread"]
    return found[0] if found else None


def speed():
    heading(f"(a) speed: closest(v, q) over {N:,} float64 values")
    v = np.random.default_rng(2024).random(N) * 1000.0
    q = 123.456789
    t = time.perf_counter()
    closest(v, q)                   # 3,000,000 values predict a long call: it builds
    #                                 baseline code and runs it from its start; > 5 ms: hot
    first = time.perf_counter() - t
    t_py, r_py = best_time(closest.py_func, (v, q), repeat=2)    # the undecorated function
    t_jit, r_jit = best_time(closest, (v, q), repeat=5)
    same = r_py == r_jit and [type(x) for x in r_py] == [type(x) for x in r_jit]
    print(f"   CPython            {t_py * 1e3:9.1f} ms   -> {r_py}")
    print(f"   tierjit (steady)   {t_jit * 1e3:9.1f} ms   -> {r_jit}")
    print(f"   speed-up           {t_py / t_jit:9.1f} x")
    ev = compile_event("closest")
    built = f"compiled on the {ev['thread']} thread in {ev['seconds'] * 1e3:.0f} ms" \
        if ev else "still compiling"
    here = built_here("closest")
    how = (f"{N:,} values predicted a long call, so the call built baseline code in "
           f"{here['seconds'] * 1e3:.0f} ms (copy-and-patch "
           f"{here['detail']['baseline_us'] / 1e3:.1f} ms; the rest mostly loading the compiler, "
           f"once a process) and ran it from its start"
           if here else f"{osr_count('closest')} OSR entries")
    print(f"   first call: {first * 1e3:.0f} ms: {how}; that made closest hot, and LLVM's "
          f"code was {built} while the program ran on")
    print(f"   identical results (values and types): {same}")
    compiler.wait_idle(60)          # the background work done: explain shows where it settled
    indented(tierjit.explain(closest))


def big_ints():
    heading("(b) exact big ints: factorial(25) overflows 64 bits inside native code")
    small, big = factorial(20), factorial(25)
    print(f"   factorial(20) = {small}   (fits in 64 bits: stays native)")
    print(f"   factorial(25) = {big}")
    print(f"   == math.factorial(25): {big == math.factorial(25)};  "
          f"> 2**63 - 1: {big > 2**63 - 1}")
    print("   the overflow guard on `r *= i` failed, and tier 0 redid the loop with "
          "Python ints")
    indented(tierjit.explain(factorial))


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
    indented(tierjit.explain(root))
    indented(tierjit.explain(element))


def adaptive():
    heading("(d) adaptive tiering: horner(c, 0.999) runs baseline code at once, LLVM's once hot")
    c = np.random.default_rng(7).random(100_000)    # enough to predict long calls
    held = horner                   # the object every caller holds
    calls, start = [], time.perf_counter()
    while len(calls) < 400 and time.perf_counter() - start < 15.0:
        was = type(horner).__name__
        t = time.perf_counter()
        r = horner(c, 0.999)
        calls.append((time.perf_counter() - t, was))
        if was != "Shim" and len(calls) >= 2 and calls[-2][1] != "Shim":
            break                   # two calls after the switch are enough
    cold = [dt for dt, was in calls if was == "Shim"]
    print(f"   calls 1-{len(cold)}: {min(cold) * 1e3:.1f} to {max(cold) * 1e3:.1f} ms each, "
          f"cold, but {len(c):,} elements predict long calls: baseline code (copy-and-patch), "
          f"built by the first call and run from the start; once they had taken 5 ms in all: "
          f"hot, queued for the compiler thread")
    if len(cold) < len(calls):
        hot = [dt for dt, was in calls if was != "Shim"]
        print(f"   calls {len(cold) + 1}-{len(calls)}: {min(hot) * 1e3:.2f} ms each, LLVM's "
              f"code; the same object: {held is horner}, now a "
              f"{type(horner).__module__}.{type(horner).__qualname__}")
    ev = compile_event("horner")
    if ev:
        d = ev["detail"]
        print(f"   compiled on thread {ev['thread']!r} in {ev['seconds'] * 1e3:.0f} ms "
              f"(front end {d['front_ms']:.0f} ms, LLVM {d['llvm_ms']:.0f} ms)")
    print(f"   result {r!r} == CPython's: {r == horner.py_func(c, 0.999)}")
    compiler.wait_idle(60)          # the background work done: explain shows where it settled
    indented(tierjit.explain(horner))


def variants():
    heading("(e) variants: one template, 3,000 bound constants, nothing compiled per variant")
    grid = [(p, m) for p in np.linspace(-100, 100, 100).tolist()
            for m in np.linspace(-5, 5, 30).tolist()]
    t = time.perf_counter()
    best_exec = -math.inf
    for p, m in grid:               # the usual way: a new function per variant
        ns = {}
        exec(CALC_SOURCE.format(myplus=p, mymul=m), ns)  # noqa: S102
        best_exec = max(best_exec, ns["calc"](-10.0))
    t_exec = time.perf_counter() - t
    t = time.perf_counter()
    template = tierjit.template(calc, params=("myplus", "mymul"))
    variants = template.bind_many(grid)     # functools.partial objects: a bind is ~1 us
    best_bind = max(f(-10.0) for f in variants)
    t_bind = time.perf_counter() - t
    t_first, _ = best_time(tierjit.evaluate, (variants, np.array([-10.0]), "max"), 1)
    t_eval, r = best_time(tierjit.evaluate, (variants, np.array([-10.0]), "max"), 3)
    best_eval = r.max()
    print(f"   exec of a source per variant, call each   {t_exec * 1e3:7.1f} ms   best "
          f"{best_exec}")
    print(f"   tierjit.template, bind_many, call each    {t_bind * 1e3:7.1f} ms   best "
          f"{best_bind}")
    print(f"   tierjit.evaluate(variants, X, 'max')      {t_eval * 1e3:7.1f} ms   best "
          f"{best_eval}   (its first call: {t_first * 1e3:.0f} ms, compiling the evaluator)")
    print(f"   same best: {best_exec == best_bind == best_eval};  {template}")


def fallback():
    heading("(f) code outside the subset runs as plain CPython, and explain() says why")
    indented(tierjit.explain(shout))


def rebinding():
    global unit
    heading("(g) a name bound again is seen at the next call, and the function starts anew")
    xs = np.arange(1000.0)
    before = length(xs)                 # compiled at its first call, calling feet
    unit = yards
    after = length(xs)
    print(f"   length(xs) in feet: {before:.1f} m; after `unit = yards`: {after:.1f} m "
          f"(CPython: {length.py_func(xs):.1f} m)")
    length(xs)                          # compiled again, calling yards
    indented(tierjit.explain(length))


def main():
    t = time.perf_counter()
    speed()
    big_ints()
    exceptions()
    adaptive()
    variants()
    fallback()
    rebinding()
    print(f"\ndemo finished in {time.perf_counter() - t:.1f} s")


if __name__ == "__main__":
    main()
