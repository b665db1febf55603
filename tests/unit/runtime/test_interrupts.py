"""Ctrl-C, or an exception a Python signal handler raises, landing in the JIT's own work on
the program's thread (a compile, the hot call's request, a long call's baseline build,
counting tier 0, an OSR entry, the dispatch slot's switch): it reaches the program as under
CPython, and a later call builds what was cut short (docs/tiering.md, after "Ctrl-C in native
code"). Recursions going straight are test_straight.py's."""

from __future__ import annotations

import contextlib
import signal
import sys

import pytest
from test_names import module, native

import tierjit
from tierjit.runtime.dispatch import dispatcher_of


class Alarm(Exception):
    """What the SIGALRM handler of interrupted_at raises (a timeout's, say)."""


@contextlib.contextmanager
def interrupted_at(function: str, by: str = "ctrl-c", module: str = "tierjit"):
    """Ctrl-C (KeyboardInterrupt), or a signal handler's exception (`by="handler"`: Alarm),
    arriving as this thread calls the JIT's `function` (of a file whose path has `module`);
    the block must raise it."""
    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_name == function \
                and module in frame.f_code.co_filename:
            sys.setprofile(None)
            signal.raise_signal(signal.SIGINT if by == "ctrl-c" else signal.SIGALRM)

    def handler(signum, frame):
        raise Alarm

    saved = signal.signal(signal.SIGALRM, handler)
    sys.setprofile(profile)
    try:
        with pytest.raises(KeyboardInterrupt if by == "ctrl-c" else Alarm):
            yield
    finally:
        sys.setprofile(None)
        signal.signal(signal.SIGALRM, saved)


@pytest.fixture
def lenient(monkeypatch):
    """The users' setting (the suite's is TIERJIT_STRICT=1, under which the JIT's own errors
    are raised): the program's exceptions must get through the JIT's absorbing them."""
    from tierjit.runtime import dispatch
    monkeypatch.setattr(dispatch, "STRICT", False)


@pytest.mark.parametrize("at", ["optimise", "guard_for"])
@pytest.mark.parametrize("tier", ["interp", "baseline", "opt"])
def test_ctrl_c_during_a_first_calls_compile(tier, at, lenient):
    """Ctrl-C (KeyboardInterrupt) while the first call compiles: it reaches the program,
    and the next call compiles again; it used to leave the signature built as it stood (in
    CPython for good, or in tier 0 with no names check: K bound again was not seen)."""
    ns = module("""
        K = 1

        @tierjit.jit(tier=TIER)
        def interrupted(x):
            return x + K
        """, tier)
    f = ns["interrupted"]
    with interrupted_at(at):
        f(1.0)
    assert f(1.0) == 2.0
    assert f"interrupted(float): {tier}" in tierjit.explain(f)
    ns["K"] = 100
    assert f(1.0) == 101.0


@pytest.mark.parametrize("by", ["ctrl-c", "handler"])
@pytest.mark.parametrize("at, same", [("_stable_values", False), ("_tier0", False),
                                      ("generate", False), ("_build_values", True),
                                      ("build_version", True), ("generate", True)])
def test_an_interrupted_hot_call_is_made_again(at, same, by, lenient):
    """The hot call's synchronous builds cut short: a later call asks again, and the function
    gets LLVM's code (it used to keep baseline code in its slot, or run as CPython, for
    good), its value-specialised version too when the calls pass one value."""
    ns = module("""
        K = 1

        @tierjit.jit
        def interrupted(x):
            s = 0.0
            for i in range(10):
                s += x + K
            return s
        """, "auto")
    f = ns["interrupted"]
    with tierjit.config.override(hot_calls=2, hot_seconds=None, background=False):
        f(1.0)
        f(1.0)
        with interrupted_at(at, by):
            f(1.0)
        for i in range(5):
            x = 1.0 if same else 2.0 + i
            assert f(x) == 10 * (x + 1)
    assert ("interrupted(float=1.0): opt" if same else "interrupted(float): opt") \
        in tierjit.explain(f)
    ns["K"] = 2
    assert f(1.0) == 30.0


def _long_call_built(f) -> bool:
    return "calls predicted long run it from their start" in tierjit.explain(f)


def _watched(f) -> bool:
    return dispatcher_of(f).counting not in (None, False, "watching")


def _moved(f) -> bool:
    text = tierjit.explain(f)
    return "OSR entries" in text and "gave up" not in text


@pytest.mark.parametrize("by", ["ctrl-c", "handler"])
@pytest.mark.parametrize("at, settings, made", [
    ("compile_baseline", {"watch_size": 1000}, _long_call_built),
    ("_build_counting", {"watch_seconds": 0, "osr_backedges": 100, "background": False,
                         "watch_size": None}, _watched),
    ("_compile_native", {"watch_seconds": 0, "osr_backedges": 100, "background": False,
                         "watch_size": None}, _moved)])
def test_a_long_calls_interrupted_build_is_made_again(at, settings, made, by, lenient):
    """A call predicted long building its baseline code, a first cold call lowering counting
    tier 0, or its loop's OSR entry being compiled, cut short: a later call builds it (it used
    to be never built again, the function never watched again, or its loops given up on)."""
    ns = module("""
        @tierjit.jit
        def interrupted(n):
            s = 0
            for i in range(n):
                s += i
            return s
        """, "auto")
    f = ns["interrupted"]
    with tierjit.config.override(hot_calls=None, hot_seconds=None, **settings):
        with interrupted_at(at, by):
            f(3000)
        assert f(3000) == 4498500
        assert made(f)


def test_a_handlers_exception_while_the_slot_is_switched(lenient):
    ns = module("""
        @tierjit.jit(tier="opt")
        def interrupted(x):
            return x * 20.0
        """, "opt")
    f = ns["interrupted"]
    with interrupted_at("install", "handler", "runtime/entry.py"):
        f(1.0)
    assert f(1.0) == 20.0 and native(f)
