"""Arithmetic over int, float, bool and complex, as Python defines it."""

import numpy as np

from ..harness import program
from .values import HUGE, I64_MAX, I64_MIN, INF, NAN, NINF, TINY, each, pairs

MIXED = [(3, 4), (-3, 4.5), (True, 2), (True, False), (2.5, 1j), (1 + 2j, 3 - 1j), (-0.0, 0.0),
         (-0.0, -0.0), (NAN, 1.0), (INF, NINF), (INF, INF), (TINY, TINY), (HUGE, HUGE),
         (-HUGE, HUGE), (I64_MAX, 0.5), (2**53 + 1, 1.0), (-7, 2), (7, -3), (0, -0.0),
         (False, -0.0), (1e-320, 1e300)]


def _binop(name, op, cases):
    return program(f"arith_{name}", f"""
        @jit
        def f(a, b):
            return a {op} b
        """, cases)


PROGRAMS = [
    _binop("add", "+", MIXED),
    _binop("sub", "-", MIXED),
    _binop("mul", "*", MIXED + [(INF, 0.0), (-1, 0.0), (1j, 1j), (True, 1.5)]),
    _binop("truediv", "/", [(7, 2), (-7, 2), (1, 3), (True, True), (1.0, -INF), (-0.0, 5),
                            (0.0, -5), (2**53 + 1, 1), (10**20, 3), (2**1100, 2**1099),
                            (1, 2**1100), (2**1100, 1), (1 + 1j, 1 - 1j), (HUGE, TINY),
                            (NAN, 2), (I64_MIN, -1)]),
    _binop("pow", "**", [(2, 10), (2, 100), (2, -1), (-2, 63), (-2, 64), (0, 0), (0.0, 0),
                         (-8.0, 1 / 3), (2.0, 0.5), (-1.0, INF), (1.0, NAN), (NAN, 0),
                         (10.0, 400), (2.0, -1075), (True, 5), (2, True), (1j, 2), (-0.0, -1),
                         (0, -1), (0.0, -1.0), (3, 40), (-3, 41), (7, 0), (-1, I64_MIN)]),
    program("arith_augmented_error_after_deopt", """
        @jit
        def f(n):
            t = 1
            for i in range(1, n):
                t |= pow(i, -1)             # pow gives a float: TypeError names `|=`
            return t
        """, [(1,), (2,), (3,)]),
    program("arith_unary", """
        @jit
        def f(x):
            return -x, +x, abs(x), not x
        """, each(0, -0.0, 5, -5, True, False, I64_MIN, I64_MAX, NAN, INF, NINF, TINY,
                  1.5 - 2j, 2**70)),
    program("arith_invert", """
        @jit
        def f(x):
            return ~x, ~~x, -~x, ~-x
        """, each(0, -1, True, False, I64_MAX, I64_MIN, 2**64)),
    program("arith_mixed_expr", """
        @jit
        def f(x, y):
            return (x * 3 - y) / 2 + x % 4 - y ** 2
        """, pairs((5, -5, 2.5, True), (0, -1.5, 3))),
    program("arith_float_specials", """
        @jit
        def f(x):
            return x * 0.0, x - x, x / 1e308, x * -1, 0.0 - x, x + 0.0, -0.0 + x
        """, each(0.0, -0.0, 1.0, NAN, INF, NINF, TINY, HUGE, -HUGE)),
    program("arith_augmented", """
        @jit
        def f(x, y):
            x += y
            x *= 2
            x -= 1
            x //= 3
            x %= 17
            x **= 2
            x /= 4
            return x
        """, pairs((10, -10, 2.5, True, I64_MAX), (3, -0.5, False))),
    program("arith_augmented_bits", """
        @jit
        def f(x, y):
            x &= y
            x |= 12
            x ^= y
            x <<= 3
            x >>= 1
            return x
        """, pairs((0, -1, 255, True, I64_MIN), (7, -8, True))),
    program("arith_bool_types", """
        @jit
        def f(a, b):
            return a + b, a - b, a * b, a & b, a | b, a ^ b, a // 1, a % 2, -a, ~a, +a
        """, pairs((True, False), (True, False))),
    program("arith_constants", """
        @jit
        def f():
            return (-7 // 2, 7 % -3, -7 % 2, 2 ** 100, 2 ** -1, -2 ** 2, (-2) ** 2, 1 / 3,
                    10 // 0.3, 10 % 0.3, 0.1 + 0.2, 1e308 * 10, -1e308 * 10, 2 ** 63, -2 ** 63,
                    7.5 // -2, -0.0 % 5, 0.0 % -5, 3 ** -2, True + True, 1 - True, 5 // True)
        """, [()]),
    program("arith_complex", """
        @jit
        def f(z, w):
            return z + w, z - w, z * w, z / w, -z, abs(z), z == w, z != w, z ** 2
        """, [(1 + 2j, 3 - 4j), (1j, 1j), (complex(INF, 0), 2j), (complex(NAN, 1), 1),
              (-0.0j, 1.0), (2.0, 1 + 0j), (complex(1e308, 1e308), 0.5j), (0j, 1e-320j)]),
    program("arith_complex_pow", """
        @jit
        def f(z, e):
            return z ** e
        """, [(1 + 2j, 3), (1 + 2j, 100), (1 + 2j, -2), (1 + 2j, 0.5), (1e200j, 2), (0j, 0j),
              (0j, -1), (-1, 0.5), (2j, 1j), (complex(INF, 1), 2), (-0.0j, 2)]),
    program("arith_pow_float_specials", """
        @jit
        def f(x, y):
            return x ** y
        """, [(x, y) for x in (0.0, -0.0, INF, NINF, -4.0, 4.0, -1.0, 1.0, 0.5, -0.5, NAN, 1e300)
              for y in (0.5, -0.5, NINF, INF, 2, -3, 3.0, -3.0, 0.0, -0.0, NAN, 1e300, 2.5)]),
    program("arith_complex_zero_div", """
        @jit
        def f(z, w):
            return z / w
        """, [(1j, 0), (1j, 0.0), (1j, 0j), (0j, -0.0)]),
    program("arith_int_float_mix_big", """
        @jit
        def f(n, x):
            return n + x
        """, [(2**1023, 1.0), (2**1024, 1.0), (-(2**1024), 0.5), (2**63, -0.0), (I64_MAX, 1.0)]),
    program("arith_shifts", """
        @jit
        def f(x, s):
            return x << s, x >> s
        """, pairs((1, -1, 5, I64_MAX, I64_MIN, True), (0, 1, 62, 63, 64, 65, 100))
           + [(1, -1), (0, -5)]),
    program("arith_bitwise", """
        @jit
        def f(a, b):
            return a & b, a | b, a ^ b, ~a & b
        """, pairs((0, -1, 12, I64_MIN, 2**64 + 5), (10, -3, I64_MAX, False))),
    program("arith_bitwise_float_typeerror", """
        @jit
        def f(a, b):
            return a & b
        """, [(1.0, 1), (1, 2.5), (True, 1.0)]),
    program("arith_mixed_type_error", """
        @jit
        def f(a, b):
            return a // b
        """, [(1j, 2), (3, 1j)]),
    program("complex_constants", """
        @jit
        def f(x):
            return x + 1j, x * 2.5j - 1
        """, each(1.5, 2, True, -0.0)),
    # number subclasses as free names: tier 0 spelled an np.float64 constant as its repr,
    # `np.float64(0.1)`, a name its namespace lacks (NameError, also at every deopt)
    program("global_numpy_scalar_constant", """
        import numpy as np

        S = np.float64(0.1)

        @jit
        def f(a, i):
            t = 0.0
            for j in range(a.shape[0]):
                t += S * a[j]
            return t + a[i] * S, t
        """, [(np.arange(5.0), 1), (np.arange(5.0), 7), (np.arange(3.0), -1)]),
    program("global_int_enum_constant", """
        import enum

        class Mode(enum.IntEnum):
            FAST = 3

        M = Mode.FAST

        @jit
        def f(x):
            return x * M, M + 1, type(M + 1) is int
        """, each(2, 2.5, True)),
    program("global_bound_twice_by_the_module", """
        N = 1000
        if N > 10:
            N = 7                       # as `N = int(sys.argv[1])`: compiled with 7

        @jit
        def f(x):
            return x * N + N // 2, N * 0.5
        """, each(2, 2.5, True, 2**62)),
]
