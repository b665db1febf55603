"""The differential corpus under every tiering configuration of tier="auto", and threads.

`test_differential.py` runs the whole corpus at tiers "interp" and "opt" and through plain
``@tierjit.jit`` with the default thresholds. Here a representative subset (the first programs
of every topic) runs under the thresholds the issue names — 0, 1, the default and never — with
compiles in the calling thread (deterministic: the code under test is known call by call) and on
the compiler thread (racing the program, then settled so that later rounds run native code).
Every call must do exactly what CPython does. The subset keeps CI time in check: the corpus
times five configurations would add minutes for little more coverage.
"""

from __future__ import annotations

import threading
import time
import traceback

import numpy as np
import pytest

import tierjit
from tierjit.runtime import compiler, events

from .harness import CPYTHON, DEFAULT, build, call, compare_outcomes
from .programs import TOPICS

CONFIGS = {
    # compiled by the first call of each signature, in that call: the old tier="opt"
    "hot0": {"hot_calls": 0, "hot_seconds": None, "background": False},
    # the first call runs as CPython, the second compiles
    "hot1": {"hot_calls": 1, "hot_seconds": None, "background": False},
    # queued by the first call, compiled while the calls go on: any call may meet the switch
    "hot0-background": {"hot_calls": 0, "hot_seconds": None, "background": True},
    # the shipped defaults (1000 calls or 5 ms): the hot loops get compiled in the background
    "default": {},
    # never compiled: the cold path (counter and clock) all the way; loops in counting tier 0
    "never": {"hot_calls": None, "hot_seconds": None},
    # never hot, no counting tier 0: the original functions all the way
    "never-no-osr": {"hot_calls": None, "hot_seconds": None, "osr_backedges": None},
    # OSR at the first loop iteration of every call, compiled by that iteration
    "osr1": {"hot_calls": None, "hot_seconds": None, "osr_backedges": 1, "watch_seconds": 0,
             "watch_size": None, "background": False},
    # OSR requested after 3 iterations, built while the loop goes on
    "osr3-background": {"hot_calls": None, "hot_seconds": None, "osr_backedges": 3,
                        "watch_seconds": 0, "watch_size": None},
}
PER_TOPIC = 3
SUBSET = [p for topic in TOPICS for p in topic.PROGRAMS[:PER_TOPIC]]
ROUNDS = 3


def run_rounds(prog, config: dict, label: str) -> None:
    """Every case of prog, ROUNDS times over one build, each outcome against CPython's. Between
    rounds the compiler thread is waited for, so later rounds run what it built."""
    __tracebackhide__ = True
    ref = build(prog.source, CPYTHON, prog.name)[prog.entry]
    expected = [call(ref, case, CPYTHON) for _ in range(ROUNDS) for case in prog.cases]
    first_event = len(events.events())
    with tierjit.config.override(**config):
        fn = build(prog.source, DEFAULT, prog.name)[prog.entry]
        i = 0
        for _ in range(ROUNDS):
            for case in prog.cases:
                got = call(fn, case, label)
                compare_outcomes(expected[i], got, f"program {prog.name}, config {label}, "
                                                   f"call #{i}\n--- source ---\n{prog.source}")
                i += 1
            assert compiler.wait_idle(60), "the compiler thread did not finish in 60 s"
    errors = [e for e in events.events()[first_event:]
              if e.kind == "error" or "error" in e.detail]
    assert not errors, f"compiler errors: {errors}"


@pytest.mark.parametrize("label", list(CONFIGS))
@pytest.mark.parametrize("prog", SUBSET, ids=[p.name for p in SUBSET])
def test_config(prog, label):
    run_rounds(prog, CONFIGS[label], label)


def test_subset_covers_every_topic():
    assert {p.name for p in SUBSET} >= {t.PROGRAMS[0].name for t in TOPICS}


# -- threads ---------------------------------------------------------------------------------

THREADED = """
@jit
def poly(x):
    y = 0.0
    for k in range(5):
        y = y * x + k
    return y

@jit
def sq(x):
    return x * x                  # overflows past 64 bits for big x: deopts

@jit
def total(a):
    s = a[0] * 0
    for i in range(len(a)):
        s += a[i]
    return s

@jit
def mix(n, x):
    return sq(n) + poly(x)        # calls through the others' dispatch slots
"""


def _cases():
    rng = np.random.default_rng(7)
    ints = [3, -7, 2**31 + 5, 2**40, 10**6]          # 2**40 squared overflows int64
    floats = [0.5, -1.25, 3.0]
    arrays = [rng.random(50), np.arange(40, dtype=np.int64), np.arange(30, dtype=np.int32)]
    return ([("sq", (v,)) for v in ints] + [("poly", (v,)) for v in floats + ints[:2]]
            + [("total", (a,)) for a in arrays]
            + [("mix", (n, x)) for n in ints for x in floats[:2]])


@pytest.mark.parametrize("max_deopts", [100, 2])
def test_threads_while_the_compiler_swaps_code(max_deopts):
    """Four threads call the same functions, with every argument type, while the compiler
    thread compiles them and switches their slots (and, with max_deopts=2, drops deopting code
    again): every result must be CPython's, and nothing may crash."""
    ref = build(THREADED, CPYTHON, "threaded")
    cases = _cases()
    expected = [ref[name](*args) for name, args in cases]
    first_event = len(events.events())
    settings = {"hot_calls": 3, "hot_seconds": None, "background": True,
                "max_deopts": max_deopts}
    failures: list[str] = []
    with tierjit.config.override(**settings):
        ns = build(THREADED, DEFAULT, "threaded")

        stop = threading.Event()

        def worker(seed: int) -> None:
            order = np.random.default_rng(seed).permutation(len(cases))
            try:
                while not stop.is_set():
                    for k in order:
                        name, args = cases[k]
                        got = ns[name](*args)
                        want = expected[k]
                        same = (np.array_equal(got, want) and type(got) is type(want))
                        if not same:
                            failures.append(f"{name}{args!r}: {got!r} != {want!r}")
                            return
            except BaseException as e:   # noqa: BLE001 - reported below
                failures.append("".join(traceback.format_exception(e)))

        threads = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
        for t in threads:
            t.start()
        # the calls go on while everything compiles, swaps, deopts (and gives up), and a while
        # after that, on the final code
        time.sleep(0.2)
        assert compiler.wait_idle(60)
        time.sleep(0.3)
        stop.set()
        for t in threads:
            t.join(60)
    assert not failures, failures[:5]
    kinds = {e.kind for e in events.events()[first_event:]}
    assert {"compile", "tier-up"} <= kinds
    if max_deopts == 2:
        assert "give-up" in kinds
        assert "native code dropped" in tierjit.explain(ns["sq"])
