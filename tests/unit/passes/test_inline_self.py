"""Self-calls inlined for the baseline tier: which functions, how many levels, and that the
result is the same function (the verifier's rules; CPython's answers from baseline code, where
a guard failing in a copy resumes tier 0 inside it)."""

from __future__ import annotations

import numpy as np

import tierjit
from tierjit.ir.clone import clone
from tierjit.ir.ops import Op
from tierjit.ir.verifier import verify
from tierjit.passes.inline_self import inline_self_calls
from tierjit.passes.pipeline import optimise
from tierjit.runtime.dispatch import dispatcher_of
from tierjit.types.lattice import type_of_value


@tierjit.jit(tier="baseline")
def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


@tierjit.jit(tier="baseline")
def trib(n):
    if n < 3:
        return 1 if n > 0 else 0
    return trib(n - 1) + trib(n - 2) + trib(n - 3)


@tierjit.jit(tier="baseline")
def halves(x):
    if x < 1.0:
        return x
    return halves(x * 0.5) + 1.0


@tierjit.jit(tier="interp")
def mixed(n):
    if n <= 0:
        return 0.5
    return mixed(n * 0.5)          # a float argument: not this int specialisation


@tierjit.jit(tier="interp")
def looped(n):
    if n < 2:
        return n
    s = 0
    for i in range(2):
        s += looped(n - 1 - i)
    return s


@tierjit.jit(tier="baseline")
def depth_of(a, n):
    if n <= 0:
        return len(a)                # len(a) < 2**30: a dims speculation, a guard
    return depth_of(a, n - 1) + 1


@tierjit.jit(tier="interp")
def masked(n):
    m = n & 1023
    if m < 2:
        return m
    return masked(m - 1) + (m * 3 + 5)


def _calls(fn, d) -> int:
    return sum(ins.op is Op.CALL_JIT and ins.attr is d for b in fn.blocks for ins in b.instrs)


def _inlined(jitted, *args):
    d = dispatcher_of(jitted)
    types = tuple(type_of_value(a) for a in args)
    fn = optimise(clone(d.infer(types).fn))
    before = _calls(fn, d), sum(len(b.instrs) for b in fn.blocks)
    out = inline_self_calls(fn, d, types)
    verify(out, typed=True)
    assert (_calls(fn, d), sum(len(b.instrs) for b in fn.blocks)) == before   # untouched
    return fn, out, d


def test_two_levels_of_a_small_recursion():
    fn, out, d = _inlined(fib, 10)
    assert _calls(fn, d) == 2
    assert _calls(out, d) == 8          # the two levels' four copies make two calls each
    n = sum(len(b.instrs) for b in fn.blocks)
    assert sum(len(b.instrs) for b in out.blocks) >= 7 * n - 6   # returns became jumps


def test_one_level_when_two_would_pass_the_budget():
    fn, out, d = _inlined(trib, 10)
    assert _calls(fn, d) == 3
    assert _calls(out, d) == 9          # 1 + 3 + 9 bodies would pass it: one level


def test_floats_too():
    fn, out, d = _inlined(halves, 10.0)
    assert _calls(out, d) == 1 and len(out.blocks) > len(fn.blocks)


def test_left_alone():
    for jitted, args in ((mixed, (7,)), (looped, (5,)), (depth_of, (np.zeros(3), 2))):
        fn, out, _d = _inlined(jitted, *args)
        assert out is fn, jitted


def test_the_outer_body_keeps_its_value_ranges():
    fn, out, _d = _inlined(masked, 5)
    ranged = {v.id: v.range for v in fn.values()}
    assert any(ranged.values())
    assert all(v.range == ranged[v.id] for v in out.values() if v.id in ranged)


def test_a_failing_speculation_in_a_recursion_is_learnt_from():
    big = np.broadcast_to(np.zeros(1), (2**31,))      # a dimension past 2**30, no memory
    with tierjit.config.override(background=False):
        for _ in range(20):
            assert depth_of(big, 1) == 2**31 + 1
    assert "compiled without dims speculation" in tierjit.explain(depth_of)


def _fib(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


def _trib(n):
    t = [0, 1, 1]
    while len(t) <= n:
        t.append(t[-1] + t[-2] + t[-3])
    return t[n]


def _halves(x):
    k = 0.0
    while x >= 1.0:
        x, k = x * 0.5, k + 1.0
    return x + k


def test_baseline_code_of_inlined_recursions():
    for f, ref, args in ((fib, _fib, (0, 1, 2, 20, 25)), (trib, _trib, (0, 1, 2, 15)),
                         (halves, _halves, (0.25, 1e30, 5.0))):
        for a in args:
            assert f(a) == ref(a), (f, a)
    spec = dispatcher_of(fib).specs[(type_of_value(1),)]
    assert spec.tier == "baseline" and spec.native.llvm_text.count("call_self") == 8
