"""Golden cases: chained comparisons, and/or, conditional expressions, tuple unpacking."""

GOLDEN = {
    "chained_compare": {"args": (1, 2, 3), "tier0": True},
    "and_or": {"args": (1, 0.5), "tier0": True},
    "cond_expr": {"args": (-4,), "tier0": False},
    "tuple_unpack": {"args": (1, 2.5), "tier0": True},
}


def chained_compare(a, b, c):
    return a < b <= c


def and_or(x, y):
    return x > 0 and y or x


def cond_expr(x):
    return x if x >= 0 else -x


def tuple_unpack(a, b):
    t = (a, b)
    x, y = t
    y, x = x, y
    return x - y
