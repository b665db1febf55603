"""Where the main thread spends its time, per jitted function and tier, by sampling.

How it measures (the `--report` column "time per tier"): a profiling timer (`setitimer`,
ITIMER_PROF, every INTERVAL seconds of process CPU time) sends SIGPROF; CPython runs the
Python-level handler on the main thread at its next check for signals, with the frame the main
thread was running. Native tierjit code checks for signals in its loops (every 1024 back
edges), so samples land inside long native calls too. Each sample is credited with the
wall-clock time since the previous sample (capped at MAX_WEIGHT samples' worth, so a sleep or a
long C call is not credited to whatever runs after it) and classified by the frames:

- the innermost frame that runs a jitted function's own code: that function, tier "python"
  (plain CPython: the cold phase, or calls native code did not take), including the time in
  anything it calls that is not jitted;
- the innermost frame that runs tier-0 code tierjit generated: that function, "interp";
- native code has no Python frame: when the innermost frame is stopped at a call whose callee
  is a jitted function with native code installed, the sample goes to that function and the
  tier of its installed specialisation ("opt", "baseline"...). Native code called from native
  code is credited to the outermost native function;
- anything else: not in a jitted function ("other").

A sample is a handful of dictionary lookups and, for an unfamiliar call site, one disassembly
(cached); at INTERVAL = 1 ms that is well under 1% of the run.
"""

from __future__ import annotations

import dis
import signal
import sys
import time
from collections import defaultdict

INTERVAL = 0.001
MAX_WEIGHT = 10          # a sample stands for at most this many intervals
OTHER = ("", "other")
_FunctionType = type(lambda: None)


class Sampler:
    """Samples the main thread (see the module docstring); `times` is the result."""

    def __init__(self, interval: float = INTERVAL) -> None:
        self.interval = interval
        self.times: dict[tuple[str, str], float] = defaultdict(float)   # (function, tier)
        self.samples = 0
        self.seconds = 0.0
        self._codes: dict = {}            # code object -> (function name, tier)
        self._codes_at = -1.0
        self._callees: dict = {}          # (code, offset) -> how to find the callee, or None
        self._last = 0.0
        self._previous = None

    # -- starting and stopping --------------------------------------------------------------
    def start(self) -> None:
        if not hasattr(signal, "setitimer"):
            return
        self._previous = signal.signal(signal.SIGPROF, self._on_signal)
        self._last = time.perf_counter()
        signal.setitimer(signal.ITIMER_PROF, self.interval, self.interval)

    def stop(self) -> None:
        if self._previous is None:
            return
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
        signal.signal(signal.SIGPROF, self._previous)
        self._previous = None

    # -- one sample -------------------------------------------------------------------------
    def _on_signal(self, signum, frame) -> None:
        try:
            now = time.perf_counter()
            weight = min(now - self._last, MAX_WEIGHT * self.interval)
            self._last = now
            self.times[self.classify(frame)] += weight
            self.samples += 1
            self.seconds += weight
        except BaseException:       # noqa: BLE001 - a sample must never disturb the program
            pass

    def classify(self, frame) -> tuple[str, str]:
        """(function, tier) for the main thread stopped at `frame` (see the module docstring)."""
        if frame is None:
            return OTHER
        codes = self._code_map()
        native = self._native_callee(frame)
        if native is not None:
            return native
        f = frame
        while f is not None:
            hit = codes.get(f.f_code)
            if hit is not None:
                return hit
            f = f.f_back
        return OTHER

    def _code_map(self) -> dict:
        """Code object -> (function, tier) of every jitted function, rebuilt every 50 ms
        (tier-0 code appears as functions are compiled)."""
        now = time.perf_counter()
        if now - self._codes_at > 0.05:
            from ..runtime.shim import registered
            codes = {}
            # the dispatchers as they are, cold ones too: a signal handler must not make one
            # whole (it may have interrupted that very thing, which holds its lock)
            for d in registered():
                name = d.__qualname__
                codes[d.py_func.__code__] = (name, "python")
                counting = getattr(getattr(d, "counting", None), "tier0", None)
                specs = list(getattr(d, "specs", {}).values())
                for f in [counting] + [s.tier0 for s in specs] + \
                        [r for s in specs for r in list(s.resumes.values())]:
                    code = getattr(f, "__code__", None)
                    if code is not None:
                        codes[code] = (name, "interp")
            self._codes, self._codes_at = codes, now
        return self._codes

    def _native_callee(self, frame) -> tuple[str, str] | None:
        """When `frame` is stopped in a call of a jitted function running native code."""
        key = (frame.f_code, frame.f_lasti)
        how = self._callees.get(key, False)
        if how is False:
            how = self._callees[key] = _callee_loader(frame.f_code, frame.f_lasti)
        if how is None:
            return None
        try:
            obj = _load(frame, how)
        except Exception:           # noqa: BLE001 - unbound name, failing attribute
            return None
        return native_tier(obj)


def native_tier(obj) -> tuple[str, str] | None:
    """(function, tier) when obj is a jitted function whose dispatch slot holds native code."""
    from ..runtime.dispatch import dispatcher_of
    from ..runtime.shim import is_shim
    d = dispatcher_of(obj)
    if d is None or is_shim(obj) or type(obj) is _FunctionType:
        return None                      # no native code in the slot: a Python frame follows
    for spec in list(d.specs.values()):
        if spec.installed:
            return d.__qualname__, spec.tier
    return None


# -- finding the callee of a call instruction ---------------------------------------------------

_LOADS = {"LOAD_GLOBAL": "global", "LOAD_NAME": "name", "LOAD_FAST": "local",
          "LOAD_DEREF": "local", "LOAD_CLASSDEREF": "local"}
_ATTRS = ("LOAD_ATTR", "LOAD_METHOD")


def _callee_loader(code, lasti: int):
    """How to load the callee of the CALL at `lasti`: a name and attribute path, or None when
    the instruction is not a call or its callee is not a plain name (or name.attr...)."""
    instrs = _instructions(code)
    at = next((i for i, ins in enumerate(instrs) if ins.offset == lasti), None)
    if at is None or instrs[at].opname not in ("CALL", "CALL_FUNCTION", "CALL_METHOD"):
        return None
    argc = instrs[at].arg or 0
    i = at - 1
    if i >= 0 and instrs[i].opname == "PRECALL":
        i -= 1
    # Walk back over the arguments: the callee is pushed by the instruction at which the
    # stack effect since it first covers the arguments plus one.
    depth = 0
    while i >= 0:
        ins = instrs[i]
        if ins.opname.startswith(("JUMP", "POP_JUMP", "FOR_ITER", "RETURN")):
            return None                  # control flow among the arguments: give up
        try:
            depth += dis.stack_effect(ins.opcode, ins.arg)
        except ValueError:
            return None
        if depth >= argc + 1:
            break
        if ins.is_jump_target:
            return None
        i -= 1
    else:
        return None
    attrs = []
    while i >= 0 and instrs[i].opname in _ATTRS:
        attrs.append(instrs[i].argval)
        i -= 1
    if i < 0 or instrs[i].opname not in _LOADS:
        return None
    return _LOADS[instrs[i].opname], instrs[i].argval, tuple(reversed(attrs))


_instr_cache: dict = {}


def _instructions(code) -> list:
    found = _instr_cache.get(code)
    if found is None:
        found = _instr_cache[code] = list(dis.get_instructions(code))
    return found


def _load(frame, how):
    kind, name, attrs = how
    if kind == "local":
        obj = frame.f_locals[name]
    elif kind == "name" and name in frame.f_locals:
        obj = frame.f_locals[name]
    elif name in frame.f_globals:
        obj = frame.f_globals[name]
    else:
        obj = frame.f_builtins[name]
    for a in attrs:
        obj = getattr(obj, a)
    return obj


def sampled_main_thread() -> bool:
    """Samples can be taken here (a POSIX timer; the main thread runs the handler)."""
    return hasattr(signal, "setitimer") and sys.platform != "win32"
