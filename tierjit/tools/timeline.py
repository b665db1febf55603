"""The JIT's events as a timeline per function: tier spans, compile spans and marks.

Shared by the trace (tools/trace.py) and the plot (tools/plot.py). Times are seconds since
tierjit's runtime was loaded (runtime.events._T0), as in the events. A compile event is recorded
when the build ends and carries its duration, so its span is [time - seconds, time].

A function's tier over time is read off its events: "python" (plain CPython) from the start;
"interp" from a compile of its counting tier 0 (cold calls that count loop iterations for OSR);
the event's tier at each tier-up (native code installed in the dispatch slot) and give-up (native
code dropped). With several specialisations this is the tier of the one most recently installed
or dropped. Marks are the instantaneous events: tier-up, osr, deopt, give-up, error, and any kind
added later.
"""

from __future__ import annotations

from dataclasses import dataclass, field

SPAN_KINDS = ("compile", "recompile")        # events with a duration


@dataclass
class Span:
    """A stretch of time: a compile on some thread, or a function in one tier."""

    start: float
    end: float
    label: str                  # the tier
    thread: str = ""
    detail: dict = field(default_factory=dict)
    types: str = ""


@dataclass
class Mark:
    """An instantaneous event: analogous to a marker on a profiler's timeline."""

    time: float
    kind: str
    tier: str
    thread: str
    types: str
    detail: dict


@dataclass
class FunctionTimeline:
    name: str
    tiers: list[Span] = field(default_factory=list)
    compiles: list[Span] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)

    @property
    def hot(self) -> bool:
        """Something happened to it: compiled, or more than plain CPython."""
        return bool(self.compiles) or any(s.label != "python" for s in self.tiers)


def now() -> float:
    import time

    from ..runtime import events
    return time.perf_counter() - events._T0


def build(evs=None, end: float | None = None) -> dict[str, FunctionTimeline]:
    """Timelines of every function that has events, in order of their first event."""
    from ..runtime import events
    evs = events.events() if evs is None else evs
    end = now() if end is None else end
    lines: dict[str, FunctionTimeline] = {}
    current: dict[str, tuple[float, str]] = {}     # function -> (since, tier)

    def switch(fn: str, at: float, tier: str) -> None:
        since, old = current.get(fn, (0.0, "python"))
        if tier == old:
            return
        if at > since:
            lines[fn].tiers.append(Span(since, at, old))
        current[fn] = (at, tier)

    for ev in evs:
        tl = lines.setdefault(ev.function, FunctionTimeline(ev.function))
        if ev.kind in SPAN_KINDS:
            tl.compiles.append(Span(ev.time - ev.seconds, ev.time, ev.tier, ev.thread,
                                    dict(ev.detail), ev.types))
            if ev.detail.get("counting") and current.get(ev.function, (0, "python"))[1] == \
                    "python":
                switch(ev.function, ev.time, "interp")
            continue
        tl.marks.append(Mark(ev.time, ev.kind, ev.tier, ev.thread, ev.types, dict(ev.detail)))
        if ev.kind in ("tier-up", "give-up") and ev.tier:
            switch(ev.function, ev.time, ev.tier)
    for fn, (since, tier) in current.items():
        lines[fn].tiers.append(Span(since, max(end, since), tier))
    for fn, tl in lines.items():
        if not tl.tiers:
            tl.tiers.append(Span(0.0, end, "python"))
    return lines
