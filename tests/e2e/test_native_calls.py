"""Calls between jitted functions in native code: how deep they nest, and a callee's effects.

Deep recursion must end in CPython's RecursionError, never in a C stack overflow: the deep
cases run in a child process, so a crash fails the test instead of ending the test run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tierjit
from tierjit.backends import nesting
from tierjit.runtime.dispatch import dispatcher_of

NATIVE_TIERS = ("opt", "baseline")

_DEEP = """
    import sys
    import tierjit

    @tierjit.jit(tier={tier!r})
    def depth(n):
        if n == 0:
            return 0
        return 1 + depth(n - 1)

    @tierjit.jit(tier={tier!r})
    def is_even(n):
        return True if n == 0 else is_odd(n - 1)

    @tierjit.jit(tier={tier!r})
    def is_odd(n):
        return False if n == 0 else is_even(n - 1)

    assert depth(100) == 100
    for f in (depth, is_even):
        try:
            f(10**6)
        except RecursionError:
            pass
        else:
            raise AssertionError("no RecursionError")
    assert depth(300) == 300 and is_even(300) is True
    print("ok")
"""


@pytest.mark.parametrize("tier", NATIVE_TIERS + ("auto",))
def test_runaway_recursion_raises_recursion_error(tier):
    """10**6 nested calls: native code hands the calls past NATIVE_DEPTH to tier 0, whose
    Python frames reach CPython's recursion limit."""
    src = textwrap.dedent(_DEEP.format(tier=tier))
    env = {"TIERJIT_HOT_CALLS": "0"} if tier == "auto" else {}
    r = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True,
                       timeout=300, check=False, env={**os.environ, **env})
    assert r.returncode == 0 and r.stdout.strip() == "ok", (r.returncode, r.stderr[-2000:])


_BIG_FRAMES = r"""
import importlib.util, pathlib, sys, tempfile
import tierjit

# ~1,200 values: a baseline frame of ~10 KB, so 2000 nested calls would take 20 MB
body = ["def f(n, x):", "    if n == 0:", "        return x"]
prev = "x"
for i in range(600):
    body.append(f"    v{i} = ({prev} * 3 + {i} - n) % 100003")
    prev = f"v{i}"
body.append(f"    return f(n - 1, {prev} % 1000) + v7 % 7")
path = pathlib.Path(tempfile.mkdtemp()) / "big_frames.py"
path.write_text("\n".join(body) + "\n")
spec = importlib.util.spec_from_file_location("big_frames", path)
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
plain = mod.f
sys.setrecursionlimit(20000)
expected = plain(1900, 1)
mod.f = tierjit.jit(plain, tier=TIER)
assert mod.f(1900, 1) == expected
sys.setrecursionlimit(1000)
try:
    mod.f(10**6, 1)
except RecursionError:
    print("ok")
"""


@pytest.mark.parametrize("tier", NATIVE_TIERS)
def test_big_frames_nest_within_the_c_stack(tier):
    """Frames of ~10 KB: the baseline tier bounds the bytes its nested frames take, and a
    call past the bound takes only the slots its deopt reads."""
    r = subprocess.run([sys.executable, "-c", _BIG_FRAMES.replace("TIER", repr(tier))],
                       capture_output=True, text=True, timeout=600, check=False)
    assert r.returncode == 0 and r.stdout.strip() == "ok", (r.returncode, r.stderr[-2000:])


@pytest.mark.parametrize("tier", NATIVE_TIERS)
def test_recursion_past_native_depth_finishes_in_tier0_uncounted(tier):
    @tierjit.jit(tier=tier)
    def depth(n):
        if n == 0:
            return 0
        return 1 + depth(n - 1)

    old = sys.getrecursionlimit()
    sys.setrecursionlimit(30000)
    try:
        assert depth(10) == 10
        # past the bound: 2000 LLVM calls, or 2 MB of baseline frames (of 256+ bytes each)
        n = nesting.NATIVE_DEPTH + 500 if tier == "opt" else nesting.NATIVE_STACK // 256 + 10
        assert depth(n) == n
    finally:
        sys.setrecursionlimit(old)
    spec = dispatcher_of(depth).latest()
    assert spec.tier == tier and spec.gave_up is None
    if tier == "opt":
        assert spec.deopt_count == 0       # not a failed guard
    assert nesting.PUBLISHED.value == 0   # every call into Python took its calls off again
    assert depth(30) == 30


@pytest.mark.parametrize("tier", NATIVE_TIERS)
def test_callee_called_through_python_is_called_once(tier):
    """A baseline callee is called through Python (its entry object) by either tier: its
    exception propagates and a result native code cannot take goes to tier 0 after the call,
    so its in-place write is made once."""
    @tierjit.jit(tier="baseline")
    def bump(a, x):
        a[0] += 1
        if 5 < x < 100:
            raise ValueError("too big")
        return a, x * x

    @tierjit.jit(tier=tier)
    def f(a, x):
        _b, y = bump(a, x)
        return y + 1

    a = np.zeros(2, dtype=np.int64)
    assert f(a, 3) == 10 and a[0] == 1
    with pytest.raises(ValueError, match="too big"):
        f(a, 10)
    assert a[0] == 2
    assert f(a, 2**40) == 2**80 + 1 and a[0] == 3   # x * x beyond 64 bits
