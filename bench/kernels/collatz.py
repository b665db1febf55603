"""Longest Collatz chain below a limit: integer arithmetic in a data-dependent while loop."""

from __future__ import annotations

import ctypes

ENTRY = "collatz"
JIT = ("collatz",)
SCALES = {"bench": 300_000, "quick": 5_000}


def setup(scale: int) -> tuple:
    return (scale,)


def collatz(limit):
    best = 1
    best_len = 1
    for start in range(1, limit):
        n = start
        length = 1
        while n != 1:
            if n % 2 == 0:
                n = n // 2
            else:
                n = 3 * n + 1
            length += 1
        if length > best_len:
            best_len = length
            best = start
    return best, best_len


def call_c(lib, limit):
    fn = lib.collatz
    fn.argtypes = [ctypes.c_int64, ctypes.POINTER(ctypes.c_int64)]
    fn.restype = ctypes.c_int64
    best_len = ctypes.c_int64()
    best = fn(limit, ctypes.byref(best_len))
    return best, best_len.value
