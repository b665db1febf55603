"""What makes a first call cheaper: work done alongside LLVM, the collector paused while a
call compiles, and a tier="opt" function that is a shim until its first call."""

from __future__ import annotations

import gc
import threading
import time

import pytest

import tierjit
from tierjit.runtime import entry, shim
from tierjit.runtime.alongside import Alongside
from tierjit.runtime.gcpause import GcPaused


def test_alongside_runs_on_another_thread_during_the_block():
    seen = []
    started = threading.Event()

    def work():
        seen.append(threading.current_thread().name)
        started.set()

    with Alongside(work):
        assert started.wait(10)          # the block does not have to return first
    assert seen == ["tierjit-alongside"]


def test_alongside_waits_for_the_work_and_raises_what_it_raised():
    done = []

    def slow():
        time.sleep(0.05)
        done.append(1)

    with Alongside(slow):
        pass
    assert done == [1]

    def bad():
        raise KeyError("from the work")

    with pytest.raises(KeyError, match="from the work"):
        with Alongside(bad):
            pass
    # the block's own exception wins over the work's
    with pytest.raises(ValueError):
        with Alongside(bad):
            raise ValueError("from the block")
    with Alongside(None):                # nothing to do
        pass


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


def _unsupported(x):
    return str(x)                        # strings are not compiled


def test_opt_function_is_a_shim_until_its_first_call_makes_it_an_entry():
    f = tierjit.jit(_twice, tier="opt")
    assert shim.is_shim(f) and not entry.is_entry(f)
    ident = id(f)
    assert f(3.0) == 6.0
    assert id(f) == ident and entry.is_entry(f)
    d = f.__tierjit_dispatcher__
    spec = next(iter(d.specs.values()))
    assert spec.tier == "opt" and entry.get_slot(f) == spec.native.entry_address
    assert gc.isenabled()                # the compile's pause is over


def test_opt_function_that_does_not_compile_becomes_a_forwarding_entry():
    f = tierjit.jit(_unsupported, tier="opt")
    assert f(3) == "3"
    assert entry.is_entry(f) and entry.get_slot(f) == entry.forwarder_address()
    assert f(4) == "4"                   # the fallback runs it, as before
