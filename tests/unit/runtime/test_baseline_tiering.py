"""Adaptive tiering with the baseline tier: warm code runs copy-and-patch code at once."""

from __future__ import annotations

import pytest

import tierjit
from tierjit.runtime import baseline, compiler, entry, events
from tierjit.runtime.dispatch import dispatcher_of

pytest.importorskip("llvmlite")


def _acc(n, k):
    s = 0
    for i in range(n):
        s += i * k
    return s


def test_warm_goes_to_baseline_first_then_llvm():
    """Warm: the compiler thread's first job is baseline code (no pause of the program), its
    next one LLVM's; synchronous compiles build baseline code in the calling thread."""
    if not baseline.ENABLED:
        pytest.skip("TIERJIT_BASELINE=0")
    with tierjit.config.override(hot_calls=2, hot_seconds=None, background=True):
        f = tierjit.jit(_acc)
        since = len(events.events())
        assert [f(100, 3) for _ in range(3)] == [_acc(100, 3)] * 3
        assert compiler.wait_idle(60)
        d = dispatcher_of(f)
        codes = d.__dict__["_baseline_codes"]
        (key, code), = codes.items()
        assert code is not None and entry.is_entry(f)
        kinds = [(e.kind, e.tier, e.thread) for e in events.events()[since:]
                 if e.function == "_acc"]
        assert kinds.index(("compile", "baseline", events.COMPILER_THREAD)) < \
            kinds.index(("compile", "opt", events.COMPILER_THREAD)), kinds
        assert not [k for k in kinds if k[2] != events.COMPILER_THREAD], kinds
        # the code answers exactly, deoptimising where 64 bits do not suffice
        assert f(1000, 2**60) == _acc(1000, 2**60)
        assert compiler.wait_idle(60)
        spec = d.specs[key]
        if spec.native is not None and spec.installed:
            assert entry.get_slot(f) == spec.native.entry_address   # LLVM replaced it
        assert f(100, 3) == _acc(100, 3)
    with tierjit.config.override(hot_calls=2, hot_seconds=None, background=False):
        g = tierjit.jit(_acc)
        since = len(events.events())
        assert [g(100, 3) for _ in range(3)] == [_acc(100, 3)] * 3
        kinds = [(e.kind, e.tier, e.thread) for e in events.events()[since:]
                 if e.function == "_acc"]
        assert ("tier-up", "baseline", "MainThread") in kinds, kinds


def test_private_baseline_code_deopts_and_gives_up():
    """Adaptive tiering's baseline code resumes in its own tier-0 code, counts its deopts
    and, at max_deopts, calls its give-up hook (which takes it out of the slot)."""

    def sq(x):
        return x * x

    f = tierjit.jit(sq)
    d = dispatcher_of(f)
    key = (tierjit.types.lattice.INT,)
    code = baseline.build_private(d, key)
    assert code is not None
    hooks = code.keepalive[0]
    gave_up = []
    hooks.on_give_up = lambda: gave_up.append(True)
    assert code.entry_callable(9) == 81
    with tierjit.config.override(max_deopts=3):
        for k in range(4):
            assert code.entry_callable(2**40 + k) == (2**40 + k) ** 2
    assert hooks.deopt_count == 4 and gave_up == [True]
    assert code.entry_callable(2.5) == 6.25          # another type: the fallback


def _make_square():
    def sq(x):
        return x * x
    return sq


def test_baseline_code_given_up_runs_no_more_calls():
    """Adaptive baseline code given up at max_deopts leaves the slot, and the dispatcher no
    longer hands it calls (it stays alive: a frame may still run it); explain lists the
    give-up for that function only, not for another of the same qualname."""
    f, other = tierjit.jit(_make_square()), tierjit.jit(_make_square())
    d = dispatcher_of(f)
    key = (tierjit.types.lattice.INT,)
    code = baseline.build_private(d, key)
    baseline._install(d, key, code)
    assert entry.get_slot(f) == code.entry_address and f(9) == 81
    with tierjit.config.override(max_deopts=3, hot_calls=None, hot_seconds=None):
        for k in range(3):
            assert f(2**40 + k) == (2**40 + k) ** 2
        assert code.given_up and entry.get_slot(f) != code.entry_address
        assert baseline.build(d, (7,)) == (key, None)
        assert f(2**40) == 2**80 and f(7) == 49
    assert "baseline code deoptimised max_deopts times" in tierjit.explain(f)
    assert "gave up" not in tierjit.explain(other)


def _scaled_sum(v, k):
    s = 0
    for i in range(len(v)):
        s += v[i] * k                   # np.int64 arithmetic: made by calling Python (pyop)
    return s


def test_adaptive_tiering_declines_baseline_code_calling_python_in_a_loop():
    """Baseline code that makes an operation in a loop by calling Python is much slower than
    the CPython it would replace: adaptive tiering leaves the function to LLVM (warm builds
    and OSR entries alike), while tier="baseline" still runs it."""
    np = pytest.importorskip("numpy")
    from tierjit.backends.stencils.code import compile_baseline
    from tierjit.errors import Unsupported
    v = np.arange(3000, dtype=np.int64)
    want = _scaled_sum(v, 3)
    f = tierjit.jit(_scaled_sum)
    d = dispatcher_of(f)
    assert baseline.build_private(d, tuple(map(tierjit.types.lattice.type_of_value,
                                               (v, 3)))) is None
    with tierjit.config.override(hot_calls=None, hot_seconds=None, watch_seconds=0,
                                 osr_backedges=10, background=False):
        since = len(events.events())
        g = tierjit.jit(_scaled_sum)
        assert g(v, 3) == want
        osr = [e for e in events.events()[since:] if e.kind == "osr"]
        assert [e.tier for e in osr] == ["opt"], osr
        spec, = dispatcher_of(g).counting.entries.values()
        line = _scaled_sum.__code__.co_firstlineno + 3
        with pytest.raises(Unsupported, match=rf"line {line}: mul of np.int64, int in a "
                                              "loop, made by calling Python"):
            compile_baseline(dispatcher_of(g), spec, spec.typed, python_in_loops=False)
    h = tierjit.jit(_scaled_sum, tier="baseline")
    assert h(v, 3) == want and "baseline" in tierjit.explain(h)
