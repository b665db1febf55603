"""math module functions and constants, including domain and range errors."""

from ..harness import program
from .values import HUGE, INF, NAN, NINF, TINY, each


def _unary(fname, values):
    return program(f"math_{fname}", f"""
        import math

        @jit
        def f(x):
            return math.{fname}(x)
        """, each(*values))


COMMON = (0.0, -0.0, 1.0, -1.0, 0.5, 2, -3, NAN, INF, NINF, TINY, HUGE)

PROGRAMS = [
    _unary("sqrt", COMMON + (2**2000, 4, True)),
    _unary("exp", COMMON + (709.0, 710.0, -1000.0, 1000)),
    _unary("log", COMMON + (2**2000, 0, 2**64)),
    _unary("log2", (1.0, 8, 0.0, -1.0, INF, NAN, 2**1100)),
    _unary("log10", (1000, 0.001, 0, -0.0, INF, 10**400)),
    _unary("sin", COMMON),
    _unary("cos", (0.0, -0.0, 1e22, INF, NAN, 3)),
    _unary("tan", (0.0, -0.0, 1.5707963267948966, INF, NAN)),
    _unary("asin", (0.5, -1.0, 1.0000000000000002, NAN, INF)),
    _unary("acos", (0.5, 2.0, -1.0, NAN)),
    _unary("atan", (1.0, -0.0, INF, NINF, NAN)),
    _unary("sinh", (1.0, -0.0, 710.0, -1000.0, NAN)),
    _unary("cosh", (1.0, 710.0, -1000.0, INF)),
    _unary("tanh", (1.0, -0.0, 1000.0, NINF, NAN)),
    _unary("expm1", (1e-10, -0.0, 710.0, -INF, 1)),
    _unary("log1p", (1e-10, -0.0, -1.0, -2.0, INF)),
    _unary("floor", (2.5, -2.5, -0.0, 1e300, -1e300, NAN, INF, 7, True, -0.5)),
    _unary("ceil", (2.5, -2.5, -0.5, 1e19, NAN, NINF, -8)),
    _unary("trunc", (2.9, -2.9, -0.0, 9.3e18, NAN, INF, 5)),
    _unary("fabs", (-0.0, -3, NINF, NAN, 2**1000, -(2**1100))),
    _unary("isnan", (NAN, INF, 0.0, 3)),
    _unary("isinf", (NAN, INF, NINF, 1e308, 3)),
    _unary("isfinite", (NAN, INF, 1e308, 2**1100)),
    _unary("gamma", (0.5, 5.0, 0.0, -1.0, -0.0, 172.0, 171.5, -2.5, INF, NINF)),
    _unary("lgamma", (0.5, 0.0, -1.0, 1e308, INF)),
    _unary("erf", (0.5, -0.0, INF, NAN)),
    _unary("degrees", (1.0, HUGE, -0.0)),
    _unary("radians", (180, -0.0, INF)),
    _unary("factorial", (0, 5, 20, 21, 30, -1)),
    _unary("isqrt", (0, 15, 16, 2**64, 2**127 - 1, -1)),
    _unary("frexp", (0.0, -0.0, 1.0, 5e-324, 1e308, INF, NAN, 8)),
    _unary("modf", (2.5, -2.5, -0.0, INF, NINF, NAN)),
    program("math_binary", """
        import math

        @jit
        def f(x, y):
            return (math.atan2(x, y), math.hypot(x, y), math.copysign(x, y), math.pow(x, y),
                    math.fmod(x, y))
        """, [(1.0, 2.0), (0.0, -0.0), (-0.0, -0.0), (3, 4), (1e308, 1e308), (2.0, 1000.0),
              (INF, 2.0), (1.0, NAN), (-8.0, 1.0 / 3.0), (0.0, -1.0), (-1.0, 0.0), (5.0, INF)]),
    program("math_log_base", """
        import math

        @jit
        def f(x, b):
            return math.log(x, b)
        """, [(8, 2), (100.0, 10), (2.0, 1.0), (2.0, 0.0), (0.0, 10), (2**3000, 2), (1, 1)]),
    program("math_ldexp", """
        import math

        @jit
        def f(x, e):
            return math.ldexp(x, e)
        """, [(1.0, 10), (1.0, 1024), (1.0, -1075), (-0.0, 5), (INF, -3), (NAN, 3), (1.0, 2**70),
              (0.5, -(2**70)), (3, 2)]),
    program("math_gcd", """
        import math

        @jit
        def f(a, b):
            return math.gcd(a, b)
        """, [(12, 18), (0, 0), (-12, 18), (2**100, 2**70 * 3), (-(2**63), 2**63)]),
    program("math_constants", """
        import math

        @jit
        def f(x):
            return math.pi * x, math.e + x, math.tau - x, math.inf * x, math.nan + x, -math.inf
        """, each(1.0, 0, -0.0)),
    program("math_pipeline", """
        import math

        @jit
        def f(n):
            s = 0.0
            for i in range(1, n + 1):
                s += math.sqrt(i) * math.sin(i) / math.log(i + 1)
            return s, math.floor(s), math.ceil(s)
        """, each(0, 1, 50)),
    program("math_error_mid_loop", """
        import math

        @jit
        def f(n, start):
            s = 0.0
            x = start
            for i in range(n):
                s += math.sqrt(x)
                x -= 1.0
            return s
        """, [(3, 5.0), (5, 3.0), (2, 0.0), (1, -0.0)]),
    program("math_exp_overflow_loop", """
        import math

        @jit
        def f(x):
            y = 1.0
            while True:
                y = math.exp(y)
                if y > x:
                    return y
        """, each(10.0, 1e10, INF)),
]
