"""Pure loops (no stores, calls, raises, returns) test their guards at the loop's exit and
every POLL_PERIOD iterations: a loop whose exit depends on a value that broke a guard must
still deoptimise and give CPython's answer, not run forever on a wrapped value."""

from __future__ import annotations

import pytest

import tierjit


def triple_until(n):
    x = 1
    while x < n:
        x = x * 3                     # passes 2**63 before it passes n: the guard fails
    return x


def count_down(x):
    k = 0
    while x > 0:
        x = x - 2 ** 62               # from a big positive start, wraps without the guard
        k += 1
    return k, x


def nan_exit(x):
    n = 0
    while x < 1e308:
        x = x * 10.0                  # float overflow: inf, a Python float is fine
        n += 1
    return n, x


@pytest.mark.parametrize("fn, args", [
    (triple_until, (2 ** 63 - 1,)),
    (triple_until, (3 ** 50,)),
    (count_down, (2 ** 63 - 1,)),
    (nan_exit, (1.5,)),
])
def test_pure_loop_guard_failures_end_as_cpython(fn, args):
    expected = fn(*args)
    got = tierjit.jit(fn, tier="opt")(*args)
    assert got == expected and type(got) is type(expected)
