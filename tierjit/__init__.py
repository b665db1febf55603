"""tierjit: a tiered, speculative just-in-time compiler for numeric Python.

    @tierjit.jit
    def f(x): ...

The public API only; everything heavy (llvmlite, numpy) is imported on first use.
"""

from .runtime.config import Config, config

TYPE_CHECKING = False           # typing.TYPE_CHECKING without importing typing (~8 ms)
if TYPE_CHECKING:
    from collections.abc import Callable

__version__ = "0.1.0"
__all__ = ["Config", "compile_ast", "compile_source", "config", "evaluate", "explain", "jit",
           "stats", "template"]


_FunctionType = type(lambda: None)
_ColdDispatcher: "type | None" = None     # runtime.shim.ColdDispatcher, once loaded


def _load_cold_dispatcher() -> "type | None":
    """runtime.shim.ColdDispatcher, or None where shims cannot exist (no 64-bit CPython)."""
    global _ColdDispatcher
    from .runtime import shim
    if shim.LAYOUT_OK:
        _ColdDispatcher = shim.ColdDispatcher
    return _ColdDispatcher


def jit(fn: "Callable | None" = None, *, tier: str = "auto"):
    """Compile `fn` just in time. Usable as `@jit` or `@jit(tier=...)`.

    tier: "auto" (default): runs as CPython at once, and is compiled to native code on the
    compiler thread once it is hot (see `tierjit.config`); "interp" (tier 0 only: Python
    generated from tierjit's IR) or "opt" (native code through LLVM from the first call,
    compiled by that call)."""
    if fn is None:
        def decorate(f):
            return jit(f, tier=tier)
        return decorate
    # The common case first: a plain function, not a jitted one, tier "auto". Its dispatcher
    # stays a ColdDispatcher until more than the cold phase needs it (runtime.shim), so
    # neither decorating (~2 us) nor a cold call imports runtime.dispatch.
    # (getattr, not `in fn.__dict__`: that makes the function a dict.)
    if tier == "auto" and type(fn) is _FunctionType \
            and getattr(fn, "__tierjit_dispatcher__", None) is None:
        cold = _ColdDispatcher or _load_cold_dispatcher()
        if cold is not None:
            return cold(fn).entry
    from .runtime.dispatch import Dispatcher, dispatcher_of
    if type(fn) is not _FunctionType or getattr(fn, "__tierjit_dispatcher__", None) is not None:
        d = dispatcher_of(fn)
        if d is not None:
            fn = d.py_func
        if type(fn) is not _FunctionType:
            what = "a bound method (tierjit compiles functions of numbers and arrays: a " \
                "method's first argument is an object)" if hasattr(fn, "__self__") and \
                hasattr(fn, "__func__") else type(fn).__name__
            raise TypeError(f"tierjit.jit: expected a Python function, got {what}")
    return Dispatcher(fn, tier).entry


def explain(fn) -> str:
    """Why `fn` runs where it runs: one line per reason, naming the line and the construct,
    and the tier each specialisation reached."""
    from .runtime.dispatch import dispatcher_of
    d = dispatcher_of(fn)
    if d is None:
        raise TypeError(f"tierjit.explain: {fn!r} is not a function made by tierjit.jit")
    from .tools.explain import explain_text     # + guards and deopt history (tools/explain.py)
    return explain_text(d)


def stats():
    """What the JIT did: every recorded event (compile, tier-up, deopt, give-up), per-function
    counters, the compiler thread's queue, the longest main-thread pause, and the settings.
    A dict of plain data (see tierjit.runtime.stats.Stats for its shape)."""
    from .runtime.stats import stats as _stats
    return _stats()


# -- variants: many run-time-made functions without compiling each (tierjit.variants) ----------

def template(fn_or_source, params=(), *, name=None, globals=None):
    """A Template: `fn_or_source` (a function, or source text defining one) with the free
    names in `params` turned into arguments. `t.bind(p=1.0, ...)` / `t.bind_many(rows)` make
    callable variants without compiling anything; the template is compiled once, by
    tierjit.jit, when its variants get hot (or at `t.compile()`)."""
    from .variants.template import template as make
    return make(fn_or_source, params, name=name, globals=globals)


def compile_source(source, *, name=None, globals=None):
    """A callable for the function that `source` defines. Sources that differ only in float
    literals share one template (and its compiled code): a new one costs a bind."""
    from .variants.structure import compile_source as make
    return make(source, name=name, globals=globals)


def compile_ast(tree, *, name=None, globals=None):
    """compile_source for an ast.Module or ast.FunctionDef (the tree is not modified)."""
    from .variants.structure import compile_ast as make
    return make(tree, name=name, globals=globals)


def evaluate(programs, X, reduce=None, y=None, executor=None, *, threads=None):
    """Evaluate many programs over the rows of X (float32/float64, one column per input).

    programs: a `tierjit.variants.Programs` population (the array encoding), or a sequence of
    source strings, ast trees, bound templates or functions. Returns (len(programs), rows) of
    X's dtype for reduce=None; one value per program for "max" (largest finite result, -inf if
    none; X's dtype), "sum" or "mse" (mean of (result - y)**2; float64). Arithmetic follows
    NumPy's rules per row, without warnings. executor: a concurrent.futures.Executor or a
    distributed.Client to spread the work over."""
    from .variants.population import evaluate as run
    return run(programs, X, reduce, y, executor, threads=threads)
