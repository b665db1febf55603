"""Pure callees generated inside their callers, and the array-dimension speculation.

The differential corpus (programs/calls.py, `call_inline_*`) checks values, exceptions and
in-place writes; these tests check what it does not see: that a failing guard in a callee
generated in place replays the call in tier 0 (the caller deoptimises, and the exception's
traceback ends in the callee, as in CPython), that NumPy's warnings are issued once, and that
the dimension speculation deoptimises and is compiled out for arrays of 2**30 items or more.
The LLVM tier and the baseline tier both generate such callees in place.
"""

from __future__ import annotations

import traceback
import warnings

import numpy as np
import pytest

import tierjit
from tierjit.runtime import compiler, events
from tierjit.runtime.speculation import RESPECULATE_AFTER


def inv(i, k):
    return 1.0 / (i - k)


def total(n, k):
    s = 0.0
    for i in range(n):
        s += inv(i, k)
    return s


def _frames(fn, *args):
    try:
        fn(*args)
    except ZeroDivisionError as exc:
        return [(f.name, f.lineno) for f in traceback.extract_tb(exc.__traceback__)
                if f.name in ("inv", "total")], str(exc)
    raise AssertionError("no ZeroDivisionError")


def _since(n, kind, name):
    return [e for e in events.events()[n:] if e.kind == kind and e.function.endswith(name)]


@pytest.mark.parametrize("tier", ["opt", "baseline"])
def test_failing_guard_in_inlined_callee_replays_the_call(monkeypatch, tier):
    expected_frames, expected_value = _frames(total, 5, 3), total(5, 9)
    monkeypatch.setitem(globals(), "inv", tierjit.jit(inv, tier=tier))
    f = tierjit.jit(total, tier=tier)
    assert f(5, 9) == expected_value
    if tier == "baseline":
        assert "; call_jit" not in f.inspect("asm")       # generated in place
    n = len(events.events())
    assert _frames(f, 5, 3) == expected_frames
    # the guard that failed was the caller's own: the call was made again by tier 0
    assert _since(n, "deopt", "total")


def scaled(x, k):
    return x * k


def scale_all(a, k):
    s = a[0] * 0.0
    for i in range(a.shape[0]):
        s += scaled(a[i], k)
    return s


def _record(fn, *args):
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        r = fn(*args)
    return r, [(w.category, str(w.message)) for w in ws]


@pytest.mark.parametrize("tier", ["opt", "baseline"])
def test_numpy_warning_in_inlined_callee_is_issued_once(monkeypatch, tier):
    args = (np.array([1.0, 1e300, 2.0]), np.float64(1e10))
    expected = _record(scale_all, *args)
    monkeypatch.setitem(globals(), "scaled", tierjit.jit(scaled, tier=tier))
    got = _record(tierjit.jit(scale_all, tier=tier), *args)
    assert got[1] == expected[1] and len(expected[1]) == 1
    assert got[0] == expected[0] and type(got[0]) is type(expected[0])


def index_sum(a, m):
    n = a.shape[0]
    t = n * m                         # below 2**63 for the arrays and m of the test
    for i in range(1):
        t += (n - i) * (n + i) + int(a[i])
    return t


def test_dimension_speculation_fails_and_is_compiled_out():
    """A zero-stride view has 2**31 items and no memory behind them: the dimension guard
    fails (nothing else does: every value fits in 64 bits), tier 0 gives the exact ints,
    and after a few such calls a version without the speculation replaces the code, which
    then runs them natively."""
    huge = np.lib.stride_tricks.as_strided(np.arange(1, dtype=np.int64), shape=(2 ** 31,),
                                           strides=(0,))
    small = np.arange(5, dtype=np.int64)
    n = len(events.events())
    with tierjit.config.override(hot_calls=1, hot_seconds=None, background=False,
                                 specialise_values=False, watch_seconds=None):
        f = tierjit.jit(index_sum)
        assert f(small, 3) == index_sum(small, 3)
        compiler.wait_idle(60)
        for m in range(3 * RESPECULATE_AFTER):
            assert f(huge, m) == index_sum(huge, m)
            compiler.wait_idle(60)
        assert f(small, 7) == index_sum(small, 7)
    recompiles = _since(n, "recompile", "index_sum")
    assert len(recompiles) == 1 and "dims" in recompiles[0].detail["reason"]
    assert len(_since(n, "deopt", "index_sum")) == RESPECULATE_AFTER
    assert "compiled without dims" in tierjit.explain(f)
