"""How much of a thread's C stack the calls of jitted functions may take.

CPython 3.11 runs a Python function called from Python code in the same C frame of its eval
loop, so a plain recursion takes C stack only where it passes through C. Calls of a jitted
function are made from C: the entry's slots (runtime/entry.py, runtime/straight.py) and
native code. Each level of a recursion through them takes C stack, ~200 to 900 bytes
(measured: a recursion 19,000 levels deep through straight calls, 17,000 under tier="opt",
9,000 under "interp" filled an 8 MB stack). With `sys.setrecursionlimit` raised that far,
such a recursion ended in a segfault where CPython runs it.

So every C entry of a jitted function (the entry type's call slots, the baseline tier's entry
routine, the LLVM tier's entry wrappers) first checks that the stack pointer is not within
MARGIN bytes (at most half the stack) of the lowest address of its thread's stack, and raises
RecursionError if it is: the error CPython raises at its own limit, at a depth the stack's
size sets rather than `sys.getrecursionlimit()`. The thread's bound is kept under a pthread
key, found at its first check with pthread_getattr_np (`stack_ok`,
backends/stencils/shared_ir.py); a stack pointer outside the thread's stack (a coroutine
library running code on stacks of its own) passes. MARGIN is what may run between two checks:
the native calls nested below an entry (backends/nesting.py bounds them at 2 MB) and whatever
C code the program calls. On a thread whose stack is smaller than 2 * MARGIN (threading.
stack_size), half of it is the margin, and the nested calls may take only the room above it:
the check returns that room, and the entry starts the calls' count (the baseline tier's running
bytes, the LLVM tier's depth word) higher by what is missing from the bound, so that they
deoptimise (and the recursion goes on through entries, checked) before they reach the margin.
Without that, a recursion of native calls ran off a 32 KB to 1 MB thread stack (a segfault).
A recursion through the shim's Python frames (before the function goes straight) passes no C
entry: on such a thread the shim counts its frames instead (runtime.straight.check_shim_depth).

Analogue: CPython 3.12's C recursion limit, and 3.14's check of the stack pointer.
"""

import ctypes
from _thread import allocate_lock

MARGIN = 5 << 19                 # 2.5 MB
MESSAGE = (b"maximum recursion depth exceeded (the C stack of calls of jitted functions is "
           b"full: see tierjit's docs/guide.md, Recursion depth)")


class _Cell(ctypes.Structure):
    """What `stack_ok` reads at the hole KS: the pthread key holding each thread's limit,
    MARGIN, the exception type and its message."""

    _fields_ = [("key", ctypes.c_uint), ("pad", ctypes.c_uint), ("margin", ctypes.c_int64),
                ("error", ctypes.c_void_p), ("message", ctypes.c_char_p)]


_cell: "_Cell | None" = None
_lock = allocate_lock()


def cell_address() -> int:
    """Address of the process's cell, made with its pthread key at the first call (and kept
    for the life of the process: code reads it)."""
    global _cell
    if _cell is not None:
        return ctypes.addressof(_cell)
    from .gcpause import gc_paused
    with gc_paused, _lock:           # (a finalizer run here could ask for it too)
        if _cell is None:
            key = ctypes.c_uint(0)
            if ctypes.CDLL(None).pthread_key_create(ctypes.byref(key), None) != 0:
                raise OSError("pthread_key_create failed: no key for the C stack limit")
            _cell = _Cell(key.value, 0, MARGIN, id(RecursionError), MESSAGE)
        return ctypes.addressof(_cell)
