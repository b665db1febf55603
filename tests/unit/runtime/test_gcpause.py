"""The cyclic garbage collector paused while a call compiles its own code (runtime/gcpause.py)."""

from __future__ import annotations

import gc

import tierjit
from tierjit.runtime.gcpause import GcPaused


def test_gc_pause_nests_and_restores_the_collector_as_it_was():
    assert gc.isenabled()
    with GcPaused():
        assert not gc.isenabled()
        with GcPaused():
            assert not gc.isenabled()
        assert not gc.isenabled()        # the outer pause still holds
    assert gc.isenabled()
    gc.disable()
    try:
        with GcPaused():
            pass
        assert not gc.isenabled()        # a program that turned it off keeps it off
    finally:
        gc.enable()


def _twice(x):
    return x * 2.0


def test_a_compiling_call_pauses_the_collector_and_restarts_it(monkeypatch):
    from tierjit.runtime import dispatch
    states = []
    specialise = dispatch.Dispatcher.specialise

    def watched(self, arg_types):
        states.append(gc.isenabled())
        return specialise(self, arg_types)

    monkeypatch.setattr(dispatch.Dispatcher, "specialise", watched)
    f = tierjit.jit(_twice, tier="opt")
    assert f(3.0) == 6.0
    assert states == [False]             # paused while it compiled
    assert gc.isenabled()                # and running again afterwards
