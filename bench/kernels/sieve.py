"""Sieve of Eratosthenes over a uint8 array: count the primes below n."""

from __future__ import annotations

import ctypes

import numpy as np

ENTRY = "sieve"
JIT = ("sieve",)
SCALES = {"bench": 10_000_000, "quick": 100_000}


def setup(scale: int) -> tuple:
    return (np.empty(scale, dtype=np.uint8),)


def sieve(flags):
    n = flags.shape[0]
    for k in range(n):
        flags[k] = 1
    flags[0] = 0
    flags[1] = 0
    i = 2
    while i * i < n:
        if flags[i]:
            j = i * i
            while j < n:
                flags[j] = 0
                j += i
        i += 1
    # `count += flags[k]` would be uint8 arithmetic under NumPy 2 (and wrap at 256).
    count = 0
    for k in range(n):
        if flags[k]:
            count += 1
    return count


def call_c(lib, flags):
    fn = lib.sieve
    fn.argtypes = [ctypes.c_void_p, ctypes.c_int64]
    fn.restype = ctypes.c_int64
    return fn(flags.ctypes.data, flags.shape[0])
