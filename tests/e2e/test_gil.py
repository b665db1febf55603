"""Other threads keep running while a long native loop runs (backends/gil.py): native code
offers the GIL as CPython's interpreter does, in both native tiers; and while a recursion
without loops runs native code, in both tiers too."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import tierjit


def pure(a, n):                     # a pure counted loop (the LLVM tier runs it in chunks)
    s = 0
    for i in range(n):
        s = (s + i * 7) % 1000003
    return s


def storing(a, n):                  # a loop that writes an array
    for i in range(n):
        a[i % 8] = i
    return a[3]


def whiling(a, n):                  # a while loop
    s, i = 0, 0
    while i < n:
        s += i & 3
        i += 1
    return s


def halving(a, n):                  # a recursion without loops (calls itself by its name)
    if n < 2:
        return n
    return halving(a, n // 2) + halving(a, n - n // 2)


@pytest.mark.parametrize("tier", ["baseline", "opt"])
@pytest.mark.parametrize("loop", [pure, storing, whiling], ids=lambda f: f.__name__)
def test_a_thread_runs_during_a_long_native_loop(tier, loop):
    """A pure-Python ticker thread records when it runs; a call of native code long enough
    for many switch intervals must see it run in the call's middle third. (Were the GIL
    held throughout the native code, the ticker could run only for a switch interval before
    the native code is entered and one after it returns, before the call's end is read.)"""
    ticks_in_a_long_call(tierjit.jit(loop, tier=tier), loop)


@pytest.mark.parametrize("tier", ["baseline", "opt"])
def test_a_thread_runs_during_a_long_recursion(tier):
    """Baseline code polls every 1024 self-calls, LLVM's when the ticker's flag is up
    (backends/llvm/ticker.py)."""
    global halving
    plain = halving
    halving = tierjit.jit(plain, tier=tier)       # its recursive calls reach the jitted one
    try:
        ticks_in_a_long_call(halving, plain)
    finally:
        halving = plain


def ticks_in_a_long_call(f, plain):
    a = np.zeros(8, np.int64)
    n = 1000
    assert f(a, n) == plain(np.zeros(8, np.int64), n)        # compiled, and right
    while True:                     # a call of at least 0.3 s on this machine
        t = time.perf_counter()
        alone = f(a, n)
        if time.perf_counter() - t > 0.3:
            break
        n *= 4
    stamps: list[float] = []
    stop = False

    def ticker():
        k = 0
        while not stop:
            k += 1
            if k % 1000 == 0:
                stamps.append(time.perf_counter())

    th = threading.Thread(target=ticker)
    th.start()
    try:
        while not stamps:
            time.sleep(0.001)
        start = time.perf_counter()
        got = f(a, n)
        end = time.perf_counter()
    finally:
        stop = True
        th.join()
    assert got == alone
    third = (end - start) / 3
    assert any(start + third <= s <= end - third for s in stamps), \
        f"the ticker did not run in the middle third of a {end - start:.2f} s native call"
