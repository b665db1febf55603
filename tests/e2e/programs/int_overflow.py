"""Integers that leave 64 bits: results must be the exact big ints CPython computes."""

import numpy as np

from ..harness import program
from .values import I64_MAX, I64_MIN, each, pairs

BOUNDARY = (I64_MAX, I64_MIN, I64_MAX - 1, I64_MIN + 1, -1, 1, 0, 2**63, I64_MIN - 1, 2**100)

PROGRAMS = [
    program("ovf_factorial", """
        @jit
        def f(n):
            r = 1
            for i in range(2, n + 1):
                r *= i
            return r
        """, each(0, 1, 20, 21, 25, 40)),
    program("ovf_add", """
        @jit
        def f(a, b):
            return a + b
        """, pairs((I64_MAX, I64_MIN, 2**63), (1, -1, I64_MAX, I64_MIN))),
    program("ovf_sub", """
        @jit
        def f(a, b):
            return a - b
        """, pairs((I64_MAX, I64_MIN, 0, -1), (1, -1, I64_MIN))),
    program("ovf_mul", """
        @jit
        def f(a, b):
            return a * b
        """, [(2**32, 2**31), (2**32, 2**32), (-1, I64_MIN), (I64_MIN, -1),
              (3037000499, 3037000499),
              (3037000500, 3037000500), (-3037000500, 3037000500), (I64_MAX, 2), (I64_MIN, 1),
              (2**62, -2), (2**62, 2), (0, 2**200)]),
    program("ovf_neg_abs", """
        @jit
        def f(a):
            return -a, abs(a), 0 - a, a * -1
        """, each(*BOUNDARY)),
    program("ovf_lshift", """
        @jit
        def f(x, s):
            return x << s
        """, [(1, 62), (1, 63), (1, 64), (-1, 63), (-1, 64), (3, 62), (I64_MAX, 1), (I64_MIN, 1),
              (5, 0), (1, 200), (-3, 61)]),
    program("ovf_pow", """
        @jit
        def f(b, e):
            return b ** e
        """, [(2, 62), (2, 63), (-2, 63), (-2, 64), (3, 40), (3, 39), (10, 19), (10, 18),
              (-1, 2**70),
              (2, 0), (0, 0)]),
    program("ovf_accumulate_squares", """
        @jit
        def f(n, start):
            s = 0
            for i in range(n):
                s += (start + i) * (start + i)
            return s
        """, [(10, 3037000490), (3, 2**32), (1000, 1), (4, -2**40), (2, 2**62)]),
    program("ovf_fibonacci", """
        @jit
        def f(n):
            a, b = 0, 1
            for _ in range(n):
                a, b = b, a + b
            return a
        """, each(0, 1, 50, 92, 93, 94, 150)),
    program("ovf_counter_crosses", """
        @jit
        def f(x, n, step):
            for i in range(n):
                x += step
            return x
        """, [(I64_MAX - 2, 5, 1), (I64_MIN + 2, 5, -1), (I64_MAX, 3, -1), (2**63 + 1, 3, -1),
              (0, 4, 2**62), (0, 3, -(2**62))]),
    program("ovf_intermediate", """
        @jit
        def f(a, b):
            x = a * b
            return x // b, x % 1000000007, x == a * b
        """, [(2**40, 2**40), (I64_MAX, 3), (I64_MIN, -1), (-(2**33), 2**33)]),
    program("ovf_floordiv_mod_min", """
        @jit
        def f(a, b):
            return a // b, a % b, divmod(a, b)
        """, [(I64_MIN, -1), (I64_MIN, 1), (I64_MIN, 2), (I64_MIN, I64_MIN), (I64_MAX, I64_MIN),
              (2**64, -1), (-1, I64_MIN)]),
    program("ovf_float_to_int", """
        @jit
        def f(x):
            return int(x)
        """, each(9.2e18, -9.223372036854775808e18, 9.223372036854775808e18, 1e19, -1e19,
                  1e308, -0.5, 0.9999999999999999, 4503599627370497.5)),
    program("ovf_round_big", """
        @jit
        def f(x):
            return round(x)
        """, each(9.3e18, -9.3e18, 1e300, 2.5, -2.5, 0.5, 1.5, -0.0, 4503599627370497.5)),
    program("ovf_shift_right", """
        @jit
        def f(x):
            return x >> 63, x >> 64, x >> 100, (-x) >> 100, x >> 0
        """, each(1, -1, I64_MAX, I64_MIN, 2**100, -(2**100))),
    program("ovf_big_args_flow", """
        @jit
        def f(a, b):
            s = a
            for i in range(3):
                s = s - b
            return s, s < 0, s > I64
        I64 = 2 ** 63
        """, [(2**100, 2**98), (2**64, 2**62), (5, 1), (-(2**70), -(2**68)), (I64_MIN, 2**61)]),
    program("ovf_mixed_in_loop", """
        @jit
        def f(n):
            acc = 1
            total = 0
            for i in range(n):
                acc = acc * 3 + 1
                total += acc & 0xFFFF
            return acc, total
        """, each(0, 5, 39, 40, 41, 80)),
    program("ovf_numpy_shift_past_width", """
        @jit
        def f(x, y, n):
            # the shift's result feeds a deferred overflow check: a shift by the width or
            # more must not poison it (it segfaulted)
            a = (x >> 64) + pow(0, y * y)
            b = (x >> n) + y * y
            c = (x << n) - y * y
            return a, b, c
        """, [(np.int64(I64_MIN), I64_MAX, 1), (np.int64(I64_MIN), 2**31, 64),
              (np.int64(5), 3, 70), (np.int64(-7), 2**62, 63), (np.int64(9), -3, 2)]),
]
