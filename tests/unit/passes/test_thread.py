"""Jump threading of short-circuit joins: the join block goes, the short circuit stays (the
right operand is evaluated only when Python evaluates it), and the baseline tier computes
what CPython does."""

from __future__ import annotations

import tierjit
from tierjit.ir.clone import clone
from tierjit.ir.ops import Op
from tierjit.ir.verifier import verify
from tierjit.passes.pipeline import optimise
from tierjit.passes.thread import thread_jumps
from tierjit.runtime.dispatch import dispatcher_of
from tierjit.types.lattice import BOOL, type_of_value


def escape(x, y, limit):
    n = 0
    while n < limit and x * x + y * y <= 4.0:
        x, y = x * x - y * y + 0.25, 2.0 * x * y + 0.125
        n += 1
    return n


def guarded(a, b):
    s = 0
    for i in range(a, b):
        if i != 0 and 100 // i > 3:          # 100 // 0 is never evaluated
            s += 1
        if i == 0 or 7 % i == 0:             # nor 7 % 0
            s += 2
        if not (i > 2 and i < 9):
            s -= 1
    return s


def flags(n, k):
    t = 0
    for i in range(n):
        big = i > k
        if big and i % 2 == 0:
            t += i
    return t


def _threaded(py, *args):
    d = dispatcher_of(tierjit.jit(py, tier="interp"))
    fn = thread_jumps(optimise(clone(d.infer(tuple(type_of_value(a) for a in args)).fn)))
    verify(fn, typed=True)
    return fn


def _joins(fn) -> int:
    """Blocks that only branch on their one bool parameter (or its truth)."""
    return sum(1 for b in fn.blocks if len(b.params) == 1 and b.params[0].type == BOOL
               and b.instrs[-1].op is Op.BRANCH and len(b.instrs) <= 2)


def test_short_circuit_joins_are_jumped_over_and_results_match_python():
    for py, argsets in [(escape, [(0.1, 0.2, 50), (1.5, 1.5, 50), (0.0, 0.0, 0),
                                  (-2.0, 0.0, 10)]),
                        (guarded, [(-10, 12), (0, 1), (5, 5), (-3, 3)]),
                        (flags, [(10, 3), (0, 0), (7, 100)])]:
        fn = _threaded(py, *argsets[0])
        assert _joins(fn) == 0, py.__name__
        jf = tierjit.jit(py, tier="baseline")
        for args in argsets:
            assert jf(*args) == py(*args), (py.__name__, args)
        assert dispatcher_of(jf).latest().tier == "baseline", py.__name__


def test_the_condition_feeds_the_branch_and_its_products_are_reused():
    """escape's `x * x` and `y * y` are computed once per iteration: the loop body is
    dominated by the condition's block once the join is gone (passes/cse.py)."""
    jf = tierjit.jit(escape, tier="baseline")
    assert jf(0.1, 0.2, 50) == escape(0.1, 0.2, 50)
    pieces = [n.split(".")[0] for n, _ in dispatcher_of(jf).latest().native.pieces]
    assert "br_le_ff" in pieces and "br_b" not in pieces and "le_ff" not in pieces
    # x * x and y * y (the condition's), 2.0 * x, and (2.0 * x) * y + 0.125: 6 without
    # (counted in the stencils' names: a fused pair such as mul_mul_ffp makes two)
    products = [n.split("_ff")[0].replace("muladd", "mul").split("_").count("mul")
                for n in pieces if "_ff" in n]
    assert sum(products) == 4, pieces
