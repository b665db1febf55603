"""for over enumerate(...) and zip(...): of arrays, ranges, tuples and each other; unpacked or
not; lengths that differ; starts past 64 bits; writes ahead of the iteration; float('inf')."""

import numpy as np

from ..harness import program
from .values import INF, NAN, each


def _f64(*xs):
    return np.array(xs, dtype=np.float64)


ARR = _f64(3.0, -1.5, 2.0, NAN, 7.25)
I32 = np.array([5, -2, 9, 2**31 - 1], dtype=np.int32)
EMPTY = np.zeros(0)

PROGRAMS = [
    program("iter_enumerate_array", """
        @jit
        def f(a):
            s = 0.0
            last = -1
            for i, x in enumerate(a):
                s = s * 0.5 + i * x
                last = i
            return s, last
        """, each(ARR, I32, EMPTY, np.arange(2000.0), np.arange(6.0).reshape(2, 3)[:, 1])),
    program("iter_enumerate_start", """
        @jit
        def f(a):
            out = 0
            for i, x in enumerate(a, 10):
                out = out * 3 + i
            for j, y in enumerate(a, start=-3):
                out = out * 3 + j
            return out
        """, each(I32, EMPTY, np.arange(1500, dtype=np.int64))),
    program("iter_enumerate_start_past_64_bits", """
        @jit
        def f(a):
            s = 0
            last = 0
            for i, x in enumerate(a, 9223372036854775806):
                s += i
                last = i
            return s, last
        """, each(I32, np.arange(3.0))),
    program("iter_enumerate_not_unpacked", """
        @jit
        def f(a):
            t = 0.0
            p = (0, 0.0)
            for p in enumerate(a):
                t += p[0] * p[1]
            return t, p
        """, each(ARR, EMPTY)),
    program("iter_enumerate_range_and_tuple", """
        @jit
        def f(n, x):
            s = 0
            for i, k in enumerate(range(n, 0, -2)):
                s += i * k
            for j, v in enumerate((x, 2, 3.5)):
                s += j * v
            return s
        """, [(7, 1), (0, 2.5), (-3, True), (11, 2**64)]),
    program("iter_zip_arrays", """
        @jit
        def f(a, b):
            s = 0.0
            n = 0
            for x, y in zip(a, b):
                s += x * y
                n += 1
            return s, n
        """, [(ARR, ARR[::-1].copy()), (ARR, I32), (I32, ARR), (ARR, EMPTY),
              (np.arange(3000.0), np.arange(2999.0)), (np.arange(5.0), np.arange(6.0)[::2])]),
    program("iter_zip_three_with_range", """
        @jit
        def f(a, b, n):
            s = 0
            for k, x, y in zip(range(n), a, b):
                s = s * 7 + k + int(x) - int(y)
            return s
        """, [(I32, I32, 10), (I32, I32, 2), (I32, np.arange(3, dtype=np.int64), 100),
              (I32, I32, -1)]),
    program("iter_zip_one_and_not_unpacked", """
        @jit
        def f(a, b):
            t = 0.0
            for (x,) in zip(a):
                t += x
            q = None
            for q in zip(a, b):
                pass
            return t, q
        """, [(ARR, I32), (EMPTY, ARR)]),
    program("iter_enumerate_zip_nested_unpack", """
        @jit
        def f(a, b):
            s = 0.0
            for i, (x, y) in enumerate(zip(a, b), 1):
                if i > 3 and x > y:
                    break
                s += i * (x - y)
            else:
                s = -s
            return s
        """, [(ARR, I32), (np.arange(10.0), np.arange(10.0)[::-1].copy()), (EMPTY, EMPTY)]),
    program("iter_zip_wrong_unpack", """
        @jit
        def f(a, b):
            s = 0
            for x, y, z in zip(a, b):
                s += 1
            return s
        """, [(I32, I32), (EMPTY, I32)]),
    program("iter_zip_sees_writes_ahead", """
        @jit
        def f(a, b):
            s = 0.0
            for k, (x, y) in enumerate(zip(a, b)):
                if k + 1 < len(a):
                    a[k + 1] = x + y
                s += x
            return s
        """, [lambda: (np.arange(6.0), np.ones(6)), lambda: (np.arange(4.0), np.ones(9))]),
    program("iter_zip_sequence_name_rebound", """
        @jit
        def f(a, b):
            s = 0.0
            for x, y in zip(a, b):
                s += x * y
                a = b
            return s, len(a)
        """, [(ARR, _f64(1.0, 2.0)), (EMPTY, ARR)]),
    program("iter_zip_tuples", """
        @jit
        def f(x, y):
            s = 0.0
            for u, v in zip((x, y, 1.5), (y, 2, x)):
                s = s * 2 - u * v
            return s
        """, [(1, 2), (0.5, -3.0), (True, 2**70)]),
    program("iter_zip_empty_range_and_array", """
        @jit
        def f(a, n):
            s = 0
            for i, x in zip(range(n, n), a):
                s += 1
            return s
        """, [(I32, 5), (EMPTY, 0)]),
    program("iter_float_constants", """
        @jit
        def f(a):
            lo = float('inf')
            hi = float("-inf")
            for x in a:
                if x < lo:
                    lo = x
                if x > hi:
                    hi = x
            return lo, hi, float('nan'), float(' 1e3 '), -float('Infinity'), float('-0.0')
        """, each(ARR, EMPTY, _f64(-INF, INF), np.arange(1200.0))),
]
