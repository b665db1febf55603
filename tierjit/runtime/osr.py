"""OSR: a call that is running a hot loop in tier 0 moves into native code mid-loop.

A tier="auto" function with loops runs its cold calls in *counting tier 0*: Python generated
from the untyped IR (frontend output, no type inference: nothing slow on the program's thread)
with a countdown at every loop header (backends.pyemit, `OsrHook`). When a countdown runs out
the loop calls `OsrEntries.poll(header, *live)` with the values live at the header:

    first poll at a header, for these live types   queue a build of the OSR entry (ir.osr:
                                                   the function from that header on, typed
                                                   with the live values' types) on the
                                                   compiler thread; the loop goes on in Python
    later polls, native code ready                 call it with the live values: it runs the
                                                   rest of the call natively and its result is
                                                   the call's result (the "osr" event)
    build failed / too many entries                the loop goes on in Python

The compiler thread builds the entry's baseline code first (backends/stencils: milliseconds,
most of it typing and the passes) and then its LLVM code; a poll takes whichever is ready,
the LLVM code when both are. A call that moved into baseline code finishes there: only later
calls (and later polls) get the LLVM code. A poll that finds its code still being built yields
the GIL before the loop goes on, so the compiler's Python work is not slowed to half speed by
the very loop it is compiling.

Native OSR code deoptimises like any native code, into tier 0 generated from the OSR function
itself, so a failing guard after the transfer still ends exactly as CPython would.

Counting tier 0 bakes in what the free names of the function named when it was lowered (the
builtins, math functions and jitted callees it calls), so each cold call checks those names
still refer to the same objects (`frontend.resolve.unchanged`) and runs the original function
if one does not. Analogue: V8's Ignition back-edge counters and OSR into TurboFan code.
"""

from __future__ import annotations

import sys
from time import perf_counter as _clock
from time import sleep as _sleep

from ..backends.pyemit import NOT_READY, OsrHook, compile_tier0
from ..ir.osr import OsrPoint, osr_function, osr_points
from .config import config
from .events import note_pause, record

TYPE_CHECKING = False
if TYPE_CHECKING:                       # pragma: no cover - typing only
    from typing import Any

    from .dispatch import Dispatcher, Specialisation

MAX_ENTRIES = 4          # OSR entries per function (live types seen at its loop headers)


class OsrEntries:
    """The counting tier 0 of one dispatcher and the OSR code built for its loops."""

    def __init__(self, dispatcher: "Dispatcher") -> None:
        fn = dispatcher.untyped_ir()
        self.dispatcher = dispatcher
        self.ir = fn
        self.points: dict[int, OsrPoint] = {p.header: p for p in osr_points(fn)}
        self.entries: dict[tuple, "Specialisation"] = {}
        self.baseline: dict[tuple, Any] = {}     # (header, types) -> baseline code, when built
        self.typing: set[int] = set()            # headers whose live values a job is typing
        self.transfers = 0
        # Per argument signature of the cold calls (`signature`): the headers whose OSR entry
        # could not be built in such calls. Once every loop's has failed and no such call
        # has moved into native code, counting tier 0 gives them nothing: it is slower than
        # the original function (1.8x on a loop of unions of int and np.int32), so their
        # cold calls run that function from then on (`hopeless`, runtime.shim.cold_target).
        # `current` is the signature of the cold call that last started counting tier 0.
        self.current: tuple = ()
        self.failed: dict[tuple, set[int]] = {}
        self.moved: set[tuple] = set()
        self.hopeless: set[tuple] = set()
        every = config.osr_backedges
        self.tier0 = compile_tier0(fn, name=dispatcher.__name__,
                                   osr=OsrHook(list(self.points.values()), self.poll,
                                               every if every is not None else 2**62))
        self.tier0.__qualname__ = dispatcher.__qualname__

    def poll(self, header: int, *live: Any) -> Any:
        """Called by counting tier 0 at a loop header (see the module docstring)."""
        from . import compiler, dispatch
        d = self.dispatcher
        background = config.background and not compiler.get_compiler().is_compiler_thread()
        if dispatch._type_of_value is None and background:
            # typing the values would import the type lattice here: let the compiler thread,
            # once per header (polls come every osr_backedges iterations meanwhile)
            if header not in self.typing:
                self.typing.add(header)
                self._submit(_OsrBuild(self, header, None, live))
            return _waiting()
        types = tuple(dispatch._types_of(live))
        spec = self.entries.get((header, types))
        if spec is None:
            spec = self._new_entry(header, types)
            if spec is None:
                return self._failed(header)
            if background:
                self._submit(_OsrBuild(self, header, spec))
                return _waiting()
            try:
                self.build(header, spec)
            except BaseException:    # the program's (Ctrl-C, a handler's): a later poll
                self.entries.pop((header, types), None)      # builds it again
                raise
        if spec.runs_native:
            code, tier = spec.native, spec.tier
        else:
            code, tier = self.baseline.get((header, types)), "baseline"
            if code is None:
                return _waiting() if not spec.built else self._failed(header)
        if not self._current(spec):
            return _waiting()
        self.transfers += 1
        self.moved.add(self.current)
        self.hopeless.discard(self.current)
        record("osr", d.__qualname__, dispatch._fmt_types(types), tier, owner=d,
               line=self.points[header].line, header=header)
        if tier == "baseline":             # whose loops may move on into LLVM's code
            from .tierup import watched
            return watched(d, code)(*live)
        return code.entry_callable(*live)

    def _guard(self, spec: "Specialisation", fn: Any) -> None:
        """The names check of the entry's code, made with it (while the callees it reached
        still have the IR it was made from)."""
        if spec.guard is None:
            from .names import NameGuard
            spec.guard = NameGuard(self.dispatcher, fn)

    def _current(self, spec: "Specialisation") -> bool:
        """Do the free names that the entry's code reached (its callees' too: the call's
        start checked only the function's own) still name what it baked in? If not, those
        whose names changed start anew (runtime/names.py), and the loop goes on in tier 0."""
        guard = spec.guard
        return guard is None or guard.current() or guard.settle()

    def _failed(self, header: int) -> Any:
        """No native code for this header's loop: the loop goes on in Python (see `failed`)."""
        sig = self.current
        failed = self.failed.setdefault(sig, set())
        failed.add(header)
        if sig not in self.moved and sig not in self.hopeless \
                and failed >= self.points.keys():
            self.hopeless.add(sig)
            record("give-up", self.dispatcher.__qualname__, tier="interp",
                   owner=self.dispatcher, reason="no OSR entry of its loops could be built: "
                   "its cold calls of these argument types run as CPython")
        return NOT_READY

    def _new_entry(self, header: int, types: tuple) -> "Specialisation | None":
        from .dispatch import Specialisation
        if any(t is None for t in types) or len(self.entries) >= MAX_ENTRIES:
            return None
        spec = self.entries.setdefault((header, types), Specialisation(types))
        if spec.requested:
            return spec
        spec.requested = True
        return spec

    def _submit(self, job: "_OsrBuild") -> None:
        from . import compiler
        start = _clock()
        if job.spec is not None:
            job.spec.queued_at = start
        compiler.get_compiler().submit(job)
        note_pause(_clock() - start)

    def build(self, header: int, spec: "Specialisation") -> None:
        """Type, optimise and compile the OSR entry at `header` for spec's live types."""
        d = self.dispatcher
        point = self.points[header]
        d.build_version(spec, lambda: osr_function(d.untyped_ir(), point),
                        (d, "osr", header, spec.arg_types), osr_line=point.line)
        if spec.typed is not None:
            self._guard(spec, spec.typed.fn)

    def build_baseline(self, header: int, spec: "Specialisation") -> None:
        """Baseline code for the OSR entry at `header` (see the module docstring), from its
        own typed and optimised IR; it resumes in its own tier 0 and is dropped after
        `max_deopts` deopts. Nothing when the baseline tier cannot take it."""
        from ..backends.stencils.code import compile_baseline
        from ..errors import Unsupported
        from ..passes.pipeline import optimise
        from ..types.infer import infer
        from .dispatch import STRICT, _fmt_types
        d = self.dispatcher
        point = self.points[header]
        key = (header, spec.arg_types)
        start = _clock()
        try:
            typed = infer(osr_function(d.untyped_ir(), point), spec.arg_types,
                          key=(d, "osr", header, spec.arg_types))
            typed.fn = optimise(typed.fn, spec.avoid)
            code = compile_baseline(d, spec, typed, compile_tier0(typed.fn, name=d.__name__),
                                    python_in_loops=False)
        except Unsupported:
            return
        except Exception as e:   # noqa: BLE001 - a compiler bug must not reach the program
            from ..errors import from_signal_handler
            if STRICT or from_signal_handler(e):     # (the program's: see dispatch.specialise)
                raise
            record("error", d.__qualname__, _fmt_types(spec.arg_types), "baseline",
                   detail=f"baseline OSR build failed: {type(e).__name__}: {e}")
            return
        code.keepalive[0].on_give_up = lambda: self.baseline.pop(key, None)
        self._guard(spec, typed.fn)
        self.baseline[key] = code
        record("compile", d.__qualname__, _fmt_types(spec.arg_types), "baseline",
               _clock() - start, osr_line=point.line,
               baseline_us=round(code.compile_seconds * 1e6, 1))


def _waiting() -> Any:
    """NOT_READY for a loop whose native code is being built: the loop goes on in Python, but
    first lets the compiler thread have the GIL (CPython hands it back within the switch
    interval). Both are busy in Python while the compiler types, optimises and selects
    stencils; without this they would take turns, and the build would take twice as long."""
    _sleep(0)
    return NOT_READY


def signature(args: tuple) -> tuple:
    """A cold call's argument signature as far as a give-up goes (OsrEntries.hopeless): the
    arguments' classes, an array's dtype and number of dimensions too. (Cheap: it is taken
    at every cold call counting tier 0 runs.)"""
    np = sys.modules.get("numpy")
    nd = np.ndarray if np is not None else None
    return tuple((a.dtype, a.ndim) if type(a) is nd else type(a) for a in args)


class _OsrBuild:
    """A compiler-thread job: build one OSR entry (typing the live values first if given)."""

    __slots__ = ("entries", "header", "spec", "live", "__qualname__")

    def __init__(self, entries: OsrEntries, header: int, spec: "Specialisation | None",
                 live: tuple | None = None) -> None:
        self.entries, self.header, self.spec, self.live = entries, header, spec, live
        self.__qualname__ = entries.dispatcher.__qualname__

    def __call__(self) -> None:
        spec = self.spec
        if spec is None:
            from .dispatch import _types_of
            types = tuple(_types_of(self.live))
            self.live = None
            spec = self.entries._new_entry(self.header, types)
            self.entries.typing.discard(self.header)
        # polls may queue the same entry twice before the first job has typed its values
        if spec is not None and not spec.built:
            from .baseline import ENABLED
            if ENABLED and (self.header, spec.arg_types) not in self.entries.baseline:
                self.entries.build_baseline(self.header, spec)
            self.entries.build(self.header, spec)
