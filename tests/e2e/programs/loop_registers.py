"""Loops whose values the baseline tier keeps in registers (backends/stencils/regs.py).

A loop's counter and sum, and the result one stencil passes to the next, live in registers
as well as in their frame slots. Each program here meets a way a register could go stale or
be read at the wrong moment: a slot written by a stencil without a register variant, a call
into Python, a deopt in the middle of the loop, loops nested and side by side, a chain of
results passed from stencil to stencil, array elements read and written at an index the
stencil before computed, their values passed on. The recurrences (`zr, zi` of an escape-time
iteration) have their new value's computation moved after the old value's last read
(passes/sink.py), with a guard, a deopt or a call into Python in between.
"""

import numpy as np

from ..harness import program

PROGRAMS = [
    program("regs_dot", """
        @jit
        def f(a, b):
            s = 0.0
            for i in range(a.shape[0]):
                s += a[i] * b[i]
            return s
        """, [(np.arange(7.0), np.linspace(0.5, 2.0, 7)), (np.zeros(0), np.zeros(0)),
              (np.array([np.inf, 1.0]), np.array([2.0, 1.0]))]),
    program("regs_matmul", """
        @jit
        def f(a, b, c):
            total = 0.0
            for i in range(a.shape[0]):
                for j in range(b.shape[1]):
                    s = 0.0
                    for k in range(a.shape[1]):
                        s += a[i, k] * b[k, j]
                    c[i, j] = s
                    total += s
            return total
        """, [tuple(np.random.default_rng(3).random((3, 6, 6)))]),
    # t ** 2 has no register variant: it writes t's slot, and t's register is loaded again
    program("regs_power", """
        @jit
        def f(t, limit):
            while t < limit:
                t = t ** 2
            return t
        """, [(2, 1000), (-3, 5), (3, 10**12), (2, 2**62), (5, 2), (1, 0)]),
    # math.sin's result moves into the sum's slot by a move without a double variant
    program("regs_sines", """
        import math

        @jit
        def f(n, s):
            for _ in range(n):
                s = math.sin(s)
            return s
        """, [(10, 1.0), (0, 0.5), (50, -2.0), (3, float("inf"))]),
    # a call into Python (np.zeros): no register survives it
    program("regs_python_call", """
        import numpy as np

        @jit
        def f(n):
            t, s = 0, 0.0
            for i in range(n):
                z = np.zeros(2)
                z[0] = i
                t += i
                s += z[0]
            return t, s
        """, [(0,), (1,), (17,)]),
    # past 64 bits, a zero divisor: deopts in the middle of a loop with cached values
    program("regs_deopt_mid_loop", """
        @jit
        def f(n, k, x):
            t, s = 1, 0.0
            for _ in range(n):
                t = t * k
                s += x
            return t, s
        """, [(10, 3, 0.5), (70, 3, 0.25), (200, -7, 1.5), (1, 2**62, 2.0),
              (5, 2**32, np.float64(1.0))]),
    program("regs_zero_divisor_mid_loop", """
        @jit
        def f(n, x):
            s = 0.0
            for i in range(n):
                s += x / (n - i - 3)
            return s
        """, [(2, 1.0), (6, 2.0), (10, 0.5)]),
    # inner loops with their own cached values, one after the other in the outer loop's body
    program("regs_nested", """
        @jit
        def f(n, m):
            total, count = 0.0, 0
            for i in range(n):
                s = 0.0
                j = 0
                while j < m:
                    s += i * 0.5 + j
                    j += 1
                for k in range(i):
                    count += k
                total += s
            return total, count
        """, [(0, 3), (1, 0), (4, 5), (9, 2)]),
    # state's chain: each result is the next stencil's operand, passed in a register (and,
    # divided, in the double one)
    program("regs_passed_results", """
        @jit
        def f(n, state):
            inside = 0
            for _ in range(n):
                state = (1664525 * state + 1013904223) % 4294967296
                x = state / 4294967296.0
                state = (1103515245 * state + state // 3) % 2147483648
                if x * x + (state / 2147483648.0) ** 0.5 <= 1.0:
                    inside += 1
            return inside, state
        """, [(20, 7), (50, 12345), (0, 1), (3, 2**40), (7, -5)]),
    # u ** 2 overwrites the slot of a result passed in a register
    program("regs_passed_result_overwritten", """
        @jit
        def f(n, k):
            t = 0
            for i in range(n):
                u = i * k + 1
                u = u ** 2
                t = t + u * 3 - i
            return t
        """, [(10, 3), (0, 1), (6, 2**20), (40, 2**31), (5, -7)]),
    # closest's `v[i] - q` at i = k + 1, and nbody's read-update-write of `v[3 * i + 1]`:
    # each index computed just before the element is read or written, each value read
    # passed to the operation after it and the updated value to the write
    program("regs_element_index", """
        @jit
        def f(v, q):
            best = 0
            best_d = abs(v[0] - q)
            for i in range(1, len(v)):
                d = abs(v[i] - q)
                if d < best_d:
                    best_d = d
                    best = i
            return best, best_d
        """, [(np.array([3.0, 1.0, 2.5, 0.75]), 0.8), (np.array([1.0]), 2.0),
              (np.array([1.0, np.inf, 2.0]), 0.5), (np.array([2.0, 1e308, -1e308]), -1e308),
              (np.array([5.0, np.nan, 4.0]), 4.0)]),
    program("regs_element_update", """
        @jit
        def f(pos, vel, dt, n):
            for i in range(n):
                vel[3 * i] = vel[3 * i] - dt * pos[3 * i]
                vel[3 * i + 1] = vel[3 * i + 1] - dt * pos[3 * i + 1]
                vel[3 * i + 2] += dt * pos[3 * i + 2]
            return vel[0]
        """, [(np.arange(12.0), np.ones(12), 0.5, 4), (np.arange(6.0), np.ones(6), 0.25, 2),
              (np.arange(6.0), np.ones(6), 0.5, 3),                    # IndexError at i = 2
              (np.array([1.0, 2.0, np.inf]), np.array([1.0, 1.0, np.inf]), 1.0, 1)]),
    # ints: the element read into %s, the value written from it, and a write that does not
    # fit the array's dtype (a deopt in the middle of the loop)
    program("regs_element_ints", """
        @jit
        def f(a, out, k):
            total = 0
            for i in range(len(a) - 1):
                x = int(a[i + 1]) * k
                out[i + 1] = x
                total += int(a[i]) - int(out[i])
            return total
        """, [(np.arange(8), np.zeros(8, dtype=np.int64), 3),
              (np.arange(5, dtype=np.int32), np.zeros(5, dtype=np.int32), 2**30),
              (np.arange(6, dtype=np.uint8), np.zeros(6, dtype=np.uint8), 100),
              (np.arange(4), np.zeros(4, dtype=np.int64), 2**62),
              (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), 1)]),
    # t is made after the last read of zr (passes/sink.py) and computed into zr's slot
    program("regs_escape_time", """
        @jit
        def f(cr, ci, limit):
            zr = 0.0
            zi = 0.0
            n = 0
            while n < limit and zr * zr + zi * zi <= 4.0:
                t = zr * zr - zi * zi + cr
                zi = 2.0 * zr * zi + ci
                zr = t
                n += 1
            return n, zr, zi
        """, [(-0.75, 0.1, 500), (0.3, 0.5, 1000), (-2.0, 0.0, 300), (0.0, 0.0, 0),
              (-0.1, 0.65, 2000), (float("nan"), 0.0, 10), (1e200, 1e200, 5)]),
    # an int counter that outgrows 64 bits between the read of x and the moved `x + v`: the
    # deopt resumes tier 0 before the sum, which computes it there
    program("regs_sunk_past_a_deopt", """
        @jit
        def f(x, v, k, n):
            for _ in range(n):
                y = x * 0.5 + 1.0
                k = k * 3 + 1
                v = v - x * 0.25
                x = y
            return x, v, k
        """, [(1.0, 0.5, 1, 30), (2.0, -1.0, 2**40, 10), (0.1, 0.2, 2**62, 3),
              (-3.0, 1e300, 7, 50), (0.0, -0.0, 0, 4)]),
    # math.floor (an int that may outgrow 64 bits: a deopt) and an array read between
    program("regs_sunk_past_calls", """
        import math

        @jit
        def f(a, s, w, n):
            c = 0
            for i in range(n):
                nxt = s * 0.9 - 0.1
                c += math.floor(w * 10.0)
                e = float(a[i % a.shape[0]])
                w = w + s * 0.01 + e
                s = nxt
            return s, w, c
        """, [(np.linspace(-1.0, 1.0, 5), 1.0, 0.5, 40), (np.zeros(1), 0.0, 0.0, 3),
              (np.array([1e300]), 1e300, 1e300, 4), (np.zeros(0), 1.0, 1.0, 2),
              (np.array([np.inf]), 0.0, 0.0, 3)]),
]
