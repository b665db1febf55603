"""Edge values the corpus draws its arguments from."""

import itertools

NAN = float("nan")
INF = float("inf")
NINF = float("-inf")
TINY = 5e-324  # smallest subnormal
HUGE = 1e308

I64_MAX = 2**63 - 1
I64_MIN = -(2**63)
U64_MAX = 2**64 - 1

# ints on both sides of every 64-bit boundary, and small ones
EDGE_INTS = (0, 1, -1, 2, -7, 7, I64_MAX, I64_MIN, I64_MAX - 1, I64_MIN + 1, 2**63, I64_MIN - 1,
             2**64, -(2**64), 2**31, 3037000499, 3037000500)
SMALL_INTS = (0, 1, -1, 2, -2, 3, -3, 7, -7)
EDGE_FLOATS = (0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, NAN, INF, NINF, TINY, -TINY, HUGE, -HUGE,
               2.2250738585072014e-308, 1e-300, 9007199254740993.0)


def each(*values):
    """One single-argument case per value."""
    return [(v,) for v in values]


def pairs(xs, ys):
    """Every (x, y) case."""
    return list(itertools.product(xs, ys))
