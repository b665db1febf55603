"""Value ranges (passes/ranges.py): bounds that native code relies on to drop guards."""

from __future__ import annotations

import numpy as np

import tierjit
from tierjit.ir.ops import Op
from tierjit.passes.ranges import I64, arith, within_i64
from tierjit.runtime.dispatch import dispatcher_of
from tierjit.types.lattice import type_of_value


def strided_sum(a):
    n = a.shape[0]
    s = 0.0
    for i in range(n // 3):
        s += a[3 * i + 2]
    return s


def counter(n):
    k = 0
    while k < n:
        k += 1
    return k


def _ranges_by_op(fn, *args):
    d = dispatcher_of(tierjit.jit(fn))
    spec = d.specialise(tuple(type_of_value(a) for a in args))
    assert spec.typed is not None, spec.reason
    return [(ins.op, ins.result.range) for b in spec.typed.fn.blocks for ins in b.instrs
            if ins.result is not None and ins.result.range is not None]


def test_array_index_arithmetic_is_bounded_by_the_array_size():
    ranges = _ranges_by_op(strided_sum, np.zeros(9))
    limit = (2 ** 63 - 1) // 8                       # float64 items in under 2**63 bytes
    items = [r for op, r in ranges if op is Op.RANGE_ITEM]
    assert items and all(r[0] == 0 and r[1] <= limit for r in items)
    adds = [r for op, r in ranges if op is Op.ADD]
    assert any(r[0] == 2 and r[1] < 2 ** 63 - 1 for r in adds)   # 3 * i + 2: no overflow


def test_loop_carried_ints_widen_to_the_i64_limit():
    ranges = _ranges_by_op(counter, 5)
    adds = [r for op, r in ranges if op is Op.ADD]
    assert adds and all(r[1] == I64[1] for r in adds)     # k += 1 keeps its overflow guard


def zipped(a, b):
    s = 0
    for i, (x, y) in enumerate(zip(a, b)):
        s += i
    return s


def test_a_loop_over_sequences_counts_below_their_least_length():
    ranges = _ranges_by_op(zipped, np.zeros(4, dtype=np.int8), np.zeros(9))
    limit = (2 ** 63 - 1) // 8                  # the float64 array's most items, the fewer
    [(lo, hi)] = [r for op, r in ranges if op is Op.CALL_BUILTIN]      # min of the lengths
    assert lo == 0 and hi <= limit
    # the loop's counter + 1 and enumerate's count (0 + counter) cannot overflow; the sum can
    adds = sorted(r for op, r in ranges if op is Op.ADD)
    assert adds == [(0, hi), (0, I64[1]), (1, hi + 1)]


def test_arith_bounds():
    assert arith(Op.MUL, (0, 10), (3, 3)) == (0, 30)
    assert arith(Op.SUB, (0, 5), (1, 2)) == (-2, 4)
    assert arith(Op.MOD, I64, (7, 7)) == (0, 6)
    assert not within_i64(arith(Op.ADD, I64, (1, 1)))
    assert within_i64(arith(Op.ADD, (0, 2 ** 60), (0, 2)))


def test_guard_free_arithmetic_stays_exact_at_the_edges():
    f = tierjit.jit(strided_sum)
    a = np.arange(12.0)
    assert f(a) == strided_sum(a) and type(f(a)) is type(strided_sum(a))
    g = tierjit.jit(counter)
    assert g(10) == 10


def count_hits(n, xs):
    hits = 0
    for i in range(n):
        if xs[i % len(xs)] > 0.5:
            hits += 1
    return hits


def count_twice(n):
    c = 0
    for i in range(n):
        c += 1
        c += 1
    return c


def count_by(n, start, step):
    c = start
    for i in range(n):
        c += step
    return c


def _overflow_checks(fn, *args) -> int:
    f = tierjit.jit(tier="opt")(fn)
    f(*args)
    return f.inspect("llvm").count("call { i64, i1 } @llvm.sadd.with.overflow")


def test_a_counter_of_a_counted_loop_needs_no_overflow_guard():
    """hits += 1 at most once per iteration of a range loop: hits < 2**63, so hits + 1 fits
    and native code checks nothing."""
    ranges = _ranges_by_op(count_hits, 10, np.ones(3))
    hits = [r for op, r in ranges if op is Op.ADD and r[0] == 1]
    assert hits and all(r == (1, I64[1]) for r in hits), ranges
    assert _overflow_checks(count_hits, 10, np.ones(3)) == 0
    assert tierjit.jit(tier="opt")(count_hits)(10, np.ones(3)) == count_hits(10, np.ones(3))


def test_counters_that_may_pass_64_bits_keep_their_guards():
    # two increments per iteration (2 * (2**63 - 1) does not fit), or an unknown start/step
    assert _overflow_checks(count_twice, 5) > 0
    assert _overflow_checks(count_by, 5, 0, 1) > 0
    f = tierjit.jit(tier="opt")(count_by)
    assert f(3, 2**63 - 2, 1) == 2**63 + 1              # deoptimises to the exact big int
    g = tierjit.jit(tier="opt")(count_twice)
    assert g(7) == 14


def pair_sum(a):
    n = a.shape[0]
    s = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            s += a[i] * a[j]
    return s


def test_range_lengths_are_bounded_by_their_operands():
    from tierjit.passes.ranges import _range_len_bound
    assert _range_len_bound((0, 0), (0, 10), (1, 1)) == 10
    assert _range_len_bound((0, 0), (0, 10), (2, 3)) == 5          # ceil(10 / 2)
    assert _range_len_bound((10, 10), (0, 0), (-3, -3)) == 4       # 10, 7, 4, 1
    assert _range_len_bound((5, 5), (0, 3), (1, 1)) == 0           # always empty
    assert _range_len_bound((0, 0), (0, 10), (-1, 1)) == I64[1]    # either sign, or 0
    assert _range_len_bound(I64, I64, (1, 1)) == I64[1]


def test_a_loop_index_counter_stays_within_its_range_length():
    """range(i + 1, n) over an array's dimension (speculated below 2**30, passes/dims.py):
    its length and the hidden counter k stay below the dimension, so k + 1 and the bounds
    checks' index arithmetic need no guard."""
    ranges = _ranges_by_op(pair_sum, np.ones(4))
    lens = [r for op, r in ranges if op is Op.RANGE_LEN]
    assert lens == [(0, 2 ** 30 - 1), (0, 2 ** 30 - 2)], lens
    assert _overflow_checks(pair_sum, np.ones(4)) == 0
    f = tierjit.jit(tier="opt")(pair_sum)
    for n in (0, 1, 2, 7):
        a = np.arange(1.0, n + 1.0)
        assert f(a) == pair_sum(a) and type(f(a)) is type(pair_sum(a))


PAST_I64 = '''
import tierjit

def f(n):
    for k in range(4):
        v = 256
        for i in range(n):
            if v > 2**130:
                v = v % 1000003
            if n:
                v = 9223372036854775808
    return 0

for tier in ("interp", "baseline", "opt"):
    assert tierjit.jit(f, tier=tier)(3) == f(3) == 0, tier
print("ok")
'''


def test_widening_stops_at_a_constant_past_64_bits(tmp_path):
    """A loop parameter widened to the i64 limit, joined again with the constant 2**63, went
    back past it, and was widened again, forever: every tier's compile hung (found by
    Hypothesis-generated programs). In a child process, so that a regression fails here."""
    import subprocess
    import sys
    script = tmp_path / "past_i64.py"
    script.write_text(PAST_I64)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=60, check=False)
    assert out.stdout.strip() == "ok", out.stdout + out.stderr
