"""NumPy's ufuncs on scalars (np.sqrt, np.abs, np.floor, np.exp, np.hypot ...): the NumPy scalar
types they return, their results at the edges (negative, -0.0, NaN, inf, huge), and NumPy's own
errors, over Python and NumPy scalars of every kind; in loops over arrays too."""

import numpy as np

from ..harness import program
from .values import INF, NAN, NINF, each

F64_EDGES = (2.0, -2.0, 0.0, -0.0, 0.5, 1e308, 5e-324, NAN, INF, NINF, 2.5, -3.5)
SCALARS = (2.25, -1.5, np.float64(-0.0), np.float64(7.5), np.float32(2.5), np.float32(-4.0),
           np.float16(1.5), 9, -4, 0, 2**70, True, np.int8(-128), np.uint8(250), np.int64(-9),
           1.5 + 2j, np.complex64(3 - 4j))


def _sample(n):
    return np.random.default_rng(n).normal(0.0, 10.0, n)


PROGRAMS = [
    program("np_unary_exact", """
        import numpy as np
        @jit
        def f(x):
            return (np.sqrt(x), np.absolute(x), np.abs(x), np.fabs(x), np.floor(x), np.ceil(x),
                    np.trunc(x), np.rint(x), np.negative(x), np.positive(x))
        """, each(*F64_EDGES, *(np.float64(v) for v in F64_EDGES))),
    program("np_unary_any_scalar", """
        import numpy as np
        @jit
        def f(x):
            return np.sqrt(x), np.abs(x), np.negative(x), np.square(x), np.isnan(x)
        """, each(*SCALARS)),
    program("np_unary_transcendental", """
        import numpy as np
        @jit
        def f(x):
            return np.exp(x), np.log(x), np.sin(x), np.tanh(x), np.arctan(x), np.log1p(x)
        """, each(*F64_EDGES, np.float32(0.5), 3, -1, np.float64(710.0))),
    program("np_unary_bool_results", """
        import numpy as np
        @jit
        def f(x):
            return np.isnan(x), np.isinf(x), np.isfinite(x), np.signbit(x), np.sign(x)
        """, each(*F64_EDGES, np.float32(NAN), 5, -5)),
    program("np_binary", """
        import numpy as np
        @jit
        def f(x, y):
            return (np.hypot(x, y), np.maximum(x, y), np.minimum(x, y), np.fmax(x, y),
                    np.arctan2(x, y), np.copysign(x, y), np.power(x, y), np.add(x, y))
        """, [(3.0, 4.0), (NAN, 1.0), (1.0, NAN), (-0.0, 0.0), (INF, -INF), (2, 3), (2, -1),
              (np.float32(1.5), 2.0), (np.int8(100), np.int8(100)), (1e308, 1e308), (0, 0)]),
    program("np_int_division", """
        import numpy as np
        @jit
        def f(x, y):
            return np.floor_divide(x, y), np.remainder(x, y), np.true_divide(x, y)
        """, [(7, 2), (-7, 2), (7, 0), (np.int64(-9), np.int64(4)), (np.int32(5), 0),
              (7.5, 0.0), (-7.5, 2.0)]),
    program("np_sqrt_norm_loop", """
        import numpy as np
        @jit
        def f(a):
            s = 0.0
            for x in a:
                s += np.sqrt(np.abs(x)) - np.floor(x * 0.5)
            return s
        """, each(_sample(7), _sample(3000), np.zeros(0), np.array([4.0, NAN, -0.0, INF]))),
    program("np_sqrt_of_a_negative_mid_loop", """
        import numpy as np
        @jit
        def f(a):
            s = 0.0
            n = 0
            for i in range(len(a)):
                r = np.sqrt(a[i])
                if r == r:
                    s += r
                else:
                    n += 1
            return s, n
        """, each(np.abs(_sample(2000)), _sample(2000), np.array([1.0, -1.0, 4.0]))),
    program("np_distance_loop", """
        import numpy as np
        @jit
        def f(xs, ys):
            best = np.inf
            for x, y in zip(xs, ys):
                d = np.sqrt(x * x + y * y)
                best = np.minimum(best, d)
            return best
        """, [(_sample(50), _sample(60)), (_sample(1500), _sample(1500)), (np.zeros(0), _sample(3))]),
    program("np_scalar_types", """
        import numpy as np
        @jit
        def f(x):
            return (np.float64(x), np.float32(x), np.int64(x), np.uint8(x), np.bool_(x),
                    np.float64(), np.int16())
        """, each(2.5, -7, 300, True, np.float64(-0.0), np.float32(1.5), NAN, 1e300, 2**70,
                  np.int8(-5), 1 + 2j)),
    program("np_float64_in_a_loop", """
        import numpy as np
        @jit
        def f(a):
            s = np.float64(0.0)
            for x in a:
                s += np.float64(x) * 0.5
            return s
        """, each(_sample(1200), np.arange(5), np.zeros(0))),
    program("np_ufunc_wrong_count", """
        import numpy as np
        @jit
        def f(x):
            return np.sqrt(x, x)
        """, each(2.0, np.float64(3.0))),
    program("np_ufunc_of_array", """
        import numpy as np
        @jit
        def f(a):
            b = np.sqrt(a)
            return b[0]
        """, each(np.arange(4.0), np.arange(3))),
]
