"""Running the native register-machine evaluator: compiled once per dtype, spread over threads.

Analogue: a bytecode interpreter's run loop, but the "bytecode" is a whole population and every
instruction runs over a block of rows with SIMD (see vm_ir.py for the function itself).

The function is compiled on first use (per dtype) with `engine.compile_ir` and called through
ctypes, which releases the GIL for the whole call: a pool of one thread per core calls it at
once, and the threads share the population through an atomic counter in the native code, so
short and long programs balance themselves. Small jobs run in the calling thread only.
"""

from __future__ import annotations

import ctypes
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from .vm_ir import ELEMENT, MODES, module_ir, symbol

if TYPE_CHECKING:  # pragma: no cover - typing only
    import numpy as np

    from .encoding import Programs

CACHE_BYTES = 24 * 1024      # register blocks of one thread should stay in L1 (48 KiB here)
MAX_BLOCK = 1024             # rows per block
SMALL_JOB = 200_000          # instruction-rows below which threads cost more than they save

_lock = threading.Lock()
_functions: dict[str, tuple[Any, int]] = {}   # dtype -> (ctypes function, lanes)
_pool: ThreadPoolExecutor | None = None

_ARGTYPES = [ctypes.c_void_p] * 5 + [ctypes.c_int64] * 3 + [ctypes.c_void_p, ctypes.c_int64,
             ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64,
             ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64,
             ctypes.c_int64, ctypes.c_void_p]


def cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def lanes(dtype: str) -> int:
    """Elements per vector: 64 bytes with AVX-512, else 32."""
    from ..backends.llvm import engine
    width = 64 if "+avx512f" in engine.get_engine().cpu_features else 32
    return width // ELEMENT[dtype][1]


def native(dtype: str) -> tuple[Any, int]:
    """The evaluator for dtype ("float32" or "float64") and its vector lanes, compiled once."""
    got = _functions.get(dtype)
    if got is None:
        with _lock:
            got = _functions.get(dtype)
            if got is None:
                from ..backends.llvm import engine
                w = lanes(dtype)
                module = engine.compile_ir(module_ir(dtype, w))
                fn = ctypes.CFUNCTYPE(None, *_ARGTYPES)(module.address(symbol(dtype, w)))
                got = _functions[dtype] = (fn, w)
    return got


def _threads() -> ThreadPoolExecutor:
    global _pool
    if _pool is None:
        with _lock:
            if _pool is None:
                _pool = ThreadPoolExecutor(max_workers=cores(),
                                           thread_name_prefix="tierjit-variants")
    return _pool


def _aligned(n: int, dtype: Any) -> np.ndarray:
    """n elements, 64-byte aligned (vectors never straddle a cache line)."""
    import numpy as np
    size = np.dtype(dtype).itemsize
    raw = np.zeros(n * size + 64, np.uint8)
    skew = (-raw.ctypes.data) % 64
    return raw[skew:skew + n * size].view(dtype)


def run(progs: Programs, X: np.ndarray, reduce: str | None = None, y: np.ndarray | None = None,
        threads: int | None = None, private: bool = False) -> np.ndarray:
    """Evaluate every program of `progs` on every row of X (2-d, float32/float64, one column
    per input register). Returns (P, n_rows) of X's dtype for reduce=None, else (P,): X's dtype
    for "max", float64 for "sum" and "mse".

    Raises what `progs.check()` raises: the native code trusts every offset and register
    index it reads (the memory contract in vm_ir.py), and a population made by the
    constructor, or changed in place after it was checked, must not reach it unchecked. The
    check is vectorised and costs a few per cent of an evaluation, so it runs every time
    rather than being remembered per object (which an in-place change would make stale).

    What is checked and run are copies of the arrays that hold offsets and register indices
    (code, starts, output), unless `private` says that no other code holds them (a population
    evaluate made): the native code runs without the GIL, and another thread of the program
    changing them between the check and the run (or during it) made it read registers
    millions of rows out of bounds (SIGSEGV). The constants are read as they are: a change to
    them changes results, never where the code reads. The copies cost a pass over the code:
    20,000 programs of 10 instructions over 200 rows took 2.66-2.80 ms with them, 2.35-2.50
    ms without (float64, two threads)."""
    import numpy as np
    if not private:
        from .encoding import Programs
        progs = Programs(progs.code.copy(order="K"), progs.values,
                         progs.starts.copy(order="K"), progs.output.copy(order="K"),
                         progs.n_inputs, progs.n_regs)
    progs.check()
    dtype = X.dtype.name
    fn, w = native(dtype)
    n_rows, n_prog = X.shape[0], len(progs)
    n_pad = -(-max(n_rows, 1) // w) * w
    cols = _aligned(max(progs.n_inputs, 1) * n_pad, dtype).reshape(-1, n_pad)
    if progs.n_inputs:
        cols[:progs.n_inputs, :n_rows] = X[:, :progs.n_inputs].T
    mode = MODES[reduce]
    ypad = _aligned(n_pad, dtype)
    if mode == 3:
        ypad[:n_rows] = y
    if mode == 0:
        out = np.empty((n_prog, n_rows), dtype)
        stride = n_rows
    else:
        out = np.empty(n_prog, dtype if mode == 1 else np.float64)
        stride = 0
    if n_prog == 0:
        return out
    size = ELEMENT[dtype][1]
    block = CACHE_BYTES // (progs.n_regs * size) // w * w
    block = max(w, min(block, MAX_BLOCK, n_pad))
    work = len(progs.code) * max(n_rows, 1)
    n_threads = threads or cores()
    if work < SMALL_JOB:
        n_threads = 1
    chunk = max(1, min(256, n_prog // (8 * n_threads) or 1))
    n_threads = max(1, min(n_threads, -(-n_prog // chunk)))
    counter = np.zeros(1, np.int64)
    zeros = _aligned(block, dtype)
    scratch = [_aligned(progs.n_regs * block, dtype) for _ in range(n_threads)]
    longest = int(np.diff(progs.starts).max())
    live = [np.empty(max(longest, 1), np.int32) for _ in range(n_threads)]
    common = (progs.code.ctypes.data, progs.values.ctypes.data, progs.starts.ctypes.data,
              progs.output.ctypes.data, cols.ctypes.data, progs.n_inputs, n_rows, n_pad,
              ypad.ctypes.data, mode, out.ctypes.data, stride)

    def one(k: int) -> None:
        fn(*common, scratch[k].ctypes.data, block, zeros.ctypes.data, progs.n_regs,
           counter.ctypes.data, n_prog, chunk, live[k].ctypes.data)

    if n_threads == 1:
        one(0)
    else:
        futures = [_threads().submit(one, k) for k in range(1, n_threads)]
        one(0)
        for f in futures:
            f.result()
    return out
