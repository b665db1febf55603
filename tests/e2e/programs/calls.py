"""Calls between jitted functions: helpers, recursion, mutual recursion, exceptions."""

import numpy as np

from ..harness import Call, program
from .values import I64_MAX, NAN, each

PROGRAMS = [
    # names in generated code: LLVM's symbols are ASCII, tier 0's names identifiers
    program("call_names_not_ascii_or_not_identifiers", """
        @jit
        def größe(x):
            return x * 2

        @jit
        def g(x):
            return x + 1

        g.__name__ = "g (v2)"

        @jit
        def f(x):
            return größe(g(x)) + 1
        """, each(3, 2**62, -2**62, 1.5)),
    program("call_helper", """
        @jit
        def sq(x):
            return x * x

        @jit
        def f(x):
            return sq(x) + sq(x + 1), sq(sq(x))
        """, each(3, -2.5, 3037000500, True, 1j, NAN)),
    program("call_fact_recursive", """
        @jit
        def f(n):
            if n <= 1:
                return 1
            return n * f(n - 1)
        """, each(0, 1, 20, 21, 30, 5.0)),
    program("call_fib_recursive", """
        @jit
        def f(n):
            if n < 2:
                return n
            return f(n - 1) + f(n - 2)
        """, each(0, 1, 15, 20)),
    program("call_mutual_recursion", """
        @jit
        def is_even(n):
            if n == 0:
                return True
            return is_odd(n - 1)

        @jit
        def is_odd(n):
            if n == 0:
                return False
            return is_even(n - 1)

        @jit
        def f(n):
            return is_even(n), is_odd(n)
        """, each(0, 1, 10, 77, 300)),
    program("call_ackermann", """
        @jit
        def ack(m, n):
            if m == 0:
                return n + 1
            if n == 0:
                return ack(m - 1, 1)
            return ack(m - 1, ack(m, n - 1))

        @jit
        def f(m, n):
            return ack(m, n)
        """, [(0, 0), (1, 2), (2, 3), (3, 3)]),
    program("call_exception_propagates", """
        @jit
        def inner(x):
            if x > 10:
                raise ValueError("too big")
            return 10 // x

        @jit
        def f(x):
            return inner(x) + 1
        """, each(5, 0, 11, -3, 2.0)),
    program("call_polymorphic_callee", """
        @jit
        def g(x):
            return x * 2

        @jit
        def f(n):
            return g(1), g(1.5), g(True), g(n), g(-0.0)
        """, each(1, I64_MAX, 0.5)),
    program("call_chain", """
        @jit
        def a(x):
            return b(x) + 1

        @jit
        def b(x):
            return c(x) * 2

        @jit
        def c(x):
            return x - 3

        @jit
        def f(x):
            return a(x), b(x), c(x)
        """, each(0, 10, 2**62, -2.5)),
    program("call_recursion_sum_list", """
        @jit
        def total(n, acc):
            if n == 0:
                return acc
            return total(n - 1, acc + n * n)

        @jit
        def f(n):
            return total(n, 0)
        """, each(0, 10, 300)),
    program("call_returns_tuple", """
        @jit
        def minmax(a, b):
            if a < b:
                return a, b
            return b, a

        @jit
        def f(a, b, c):
            lo, hi = minmax(a, b)
            lo2, hi2 = minmax(lo, c)
            return lo2, max(hi, hi2)
        """, [(1, 2, 3), (3, 2, 1), (2.5, -1, 7), (NAN, 1, 2)]),
    program("call_callee_writes_array", """
        import numpy as np

        @jit
        def fill(a, v):
            for i in range(len(a)):
                a[i] = v + i

        @jit
        def f(a, v):
            fill(a, v)
            return a[0] + a[-1]
        """, [(np.zeros(4), 1.5), (np.zeros(3, np.int32), 7), (np.zeros(2, np.int8), 126)]),
    program("call_signature_forms", """
        @jit
        def scale(x, k=3):
            return x * k

        @jit
        def f(a, b=2.5, c=None):
            if c is None:
                c = -1
            return scale(a) + scale(b, 2) + c
        """, [(1,), (1, 2), (1, 2, 3), Call((1,), {"c": 10}), Call((), {"a": 2.5, "b": 1}),
              Call((1,), {"b": 1, "c": 0.5}), Call((1,), {"d": 1}), (), (1, 2, 3, 4),
              Call((1,), {"a": 2})]),
    # Pure one-block callees are generated inside their caller (backends/llvm/inline.py):
    # their guards replay the whole call in tier 0, so every way out must stay CPython's.
    program("call_inline_loop", """
        import numpy as np

        @jit
        def term(i, j):
            return 1.0 / ((i + j) * (i + j + 1) // 2 + i + 1)

        @jit
        def f(u):
            n = u.shape[0]
            s = 0.0
            for i in range(n):
                for j in range(n):
                    s += term(i, j) * u[j]
            return s
        """, [(np.ones(5),), (np.zeros(0),), (np.array([1.0, np.inf, 2.0]),),
              (np.array([1e308, 1e308]),), (np.arange(4, dtype=np.int64),)]),
    program("call_inline_raises", """
        @jit
        def inv(i, k):
            return 1.0 / (i - k)

        @jit
        def f(n, k):
            s = 0.0
            for i in range(n):
                s += inv(i, k)
            return s
        """, [(5, 9), (5, 3), (5, 0), (0, 0), (5, 2.5)]),
    program("call_inline_overflow", """
        @jit
        def big(i, m):
            return i * m + 1

        @jit
        def f(n, m):
            t = 0
            for i in range(n):
                t += big(i, m)
            return t
        """, [(4, 3), (4, 2 ** 62), (3, -2 ** 63), (5, 2 ** 61)]),
    program("call_inline_store", """
        import math

        @jit
        def root(x):
            return math.sqrt(x) + 1.0

        @jit
        def f(a, out):
            for i in range(a.shape[0]):
                out[i] = root(a[i])
            return out
        """, [(np.array([4.0, 9.0, 16.0]), np.zeros(3)),
              (np.array([4.0, -1.0, 16.0]), np.zeros(3)),
              (np.array([1, 2, 3]), np.zeros(3, np.float32))]),
    program("call_store_into_returned_arrays", """
        import numpy as np

        @jit
        def make(n, x):
            a = np.zeros(n)
            return a, (np.ones(n), x), None

        @jit
        def f(n, x):
            a, (b, y), _ = make(n, x)
            a[1] = y
            b[-1] = a[1] * 2
            return a, b
        """, [(3, 2.5), (2, -1.0), (1, 0.5)]),
    program("call_recursion_prefix_overflows", """
        @jit
        def f(n, k):
            if n < 0 or n + k < 3:
                return n * 2
            return f(n - 1, k) + 1
        """, [(10, 0), (10, I64_MAX), (6, -I64_MAX), (3, -I64_MAX - 1), (40, -5)]),
    program("call_recursion_returns_pairs", """
        @jit
        def f(n):
            if n < 2:
                return n, 1
            a, b = f(n - 1)
            c, d = f(n - 2)
            return a + c, b + d
        """, each(0, 1, 12, 18, 2.5)),
    program("call_recursion_several_base_cases", """
        @jit
        def f(n):
            if n <= 0:
                return 0
            if n == 1:
                return 1 if n > 0 else -1
            return f(n - 1) + f(n - 3) * 2
        """, each(-3, 0, 1, 2, 17, 22)),
    program("call_recursion_over_array", """
        @jit
        def f(a, i):
            if i >= len(a):
                return 0.0
            return a[i] + f(a, i + 1)
        """, [lambda: (np.arange(50.0), 0), lambda: (np.arange(7.0), -3),
              lambda: (np.zeros(0), 0), lambda: (np.arange(5.0), 9)]),
    program("call_recursion_float_base_case", """
        @jit
        def f(x):
            if x <= 0.5:
                return x * 3.0
            return f(x - 1.0) + f(x - 0.5)
        """, each(3.7, -0.0, 0.5, 6.25, 4)),
    # baseline code inlines a small recursion into itself, two levels (passes/inline_self.py):
    # guards fail, and exceptions are raised, inside the copies, after writes made by them
    program("call_recursion_inlined_deopts", """
        @jit
        def f(a, n, x):
            if n == 0:
                return x
            a[n * 2 - 10] = n
            return f(a, n - 1, x * 1000003) + a[n * 2 - 10]
        """, [lambda: (np.zeros(6, dtype=np.int64), 5, 1),
              lambda: (np.zeros(10, dtype=np.int64), 4, 3),
              lambda: (np.zeros(10, dtype=np.int64), 2, 5),
              lambda: (np.zeros(10, dtype=np.int64), 3, 2**62),
              lambda: (np.zeros(10), 4, 0.5)]),
    program("call_recursion_inlined_raises", """
        @jit
        def f(n, d):
            if n == 0:
                return 100 // d
            return f(n - 1, d - 1) * 2 + n
        """, [(2, 2), (1, 1), (3, 10), (5, 3), (9, 2), (4, 4.0)]),
    # a recursive core embedded twice in one module (by the bool specialisation, directly
    # and inside the float one's code): its twins are renamed with it
    program("call_recursion_changing_types", """
        @jit
        def f(n):
            if n < 1:
                return 1.0
            if n % 2 == 1:
                return f(n - 1) * 2.0
            return f(n / 2) + f(n - 1.5)
        """, each(True, 0, 1, 4, 9, 10.0, 7.5)),
    program("call_recursion_three_calls", """
        @jit
        def f(n):
            if n < 3:
                return 1 if n > 0 else 0
            return f(n - 1) + f(n - 2) + f(n - 3)
        """, each(0, 1, 2, 10, 18, 2.0)),
]
