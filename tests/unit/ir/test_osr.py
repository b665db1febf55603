"""OSR functions (ir.osr): the code from a loop header on, as a function of its live values.

Each derived function must verify, and running it (as tier 0) from the values live at its
header on some iteration must give what the whole function gives: that is the promise native
OSR code is built on.
"""

from __future__ import annotations

import numpy as np
import pytest

from tierjit.backends.pyemit import NOT_READY, OsrHook, compile_tier0
from tierjit.frontend import lower
from tierjit.ir.osr import osr_function, osr_points
from tierjit.ir.verifier import verify


def nested(a):
    s = 0
    w = 0
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            s += a[i, j]
            w += (i + 1) * (j + 2) * a[i, j]
    return s, w


def with_break(n, stop):
    total = 0
    k = 0
    while k < n:
        if k * k > stop:
            break
        total += k
        k += 1
    else:
        total = -total
    return total, k


def triple(n):
    c = 0
    for i in range(n):
        for j in range(i):
            for k in range(j, 0, -1):
                c += i * j - k
    return c


CASES = [
    (nested, (np.arange(12.0).reshape(3, 4),)),
    (with_break, (50, 400)),
    (with_break, (5, 400)),
    (triple, (9,)),
]


def capture_everywhere(fn, args):
    """Run counting tier 0 with a poll at every iteration; record every (header, live)."""
    seen = []

    def poll(header, *live):
        seen.append((header, live))
        return NOT_READY

    ir = lower(fn)
    t0 = compile_tier0(ir, osr=OsrHook(osr_points(ir), poll, 1))
    return ir, t0(*args), seen


@pytest.mark.parametrize(("fn", "args"), CASES, ids=[f"{c[0].__name__}{i}" for i, c in
                                                       enumerate(CASES)])
def test_osr_function_resumes_every_iteration(fn, args):
    expected = fn(*args)
    ir, got, seen = capture_everywhere(fn, args)
    assert repr(got) == repr(expected)       # counting tier 0 itself is exact
    points = {p.header: p for p in osr_points(ir)}
    assert seen, "no loop header was polled"
    derived = {h: compile_tier0(verify_and_return(osr_function(ir, points[h])))
               for h in {h for h, _ in seen}}
    for header, live in seen:
        assert repr(derived[header](*live)) == repr(expected), (header, live)


def verify_and_return(f):
    verify(f)
    return f


def test_points_pass_header_params_first_and_no_constants():
    ir = lower(with_break)
    (point,) = osr_points(ir)
    header = ir.blocks[point.header]
    assert list(point.live[:len(header.params)]) == list(header.params)
    consts = {i.result for b in ir.blocks for i in b.instrs if i.op.value == "const"}
    assert not consts & set(point.live)


def test_function_without_loops_has_no_points():
    def f(x):
        return x + 1
    assert osr_points(lower(f)) == []
