"""The benchmark kernel suite: one module per kernel, listed here in table order.

A kernel module is plain Python in tierjit's supported subset plus a little glue:

    ENTRY = "fib"                  # the function the runner calls
    JIT = ("fib",)                 # every function a JIT compiles, callees first; calls between
                                   # them go through module globals, so rebinding a name to its
                                   # compiled version makes callers (and recursion) use it
    SCALES = {"bench": 35,         # the size every column runs at
              "quick": 20,         # `--quick`: every column, CPython included, runs this
              "cpython": 30}       # optional: CPython runs here instead when "bench" would be
                                   # too slow; the other columns also run here once so their
                                   # results can be checked against CPython's
    def work(scale) -> float: ...  # optional (default: linear in scale); relative amount of
                                   # work, to extrapolate CPython's time from "cpython" to
                                   # "bench" -- give "cpython" only where this is exact
    def setup(scale) -> tuple: ... # the arguments, deterministic (seeded)
    def call_c(lib, *args): ...    # calls bench/c/<name>.c's function through ctypes and
                                   # returns what the Python kernel returns

A kernel must not change its inputs in a way that changes the next call's work: arrays it writes
are either fully overwritten on every call or copied first, so repeated timed calls are alike.
"""

from __future__ import annotations

KERNELS: tuple[str, ...] = (
    "fib",
    "mandelbrot",
    "closest",
    "nbody",
    "spectral_norm",
    "sieve",
    "collatz",
    "mc_pi",
    "sum_sqrt",
    "matmul",
)
