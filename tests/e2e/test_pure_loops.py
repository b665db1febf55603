"""Pure loops (no stores, calls, raises, returns) test their guards at the loop's exit and
every POLL_PERIOD iterations: a loop whose exit depends on a value that broke a guard must
still deoptimise and give CPython's answer, not run forever on a wrapped value. Counted pure
loops run in chunks of POLL_PERIOD iterations, vectorised by LLVM: their float sums must stay
bit for bit CPython's (added in order), over any number of chunks and at any chunk edge."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tierjit
from tierjit.backends.llvm.deopt import POLL_PERIOD


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


def harmonic(u):
    s = 0.0
    for j in range(u.shape[0]):
        s += 1.0 / (j + 1) * u[j]     # vectorised terms, summed in order
    return s


def roots(n, k):
    s = 0
    t = 0.0
    for i in range(k, n):
        s += i * i                    # an int sum that may pass 2**63
        t += math.sqrt(i)
    return s, t


def product_overflow(u):
    p = u[0] * 0.0 + 1.0
    for j in range(u.shape[0]):
        p *= u[j]                     # NumPy overflows to inf somewhere in a later chunk
    return p


SIZES = [0, 1, POLL_PERIOD - 1, POLL_PERIOD, POLL_PERIOD + 1, 3 * POLL_PERIOD + 17]


@pytest.mark.parametrize("n", SIZES)
def test_chunked_float_sum_is_cpythons(n):
    u = np.random.default_rng(n).random(n) * 1e3 - 500.0
    expected = harmonic(u)
    got = tierjit.jit(harmonic, tier="opt")(u)
    assert got == expected and type(got) is type(expected)


@pytest.mark.parametrize("n, k", [(0, 0), (5000, 3), (3 * 2 ** 31, 3 * 2 ** 31 - 2500),
                                  (2 ** 32 + 2000, 2 ** 32 - 10)])
def test_chunked_int_sum_and_overflow(n, k):
    expected = roots(n, k)
    got = tierjit.jit(roots, tier="opt")(n, k)
    assert got == expected and type(got[0]) is int


@pytest.mark.parametrize("at", [10, POLL_PERIOD - 1, POLL_PERIOD, 2 * POLL_PERIOD + 5])
def test_chunked_loop_deopts_in_a_later_chunk(at):
    import warnings
    u = np.full(3 * POLL_PERIOD, 1.0)
    u[at] = 1e300
    u[at + 1] = 1e300
    with warnings.catch_warnings(record=True) as ew:
        warnings.simplefilter("always")
        expected = product_overflow(u)
    with warnings.catch_warnings(record=True) as gw:
        warnings.simplefilter("always")
        got = tierjit.jit(product_overflow, tier="opt")(u)
    assert got == expected and type(got) is type(expected)
    assert [str(w.message) for w in gw] == [str(w.message) for w in ew]


def steps(n, limit):
    k = 0
    while n != 1 and k < limit:
        if n % 2 == 0:                # both arms computed, the result selected
            n = n // 2
        else:
            n = 3 * n + 1             # passes 2**63 for some starts
        k += 1
    return k, n


def test_if_else_as_select_fails_only_on_the_arm_taken():
    """An even n near 2**62 would overflow 3 * n + 1, the arm not taken: no deopt. An odd
    one overflows in the arm taken: tier 0 finishes with the exact big int."""
    from tierjit.runtime import events
    f = tierjit.jit(steps, tier="opt")
    assert f(27, 10 ** 6) == steps(27, 10 ** 6)
    n = len(events.events())
    assert f(2 ** 62, 100) == steps(2 ** 62, 100)
    assert not [e for e in events.events()[n:] if e.kind == "deopt"]
    big = 2 ** 62 + 1
    assert f(big, 1) == steps(big, 1) and steps(big, 1)[1] > 2 ** 63
    assert f(big, 3) == steps(big, 3)
