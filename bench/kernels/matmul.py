"""Naive matrix multiply: three nested loops over 2-D float64 arrays, returns the sum of C."""

from __future__ import annotations

import ctypes

import numpy as np

ENTRY = "matmul"
JIT = ("matmul",)
SCALES = {"bench": 300, "quick": 30}


def work(scale: int) -> float:
    return float(scale) ** 3


def setup(scale: int) -> tuple:
    rng = np.random.default_rng(7)
    a = rng.random((scale, scale))
    b = rng.random((scale, scale))
    c = np.zeros((scale, scale))
    return (a, b, c)


def matmul(a, b, c):
    n = a.shape[0]
    m = a.shape[1]
    p = b.shape[1]
    total = 0.0
    for i in range(n):
        for j in range(p):
            s = 0.0
            for k in range(m):
                s += a[i, k] * b[k, j]
            c[i, j] = s
            total += s
    return total


def call_c(lib, a, b, c):
    fn = lib.matmul
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                   ctypes.c_int64, ctypes.c_int64, ctypes.c_int64]
    fn.restype = ctypes.c_double
    return fn(a.ctypes.data, b.ctypes.data, c.ctypes.data, a.shape[0], a.shape[1], b.shape[1])
