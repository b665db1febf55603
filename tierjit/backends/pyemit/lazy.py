"""Tier 0 of a native specialisation, generated the first time it is needed.

Native code runs its specialisation's tier 0 only for the calls its entry does not take (the
entry's fallback), once native code has been given up, and for `inspect("py")`; most
specialisations never do. Generating it — emitting the source, compiling it, giving it the
user's line numbers — took 1-3 ms of every compile of a loop kernel, a fifth of the front
half, on the program's thread for `tier="opt"` and `"baseline"`. So the specialisation holds
this stand-in, which generates it at its first use.

It reads the specialisation's typed IR then, as deopt resumes do (runtime.dispatch.resume):
that IR does not change once the specialisation's code is built, and two threads may
generate from it at once (each gets a function for the same code; one is kept).
"""

from __future__ import annotations

from ...ir.nodes import Function


class LazyTier0:
    """A callable that is tier 0 of `fn` (compile_tier0's function), generated when first
    called or read; `python`, the original function, stands in for it should generating it
    fail (a compiler bug must not reach the program; under TIERJIT_STRICT it does)."""

    __slots__ = ("_f", "_fn", "_name", "_python")

    def __init__(self, fn: Function, name: str, python) -> None:
        self._fn, self._name, self._python, self._f = fn, name, python, None

    def compiled(self):
        """The generated function (generating it now if it is not yet)."""
        f = self._f
        if f is None:
            from time import perf_counter

            from ...runtime.events import note_pause
            from .emit import compile_tier0
            start = perf_counter()
            try:
                f = compile_tier0(self._fn, name=self._name)
            except Exception:
                from ...runtime.dispatch import STRICT
                if STRICT:
                    raise
                f = self._python
            note_pause(perf_counter() - start)      # JIT work on the program's thread
            if self._f is None:
                self._f = f
            f = self._f
        return f

    def __call__(self, *args):
        return self.compiled()(*args)

    @property
    def __tierjit_source__(self) -> str:
        return self.compiled().__tierjit_source__

    @property
    def __code__(self):
        """The generated function's code once it exists, else None: the sampler
        (tools/sampler.py) names the code objects it may find in a frame, and must not
        generate any (it runs in a signal handler)."""
        f = self._f
        return None if f is None else f.__code__
