"""Tier-up out of running baseline code (runtime/tierup.py), against CPython.

A call running baseline code from its start leaves it, at a loop's signal poll, for LLVM's OSR
entry at that loop: values, types, exceptions and in-place writes must be CPython's, and the
call must actually move (the "osr" event from the baseline tier). A self-call of baseline code
that LLVM's code has replaced in the dispatch slot leaves for tier 0, which calls through the
slot.
"""

from __future__ import annotations

import numpy as np
import pytest

import tierjit
from tierjit.runtime import baseline as policy
from tierjit.runtime import compiler, events
from tierjit.runtime.dispatch import dispatcher_of

# Every call given an int or array of 1000 is predicted long and runs baseline code from its
# start; its loops' LLVM OSR entries are built by the call before it runs (tierup_seconds=0,
# compiles in the calling thread), so its first due poll (every 1024 back edges) leaves.
AT_ONCE = {"hot_calls": None, "hot_seconds": None, "watch_size": 1000, "tierup_seconds": 0,
           "background": False}


def nest(a, n):                     # a nest writing an array, a float result
    s = 0.0
    for i in range(n):
        for j in range(8):
            a[j] += i * 0.5
            s += a[j]
    return s


def first_above(v, q):              # leaves its loop by a return, mid-way
    for i in range(len(v)):
        if v[i] > q:
            return i, v[i]
    return -1, 0.0


def late_error(v, n):               # a ZeroDivisionError, long after the transfer
    s = 0.0
    for i in range(n):
        s += v[i % 100] * 1.5 + 1.0 / (n - 1 - i)
    return s


def whiling(n, m):                  # a while loop, then an int past 64 bits (a deopt)
    x, i = 1, 0
    while i < n:
        x = (x * 3 + i) % m
        i += 1
    return x * x * x * x


def sums(v, n):                     # outer loop short, inner loop long: leaves the inner one
    t = 0.0
    for r in range(3):
        for i in range(n):
            t += v[i] * r - i * 0.25
    return t


def dead_param(n, m):                # x goes round the loop, nothing reads it
    x = 0.0
    c = 0
    s = 0
    while c < n:
        y = x * 0.5                 # noqa: F841 - dead: x is a header parameter no one reads
        x = c * 1.0
        s += c % m
        c += 1
    return s


def joined_layout(a, v, n):         # b is a strided array, then a C one: layout "A"
    b = v
    s = 0.0
    for i in range(n):
        s += b[i % 100] * 0.5
        if i == 10:
            b = a
    return s


def header_guard(a, v):             # a guard at the loop header: IndexError at the end
    b = v
    i = 0
    s = 0.0
    while b[i] > -1.0:
        s += b[i]
        i += 1
        if i == 10:
            b = a
    return s


CASES = [
    (nest, lambda: (np.zeros(8), 5000)),
    (first_above, lambda: (np.arange(20_000, dtype=np.float64), 15_000.5)),
    (late_error, lambda: (np.arange(100, dtype=np.float64), 9000)),
    (whiling, lambda: (9000, 1_000_003)),
    (sums, lambda: (np.arange(10_000, dtype=np.float64), 10_000)),
    (dead_param, lambda: (5000, 7)),
    (joined_layout, lambda: (np.arange(200.0), np.arange(400.0)[::2], 5000)),
    (header_guard, lambda: (np.arange(5000.0), np.arange(400.0)[::2])),
]


def outcome(f, args):
    try:
        r = f(*args)
    except Exception as e:          # noqa: BLE001 - compared with CPython's
        return ("raised", type(e), str(e)), args
    return ("returned", r, type(r)), args


@pytest.mark.parametrize(("f", "make"), CASES, ids=[f.__name__ for f, _ in CASES])
def test_a_long_call_leaves_baseline_code_for_llvm(f, make):
    want, want_args = outcome(f, make())
    n = len(events.events())
    with tierjit.config.override(**AT_ONCE):
        jf = tierjit.jit(f)
        for _ in range(2):          # the second call finds the exits open
            got, got_args = outcome(jf, make())
            assert repr(got) == repr(want)
            for a, b in zip(got_args, want_args):
                np.testing.assert_array_equal(a, b)
    codes = dispatcher_of(jf).__dict__.get("_baseline_codes", {}).values()
    assert any(c is not None for c in codes), "no baseline code was built"
    moved = [e for e in events.events()[n:] if e.kind == "osr" and e.function == f.__name__
             and e.detail.get("from_tier") == "baseline"]
    assert len(moved) == 2, [str(e) for e in events.events()[n:]]
    assert all(e.tier == "opt" for e in moved)
    text = tierjit.explain(jf)
    assert "tier-up: 2 (calls that moved from baseline code" in text, text
    if f is not header_guard:       # (whose exit closes when a call leaves at its end)
        assert "LLVM's entries at" in text, text
    if f is sums:                   # the inner loop's polls come due: it is the one left
        assert {e.detail["line"] for e in moved} == {sums.__code__.co_firstlineno + 3}


def nested_loops(a, n, d):          # a recursion, each level with a long loop
    s = 0.0
    if d > 0:
        s += nested_loops(a, n, d - 1)
    for i in range(n):
        s += a[i % 8] * 0.5
    return s


def test_only_the_watched_frame_leaves(monkeypatch):
    """Frames of the same code nested in a watched call run at other depths: they stay in
    baseline code (else each would hand its result to its caller as a deopt, and every
    frame above it would finish in tier 0). One exit per call: the watched frame's."""
    a = np.arange(8.0)
    want = nested_loops(a, 3000, 3)
    with tierjit.config.override(**AT_ONCE):
        jf = tierjit.jit(nested_loops)
        monkeypatch.setitem(globals(), "nested_loops", jf)      # the self-call is jitted
        n = len(events.events())
        got = [jf(a, 3000, 3) for _ in range(2)]
    assert got == [want, want]
    moved = [e for e in events.events()[n:] if e.kind == "osr"
             and e.detail.get("from_tier") == "baseline"]
    assert len(moved) == 2, [str(e) for e in events.events()[n:]]


def spin(n):
    s = 0
    for i in range(n):
        s = (s + i * 7) % 1000003
    return s


def test_the_compiler_thread_builds_the_exits_of_a_running_call():
    """In the background: once the call has run tierup_seconds, the compiler thread builds
    the loop's LLVM entry while the call runs on; the exit stays open for later calls."""
    with tierjit.config.override(hot_calls=None, hot_seconds=None, watch_size=1000,
                                 tierup_seconds=0.01, background=True):
        f = tierjit.jit(spin)
        n = 1000
        while True:                 # a call long enough for the build to start during it
            assert f(n) == spin(n)
            code = next(iter(dispatcher_of(f).__dict__["_baseline_codes"].values()))
            compiler.wait_idle(60)
            if code.climb.ready:
                break
            assert n < 10**9, "no exit was opened"
            n *= 8
        # open only while a watched call runs: other baseline code may call this code
        assert not any(ex.words[ex.k] for ex in code.exits.values())
        before = sum(ex.taken for ex in code.exits.values())
        assert f(n) == spin(n)
        assert sum(ex.taken for ex in code.exits.values()) == before + 1
        assert not any(ex.words[ex.k] for ex in code.exits.values())


def test_tierup_seconds_none_keeps_calls_in_baseline_code():
    with tierjit.config.override(**dict(AT_ONCE, tierup_seconds=None)):
        f = tierjit.jit(spin)
        assert f(5000) == spin(5000)
    code = next(iter(dispatcher_of(f).__dict__["_baseline_codes"].values()))
    assert code.climb is None and not any(ex.words[ex.k] for ex in code.exits.values())


def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


@tierjit.jit
def fib_a(n):                       # (module level: a self-call is a call of the global name)
    if n < 2:
        return n
    return fib_a(n - 1) + fib_a(n - 2)


@tierjit.jit
def fib_b(n):
    if n < 2:
        return n
    return fib_b(n - 1) + fib_b(n - 2)


def test_self_calls_leave_once_their_exit_is_open():
    """The recursion's exit opened by hand (LLVM's code would open it when it replaces the
    baseline code in the slot): every self-call made at a due poll leaves for tier 0, which
    calls through the slot -- here into the same baseline code. The result is CPython's."""
    with tierjit.config.override(hot_calls=None, hot_seconds=None, watch_size=None):
        d = dispatcher_of(fib_a)
        key, code = policy.build(d, (20,))
        assert code is not None and code.calls_exit is not None
        policy._install(d, key, code)
        assert fib_a(20) == fib(20) and code.calls_exit.taken == 0
        code.calls_exit.open()
        assert fib_a(24) == fib(24)
    assert code.calls_exit.taken > 10


def test_llvm_code_in_the_slot_opens_the_self_calls_exit():
    with tierjit.config.override(hot_calls=None, hot_seconds=None, watch_size=None,
                                 background=False):
        d = dispatcher_of(fib_b)
        key, code = policy.build(d, (20,))
        policy._install(d, key, code)
        assert not code.calls_exit.words[code.calls_exit.k]
        spec = d.specialise(key)           # LLVM's code, installed in the slot
        assert spec.tier == "opt" and spec.installed
        assert code.calls_exit.words[code.calls_exit.k]
        # a call that was running the baseline code (entered directly here): its
        # self-calls leave for tier 0, which calls through the slot, into LLVM's code
        assert code.entry_callable(22) == fib(22) and code.calls_exit.taken > 0
        d.give_up(spec, "a test")          # the slot is empty again: the exit closes
        assert not code.calls_exit.words[code.calls_exit.k]
        assert fib_b(22) == fib(22)


def test_a_fork_forgets_the_queued_tier_up():
    """What a child process runs after fork (dispatch.forget_queued_builds; it has no
    compiler thread): a tier-up queued in the parent is asked for again by the next long call."""
    from tierjit.runtime import tierup
    with tierjit.config.override(hot_calls=None, hot_seconds=None, watch_size=1000,
                                 tierup_seconds=60.0, background=True):
        f = tierjit.jit(spin)
        assert f(5000) == spin(5000)
        code = next(iter(dispatcher_of(f).__dict__["_baseline_codes"].values()))
        assert code.climb.asked                  # due in a minute
        tierup.forget_queued(dispatcher_of(f))
        assert not code.climb.asked
