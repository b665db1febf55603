"""The C stack check of every C entry of a jitted function (runtime/cstack.py): with the
recursion limit raised past what the C stack holds, a recursion through jitted calls raises
RecursionError, under every tier and on a thread with a small stack, where it overflowed the
C stack (a segfault). Each case runs in a fresh process: a failure must not take the test run
down with it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def _run(code: str, tmp_path: Path, **env: str) -> str:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("TIERJIT_")} | env
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(code))
    done = subprocess.run([sys.executable, str(script)], cwd=ROOT, env=environ,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    return done.stdout


@pytest.mark.parametrize("tier", ["auto", "opt", "baseline", "interp"])
def test_a_recursion_deeper_than_the_c_stack_raises_recursion_error(tier, tmp_path):
    out = _run(f"""
        import sys
        import tierjit
        sys.setrecursionlimit(10**6)

        @tierjit.jit(tier={tier!r})
        def f(n):
            return 0 if n == 0 else 1 + f(n - 1)

        @tierjit.jit(tier={tier!r})
        def g(n):
            t = 0
            for i in range(2):
                t += i
            return t if n == 0 else t + g(n - 1)

        for h in (f, g, f):
            try:
                h(200_000)
            except RecursionError as e:
                print("RecursionError", "C stack" in str(e))
            assert h(3000) > 0 and h(10) > 0      # and the functions go on working
        """, tmp_path)
    assert out.split("\n")[:3] == ["RecursionError True"] * 3


def test_a_thread_with_a_small_stack(tmp_path):
    out = _run("""
        import sys, threading
        import tierjit
        sys.setrecursionlimit(10**6)

        @tierjit.jit
        def f(n):
            return 0 if n == 0 else 1 + f(n - 1)

        seen = []
        def work():
            try:
                f(100_000)
            except RecursionError:
                seen.append("RecursionError")
            seen.append(f(50))
        threading.stack_size(512 * 1024)
        t = threading.Thread(target=work)
        t.start()
        t.join()
        print(seen)
        """, tmp_path)
    assert out.strip() == "['RecursionError', 50]"


@pytest.mark.parametrize("tier", ["baseline", "opt"])
def test_native_calls_nested_on_a_thread_with_a_small_stack(tier, tmp_path):
    # Compiled on the main thread, then a recursion on threads of 32 KB to 512 KB: the native
    # calls nested below one C entry may take 2 MB (backends/nesting.py), which MARGIN covers
    # on a big stack but not on these, where they ran off the stack (a segfault). They take
    # the room above the thread's margin now: a RecursionError, or CPython's answer.
    out = _run(f"""
        import sys, threading
        import tierjit
        sys.setrecursionlimit(31000)

        @tierjit.jit(tier={tier!r})
        def r(n):
            return 0 if n == 0 else r(n - 1) + 1

        assert r(10) == 10
        seen = []
        def work(depth):
            try:
                seen.append(r(depth) == depth)
            except RecursionError:
                seen.append("RecursionError")
            seen.append(r(20))
        for kb, depth in ((32, 900), (48, 950), (512, 10000), (1024, 5000)):
            threading.stack_size(kb * 1024)
            t = threading.Thread(target=work, args=(depth,))
            t.start()
            t.join()
        print(len(seen), all(x in (True, "RecursionError") for x in seen[::2]), seen[1::2])
        """, tmp_path)
    assert out.strip() == "8 True [20, 20, 20, 20]"


def test_two_threads_with_small_stacks_recursing_through_the_shim(tmp_path):
    # A fresh process: while the function waits for its entry type, or one thread makes it
    # straight, recursions go on through the shim's Python frames, ~1-2 KB of C stack a
    # level that no C entry checks; two threads of 128 KB ran off their stacks (a segfault).
    # The shim counts its frames on such a thread now (runtime.straight.check_shim_depth).
    out = _run("""
        import threading
        import tierjit

        def r(n, x):
            return x if n <= 0 else r(n - 1, x) + 1

        r = tierjit.jit(r)
        out = []
        def work():
            for _ in range(20):
                try:
                    out.append(r(300, 1))
                except RecursionError:
                    out.append("RecursionError")
        threading.stack_size(128 * 1024)
        for _ in range(3):
            ts = [threading.Thread(target=work) for _ in range(2)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
        print(len(out), set(out) <= {301, "RecursionError"}, threading.stack_size(0))
        """, tmp_path)
    assert out.strip() == "120 True 131072"     # (and the program's stack size left alone)


def test_a_recursion_through_the_shim_without_a_stencil_library(tmp_path):
    # With no stencil library cached, a recursion SHIM_MAX deep through the shim builds it
    # and goes straight, whose calls check the C stack: the shim's calls take ~1 KB of C
    # stack each and no check guards them (a segfault at ~10,000 levels before).
    out = _run("""
        import sys
        import tierjit
        from tierjit.runtime import entry
        sys.setrecursionlimit(10**6)
        tierjit.config.hot_calls = tierjit.config.hot_seconds = None   # no native code

        @tierjit.jit
        def f(n):
            return 0 if n == 0 else 1 + f(n - 1)

        try:
            f(200_000)
        except RecursionError as e:
            print("RecursionError", "C stack" in str(e))
        print(f(5000), entry.is_straight(f))
        """, tmp_path, TIERJIT_CACHE_DIR=str(tmp_path / "cache"))
    assert out.split("\n")[:2] == ["RecursionError True", "5000 True"]
