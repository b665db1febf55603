"""The loop-work model (runtime.loopwork): trip counts of `for` nests read from bytecode."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import tierjit
from tierjit.runtime import loopwork
from tierjit.runtime.dispatch import dispatcher_of


def estimate(fn, *args) -> int:
    m = loopwork.model(fn.__code__)
    return 0 if m is None else m.estimate(args)


def mul_av(u, out):
    n = u.shape[0]
    for i in range(n):
        s = 0.0
        for j in range(n):
            s += u[j] / (i + j + 1)
        out[i] = s


def matmul(a, b, c):
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            s = 0.0
            for k in range(len(b)):
                s += a[i, k] * b[k, j]
            c[i, j] = s


def pairs(x, m):
    t = 0
    for i in range(len(x)):
        for j in range(i + 1, len(x)):         # a triangle: half the stop
            t += x[i] * x[j]
    for r in range(m * 2):
        for c in x:
            t += c * r
    return t


def sieve_steps(n):
    count = 0
    for i in range(2, n):
        for j in range(i * i, n, i):            # steps by the outer variable: not read
            count += 1
    return count


def rebound(n):
    m = n
    m = 3                                       # assigned twice: unknown
    s = 0
    for i in range(n):
        for j in range(m):
            s += j
    k = 0
    while k < n:                                # a while loop is not read
        for j in range(n):
            s += 1
        k += 1
    return s


def single(n):
    s = 0
    for i in range(n):
        s += i
    return s


def test_nests_multiply_their_trip_counts():
    u = np.zeros(800)
    assert estimate(mul_av, u, u) == 640_000
    a, b = np.zeros((30, 40)), np.zeros((40, 50))
    assert estimate(matmul, a, b, None) == 30 * 50 * 40
    assert estimate(pairs, np.zeros(1000), 3) == 1000 * 500
    assert estimate(pairs, list(range(10)), 300) == 600 * 10
    assert estimate(pairs, (1, 2), 7) == 14 * 2              # a tuple's length counts


def enumerated(a, n):
    s = 0.0
    for i, x in enumerate(a):
        for j, k in enumerate(range(n), 1):     # as many items as its iterable
            s += x * j
    for x, y in zip(a, a):                      # zip: not read
        for r in range(n):
            s += x
    return s


def test_enumerate_has_its_iterables_trip_count():
    assert estimate(enumerated, np.zeros(300), 40) == 300 * 40


def test_unread_loops_do_not_multiply():
    """A loop whose trip count is not read (a step by a loop variable, a local assigned twice,
    a `while`) multiplies nothing: these functions keep no model, and their calls are
    predicted by the argument-size rule alone."""
    for fn in (sieve_steps, rebound, single):
        assert loopwork.model(fn.__code__) is None, fn.__name__


def test_arguments_of_other_types_are_unknown():
    """An unknown trip count counts one iteration."""
    assert estimate(mul_av, [1.0] * 10, None) == 1          # a list has no shape
    assert estimate(mul_av, np.float64(3.0), None) == 1
    assert estimate(mul_av, np.zeros(()), None) == 1         # 0-d: no first dimension
    assert estimate(pairs, np.zeros(10), True) == 50         # bool is not read as an int
    assert estimate(pairs, np.zeros(10), 2.5) == 50
    assert estimate(mul_av) == 1                             # fewer arguments than parameters


def test_a_dispatcher_reads_its_nests_once_an_argument_could_reach_watch_size():
    """Read at the first cold call with an argument of watch_size's fourth root (16): no
    nest of up to four loops over smaller bounds reaches 65536, and reading costs."""
    d = dispatcher_of(tierjit.jit(mul_av))
    d.find_loops()
    assert d.work is True                                    # two `for` loops, not yet read
    assert not d.long_nest((np.zeros(15), None), 65536) and d.work is True
    assert not d.long_nest((np.zeros(200), None), 65536)     # 40,000 iterations
    assert isinstance(d.work, loopwork.Model)
    assert d.long_nest((np.zeros(300), None), 65536)         # 90,000
    assert not d.long_nest((np.zeros(300), None), None)
    s = dispatcher_of(tierjit.jit(single))
    s.find_loops()
    assert s.loops and s.work is False                       # one loop: the size rule's
    r = dispatcher_of(tierjit.jit(sieve_steps))
    r.find_loops()
    assert not r.long_nest((10**6,), 2**40) and r.work is False   # read: nothing multiplies


@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="CPython 3.11's own decoder")
def test_311_opcodes_are_cpythons():
    import opcode
    for op, name in loopwork.OPCODES_311.items():
        assert opcode.opmap[name] == op, name
    assert opcode.opmap["CACHE"] == loopwork._CACHE
    assert opcode.opmap["EXTENDED_ARG"] == loopwork._EXTENDED_ARG
    from tierjit.runtime.shim import _for_iter       # the shim's count of `for` loops
    assert _for_iter() == bytes((opcode.opmap["FOR_ITER"],))
