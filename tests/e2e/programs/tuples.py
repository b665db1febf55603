"""Tuple packing and unpacking, nested tuple returns, iteration and indexing of tuples."""

import numpy as np

from ..harness import program
from .values import I64_MAX, NAN, each

PROGRAMS = [
    program("tup_swap", """
        @jit
        def f(a, b):
            a, b = b, a
            return a, b
        """, [(1, 2.5), (True, None), (-0.0, 2**70)]),
    program("tup_nested_return", """
        @jit
        def f(x):
            return ((x, x + 1), (x * 2.0, (x > 0, -x)), ())
        """, each(1, -0.0, NAN, True, I64_MAX)),
    program("tup_unpack_from_call", """
        @jit
        def pair(x):
            return x // 3, x % 3

        @jit
        def f(x):
            q, r = pair(x)
            (a, b), c = pair(q), r
            return a, b, c
        """, each(100, -100, 7.5, 2**70)),
    program("tup_iterate", """
        @jit
        def f(x):
            s = 0
            for v in (1, 2.5, True, x, -x):
                s = s + v
            return s
        """, each(1, 0.5, False, 2**64)),
    program("tup_arg", """
        @jit
        def f(t):
            a, b, c = t
            return c, b, a, len(t), t[0], t[-1]
        """, [((1, 2.5, True),), ((None, (1, 2), -0.0),)]),
    program("tup_unpack_wrong_len", """
        @jit
        def f(t):
            a, b = t
            return a + b
        """, [((1, 2),), ((1, 2, 3),), ((1,),), ((),)]),
    # with a loop: a cold call runs the untyped, counting tier 0, which must unpack as CPython
    program("tup_unpack_wrong_len_with_a_loop", """
        @jit
        def f(n, t):
            s = 0
            for i in range(n):
                s += i
            a, (b, c) = t
            return s, a, b, c
        """, [(3, (1, (2, 3))), (3, (1, (2, 3), 4)), (3, (1,)), (2, (1, 2)), (2, (1, (2,))),
              (2, (1, (2, 3, 4))), (1, ((), np.array([4.5, 5.5]))), (1, ((), [6, 7]))]),
    program("tup_index", """
        @jit
        def f(t, i):
            return t[i]
        """, [((1, 2, 3), 0), ((1, 2, 3), -1), ((1, 2, 3), 3), ((1, 2, 3), -4), ((), 0),
              ((1.5, 2.5), True)]),
    program("tup_compare", """
        @jit
        def f(a, b):
            return a == b, a != b, a < b
        """, [((1, 2), (1, 2)), ((1, 2), (1, 3)), ((1, 2.0), (1, 2)), ((NAN,), (NAN,)),
              ((1,), (1, 0))]),
    program("tup_fib_pairs", """
        @jit
        def f(n):
            a, b, c = 0, 1, 0
            for i in range(n):
                a, b, c = b, a + b, c + i
            return (a, b), c
        """, each(0, 10, 100)),
    program("tup_empty_and_single", """
        @jit
        def f(x):
            return (), (x,), ((x,),)
        """, each(1, 2.5)),
]
