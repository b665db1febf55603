"""Floor division, modulo and divmod: signs, zeros, infinities, and their exact error messages;
true division by powers of two."""

import numpy as np

from ..harness import program
from .values import I64_MAX, I64_MIN, INF, NAN, NINF, pairs

INT_SIGNS = pairs((7, -7, 0, 6, -6, 1, I64_MIN, 2**65 + 3), (2, -2, 3, -3, 1, -1, 2**64))
FLOAT_SIGNS = pairs((7.5, -7.5, 0.0, -0.0, INF, NINF, NAN, 5e-324, 1e308),
                    (2.0, -2.0, INF, NINF, 0.1, -3))

PROGRAMS = [
    program("div_floordiv_int", """
        @jit
        def f(a, b):
            return a // b
        """, INT_SIGNS),
    program("div_mod_int", """
        @jit
        def f(a, b):
            return a % b
        """, INT_SIGNS),
    program("div_divmod_int", """
        @jit
        def f(a, b):
            q, r = divmod(a, b)
            return q, r, q * b + r == a
        """, INT_SIGNS[::3]),
    program("div_floordiv_float", """
        @jit
        def f(a, b):
            return a // b
        """, FLOAT_SIGNS),
    program("div_mod_float", """
        @jit
        def f(a, b):
            return a % b
        """, FLOAT_SIGNS),
    program("div_divmod_float", """
        @jit
        def f(a, b):
            return divmod(a, b)
        """, FLOAT_SIGNS[::4] + [(-1e-300, 1e300), (7, 2.5), (-7, 2.5)]),
    program("div_by_zero", """
        @jit
        def f(a, b, op):
            if op == 0:
                return a / b
            elif op == 1:
                return a // b
            elif op == 2:
                return a % b
            elif op == 3:
                return divmod(a, b)
            else:
                return a ** -1
        """, [(a, b, op) for op in range(5) for a, b in
              [(1, 0), (1.0, 0), (1, 0.0), (-0.0, -0.0), (True, False), (0, 0), (NAN, 0.0),
               (2**70, 0)]] + [(1j, 0, 0), (0j, 0j, 4), (1 + 0j, 0, 0)]),
    program("div_zero_after_work", """
        @jit
        def f(n, d):
            s = 0
            for i in range(n):
                s += i // d
                d -= 1
            return s
        """, [(3, 5), (10, 4), (6, 5), (2, 2)]),
    program("div_truediv_exact", """
        @jit
        def f(a, b):
            return a / b
        """, [(2**53 + 1, 1), (2**53 + 3, 2), (10**30, 10**10), (-(10**30), 7), (I64_MIN, 3),
              (2**1100, 2**1098), (1, 2**1100), (2**1100, 3), (2**1024, 1), (-1, I64_MIN),
              (2**53 + 1, 3), (-(2**53 + 1), 3), (2**62 + 1, 2**62 - 1), (I64_MAX, 7)]),
    program("div_float_mod_signs", """
        @jit
        def f(x):
            return x % 1.0, x % -1.0, x // 1.0, x // -1.0, -x % 1.0
        """, [(v,) for v in (0.0, -0.0, 0.25, -0.25, 1e-300, -1e-300, 1e300, NAN, INF, 5.5)]),
    # the baseline tier multiplies by the reciprocal of a power of two (select.py: recip):
    # subnormals, overflow to inf (NumPy's warning from tier 0), signed zeros, NaN, int operands
    program("div_by_powers_of_two", """
        @jit
        def f(x, k, a):
            return (x / 4.0, k / 2.0, x / 0.5, a[0] / 8.0, x / 3.0, k / 2.0 ** -1021,
                    x / 2.0 ** 1023, a[1] / 0.25, x / -2.0 ** 1021, a[0] / 2.0 ** -1022)
        """, [lambda: (1.5, 3, np.array([1.0, 2.0])),
              lambda: (5e-324, 2**62 + 1, np.array([INF, 1e308])),
              lambda: (-0.0, -7, np.array([NAN, -1e-310])),
              lambda: (1e308, I64_MIN, np.array([-0.0, 5e-324])),
              lambda: (NINF, 0, np.array([1e-300, 3.0]))]),
]
