"""A native thread that raises a flag every few milliseconds: the signal polls of LLVM code
that has no loop to count them by, a recursion.

A native loop counts its back edges and polls every 1024 of them (`DeoptOps.poll_signals`):
Ctrl-C is answered and the GIL offered. A recursion without loops has only its calls to
count, and a counter in memory chains every call to the one before it (fib ran 2.7 times
slower; nesting.py). So a core that makes native calls reads the flag when it is entered — a
load of a word written only when it changes, which costs a call next to nothing — and polls
when the flag is up, taking it down (`DeoptOps.poll_ticked`). Analogue: the timer interrupt
that sets a kernel's need-resched flag, read on the way back from each system call.

The thread ("tierjit-ticker") runs native code only, compiled by LLVM once per process: it
never takes the GIL nor touches a Python object, is created with every signal blocked (they
go to the program's threads, whose handlers CPython runs), and sleeps between two raises
until the process ends: PERIOD_NS while a recursion takes the flag down, up to IDLE_NS while
none does (12.5 wake-ups a second).
fork() does not copy it: a child of a process that ran it starts its own at once, for the
code it inherited.
"""

from __future__ import annotations

import ctypes
import os
import signal
import threading

# two switch intervals, as native loops offer the GIL (backends/gil.py); while no core takes
# the flag down (no recursion runs), the period doubles up to IDLE_NS, within which Ctrl-C is
# still answered
PERIOD_NS = 10_000_000
IDLE_NS = 80_000_000

FLAG = ctypes.c_int32(0)
# the thread writes the flag up to the process's last instruction, past the interpreter's
# finalisation, which would free it: one reference never released
ctypes.pythonapi.Py_IncRef(ctypes.py_object(FLAG))

# tj_ticker(flag): forever sleep, then raise the flag; the sleep is PERIOD_NS after a raise
# that a core took down, and doubles up to IDLE_NS after one that is still up
_IR = f"""
declare i32 @nanosleep(ptr, ptr)

define ptr @tj_ticker(ptr %flag) {{
entry:
  %ts = alloca [2 x i64]
  store i64 0, ptr %ts
  %ns = getelementptr i64, ptr %ts, i64 1
  br label %tick
tick:
  %period = phi i64 [{PERIOD_NS}, %entry], [%next, %tick]
  store i64 %period, ptr %ns
  call i32 @nanosleep(ptr %ts, ptr null)
  %was = atomicrmw xchg ptr %flag, i32 1 monotonic
  %idle = icmp ne i32 %was, 0
  %doubled = shl i64 %period, 1
  %short = icmp ult i64 %doubled, {IDLE_NS}
  %longer = select i1 %short, i64 %doubled, i64 {IDLE_NS}
  %next = select i1 %idle, i64 %longer, i64 {PERIOD_NS}
  br label %tick
}}
"""

_code = 0                      # tj_ticker's address, once compiled (fork() copies it)
_running = False               # the thread, in this process (fork() does not copy it)
_lock = threading.Lock()


def flag_address() -> int:
    """The address of the flag (an i32), with the thread that raises it running, or about to
    be, if the process can start one."""
    if not _running:
        _start()
    return ctypes.addressof(FLAG)


def _start() -> None:
    global _code, _running
    # Not waiting: the thread that holds the lock is starting the ticker — or it is this one,
    # re-entered while it compiles (a signal handler compiling a function needs the flag's
    # address, which is all any caller needs).
    if not _lock.acquire(blocking=False):
        return
    try:
        if _running:
            return
        if not _code:
            from .engine import compile_ir
            _code = compile_ir(_IR, opt=1).address("tj_ticker")
        libc = ctypes.CDLL(None)
        create = libc.pthread_create
        create.argtypes = [ctypes.POINTER(ctypes.c_ulong), ctypes.c_void_p, ctypes.c_void_p,
                           ctypes.c_void_p]
        thread = ctypes.c_ulong()
        # the new thread inherits the signal mask: every signal blocked from its first instr
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
        try:
            made = create(ctypes.byref(thread), None, _code, ctypes.addressof(FLAG)) == 0
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        if made:
            _running = True
            libc.pthread_detach.argtypes = [ctypes.c_ulong]
            libc.pthread_detach(thread)
            libc.pthread_setname_np.argtypes = [ctypes.c_ulong, ctypes.c_char_p]
            libc.pthread_setname_np(thread, b"tierjit-ticker")
        # else (no thread to be had): the flag stays down, so recursions do not poll, as
        # before; the next core compiled asks again
    finally:
        _lock.release()


def _after_fork_in_child() -> None:
    global _running, _lock
    ran, _running = _running, False
    _lock = threading.Lock()            # a thread that held it at fork() is not here
    if ran:
        _start()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
