"""Dispatchers: what `@jit` makes of a Python function.

A Dispatcher owns the function's untyped IR (lowered lazily, once), its specialisations —
one per tuple of argument types — and the object users call (`entry`). A call whose
argument types have a native specialisation installed goes straight into native code through
the entry's dispatch slot; any other call lands in the dispatcher's slow path.

The slow path depends on the tier the function was decorated with:

- "auto" (the default) is adaptive. A cold function runs as the original CPython function
  behind a call counter and a clock — no lowering, no typing, no LLVM. Once it is hot
  (`config.hot_calls` calls, or `config.hot_seconds` spent in its cold calls) each new
  argument-type signature is queued for the compiler thread, and the call runs on in CPython;
  when the native code is ready the compiler thread switches the dispatch slot. Calls already
  running finish in the code they started in. Until then the object users call is a shim
  (runtime.shim), which runs the cold phase itself and becomes a native entry in place.
- "interp" builds tier 0 (Python generated from tierjit's IR) on the first call of each
  signature; "opt" builds native code on the first call, synchronously.

Deoptimisations arrive in `resume_function`: each is counted and recorded, and a specialisation
that deoptimises `config.max_deopts` times loses its native code (the give-up event: the slot
goes back to the slow path, which runs CPython for "auto" and tier 0 otherwise).

Parts of a Dispatcher live beside it: its base, runtime.shim's ColdDispatcher (the cold
phase's state, what a cold call runs, the value profile), and mixed in, runtime.watch (lowering a watched function
to counting tier 0, for OSR), runtime.speculation (value specialisation and speculation
feedback) and runtime.introspect (inspect, explain, counters). A function decorated with tier
"auto" starts with a ColdDispatcher (runtime.shim) instead, made a Dispatcher in place when
more than its cold phase is needed: `_complete` adds what it lacks.

The JIT never changes what the program computes: every failure of the compiler ends in plain
CPython. Nothing here imports the compiler (or llvmlite, or NumPy) until a function is hot,
and `@jit` does not import this module before something needs a Dispatcher.
"""

import os
import sys
from _thread import RLock, get_ident as _get_ident
from _weakref import ref as _weakref
from time import perf_counter as _clock
from types import FunctionType as _FunctionType
from types import MethodType as _MethodType

from .config import config as _config
from . import shim as _shim
from .gcpause import gc_paused
from .introspect import Introspection, _fmt_types
from .restart import Restarting
from .shim import LAYOUT_OK as _SHIMS
from .shim import _NESTED, ColdDispatcher, make_shim, register, registered
from .speculation import RESPECULATE_AFTER, Speculating, _matches
from .watch import Watching

# Decorating must stay cheap (microseconds; typing alone costs ~8 ms to import), so this
# module imports only what every interpreter has loaded already; annotations are strings.
TYPE_CHECKING = False
if TYPE_CHECKING:                       # pragma: no cover - typing only
    from collections.abc import Callable
    from typing import Any

    from ..errors import Unsupported
    from ..ir.nodes import Function
    from ..types.infer import CallTyper, Typed
    from ..types.lattice import Type

TIERS = ("auto", "interp", "baseline", "opt")
# Tests set TIERJIT_STRICT=1 so that a bug in the compiler fails loudly instead of quietly
# running the function in a lower tier.
STRICT = os.environ.get("TIERJIT_STRICT", "") not in ("", "0")

_CO_VARARGS, _CO_VARKEYWORDS = 0x04, 0x08
_INTERRUPTED = "its compile was interrupted by the program's exception (Ctrl-C, a signal handler's)"
_type_of_value: "Callable[[Any], Any] | None" = None     # types.lattice.type_of_value, once hot


class Specialisation:
    """Code for one tuple of argument types, in every tier built so far."""

    __slots__ = ("arg_types", "typed", "tier0", "native", "tier", "reason", "resumes",
                 "deopts", "core_cell", "requested", "built", "gave_up", "error", "installed",
                 "deopt_count", "queued_at", "values", "value_spec", "avoid", "replaced",
                 "guard")

    def __init__(self, arg_types: "tuple[Type, ...]") -> None:
        self.arg_types = arg_types
        self.typed: Typed | None = None
        # Python generated from the typed IR; for a native specialisation, a stand-in that
        # generates it when first needed (backends/pyemit/lazy.py)
        self.tier0: Callable | None = None
        self.native: Any = None                 # backends.llvm NativeCode, when compiled
        self.tier = "python"                    # highest tier it runs in: python, interp, opt
        self.reason: Unsupported | None = None  # why it is not in a higher tier
        self.resumes: dict = {}                 # frame state -> tier-0 resume function
        self.deopts: dict = {}                  # frame state -> how often it deoptimised
        self.core_cell: Any = None              # ctypes cell: native callers call through it
        self.requested = False                  # a build was asked for (queued or done)
        self.built = False                      # the build finished (whatever its outcome)
        self.gave_up: str | None = None         # why its native code is no longer used
        self.error: BaseException | None = None  # a compiler bug met in the background
        self.installed = False                  # its native entry is in the dispatch slot
        self.deopt_count = 0
        self.queued_at = 0.0
        # Value specialisation (passes.values): on the version compiled for constant
        # arguments, {argument index: value}; on a generic one, that version while it is used.
        self.values: dict[int, Any] | None = None
        self.value_spec: Specialisation | None = None
        # Deoptimisation feedback: speculations this version leaves out because they failed
        # in an earlier one (passes.pipeline), and whether a successor is being built.
        self.avoid: frozenset = frozenset()
        self.replaced = False
        # what tier 0's calls (and an OSR entry's transfers) check first (runtime/names.py;
        # native code checks at its own entry)
        self.guard: Any = None

    @property
    def runs_native(self) -> bool:
        return self.native is not None and self.gave_up is None

    def __repr__(self) -> str:
        return f"<Specialisation {_fmt_types(self.arg_types, self.values)} {self.tier}>"


class Dispatcher(ColdDispatcher, Watching, Speculating, Restarting, Introspection):
    """The compiler's view of one jitted Python function."""

    def __init__(self, py_func: "Callable", tier: str = "auto"):
        if tier not in TIERS:
            raise ValueError(f"tierjit.jit: tier must be one of {', '.join(TIERS)}; "
                             f"got {tier!r}")
        self._begin(py_func, tier)
        self._complete()
        self.entry = _make_entry(self)
        register(self)

    def _complete(self) -> None:
        """What a Dispatcher has besides the cold phase's state (ColdDispatcher._begin): its
        specialisations and their locks. Also called on a ColdDispatcher, just before it
        becomes a Dispatcher (runtime.shim)."""
        py_func = self.py_func
        code = py_func.__code__
        # Plain positional parameters, no defaults: calls need no binding (the common case).
        self._simple_sig = (not code.co_flags & (_CO_VARARGS | _CO_VARKEYWORDS)
                            and code.co_kwonlyargcount == 0 and code.co_posonlyargcount == 0
                            and not py_func.__defaults__)
        self._signature = None               # inspect.Signature, only when binding is needed
        self._signature_of: tuple = ()        # the defaults it was made with
        self._ir = None
        self._ir_error: Unsupported | None = None
        self.specs: dict[tuple[Type, ...], Specialisation] = {}
        self._lock = RLock()                 # held while building (never by the cold path)
        self._ir_lock = RLock()
        self._warming: set = set()               # Python signatures queued for baseline
        self.hot_after = 0                   # calls when it became hot
        self._pending: set[_Build] = set()   # queued builds (set add/discard are atomic)
        self.compiles = 0
        self.compile_seconds = 0.0
        # runtime/restart.py: why a free name made it start anew, and the dispatcher that
        # did; on that successor, its predecessor's why, how many restarts in a row led to
        # it, and weak references to the predecessors, oldest first
        self.rebound_why: str | None = None
        self.successor: Dispatcher | None = None
        self.rebound_from: str | None = None
        self.rebinds = 0
        self.predecessors: list = []
        self.born = _clock()

    # -- compilation ----------------------------------------------------------------------
    def untyped_ir(self):
        """The untyped IR, lowered on first use; raises Unsupported when it cannot be."""
        if self._ir is None and self._ir_error is None:
            from ..errors import Unsupported
            from ..frontend import lower
            with self._ir_lock:
                if self._ir is None and self._ir_error is None:
                    try:
                        self._ir = lower(self.py_func)
                    except Unsupported as e:
                        self._ir_error = e
        if self._ir_error is not None:
            raise self._ir_error
        return self._ir

    def infer(self, arg_types: "tuple[Type, ...]", typer: "CallTyper | None" = None) -> "Typed":
        """Typed IR for arg_types (cached unless it depended on an unfinished recursion).
        Nobody changes what this returns: specialise optimises a copy of it. Two threads may
        type one signature at once (a call predicted long builds baseline code while the
        compiler thread builds the same function): the first result is kept, the second is
        its caller's alone, so spec.typed never changes under native code built from it."""
        from ..types.infer import CallTyper, infer
        spec = self.specs.get(arg_types)
        if spec is not None and spec.typed is not None:
            return spec.typed
        if spec is not None and spec.reason is not None:
            raise spec.reason
        typer = typer if typer is not None else CallTyper()
        typed = infer(self.untyped_ir(), arg_types, key=(self, arg_types), typer=typer)
        if not typed.partial:
            spec = self.specs.setdefault(arg_types, Specialisation(arg_types))
            if spec.typed is None:
                spec.typed = typed
        return typed

    def specialise(self, arg_types: "tuple[Type, ...]") -> "Specialisation":
        """Build (once, synchronously) the specialisation for arg_types in this dispatcher's
        top tier: tier 0 for "interp", native code for "opt" and "auto"."""
        from ..errors import Unsupported, from_signal_handler
        with self._lock:
            spec = self.specs.get(arg_types)
            if spec is not None and (spec.built or spec.tier != "python"
                                     or spec.reason is not None):
                return spec
            spec = self.specs.setdefault(arg_types, Specialisation(arg_types))
            spec.requested = True
            start = _clock()
            front = llvm = 0.0
            interrupted = False
            try:
                if any(t is None for t in arg_types):
                    raise Unsupported("an argument of a type tierjit does not compile",
                                      self.py_func.__code__.co_firstlineno)
                typed = self.infer(arg_types)
                from dataclasses import replace

                from ..ir.clone import clone
                from ..passes.pipeline import optimise
                # a copy: another thread may be copying typed.fn for its baseline code
                # (runtime/baseline.py build_private), and the passes change what they get
                spec.typed = replace(typed, fn=optimise(clone(typed.fn), spec.avoid))
                spec.tier0 = _tier0(self, spec.typed.fn, now=self.tier == "interp")
                spec.tier = "interp"
                from .names import guard_for
                spec.guard = guard_for(self, spec.typed.fn)
                front = _clock() - start
                if self.tier != "interp":
                    self._compile_native(spec)
                    llvm = _clock() - start - front
                    _tier0_if_no_native(spec)
            except Unsupported as e:
                spec.reason = e
            except Exception as e:   # noqa: BLE001 - a compiler bug must not reach the program
                if from_signal_handler(e):
                    # the program's exception (its signal handler ran during the compile, a
                    # timeout's alarm): raised as under CPython, and a later call builds again
                    interrupted = True
                    raise
                if STRICT:
                    spec.error = e
                    raise
                spec.reason = Unsupported("an internal compiler error", 0,
                                          f"{type(e).__name__}: {e}")
            except BaseException:            # Ctrl-C, SystemExit: the same
                interrupted = True
                raise
            finally:
                if interrupted:
                    spec.requested = False
                    spec.tier, spec.tier0, spec.typed, spec.native = "python", None, None, None
                else:
                    spec.built = True
                    self._compiled(spec, _clock() - start, front, llvm)
            if spec.native is not None:
                self._install(spec)
            return spec

    def _compile_native(self, spec: "Specialisation") -> None:
        if self.tier == "baseline":          # copy-and-patch (runtime/baseline.py)
            from .baseline import compile_into
            return compile_into(self, spec)
        from ..backends.llvm import compile_native
        from ..errors import Unsupported, from_signal_handler
        try:
            spec.native = compile_native(self, spec)
        except Unsupported as e:
            spec.reason = e
            return
        except Exception as e:       # noqa: BLE001 - see specialise()
            if STRICT or from_signal_handler(e):
                raise
            spec.reason = Unsupported("an internal compiler error in the LLVM tier", 0,
                                      f"{type(e).__name__}: {e}")
            return
        spec.tier = "opt"

    def build_version(self, spec: "Specialisation", source: "Callable", key: tuple,
                      prepare: "Callable | None" = None, **detail: "Any") -> None:
        """Build a version that is not a plain type specialisation (a value-specialised one,
        an OSR entry): the untyped IR `source()` typed for spec's argument types (under the
        recursion key `key`), `prepare`d, optimised, then its tier 0 and native code; or, when
        `source()` is a Typed, that typed and optimised IR (runtime/tierup.py). A failure
        ends in spec.reason (raised under STRICT); one compile event, with `detail`."""
        from ..errors import Unsupported, the_programs
        from ..passes.pipeline import optimise
        from ..types.infer import Typed, infer
        start = _clock()
        front = llvm = 0.0
        try:
            made = source()
            if isinstance(made, Typed):
                spec.typed = made
            else:
                spec.typed = infer(made, spec.arg_types, key=key)
                if prepare is not None:
                    spec.typed.fn = prepare(spec.typed.fn)
                spec.typed.fn = optimise(spec.typed.fn, spec.avoid)
            spec.tier0 = _tier0(self, spec.typed.fn)
            spec.tier = "interp"
            front = _clock() - start
            self._compile_native(spec)
            llvm = _clock() - start - front
            _tier0_if_no_native(spec)
        except Unsupported as e:
            spec.reason = e
        except BaseException as e:   # noqa: BLE001 - a compiler bug must not reach the program
            if the_programs(e):
                # the program's (Ctrl-C, a handler's exception): see specialise()
                spec.reason = Unsupported(_INTERRUPTED, 0, f"{type(e).__name__}: {e}")
                raise
            spec.error = e
            spec.reason = Unsupported("an internal compiler error", 0, f"{type(e).__name__}: {e}")
            if STRICT:
                raise
        finally:
            spec.built = True
            self._compiled(spec, _clock() - start, front, llvm, **detail)

    def _compiled(self, spec: "Specialisation", seconds: float, front: float,
                  llvm: float, **extra: "Any") -> None:
        """Count and record one build (the compile event)."""
        from .events import note_pause, record
        self.compiles += 1
        self.compile_seconds += seconds
        detail: dict[str, Any] = {"front_ms": round(front * 1e3, 3),
                                  "llvm_ms": round(llvm * 1e3, 3), **extra}
        if spec.queued_at:
            detail["queued_ms"] = round((_clock() - spec.queued_at - seconds) * 1e3, 3)
        if spec.reason is not None:
            detail["reason"] = spec.reason.describe()
        if spec.error is not None:
            detail["error"] = f"{type(spec.error).__name__}: {spec.error}"
        record("compile", self.__qualname__, _fmt_types(spec.arg_types, spec.values),
               spec.tier, seconds, **detail)
        note_pause(seconds)

    def _install(self, spec: "Specialisation") -> None:
        """Point the entry's dispatch slot at spec's native code (the tier-up event)."""
        from . import entry as _entry
        from .events import record
        if not spec.runs_native or self.rebound_why is not None:
            return
        programs = None
        try:
            ok = _entry.install(self.entry, spec.native.entry_address)
        except BaseException as e:   # noqa: BLE001 - no slot: the slow path still runs native
            from ..errors import the_programs
            if the_programs(e):
                # the program's (Ctrl-C, a handler's exception): raised once the slot is set
                programs = e
                ok = _entry.install(self.entry, spec.native.entry_address)
            else:
                if STRICT:
                    raise
                ok = False
                record("error", self.__qualname__, _fmt_types(spec.arg_types), "opt",
                       detail=f"slot not switched: {type(e).__name__}: {e}")
        if ok:
            for other in list(self.specs.values()):
                other.installed = False
                if other.value_spec is not None:
                    other.value_spec.installed = False
            spec.installed = True
            if self.tier == "auto" and spec.tier == "opt":
                from .tierup import superseded
                superseded(self, spec.arg_types)
        record("tier-up", self.__qualname__, _fmt_types(spec.arg_types, spec.values), "opt",
               slot="switched" if ok else "unchanged")
        if programs is not None:
            raise programs

    def resume_function(self, spec: "Specialisation", index: int,
                        counted: bool = True) -> "Callable":
        """Tier-0 code that resumes at frame state `index` of spec's native code.

        Called by native code at every failing guard (backends.llvm.codegen._resume), so
        this is where deopts are counted, recorded and, past `config.max_deopts`, given up
        (not `counted`: no failed guard, a call nested too deep for native code)."""
        if counted:
            self._deopted(spec, index)
        f = spec.resumes.get(index)
        if f is None:
            from ..backends.pyemit import compile_tier0
            from .events import note_pause, record
            start = _clock()
            fs = spec.native.frame_states[index]
            f = spec.resumes[index] = compile_tier0(native_fn(spec), fs, name=self.__name__)
            seconds = _clock() - start
            record("compile", self.__qualname__, _fmt_types(spec.arg_types), "resume",
                   seconds, frame_state=index)
            note_pause(seconds)
        return f

    # -- deoptimisation feedback ------------------------------------------------------------
    def _deopted(self, spec: "Specialisation", index: int) -> None:
        from .events import record
        spec.deopt_count += 1
        if spec.gave_up is not None:
            # Native callers that inlined this code still deoptimise into it (until they are
            # recompiled): counted, not logged again.
            return
        record("deopt", self.__qualname__, _fmt_types(spec.arg_types), spec.tier,
               **_frame_state_detail(spec, index))
        if spec.deopts.get(index, 0) >= RESPECULATE_AFTER and not spec.replaced \
                and spec.values is None and self.specs.get(spec.arg_types) is spec:
            self._respeculate(spec, index)
        if spec.deopt_count >= _config.max_deopts:
            self.give_up(spec, f"{spec.deopt_count} deopts (max_deopts="
                               f"{_config.max_deopts}); most at "
                               f"{_describe_frame_state(spec, _most_deopts(spec))}")

    def give_up(self, spec: "Specialisation", why: str) -> None:
        """Stop using spec's native code: its calls go to the slow path from now on."""
        from . import entry as _entry
        from .events import record
        if spec.gave_up is not None:
            return
        spec.gave_up = why
        spec.tier = "python" if self.tier == "auto" or spec.tier0 is None else "interp"
        if spec.installed:
            spec.installed = False
            _entry.uninstall(self.entry)
            from .straight import after_give_up
            after_give_up(self)
        if self.tier == "auto" and self.specs.get(spec.arg_types) is spec:
            from .tierup import superseded
            superseded(self, spec.arg_types, False)
        record("give-up", self.__qualname__, _fmt_types(spec.arg_types), spec.tier,
               owner=self, reason=why)

    # -- calling ----------------------------------------------------------------------------
    def call(self, *args, **kwargs):
        """Call the function as its users do (through the entry and its dispatch slot)."""
        return self.entry(*args, **kwargs)

    def _call_auto(self, *args, **kwargs):
        """tier="auto": the entry's fallback for calls native code did not take, once hot
        (the cold phase is handled by the shim itself, one Python frame shallower), and
        for the calls the straight slot passes on (runtime.straight)."""
        if _get_ident() == _shim.compiler_ident:        # a finalizer's call: see there
            return self.py_func(*args, **kwargs)
        if self.successor is not None:
            return self._successor(args, kwargs)
        self.calls += 1
        if self.straight:                        # runtime.straight: calls made from C
            if self.loops:
                from .straight import enter, leave
                f, token = enter(self, args, kwargs)
                if f is not None:
                    try:
                        return f(*args, **kwargs)
                    finally:
                        leave(self, token, args, kwargs)
            else:
                from .straight import target
                f = target(self, args, kwargs)
                if f is not None:
                    return f(*args, **kwargs)
        if self.cold:
            self.became_hot(None, None)
        if self.bypass:
            f = self.cold_target(args, kwargs)
        else:
            bound = self._positional(args, kwargs)
            if bound is None:        # only CPython binds these
                f = self.py_func
            else:
                f = self._code_for(bound)
                if f is not None:
                    return f(*bound)
                if self.straight is None and not self.calls & 1023:
                    self.straight_if_python_only()
                f, args, kwargs = self.cold_target(bound, {}), bound, {}
        # No native code runs the call. Nested in such calls (a recursion: a function that
        # does not compile, or not yet), the function goes straight (runtime.straight), as
        # the shim's cold calls do.
        if self.nested >= _NESTED:
            self.nested_deep()
        self.nested += 1
        try:
            return f(*args, **kwargs)
        finally:
            self.nested -= 1

    def straight_if_python_only(self) -> None:
        """No native code runs any of its calls (every signature refused or given up, or the
        function does not lower): they go straight from now on, as after a give-up, rather
        than through the shim or this dispatcher, which type and dispatch each one in Python
        (~0.4-2.5 us, many times a small function's own time). Asked every 1024 calls that
        run no native code: the entry type may still be on its way (runtime.straight)."""
        from .straight import after_give_up
        after_give_up(self)

    def _code_for(self, bound: tuple) -> "Callable | None":
        """The native code that runs a call with these arguments (its specialisation's, a
        value-specialised version's, adaptive baseline code), its build requested if their
        types are new; None when there is none."""
        spec = self._spec_for(bound)
        if spec is not None:
            if spec.runs_native:
                return spec.native.entry_callable
            vs = spec.value_spec
            if vs is not None and vs.runs_native:
                if _matches(bound, vs.values):
                    return vs.native.entry_callable
                if spec.gave_up is not None and not self.calls & 1023:
                    # Its generic version gave up: a call with other values comes through
                    # here (~2 us) and runs as CPython, and such calls keep coming (only they
                    # reach the dispatcher). Without this version too, they go straight.
                    self.give_up(vs, "the generic version gave up, and calls with other "
                                     "values kept coming")
            code = self.__dict__.get("_baseline_codes", {}).get(spec.arg_types)
            if code is not None and not code.given_up:   # adaptive baseline (runtime/baseline.py)
                return code.entry_callable
        return None

    def _call_now(self, *args, **kwargs):
        """tier="interp" / "opt": build the call's specialisation now and run it."""
        if self.successor is not None:
            return self._successor(args, kwargs)
        self.calls += 1
        if self.straight:                        # runtime.straight: calls made from C
            from .straight import target
            f = target(self, args, kwargs)
            if f is not None:
                return f(*args, **kwargs)
        bound = self._positional(args, kwargs)
        if bound is None:
            return self.py_func(*args, **kwargs)
        key = tuple(_types_of(bound))
        spec = self.specs.get(key)
        if spec is None or not spec.built:   # (built: what specialise would return, unlocked)
            with gc_paused:                  # runtime/gcpause.py: ~5-10 ms of a first call
                spec = self.specialise(key)
        if spec.runs_native:
            return spec.native.entry_callable(*bound)
        tier0 = spec.tier0                   # (read once: another thread may restart it)
        if tier0 is not None:
            guard = spec.guard
            if guard is not None and not guard.current():
                return guard(*bound)
            return tier0(*bound)
        if self._ir_error is not None and self.straight is None:
            self.go_straight()                   # nothing compiles: CPython's recursion depth
        return self.py_func(*bound)

    def became_hot(self, args: tuple | None, kwargs: dict | None) -> None:
        """The cold phase is over; given the call's arguments, queue their signature now."""
        if not self.cold:
            return
        self.cold = False
        # called before the hot call is counted as cold (args None) or after (args given)
        self.hot_after = self.calls if args is not None else self.calls - 1
        if args is not None:
            bound = self._positional(args, kwargs or {})
            if bound is not None:
                self._spec_for(bound)

    def _positional(self, args: tuple, kwargs: dict) -> tuple | None:
        """The call's arguments as one positional tuple, or None when only CPython can bind
        them (a TypeError, *args, **kwargs, keyword-only parameters)."""
        if not kwargs and self._simple_sig:
            return args if len(args) == self._nparams else None
        f = self.py_func
        if self._signature is None or self._signature_of != (f.__defaults__, f.__kwdefaults__):
            import inspect                       # (its defaults replaced: made again)
            self._signature = inspect.signature(f)
            self._signature_of = (f.__defaults__, f.__kwdefaults__)
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError:
            return None                  # calling py_func raises CPython's TypeError
        bound.apply_defaults()
        if bound.kwargs:
            return None
        return bound.args

    def _spec_for(self, args: tuple) -> "Specialisation | None":
        """The specialisation for these arguments' types; requests its build when new."""
        if _type_of_value is not None:
            # a signature built before (its baseline code asked for then, see _warm): every
            # call of a signature without native code comes here, so nothing more
            spec = self.specs.get(tuple(_types_of(args)))
            if spec is not None and spec.built and spec.requested and \
                    (spec.error is None or not STRICT):
                return spec
        try:
            return self._request(args)
        except BaseException as e:
            from ..errors import the_programs
            if the_programs(e):
                self._request_again(args)
            raise

    def _request(self, args: tuple) -> "Specialisation | None":
        """_spec_for's request: the specialisation, its build asked for (baseline code first,
        under "auto"), built now when compiles are synchronous."""
        start = _clock()             # a request's work on this thread is a pause (_submit)
        if self.tier == "auto":                  # warm: baseline first (runtime/baseline.py)
            from . import baseline
            if baseline.ENABLED:
                self._warm(args)
        if _type_of_value is None and _config.background:
            # The type lattice is not loaded yet: importing it here (~20 ms) would pause the
            # program, so the compiler thread types the arguments too.
            from . import compiler
            if not compiler.get_compiler().is_compiler_thread():
                self._submit(_Build(self, None, args), start)
                return None
        key = tuple(_types_of(args))
        spec = self.specs.get(key)
        if spec is not None and spec.requested:
            if spec.error is not None and STRICT:
                raise RuntimeError(f"tierjit: compiling {self.__qualname__}{_fmt_types(key)} "
                                   f"failed: {type(spec.error).__name__}: {spec.error}"
                                   ) from spec.error
            return spec
        if spec is None and len(self.specs) >= _config.max_specialisations:
            return None
        spec = self.specs.setdefault(key, Specialisation(key))
        if spec.requested:
            return spec
        target = self._choose(spec, args)
        if target is None:
            return spec
        from . import compiler
        if _config.background and not compiler.get_compiler().is_compiler_thread():
            self._submit(_Build(self, target), start)
        elif target is not spec:
            self._build_values(target)
        else:
            self.specialise(key)
            # a function tierjit cannot lower runs as CPython without typing its calls
            self.bypass = self._ir_error is not None
        return spec

    def _request_again(self, args: tuple) -> None:
        """A request cut short by the program's exception (Ctrl-C, a signal handler's) is
        undone, for the next call to make: the signature unrequested, a value version not
        built dropped, and baseline code this request put in the slot taken out of it (the
        next call would run it, never coming back here to ask for LLVM's)."""
        if _type_of_value is None:
            return
        from . import entry as _entry
        key = tuple(_types_of(args))
        spec = self.specs.get(key)
        if spec is not None and not spec.built:
            spec.requested = False
            vs = spec.value_spec
            if vs is not None and (not vs.built or vs.reason is not None
                                   and vs.reason.construct == _INTERRUPTED):
                spec.value_spec = None
        code = self.__dict__.get("_baseline_codes", {}).get(key)
        if (spec is None or not spec.runs_native) and code is not None \
                and _entry.is_entry(self.entry) \
                and _entry.get_slot(self.entry) == code.entry_address:
            _entry.uninstall(self.entry)
            # (and the next request's _warm puts it back: asked for once per Python signature)
            self._warming.discard(tuple(type(a) for a in args))

    def _warm(self, args: tuple) -> None:
        """Baseline code for these arguments' types, ahead of LLVM's: built by this call when
        compiles are synchronous, else by the compiler thread's next job (typing, and the
        first call's stencil library load, take milliseconds: not a pause of the program)."""
        from . import baseline, compiler
        if not _config.background or compiler.get_compiler().is_compiler_thread():
            baseline.warm(self, args)
            return
        shape = tuple(type(a) for a in args)     # one job per Python signature, untyped
        if shape in self._warming or len(self._warming) >= _config.max_specialisations:
            return
        self._warming.add(shape)
        compiler.get_compiler().submit(_Warm(self, args))

    def _submit(self, job: "_Build", start: "float | None" = None) -> None:
        """Queue a build for the compiler thread; calls bypass typing until it is done. The
        pause noted runs from `start` (the request's first work on this thread: the baseline
        job queued ahead, typing the arguments), else from now."""
        from . import compiler
        from .events import note_pause
        job.queued_at = _clock()
        if job.spec is not None:
            job.spec.queued_at = job.queued_at
        self._pending.add(job)
        self.bypass = True
        if not compiler.get_compiler().submit(job):
            self._pending.discard(job)
            self.bypass = bool(self._pending)
        note_pause(_clock() - (job.queued_at if start is None else start))

    def _build_in_background(self, job: "_Build") -> None:
        spec = job.spec
        try:
            if job.replaces is not None:
                self._replace(job.replaces, spec)
                return
            if spec is None:               # queued with the arguments: type them here
                key = tuple(_types_of(job.args))
                spec = self.specs.get(key)
                if spec is None and len(self.specs) >= _config.max_specialisations:
                    return
                spec = self.specs.setdefault(key, Specialisation(key))
                if spec.requested:
                    return
                args, job.args = job.args, None
                spec = self._choose(spec, args)
                if spec is None:
                    return
                spec.queued_at = job.queued_at
            if spec.values is not None:
                self._build_values(spec)
            else:
                self.specialise(spec.arg_types)
        except Exception as e:        # noqa: BLE001 - STRICT: raised again by the next call
            if spec is not None:
                spec.error = spec.error or e
        finally:
            self._pending.discard(job)
            self.bypass = bool(self._pending) or self._ir_error is not None


class _Build:
    """A compiler-thread job: build one specialisation, or first find it from the arguments
    of a call (which the job holds until it has typed them). It holds its dispatcher weakly:
    a function the program dropped while its build waited in the queue (a closure made and
    called in a loop) is not compiled for nothing, nor kept alive until then."""

    __slots__ = ("dispatcher", "spec", "args", "queued_at", "replaces", "__qualname__")

    def __init__(self, dispatcher: "Dispatcher", spec: "Specialisation | None",
                 args: tuple | None = None) -> None:
        self.dispatcher, self.spec, self.args = _weakref(dispatcher), spec, args
        self.replaces: Specialisation | None = None     # a version spec takes over from
        self.queued_at = 0.0
        self.__qualname__ = dispatcher.__qualname__

    def __call__(self) -> None:
        d = self.dispatcher()
        if d is not None:
            d._build_in_background(self)


class _Warm:
    """A compiler-thread job: baseline code for a call's argument types (runtime.baseline);
    its dispatcher held weakly, as _Build's."""

    __slots__ = ("dispatcher", "args", "__qualname__")
    uses_llvm = False         # (but for the stencil library's first build: see compiler._loop)

    def __init__(self, dispatcher: "Dispatcher", args: tuple) -> None:
        self.dispatcher, self.args = _weakref(dispatcher), args
        self.__qualname__ = dispatcher.__qualname__

    def __call__(self) -> None:
        from . import baseline
        args, self.args = self.args, None
        d = self.dispatcher()
        if d is not None:
            baseline.warm(d, args)


def _tier0(d: "Dispatcher", fn, now: bool = False):
    """Tier 0 of one of d's specialisations: generated now for tier "interp", whose code it
    is; for native code, when first needed (backends/pyemit/lazy.py)."""
    if now:
        from ..backends.pyemit import compile_tier0
        return compile_tier0(fn, name=d.__name__)
    from ..backends.pyemit.lazy import LazyTier0
    return LazyTier0(fn, d.__name__, d.py_func)


def _tier0_if_no_native(spec: "Specialisation") -> None:
    """A specialisation left without native code runs its tier 0 on every call: generate it
    now, rather than through the stand-in's extra call each time."""
    from ..backends.pyemit.lazy import LazyTier0
    if spec.native is None and type(spec.tier0) is LazyTier0:
        spec.tier0 = spec.tier0.compiled()


def _types_of(args: tuple):
    global _type_of_value
    if _type_of_value is None:
        from ..types.lattice import type_of_value
        _type_of_value = type_of_value
    return map(_type_of_value, args)


def _most_deopts(spec: "Specialisation") -> int:
    counts = list(spec.deopts.items())     # a copy: other threads may be deoptimising
    return max(counts, key=lambda kv: kv[1])[0] if counts else -1


def native_fn(spec: "Specialisation") -> "Function":
    """The IR spec's native code was made from, which its frame states index: baseline
    code's own copy (BaselineCode.fn: jumps threaded, self-calls inlined), else the
    specialisation's typed IR (the LLVM tier's)."""
    fn = getattr(spec.native, "fn", None)
    return fn if fn is not None else spec.typed.fn


def _frame_state_detail(spec: "Specialisation", index: int) -> "dict[str, Any]":
    """Where a deopt resumed: frame state number, block, instruction, source line, op."""
    detail: dict[str, Any] = {"frame_state": index}
    try:
        fs = spec.native.frame_states[index]
        block = native_fn(spec).blocks[fs.block]
        detail.update(block=fs.block, index=fs.index, live=len(fs.live))
        if fs.index < len(block.instrs):
            ins = block.instrs[fs.index]
            detail.update(line=ins.line, op=ins.op.value)
    except (AttributeError, IndexError, TypeError):
        pass
    return detail


def _describe_frame_state(spec: "Specialisation", index: int) -> str:
    d = _frame_state_detail(spec, index)
    where = f"line {d['line']} ({d['op']})" if "line" in d else "an unknown place"
    return f"{where}, frame state {index}"


# -- the object users call ----------------------------------------------------------------------

def _make_entry(d: "Dispatcher"):
    """The object users call.

    tier="auto": a shim (runtime.shim) that runs the cold phase without touching LLVM and
    becomes a native entry in place when the first native code is installed. "interp" and
    "opt": a native entry (runtime.entry) from the start. Where neither can exist, a Python
    wrapper (and, for "auto", plain CPython: there is no native tier to go to)."""
    if d.tier == "auto":
        if _SHIMS:
            return make_shim(d, d._call_auto)
        d.cold, d.bypass = False, True
        fallback = d.py_func
    else:
        from . import entry as _entry
        fallback = d._call_now
        if _entry.AVAILABLE:
            try:
                return _entry.make_entry(d, fallback)
            except Exception:      # noqa: BLE001 - no native entry here: a Python one works
                if STRICT:
                    raise

    import functools

    @functools.wraps(d.py_func)
    def call(*args, **kwargs):
        return fallback(*args, **kwargs)

    call.__tierjit_dispatcher__ = d
    call.inspect = d.inspect
    return call


def dispatcher_of(obj) -> "Dispatcher | None":
    """The Dispatcher behind a jitted callable (or None); a ColdDispatcher is made whole.
    Asked of any object (lowering asks it of every object a free name holds), it reads the
    attribute only of tierjit's own callables: of another object, reading it could run the
    program's code (a property, a module's or a proxy's __getattr__), which CPython would
    not run there."""
    t = type(obj)
    if t is ColdDispatcher:
        return obj.materialise()
    if not isinstance(obj, Dispatcher):
        if t is _FunctionType:                 # a Python entry (make_entry's fallback)
            obj = obj.__dict__.get("__tierjit_dispatcher__")
        elif t is _MethodType:                 # a jitted function bound as a method
            return dispatcher_of(obj.__func__)
        elif t is _shim.Shim or _is_entry(obj):
            obj = obj.__tierjit_dispatcher__
        else:
            return None
        if type(obj) is ColdDispatcher:
            return obj.materialise()
        if not isinstance(obj, Dispatcher):
            return None
    return obj if obj.successor is None else obj.successor   # started anew (rebound)


def _is_entry(obj) -> bool:
    """Is obj a native entry (runtime.entry's type; not imported for the question)?"""
    entry = sys.modules.get("tierjit.runtime.entry")
    return entry is not None and entry.is_entry(obj)


# -- every dispatcher, for tierjit.stats() (the registry is runtime.shim's) ---------------------

def forget_queued_builds() -> None:
    """After a fork: the child has no compiler thread, so nothing queued will be built."""
    for d in whole_dispatchers():
        for job in list(d._pending):
            if job.spec is not None and not job.spec.built:
                job.spec.requested = False
        d._pending.clear()
        d.bypass = d._ir_error is not None
        tierup = sys.modules.get(__package__ + ".tierup")    # no tier-up asked before it
        if tierup is not None:
            tierup.forget_queued(d)
        if d.counting == "building":
            d.counting = "watching"
        entries = getattr(d.counting, "entries", None)
        if entries is not None:
            # OSR entries asked for but not built: the polls ask for them again
            for key, spec in list(entries.items()):
                if not spec.built:
                    del entries[key]
            d.counting.typing.clear()


def dispatchers() -> "list[Dispatcher]":
    """The live dispatchers, oldest first (cold ones made whole), but those that gave way
    to a successor (runtime/restart.py): a function is listed once, as it runs now."""
    return [d for d in map(ColdDispatcher.materialise, registered()) if d.successor is None]


def whole_dispatchers() -> "list[Dispatcher]":
    """The live dispatchers that are whole already, oldest first: what the at-fork handlers
    look at (a ColdDispatcher has nothing built or queued)."""
    return [d for d in registered() if type(d) is not ColdDispatcher]  # type: ignore[misc]
