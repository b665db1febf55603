"""Golden cases: counted loops over range() with one to three arguments, and over an array."""

import numpy as np

GOLDEN = {
    "range_stop": {"args": (5,), "tier0": True},
    "range_start_stop": {"args": (2, 9), "tier0": False},
    "range_step_nested": {"args": (10, -2), "tier0": True},
    "sum_array": {"args": (np.arange(4.0),), "tier0": True},
}


def range_stop(n):
    s = 0
    for i in range(n):
        s += i
    return s


def range_start_stop(a, b):
    p = 1
    for i in range(a, b):
        p = p * i
    return p


def range_step_nested(n, step):
    c = 0
    for i in range(n, 0, step):
        for j in range(i):
            if j > 3:
                break
            c += j
        else:
            c -= 1
    return c


def sum_array(a):
    s = 0.0
    for x in a:
        s += x
    return s
