"""Array creation inside jitted code (np.empty/zeros/ones/arange) and arrays as return values."""

import numpy as np

from ..harness import program
from .values import NAN, each

PROGRAMS = [
    program("create_zeros_ones", """
        import numpy as np

        @jit
        def f(n):
            a = np.zeros(n)
            b = np.ones(n)
            for i in range(n):
                a[i] = b[i] * i
            return a, b
        """, each(0, 1, 5, -1, True)),
    program("create_empty_filled", """
        import numpy as np

        @jit
        def f(n, v):
            a = np.empty(n)
            for i in range(len(a)):
                a[i] = v - i
            return a
        """, [(3, 1.5), (0, 2.0), (4, 7), (2, NAN), (-2, 1.0)]),
    program("create_arange", """
        import numpy as np

        @jit
        def f(n):
            a = np.arange(n)
            s = 0
            for i in range(len(a)):
                s += a[i]
            return a, s
        """, each(0, 1, 10, -3)),
    program("create_arange_forms", """
        import numpy as np

        @jit
        def f(a, b, s):
            return np.arange(a, b), np.arange(a, b, s)
        """, [(0, 10, 3), (10, 0, -2), (-5, 5, 5), (3, 3, 1), (0, 5, 0)]),
    program("create_arange_numpy_scalars", """
        import numpy as np

        @jit
        def f(a, b, s):
            r = np.arange(a, b, s)          # NumPy promotes the bounds' types: its dtype
            t = r[0] * 0
            for i in range(len(r)):
                t += r[i]
            return r, t
        """, [(np.int64(0), np.int64(5), np.int64(1)), (np.int32(1), np.int32(9), np.int32(3)),
              (0, 6, np.int64(2)), (np.uint8(2), 7, 1), (np.int8(-3), np.int8(4), np.int8(2)),
              (np.float32(0.5), np.float32(3), np.float32(0.5)), (True, 4, 1),
              (np.uint64(1), np.uint64(4), np.uint64(1))]),
    program("create_arange_union_bound", """
        import numpy as np

        @jit
        def f(n, flag):
            x = 3
            if flag:
                x = 2.5                     # int | float: an int64 or a float64 array
            a = np.arange(x, n)
            return a[0] + len(a), a
        """, [(10, True), (10, False), (4, False)]),
    program("create_2d_matmul", """
        import numpy as np

        @jit
        def f(a, b):
            n, k = a.shape
            k2, m = b.shape
            c = np.zeros((n, m))
            for i in range(n):
                for j in range(m):
                    s = 0.0
                    for t in range(k):
                        s += a[i, t] * b[t, j]
                    c[i, j] = s
            return c
        """, [(np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)),
              (np.arange(6.0).reshape(2, 3), np.arange(6.0).reshape(2, 3).T),
              (np.eye(3)[::-1], np.arange(9.0).reshape(3, 3)[:, ::-1])]),
    program("create_dtype_arg", """
        import numpy as np

        @jit
        def f(n):
            a = np.zeros(n, np.int32)
            b = np.ones(n, np.uint8)
            c = np.zeros(n, np.complex128)
            for i in range(n):
                a[i] = i * 1000
                b[i] = b[i] + i * 100
                c[i] = complex(i, -i)
            return a, b, c
        """, each(0, 2, 3)),
    program("create_3d", """
        import numpy as np

        @jit
        def f(n):
            a = np.zeros((n, n + 1, 2))
            for i in range(n):
                for j in range(n + 1):
                    a[i, j, 0] = i
                    a[i, j, 1] = -j
            return a, a.shape, a.size
        """, each(0, 1, 3)),
    program("create_return_new_or_arg", """
        import numpy as np

        @jit
        def f(a, copy):
            if copy:
                b = np.empty(len(a))
                for i in range(len(a)):
                    b[i] = a[i]
                return b
            return a
        """, [(np.arange(3.0), True), (np.arange(3.0), False),
              (np.arange(4, dtype=np.int8)[::2], True)]),
    program("create_array_passed_to_callee", """
        import numpy as np

        @jit
        def total(a):
            s = 0
            for x in a:
                s += x
            return s

        @jit
        def f(n):
            return total(np.arange(n)), total(np.ones(n)), total(np.zeros(0))
        """, each(0, 5, 100)),
]

# numpy scalars as arguments, and NumPy 2 (NEP 50) scalar arithmetic rules
NUMPY_SCALARS = [
    program("npscalar_int_div_zero", """
        @jit
        def f(a, b):
            return a // b, a % b, a / b
        """, [(np.int64(7), 0), (np.int64(7), np.int64(0)), (np.int8(-7), 2), (np.uint8(7), 0),
              (np.float64(1.0), 0.0), (np.float32(-1.0), 0), (7, np.int64(0)),
              (np.int64(-2**63), -1)]),
    program("npscalar_weak_python_int", """
        @jit
        def f(a, b):
            return a + b
        """, [(np.int8(100), 100), (np.int8(1), 1000), (np.uint64(3), -1), (np.uint64(3), 4),
              (np.int64(1), 2**70), (np.float32(1), 1.0), (np.float32(1), 1e300),
              (np.int32(1), 1.5), (np.int64(2**62), 2**62), (np.bool_(True), 1),
              (np.bool_(True), np.bool_(True)), (np.uint64(1), np.int64(1)), (1.0, np.float16(2))]),
    program("npscalar_pow_shift", """
        @jit
        def f(a, b):
            return a ** b, a << b, a >> b
        """, [(np.int64(2), 3), (np.int64(2), 64), (np.int64(3), -1), (np.int8(2), 7),
              (np.uint8(3), 9), (np.int64(-8), 100)]),
    program("npscalar_neg_abs", """
        @jit
        def f(a):
            return -a, abs(a), a * -1, ~a
        """, each(np.int64(-2**63), np.int8(-128), np.uint8(1), np.uint64(0), np.int32(5))),
    program("npscalar_float_math", """
        import math

        @jit
        def f(x):
            return math.sqrt(x), x * x, x ** 0.5, int(x), float(x), round(x), bool(x)
        """, each(np.float64(2.0), np.float32(2.0), np.float64(-1.0), np.float64(NAN),
                  np.float16(3.5), np.float32(1e30))),
    program("npscalar_compare_big", """
        @jit
        def f(a, b):
            return a < b, a == b, a > b, max(a, b)
        """, [(np.int64(5), 2**100), (np.uint64(2**63), -1), (np.int8(-1), np.uint64(1)),
              (np.float32(0.1), 0.1), (np.float64(0.1), 0.1)]),
]

PROGRAMS += NUMPY_SCALARS
