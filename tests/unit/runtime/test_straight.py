"""Straight calls (runtime/straight.py): a recursion that CPython runs runs as deep under
every tier while the function has no native code, and the cold phase still counts, samples
and tiers up as the shim does."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

import tierjit
from tierjit.runtime import compiler, entry, shim, straight
from tierjit.runtime.dispatch import dispatcher_of

ROOT = Path(__file__).resolve().parents[3]

# How far below CPython's recursion depth a straight recursion may end: the NESTED cold
# levels before it goes straight cost three levels each, and each call the dispatcher sees
# (the value profile's samples) one more.
SLACK = 2 * straight.NESTED + 8


def _max_depth(f) -> int:
    lo, hi = 1, sys.getrecursionlimit()
    while lo < hi:
        mid = (lo + hi + 1) // 2
        try:
            f(mid)
            lo = mid
        except RecursionError:
            hi = mid - 1
    return lo


def _deep(n):
    return 0 if n == 0 else 1 + _deep(n - 1)


def _unsupported(n):
    d = {"k": 1}                        # a dict: tierjit does not compile the function
    return 0 if n == 0 else d["k"] + _unsupported(n - 1)


def _with_constant(n, k):
    return k if n == 0 else 1 + _with_constant(n - 1, k)


def _kwonly(n, *, k=1):
    return 0 if n == 0 else k + _kwonly(n - 1, k=k)


def _overflowing(n, x):
    if n == 0:
        return 0
    y = x * 3                          # with x = 2**62: its int guard fails at every level
    return _overflowing(n - 1, x) + (y & 1)


def _threaded(n, k):
    return k if n == 0 else 1 + _threaded(n - 1, k)


def _looping(n, m):
    t = 0
    for i in range(m):                 # a loop: the function goes straight in sections
        t += i
    return t if n == 0 else t + _looping(n - 1, m)


def _looping_unsupported(n):
    d = {"k": 1}
    t = 0
    for i in range(2):
        t += d["k"]
    return t if n == 0 else t + _looping_unsupported(n - 1)


def _looping_overflowing(n, x):
    t = 0
    for i in range(2):
        t += i
    if n == 0:
        return t
    y = x * 3
    return _looping_overflowing(n - 1, x) + (y & 1) + t


def _looping_kwonly(n, x, *, m):
    acc = 0.0
    for i in range(m if n == 0 else 3):     # keyword-only: tierjit does not compile it
        acc += x / (i + 1.5)
    return _looping_kwonly(n - 1, x, m=m) + acc if n > 0 else acc


def _looping_raising(n, at):
    t = 0
    for i in range(2):
        t += i
    if n == at:
        raise ValueError(n)
    return t if n == 0 else t + _looping_raising(n - 1, at)


@pytest.fixture
def jitted():
    """Jit a module-level function in place (its recursion goes through the global name).
    The entry type exists already, as in a process that has compiled something: the first
    recursion of a process is test_a_fresh_process's."""
    entry.entry_type()
    saved = {}

    def make(name: str, **options):
        saved.setdefault(name, globals()[name])
        f = globals()[name] = tierjit.jit(saved[name], **options)
        return f

    yield make
    globals().update(saved)


def test_constants_agree():
    assert (shim._NESTED, shim._DEEP) == (straight.NESTED, straight.DEEP)


def test_cold_recursion_runs_as_deep_as_cpython(jitted):
    cpython = _max_depth(_deep)
    f = jitted("_deep")
    with tierjit.config.override(hot_calls=None, hot_seconds=None):
        depth = _max_depth(f)
        assert depth >= cpython - SLACK
        assert f(depth) == depth
    d = dispatcher_of(f)
    assert d.cold and d.straight is True and entry.is_straight(f)
    assert "straight from the entry's C slot" in tierjit.explain(f)


@pytest.mark.parametrize("tier", ["auto", "baseline", "opt", "interp"])
def test_a_function_that_does_not_compile_recurses_as_deep_as_cpython(jitted, tier):
    cpython = _max_depth(_unsupported)
    f = jitted("_unsupported", tier=tier)
    with tierjit.config.override(background=False):
        assert _max_depth(f) >= cpython - SLACK
        assert f(300) == 300
    assert "runs as plain CPython" in tierjit.explain(f)


@pytest.mark.parametrize("tier", ["auto", "baseline", "opt"])
def test_a_recursion_given_up_on_runs_as_deep_as_cpython(jitted, tier):
    # A guard failing at every level: past max_deopts the native code is given up (or
    # rebuilt without the speculation), and the function's calls go straight. (Until then
    # each deopt costs a level more: see docs/tiering.md, "What is not there yet".)
    cpython = _max_depth(lambda n: _overflowing(n, 2**62))
    f = jitted("_overflowing", tier=tier)
    with tierjit.config.override(background=False, hot_calls=0, max_deopts=20):
        assert f(10, 5) == 10
        assert f(40, 2**62) == 0
        d = dispatcher_of(f)
        if tier != "auto" and any(s.gave_up for s in d.specs.values()):
            # (under "auto" the baseline code built on the way stays the calls' to run)
            assert d.straight is True and entry.is_straight(f)
        depth = cpython - SLACK
        assert f(depth, 2**62) == 0 and f(depth, 2**62) == 0
        assert f(10, 5) == 10


@pytest.mark.parametrize("tier", ["auto", "baseline", "opt"])
def test_a_recursion_deoptimising_at_every_level_runs_as_deep_as_cpython(jitted, tier):
    # each level's guard fails and tier 0 finishes it, called by the native code itself
    # (no frame of tierjit's under tier 0's); never given up here
    cpython = _max_depth(lambda n: _overflowing(n, 2**62))
    f = jitted("_overflowing", tier=tier)
    with tierjit.config.override(background=False, hot_calls=0, max_deopts=10**6):
        assert f(10, 5) == 10
        depth = cpython - SLACK
        assert f(depth, 2**62) == 0
        assert not any(s.gave_up for s in dispatcher_of(f).specs.values())


def _two_types(n, x, y):
    return y if n == 0 else _two_types(n - 1, x, y) + ((x * 3) & 1)


def test_straight_again_after_a_second_give_up(jitted):
    # straight after the (int, int, int) code is given up; native code for floats replaces
    # the slot; once that is given up too, straight again. (Under tier "opt": the baseline
    # tier rebuilds this function without the speculation rather than give it up.)
    cpython = _max_depth(lambda n: _two_types(n, 2**62, 1.5))
    f = jitted("_two_types", tier="opt")
    with tierjit.config.override(background=False, hot_calls=0, max_deopts=3):
        assert f(5, 1, 1) == 6 and f(10, 2**62, 1) == 1
        d = dispatcher_of(f)
        assert all(s.gave_up for s in d.specs.values() if s.requested)
        assert entry.is_straight(f)
        for _ in range(straight.BYPASS_CALLS + 1):     # the dispatcher sees the float call
            f(1, 1, 1.5)
        assert not entry.is_straight(f)                # native code for (int, int, float)
        assert f(10, 2**62, 1.5) == 1.5
        assert entry.is_straight(f)
        depth = cpython - SLACK
        assert f(depth, 2**62, 1.5) == 1.5 and f(depth, 1, 1) == depth + 1


def test_straight_calls_are_counted_and_sampled_like_cold_calls(jitted):
    f = jitted("_with_constant")
    with tierjit.config.override(hot_calls=1000, hot_seconds=None, background=False):
        for _ in range(49):                     # 49 x 20 calls: cold still
            assert f(19, 7) == 26
        d = dispatcher_of(f)
        assert d.straight is True and d.cold
        assert tierjit.stats()["functions"][d.__qualname__]["calls"] == 980
        # the shim's samples: calls 16, 32, ..., 512 (n varies, so the profile keeps k)
        assert d.observed == 6 and d.profile[1] == 7
        assert f(19, 7) == 26                   # calls 981-1000: the last eight sampled
        assert d.observed == 14 and d.cold
        assert f(19, 7) == 26                   # the hot call
        assert not d.cold and d.hot_after == 1000
        assert compiler.wait_idle(60)
        # native code replaced the straight slot; calls run it
        assert not entry.is_straight(f)
        assert f(19, 7) == 26 and f(30, 2) == 32
        assert d.straight is False or not entry.is_straight(f)


def test_calls_run_as_cpython_give_the_gil_to_their_build_in_flight(jitted, monkeypatch):
    # every BYPASS_CALLS-th call run as CPython while a build of the function is queued
    # lets the compiler thread have the GIL (made straight or through the shim); none once
    # native code runs them
    yields = []
    monkeypatch.setattr(straight, "_sleep", yields.append)
    monkeypatch.setattr(shim, "_sleep", yields.append)
    f = jitted("_with_constant")
    c = compiler.get_compiler()
    compiler.wait_idle(60)
    with tierjit.config.override(hot_calls=10, hot_seconds=None):
        c.pause()
        try:
            for _ in range(300):                    # 6,000 calls; hot after 10
                assert f(19, 7) == 26
            assert dispatcher_of(f)._pending        # its build waits in the queue
            assert entry.is_straight(f)
            assert 3 <= len(yields) <= 6000 // straight.BYPASS_CALLS + 1
            assert set(yields) == {0}
        finally:
            c.resume()
        assert compiler.wait_idle(60)
        seen = len(yields)
        for _ in range(300):
            assert f(19, 7) == 26
        assert not entry.is_straight(f) and len(yields) == seen


def test_calls_of_a_function_that_does_not_compile_stop_giving_up_the_gil(jitted,
                                                                          monkeypatch):
    # (they give it while its build is in flight: that the build fails is the build's to find)
    yields = []
    monkeypatch.setattr(straight, "_sleep", yields.append)
    monkeypatch.setattr(shim, "_sleep", yields.append)
    f = jitted("_unsupported")
    with tierjit.config.override(hot_calls=10, hot_seconds=None):
        for _ in range(300):
            assert f(19) == 19
        assert compiler.wait_idle(60)
        seen = len(yields)
        for _ in range(300):
            assert f(19) == 19
    assert entry.is_straight(f) and len(yields) == seen


@pytest.mark.parametrize("name, args, want", [("_with_constant", (19, 7), 26),
                                               ("_looping", (19, 3), 60)])
def test_a_call_passed_on_before_begin_has_the_cell(jitted, name, args, want):
    """Another thread may call through the straight slot between go_straight and begin's
    taking its cell: the call the slot passes on is counted later, not an AttributeError
    (seen once under test_threads_while_the_compiler_swaps_code)."""
    f = jitted(name)
    with tierjit.config.override(hot_calls=1000, hot_seconds=None, background=False):
        assert f(*args) == want
        d = dispatcher_of(f)
        assert d.straight is True and entry.is_straight(f)
        cell, d.straight_cell = d.straight_cell, None      # begin's window
        try:
            assert f(*args) == want
        finally:
            d.straight_cell = cell
        assert f(*args) == want and d.cold


def test_without_a_cached_stencil_library_the_shim_stays_until_there_is_one(jitted,
                                                                           monkeypatch):
    from tierjit.backends.stencils import library
    runtime = entry._runtime
    f = jitted("_deep")
    with monkeypatch.context() as m, \
            tierjit.config.override(hot_calls=None, hot_seconds=None, background=False):
        m.setattr(library, "load", lambda rebuild=False, build=True: None)
        m.setattr(entry, "_runtime", None)
        assert f(100) == 100                    # correct, at the shim's cost
        assert type(f) is shim.Shim and dispatcher_of(f).straight is None
    assert entry._runtime is runtime
    monkeypatch.setattr(straight, "_retry_at", 0.0)   # (it looks again every 0.1 s)
    with tierjit.config.override(hot_calls=None, hot_seconds=None):
        assert f(100) == 100 and entry.is_straight(f)


def test_a_recursion_reaching_the_limit_goes_straight_later(jitted):
    # going straight at the limit fails with RecursionError; a recursion from a shallower
    # stack goes straight then
    cpython = _max_depth(_deep)
    f = jitted("_deep")

    def at_depth(k):
        return f(straight.NESTED + 4) if k == 0 else at_depth(k - 1)

    with tierjit.config.override(hot_calls=None, hot_seconds=None):
        for k in range(cpython - 40, cpython - 5):
            try:
                at_depth(k)
            except RecursionError:
                pass
        assert dispatcher_of(f).straight is not False
        assert f(cpython - SLACK) == cpython - SLACK and entry.is_straight(f)


def test_a_function_with_keyword_only_parameters_recurses_as_deep_when_hot(jitted):
    # it never compiles (keyword-only parameters are not lowered) but gets hot: its calls
    # after the hot one go straight too
    cpython = _max_depth(_kwonly)
    f = jitted("_kwonly")
    with tierjit.config.override(hot_calls=50, hot_seconds=None):
        for _ in range(10):
            assert f(20, k=2) == 40
        assert not dispatcher_of(f).cold
        for _ in range(3):
            assert f(cpython - SLACK, k=2) == 2 * (cpython - SLACK)


def test_threads_recursing_at_once(jitted):
    f = jitted("_threaded")
    errors, results = [], []

    def work(k):
        try:
            for i in range(300):
                results.append(f(i % 50, k) == i % 50 + k)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    with tierjit.config.override(hot_calls=None, hot_seconds=None):
        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors and len(results) == 1200 and all(results)
    assert dispatcher_of(f).cold           # (a call passed on mid-way is not the hot call)
    assert tierjit.stats()["functions"][dispatcher_of(f).__qualname__]["calls"] == sum(
        i % 50 + 1 for i in range(300)) * 4


# -- functions with loops: straight in sections (runtime.straight.enter) -------------------------

def test_a_cold_recursion_with_loops_runs_as_deep_as_cpython(jitted):
    cpython = _max_depth(lambda n: _looping(n, 2))
    f = jitted("_looping")
    with tierjit.config.override(hot_calls=None, hot_seconds=None):
        depth = _max_depth(lambda n: f(n, 2))
        assert depth >= cpython - SLACK
        assert f(depth, 2) == depth + 1
    d = dispatcher_of(f)
    assert d.cold and d.straight is True and entry.is_straight(f)
    # sections close: no calls left in the slot, no nesting left over
    assert not d.section and d.nested == 0 and entry.straight_left(f) == 0
    assert "straight from the entry's C slot" in tierjit.explain(f)


def test_calls_in_sections_are_counted_and_get_the_function_hot(jitted):
    f = jitted("_looping")
    with tierjit.config.override(hot_calls=1000, hot_seconds=None, background=False):
        for _ in range(10):
            assert f(49, 3) == 150
        d = dispatcher_of(f)
        assert d.cold and d.straight is True
        d.settle()
        assert d.calls == 500
        assert f(600, 3) == 1803                  # the hot call is made in a section
        assert not d.cold and d.hot_after == 1000
        d.settle()
        assert d.calls == 1001                    # (native code's calls are not counted)
        assert not entry.is_straight(f)           # native code (built at the hot call)
        assert f(900, 3) == 2703 and f(5, 4) == 36


def test_shallow_calls_keep_the_cold_treatment(jitted):
    # once the function goes straight, a call that is not nested in a section still runs
    # counting tier 0 and moves into native code by OSR
    f = jitted("_looping")
    with tierjit.config.override(hot_calls=None, hot_seconds=None, watch_seconds=0.0,
                                 osr_backedges=100, background=False):
        assert f(30, 2) == 31
        assert entry.is_straight(f)
        assert f(0, 50_000) == sum(range(50_000))        # (not long enough to predict)
    assert any(e["kind"] == "osr" and e["function"] == dispatcher_of(f).__qualname__
               for e in tierjit.stats()["events"])


def test_an_exception_in_a_section_closes_it(jitted):
    f = jitted("_looping_raising")
    with tierjit.config.override(hot_calls=None, hot_seconds=None):
        for at in (5, 20, 300):
            with pytest.raises(ValueError, match=str(at)):
                f(400, at)
        d = dispatcher_of(f)
        assert d.straight is True and not d.section and d.nested == 0
        assert f(400, -1) == 401


def test_a_section_left_open_is_closed(jitted):
    # as an exception raised inside leave (a signal handler's) leaves it: the next call the
    # slot passes on, not nested in it, closes it; every call is still counted
    f = jitted("_looping")
    with tierjit.config.override(hot_calls=None, hot_seconds=None):
        assert f(30, 2) == 31
        d = dispatcher_of(f)
        d.settle()
        before = d.calls
        d.section = True
        straight.arm(d, 5)
        for _ in range(10):
            assert f(0, 2) == 1
        assert not d.section and d.nested == 0 and entry.straight_left(f) == 0
        d.settle()
        assert d.calls == before + 10


@pytest.mark.parametrize("tier", ["auto", "baseline", "opt", "interp"])
def test_a_function_with_loops_that_does_not_compile_recurses_as_deep(jitted, tier):
    cpython = _max_depth(_looping_unsupported)
    f = jitted("_looping_unsupported", tier=tier)
    with tierjit.config.override(background=False):
        for _ in range(3):                         # cold, the hot call, then hot
            assert _max_depth(f) >= cpython - SLACK
        assert f(300) == 602


@pytest.mark.parametrize("tier", ["auto", "baseline", "opt"])
def test_a_recursion_with_loops_given_up_on_runs_as_deep(jitted, tier):
    cpython = _max_depth(lambda n: _looping_overflowing(n, 2**62))
    f = jitted("_looping_overflowing", tier=tier)
    with tierjit.config.override(background=False, hot_calls=0, max_deopts=20):
        assert f(10, 5) == 21
        assert f(40, 2**62) == 41
        depth = cpython - SLACK
        assert f(depth, 2**62) == depth + 1 and f(depth, 2**62) == depth + 1
        assert f(10, 5) == 21


def test_a_function_hot_before_it_recurses_goes_straight(jitted):
    # hot by time in one long call, before any recursion: its calls after the hot one reach
    # the dispatcher (calls CPython binds, with nothing to compile), which counts them
    # nested as the shim does
    cpython = _max_depth(lambda n: _looping_kwonly(n, 1.25, m=1))
    f = jitted("_looping_kwonly")
    with tierjit.config.override(hot_calls=None, hot_seconds=0.0):
        f(0, 1.25, m=10)
        f(0, 1.25, m=10)
        assert not dispatcher_of(f).cold
        f(20, 1.25, m=1)             # (its first 8 levels pass through the shim as well)
        for _ in range(3):
            assert f(cpython - SLACK, 1.25, m=1) == _looping_kwonly(cpython - SLACK, 1.25, m=1)
        assert entry.is_straight(f)


def test_threads_recursing_with_loops_at_once(jitted):
    f = jitted("_looping")
    errors, results = [], []

    def work(k):
        try:
            for i in range(200):
                results.append(f(i % 40, k) == (i % 40 + 1) * (k * (k - 1) // 2))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    with tierjit.config.override(hot_calls=None, hot_seconds=None):
        threads = [threading.Thread(target=work, args=(k,)) for k in range(2, 6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    d = dispatcher_of(f)
    assert not errors and len(results) == 800 and all(results)
    assert d.cold and not d.section and d.nested == 0
    d.settle()
    assert d.calls == sum(i % 40 + 1 for i in range(200)) * 4


def _fresh(code: str, tmp_path: Path) -> str:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("TIERJIT_")}
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(code))
    done = subprocess.run([sys.executable, str(script)], cwd=ROOT, env=environ,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_a_fresh_process_makes_the_entry_type_in_the_background(tmp_path):
    # A recursion less than DEEP levels deep asks the compiler thread for the entry type
    # and goes on through the shim: no pause; the next one goes straight.
    out = _fresh(f"""
        import tierjit
        from tierjit.runtime import compiler, entry

        @tierjit.jit
        def f(n):
            return 0 if n == 0 else 1 + f(n - 1)

        assert f({straight.DEEP - 8}) == {straight.DEEP - 8}
        assert type(f).__name__ == "Shim"
        compiler.wait_idle(60)
        assert entry._runtime is not None
        assert f(900) == 900 and entry.is_straight(f)
        print(tierjit.stats()["pauses"]["max_seconds"])
        """, tmp_path)
    assert float(out) < 0.005


def test_a_signal_handlers_exception_while_making_the_entry_type_reaches_the_program(tmp_path):
    # (a timeout's alarm arriving while a recursion DEEP levels in makes the entry type
    # itself: it was taken for a failure to go straight, and the recursion went on)
    _fresh("""
        import signal, sys
        import tierjit
        from tierjit.runtime import compiler

        compiler.get_compiler().pause()        # the recursion makes the entry type itself

        @tierjit.jit
        def f(n):
            return {0: 0}[0] if n < 1 else f(n - 1) + 1   # (a dict: never compiles)

        class Tick(Exception):
            pass

        def handler(sig, frame):
            raise Tick

        def profile(frame, event, arg):
            if event == "call" and frame.f_code.co_name == "_make_entry_type":
                sys.setprofile(None)
                signal.raise_signal(signal.SIGALRM)

        signal.signal(signal.SIGALRM, handler)
        sys.setprofile(profile)
        try:
            f(200)
            raise SystemExit("the handler's exception was swallowed")
        except Tick:
            pass
        sys.setprofile(None)
        compiler.get_compiler().resume()
        assert f(600) == 600                   # and the recursion goes straight later
        """, tmp_path)


@pytest.mark.parametrize("at", ["_make_entry_type", "straight_cell"])
def test_ctrl_c_while_going_straight_leaves_the_function_to_go_straight(tmp_path, at):
    # (straight_cell: after the slot was made straight, before it was given calls)
    _fresh(f"""
        import signal, sys
        import tierjit
        from tierjit.runtime import compiler

        compiler.get_compiler().pause()

        @tierjit.jit
        def f(n):
            return {{0: 0}}[0] if n < 1 else f(n - 1) + 1

        def profile(frame, event, arg):
            if event == "call" and frame.f_code.co_name == "{at}":
                sys.setprofile(None)
                signal.raise_signal(signal.SIGINT)

        sys.setprofile(profile)
        try:
            f(200)
            raise SystemExit("no KeyboardInterrupt")
        except KeyboardInterrupt:
            pass
        sys.setprofile(None)
        compiler.get_compiler().resume()
        for _ in range(3):
            assert f(600) == 600      # (RecursionError: it was left marked as going straight)
        """, tmp_path)


def test_two_threads_first_recursion_of_a_process(tmp_path):
    # one thread makes the entry type DEEP levels in; the other, recursing through the shim
    # meanwhile, waits for it instead of running out of recursion limit at 3 levels a call
    _fresh("""
        import threading
        import tierjit

        @tierjit.jit
        def rs(n):
            return 0 if n == 0 else rs(n - 1) + 1

        start, errors = threading.Barrier(2), []

        def work():
            start.wait()
            try:
                assert rs(450) == 450
            except RecursionError as e:
                errors.append(e)

        threads = [threading.Thread(target=work) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        """, tmp_path)


def test_a_recursion_waits_for_the_stencil_library_read_from_the_cache(tmp_path):
    # DEEP levels in, the compiler thread (asked for the entry type at the 8th) is reading
    # the library from the disk cache: the recursion waits for it (milliseconds), where it
    # went on through the shim without it and ran out of recursion limit
    _fresh("""
        import threading
        import tierjit
        from tierjit.backends.stencils import library
        from tierjit.runtime import entry

        @tierjit.jit
        def f(n):
            return 0 if n == 0 else 1 + f(n - 1)

        library._lock.acquire()         # as the compiler thread's read of the cache does
        reading = threading.Timer(0.05, library._lock.release)
        reading.start()
        assert f(600) == 600 and entry.is_straight(f)
        reading.join()
        """, tmp_path)


def test_a_fresh_process_recursing_deep_at_once(tmp_path):
    # DEEP levels in, the recursion makes the entry type itself (or waits for it): a pause,
    # recorded, instead of RecursionError
    out = _fresh("""
        import sys
        import tierjit
        from tierjit.runtime import entry

        def plain(n):
            return 0 if n == 0 else 1 + plain(n - 1)

        @tierjit.jit
        def f(n):
            return 0 if n == 0 else 1 + f(n - 1)

        depth = sys.getrecursionlimit() - 2 * 48 - 30
        assert plain(depth) == depth
        assert f(depth) == depth and entry.is_straight(f)
        print(tierjit.stats()["pauses"]["count"])
        """, tmp_path)
    assert int(out) >= 1


def test_a_collection_calling_the_function_inside_arm_does_not_hang(tmp_path):
    # the cyclic GC may run at any allocation, and a __del__ it runs may call the function:
    # counting the straight calls (straight.arm) takes no lock it could be waiting on
    out = _fresh("""
        import faulthandler, gc
        import tierjit
        faulthandler.dump_traceback_later(60, exit=True)

        @tierjit.jit
        def f(n, junk):
            s = 0
            for i in range(3):
                s += i
            if junk:
                c = Cyc()
                c.me = c               # cyclic garbage whose __del__ calls f
            return f(n - 1, junk) + s if n > 0 else s

        class Cyc:
            def __del__(self):
                f(12, False)

        with tierjit.config.override(hot_calls=None, hot_seconds=None):
            f(100, False)
            gc.set_threshold(1)
            for trial in range(2000):
                assert f(30, True) == 93
        print("done")
        """, tmp_path)
    assert out.strip() == "done"


# -- calls of a function with no native code at all go straight (not only a recursion's) ------

def _protected(x):
    return (x * 1.5 if x != 0 else 1) / 2.5       # float | int: no native code for floats


def _listed(x):
    return [x][0] * 1.5                             # a list: the function does not lower


def _squared(x, c):
    return x * x * c                 # ints: past 2**32 the product's guard fails


def _goes_straight(f, args) -> bool:
    """Call f(*args) until its calls go straight (the dispatcher asks every 1024 calls; the
    first time, the entry type may be made on the compiler thread meanwhile)."""
    for _ in range(4):
        for _ in range(straight.BYPASS_CALLS):
            f(*args)
            if entry.is_straight(f):
                return True
        compiler.wait_idle(60)
    return False


@pytest.mark.parametrize(("name", "args", "want"), [
    ("_protected", (0.5,), 0.3), ("_protected", (0.0,), 0.4), ("_listed", (2.0,), 3.0)])
def test_a_hot_function_without_native_code_goes_straight(jitted, name, args, want):
    # The signature refused by both native tiers, or a function that does not lower: its
    # calls went through the dispatcher's Python path for good (~2.5 us each, 30x the
    # function's own time); within BYPASS_CALLS calls of the build they go straight.
    f = jitted(name)
    with tierjit.config.override(hot_calls=10):
        for _ in range(20):
            f(*args)
        compiler.wait_idle(60)
        assert _goes_straight(f, args)
        assert f(*args) == want
        text = tierjit.explain(f)
        assert "straight from the entry's C slot" in text
        if name == "_protected":     # its refused signatures run as CPython, not tier 0
            assert "not in a higher tier because a value that is float | int" in text
            assert "interp" not in text


def test_a_value_specialised_version_is_dropped_when_calls_miss_it_after_a_give_up(jitted):
    # Value-specialised on (3, 2); the generic version gives up (each product past 64 bits
    # deoptimises): calls with other values then reach the dispatcher, and once they keep
    # coming the value-specialised version goes too, and the calls go straight.
    f = jitted("_squared")
    big = 2**40
    with tierjit.config.override(hot_calls=100, background=False, max_deopts=10):
        for _ in range(300):
            assert f(3, 2) == 18
        for _ in range(50):
            assert f(big, 5) == big * big * 5
        spec = next(s for s in dispatcher_of(f).specs.values() if s.requested)
        assert spec.value_spec.runs_native and spec.gave_up is not None
        assert _goes_straight(f, (big, 5))
        assert spec.value_spec.gave_up is not None
        assert f(3, 2) == 18 and f(4, 5) == 80
