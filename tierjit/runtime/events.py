"""Events: what the JIT did and when — compiles, tier-ups, deopts, give-ups — as a log.

Analogue: the JVM's -XX:+PrintCompilation and V8's --trace-opt / --trace-deopt, kept in memory
so that `tierjit.stats()` can return them and tests can assert on them. `TIERJIT_LOG=1` (or
`tierjit.config.log = True`) also prints one line per event to stderr as it happens.

The log is bounded (the newest MAX_EVENTS are kept) so a program that deoptimises millions of
times does not grow without limit; counters in the dispatchers keep the totals.

Main-thread pauses: JIT work done by a thread other than the compiler thread (a synchronous
compile, building a resume function at a deopt, queueing a compile) is a pause of that thread;
`note_pause` keeps the longest and the total. Waiting for the GIL while the compiler thread runs
Python is not seen here — bench/tiering.py measures pauses from the outside.
"""

import itertools
import sys
import time
from _collections import deque         # not `collections`: imported on a program's thread
from _weakref import ref as _weakref

from .config import config

# Imported by the first hot call, on the program's thread: no typing (~8 ms) at run time.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

    from .stats import EventDict

    Kind = Literal["compile", "tier-up", "osr", "deopt", "give-up", "recompile", "error"]

MAX_EVENTS = 10_000
COMPILER_THREAD = "tierjit-compiler"

_T0 = time.perf_counter()


class Event:
    """One thing the JIT did: analogous to a line of -XX:+PrintCompilation output."""

    __slots__ = ("seq", "time", "kind", "function", "types", "tier", "thread", "seconds",
                 "detail", "owner")

    def __init__(self, kind: str, function: str, types: str, tier: str, seconds: float,
                 detail: "dict[str, Any]", owner: object = None) -> None:
        import threading
        self.seq = next(_seq)
        # the dispatcher the event is about, where one is named, held weakly: functions of
        # one qualname (a closure made again, a module reloaded) are told apart (explain),
        # and a dispatcher made where a dropped one was is not taken for it (as by id())
        self.owner = None if owner is None else _weakref(owner)
        self.time = time.perf_counter() - _T0
        self.kind, self.function, self.types, self.tier = kind, function, types, tier
        self.thread = threading.current_thread().name
        self.seconds, self.detail = seconds, detail

    def as_dict(self) -> "EventDict":
        return {"seq": self.seq, "time": self.time, "kind": self.kind,
                "function": self.function, "types": self.types, "tier": self.tier,
                "thread": self.thread, "seconds": self.seconds, "detail": dict(self.detail)}

    def line(self) -> str:
        """The TIERJIT_LOG line: `tierjit +1.234s compile   f(int) opt 3.1ms [thread] ...`."""
        parts = [f"tierjit +{self.time:.3f}s {self.kind:<9} {self.function}{self.types}"]
        if self.tier:
            parts.append(self.tier)
        if self.seconds:
            parts.append(f"{self.seconds * 1e3:.2f}ms")
        parts.append(f"[{self.thread}]")
        parts += [f"{k}={v}" for k, v in self.detail.items()]
        return " ".join(parts)

    def __repr__(self) -> str:
        return f"<tierjit event {self.line()}>"


_seq = itertools.count()
_log: "deque[Event]" = deque(maxlen=MAX_EVENTS)
_pause = {"max_seconds": 0.0, "total_seconds": 0.0, "count": 0}


def record(kind: "Kind", function: str, types: str = "", tier: str = "", seconds: float = 0.0,
           owner: object = None, **detail: "Any") -> "Event":
    """Append an event to the log (and print it when logging is on); `owner`: the
    dispatcher it is about."""
    ev = Event(kind, function, types, tier, seconds, detail, owner)
    _log.append(ev)
    if config.log:
        try:
            print(ev.line(), file=sys.stderr, flush=True)
        except (OSError, ValueError):     # a closed stderr must not break the program
            pass
    return ev


def note_pause(seconds: float) -> None:
    """JIT work done outside the compiler thread, on a thread the program was using."""
    from .compiler import get_compiler
    if get_compiler().is_compiler_thread():
        return
    _pause["count"] += 1
    _pause["total_seconds"] += seconds
    if seconds > _pause["max_seconds"]:
        _pause["max_seconds"] = seconds


def events(kind: str | None = None) -> "list[Event]":
    """The recorded events, oldest first (only those of `kind` if given)."""
    return [e for e in list(_log) if kind is None or e.kind == kind]


def pauses() -> dict[str, float]:
    return dict(_pause)


def clear() -> None:
    """Forget the recorded events and pauses (tests; counters in dispatchers stay)."""
    _log.clear()
    _pause.update(max_seconds=0.0, total_seconds=0.0, count=0)
