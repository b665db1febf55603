"""if/elif/else, while, for, break/continue, loop else, early returns, assert and raise."""

import numpy as np

from ..harness import program
from .values import I64_MAX, I64_MIN, INF, NAN, each

PROGRAMS = [
    program("cf_classify", """
        @jit
        def f(x):
            if x < 0:
                return -1
            elif x == 0:
                return 0
            elif x < 10:
                return 1
            else:
                return 2
        """, each(-5, 0, -0.0, 3, 10, 1e300, NAN, -INF, True)),
    program("cf_while_else", """
        @jit
        def f(n, stop):
            i = 0
            s = 0
            while i < n:
                if i == stop:
                    break
                s += i
                i += 1
            else:
                s = -s
            return s, i
        """, [(5, 10), (5, 3), (0, 0), (5, 0), (10, 9)]),
    program("cf_for_else_continue", """
        @jit
        def f(n, skip, stop):
            s = 0
            for i in range(n):
                if i % skip == 0:
                    continue
                if i == stop:
                    break
                s += i
            else:
                s += 1000
            return s
        """, [(10, 3, 100), (10, 3, 7), (0, 1, 0), (10, 2, 6), (10, 1, 5)]),
    program("cf_nested_break", """
        @jit
        def f(n):
            count = 0
            for i in range(n):
                for j in range(n):
                    if j > i:
                        break
                    if (i + j) % 3 == 0:
                        continue
                    count += 1
                else:
                    count += 100
            return count
        """, each(0, 1, 5, 8)),
    program("cf_return_in_loop", """
        @jit
        def f(n, target):
            for i in range(n):
                if i * i >= target:
                    return i
            return -1
        """, [(10, 50), (10, 500), (0, 0), (5, 0), (3, 4.5)]),
    program("cf_collatz", """
        @jit
        def f(n):
            steps = 0
            while n != 1:
                if n % 2 == 0:
                    n //= 2
                else:
                    n = 3 * n + 1
                steps += 1
            return steps
        """, each(1, 27, 97, 2**64 + 1, 837799)),
    program("cf_gcd", """
        @jit
        def f(a, b):
            while b:
                a, b = b, a % b
            return a
        """, [(48, 18), (0, 5), (5, 0), (-48, 18), (48, -18), (2**100, 2**64 * 3), (17, 5.0)]),
    program("cf_count_primes", """
        @jit
        def f(n):
            count = 0
            for k in range(2, n):
                d = 2
                prime = True
                while d * d <= k:
                    if k % d == 0:
                        prime = False
                        break
                    d += 1
                if prime:
                    count += 1
            return count
        """, each(0, 2, 3, 100, 500)),
    program("cf_loop_var_after_loop", """
        @jit
        def f(n):
            for i in range(n):
                pass
            return i
        """, each(3, 1, 0)),
    program("cf_unbound_branch", """
        @jit
        def f(x):
            if x > 0:
                y = x * 2
            return y
        """, each(1, 2.5, 0, -1)),
    program("cf_falls_off_end", """
        @jit
        def f(x):
            if x:
                return x + 1
        """, each(1, 0, 0.0, 2.5)),
    program("cf_assert", """
        @jit
        def f(x):
            assert x >= 0, "x must be non-negative"
            assert x != 3
            return x * 2
        """, each(0, 5, -1, 3, NAN, 2.5)),
    program("cf_raise", """
        @jit
        def f(x):
            if x < 0:
                raise ValueError("negative input")
            if x == 0:
                raise ZeroDivisionError("zero input")
            if x > 100:
                raise OverflowError
            if x == 50:
                raise IndexError("fifty")
            if x == 42:
                raise ArithmeticError("the answer")
            return 100 // x
        """, each(-1, 0, 1, 7, 101, 50, 42, 2**80)),
    program("cf_raise_in_loop", """
        @jit
        def f(n, bad):
            s = 0
            for i in range(n):
                if i == bad:
                    raise RuntimeError("hit the bad index")
                s += i
            return s
        """, [(10, 5), (10, 20), (0, 0)]),
    program("cf_while_true", """
        @jit
        def f(x):
            n = 0
            while True:
                x = x * 0.5
                n += 1
                if x < 1.0:
                    break
            return n, x
        """, each(1.0, 1e300, 1e308, 0.0, 3)),
    program("cf_phi_types", """
        @jit
        def f(c, n):
            x = 1
            for i in range(n):
                if c:
                    x = x * 2
                else:
                    x = x / 2
                c = not c
            return x
        """, [(True, 0), (True, 1), (False, 1), (True, 7), (False, 130), (1, 3)]),
    program("cf_deep_elif", """
        @jit
        def f(x):
            r = 0
            if x == 1:
                r = 10
            elif x == 2:
                r = 20
            elif x == 3.0:
                r = 30
            elif x is None:
                r = -1
            else:
                pass
            return r
        """, each(1, 2, 3, 3.0, True, None, 4)),
    # the baseline tier makes `if c: n += 1` on an int `n = n + c` (passes/ifconvert.py):
    # counts starting at the ends of 64 bits, bools from compares, truth and array elements
    program("cf_conditional_counts", """
        @jit
        def f(a, n, m):
            for i in range(a.shape[0]):
                if a[i] > 0.5:
                    n += 1
                if a[i] < 0.25:
                    m -= 1
                if i % 3 == 0:
                    n = n + 1
                if a[i]:
                    m += 1
            return n, m
        """, [lambda: (np.linspace(0.0, 1.0, 9), 0, 0),
              lambda: (np.linspace(0.0, 1.0, 9), I64_MAX - 2, I64_MIN + 1),
              lambda: (np.array([0.9, 0.0, 0.1]), I64_MAX, I64_MIN),
              lambda: (np.zeros(0), 5, -5),
              lambda: (np.array([0.7, NAN, 0.2]), 2**70, -3)]),
]
