"""The cyclic garbage collector paused while a call compiles its own code (runtime/gcpause.py)."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import tierjit
from tierjit.runtime.gcpause import GcPaused

ROOT = Path(__file__).resolve().parents[3]


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



def test_a_collection_as_the_pause_ends_may_call_jitted_functions(tmp_path):
    # GcPaused.__exit__ restarted the collector holding its lock: a collection starting at
    # the lock's release ran a finalizer whose jitted call paused the collector itself, and
    # waited for that lock for ever. The threshold is swept so that the collection falls due
    # inside a hot call's pause. In a process of its own: a deadlock must not hang the run.
    script = tmp_path / "finalizers.py"
    script.write_text(textwrap.dedent("""
        import gc
        import tierjit

        def twice(x):
            return x * 2.0

        class Finalized:
            def __init__(self):
                self.cycle = self             # cyclic garbage: freed by the collector

            def __del__(self):
                g = tierjit.jit(twice)        # hot at its first call: made whole under
                assert g(2.0) == 4.0          # the collector's pause (shim.materialise)

        tierjit.config.hot_calls = 0
        old = gc.get_threshold()
        for n in range(2, 120):
            f = tierjit.jit(twice)
            gc.collect()
            gc.set_threshold(n)
            Finalized()
            assert f(3.0) == 6.0
            gc.set_threshold(*old)
        print("done")
        """))
    environ = {k: v for k, v in os.environ.items() if not k.startswith("TIERJIT_")}
    done = subprocess.run([sys.executable, str(script)], cwd=ROOT, env=environ,
                          capture_output=True, text=True, timeout=120, check=False)
    assert (done.returncode, done.stdout.strip()) == (0, "done"), done.stderr[-2000:]
