"""Recursive Fibonacci: call overhead and integer arithmetic, the function calls itself."""

from __future__ import annotations

import ctypes

ENTRY = "fib"
JIT = ("fib",)
SCALES = {"bench": 35, "quick": 20}


def work(scale: int) -> float:
    """Number of calls fib(scale) makes: 2*F(scale+1) - 1."""
    a, b = 0, 1
    for _ in range(scale + 1):
        a, b = b, a + b
    return 2.0 * a - 1.0


def setup(scale: int) -> tuple:
    return (scale,)


def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


def call_c(lib, n):
    fn = lib.fib
    fn.argtypes = [ctypes.c_int64]
    fn.restype = ctypes.c_int64
    return fn(n)
