"""Monte-Carlo pi from an integer LCG (mod 2**32): 64-bit integer multiply/modulo plus floats."""

from __future__ import annotations

import ctypes

ENTRY = "mc_pi"
JIT = ("mc_pi",)
# CPython would take ~7 s at the bench scale; the work is exactly linear in the sample count.
SCALES = {"bench": 10_000_000, "quick": 100_000, "cpython": 1_000_000}
SEED = 12345


def setup(scale: int) -> tuple:
    return (scale, SEED)


def mc_pi(samples, seed):
    # Numerical Recipes' LCG; the state stays below 2**32, so 1664525 * state < 2**53.
    state = seed
    inside = 0
    for i in range(samples):
        state = (1664525 * state + 1013904223) % 4294967296  # 2**32
        x = state / 4294967296.0
        state = (1664525 * state + 1013904223) % 4294967296
        y = state / 4294967296.0
        if x * x + y * y <= 1.0:
            inside += 1
    return inside, 4.0 * inside / samples


def call_c(lib, samples, seed):
    fn = lib.mc_pi
    fn.argtypes = [ctypes.c_int64, ctypes.c_int64, ctypes.POINTER(ctypes.c_double)]
    fn.restype = ctypes.c_int64
    pi = ctypes.c_double()
    inside = fn(samples, seed, ctypes.byref(pi))
    return inside, pi.value
