"""Watching: which cold calls of a tier="auto" function run native code or counting tier 0.

A function with loops is *watched* once one of its cold calls has taken
`config.watch_seconds`: a long call is what on-stack replacement is for, and counting tier 0
(Python from the untyped IR, with loop countdowns) is slower than CPython for short calls.
The counting tier 0 is lowered on the compiler thread (by the call itself when watch_seconds
is 0); until it is there, and for calls it cannot take (keywords, another arity, a free name
that now names another object), cold calls run the original function. A call given an
argument of `config.watch_size` (an int that large, an array of that many elements), or whose
`for` nests multiply out to that many iterations (runtime.loopwork), is predicted to be long
before it has run at all: it builds baseline code for its argument types
itself and runs it from its start (`_long_call`), so that even a function's first call runs
natively; where the baseline tier cannot take it, it lowers the counting tier 0 itself and
runs in it from its start, moving into native code by OSR.

Mixed into runtime.dispatch.Dispatcher; its state is `Dispatcher.counting`: None until the
first cold call, "watching", "building", then an OsrEntries or False. The shim asks
`cold_target` (runtime.shim.ColdDispatcher: cold calls run without this module) on every cold
call; once a call is predicted long it asks `_long_call` here, once one has taken
watch_seconds `_start_counting`.
"""

from _weakref import ref as _weakref
from time import perf_counter as _clock

from .config import config as _config

TYPE_CHECKING = False
if TYPE_CHECKING:                       # pragma: no cover - typing only
    from typing import Any


class Watching:
    """The watch policy of a Dispatcher, past its first decisions (see the module docstring)."""

    def _start_counting(self, now: bool = False) -> "Any":
        """A cold call of a function with loops has taken config.watch_seconds: lower it to
        counting tier 0, on the compiler thread under config.background (cold calls run the
        original function until it is there) unless watch_seconds is 0, which asks for it
        at the first call. `now`: the call about to run was given an argument of
        config.watch_size that the baseline tier could not take (runtime.watch._long_call)
        and runs counting tier 0 itself, so this thread lowers it.
        Returns what self.counting now is."""
        before, self.counting = self.counting, False
        try:
            if _config.osr_backedges is None or not self._simple_sig:
                return False
            from . import compiler
            if _config.background and _config.watch_seconds and not now \
                    and not compiler.get_compiler().is_compiler_thread():
                self.counting = "building"
                job = _Counting(self)
                if not compiler.get_compiler().submit(job):
                    self.counting = False
                return self.counting
            return self._build_counting()
        except BaseException:  # the program's (Ctrl-C, a handler's exception): asked again later
            self.counting = before
            raise

    def _long_call(self, args: tuple, kwargs: dict) -> "Any":
        """A cold call predicted long (config.watch_size) runs native code from its start:
        baseline code for its argument types (runtime.baseline.for_long_call), built by this
        thread and kept for the next such call, which runs it while the function's free
        names still name what they did when it was lowered (as counting tier 0 does).
        Returns its entry, or None where the baseline tier cannot take the call: it then runs
        counting tier 0 (lowered now, if the function is still only watched), whose loops
        can move into native code by OSR."""
        if (_config.osr_backedges is not None and self._simple_sig and not kwargs
                and len(args) == self._nparams):
            from . import baseline
            if baseline.ENABLED:
                code = baseline.for_long_call(self, args)
                if code is not None:
                    from ..errors import Unsupported
                    from ..frontend.resolve import unchanged
                    try:
                        ir = self.untyped_ir()
                    except Unsupported:      # another thread started the function anew
                        ir = None
                    if ir is not None and unchanged(self.py_func, ir):
                        from .tierup import watched
                        return watched(self, code)
        if self.counting == "watching":
            self._start_counting(now=True)
        return None

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
        except Exception as e:       # noqa: BLE001 - a compiler bug must not reach the program
            from ..errors import from_signal_handler
            from .dispatch import STRICT
            if STRICT or from_signal_handler(e):     # (the program's: see dispatch.specialise)
                raise
            return False
        seconds = _clock() - start
        record("compile", self.__qualname__, "", "interp", seconds, counting=True,
               osr_points=len(self.counting.points))
        note_pause(seconds)
        return self.counting


class _Counting:
    """A compiler-thread job: build a watched function's counting tier 0 (its dispatcher
    held weakly, as runtime.dispatch._Build's: a function dropped meanwhile is not lowered)."""

    __slots__ = ("dispatcher", "__qualname__")
    uses_llvm = False

    def __init__(self, dispatcher: "Any") -> None:
        self.dispatcher = _weakref(dispatcher)
        self.__qualname__ = dispatcher.__qualname__

    def __call__(self) -> None:
        d = self.dispatcher()
        if d is None:
            return
        try:
            d._build_counting()
        finally:
            if d.counting == "building":
                d.counting = False
