"""for over range in all its forms: 1-3 arguments, any sign of step, zero step, big bounds."""

import numpy as np

from ..harness import program
from .values import I64_MAX, I64_MIN, each

PROGRAMS = [
    program("range_one_arg", """
        @jit
        def f(n):
            s = 0
            last = -1
            for i in range(n):
                s += i
                last = i
            return s, last
        """, each(0, 1, 10, -3, True, False, 1000)),
    program("range_two_args", """
        @jit
        def f(a, b):
            s = 0
            n = 0
            for i in range(a, b):
                s += i * i
                n += 1
            return s, n
        """, [(0, 5), (5, 0), (-5, 5), (-3, -1), (3, 3), (I64_MAX - 3, I64_MAX),
              (I64_MIN, I64_MIN + 3), (I64_MAX - 1, I64_MAX + 2), (2**64, 2**64 + 2)]),
    program("range_three_args", """
        @jit
        def f(a, b, s):
            out = 0
            n = 0
            for i in range(a, b, s):
                out = out * 31 + i
                n += 1
            return out, n
        """, [(0, 10, 3), (10, 0, -3), (10, 0, 3), (0, 10, -1), (-10, 10, 7), (5, -5, -1),
              (0, 10, 20), (0, -10, -20), (0, 1, I64_MAX), (I64_MAX - 10, I64_MAX, 4),
              (I64_MIN + 5, I64_MIN, -2), (I64_MIN, I64_MAX, 2**62), (I64_MAX, I64_MIN, -(2**62)),
              (2**63 - 5, 2**63 + 5, 3), (0, 5, True)]),
    # NumPy ints as bounds: range() takes them by __index__ and yields Python ints, also where
    # a cold call runs the untyped, counting tier 0 (after a call past 64 bits, or watched)
    program("range_numpy_int_bounds", """
        @jit
        def f(a, b):
            s = 0
            for i in range(a, b):
                s += i
            for j in range(b, b - 4, -1):
                s = s * 3 + j
            return s
        """, [(0, 10), (2**64, 2**64 + 3), (np.int8(0), np.int8(100)), (np.uint64(2), np.uint64(9)),
              (np.int64(-5), 5), (True, np.int16(7))]),
    program("range_zero_step", """
        @jit
        def f(a, b, s):
            n = 0
            for i in range(a, b, s):
                n += 1
            return n
        """, [(0, 10, 0), (10, 0, 0), (0, 0, 0)]),
    program("range_float_arg", """
        @jit
        def f(n):
            s = 0
            for i in range(n):
                s += i
            return s
        """, each(3.0, 2.5, 1j)),
    program("range_loop_var_modified", """
        @jit
        def f(n):
            s = 0
            for i in range(n):
                i = i * 10
                s += i
            return s, i
        """, each(1, 5)),
    program("range_len", """
        @jit
        def f(a, b, s):
            return len(range(a, b, s)), len(range(b)), len(range(a, b))
        """, [(0, 10, 3), (10, 0, -3), (-5, 5, 1), (0, 0, 1), (5, 100, -1)]),
    program("range_nested_dependent", """
        @jit
        def f(n):
            s = 0
            for i in range(n):
                for j in range(i, -1, -1):
                    s += i * j - j
            return s
        """, each(0, 1, 6, 30)),
    program("range_reverse_stride", """
        @jit
        def f(n, s):
            acc = 0
            for i in range(n, -n - 1, -s):
                acc = acc * 3 - i
            return acc
        """, [(5, 1), (5, 2), (7, 3), (0, 1), (40, 1)]),
    program("range_big_len_overflow", """
        @jit
        def f(a, b):
            return len(range(a, b))
        """, [(I64_MIN, I64_MAX), (0, 2**63), (0, I64_MAX), (-1, I64_MAX)]),
    # more than 2**63 - 1 items with bounds and step in 64 bits: iterated (the loop breaks);
    # the baseline tier's range_len gave a negative length, and the loop ran no iteration
    program("range_more_items_than_i64", """
        @jit
        def f(a, b, s):
            c = 0
            last = 0
            for i in range(a, b, s):
                c += 1
                last = i
                if c == 3:
                    break
            else:
                c = -1
            return c, last
        """, [(I64_MIN, 0, 1), (-2, I64_MAX, 1), (I64_MAX, -5, -1), (I64_MIN, I64_MAX, 2),
              (I64_MIN, I64_MAX, 1), (I64_MAX, I64_MIN, -1), (0, 10, 1), (10, 0, 1),
              (5, 0, 2), (0, 5, -1)]),
    program("range_more_items_than_i64_enumerate", """
        @jit
        def f(a, b):
            t = 0
            for k, i in enumerate(range(a, b)):
                t += k
                if k == 4:
                    return t, i
            return t, None
        """, [(I64_MIN, 0), (-3, I64_MAX), (0, 3), (3, 0)]),
]
