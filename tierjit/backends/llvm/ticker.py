"""A native thread that raises a flag every few milliseconds: the signal polls of LLVM code
that has no loop to count them by, a recursion.

A native loop counts its back edges and polls every 1024 of them (`DeoptOps.poll_signals`):
Ctrl-C is answered and the GIL offered. A recursion without loops has only its calls to
count, and a counter in memory chains every call to the one before it (fib ran 2.7 times
slower; nesting.py). So a core that makes native calls reads the flag when it is entered — a
load of a word written only when it changes, which costs a call next to nothing — and polls
when the flag is up, taking it down (`DeoptOps.poll_ticked`). Analogue: the timer interrupt
that sets a kernel's need-resched flag, read on the way back from each system call.

The thread runs native code only (below, compiled by LLVM once per process): it never takes
the GIL nor touches a Python object, blocks every signal (they go to the program's threads,
whose handlers CPython runs), and sleeps PERIOD_NS between two raises until the process
ends. fork() does not copy it: a child of a process that ran it starts its own at once, for
the code it inherited.
"""

from __future__ import annotations

import ctypes
import os
import threading

PERIOD_NS = 5_000_000          # CPython's switch interval: Ctrl-C must be answered in 100 ms

# the flag, in the module's own memory (LLVM's code and data are never freed: the thread
# writes it up to the process's last instruction), and tj_ticker: block every signal, then
# forever sleep PERIOD_NS and raise the flag
_IR = f"""
@tj_tick_flag = global i32 0, align 64
declare i32 @nanosleep(ptr, ptr)
declare i32 @pthread_sigmask(i32, ptr, ptr)

define ptr @tj_ticker(ptr %unused) {{
entry:
  %all = alloca [16 x i64]
  store [16 x i64] [{", ".join(["i64 -1"] * 16)}], ptr %all
  call i32 @pthread_sigmask(i32 0, ptr %all, ptr null)
  %ts = alloca [2 x i64]
  store [2 x i64] [i64 0, i64 {PERIOD_NS}], ptr %ts
  br label %tick
tick:
  call i32 @nanosleep(ptr %ts, ptr null)
  store atomic i32 1, ptr @tj_tick_flag monotonic, align 4
  br label %tick
}}
"""

_module = None                 # the compiled module, once per process (fork() copies it)
_running = False               # the thread, in this process (fork() does not copy it)
_lock = threading.Lock()


def flag_address() -> int:
    """The address of the flag (an i32), with the thread that raises it running (if the
    process can start one)."""
    if not _running:
        _start()
    return _module.address("tj_tick_flag")


def flag() -> ctypes.c_int32:
    """The flag as a ctypes int (tests read and lower it)."""
    return ctypes.c_int32.from_address(flag_address())


def _start() -> None:
    global _module, _running
    with _lock:
        if _running:
            return
        if _module is None:
            from .engine import compile_ir
            _module = compile_ir(_IR, opt=1)
        libc = ctypes.CDLL(None)
        create, detach = libc.pthread_create, libc.pthread_detach
        create.argtypes = [ctypes.POINTER(ctypes.c_ulong), ctypes.c_void_p, ctypes.c_void_p,
                           ctypes.c_void_p]
        detach.argtypes = [ctypes.c_ulong]
        thread = ctypes.c_ulong()
        if create(ctypes.byref(thread), None, _module.address("tj_ticker"), None) == 0:
            detach(thread)
            _running = True
        # else (no thread to be had): the flag stays down, so recursions do not poll, as
        # before; the next core compiled asks again


def _after_fork_in_child() -> None:
    global _running, _lock
    ran, _running = _running, False
    _lock = threading.Lock()            # a thread that held it at fork() is not here
    if ran:
        _start()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
