"""Comparisons (chained, mixed int/float, NaN, -0.0), boolean operators and conditionals."""

import numpy as np

from ..harness import program
from .values import I64_MAX, I64_MIN, INF, NAN, each, pairs

PROGRAMS = [
    program("cmp_all", """
        @jit
        def f(a, b):
            return a < b, a <= b, a == b, a != b, a > b, a >= b
        """, [(1, 2), (2, 1), (1, 1.0), (NAN, NAN), (NAN, 1), (0.0, -0.0), (-INF, I64_MIN),
              (2**53 + 1, 2.0**53), (2**53, 2.0**53), (I64_MAX, 2.0**63), (2**63, 2.0**63),
              (2**1030, INF), (True, 1), (False, -0.0), (I64_MIN, I64_MIN + 1), (2**64, -1),
              (1e308, 2**1023)]),
    program("cmp_complex_eq", """
        @jit
        def f(a, b):
            return a == b, a != b
        """, [(1 + 0j, 1), (1j, 1j), (complex(NAN, 0), complex(NAN, 0)), (2j, 2.0), (0j, False)]),
    program("cmp_chained", """
        @jit
        def f(a, b, c):
            return a < b < c, a < b > c, a == b == c, a != b != c, 0 <= a < 10, a < b <= c < 100
        """, [(1, 2, 3), (3, 2, 1), (1, 1, 1), (1, 2, 1), (NAN, 1, 2), (-1, 0.0, -0.0),
              (5, 5.0, True), (I64_MIN, 0, I64_MAX)]),
    program("cmp_and_or_operands", """
        @jit
        def f(a, b):
            return a and b, a or b, not a, a and not b, (a or b) and a
        """, pairs((0, 5, 0.0, -0.0, NAN, True, False, 2.5, None), (0, 7, 0.0, True))),
    program("cmp_short_circuit", """
        @jit
        def f(x):
            ok = x != 0 and 10 // x > 1
            other = x == 0 or 10 % x == 1
            return ok, other
        """, each(0, 1, 3, -4, 11, 0.0)),
    program("cmp_is_none", """
        @jit
        def f(x):
            return x is None, x is not None, (1 if x is None else 2), not x
        """, each(None, 0, 1.5, False)),
    program("cmp_conditional_expr", """
        @jit
        def f(x, y):
            a = x if x > y else y
            b = 1 if x else 2.5
            c = x if y else (y if x else -1)
            return a, b, c
        """, pairs((3, -1, 0.0, NAN, True), (2, 0, -0.0))),
    program("cmp_bool_builtin", """
        @jit
        def f(x):
            return bool(x), not not x, bool(-x)
        """, each(0, 1, -1, 0.0, -0.0, NAN, INF, 0j, 1e-320j, True, 2**100)),
    program("cmp_result_used_in_arith", """
        @jit
        def f(a, b):
            n = (a < b) + (a == b) * 2 + (a > b) * 4
            return n, (a < b) - (a > b), (a < b) & (b < 10)
        """, pairs((1, 5, 9, NAN), (5, 12))),
    program("cmp_int_float_loop", """
        @jit
        def f(limit):
            n = 0
            x = 0.0
            while x < limit:
                x += 0.1
                n += 1
            return n, x
        """, each(1, 1.0, 0, -1, 2.5)),
    # NumPy compares ints of mixed sign exactly, where their common type for arithmetic
    # (float64 for int64 and uint64) would round: 2**63 - 1 < 2**63
    program("cmp_numpy_ints_of_mixed_sign", """
        @jit
        def f(a, b):
            return a < b, a == b, a >= b, b > a, b != a
        """, pairs((np.int64(2**63 - 1), np.int64(2**62 + 1), np.int64(-1), np.int32(-5),
                    np.int8(-1), -1, 2**63 - 1),
                   (np.uint64(2**63), np.uint64(2**62), np.uint64(2**64 - 1), np.uint32(7),
                    np.uint8(200), np.uint64(0)))),
]
