"""The compiler thread: hot code is compiled here while the program keeps running.

One daemon thread, started by the first request (a program that never gets hot never starts
it), takes jobs from a FIFO queue (timed jobs join it when due: `submit_at`) and runs them:
lowering, type inference, optimisation, tier-0 and LLVM code generation, then the switch of
the function's dispatch slot. LLVM's work runs with the GIL released (llvmlite's ctypes calls
drop it), so on a second core it costs the program nothing; the Python parts hold the GIL, and
while they run the compiler thread shortens the interpreter's switch interval so the
program's threads get the GIL back within ~1 ms instead of 5 ms. Analogue: HotSpot's C1/C2
compiler threads and their compile queue.

At interpreter exit pending jobs are dropped and a compile in progress is waited for (LLVM must
not be running when the process tears down its static state). Around fork() the thread finishes
its job and waits, so the child never inherits LLVM or the engine's lock mid-compile; the child
starts its own thread when something is hot again.
"""

from __future__ import annotations

import _thread
import atexit
import os
import sys
import threading
from _collections import deque         # not `collections`: imported on a program's thread
from time import perf_counter

from .events import COMPILER_THREAD

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

# While the compiler thread runs Python, the program's threads wait at most this long for the
# GIL (CPython's default is 5 ms, tierjit's whole budget for a pause).
SWITCH_INTERVAL = 0.0005
# The thread keeps the default OS priority: measured on the 2-core machines shared with other
# work, nice 10 made a background compile 4-5x slower (1.2 s instead of 0.28 s for fib) for no
# measurable gain in the program's pauses.


class CompilerThread:
    """A single background worker with a job queue (see the module docstring)."""

    def __init__(self) -> None:
        self._jobs: deque[Callable[[], None]] = deque()
        self._later: list[tuple[float, Callable[[], None]]] = []    # (time due, job)
        # reentrant: a collection may run at any allocation while it is held, and a finalizer
        # it runs may call a jitted function that submits a job on this thread
        self._cv = threading.Condition(threading.RLock())
        self._ident: int | None = None       # the thread's id once started
        self._running = False                # started and not yet exited
        self._busy = False
        self._stopping = False
        self._paused = False                 # around fork(): no job may be running
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

    def submit_at(self, when: float, job: Callable[[], None]) -> bool:
        """Queue a job once `time.perf_counter()` reaches `when` (the thread waits for the
        earliest); False when the thread is shutting down."""
        with self._cv:
            if self._stopping:
                return False
            self._later.append((when, job))
            if not self._running:
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
            self._later.clear()
            self._cv.notify_all()
            if not self.is_compiler_thread():
                self._cv.wait_for(lambda: not self._running, timeout)

    def pause(self, timeout: float = 30.0) -> None:
        """Let the running job finish and start no other (before fork: LLVM and the engine's
        lock must not be mid-compile in a child that has no compiler thread)."""
        with self._cv:
            self._paused = True
            if not self.is_compiler_thread():
                self._cv.wait_for(lambda: not self._busy, timeout)

    def resume(self) -> None:
        with self._cv:
            self._paused = False
            self._cv.notify_all()

    # -- the thread's side ------------------------------------------------------------------
    def _run(self) -> None:
        from . import shim
        self._ident = shim.compiler_ident = _thread.get_ident()
        threading.current_thread().name = COMPILER_THREAD     # for events and debuggers
        try:
            with self._cv:
                self._set_busy(True)
            self._loop()
        finally:
            with self._cv:
                self._set_busy(False)
                self._running = False
                self._cv.notify_all()

    def _loop(self) -> None:
        preloaded = False
        while True:
            with self._cv:
                while (not self._due() or self._paused) and not self._stopping:
                    self._set_busy(False)
                    self._cv.wait(self._wait())
                if self._stopping:
                    return
                job = self._jobs.popleft()
                self._set_busy(True)
            # LLVM's library is mapped before the first job that may use it, not before a
            # baseline build queued ahead of it (~40 ms of dlopen that build need not wait for)
            if not preloaded and getattr(job, "uses_llvm", True):
                _preload_llvm()
                preloaded = True
            try:
                job()
            except BaseException as e:        # noqa: BLE001 - jobs report their own errors
                from .events import record
                record("error", getattr(job, "__qualname__", "?"), detail=repr(e))
            self.jobs_done += 1

    def _due(self) -> bool:
        """Called with the condition held: move the timed jobs whose time has come to the
        queue; is there a job to run?"""
        if self._later:
            now = perf_counter()
            for item in [x for x in self._later if x[0] <= now]:
                self._later.remove(item)
                self._jobs.append(item[1])
        return bool(self._jobs)

    def _wait(self) -> float | None:
        """How long the idle thread may wait: until the earliest timed job, or a notify."""
        if not self._later or self._paused:
            return None
        return max(0.0, min(w for w, _ in self._later) - perf_counter())

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
        # Native code's GIL offers follow. (A module another thread is importing has no
        # function yet: it reads the interval when its import gets there.)
        follow = getattr(sys.modules.get("tierjit.backends.gil"), "switch_interval_changed",
                         None)
        if follow is not None:
            follow(sys.getswitchinterval())
        if not busy:
            self._cv.notify_all()


def _preload_llvm() -> None:
    """dlopen llvmlite's shared library through a ctypes call, which releases the GIL.

    `import llvmlite.binding` loads the ~100 MB library with ctypes.CDLL, whose dlopen holds
    the GIL for ~8 ms (relocations): a pause of every other thread. Loaded here first, that
    later dlopen only finds the library already mapped."""
    try:
        import ctypes
        import importlib.util
        spec = importlib.util.find_spec("llvmlite")
        if spec is None or not spec.submodule_search_locations:
            return
        path = os.path.join(list(spec.submodule_search_locations)[0], "binding",
                            "libllvmlite.so")
        if not os.path.exists(path):
            return
        libc = ctypes.CDLL(None)
        libc.dlopen.argtypes = [ctypes.c_char_p, ctypes.c_int]
        libc.dlopen.restype = ctypes.c_void_p
        libc.dlopen(path.encode(), os.RTLD_NOW | os.RTLD_LOCAL)   # GIL released meanwhile
    except Exception:           # noqa: BLE001 - an optimisation only
        pass


_compiler: CompilerThread | None = None
_lock = threading.Lock()


def get_compiler() -> CompilerThread:
    """The process's compiler thread object (the thread itself starts with the first job)."""
    global _compiler
    if _compiler is None:
        from .gcpause import gc_paused
        with gc_paused, _lock:           # (a finalizer run here could ask for it too)
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


def _before_fork() -> None:
    if _compiler is not None:
        _compiler.pause()


def _after_fork_in_parent() -> None:
    if _compiler is not None:
        _compiler.resume()


def _after_fork_in_child() -> None:
    # The thread does not exist in the child; a fresh object starts a new one on demand, and
    # the builds that were queued in the parent are asked for again when next needed.
    global _compiler, _lock
    _lock = threading.Lock()
    from . import shim
    shim.compiler_ident = None
    if _compiler is not None:
        _compiler = None
        import sys as _sys
        dispatch = _sys.modules.get(__package__ + ".dispatch")
        if dispatch is not None:
            dispatch.forget_queued_builds()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent,
                        after_in_child=_after_fork_in_child)
