"""Dispatchers: what `@jit` makes of a Python function.

A Dispatcher owns the function's untyped IR (lowered lazily, once), its specialisations —
one per tuple of argument types — and the object users call (`entry`). A call whose
argument types have a native specialisation goes straight into native code through the
entry's dispatch slot; any other call lands in `Dispatcher.call` (the slow path), which
finds or builds the specialisation for those types in the dispatcher's tier, or runs the
original Python function when no tier can take it. The JIT never changes what the program
computes: every failure of the compiler ends in plain CPython.
"""

from __future__ import annotations

import functools
import inspect
import os
import threading
from dataclasses import dataclass, field
from typing import Any, Callable

from ..errors import Unsupported
from ..types.infer import CallTyper, Typed, infer
from ..types.lattice import Type, type_of_value

TIERS = ("auto", "interp", "opt")
# Tests set TIERJIT_STRICT=1 so that a bug in the compiler fails loudly instead of quietly
# running the function in a lower tier.
STRICT = os.environ.get("TIERJIT_STRICT", "") not in ("", "0")


@dataclass
class Specialisation:
    """Code for one tuple of argument types, in every tier built so far."""

    arg_types: tuple[Type, ...]
    typed: Typed | None = None
    tier0: Callable | None = None      # Python generated from the typed IR
    native: Any = None                 # backends.llvm NativeCode, when compiled
    tier: str = "python"               # highest tier it runs in: python, interp, opt
    reason: Unsupported | None = None  # why it is not in a higher tier
    resumes: dict = field(default_factory=dict)   # frame state -> tier-0 resume function
    deopts: dict = field(default_factory=dict)    # frame state -> how often it deoptimised
    core_cell: Any = None              # ctypes pointer cell: native callers call through it


class Dispatcher:
    """The compiler's view of one jitted Python function."""

    def __init__(self, py_func: Callable, tier: str = "auto"):
        if tier not in TIERS:
            raise ValueError(f"tierjit.jit: tier must be one of {', '.join(TIERS)}; "
                             f"got {tier!r}")
        self.py_func = py_func
        self.tier = "opt" if tier == "auto" else tier
        self.__name__ = py_func.__name__
        self.__qualname__ = getattr(py_func, "__qualname__", py_func.__name__)
        self.__doc__ = py_func.__doc__
        self.__module__ = py_func.__module__
        self.__wrapped__ = py_func
        self._sig = inspect.signature(py_func)
        self._simple_sig = all(p.kind is p.POSITIONAL_OR_KEYWORD and p.default is p.empty
                               for p in self._sig.parameters.values())
        self._ir = None
        self._ir_error: Unsupported | None = None
        self.specs: dict[tuple[Type, ...], Specialisation] = {}
        self._lock = threading.RLock()
        self.entry = _make_entry(self)

    # -- compilation ----------------------------------------------------------------------
    def untyped_ir(self):
        """The untyped IR, lowered on first use; raises Unsupported when it cannot be."""
        if self._ir is None and self._ir_error is None:
            from ..frontend import lower
            try:
                self._ir = lower(self.py_func)
            except Unsupported as e:
                self._ir_error = e
        if self._ir_error is not None:
            raise self._ir_error
        return self._ir

    def infer(self, arg_types: tuple[Type, ...], typer: CallTyper | None = None) -> Typed:
        """Typed IR for arg_types (cached unless it depended on an unfinished recursion)."""
        spec = self.specs.get(arg_types)
        if spec is not None and spec.typed is not None:
            return spec.typed
        if spec is not None and spec.reason is not None:
            raise spec.reason
        typer = typer if typer is not None else CallTyper()
        typed = infer(self.untyped_ir(), arg_types, key=(self, arg_types), typer=typer)
        if not typed.partial:
            self.specs.setdefault(arg_types, Specialisation(arg_types)).typed = typed
        return typed

    def specialise(self, arg_types: tuple[Type, ...]) -> Specialisation:
        """Build (once) the specialisation for arg_types in this dispatcher's tier."""
        with self._lock:
            spec = self.specs.get(arg_types)
            if spec is not None and (spec.tier != "python" or spec.reason is not None):
                return spec
            spec = self.specs.setdefault(arg_types, Specialisation(arg_types))
            try:
                if any(t is None for t in arg_types):
                    raise Unsupported("an argument of a type tierjit does not compile",
                                      self.py_func.__code__.co_firstlineno)
                spec.typed = self.infer(arg_types)
                from ..passes.pipeline import optimise
                spec.typed.fn = optimise(spec.typed.fn)
                from ..backends.pyemit import compile_tier0
                spec.tier0 = compile_tier0(spec.typed.fn, name=self.__name__)
                spec.tier = "interp"
                if self.tier == "opt":
                    self._compile_native(spec)
            except Unsupported as e:
                spec.reason = e
            except Exception as e:   # noqa: BLE001 - a compiler bug must not reach the program
                if STRICT:
                    raise
                spec.reason = Unsupported("an internal compiler error", 0,
                                          f"{type(e).__name__}: {e}")
            return spec

    def _compile_native(self, spec: Specialisation) -> None:
        from ..backends.llvm import compile_native
        try:
            spec.native = compile_native(self, spec)
        except Unsupported as e:
            spec.reason = e
            return
        except Exception as e:       # noqa: BLE001 - see specialise()
            if STRICT:
                raise
            spec.reason = Unsupported("an internal compiler error in the LLVM tier", 0,
                                      f"{type(e).__name__}: {e}")
            return
        spec.tier = "opt"
        _install(self, spec)

    def resume_function(self, spec: Specialisation, index: int) -> Callable:
        """Tier-0 code that resumes at frame state `index` of spec's native code."""
        f = spec.resumes.get(index)
        if f is None:
            from ..backends.pyemit import compile_tier0
            fs = spec.native.frame_states[index]
            f = spec.resumes[index] = compile_tier0(spec.typed.fn, fs, name=self.__name__)
        return f

    # -- calling ----------------------------------------------------------------------------
    def call(self, *args, **kwargs):
        """The slow path: every call the entry's native code does not take itself."""
        if kwargs or not self._simple_sig:
            try:
                bound = self._sig.bind(*args, **kwargs)
            except TypeError:
                return self.py_func(*args, **kwargs)      # CPython raises the TypeError
            bound.apply_defaults()
            if bound.kwargs:
                return self.py_func(*args, **kwargs)
            args = bound.args
        elif len(args) != len(self._sig.parameters):
            return self.py_func(*args)
        spec = self.specialise(tuple(type_of_value(a) for a in args))
        if spec.native is not None:
            return spec.native.entry_callable(*args)
        if spec.tier0 is not None:
            return spec.tier0(*args)
        return self.py_func(*args)

    # -- introspection ----------------------------------------------------------------------
    def latest(self) -> Specialisation | None:
        return next(reversed(self.specs.values()), None)

    def inspect(self, stage: str = "ir") -> str:
        """Text of one compiler stage for the latest specialisation:
        "ir", "typed", "opt", "py", "llvm" or "asm"."""
        from ..ir.printer import format_function
        stages = ("ir", "typed", "opt", "py", "llvm", "asm")
        if stage not in stages:
            raise ValueError(f"inspect: stage must be one of {', '.join(stages)}; got {stage!r}")
        if stage == "ir":
            try:
                return format_function(self.untyped_ir())
            except Unsupported as e:
                raise ValueError(f"inspect('ir'): {self.__name__} has no IR: "
                                 f"{e.describe()}") from None
        spec = self.latest()
        if spec is None:
            raise ValueError(f"inspect({stage!r}): {self.__name__} has not been called yet, "
                             "so it has no specialisation")
        if spec.typed is None:
            raise ValueError(f"inspect({stage!r}): no typed IR for {self.__name__}"
                             f"{_fmt_types(spec.arg_types)}: {spec.reason}")
        if stage == "typed":
            return format_function(infer(self.untyped_ir(), spec.arg_types).fn)
        if stage == "opt":
            return format_function(spec.typed.fn)
        if stage == "py":
            return spec.tier0.__tierjit_source__
        if spec.native is None:
            raise ValueError(f"inspect({stage!r}): {self.__name__}{_fmt_types(spec.arg_types)}"
                             f" has no native code" + (f": {spec.reason}" if spec.reason else ""))
        return spec.native.llvm_text if stage == "llvm" else spec.native.asm

    def explain(self) -> str:
        lines = [f"{self.__qualname__} (tier={self.tier}):"]
        try:
            self.untyped_ir()
        except Unsupported as e:
            lines.append(f"  runs as plain CPython: {e.describe()}")
            return "\n".join(lines)
        if not self.specs:
            lines.append("  compiles on its first call (no specialisation yet)")
        for spec in self.specs.values():
            head = f"  {self.__name__}{_fmt_types(spec.arg_types)}: {spec.tier}"
            if spec.reason is not None:
                head += f" — not in a higher tier because {spec.reason.describe()}"
            lines.append(head)
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<tierjit dispatcher {self.__qualname__}>"


def _fmt_types(types) -> str:
    return "(" + ", ".join("?" if t is None else str(t) for t in types) + ")"


def _make_entry(d: Dispatcher):
    """The object users call. Native entry objects come from runtime.entry when available."""
    try:
        from . import entry as _entry
    except ImportError:
        _entry = None
    if _entry is not None and getattr(_entry, "AVAILABLE", True):
        try:
            return _entry.make_entry(d, d.call)
        except Exception:      # noqa: BLE001 - no native entry here: a Python one works
            if STRICT:
                raise

    @functools.wraps(d.py_func)
    def call(*args, **kwargs):
        return d.call(*args, **kwargs)

    call.__tierjit_dispatcher__ = d
    call.inspect = d.inspect
    return call


def _install(d: Dispatcher, spec: Specialisation) -> None:
    """Point the entry's dispatch slot at spec's native entry."""
    from . import entry as _entry
    if hasattr(d.entry, "__tierjit_dispatcher__") and not _entry.is_entry(d.entry):
        return
    _entry.set_slot(d.entry, spec.native.entry_address)


def dispatcher_of(obj) -> Dispatcher | None:
    """The Dispatcher behind a jitted callable (or None)."""
    if isinstance(obj, Dispatcher):
        return obj
    try:
        d = obj.__tierjit_dispatcher__
    except Exception:          # noqa: BLE001 - any object may be asked
        return None
    return d if isinstance(d, Dispatcher) else None
