"""The baseline tier's place in the runtime.

- tier="baseline": `compile_into(dispatcher, spec)` is the dispatcher's native compile: the
  specialisation's typed IR copied and patched (backends/stencils), its code in spec.native.
- tier="auto" (adaptive): when a signature is asked for once the function is warm (the
  dispatcher's hot rule), `warm` builds baseline code and puts it in the dispatch slot, in
  the compiler thread's job queued just before the LLVM build of the same signature (in the
  calling thread when compiles are synchronous); LLVM's code replaces it in the slot when
  it is ready. The baseline code works on its own optimised copy of the typed IR and resumes
  in its own tier-0 functions, so the LLVM build and its frame states are untouched. A baseline build
  that fails leaves the signature to LLVM, silently (`explain` shows LLVM's outcome), and so
  does code that would call Python for an operation in a loop (slower than CPython); one
  whose code deoptimises `config.max_deopts` times leaves the slot.
- A baseline caller needs its callees in baseline too: `ensure_baseline` builds them.

TIERJIT_BASELINE=0 in the environment leaves adaptive tiering without the baseline tier.
"""

from __future__ import annotations

import os

ENABLED = os.environ.get("TIERJIT_BASELINE", "1") not in ("0", "")


def compile_into(dispatcher, spec) -> None:
    """Give spec baseline native code (spec.native, tier "baseline"), or spec.reason."""
    from ..errors import Unsupported, from_signal_handler
    from .dispatch import STRICT
    try:
        from ..backends.stencils.code import compile_baseline
        spec.native = compile_baseline(dispatcher, spec)
    except Unsupported as e:
        spec.reason = e
        return
    except Exception as e:        # noqa: BLE001 - a compiler bug must not reach the program
        if STRICT or from_signal_handler(e):     # (the program's: see dispatch.specialise)
            raise
        spec.reason = Unsupported("an internal compiler error in the baseline tier", 0,
                                  f"{type(e).__name__}: {e}")
        return
    spec.tier = "baseline"


def _codes(dispatcher) -> dict:
    """Per dispatcher: argument types -> baseline code built outside spec.native."""
    d = dispatcher.__dict__.get("_baseline_codes")
    if d is None:
        d = dispatcher.__dict__.setdefault("_baseline_codes", {})
    return d


def build_private(dispatcher, key):
    """Baseline code for dispatcher's signature `key` from its own optimised copy of the
    typed IR, leaving the specialisation's fields to the dispatcher. None if unsupported."""
    # imported here, not with this module: the program's thread imports it when a function
    # gets hot, and `dataclasses` (inspect, ast, dis, re) takes ~19 ms where NumPy has not
    # loaded it yet
    import dataclasses

    from ..backends.stencils.code import compile_baseline
    from ..errors import Unsupported
    from ..ir.clone import clone
    from ..passes.pipeline import optimise
    from .dispatch import Specialisation
    codes = _codes(dispatcher)
    if key in codes:
        return codes[key]
    codes[key] = None                      # also: being built (recursion)
    try:
        typed = dispatcher.infer(key)
        own = dataclasses.replace(typed, fn=optimise(clone(typed.fn)))
        spec = dispatcher.specs.setdefault(key, Specialisation(key))
        code = compile_baseline(dispatcher, spec, own, dispatcher.py_func,
                                python_in_loops=dispatcher.tier == "baseline")
    except Unsupported:
        return None
    codes[key] = code
    return code


def ensure_baseline(dispatcher, key) -> None:
    """Baseline code for a baseline caller's callee: the callee's own specialisation when it
    is a tier="baseline" function, else a private build (see build_private)."""
    if dispatcher.tier == "baseline":
        dispatcher.specialise(key)
    else:
        build_private(dispatcher, key)


def warm(dispatcher, args: tuple) -> None:
    """Adaptive tiering: the first time a warm function is called with these argument
    types, build baseline code now and switch the dispatch slot to it."""
    key, code = build(dispatcher, args)
    if code is None:
        return
    spec = dispatcher.specs.get(key)
    # not over LLVM's code; again if the slot lost it (e.g. in a child after fork())
    if (spec is None or spec.native is None) and _slot(dispatcher) != code.entry_address:
        _install(dispatcher, key, code)


def for_long_call(dispatcher, args: tuple):
    """Baseline code for a cold call predicted to be long (runtime.watch), built now on the
    calling thread, or None. Only from the stencil library's cache: building the library
    takes LLVM seconds, which the counting tier 0's OSR entries leave to the compiler
    thread."""
    from ..backends.stencils import library
    from .gcpause import gc_paused
    with gc_paused:                 # a compile's garbage, as in a synchronous first call
        if library.load(build=False) is None:
            return None
        return build(dispatcher, args)[1]


def build(dispatcher, args: tuple) -> tuple:
    """(argument types, baseline code for them): built on this thread the first time they
    are asked for (a `compile` event), None when the baseline tier cannot take them or the
    function has all the signatures it may have."""
    # The compiler thread may be importing the compiler right now (counting tier 0, typing
    # arguments): dataclasses reads `typing` from sys.modules without importing it, so a
    # half-imported `typing` breaks the type lattice's import here. `import typing` waits
    # for that import to finish (the module's import lock) before anything else goes on.
    import typing  # noqa: F401
    from .dispatch import _types_of          # (which the dispatcher's own typing then uses)
    key = tuple(_types_of(args))
    codes = _codes(dispatcher)
    if key in codes:
        code = codes[key]
        return key, None if code is not None and code.given_up else code
    if any(t is None for t in key):
        return key, None
    from .config import config
    if key not in dispatcher.specs and len(dispatcher.specs) >= config.max_specialisations:
        return key, None                  # further signatures run as CPython
    from time import perf_counter
    from .dispatch import STRICT, _fmt_types
    from .events import note_pause, record
    start = perf_counter()
    try:
        code = build_private(dispatcher, key)
    except Exception as e:        # noqa: BLE001 - a compiler bug must not reach the program
        from ..errors import from_signal_handler
        if from_signal_handler(e):       # the program's (see dispatch.specialise): built again
            _codes(dispatcher).pop(key, None)   # by a later call
            raise
        _codes(dispatcher)[key] = None
        if STRICT:
            raise
        record("error", dispatcher.__qualname__, _fmt_types(key), "baseline",
               detail=f"baseline build failed: {type(e).__name__}: {e}")
        return key, None
    except BaseException:               # Ctrl-C, SystemExit: the same
        _codes(dispatcher).pop(key, None)
        raise
    seconds = perf_counter() - start
    note_pause(seconds)
    if code is not None:
        record("compile", dispatcher.__qualname__, _fmt_types(key), "baseline", seconds,
               baseline_us=round(code.compile_seconds * 1e6, 1))
    return key, code


def _slot(dispatcher) -> int:
    from . import entry
    return entry.get_slot(dispatcher.entry) if entry.is_entry(dispatcher.entry) else 0


def _install(dispatcher, key, code) -> None:
    from . import entry
    from .dispatch import _fmt_types
    from .events import record
    if dispatcher.rebound_why is not None:      # started anew since (runtime/restart.py)
        return
    ok = entry.install(dispatcher.entry, code.entry_address)
    record("tier-up", dispatcher.__qualname__, _fmt_types(key), "baseline",
           slot="switched" if ok else "unchanged")

    def give_up():
        # (kept in _codes: its frames may be running, and a caller's baseline code may call
        # it; the dispatcher's calls no longer run it)
        code.given_up = True
        if _slot(dispatcher) == code.entry_address:
            entry.uninstall(dispatcher.entry)
        from .straight import after_give_up
        after_give_up(dispatcher)
        record("give-up", dispatcher.__qualname__, _fmt_types(key), "baseline",
               owner=dispatcher, reason="baseline code deoptimised max_deopts times")
    code.keepalive[0].on_give_up = give_up


def _after_fork_in_child() -> None:
    """Builds queued before fork() are forgotten in the child (runtime.compiler); a function
    running baseline code would never reach the dispatcher again to ask for them, so its slot
    goes back to the slow path, which asks again (and reinstalls the baseline code)."""
    from . import entry
    from .dispatch import whole_dispatchers
    for d in whole_dispatchers():
        for key, code in list(_codes(d).items()):
            spec = d.specs.get(key)
            if code is not None and (spec is None or spec.native is None) \
                    and _slot(d) == code.entry_address:
                entry.uninstall(d.entry)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
