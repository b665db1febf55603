"""The baseline tier's place in the runtime: building a specialisation's copy-and-patch code.

`compile_into(dispatcher, spec)` is what the dispatcher calls for tier="baseline" (and, in
adaptive tiering, for warm code on the calling thread): it copies and patches stencils
(backends/stencils) for the specialisation's typed IR, in microseconds, and records why when
it cannot. `ensure_baseline` builds a callee's baseline code when a baseline caller needs it.
"""

from __future__ import annotations


def compile_into(dispatcher, spec) -> None:
    """Give spec baseline native code (spec.native, tier "baseline"), or spec.reason."""
    from ..errors import Unsupported
    from .dispatch import STRICT
    try:
        from ..backends.stencils.code import compile_baseline
        spec.native = compile_baseline(dispatcher, spec)
    except Unsupported as e:
        spec.reason = e
        return
    except Exception as e:        # noqa: BLE001 - a compiler bug must not reach the program
        if STRICT:
            raise
        spec.reason = Unsupported("an internal compiler error in the baseline tier", 0,
                                  f"{type(e).__name__}: {e}")
        return
    spec.tier = "baseline"


def ensure_baseline(dispatcher, key) -> None:
    """Baseline code for dispatcher's specialisation `key`, for a baseline caller: typed IR
    and tier 0 as the dispatcher builds them, then copy-and-patch. The code lands in the
    dispatcher's baseline cell for key (backends.stencils.code.baseline_cells); it becomes
    the specialisation's native code only if it has none."""
    from ..backends.stencils.code import baseline_cells, compile_baseline
    from ..errors import Unsupported
    spec = dispatcher.specs.get(key)
    if spec is None or spec.tier0 is None:
        if dispatcher.tier == "baseline":
            dispatcher.specialise(key)
            return
        from ..backends.pyemit import compile_tier0
        from ..passes.pipeline import optimise
        from .dispatch import Specialisation
        typed = dispatcher.infer(key)
        spec = dispatcher.specs.setdefault(key, Specialisation(key))
        if spec.tier0 is None:
            typed.fn = optimise(typed.fn)
            spec.typed = typed
            spec.tier0 = compile_tier0(typed.fn, name=dispatcher.__name__)
            if spec.tier == "python":
                spec.tier = "interp"
    if baseline_cells(dispatcher).get(key) is not None and baseline_cells(dispatcher)[key].value:
        return
    try:
        code = compile_baseline(dispatcher, spec)
    except Unsupported:
        return
    spec.__dict__ if False else None
    _extra_codes(dispatcher)[key] = code
    if spec.native is None:
        spec.native, spec.tier = code, "baseline"


def _extra_codes(dispatcher) -> dict:
    d = dispatcher.__dict__.get("_baseline_codes")
    if d is None:
        d = dispatcher.__dict__.setdefault("_baseline_codes", {})
    return d
