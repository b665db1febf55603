"""Timing primitives: one call with the garbage collector paused, and best-of-N under a budget."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from typing import Any


def timed_call(fn: Callable[..., Any], args: tuple) -> tuple[float, Any]:
    """Seconds one call takes, and its result; gc is paused as timeit does."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        start = time.perf_counter()
        result = fn(*args)
        elapsed = time.perf_counter() - start
    finally:
        if enabled:
            gc.enable()
    return elapsed, result


def repeat_calls(
    fn: Callable[..., Any], args: tuple, repeat: int, budget_s: float
) -> tuple[list[float], Any]:
    """Up to `repeat` timed calls (at least one), stopping once they have used `budget_s`."""
    times: list[float] = []
    result: Any = None
    while len(times) < max(1, repeat):
        elapsed, result = timed_call(fn, args)
        times.append(elapsed)
        if sum(times) >= budget_s:
            break
    return times, result
