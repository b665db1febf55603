"""Arithmetic on whole arrays (a - b, 2.0 * a, a > 0, -a) and augmented assignments (`a += b`
changes the array in place, as every reference sees; `x += v` on a list extends it): NumPy's
results, broadcasting and errors."""

import numpy as np

from ..harness import program


def _f(*xs):
    return np.array(xs, dtype=np.float64)


PROGRAMS = [
    program("aa_elementwise", """
        @jit
        def f(a, b):
            d = a - b
            s = 0.0
            for x in d * 2.0:
                s += x
            return s, (d > 0).sum(), (-a).max()
        """, [(_f(1.0, 2.5, -3.0), _f(0.5, 0.5, 0.5)), (np.arange(4), np.arange(4) * 2),
              (np.arange(6.0).reshape(2, 3), _f(1.0, 2.0, 3.0)), (_f(1.0, 2.0), _f(1.0, 2.0, 3.0)),
              (np.arange(1500.0), 3.0), (np.array([100, 120], dtype=np.int8), np.int8(100))]),
    program("aa_in_place", """
        @jit
        def f(a, b):
            a += b
            c = a
            c *= 2
            a -= 1
            return a, c
        """, [lambda: (np.arange(5.0), np.ones(5)), lambda: (np.arange(3), 2),
              lambda: (np.arange(3), 1.5), lambda: (np.ones((2, 2)), _f(1.0, 2.0)),
              lambda: (np.arange(3.0), np.ones(2)), lambda: (np.zeros(3, dtype=np.int8), 200)]),
    program("aa_in_place_in_a_loop", """
        @jit
        def f(acc, rows, n):
            for i in range(n):
                acc += rows * i
            total = 0.0
            for x in acc:
                total += x
            return total
        """, [lambda: (np.zeros(4), _f(1.0, 2.0, 3.0, 4.0), 50),
              lambda: (np.zeros(3, dtype=np.int64), np.arange(3), 1200)]),
    program("aa_list_extended_in_place", """
        @jit
        def f(n, x, v):
            for i in range(n):
                x += v
            return len(x)
        """, [lambda: (3, [1], [2]), lambda: (2, (1,), (2, 3)), lambda: (4, 1.5, 2)]),
    program("aa_scalar_results", """
        @jit
        def f(a, k):
            m = a * k
            return m.sum(), (a == a).all(), (a / k)[0] if len(a) else 0.0
        """, [(_f(1.0, -0.0, 3.5), 2.0), (np.arange(4), 0), (_f(1.0, 2.0), 0.0), (np.zeros(0), 1)]),
]
