"""Nanoseconds per call of `f(1.0)` computing `(x + 1.0) * 2.5`, for each way to call it.

    python bench/call_overhead.py          (TIERJIT_BENCH_QUICK=1 for a short smoke run)

Rows: a plain Python function, a tierjit entry object with a native slot (the LLVM-compiled
vectorcall), the same entry on its forwarding slot (every call reaches a Python fallback), a
cold call of a tier="auto" function (the shim's `__call__`, runtime/shim.py), an entry on its
straight slot (calling the Python function from C, runtime/straight.py), a `tier="opt"`
function reading a global and a builtin (`abs(x + 1.0) * SCALE`: its entry checks that both
still name what it baked in, runtime/names.py), the same called after a store into another
dict and after a store into its module's globals (which has it look its names up again), a
`tier="interp"` function (each call dispatched in Python, by its arguments' types, to tier
0), Numba's `@njit` dispatcher when Numba is importable, a builtin for scale, and the timeit
loop itself.  Each figure is the best of several timeit repeats, loop overhead included
(subtract the last row for the net cost).
"""

from __future__ import annotations

import math
import os
import sys
import timeit
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

QUICK = os.environ.get("TIERJIT_BENCH_QUICK") == "1"
NUMBER = 100_000 if QUICK else 1_000_000
REPEAT = 3 if QUICK else 7

# The same METH-style vectorcall the entry tests use: exact float check, unbox, compute, box;
# anything else tail-calls self->fallback.
KERNEL_IR = """
@PyFloat_Type = external global i8
declare ptr @PyFloat_FromDouble(double)
declare ptr @PyObject_Vectorcall(ptr, ptr, i64, ptr)

define ptr @bench_call_overhead_kernel(ptr %self, ptr %args, i64 %nargsf, ptr %kwnames) {{
entry:
  %n = and i64 %nargsf, 9223372036854775807
  %one = icmp eq i64 %n, 1
  %nokw = icmp eq ptr %kwnames, null
  %shape = and i1 %one, %nokw
  br i1 %shape, label %check, label %fallback
check:
  %a = load ptr, ptr %args, align 8
  %pt = getelementptr inbounds i8, ptr %a, i64 {ob_type}
  %t = load ptr, ptr %pt, align 8
  %isfloat = icmp eq ptr %t, @PyFloat_Type
  br i1 %isfloat, label %fast, label %fallback
fast:
  %pv = getelementptr inbounds i8, ptr %a, i64 {ob_fval}
  %x = load double, ptr %pv, align 8
  %s = fadd double %x, 1.0
  %r = fmul double %s, 2.5
  %box = tail call ptr @PyFloat_FromDouble(double %r)
  ret ptr %box
fallback:
  %pf = getelementptr inbounds i8, ptr %self, i64 {fallback}
  %f = load ptr, ptr %pf, align 8
  %res = tail call ptr @PyObject_Vectorcall(ptr %f, ptr %args, i64 %nargsf, ptr %kwnames)
  ret ptr %res
}}
"""


def py_kernel(x):
    return (x + 1.0) * 2.5


def native_entry() -> Callable:
    from tierjit.backends.llvm.engine import compile_ir
    from tierjit.runtime import capi, entry

    lay = capi.object_layout()
    ir = KERNEL_IR.format(ob_type=lay.ob_type, ob_fval=lay.float_ob_fval,
                          fallback=entry.FALLBACK_OFFSET)  # fmt: skip
    module = compile_ir(ir)
    f = entry.make_entry(py_kernel, py_kernel)
    entry.set_slot(f, module.address("bench_call_overhead_kernel"))
    assert f(1.0) == py_kernel(1.0) and f(1) == py_kernel(1)
    return f


def forwarding_entry() -> Callable:
    from tierjit.runtime import entry

    return entry.make_entry(py_kernel, py_kernel)


def cold_shim() -> Callable:
    """A tier="auto" function that stays cold: every call runs the shim's `__call__`."""
    import tierjit

    tierjit.config.hot_calls = tierjit.config.hot_seconds = None
    return tierjit.jit(py_kernel)


def straight_entry() -> Callable:
    """The straight slot (runtime/straight.py) calling the Python function from C."""
    from tierjit.runtime import entry

    f = entry.make_entry(py_kernel, py_kernel)
    assert entry.go_straight(f, py_kernel)
    entry.set_straight(f, 2**62)
    return f


SCALE = 2.5
JIT_ROW = "tierjit @jit(tier='opt') reading a global"


def py_scaled(x):
    return abs(x + 1.0) * SCALE


def compiled() -> Callable:
    """tier="opt" code reading a global and a builtin: each call's entry checks that both
    still name what the code baked in (runtime/names.py)."""
    import tierjit

    f = tierjit.jit(py_scaled, tier="opt")
    assert f(1.0) == py_scaled(1.0)
    return f


def tier0() -> Callable:
    """tier="interp": every call is dispatched in Python (the arguments' types made, the
    specialisation looked up by them) and runs tier 0, Python generated from the IR."""
    import tierjit

    f = tierjit.jit(py_kernel, tier="interp")
    assert f(1.0) == py_kernel(1.0)
    return f


def numba_kernel() -> Callable | None:
    try:
        import numba
    except ImportError:
        return None
    f = numba.njit(py_kernel)
    f(1.0)  # compile outside the timed region
    return f


def main() -> int:
    makers: list[tuple[str, Callable[[], Callable | None]]] = [
        ("plain Python function", lambda: py_kernel),
        ("tierjit entry, native slot", native_entry),
        ("tierjit entry, forwarding to Python", forwarding_entry),
        ("tierjit cold call (the shim)", cold_shim),
        ("tierjit entry, straight slot", straight_entry),
        (JIT_ROW, compiled),
        ("tierjit @jit(tier='interp')", tier0),
        ("numba @njit", numba_kernel),
        ("builtin (math.fabs)", lambda: math.fabs),
    ]
    timers: dict[str, timeit.Timer] = {}
    notes: dict[str, str] = {}
    made: dict[str, Callable] = {}
    for label, make in makers:
        try:
            f = make()
        except Exception as e:  # noqa: BLE001 - show the failure, keep the other rows
            notes[label] = f"failed: {type(e).__name__}: {e}"
            continue
        if f is None:
            notes[label] = "not available"
            continue
        timers[label] = timeit.Timer("f(1.0)", globals={"f": f})
        made[label] = f
    extra = []
    if JIT_ROW in made:
        # A program binding one of the function's module's globals before each call (as a
        # module-level loop does): the module's dict changed, so each call looks the
        # function's names up again. Against the same store into another dict.
        stmt = "n += 1; G[k] = n; f(1.0)"
        for label, where in (("  after a store into another dict", {}),
                             ("  after a store into its module's globals", globals())):
            timers[label] = timeit.Timer(stmt, "n = 0", globals={
                "f": made[JIT_ROW], "G": where, "k": "_bench_counter"})
            extra.append((label, None))
    timers["empty loop (timeit overhead)"] = timeit.Timer("pass")

    # Interleave the rows round by round so a noisy neighbour hurts them all alike.
    best = dict.fromkeys(timers, float("inf"))
    for _ in range(REPEAT):
        for label, timer in timers.items():
            best[label] = min(best[label], timer.timeit(NUMBER) / NUMBER * 1e9)

    print(f"ns per call of f(1.0), best of {REPEAT} x {NUMBER:,} (loop overhead included)")
    rows = [label for label, _ in makers]
    at = rows.index(JIT_ROW) + 1
    rows[at:at] = [label for label, _ in extra]
    for label in rows + ["empty loop (timeit overhead)"]:
        value = f"{best[label]:7.1f}" if label in best else notes[label]
        print(f"  {label:<42} {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
