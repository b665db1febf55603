"""Golden cases: augmented assignment to an array element, and recursion through @jit.

Jitted functions are wrapped after their definition (`fib = tierjit.jit(fib)`) rather than
decorated, so that line numbers in the golden output stay right whatever the frontend does
with decorator lines; the decorated form is tested in tests/unit/frontend.
"""

import numpy as np

import tierjit

GOLDEN = {
    "aug_assign_item": {"args": (np.zeros((2, 3)), 1, 2), "tier0": True},
    "fib": {"args": (10,), "tier0": True},
}


def aug_assign_item(a, i, j):
    a[i, j] += 1.5
    a[0, 0] *= 2
    return a[i, j]


def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


fib = tierjit.jit(fib)
