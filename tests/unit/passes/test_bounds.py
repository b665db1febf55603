"""Bounds-check hoisting (passes/bounds.py): one guard before a counted loop, exact
IndexErrors, side effects and early exits as CPython has them."""

from __future__ import annotations

import numpy as np
import pytest

import tierjit
from tierjit.runtime import events


def gather(a, n):
    s = 0.0
    for i in range(n):
        s += a[3 * i] + a[3 * i + 2]
    return s


def fill(out, n):
    for i in range(n):
        out[i] = i * 2
    return n


def until_three(a, n):
    s = 0
    for i in range(n):
        if i == 3:
            break
        s += a[i]
    return s


def from_negative(a, n):
    s = 0
    for i in range(-2, n):
        s += a[i]
    return s


def grid(a, rows, cols):
    t = 0.0
    for i in range(rows):
        for j in range(0, cols, 2):
            t += a[i, j] * (i + 1)
    return t


def _opt(fn):
    return tierjit.jit(tier="opt")(fn)


def _function(llvm_text: str, suffix: str) -> str:
    """The text of the one function of the module whose name ends with `suffix` (the core:
    not the entry wrapper, whose checks of the C stack compare too)."""
    lines = llvm_text.splitlines()
    start = next(i for i, line in enumerate(lines)
                 if line.startswith("define") and f"{suffix}(" in line)
    end = lines.index("}", start)
    return "\n".join(lines[start:end])


def _outcome(fn, *args):
    try:
        return "ok", fn(*args)
    except Exception as e:           # noqa: BLE001 - compared as CPython's
        return type(e).__name__, str(e)


def test_affine_indices_are_checked_once_before_the_loop():
    f = _opt(gather)
    a = np.arange(30.0)
    assert f(a, 10) == gather(a, 10)
    assert "guard_inbounds" in f.inspect("opt")
    core = _function(f.inspect("llvm"), "_core")
    assert "icmp ult" not in core                      # no per-iteration bounds check


@pytest.mark.parametrize("n", [0, 3, 10, 11, 12, 40])
def test_out_of_bounds_raises_at_cpythons_iteration(n):
    a = np.arange(30.0)
    assert _outcome(_opt(gather), a, n) == _outcome(gather, a, n)


@pytest.mark.parametrize("n", [5, 8, 9, 100])
def test_writes_before_the_failure_are_kept(n):
    got, want = np.zeros(8, np.int64), np.zeros(8, np.int64)
    assert _outcome(_opt(fill), got, n) == _outcome(fill, want, n)
    assert (got == want).all()


def test_a_loop_that_leaves_early_is_right_and_loses_the_guard():
    a = np.arange(5)
    n0 = len(events.events())
    with tierjit.config.override(background=False):
        f = _opt(until_three)
        for _ in range(8):
            assert f(a, 10**6) == until_three(a, 10**6)    # would index past a: no error
    reasons = [e.detail["reason"] for e in events.events()[n0:] if e.kind == "recompile"]
    assert any(r.startswith("inbounds") for r in reasons), reasons
    assert "guard_inbounds" not in f.inspect("opt")


def test_negative_starts_and_strided_2d_loops():
    a = np.arange(6)
    assert _outcome(_opt(from_negative), a, 6) == _outcome(from_negative, a, 6)
    assert _outcome(_opt(from_negative), a, 7) == _outcome(from_negative, a, 7)
    g = np.arange(20.0).reshape(4, 5)
    for rows, cols in ((4, 5), (4, 6), (5, 5), (0, 9)):
        assert _outcome(_opt(grid), g, rows, cols) == _outcome(grid, g, rows, cols)
    f = _opt(grid)
    f(g, 4, 5)
    assert f.inspect("opt").count("guard_inbounds") >= 2



def pair_kicks(v, m, dt):
    n = m.shape[0]
    for i in range(n):
        for j in range(i + 1, n):
            v[2 * i] -= dt * m[j]
            v[2 * j + 1] += dt * m[i]
    return v


def test_an_inner_loop_from_the_outer_index_is_checked_against_its_stop():
    """range(i + 1, n) with step 1: the last index is n - 1 whenever the loop runs, so the
    check is the same for every i (only `n > 0` is left per i); exact when it fails."""
    f = _opt(pair_kicks)
    f(np.zeros(8), np.ones(4), 0.5)
    inner = f.inspect("opt").split("range_len")[2].split("jump")[0]   # before the j loop
    assert inner.count("guard_inbounds") == 2 and " sub %" in inner and " mul %" in inner
    assert "range_item" not in inner                  # last = n - 1: nothing from i
    for v, m in ((8, 4), (7, 4), (2, 1), (0, 0), (9, 5), (3, 4), (1, 1), (10, 5)):
        got, want = np.arange(float(v)), np.arange(float(v))
        kind, msg = _outcome(f, got, np.ones(m), 0.5)
        want_kind, want_msg = _outcome(pair_kicks, want, np.ones(m), 0.5)
        assert kind == want_kind and (kind == "ok" or msg == want_msg), (v, m)
        assert np.array_equal(got, want), (v, m)        # the writes before an IndexError
