"""Test-session settings: the IR verifier runs after every pass and compiler bugs fail loudly.

Both switches are read when tierjit's modules are first imported, so they are set here, before
any test module imports tierjit. An explicit value in the environment wins (e.g.
`TIERJIT_STRICT=0` to see the fallback behaviour users get).
"""

from __future__ import annotations

import os
import signal

os.environ.setdefault("TIERJIT_VERIFY", "1")   # tierjit.passes.pipeline.VERIFY
os.environ.setdefault("TIERJIT_STRICT", "1")   # tierjit.runtime.dispatch.STRICT

# Ctrl-C is KeyboardInterrupt here and in the processes the tests start, however the suite was
# launched: a shell starts a command it puts in the background (`make test &`, or a job of a
# script) with SIGINT ignored, which its children inherit, and Python then installs no handler,
# so the tests that deliver Ctrl-C to native code would wait for an interrupt that never comes.
# (A handled signal is reset to its default across exec, where Python installs its own.)
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite the expected files of tests/ir (same as "
                          "TIERJIT_UPDATE_GOLDEN=1)")


def pytest_configure(config):
    if config.getoption("--update-golden", default=False):
        os.environ["TIERJIT_UPDATE_GOLDEN"] = "1"


import pytest  # noqa: E402


def pytest_sessionfinish(session):
    """Let the compiler thread finish its queued builds before pytest's reports, which parse
    source: on CPython 3.11 every thread's AST conversions share one recursion counter, and a
    parse of the compiler thread's in the middle of one of pytest's breaks it
    (frontend/astlock.py)."""
    import sys
    compiler = sys.modules.get("tierjit.runtime.compiler")
    if compiler is not None:
        compiler.wait_idle(120)


@pytest.fixture(autouse=True)
def _fresh_event_log():
    """Each test starts with an empty event log: tests count the events they cause by the
    log's length, which stops growing once it holds its maximum (runtime.events.MAX_EVENTS)."""
    import sys
    events = sys.modules.get("tierjit.runtime.events")
    if events is not None:
        events.clear()
    yield
