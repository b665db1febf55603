"""Builtins in the subset: abs, min, max, len, int, float, bool, complex, round, divmod, pow."""

from ..harness import program
from .values import I64_MAX, I64_MIN, INF, NAN, NINF, each, pairs

PROGRAMS = [
    program("bi_abs", """
        @jit
        def f(x):
            return abs(x)
        """, each(-3, 3, I64_MIN, -0.0, NINF, NAN, True, False, 3 - 4j, complex(1e308, 1e308),
                  complex(NAN, INF), -(2**100))),
    program("bi_min_max", """
        @jit
        def f(a, b):
            return min(a, b), max(a, b), min(b, a), max(b, a)
        """, [(1, 1.0), (1.0, 1), (NAN, 1.0), (-0.0, 0.0), (True, 1), (False, 0.0), (2**64, 5),
              (I64_MIN, NINF), (3, -3)]),
    program("bi_min_max_three", """
        @jit
        def f(a, b, c):
            return min(a, b, c), max(a, b, c)
        """, [(3, 1, 2), (1.5, 1, 1.5), (NAN, 0, 1), (0, NAN, 1), (True, 2, -1)]),
    program("bi_min_of_tuple", """
        @jit
        def f(a, b):
            t = (a, b, 7)
            return min(t), max(t)
        """, [(1, 9), (2.5, -1)]),
    program("bi_min_empty_error", """
        @jit
        def f(n):
            t = ()
            if n > 0:
                t = (n,)
            return max(t)
        """, each(1, 0)),
    program("bi_int", """
        @jit
        def f(x):
            return int(x)
        """, each(2.9, -2.9, -0.0, True, 7, NAN, INF, NINF, 1e20, -(2**70))),
    program("bi_float", """
        @jit
        def f(x):
            return float(x)
        """, each(7, True, -0.0, 2**53 + 1, 2**1023, 2**1024, -(2**1100), I64_MIN, NAN)),
    program("bi_bool", """
        @jit
        def f(x):
            return bool(x)
        """, each(0, 2, -0.0, NAN, 0j, 1j, False, None)),
    program("bi_complex", """
        @jit
        def f(a, b):
            return complex(a, b), complex(a), complex(b, -0.0)
        """, [(1, 2), (1.5, -0.0), (True, False), (NAN, INF), (2**70, 1)]),
    program("bi_round", """
        @jit
        def f(x):
            return round(x), round(x, 0), round(x, 1), round(x, -1)
        """, each(2.5, 3.5, -2.5, 2.675, 0.5, -0.5, 1.05, 15, -15, 25, True, -0.0, 1e300,
                  5e-324)),
    program("bi_round_errors", """
        @jit
        def f(x):
            return round(x)
        """, each(NAN, INF, NINF, 1e300, I64_MAX)),
    program("bi_round_big_ndigits", """
        @jit
        def f(x, n):
            return round(x, n)
        """, [(123456789, -3), (123456789, -20), (1.23456789, 20), (1.5, -400), (2**70, -5),
              (-1234.5678, 2), (12345, 2)]),
    program("bi_divmod", """
        @jit
        def f(a, b):
            return divmod(a, b)
        """, pairs((7, -7, 7.5, -0.0, True), (2, -2.0, 3))),
    program("bi_pow", """
        @jit
        def f(a, b):
            return pow(a, b)
        """, [(2, 10), (2, -2), (-2.0, 0.5), (0, -1), (2, 100), (True, -1)]),
    program("bi_pow_mod", """
        @jit
        def f(a, b, m):
            return pow(a, b, m)
        """, [(2, 10, 1000), (2, -1, 5), (3, 200, 2**64 + 13), (-2, 3, 5), (2, 3, -5), (2, 3, 0),
              (2, -1, 4), (2.0, 3, 5), (7, 0, 1)]),
    program("bi_len", """
        @jit
        def f(t, n):
            return len(t) + len(range(n))
        """, [((1, 2, 3), 4), ((), 0), ((1,), -3)]),
    program("bi_conversions_chain", """
        @jit
        def f(x):
            a = int(x)
            b = float(a)
            c = bool(b)
            d = complex(b, a)
            return a, b, c, d, int(c), round(b / 3, 2)
        """, each(3.7, -0.3, 2, 1e16, True)),
]
