"""Functions the compiler may not handle, and arguments it does not expect: they still run,
and behave exactly as under CPython. (The harness does not care which path ran.)"""

import numpy as np

from ..harness import program

PROGRAMS = [
    program("fb_foreign_argument_types", """
        @jit
        def f(a, b):
            return a + b, a * 2
        """, [(1, 2), ("ab", "cd"), ((1, 2), (3,)), ([1], [2.5]), (1, "x"), (None, 1),
              (np.arange(3), 1)]),
    # a recursion CPython runs 700 deep: its calls go straight (runtime/straight.py), so
    # it runs as deep under every tier, cold or not
    program("fb_deep_recursion", """
        @jit
        def f(n):
            d = {"k": 1}
            if n == 0:
                return 0
            return d["k"] + f(n - 1)
        """, [(10,), (700,), (700,), (0,)]),
    # the same with a loop, compiled or not: it goes straight in sections (the calls nested
    # 8 deep in its own calls), whose first levels keep the cold calls' treatment (400 deep:
    # tier "interp" runs tier 0 through the dispatcher, two levels a call)
    program("fb_deep_recursion_with_loops", """
        @jit
        def f(n, m):
            t = 0
            for i in range(m):
                t += i
            if n == 0:
                return t
            return t + f(n - 1, m)

        @jit
        def g(n):
            d = {"k": 1}
            t = 0
            for i in range(2):
                t += d["k"]
            return t if n == 0 else t + g(n - 1)

        def main(n):
            return f(n, 3), g(n)
        """, [(10,), (400,), (400,), (0,), (400,)], entry="main"),
    program("fb_try_except", """
        @jit
        def f(x):
            try:
                return 10 // x
            except ZeroDivisionError:
                return -1
            finally:
                x = 0
        """, [(3,), (0,), (2.5,)]),
    program("fb_list_and_comprehension", """
        @jit
        def f(n):
            squares = [i * i for i in range(n)]
            return sum(squares), len(squares)
        """, [(0,), (10,), (2**0,)]),
    program("fb_calls_plain_python", """
        def helper(x):
            return x * 3

        @jit
        def f(x):
            return helper(x) + 1
        """, [(1,), (2.5,), (2**70,)]),
    program("fb_string_formatting", """
        @jit
        def f(x):
            if x < 0:
                raise ValueError(f"negative: {x}")
            return str(x) + "!"
        """, [(1,), (-2,), (-0.5,)]),
    program("fb_closure_and_lambda", """
        @jit
        def f(x):
            g = lambda y: y + x
            return g(1) + g(2)
        """, [(1,), (0.5,)]),
    program("fb_dict_and_global", """
        TABLE = {1: 10, 2: 20}

        @jit
        def f(k):
            return TABLE.get(k, -1)
        """, [(1,), (3,), (2.0,)]),
    program("fb_global_rebound_by_the_module", """
        SCALE = 1

        @jit
        def bump(x):
            return x * SCALE + 1

        def f(n):
            global SCALE
            total = 0
            for i in range(n):
                SCALE = i % 3
                total += bump(i)
            return total
        """, [(0,), (1,), (30,)]),
    program("fb_closure_variable_rebound", """
        def f(n):
            k = 0

            @jit
            def scaled(x):
                return x * k

            total = 0
            for i in range(n):
                k = i
                total += scaled(10)
            return total
        """, [(0,), (1,), (5,)]),
    program("fb_partial_support_mixed", """
        @jit
        def g(x):
            return x * 2

        @jit
        def f(xs):
            total = 0
            for x in xs:
                total += g(x)
            return total
        """, [((1, 2, 3),), ([1.5, 2.5],), (range(5),), (np.arange(4.0),)]),
]
