"""The compiler thread: hot code is compiled here while the program keeps running.

One daemon thread, started by the first request (a program that never gets hot never starts
it), takes jobs from a FIFO queue and runs them: lowering, type inference, optimisation, tier-0
and LLVM code generation, then the switch of the function's dispatch slot. LLVM's work runs with
the GIL released (llvmlite's ctypes calls drop it), so on a second core it costs the program
nothing; the Python parts hold the GIL, and while they run the compiler thread shortens the
interpreter's switch interval so the program's threads get the GIL back within ~1 ms instead
of 5 ms. Analogue: HotSpot's C1/C2 compiler threads and their compile queue.

At interpreter exit pending jobs are dropped and a compile in progress is waited for (LLVM must
not be running when the process tears down its static state).
"""

from __future__ import annotations

import _thread
import atexit
import os
import sys
import threading
from collections import deque
from collections.abc import Callable

from .events import COMPILER_THREAD

# While the compiler thread runs Python, the program's threads wait at most this long for the
# GIL (CPython's default is 5 ms, the pause budget).
SWITCH_INTERVAL = 0.0005


class CompilerThread:
    """A single background worker with a job queue (see the module docstring)."""

    def __init__(self) -> None:
        self._jobs: deque[Callable[[], None]] = deque()
        self._cv = threading.Condition(threading.Lock())
        self._ident: int | None = None       # the thread's id once started
        self._running = False                # started and not yet exited
        self._busy = False
        self._stopping = False
        self._saved_interval: float | None = None
        self.jobs_done = 0

    # -- the program's side -----------------------------------------------------------------
    def submit(self, job: Callable[[], None]) -> bool:
        """Queue a job; False when the thread is shutting down (the job will never run)."""
        with self._cv:
            if self._stopping:
                return False
            self._jobs.append(job)
            if not self._running:
                # _thread, not threading.Thread: start() would wait for the new thread to
                # get the GIL, a pause of up to one switch interval on the caller.
                self._running = True
                _thread.start_new_thread(self._run, ())
            self._cv.notify()
            return True

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until the queue is empty and no job runs; False if `timeout` ran out."""
        if self.is_compiler_thread():
            return not self._jobs
        with self._cv:
            return self._cv.wait_for(lambda: not self._jobs and not self._busy, timeout)

    def pending(self) -> int:
        return len(self._jobs) + (1 if self._busy else 0)

    def is_compiler_thread(self) -> bool:
        return _thread.get_ident() == self._ident

    @property
    def started(self) -> bool:
        return self._ident is not None

    def stop(self, timeout: float = 30.0) -> None:
        """Drop pending jobs and wait (up to timeout) for the running one to finish."""
        with self._cv:
            self._stopping = True
            self._jobs.clear()
            self._cv.notify_all()
            if not self.is_compiler_thread():
                self._cv.wait_for(lambda: not self._running, timeout)

    # -- the thread's side ------------------------------------------------------------------
    def _run(self) -> None:
        self._ident = _thread.get_ident()
        threading.current_thread().name = COMPILER_THREAD     # for events and debuggers
        try:
            self._loop()
        finally:
            with self._cv:
                self._set_busy(False)
                self._running = False
                self._cv.notify_all()

    def _loop(self) -> None:
        while True:
            with self._cv:
                while not self._jobs and not self._stopping:
                    self._set_busy(False)
                    self._cv.wait()
                if self._stopping:
                    return
                job = self._jobs.popleft()
                self._set_busy(True)
            try:
                job()
            except BaseException as e:        # noqa: BLE001 - jobs report their own errors
                from .events import record
                record("error", getattr(job, "__qualname__", "?"), detail=repr(e))
            self.jobs_done += 1

    def _set_busy(self, busy: bool) -> None:
        """Called with the condition held: track idleness and the switch interval."""
        if busy and not self._busy:
            self._saved_interval = sys.getswitchinterval()
            if self._saved_interval > SWITCH_INTERVAL:
                sys.setswitchinterval(SWITCH_INTERVAL)
        elif not busy and self._busy:
            if self._saved_interval is not None and \
                    sys.getswitchinterval() == SWITCH_INTERVAL:
                sys.setswitchinterval(self._saved_interval)
            self._saved_interval = None
        self._busy = busy
        if not busy:
            self._cv.notify_all()


_compiler: CompilerThread | None = None
_lock = threading.Lock()


def get_compiler() -> CompilerThread:
    """The process's compiler thread object (the thread itself starts with the first job)."""
    global _compiler
    if _compiler is None:
        with _lock:
            if _compiler is None:
                _compiler = CompilerThread()
    return _compiler


@atexit.register
def _stop_at_exit() -> None:
    if _compiler is not None:
        _compiler.stop()


def wait_idle(timeout: float | None = None) -> bool:
    """Wait until every queued compile has finished (True) or timeout ran out (False)."""
    return _compiler is None or _compiler.wait_idle(timeout)


def _after_fork_in_child() -> None:
    # The thread does not exist in the child; a fresh object starts a new one on demand.
    global _compiler, _lock
    _lock = threading.Lock()
    _compiler = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
