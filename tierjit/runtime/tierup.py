"""Tier-up out of running baseline code: a long call moves into LLVM's code mid-loop.

A call that runs baseline code from its start — a cold call predicted long (runtime/watch.py)
or a counting tier 0 call that moved into a baseline OSR entry (runtime/osr.py) — would stay
in baseline code until it returns, at a few times LLVM's time per iteration. So such a call
is watched: once it has run `config.tierup_seconds`, the compiler thread builds LLVM's OSR entry
at each loop header of the baseline code (ir/osr.py: the function from that header on, as a
function of the values live there), typed with those values' types. When an entry is ready,
its loop's *exit word* is set; the loop's next signal poll (every 1024 back edges) reads it
and leaves through the deopt stub of the header's frame state (backends/stencils: the `poll`
stencil). The deopt hook boxes the live values, as for any deopt, and calls the LLVM entry
with them instead of tier 0: it runs the rest of the call, and its result is the call's (the
`osr` event, with `from_tier="baseline"`). The baseline frame stays below it on the C stack.

The entry is built from the baseline code's own typed and optimised IR (no typing on the
program's thread), so its frame state and the entry name the same values: the entry takes those
live at the header, a union-typed one (`float | np.float64`) as such, and makes a header
parameter that nothing reads (it is not in the frame state) itself. Values that do not fit
the entry's types (checked at the exit) resume in tier 0, correct as any deopt, and close the
exit for good. Only the watched call's own frame leaves (see Climb).

A self-call of baseline code leaves too, once LLVM's code has replaced that code in the
dispatch slot (`superseded`): tier 0 makes the call, through the slot.

Analogue: HotSpot's and V8's tier-up OSR from baseline code (C1, Sparkplug/Maglev) into the
optimising tier's OSR entry, entered at a loop back edge.
"""

from __future__ import annotations

from _thread import RLock
from time import perf_counter as _clock

from .config import config

TYPE_CHECKING = False
if TYPE_CHECKING:                       # pragma: no cover - typing only
    from typing import Any

    from ..backends.stencils.code import BaselineCode, LoopExit


def watched(dispatcher: Any, code: BaselineCode) -> Any:
    """What a call of baseline `code` (of a tier="auto" dispatcher) that may run long calls:
    its entry, through a Climb that starts the tier-up once the call has run tierup_seconds."""
    if not code.exits or dispatcher.tier != "auto" or config.tierup_seconds is None:
        return code.entry_callable
    climb = code.climb
    if climb is None:
        climb = code.climb = Climb(dispatcher, code)
    return climb


def forget_queued(dispatcher: Any) -> None:
    """After a fork: the child has no compiler thread, so a queued tier-up never runs; the
    next long call asks again."""
    osr = getattr(dispatcher.counting, "baseline", {})       # OSR entries' baseline code
    for code in [*dispatcher.__dict__.get("_baseline_codes", {}).values(), *osr.values()]:
        if code is not None and code.climb is not None:
            code.climb.asked = False


def superseded(dispatcher: Any, arg_types: tuple, by_llvm: bool = True) -> None:
    """LLVM's code for arg_types is in the dispatch slot: the self-calls of running baseline
    code for them leave it (its calls exit), and tier 0 makes each such call through the
    slot, into LLVM's code. Not `by_llvm`: that code was given up, the exit closes again."""
    for name in ("_baseline_codes", "_baseline_cell_code"):
        code = dispatcher.__dict__.get(name, {}).get(arg_types)
        if code is not None and code.calls_exit is not None:
            if by_llvm:
                code.calls_exit.open()
            else:
                code.calls_exit.close()


class Climb:
    """The calls of one baseline code that may tier up (see the module docstring).

    A loop's exit is open only while such a call runs, and only for that call's own frame
    (the word holds the running calls' count its body sees): the code may also run in frames
    nested in it (a recursion, a call through another baseline code's cell), and a frame
    that leaves hands its result to its caller as a deopt would, so that the caller finishes
    in tier 0."""

    __slots__ = ("dispatcher", "code", "running", "moved", "asked", "ready", "depth", "lock")

    def __init__(self, dispatcher: Any, code: BaselineCode) -> None:
        self.dispatcher, self.code = dispatcher, code
        self.running = 0               # calls of the code in progress through this object
        self.moved = 0                 # of those, the calls that left it by a loop exit
        self.asked = False             # a tier-up job is queued, or has run
        self.ready: list[LoopExit] = []    # the exits whose LLVM entry is built
        self.depth = 0                 # the running calls' count the first call's body sees
        # running, depth and the words: with the compiler; reentrant, as a finalizer run by a
        # collection in build() may call the function on the compiler thread
        self.lock = RLock()

    def __call__(self, *args: Any) -> Any:
        with self.lock:
            if not self.running:
                self.depth = self.code.body_depth()
                for ex in self.ready:
                    ex.open(self.depth)
            self.running += 1
        try:
            if not self.asked:
                self._ask()
            return self.code.entry_callable(*args)
        finally:
            with self.lock:
                self.running -= 1
                if not self.running:
                    for ex in self.ready:
                        ex.close()

    def _ask(self) -> None:
        """Queue the tier-up for when this call has run tierup_seconds; with compiles in the
        calling thread (background=False) only tierup_seconds=0 builds: at once, by this
        call, before its baseline code runs."""
        from . import compiler
        c = compiler.get_compiler()
        self.asked = True
        if config.background and not c.is_compiler_thread():
            self.asked = c.submit_at(_clock() + config.tierup_seconds, _TierUp(self))
        elif not config.tierup_seconds:
            self.build()

    def build(self) -> None:
        """On the compiler thread: LLVM's OSR entry at each loop of the code, each loop's
        exit opened as soon as its entry is ready."""
        from ..ir.loops import natural_loops
        from ..ir.osr import osr_points
        code = self.code
        points = {p.header: p for p in osr_points(code.fn)}
        # innermost loops first: they make the most back edges, so their polls come due
        bodies = natural_loops(code.fn).values()
        depth = {h: sum(b.id == h for body in bodies for b in body) for h in code.exits}
        for header in sorted(code.exits, key=lambda h: -depth[h]):
            if self.running <= self.moved:     # no call is in the baseline code any more
                return
            point = points.get(header)
            if point is not None:
                self._open(point, code.exits[header])

    def _open(self, point: Any, ex: LoopExit) -> None:
        from ..backends.stencils.code import STAY
        from ..backends.stencils.frame import type_fits
        from ..ir.osr import OsrPoint, osr_function
        from ..types.infer import Typed
        from .dispatch import Specialisation, _fmt_types
        from .events import record
        d, code = self.dispatcher, self.code
        live = code.frame_states[ex.state].live
        at = {v: k for k, v in enumerate(live)}
        # (a header parameter nothing reads is not in the frame state: the entry makes one)
        point = OsrPoint(point.header, tuple(v for v in point.live if v in at), point.line)
        picks = [at[v] for v in point.live]
        types = tuple(v.type for v in point.live)
        spec = Specialisation(types)
        d.build_version(spec, lambda: Typed(osr_function(code.fn, point), code.return_type),
                        (d, "osr", point.header, types), osr_line=point.line,
                        from_tier="baseline")
        if not spec.runs_native:
            return
        entry = spec.native.entry_callable
        name, shown = d.__qualname__, _fmt_types(types)

        def leave(values: list) -> Any:
            args = [values[k] for k in picks]
            if not spec.runs_native or not all(map(type_fits, args, types)):
                with self.lock:              # for good: tier 0 resumes this call
                    code.leaving.pop(ex.state, None)
                    if ex in self.ready:
                        self.ready.remove(ex)
                    ex.close()
                return STAY
            record("osr", name, shown, spec.tier, owner=d, line=point.line,
                   header=point.header, from_tier="baseline")
            self.moved += 1
            ex.taken += 1
            try:
                return entry(*args)
            finally:
                self.moved -= 1

        with self.lock:
            code.leaving[ex.state] = leave    # before the word: a poll reads the word first
            self.ready.append(ex)
            if self.running:
                ex.open(self.depth)


class _TierUp:
    """A compiler-thread job, due tierup_seconds after a watched call began: the tier-up, if a
    call of the code is still running (else the next call asks again)."""

    __slots__ = ("climb", "__qualname__")

    def __init__(self, climb: Climb) -> None:
        self.climb = climb
        self.__qualname__ = climb.dispatcher.__qualname__

    def __call__(self) -> None:
        climb = self.climb
        if not climb.running:
            climb.asked = False
            return
        climb.build()
