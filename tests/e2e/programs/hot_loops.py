"""Long loops in one call: where on-stack replacement happens, and guards fail mid-loop.

Each program runs tens of thousands of iterations and then meets what the earlier iterations
never showed: an int past 64 bits, a type change, a zero divisor, an index out of bounds, a
NaN. The state at that moment -- accumulators, loop variables, array writes so far -- must
carry over exactly into the slower code that finishes the job.
"""

import numpy as np

from ..harness import program
from .values import NAN

PROGRAMS = [
    program("hot_sum_cubes_overflows", """
        @jit
        def f(n):
            s = 0
            for i in range(n):
                s += i * i * i
            return s
        """, [(1000,), (80000,), (120000,)]),
    program("hot_type_changes_mid_loop", """
        @jit
        def f(n, k):
            x = 0
            for i in range(n):
                if i == k:
                    x = x + 0.5
                x += i
            return x
        """, [(60000, 59990), (60000, -1), (60000, 0)]),
    program("hot_late_zero_divisor", """
        @jit
        def f(n, k):
            s = 0
            for i in range(n):
                s += 1000003 // (k - i)
            return s
        """, [(50000, 49000), (50000, 60000), (50000, -1)]),
    program("hot_array_scan_then_oob", """
        @jit
        def f(a, extra):
            s = 0.0
            for i in range(len(a) + extra):
                a[i] = a[i] * 2.0 + 1.0
                s += a[i]
            return s
        """, [(np.linspace(-1.0, 1.0, 40000), 0), (np.linspace(-1.0, 1.0, 40000), 1),
              (np.linspace(-1.0, 1.0, 40001)[::-2], 1)]),
    program("hot_int_array_wraps", """
        @jit
        def f(a):
            s = 0
            for i in range(len(a)):
                s += a[i]
                a[i] = s
            return s
        """, [(np.arange(50000, dtype=np.int32),), (np.full(50000, 2**40, dtype=np.int64),),
              (np.full(30000, 2**59, dtype=np.int64),)]),
    program("hot_nan_appears", """
        import math

        @jit
        def f(a):
            best = -math.inf
            count = 0
            for x in a:
                if x > best:
                    best = x
                    count += 1
            return best, count, math.sqrt(best)
        """, [(np.linspace(0.0, 5.0, 30000),), (np.append(np.linspace(0.0, 5.0, 30000), NAN),),
              (np.append(np.linspace(0.0, 5.0, 30000), -7.0)[::-1],)]),
    program("hot_while_counter_big", """
        @jit
        def f(start, n):
            i = start
            steps = 0
            while steps < n:
                i += 3
                steps += 1
            return i, steps
        """, [(0, 50000), (2**63 - 75000, 50000), (-(2**63) - 1, 40000)]),
    program("hot_nested_2d", """
        @jit
        def f(a):
            s = 0
            for i in range(a.shape[0]):
                for j in range(a.shape[1]):
                    s += a[i, j] * (i - j)
            return s
        """, [(np.arange(40000, dtype=np.int64).reshape(200, 200),),
              (np.arange(40000, dtype=np.int64).reshape(200, 200).T * 2**40,),
              (np.ones((150, 300))[:, ::2],)]),
]
