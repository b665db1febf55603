"""Mandelbrot escape counts into a 2-D int64 array; float arithmetic in a data-dependent loop."""

from __future__ import annotations

import ctypes

import numpy as np

ENTRY = "mandelbrot"
JIT = ("mandelbrot",)
SCALES = {"bench": 400, "quick": 60}
MAX_ITER = 255


def setup(scale: int) -> tuple:
    width = scale
    height = 3 * scale // 4
    step = 3.0 / width
    out = np.zeros((height, width), dtype=np.int64)
    return (out, -2.25, -step * (height // 2), step, step, MAX_ITER)


def mandelbrot(out, x0, y0, dx, dy, max_iter):
    height = out.shape[0]
    width = out.shape[1]
    total = 0
    for y in range(height):
        ci = y0 + y * dy
        for x in range(width):
            cr = x0 + x * dx
            zr = 0.0
            zi = 0.0
            n = 0
            while n < max_iter and zr * zr + zi * zi <= 4.0:
                t = zr * zr - zi * zi + cr
                zi = 2.0 * zr * zi + ci
                zr = t
                n += 1
            out[y, x] = n
            total += n
    return total


def call_c(lib, out, x0, y0, dx, dy, max_iter):
    fn = lib.mandelbrot
    fn.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_double,
                   ctypes.c_double, ctypes.c_double, ctypes.c_double, ctypes.c_int64]
    fn.restype = ctypes.c_int64
    return fn(out.ctypes.data, out.shape[0], out.shape[1], x0, y0, dx, dy, max_iter)
