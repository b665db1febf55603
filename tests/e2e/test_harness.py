"""The harness's own checks: what assert_same accepts and rejects, and layout-keeping copies.

These run without tierjit; they keep the oracle honest.
"""

import math

import numpy as np
import pytest

from .harness import (
    CPYTHON,
    Call,
    assert_same,
    build,
    call,
    clone_args,
    compare_outcomes,
    program,
    run_all_tiers,
)

NAN = float("nan")


@pytest.mark.parametrize(("a", "b"), [
    (1, 1), (True, True), (0.0, 0.0), (NAN, -NAN), (complex(NAN, -0.0), complex(NAN, -0.0)),
    (np.float64(NAN), np.float64(NAN)), (np.int8(-1), np.int8(-1)),
    ((1, (2.5, None)), (1, (2.5, None))),
    (np.array([NAN, -0.0]), np.array([NAN, -0.0])), (ValueError("x"), ValueError("x")),
    (np.array([1 + 1j, complex(0, NAN)], np.complex64),
     np.array([1 + 1j, complex(0, NAN)], np.complex64)),
    (2**100, 2**100), (None, None),
])
def test_same_accepts(a, b):
    assert_same(a, b)


@pytest.mark.parametrize(("a", "b"), [
    (1, True), (1, 1.0), (0.0, -0.0), (1.0, np.float64(1.0)), (np.float32(1), np.float64(1)),
    (NAN, 0.0), (complex(0.0, 0.0), complex(0.0, -0.0)), (np.float64(-0.0), np.float64(0.0)),
    ((1, 2), (1, 2, 3)), ((1, 2), [1, 2]), (np.int64(5), 5), (np.bool_(True), True),
    (np.array([0.0]), np.array([-0.0])), (np.array([1, 2]), np.array([1, 2], np.int32)),
    (np.array([1, 2]), np.array([[1, 2]])), (np.array([NAN]), np.array([1.0])),
    (ValueError("x"), ValueError("y")), (ValueError("x"), ArithmeticError("x")),
    (OverflowError("x"), ArithmeticError("x")), (2**64, 0), (None, 0),
    (np.array([complex(1, -0.0)]), np.array([complex(1, 0.0)])),
    (5e-324, 0.0), (math.inf, 1e308),
])
def test_same_rejects(a, b):
    with pytest.raises(AssertionError):
        assert_same(a, b)


def test_clone_keeps_strides_aliasing_and_flags():
    base = np.arange(12.0)
    view, rev, grid = base[::3], base[::-1], base.reshape(3, 4).T
    ro = np.arange(3)
    ro.flags.writeable = False
    (v2, r2, g2, ro2, n), _, roots = clone_args((view, rev, grid, ro, 7))
    assert v2.strides == view.strides and r2.strides == rev.strides
    assert g2.strides == grid.strides and g2.shape == grid.shape
    assert_same(view, v2)
    assert_same(rev, r2)
    assert_same(grid, g2)
    assert not ro2.flags.writeable and n == 7
    assert len(roots) == 2  # base (shared by three views) and ro
    r2[0] = -1.0  # the copies alias each other as the originals do ...
    assert g2[3, 2] == -1.0 and roots[0][-1] == -1.0
    assert base[-1] == 11.0  # ... and not the originals


def test_outcome_sees_writes_outside_the_view():
    """A write into the gap of a strided argument shows up in the memory behind it."""
    ns = build("@jit\ndef f(a):\n    a[0] = 1.0\n", CPYTHON)
    case = (np.zeros(6)[::2],)
    expected = call(ns["f"], case, CPYTHON)

    def stray(a):
        a[0] = 1.0
        a.base.view(np.float64)[1] = 5.0  # the element between a[0] and a[1]

    with pytest.raises(AssertionError, match="memory behind"):
        compare_outcomes(expected, call(stray, case, "stray"))


def test_outcome_compares_exceptions_and_identity():
    ns = build("@jit\ndef f(a, d):\n    a[0] = 1\n    return a if d else 1 // d\n", CPYTHON)
    raised = call(ns["f"], (np.zeros(2), 0), CPYTHON)
    assert isinstance(raised.exc, ZeroDivisionError) and raised.args[0][0] == 1.0
    with pytest.raises(AssertionError, match="message differs"):
        compare_outcomes(raised, call(lambda a, d: 1 // 0.0, (np.ones(2), 0), "other"))
    same = call(ns["f"], (np.zeros(2), 1), CPYTHON)
    assert same.result_is_arg == 0
    with pytest.raises(AssertionError, match="CPython returned argument 0 itself"):
        compare_outcomes(same, call(lambda a, d: (a.__setitem__(0, 1), a.copy())[1],
                                    (np.zeros(2), 1), "copying"))


def _helper(x):
    return x * 2


def _uses_helper(x):
    return _helper(x) + 1


def test_run_all_tiers_entry_points():
    """Sources, Programs and plain functions all go through (here against CPython itself)."""
    run_all_tiers("@jit\ndef f(x):\n    return -x\n", [(1,), (-0.0,)], tiers=[CPYTHON])
    run_all_tiers(program("p", "@jit\ndef f(x):\n    return x // 0\n", [(1,)]), tiers=[CPYTHON])
    run_all_tiers(_uses_helper, [(3,), (2.5,)], tiers=[CPYTHON])


def test_clone_keeps_zero_strides_and_misalignment():
    buf = np.zeros(33, np.uint8)
    unaligned = buf[1:].view(np.float64)
    unaligned[:] = [1.5, -0.0, np.nan, 4]
    broadcast = np.broadcast_to(np.arange(3), (4, 3))
    (u2, b2), kwargs, _ = clone_args(Call((unaligned, broadcast), {"k": broadcast}))
    assert not u2.flags.aligned and b2.strides == (0, 8) and not b2.flags.writeable
    assert kwargs["k"].strides == (0, 8) and kwargs["k"].base is not broadcast.base
    assert_same(unaligned, u2)
    assert_same(broadcast, b2)
