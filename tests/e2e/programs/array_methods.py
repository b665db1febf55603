"""Array methods (a.sum(), a.max(), out.fill(x) ...) and NumPy's functions of arrays (np.sum,
np.dot, np.sqrt of an array ...): NumPy's results, types and errors, over dtypes, ranks, layouts
and empty arrays, with axes and other int arguments, inside loops too."""

import numpy as np

from ..harness import program
from .values import NAN, each


def _grid(dtype, *shape):
    return (np.arange(int(np.prod(shape))) - 3).astype(dtype).reshape(shape)


ARRAYS = (np.array([3.0, -1.5, 2.0, 7.25]), np.array([NAN, 1.0]), _grid(np.int8, 5),
          np.array([200, 100, 7], dtype=np.uint8), _grid(np.float32, 2, 3),
          np.asfortranarray(_grid(np.float64, 3, 2)), _grid(np.int64, 8)[::3],
          np.array([True, False, True]), np.array([2**62, 2**62], dtype=np.int64))

PROGRAMS = [
    program("am_reductions", """
        @jit
        def f(a):
            return (a.sum(), a.prod(), a.min(), a.max(), a.mean(), a.std(), a.var(),
                    a.argmin(), a.argmax(), a.any(), a.all())
        """, each(*ARRAYS)),
    program("am_trace", """
        @jit
        def f(a):
            return a.trace(), a.sum()
        """, each(_grid(np.float32, 2, 3), np.asfortranarray(_grid(np.int8, 3, 3)),
                  _grid(np.float64, 4), _grid(np.int64, 2, 2, 2))),
    program("am_empty", """
        @jit
        def f(a):
            return a.sum(), a.prod(), a.any(), a.all(), a.mean(), a.max()
        """, each(np.zeros(0), np.zeros(0, dtype=np.int8), np.zeros((0, 3)))),
    program("am_axes_and_arguments", """
        @jit
        def f(a, k):
            return a.sum(k), a.max(k), a.cumsum(k), a.round(k + 1), a.clip(k, 2), a.dot(2)
        """, [(_grid(np.float64, 2, 3), 0), (_grid(np.float64, 2, 3), 1), (_grid(np.int8, 4), 0),
              (_grid(np.float64, 2, 3), 2), (_grid(np.float64, 2, 3), -1)]),
    program("am_new_arrays", """
        @jit
        def f(a):
            c = a.copy()
            c[0] = 9
            fl = a.flatten()
            return c, fl, a.cumprod(), a
        """, each(*ARRAYS[:7])),
    program("am_fill_and_item", """
        @jit
        def f(out, x):
            out.fill(x)
            return out.item(0), out.sum()
        """, [lambda: (np.zeros(4), 1.5), lambda: (np.zeros(3, dtype=np.int32), 2.75),
              lambda: (np.zeros(3, dtype=np.int8), 300), lambda: (np.zeros(2, dtype=np.int8), NAN),
              lambda: (np.zeros((2, 2)), -1), lambda: (np.zeros(0), 1.0)]),
    program("am_in_a_loop", """
        @jit
        def f(a):
            t = 0.0
            total = a.sum()
            for i in range(len(a)):
                t += a[i] / total + a.max()
            return t, total
        """, each(np.arange(1.0, 1200.0), np.zeros(3), np.array([1.0, -1.0]))),
    program("am_normalise", """
        @jit
        def f(a, out):
            lo = a.min()
            span = a.max() - lo
            for i in range(len(a)):
                out[i] = (a[i] - lo) / span
            return out.mean()
        """, [lambda: (np.arange(5.0), np.zeros(5)), lambda: (np.ones(3), np.zeros(3)),
              lambda: (np.arange(1500.0)[::-1].copy(), np.zeros(1500))]),
    program("np_functions_of_arrays", """
        import numpy as np
        @jit
        def f(a):
            return (np.sum(a), np.mean(a), np.max(a), np.argmin(a), np.count_nonzero(a),
                    np.median(a), np.nansum(a), np.dot(a, a), np.any(a))
        """, each(*ARRAYS[:4], ARRAYS[6], np.zeros(0))),
    program("np_array_results", """
        import numpy as np
        @jit
        def f(a, b):
            r = np.sqrt(np.abs(a))
            m = np.maximum(a, b)
            c = np.cumsum(a)
            s = 0.0
            for i in range(len(r)):
                s += r[i] * m[i] - c[i]
            return s, np.outer(a, a).sum(), np.clip(a, -1, 1)
        """, [(np.array([3.0, -1.5, 2.0]), 0.5), (np.arange(1200.0) - 600.0, -1.0),
              (np.zeros(0), 1.0), (_grid(np.int8, 5), 2)]),
    program("np_dot_loop", """
        import numpy as np
        @jit
        def f(m, v, out):
            for i in range(m.shape[0]):
                out[i] = np.dot(m[i, 0] * v, v)
            return out
        """, [lambda: (_grid(np.float64, 3, 2), np.arange(4.0), np.zeros(3)),
              lambda: (_grid(np.int64, 2, 2), np.arange(3), np.zeros(2, dtype=np.int64))]),
]

