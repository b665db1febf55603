"""NumPy arrays: every numeric dtype, 1-3 dimensions, any strides, bounds, writes, creation.

Non-contiguous layouts (``a[::2]``, ``a[::-1]``, ``a.T``) are made here, by the test; the
harness copies them without losing their strides, and also compares the memory around them.
"""

import numpy as np

from ..harness import program
from .values import I64_MAX, I64_MIN, INF, NAN, NINF

SAMPLES = {
    np.int8: [100, 100, -128, 27],
    np.int16: [30000, 10000, -32768],
    np.int32: [2**31 - 1, 1, -5],
    np.int64: [I64_MAX, 1, -3],
    np.uint8: [200, 100, 7],
    np.uint16: [65535, 2, 0],
    np.uint32: [2**32 - 1, 5],
    np.uint64: [2**64 - 1, 1, 2**63],
    np.float16: [65504, 1, -0.0, NAN],
    np.float32: [3.4e38, 3.4e38, -0.0, 1e-45],
    np.float64: [1e308, 1e308, -0.0, NAN, 5e-324],
    np.complex64: [1 + 2j, 3.4e38 + 0j, -0.0j],
    np.complex128: [1 + 2j, complex(NAN, 1), -0.0j],
    np.bool_: [True, False, True],
}
ALL_DTYPES = list(SAMPLES)
REAL_DTYPES = [d for d in ALL_DTYPES if d not in (np.complex64, np.complex128)]


def arr(dtype, values):
    return np.array(values, dtype=dtype)


def every_dtype(dtypes=ALL_DTYPES):
    """One 1-D sample array per dtype, plus a strided and a reversed view of a few."""
    cases = [(arr(d, SAMPLES[d]),) for d in dtypes]
    for d in (np.int8, np.float64, np.uint64, np.complex128):
        if d in dtypes:
            doubled = arr(d, [v for v in SAMPLES[d] for _ in (0, 1)])
            cases += [(doubled[::2],), (arr(d, SAMPLES[d])[::-1],)]
    return cases


def grid(dtype, *shape):
    return np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape).astype(dtype)


M23 = grid(np.float64, 2, 3)
M45 = grid(np.int32, 4, 5) - 7
T234 = grid(np.int16, 2, 3, 4)


def unaligned(values, dtype=np.float64):
    """An array of this dtype starting one byte into its buffer."""
    itemsize = np.dtype(dtype).itemsize
    buf = np.zeros(len(values) * itemsize + 1, np.uint8)
    a = buf[1:].view(dtype)
    a[:] = values
    return a


def aliased():
    base = np.arange(6.0)
    return base, base[::-1]


def read_only():
    a = np.arange(3)
    a.flags.writeable = False
    return (a, 1, 5)


PROGRAMS = [
    program("arr_sum_index", """
        @jit
        def f(a):
            s = 0
            for i in range(len(a)):
                s += a[i]
            return s
        """, every_dtype() + [(np.zeros(0),)]),
    program("arr_iterate", """
        @jit
        def f(a):
            s = 0.0
            n = 0
            for x in a:
                s = s * 0.5 + x
                n += 1
            return s, n
        """, every_dtype()),
    program("arr_first_last", """
        @jit
        def f(a):
            return a[0], a[-1], a[len(a) - 1], a[-len(a)]
        """, every_dtype() + [(np.zeros(0, np.int8),)]),
    program("arr_read_oob", """
        @jit
        def f(a, i):
            return a[i]
        """, [(np.arange(5), i) for i in (0, 4, -1, -5, 5, -6, 2**63, -(2**64), True)]
           + [(np.arange(4.0)[::2], 2), (np.arange(4.0)[::-1], -4), (np.arange(3), 1.0)]),
    program("arr_write_values", """
        @jit
        def f(a, i, v):
            a[i] = v
            return a[i]
        """, [(np.zeros(3, d), 1, v) for d, vs in [
            (np.int8, (127, -128, 128, -129, 1.9, -1.9, NAN, 1e300, True, np.int64(300))),
            (np.uint8, (255, 256, -1, 2.5)),
            (np.int64, (I64_MAX, I64_MIN, 2**63, I64_MIN - 1, INF, 9.3e18)),
            (np.uint64, (2**64 - 1, 2**64, -1, 2**63)),
            (np.float32, (1e300, -0.0, 2**200, 5e-324, NAN)),
            (np.float64, (2**1024, 2**1023, -0.0, True, 7, 1j)),
            (np.float16, (70000.0, 1e-8, 65504)),
            (np.complex64, (1e300, 1 + 2j, NAN)),
            (np.complex128, (2j, -0.0, 2**70)),
            (np.bool_, (5, 0.0, NAN, -0.0, 0j)),
            # None into ints is NumPy's TypeError; into floats it stores NaN
            (np.int32, (None,)), (np.uint16, (None,)), (np.float64, (None,)),
        ] for v in vs]),
    program("arr_write_oob", """
        @jit
        def f(a, i):
            a[i] = 9
            return a
        """, [(np.zeros(4, np.int16), i) for i in (3, 4, -4, -5, 2**64)]
           + [(np.zeros(6)[::2], 3), (np.zeros(6)[::-2], -3)]),
    program("arr_writes_before_failure_kept", """
        @jit
        def f(a, n):
            for i in range(n):
                a[i] = i * 10
            return 0
        """, [(np.zeros(4, np.int64), 5), (np.zeros(4), 4), (np.zeros(6, np.int8)[::2], 4),
              (np.zeros(20, np.int8), 20)]),
    program("arr_write_then_error", """
        @jit
        def f(a, x, d):
            a[0] = x
            a[1] = x // d
            a[2] = x * x
            return a
        """, [(np.zeros(3, np.int64), 5, 1), (np.zeros(3, np.int64), 5, 0),
              (np.zeros(3, np.int64), 2**32, 1), (np.zeros(3, np.float64), 2.5, 0.0),
              (np.zeros(3, np.uint8), 20, 1)]),
    program("arr_2d_sum", """
        @jit
        def f(a):
            s = 0
            w = 0
            for i in range(a.shape[0]):
                for j in range(a.shape[1]):
                    s += a[i, j]
                    w += (i + 1) * (j + 2) * a[i, j]
            return s, w
        """, [(M23,), (M23.T,), (M45,), (M45.T,), (M45[:, ::2],), (M45[::-1, 1:],),
              (grid(np.uint8, 3, 3) * 40,), (grid(np.complex64, 2, 2),),
              (grid(np.bool_, 2, 3),), (np.zeros((0, 3)),), (grid(np.float32, 3, 2)[::2, ::-1],)]),
    program("arr_3d_weighted", """
        @jit
        def f(a):
            s = 0
            n0, n1, n2 = a.shape
            for i in range(n0):
                for j in range(n1):
                    for k in range(n2):
                        s += a[i, j, k] * (i * 100 + j * 10 + k)
            return s, a[-1, -1, -1], a[0, -2, 1]
        """, [(T234,), (T234.transpose(2, 0, 1),), (T234[:, ::-1, ::2],),
              (grid(np.float64, 2, 2, 2),), (grid(np.int8, 3, 3, 3),)]),
    program("arr_nd_oob", """
        @jit
        def f(a, i, j):
            return a[i, j]
        """, [(M23, i, j) for i, j in [(1, 2), (-2, -3), (2, 0), (0, 3), (-3, 0), (0, -4),
                                       (5, 5)]] + [(M23.T, 2, 1), (M23.T, 1, 2)]),
    program("arr_nd_write", """
        @jit
        def f(a, v):
            for i in range(a.shape[0]):
                for j in range(a.shape[1]):
                    a[i, j] = v * i - j
            a[-1, -1] = -v
            return a
        """, [(np.zeros((2, 3)), 1.5), (np.zeros((3, 2), np.int32).T, 7),
              (np.zeros((4, 4), np.int8)[::2, 1::2], 100), (np.zeros((2, 2), np.uint16), -1)]),
    program("arr_attrs", """
        @jit
        def f(a):
            return a.shape, a.size, a.ndim, len(a)
        """, [(np.zeros(5),), (M23,), (M23.T,), (T234,), (np.zeros((0, 4)),),
              (np.zeros(7, np.uint8)[::3],), (np.zeros((2, 0, 3)),)]),
    program("arr_prefix_sum_inplace", """
        @jit
        def f(a):
            for i in range(1, len(a)):
                a[i] += a[i - 1]
            return a[-1]
        """, [(arr(d, [1, 2, 3, 100, 120]),) for d in (np.int8, np.uint8, np.int64, np.float32,
                                                     np.float64, np.complex64)]
           + [(np.arange(10)[::3],), (np.array([I64_MAX, 1, 1]),)]),
    program("arr_bubble_sort", """
        @jit
        def f(a):
            n = len(a)
            for i in range(n):
                for j in range(n - 1 - i):
                    if a[j] > a[j + 1]:
                        a[j], a[j + 1] = a[j + 1], a[j]
            return a
        """, [(np.array([5, -1, 3, 3, 0, 9, -7]),), (np.array([2.5, NAN, -0.0, 0.0, -INF, 1.0]),),
              (np.array([3, 1, 2], np.uint8),), (np.array([9, 8, 7, 6, 5, 4])[::-2],)]),
    program("arr_reverse_inplace", """
        @jit
        def f(a):
            i = 0
            j = len(a) - 1
            while i < j:
                t = a[i]
                a[i] = a[j]
                a[j] = t
                i += 1
                j -= 1
            return a
        """, [(np.arange(7),), (np.arange(6.0)[::2],), (np.array([True, False, False]),),
              (np.zeros(0),), (np.arange(8, dtype=np.uint64)[::-3],)]),
    program("arr_aliasing_views", """
        @jit
        def f(a, b):
            for i in range(len(a)):
                a[i] = b[i] + 1
            return a[0], b[0]
        """, [aliased, lambda: (np.arange(4), np.arange(4))]),
    program("arr_read_only_write", """
        @jit
        def f(a, i, v):
            a[i] = v
            return a
        """, [read_only]),
    program("arr_index_from_array", """
        @jit
        def f(a, idx):
            s = 0
            for k in range(len(idx)):
                s += a[idx[k]]
            return s
        """, [(np.arange(10) * 3, np.array([0, 9, -1, 4], np.int8)),
              (np.arange(10) * 3, np.array([0, 9, 10], np.uint64)),
              (np.arange(5.0), np.array([1, 2], np.uint8)),
              (np.arange(5.0), np.array([1.0, 2.0]))]),
    program("arr_mixed_dtype_elements", """
        @jit
        def f(a, b):
            x = a[0]
            y = b[0]
            return x + y, x * y, x - y, x < y, x == y
        """, [(arr(d1, [SAMPLES[d1][0]]), arr(d2, [SAMPLES[d2][-1]])) for d1, d2 in [
            (np.int8, np.uint8), (np.int8, np.int16), (np.uint64, np.int64),
            (np.int64, np.float32), (np.float32, np.float64), (np.float16, np.int8),
            (np.complex64, np.float64), (np.bool_, np.bool_), (np.bool_, np.int8),
            (np.uint32, np.int32), (np.float32, np.complex128)]]),
    program("arr_sum_int_then_float_arrays", """
        @jit
        def f(a):
            s = 0
            for i in range(a.size):
                s = s + a[i] * 2
            return s
        """, [(np.array([1, 2, 3]),), (np.array([1.5, 2.5]),), (np.array([100, 100], np.int8),),
              (np.array([2**62, 2**62]),), (np.array([NAN, 1.0]),)]),
    program("arr_min_max_scan", """
        @jit
        def f(a):
            lo = a[0]
            hi = a[0]
            for x in a:
                lo = min(lo, x)
                hi = max(hi, x)
            return lo, hi
        """, [(np.array([3, -1, 7]),), (np.array([2.0, NAN, -1.0]),),
              (np.array([NAN, 2.0, -1.0]),), (np.array([-0.0, 0.0]),),
              (np.array([5, 250, 3], np.uint8),), (np.array([NINF, INF], np.float32),)]),
    program("arr_float32_accumulate", """
        @jit
        def f(a):
            s = 0.0
            t = 0
            for i in range(len(a)):
                s += a[i]
                t = t + a[i] * 3
            return s, t, s * 1.0000001
        """, [(np.full(1000, 0.1, np.float32),), (np.full(300, 0.1, np.float16),),
              (np.full(1000, 0.1),), (np.array([16777216, 1, 1, 1], np.float32),),
              (np.array([2048, 1, 1], np.float16),)]),
    program("arr_unusual_layouts", """
        @jit
        def f(a):
            s = 0
            for i in range(len(a)):
                s += a[i] * (i + 1)
            return s, a[0], a[-1]
        """, [(np.arange(5, dtype=">i4"),), (np.array([1.5, -0.0, 2.5], ">f8"),),
              (np.arange(4, dtype=">u2")[::-1],), (np.array([1 + 2j, 3j], ">c16"),),
              (unaligned([1.5, -2.5, 1e300]),), (unaligned([7, -8, 2**40], np.int64),),
              (np.broadcast_to(np.arange(1.0, 2.0), (5,)),),
              (np.broadcast_to(np.array([2**62]), (3,)),)]),
    program("arr_unusual_layouts_write", """
        @jit
        def f(a, b):
            for i in range(len(a)):
                a[i] = a[i] * 2 + b[i % len(b)]
            return a
        """, [(np.arange(5, dtype=">i4"), np.broadcast_to(np.array([100]), (4,))),
              (np.array([1.5, -0.0, 2.5], ">f4"), np.array([0.25])),
              (unaligned([1.5, -2.5, 1e300]), unaligned([1.0, 2.0])),
              (unaligned([1, 2, 2**62], np.int64), np.arange(1)),
              (np.broadcast_to(np.arange(3.0), (2, 3))[0], np.arange(1.0))]),
    program("arr_2d_broadcast_read", """
        @jit
        def f(a):
            s = 0.0
            for i in range(a.shape[0]):
                for j in range(a.shape[1]):
                    s = s * 0.5 + a[i, j]
            return s, a.shape, a.size
        """, [(np.broadcast_to(np.arange(3.0), (4, 3)),),
              (np.broadcast_to(np.arange(4.0)[:, None], (4, 5)),),
              (np.arange(12.0).reshape(3, 4)[::-1, ::-2],)]),
    program("arr_returns_argument", """
        @jit
        def f(a, b, pick):
            a[0] = 1
            if pick:
                return a
            return b
        """, [(np.zeros(2), np.ones(2), True), (np.zeros(2), np.ones(2), False)]),
    program("arr_element_or_float_returned", """
        @jit
        def f(a, i):
            if i >= len(a):
                return 0.0
            return a[i] * 2.0
        """, [(np.arange(4.0), 0), (np.arange(4.0), 9), (np.arange(4.0), -1)]),
    program("arr_element_or_float_in_tuples", """
        @jit
        def pair(a, i):
            if i >= len(a):
                return 0.0, i
            return a[i], i

        @jit
        def f(a, n):
            t = (0.5, -1)
            for i in range(n):
                t = (a[i], i)
            x, k = pair(a, n)
            return t, (x, k * 2), pair(a, 0)
        """, [(np.arange(4.0), 0), (np.arange(4.0), 3), (np.arange(4.0), 4)]),
]
