"""tierjit: a tiered, speculative just-in-time compiler for numeric Python.

    @tierjit.jit
    def f(x): ...

The public API only; everything heavy (llvmlite, numpy) is imported on first use.
"""

from __future__ import annotations

from collections.abc import Callable

from .runtime.config import Config, config

__version__ = "0.1.0"
__all__ = ["jit", "explain", "stats", "config", "Config"]


def jit(fn: Callable | None = None, *, tier: str = "auto"):
    """Compile `fn` just in time. Usable as `@jit` or `@jit(tier=...)`.

    tier: "auto" (default): runs as CPython at once, and is compiled to native code on the
    compiler thread once it is hot (see `tierjit.config`); "interp" (tier 0 only: Python
    generated from tierjit's IR) or "opt" (native code through LLVM from the first call,
    compiled by that call)."""
    from .runtime.dispatch import Dispatcher, dispatcher_of

    def wrap(f):
        if dispatcher_of(f) is not None:
            f = dispatcher_of(f).py_func
        if not callable(f) or not hasattr(f, "__code__"):
            raise TypeError(f"tierjit.jit: expected a Python function, got "
                            f"{type(f).__name__}")
        return Dispatcher(f, tier).entry

    if fn is None:
        return wrap
    return wrap(fn)


def explain(fn) -> str:
    """Why `fn` runs where it runs: one line per reason, naming the line and the construct,
    and the tier each specialisation reached."""
    from .runtime.dispatch import dispatcher_of
    d = dispatcher_of(fn)
    if d is None:
        raise TypeError(f"tierjit.explain: {fn!r} is not a function made by tierjit.jit")
    return d.explain()


def stats():
    """What the JIT did: every recorded event (compile, tier-up, deopt, give-up), per-function
    counters, the compiler thread's queue, the longest main-thread pause, and the settings.
    A dict of plain data (see tierjit.runtime.stats.Stats for its shape)."""
    from .runtime.stats import stats as _stats
    return _stats()
