"""tierjit.stats(): the event log, per-function counters, the compiler thread and pauses."""

from __future__ import annotations

from typing import Any, TypedDict


class EventDict(TypedDict):
    """One event (runtime.events.Event.as_dict) as `tierjit.stats()["events"]` lists it."""

    seq: int
    time: float            # seconds since tierjit's runtime was loaded
    kind: str              # compile, tier-up, deopt, give-up, recompile, error
    function: str          # qualified name
    types: str             # the specialisation's argument types, "(int, float)"
    tier: str              # the tier the event is about: "opt", "interp", "python", "resume"
    thread: str            # name of the thread that did the work
    seconds: float         # how long the work took (0 for instantaneous events)
    detail: dict[str, Any]


class CompilerStats(TypedDict):
    started: bool          # the compiler thread exists (some function got hot)
    pending: int           # jobs queued or running
    jobs_done: int


class PauseStats(TypedDict):
    """JIT work done on the program's threads (synchronous compiles, resume functions,
    queueing); waiting for the GIL while the compiler thread runs Python is not included."""

    max_seconds: float
    total_seconds: float
    count: int


class Stats(TypedDict):
    events: list[EventDict]
    functions: dict[str, dict[str, Any]]     # qualified name -> Dispatcher.counters()
    compiler: CompilerStats
    pauses: PauseStats
    config: dict[str, object]


def stats() -> Stats:
    from . import compiler as _compiler
    from . import events
    from .config import config
    from .dispatch import dispatchers

    functions: dict[str, dict[str, Any]] = {}
    for d in dispatchers():
        name = d.__qualname__
        if name in functions:                 # two functions of one name: keep both
            name = f"{name}#{id(d):x}"
        functions[name] = d.counters()
    c = _compiler._compiler
    return Stats(
        events=[e.as_dict() for e in events.events()],
        functions=functions,
        compiler=CompilerStats(started=c is not None and c.started,
                               pending=0 if c is None else c.pending(),
                               jobs_done=0 if c is None else c.jobs_done),
        pauses=PauseStats(**events.pauses()),   # type: ignore[typeddict-item]
        config=config.as_dict(),
    )
