"""Nearest value to a query in a float64 array: a linear scan returning (index, distance)."""

from __future__ import annotations

import ctypes

import numpy as np

ENTRY = "closest"
JIT = ("closest",)
SCALES = {"bench": 10_000_000, "quick": 100_000}
QUERY = 123.456789


def setup(scale: int) -> tuple:
    values = np.random.default_rng(20240601).random(scale) * 1000.0
    return (values, QUERY)


def closest(v, q):
    best = 0
    best_d = abs(v[0] - q)
    for i in range(1, len(v)):
        d = abs(v[i] - q)
        if d < best_d:
            best_d = d
            best = i
    return best, best_d


def call_c(lib, v, q):
    fn = lib.closest
    fn.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_double,
                   ctypes.POINTER(ctypes.c_double)]
    fn.restype = ctypes.c_int64
    dist = ctypes.c_double()
    index = fn(v.ctypes.data, v.shape[0], q, ctypes.byref(dist))
    return index, dist.value
