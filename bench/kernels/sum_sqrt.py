"""Sum of math.sqrt(i) over a range: a float reduction around a libm call."""

from __future__ import annotations

import ctypes
import math

ENTRY = "sum_sqrt"
JIT = ("sum_sqrt",)
SCALES = {"bench": 10_000_000, "quick": 100_000}


def setup(scale: int) -> tuple:
    return (scale,)


def sum_sqrt(n):
    s = 0.0
    for i in range(n):
        s += math.sqrt(i)
    return s


def call_c(lib, n):
    fn = lib.sum_sqrt
    fn.argtypes = [ctypes.c_int64]
    fn.restype = ctypes.c_double
    return fn(n)
