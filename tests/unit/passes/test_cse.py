"""Common-subexpression elimination: what it merges, what it keeps apart, and that the code
it leaves computes what CPython does (the baseline tier runs it)."""

from __future__ import annotations

import math
import warnings

import numpy as np

import tierjit
from tierjit.ir.clone import clone
from tierjit.ir.ops import Op
from tierjit.ir.verifier import verify
from tierjit.passes.cse import eliminate_common_subexpressions
from tierjit.passes.pipeline import optimise
from tierjit.runtime.dispatch import dispatcher_of
from tierjit.types.lattice import type_of_value


def _ops(py, *args) -> list[Op]:
    """The ops of py's typed, optimised IR for args' types after the pass (verified)."""
    d = dispatcher_of(tierjit.jit(py, tier="interp"))
    fn = eliminate_common_subexpressions(
        optimise(clone(d.infer(tuple(type_of_value(a) for a in args)).fn)))
    verify(fn, typed=True)
    return [ins.op for b in fn.blocks for ins in b.instrs]


def dup(i, j, x):
    a = (i + j) * (i + j + 1) // 2
    b = (i + j) * (i + j + 1) // 2
    s = 0.0
    for k in range(i, j):
        s += x * x + math.sqrt(x) * x + math.sqrt(x) + (i + j)
    return a + b + s


def signs(x):
    return (x + 0.0, x + -0.0, x * 1, x * True)


def npy(a, b):
    return a * b + a * b


def test_merges_pure_number_operations_across_dominating_blocks():
    ops = _ops(dup, 3, 9, 1.5)
    # (i + j) once, (i + j + 1) once, one product, one floor division; the sqrt once in the
    # loop, and the loop's `i + j` is the one computed before it
    assert ops.count(Op.FLOORDIV) == 1
    assert ops.count(Op.CALL_MATH) == 1
    assert ops.count(Op.MUL) == 3               # (i + j) * (...), x * x, sqrt(x) * x
    for args in [(3, 9, 1.5), (0, 0, -2.0), (5, 4, 0.0), (2**40, 2**40 + 3, 1e300)]:
        assert tierjit.jit(dup, tier="baseline")(*args) == dup(*args)
    try:
        dup(1, 3, -1.0)
    except ValueError as e:
        want = str(e)
    jd = tierjit.jit(dup, tier="baseline")
    try:
        jd(1, 3, -1.0)
    except ValueError as e:                     # math domain error: raised by the one sqrt
        assert str(e) == want
    else:
        raise AssertionError("no ValueError")


def test_keeps_equal_but_different_constants_apart():
    """0.0 == -0.0 and 1 == True: constants are merged by repr and type, not by ==."""
    jf = tierjit.jit(signs, tier="baseline")
    for x in (-0.0, 0.0, 2.5):
        got, want = jf(x), signs(x)
        assert [repr(v) for v in got] == [repr(v) for v in want]


def test_leaves_numpy_scalar_operations_alone():
    """Each NumPy scalar operation warns on its own: both products stay, and tier 0 (after a
    deoptimisation) warns for each as CPython does."""
    assert _ops(npy, np.float64(2.0), np.float64(3.0)).count(Op.MUL) == 2
    jf = tierjit.jit(npy, tier="baseline")
    seen = []
    for f in (npy, jf):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = f(np.float64(1e200), np.float64(1e200))
        seen.append((repr(r), [str(x.message) for x in w]))
    assert seen[0] == seen[1]
