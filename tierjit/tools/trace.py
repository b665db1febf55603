"""`tierjit run --trace FILE.json`: the JIT's events in Chrome's trace-event format.

Opens in Perfetto (ui.perfetto.dev) and chrome://tracing. The format ("JSON Object Format" of
the Trace Event Format document): `{"traceEvents": [...], "displayTimeUnit": "ms"}`, times in
microseconds since tierjit's runtime was loaded.

- every compile is a complete event (`"ph": "X"`, with `dur`) on the thread that did it — the
  `tierjit-compiler` thread for background compiles — named `compile f(types)`, category the
  tier it built;
- tier-ups, OSR entries, deopts, give-ups and errors (and any kind added later) are instant
  events (`"ph": "i"`, thread scope) on the thread that recorded them;
- each function that left plain CPython gets a track of its own (a pseudo-thread named
  `tiers: f`) with one complete event per stretch of time spent in a tier;
- `thread_name` and `process_name` metadata events (`"ph": "M"`) name the tracks.
Event `args` hold the event's detail (front_ms, llvm_ms, line, op, reason...).
"""

from __future__ import annotations

import json
import os

from . import timeline

MAIN_THREAD = "MainThread"


def trace_events(evs=None, end: float | None = None) -> dict:
    """The trace as a JSON-ready dict."""
    from ..runtime import events
    evs = events.events() if evs is None else evs
    pid = os.getpid()
    tids: dict[str, int] = {MAIN_THREAD: 1}

    def tid(thread: str) -> int:
        return tids.setdefault(thread, len(tids) + 1)

    out: list[dict] = []
    for ev in evs:
        name = f"{ev.function}{ev.types}"
        args = {k: _plain(v) for k, v in ev.detail.items()}
        if ev.tier:
            args["tier"] = ev.tier
        if ev.kind in timeline.SPAN_KINDS:
            out.append({"name": f"{ev.kind} {name}", "cat": ev.tier or ev.kind, "ph": "X",
                        "ts": _us(ev.time - ev.seconds), "dur": _us(ev.seconds),
                        "pid": pid, "tid": tid(ev.thread), "args": args})
        else:
            out.append({"name": f"{ev.kind} {name}", "cat": ev.kind, "ph": "i", "s": "t",
                        "ts": _us(ev.time), "pid": pid, "tid": tid(ev.thread),
                        "args": args})
    for fn, tl in timeline.build(evs, end).items():
        if not tl.hot:
            continue
        track = tid(f"tiers: {fn}")
        for span in tl.tiers:
            out.append({"name": span.label, "cat": "tier", "ph": "X", "ts": _us(span.start),
                        "dur": _us(span.end - span.start), "pid": pid, "tid": track,
                        "args": {"function": fn}})
    meta = [{"name": "process_name", "ph": "M", "pid": pid, "tid": 0,
             "args": {"name": "tierjit run"}}]
    meta += [{"name": "thread_name", "ph": "M", "pid": pid, "tid": t, "args": {"name": n}}
             for n, t in tids.items()]
    return {"traceEvents": meta + out, "displayTimeUnit": "ms",
            "otherData": {"producer": "tierjit", "time_origin": "tierjit runtime loaded"}}


def write_trace(path: str) -> None:
    """Write the trace to `path` (atomically: a `.new` file renamed over it)."""
    data = trace_events()
    tmp = path + ".new"
    with open(tmp, "w") as f:
        json.dump(data, f)
    os.replace(tmp, path)


def _us(seconds: float) -> float:
    return round(seconds * 1e6, 3)


def _plain(value):
    """A JSON value for an event detail (details are str, numbers, bools or None)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)
