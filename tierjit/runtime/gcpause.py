"""The cyclic garbage collector paused while a call compiles the code it is about to run.

A compile allocates tens of thousands of objects that live until it ends (syntax trees, IR,
types, LLVM IR text) and imports modules that live for good, and the collector traverses them
again and again as they age: ~30 young and a few middle-generation collections, 5-20 ms of a
first call of 100-500 ms. Paused, it makes one young collection of all of them when the
compile is over (at the next allocation, its count being past the threshold). Nothing is
freed later than that but cyclic garbage made meanwhile, which the collector never promises
to free at any particular time anyway.

Nested and concurrent compiles share one pause: a count, under a lock, restarts the collector
when the last of them ends, and only if it was running when the first began (a program that
disabled it keeps it disabled). Another thread sees `gc.isenabled()` False meanwhile, and a
`gc.disable()` it makes during the pause is undone at its end (docs/tiering.md says so).
Analogue: a VM's GC-safe region around its compiler.
"""

from __future__ import annotations

import gc
import threading

_lock = threading.Lock()
_depth = 0
_restart = False


class GcPaused:
    """`with GcPaused():` — the collector does not run during the block (see the module
    docstring). Reentrant and thread-safe."""

    __slots__ = ()

    def __enter__(self) -> None:
        global _depth, _restart
        with _lock:
            if _depth == 0:
                _restart = gc.isenabled()
                gc.disable()
            _depth += 1

    def __exit__(self, *exc: object) -> None:
        global _depth
        with _lock:
            _depth -= 1
            restart = _depth == 0 and _restart
        # Outside the lock: the next allocation may start a collection on this thread, whose
        # finalizers may call a jitted function that pauses the collector itself (and would
        # wait for this lock for ever). A pause another thread begins meanwhile finds the
        # collector off and leaves it to this one to restart.
        if restart:
            gc.enable()


gc_paused = GcPaused()
