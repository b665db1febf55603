"""Adversarial programs for the LLVM tier's guard, deopt and loop machinery.

Each program aims at one mechanism and the ways it could go wrong: stores undone by a deopt
(the same element written twice, read after write, arrays that are views of each other,
negative indices, int8/uint8 results, out-of-bounds and zero divisors after stores), float
accumulators checked only at loop exit (inf then NaN, break/return, compared, divisor),
chunked counted loops (1023/1024/1025/3000 iterations, negative steps, empty ranges, while
loops), diamonds generated as selects (only the untaken arm overflows, nested, unions,
NaN and -0.0), pure callees generated in place (raising, warning, int vs float arguments),
recursion inlined two levels (overflow and exceptions at depth, mutual recursion), and the
speculation that array dimensions stay below 2**30 (size-0 arrays with huge dimensions).
"""

import numpy as np

from ..harness import program

INF, NAN = float("inf"), float("nan")


def views():
    a = np.arange(10.0)
    return (a[1:], a[:-1], 1e308)


def views_i8():
    a = np.arange(10, dtype=np.int8) * 12
    return (a[1:], a[:-1])


PROGRAMS = [
    program("adv_store_twice_then_overflow", """
        @jit
        def f(a, i, y):
            a[i] = a[i] + 1.0
            a[i] = a[i] * y
            a[i] = a[i] * y
            return a[i]
        """, [(np.array([1.0, 2.0, 3.0]), 1, 2.0), (np.array([1.0, 2.0, 3.0]), -1, 1e200),
              (np.array([1.0, 2.0, 3.0]), 0, 1e300), (np.array([1.0, 2.0]), 5, 2.0),
              (np.array([1.0, 2.0]), -3, 2.0)]),
    program("adv_views_aliased_loop", """
        @jit
        def f(dst, src, y):
            for i in range(dst.shape[0]):
                dst[i] = src[i] * y + dst[i]
            return dst
        """, [views, lambda: (np.arange(9.0), np.arange(9.0), 2.0)]),
    program("adv_views_aliased_int8", """
        @jit
        def f(dst, src):
            for i in range(dst.shape[0]):
                dst[i] = src[i] + dst[i]
            return dst
        """, [views_i8, lambda: (np.arange(9, dtype=np.int8), np.arange(9, dtype=np.int8))]),
    program("adv_store_then_oob", """
        @jit
        def f(a, b, n):
            for i in range(n):
                a[i] = a[i] + 1.0
                b[i] = a[i] * 2.0
                a[i + 1] = b[i] - 1.0
            return a
        """, [(np.zeros(5), np.zeros(5), 4), (np.zeros(5), np.zeros(5), 5),
              (np.zeros(5), np.zeros(3), 4)]),
    program("adv_store_then_zerodiv", """
        @jit
        def f(a, d):
            for i in range(a.shape[0]):
                a[i] = a[i] * 3
                a[i] = a[i] // d[i]
            return a
        """, [(np.arange(5), np.array([1, 2, 3, 4, 5])), (np.arange(5), np.array([1, 2, 0, 4, 5])),
              (np.arange(5.0), np.array([1.0, 2.0, 0.0, 4.0, 5.0]))]),
    program("adv_store_uint8_wrap", """
        @jit
        def f(a, k):
            for i in range(a.shape[0]):
                a[i] = a[i] + 1
                a[i] = a[i] * k
            return a
        """, [(np.array([1, 2, 3], dtype=np.uint8), 2), (np.array([1, 200, 3], dtype=np.uint8), 2),
              (np.array([1, 100, 3], dtype=np.int8), 3), (np.array([1, 2, 3], dtype=np.uint8), 300),
              (np.array([1, 2, 3], dtype=np.int8), -1)]),
    program("adv_store_np_scalar_wrap", """
        @jit
        def f(a, b):
            for i in range(a.shape[0]):
                a[i] = b[i] + b[i]
                b[i] = a[i] * b[i]
            return a
        """, [(np.zeros(3, dtype=np.int8), np.array([1, 60, 70], dtype=np.int8)),
              (np.zeros(3, dtype=np.int16), np.array([1, 60, 70], dtype=np.int8)),
              (np.zeros(3), np.array([1e200, 1e300, 2.0]))]),
    program("adv_store_neg_index_alias", """
        @jit
        def f(a, y):
            n = a.shape[0]
            for i in range(n):
                a[i] = a[i] + 1.0
                a[-1 - i] = a[i] * y
            return a
        """, [(np.arange(5.0), 2.0), (np.arange(5.0), 1e308), (np.arange(4.0), 1e308)]),
    program("adv_read_after_write_2d", """
        @jit
        def f(a, y):
            for i in range(a.shape[0]):
                for j in range(a.shape[1]):
                    a[i, j] = a[j, i] * y
                    a[j, i] = a[i, j] + 1.0
            return a
        """, [(np.arange(9.0).reshape(3, 3), 2.0), (np.arange(9.0).reshape(3, 3), 1e200),
              (np.arange(9.0).reshape(3, 3).T, 1e300)]),
    program("adv_store_then_return_in_loop", """
        @jit
        def f(a, lim):
            s = 0
            for i in range(a.shape[0]):
                a[i] = a[i] * 2
                s += a[i]
                if s > lim:
                    return s
            return -s
        """, [(np.arange(10), 7), (np.arange(10), 10**6), (np.full(4, 2**62), 10**19),
              (np.arange(10.0), 7)]),
    program("adv_store_nan_into_int", """
        @jit
        def f(a, x):
            for i in range(a.shape[0]):
                a[i] = a[i] + 1
                a[i] = x
            return a
        """, [(np.arange(4), 3), (np.arange(4), 2**70), (np.arange(4, dtype=np.int8), 300),
              (np.arange(4, dtype=np.uint8), -1), (np.arange(4.0), 2**70)]),
    program("adv_store_float_into_int_arr", """
        @jit
        def f(a, x):
            for i in range(a.shape[0]):
                a[i] = a[i] + 1
                a[i] = a[i] * x
            return a
        """, [(np.arange(4), 1.5), (np.arange(4), float('nan')), (np.arange(4), float('inf')),
              (np.arange(4, dtype=np.int8), 100.0), (np.arange(4, dtype=np.int32), 1e10)]),
    program("adv_acc_inf_then_nan", """
        @jit
        def f(a):
            s = 0.0
            for i in range(a.shape[0]):
                s += a[i]
            return s
        """, [(np.array([1e308, 1e308, -np.inf, 1.0]),), (np.array([np.inf, -np.inf]),),
              (np.array([np.nan, 1.0]),), (np.array([-0.0, -0.0]),), (np.zeros(0),),
              (np.full(3000, 0.1),), (np.full(1025, 1e305),)]),
    program("adv_acc_python_float", """
        @jit
        def f(n, x):
            s = -0.0
            for i in range(n):
                s += x * i
            return s
        """, [(1023, 0.1), (1024, 0.1), (1025, 0.1), (3000, 1e305), (3000, INF), (0, 1.0),
              (3000, NAN), (5, -0.0), (2000, 3)]),
    program("adv_acc_compared", """
        @jit
        def f(a, lim):
            s = 0.0
            for i in range(a.shape[0]):
                s += a[i]
                if s > lim:
                    break
            return s
        """, [(np.full(3000, 1e305), 1e308), (np.full(3000, 1e305), INF), (np.full(3000, 1.0), 2000.5),
              (np.array([np.nan, 1.0, 2.0]), 0.0), (np.array([np.inf, -np.inf, 1.0]), INF)]),
    program("adv_acc_return_in_loop", """
        @jit
        def f(a, k):
            p = 1.0
            for i in range(a.shape[0]):
                p *= a[i]
                if i == k:
                    return p
            return -p
        """, [(np.full(2000, 10.0), 400), (np.full(2000, 10.0), 3000), (np.full(2000, 0.5), 1500),
              (np.full(2000, -10.0), 1999)]),
    program("adv_acc_div_dividend", """
        @jit
        def f(a):
            q = 1e300
            for i in range(a.shape[0]):
                q = q / a[i]
            return q
        """, [(np.full(5, 0.5),), (np.full(5, 1e-100),), (np.array([2.0, 0.0, 3.0]),),
              (np.array([np.inf, 2.0]),), (np.full(3000, 1.0001),)]),
    program("adv_acc_sub_reversed", """
        @jit
        def f(a):
            s = 0.0
            for i in range(a.shape[0]):
                s = a[i] - s
            return s
        """, [(np.arange(3000.0),), (np.array([1e308, -1e308, 1e308]),), (np.array([np.inf, np.inf]),)]),
    program("adv_int_sum_chunks", """
        @jit
        def f(start, stop, step):
            s = 0
            c = 0
            for i in range(start, stop, step):
                s += i * i
                c += 1
            return s, c
        """, [(0, 1023, 1), (0, 1024, 1), (0, 1025, 1), (0, 3000, 1), (3000, 0, -1), (3000, -1, -3),
              (10, 5, 1), (5, 10, -1), (-2**62, 2**62, 2**60), (0, 2**62, 2**61 + 1),
              (2**32, 2**32 + 3000, 1)]),
    program("adv_int_sum_overflow_chunk", """
        @jit
        def f(n, x):
            s = 0
            for i in range(n):
                s += x
            return s
        """, [(3000, 2**52), (1025, 2**53), (2049, 2**53), (4096, 2**51 + 1), (1024, 9007199254740992)]),
    program("adv_float32_sum", """
        @jit
        def f(a):
            s = a[0] * 0
            for i in range(a.shape[0]):
                s += a[i]
            return s
        """, [(np.full(3000, 0.1, dtype=np.float32),), (np.full(1025, 3e37, dtype=np.float32),),
              (np.full(3, 3e38, dtype=np.float32),), (np.array([np.nan, 1.0], dtype=np.float32),),
              (np.full(3000, 0.1),), (np.arange(3000, dtype=np.int8),), (np.arange(3000, dtype=np.int64),)]),
    program("adv_float32_plus_pyfloat", """
        @jit
        def f(a, x):
            s = a[0]
            for i in range(a.shape[0]):
                s = s + x
            return s
        """, [(np.ones(5, dtype=np.float32), 1e300), (np.ones(3000, dtype=np.float32), 0.1),
              (np.ones(5, dtype=np.float32), 3e38), (np.ones(5), 1e308), (np.ones(3000), 0.1)]),
    # a Python int with a float32 (NEP 50): NumPy makes it a double, then a float32 (two
    # roundings: 2**54 + 2**30 + 1 lands on another float32 than one rounding gives)
    program("adv_float32_plus_pyint", """
        @jit
        def f(x, n):
            return x + n, x + n < n, n - x, x * n
        """, [(np.float32(0.0), 2**54 + 2**30 + 1), (np.float32(1.5), 2**24 + 1),
              (np.float32(-2.0), -(2**62) - 2**37 - 1), (np.float32(3.0), 7)]),
    program("adv_mixed_float_npfloat", """
        @jit
        def f(a, x):
            s = x
            t = 0.0
            for i in range(a.shape[0]):
                s = s * 1.5 + a[i]
                t = t + s
            return s, t
        """, [(np.arange(3000.0), 0.0), (np.arange(3000.0), -0.0), (np.arange(3.0), 1e308),
              (np.arange(1500.0), 1.0), (np.arange(5.0), NAN)]),
    program("adv_dot_chunks_strided", """
        @jit
        def f(a, b):
            s = 0.0
            for i in range(a.shape[0]):
                s += a[i] * b[i]
            return s
        """, [(np.linspace(0, 1, 6001)[::2], np.linspace(1, 2, 3001)),
              (np.linspace(0, 1, 3001)[::-1], np.linspace(1, 2, 3001)),
              (np.full(2048, 1e154), np.full(2048, 1e154)),
              (np.full(2048, 1e200), np.full(2048, 1e200)),
              (np.full(2048, 1e200), np.full(2048, -1e200))]),
    program("adv_huge_dims_empty", """
        @jit
        def f(a):
            n = a.shape[0]
            m = a.shape[1]
            return n * n + m * m * m, n * m, a.size
        """, [(np.zeros((5, 3)),), (np.zeros((2**31, 0)),), (np.zeros((0, 2**32)),),
              (np.zeros((2**33, 0)),), (np.zeros((7, 2)),), (np.zeros((2**30 - 1, 0)),),
              (np.zeros((0, 2**30)),)]),
    program("adv_huge_dims_loop", """
        @jit
        def f(a, k):
            n = len(a)
            s = 0
            for i in range(k):
                s += (n - i) * (n + i)
            return s
        """, [(np.zeros((5, 0)), 3), (np.zeros((2**31, 0)), 3000), (np.zeros((2**32, 0)), 3),
              (np.zeros((3, 0)), 2000)]),
    program("adv_nested_loop_acc", """
        @jit
        def f(a, m):
            s = 0.0
            for i in range(a.shape[0]):
                t = 1.0
                for k in range(m):
                    t *= a[i]
                s += t
            return s
        """, [(np.array([1.5, 2.0, 1e100]), 3), (np.array([1.0, 1.0001]), 3000), (np.array([2.0, -2.0]), 1100),
              (np.array([2.0, 0.0]), 1100)]),
    program("adv_diamond_untaken_overflow", """
        @jit
        def f(n, x):
            s = 0
            for i in range(n):
                if i < 5:
                    t = i * x
                else:
                    t = i + 1
                s += t
            return s
        """, [(10, 2**61), (10, 2**62), (3000, 3), (3000, 2**62), (4, 2**62), (10, -2**63)]),
    program("adv_diamond_np_untaken_warn", """
        @jit
        def f(a, b):
            s = 0.0
            for i in range(a.shape[0]):
                x = a[i]
                y = b[i]
                if x > 0.0:
                    t = x * y
                else:
                    t = x - y
                s += t
            return s
        """, [(np.array([1.0, -1.0, 2.0]), np.array([1.0, 1e308, 3.0])),
              (np.array([-1.0, 1e200, 2.0]), np.array([1.0, 1e200, 3.0])),
              (np.array([-1e308, 1.0]), np.array([1e308, 1.0])),
              (np.array([np.nan, 1.0]), np.array([1.0, 1.0])),
              (np.full(3000, 0.5), np.full(3000, 2.0))]),
    program("adv_diamond_collatz", """
        @jit
        def f(n, steps):
            c = 0
            for k in range(steps):
                if n % 2 == 0:
                    n = n // 2
                else:
                    n = 3 * n + 1
                c += n
            return n, c
        """, [(27, 200), (-7, 50), (2**61 + 1, 3), (2**62 - 1, 3), (6, 0), (97, 3000), (-2**62 - 1, 4)]),
    program("adv_diamond_types_differ", """
        @jit
        def f(n, x):
            s = 0.0
            for i in range(n):
                if i % 3 == 0:
                    t = i * 2.0
                else:
                    t = x * i
                s += t
            return s
        """, [(10, 0.5), (3000, 0.5), (10, 1e306), (10, 3), (5, True)]),
    program("adv_diamond_nested", """
        @jit
        def f(a, x):
            s = 0
            for i in range(a.shape[0]):
                v = a[i]
                if v > 0:
                    if v > 100:
                        t = v * x
                    else:
                        t = v + x
                else:
                    if v < -100:
                        t = v - x
                    else:
                        t = -v
                s += t
            return s
        """, [(np.array([1, 200, -300, -5, 0]), 3), (np.array([1, 200, -300, -5, 0]), 2**62),
              (np.array([1, 2, -3, -5, 0]), 2**62), (np.array([1, 100], dtype=np.int8), 2),
              (np.array([-128, 127], dtype=np.int8), 1), (np.array([1.5, 200.0, -300.0, np.nan]), 3)]),
    program("adv_diamond_int8_wrap_arm", """
        @jit
        def f(a):
            s = a[0]
            for i in range(a.shape[0]):
                v = a[i]
                if v > 50:
                    s = s + v
                else:
                    s = s - v
            return s
        """, [(np.array([10, 20, 30], dtype=np.int8),), (np.array([100, 60, 70], dtype=np.int8),),
              (np.array([-100, -60, 70], dtype=np.int8),), (np.array([100, 60, 70], dtype=np.uint8),),
              (np.array([1, 2, 3], dtype=np.uint8),)]),
    program("adv_diamond_neg_zero", """
        @jit
        def f(a):
            m = 0.0
            for i in range(a.shape[0]):
                v = a[i]
                if v < m:
                    m = v
                else:
                    m = m * 1.0
            return m
        """, [(np.array([0.0, -0.0, 1.0]),), (np.array([-0.0, 0.0]),), (np.array([np.nan, -1.0]),),
              (np.array([-np.inf, np.nan]),), (np.array([3.0, -1.0, -1.0]),)]),
    program("adv_diamond_ifexp_min", """
        @jit
        def f(a, b):
            s = 0
            for i in range(len(a)):
                x = a[i]
                y = b[i]
                s += x if x < y else y * 2
            return s
        """, [(np.arange(10), np.arange(10)[::-1].copy()), (np.array([2**62, 0]), np.array([2**62, 2**62])),
              (np.array([2**62, 0]), np.array([0, 2**62])), (np.array([1.0, np.nan]), np.array([np.nan, 1.0]))]),
    program("adv_diamond_bool_ops", """
        @jit
        def f(n, m):
            c = 0
            for i in range(n):
                if (i & m) == 0:
                    c = c ^ i
                else:
                    c = ~c | i
            return c
        """, [(100, 3), (3000, 5), (0, 1), (1025, -1)]),
    program("adv_diamond_floordiv_const", """
        @jit
        def f(n, d):
            s = 0
            for i in range(-n, n):
                if i % 2 == 0:
                    s += i // 3 + i % 7
                else:
                    s += i // d
            return s
        """, [(10, 3), (10, -3), (10, 0), (2000, 7)]),
    program("adv_acc_as_divisor", """
        @jit
        def f(a, s):
            for i in range(a.shape[0]):
                s = a[i] / s
            return s
        """, [(np.array([1.0, 1.0, 1.0]), 1e-320), (np.array([1.0, 1.0, 2.0]), np.float64(1e-320)),
              (np.array([1.0, 2.0, 3.0]), 2.0), (np.full(3000, 1.5), 0.5)]),
    program("adv_acc_reciprocal_np", """
        @jit
        def f(a):
            s = a[0]
            for i in range(1, a.shape[0]):
                s = 1.0 / s + a[i]
            return s
        """, [(np.array([1e-320, 0.0, 0.0]),), (np.array([0.0, 1.0]),), (np.array([2.0, 1.0, 1.0]),)]),
    program("adv_callee_inlined_raises", """
        @jit
        def g(x, y):
            return x // y + x % y

        @jit
        def f(a, d):
            s = 0
            for i in range(a.shape[0]):
                s += g(a[i], d)
            return s
        """, [(np.arange(10), 3), (np.arange(10), 0), (np.arange(10), -3), (np.arange(10.0), 0.0),
              (np.arange(10.0), -0.0), (np.arange(10, dtype=np.int8), 3)]),
    program("adv_callee_inlined_int_float", """
        @jit
        def g(x, y):
            return x * y + 1

        @jit
        def f(n, y):
            s = 0
            for i in range(n):
                s += g(i, y)
            return s
        """, [(10, 2), (10, 2.5), (10, 2**60), (3000, 3), (10, True), (10, 2**62), (10, INF),
              (10, np.float64(1e308)), (10, np.int64(2**62))]),
    program("adv_callee_inlined_warn_overflow", """
        @jit
        def sq(x):
            return x * x

        @jit
        def f(a):
            out = 0.0
            for i in range(a.shape[0]):
                out += sq(a[i]) - sq(a[i])
            return out
        """, [(np.array([1.0, 2.0]),), (np.array([1.0, 1e200]),), (np.array([1, 2**40], dtype=np.int64),),
              (np.array([1, 100], dtype=np.int8),), (np.array([np.nan]),)]),
    program("adv_callee_inlined_math", """
        import math

        @jit
        def g(x):
            return math.sqrt(x) + math.exp(x) + math.log(x + 1.0)

        @jit
        def f(a):
            s = 0.0
            for i in range(a.shape[0]):
                s += g(a[i])
            return s
        """, [(np.array([0.0, 1.0, 2.0]),), (np.array([1.0, -4.0]),), (np.array([1.0, 800.0]),),
              (np.array([1.0, -1.0]),), (np.array([np.inf]),), (np.array([np.nan]),)]),
    program("adv_callee_inlined_index", """
        @jit
        def at(a, i, j):
            return a[i * 2 + j]

        @jit
        def f(a, n):
            s = 0.0
            for i in range(n):
                s += at(a, i, 1) - at(a, i, -1)
            return s
        """, [(np.arange(10.0), 4), (np.arange(10.0), 5), (np.arange(10.0), 6), (np.arange(10), 5),
              (np.arange(10.0), 0)]),
    program("adv_callee_inlined_tuple", """
        @jit
        def dm(x, y):
            return x // y, x % y

        @jit
        def f(n, d):
            s = 0
            for i in range(-n, n):
                q, r = dm(i, d)
                s += q * 10 + r
            return s
        """, [(10, 3), (10, -4), (10, 0), (2000, 7), (10, 2.5)]),
    program("adv_recursion_overflow_depth", """
        @jit
        def f(n):
            if n <= 1:
                return 1
            return n * f(n - 1)
        """, [(5,), (20,), (21,), (25,), (0,), (-3,), (20,)]),
    program("adv_recursion_fib_float", """
        @jit
        def f(n):
            if n < 2:
                return n
            return f(n - 1) + f(n - 2)
        """, [(10,), (20,), (1.5,), (-1,), (True,), (12,), (15,)]),
    program("adv_recursion_raises_deep", """
        @jit
        def f(n, d):
            if n == 0:
                return 100 // d
            return f(n - 1, d - 1) + 1
        """, [(3, 5), (3, 3), (5, 5), (10, 3), (2, 2)]),
    program("adv_mutual_recursion", """
        @jit
        def even(n):
            if n == 0:
                return True
            return odd(n - 1)

        @jit
        def odd(n):
            if n == 0:
                return False
            return even(n - 1)

        @jit
        def f(n):
            return even(n), odd(n)
        """, [(10,), (7,), (0,), (100,)]),
    program("adv_recursion_accumulates_overflow", """
        @jit
        def f(n, acc):
            if n == 0:
                return acc
            return f(n - 1, acc * 3 + n)
        """, [(5, 1), (39, 1), (40, 1), (45, 1), (10, 2**60), (10, 1.5)]),
    program("adv_recursion_np_float_warn", """
        @jit
        def f(x, n):
            if n == 0:
                return x
            return f(x * x, n - 1)
        """, [(np.float64(2.0), 3), (np.float64(10.0), 12), (np.float32(10.0), 6), (np.int8(3), 3),
              (np.float64(2.0), 3)]),
    program("adv_diamond_union_float_np", """
        @jit
        def f(a):
            s = 0.0
            last = 0.0
            for i in range(a.shape[0]):
                x = a[i]
                if x > 0.0:
                    t = x * 2.0
                else:
                    t = 1.5
                last = t
                s = s + t
            return s, last
        """, [(np.array([1.0, -1.0, 2.0]),), (np.array([1.0, 2.0, -2.0]),), (np.array([-1.0]),),
              (np.zeros(0),), (np.array([1e308, -1.0]),), (np.full(3000, -0.5),)]),
    program("adv_diamond_returns_last_type", """
        @jit
        def f(a, k):
            r = 0.0
            for i in range(a.shape[0]):
                x = a[i]
                if i == k:
                    r = x
                else:
                    r = r + 0.0
            return r
        """, [(np.arange(4.0), 2), (np.arange(4.0), 3), (np.arange(4.0), 9), (np.arange(4.0, dtype=np.float32), 1)]),
    program("adv_while_wrapped_inner", """
        @jit
        def f(x, n):
            c = 0
            for i in range(n):
                x = x * 4
                y = x
                while y < 2**62:
                    y = y + 2**57
                    c += 1
            return x, c
        """, [(2**55, 2), (2**61, 1), (2**60, 2), (-2**61, 1)]),
    program("adv_while_counter_chunk", """
        @jit
        def f(n, m):
            i = 0
            s = 0
            while i < n:
                s += i % m
                i += 1
            return s, i
        """, [(1023, 7), (1025, 7), (3000, 7), (0, 7), (3000, 0), (5, -2)]),
    program("adv_while_two_back_edges", """
        @jit
        def f(n):
            i = 0
            s = 0.0
            while i < n:
                if i % 3 == 0:
                    i += 2
                    s += 1.5
                    continue
                i += 1
                s *= 1.0001
            return s, i
        """, [(10,), (3000,), (1024,), (-5,)]),
    program("adv_for_break_chunk", """
        @jit
        def f(a, x):
            idx = -1
            for i in range(a.shape[0]):
                if a[i] == x:
                    idx = i
                    break
            return idx
        """, [(np.arange(3000.0), 1023.0), (np.arange(3000.0), 1024.0), (np.arange(3000.0), 2999.0),
              (np.arange(3000.0), NAN), (np.arange(3000.0), -0.0), (np.arange(3000), 1025)]),
    program("adv_for_over_array_chunks", """
        @jit
        def f(a):
            s = 0
            m = a[0]
            for x in a:
                s += x
                if x > m:
                    m = x
            return s, m
        """, [(np.arange(3000, dtype=np.int32),), (np.arange(1025, dtype=np.int8),),
              (np.arange(2049, dtype=np.uint8),), (np.arange(3000.0)[::-1],), (np.full(3000, 2**53, dtype=np.int64),),
              (np.full(1025, 2**60, dtype=np.int64),)]),
    program("adv_range_negative_step_arrays", """
        @jit
        def f(a, start, stop, step):
            s = 0.0
            for i in range(start, stop, step):
                s = s * 0.5 + a[i]
            return s
        """, [(np.arange(3000.0), 2999, -1, -1), (np.arange(3000.0), 2999, -3001, -1),
              (np.arange(3000.0), -1, -3000, -2), (np.arange(3000.0), 0, 3000, 3), (np.arange(3000.0), 5, 2, 1),
              (np.arange(3000.0), 2998, 3000, 1), (np.arange(3000.0), 2998, 3001, 1)]),
    program("adv_range_hoisted_bounds_step", """
        @jit
        def f(a, n, c):
            s = 0
            for i in range(0, n, 2):
                s += a[3 * i + c]
                a[i] = s
            return s
        """, [(np.arange(100), 33, 1), (np.arange(100), 34, 1), (np.arange(100), 33, 3),
              (np.arange(100), 30, -1), (np.arange(100), 0, 1000)]),
    program("adv_nan_compare_selects", """
        @jit
        def f(a):
            lo = 1e308 * 10.0
            hi = -lo
            for i in range(a.shape[0]):
                x = a[i]
                lo = x if x < lo else lo
                hi = x if x > hi else hi
            return lo, hi
        """, [(np.array([1.0, np.nan, -1.0]),), (np.array([np.nan, 3.0]),), (np.array([-0.0, 0.0]),),
              (np.array([0.0, -0.0]),), (np.zeros(0),), (np.linspace(-1, 1, 3001),)]),
    program("adv_deopt_many_kinds_live", """
        @jit
        def f(a, b, c, t, flag, k):
            x32 = a[0]
            i8 = b[0]
            u = c[0]
            s = x32 * 0
            acc = 1
            for i in range(k):
                acc = acc * 1000
                s = s + x32
            p = (t[0] + 1, t[1] * 2.0)
            return x32, i8, u, s, acc, p, flag
        """, [(np.ones(2, np.float32), np.ones(2, np.int8), np.ones(2, np.uint64), (1, 2.0), True, 3),
              (np.ones(2, np.float32), np.ones(2, np.int8), np.ones(2, np.uint64), (1, 2.0), False, 7),
              (np.ones(2, np.float32), np.array([-128, 5], np.int8), np.array([2**64 - 1, 0], np.uint64), (2**62, -0.0), True, 6)]),
    program("adv_deopt_mid_block_live_np", """
        @jit
        def f(a, b, y):
            p = a[0] * a[1]
            q = b[0] + b[1]
            r = p * y
            a[0] = r
            b[1] = q
            return p, q, r, a[0] // b[0]
        """, [(np.array([2.0, 3.0], np.float32), np.array([1, 2], np.int16), 2.0),
              (np.array([2.0, 3.0], np.float32), np.array([30000, 2767], np.int16), 2.0),
              (np.array([2.0, 3e38], np.float32), np.array([1, 2], np.int16), 2.0),
              (np.array([2.0, 3.0], np.float32), np.array([0, 2], np.int16), 1e300),
              (np.array([2.0, 3.0], np.float32), np.array([0, 2], np.int16), 2.0)]),
    program("adv_bool_array_stores", """
        @jit
        def f(m, a, y):
            c = 0
            for i in range(a.shape[0]):
                m[i] = a[i] > y
                c += m[i]
                c = c * 3
            return c
        """, [(np.zeros(4, np.bool_), np.arange(4.0), 1.5), (np.zeros(50, np.bool_), np.arange(50.0), -1.0),
              (np.zeros(4, np.bool_), np.array([np.nan, 1.0, 2.0, 3.0]), 0.0)]),
    program("adv_complex_array_undo", """
        @jit
        def f(a, y):
            for i in range(a.shape[0]):
                a[i] = a[i] * y
                a[i] = a[i] + 1j
            return a
        """, [(np.ones(3, np.complex128), 2.0), (np.ones(3, np.complex128), 1e308 * 1j),
              (np.array([1 + 1j, 1e300 + 0j]), 1e10)]),
]
