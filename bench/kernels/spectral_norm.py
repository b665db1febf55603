"""Spectral norm of the infinite matrix A(i,j) = 1/((i+j)(i+j+1)/2+i+1); jit-to-jit calls."""

from __future__ import annotations

import ctypes
import math

import numpy as np

ENTRY = "spectral_norm"
JIT = ("eval_a", "mul_av", "mul_atv", "mul_atav", "spectral_norm")
SCALES = {"bench": 800, "quick": 40}
ITERATIONS = 10


def work(scale: int) -> float:
    """Each power iteration evaluates A 4*n*n times."""
    return float(scale) ** 2


def setup(scale: int) -> tuple:
    return (scale, ITERATIONS)


def eval_a(i, j):
    return 1.0 / ((i + j) * (i + j + 1) // 2 + i + 1)


def mul_av(u, out):
    n = u.shape[0]
    for i in range(n):
        s = 0.0
        for j in range(n):
            s += eval_a(i, j) * u[j]
        out[i] = s


def mul_atv(u, out):
    n = u.shape[0]
    for i in range(n):
        s = 0.0
        for j in range(n):
            s += eval_a(j, i) * u[j]
        out[i] = s


def mul_atav(u, out, tmp):
    mul_av(u, tmp)
    mul_atv(tmp, out)


def spectral_norm(n, iterations):
    u = np.ones(n)
    v = np.zeros(n)
    tmp = np.zeros(n)
    for it in range(iterations):
        mul_atav(u, v, tmp)
        mul_atav(v, u, tmp)
    vbv = 0.0
    vv = 0.0
    for i in range(n):
        vbv += u[i] * v[i]
        vv += v[i] * v[i]
    return math.sqrt(vbv / vv)


def call_c(lib, n, iterations):
    fn = lib.spectral_norm
    fn.argtypes = [ctypes.c_int64, ctypes.c_int64]
    fn.restype = ctypes.c_double
    return fn(n, iterations)
