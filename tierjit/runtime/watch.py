"""Watching: which cold calls of a tier="auto" function run counting tier 0 (runtime.osr).

A function with loops is *watched* once one of its cold calls has taken
`config.watch_seconds`: a long call is what on-stack replacement is for, and counting tier 0
(Python from the untyped IR, with loop countdowns) is slower than CPython for short calls.
The counting tier 0 is lowered on the compiler thread (by the call itself when watch_seconds
is 0); until it is there, and for calls it cannot take (keywords, another arity, a free name
that now names another object), cold calls run the original function.

Mixed into runtime.dispatch.Dispatcher; its state is `Dispatcher.counting`: None until the
first cold call, "watching", "building", then an OsrEntries or False. The shim asks
`cold_target` on every cold call, so nothing here imports the compiler until it is needed.
"""

import sys
from time import perf_counter as _clock

from .config import config as _config

TYPE_CHECKING = False
if TYPE_CHECKING:                       # pragma: no cover - typing only
    from collections.abc import Callable
    from typing import Any


class Watching:
    """The watch policy of a Dispatcher (see the module docstring)."""

    def cold_target(self, args: tuple, kwargs: dict) -> "Callable":
        """What a cold call runs: counting tier 0 (runtime.osr) when the function has loops
        and the call binds plainly, else the original function."""
        c = self.counting
        if c is None:                     # the first cold call: is there a loop to watch?
            c = self.counting = "watching" if _has_loops(self.py_func.__code__) else False
        if c == "watching":
            watch = _config.watch_seconds
            if watch is None or self.longest_cold < watch:
                return self.py_func
            c = self._start_counting()
        if (c is False or c == "building" or kwargs or len(args) != self._nparams
                or not _unchanged(self.py_func, c.free)):
            return self.py_func
        return c.tier0

    def _start_counting(self) -> "Any":
        """A cold call of a function with loops has taken config.watch_seconds: lower it to
        counting tier 0, on the compiler thread under config.background (cold calls run the
        original function until it is there) unless watch_seconds is 0, which asks for it
        at the first call. Returns what self.counting now is."""
        self.counting = False
        if _config.osr_backedges is None or not self._simple_sig:
            return False
        from . import compiler
        if _config.background and _config.watch_seconds \
                and not compiler.get_compiler().is_compiler_thread():
            self.counting = "building"
            job = _Counting(self)
            if not compiler.get_compiler().submit(job):
                self.counting = False
            return self.counting
        return self._build_counting()

    def _build_counting(self) -> "Any":
        from .events import note_pause, record
        start = _clock()
        try:
            from ..errors import Unsupported
            from .osr import OsrEntries
            try:
                self.counting = OsrEntries(self)
            except Unsupported:
                return False              # explain() reports why from the lowering error
        except Exception:            # noqa: BLE001 - a compiler bug must not reach the program
            from .dispatch import STRICT
            if STRICT:
                raise
            return False
        seconds = _clock() - start
        record("compile", self.__qualname__, "", "interp", seconds, counting=True,
               osr_points=len(self.counting.points))
        note_pause(seconds)
        return self.counting


class _Counting:
    """A compiler-thread job: build a watched function's counting tier 0."""

    __slots__ = ("dispatcher", "__qualname__")

    def __init__(self, dispatcher: "Any") -> None:
        self.dispatcher = dispatcher
        self.__qualname__ = dispatcher.__qualname__

    def __call__(self) -> None:
        d = self.dispatcher
        try:
            d._build_counting()
        finally:
            if d.counting == "building":
                d.counting = False


def _has_loops(code) -> bool:
    """Does the code object jump backwards (a loop)? Nested code objects are not looked at:
    the frontend does not lower functions that define them."""
    backward = _backward_opcodes()
    raw = code.co_code
    return any(raw[i] in backward for i in range(0, len(raw), 2))


def _backward_opcodes() -> frozenset:
    global _BACKWARD
    if _BACKWARD is None:
        if sys.version_info[:2] in ((3, 11), (3, 12)):
            _BACKWARD = frozenset((134, 140))  # JUMP_BACKWARD(_NO_INTERRUPT): no import (~1 ms)
        else:
            import opcode
            _BACKWARD = frozenset(opcode.opmap[n] for n in
                                  ("JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT")
                                  if n in opcode.opmap)
    return _BACKWARD


_BACKWARD: "frozenset | None" = None


def _unchanged(fn, free: dict) -> bool:
    from ..frontend.resolve import unchanged
    return unchanged(fn, free)
