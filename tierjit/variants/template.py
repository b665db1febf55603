"""Templates: one function, compiled once, for many values of some of its free names.

Analogue: Operon's "compile once per structure, pass the constants as data", or a C++ template
whose parameters are run-time values. `template(calc, params=("myplus", "mymul"))` turns the
free names into leading arguments of a new function f, and `bind(myplus=1.0, mymul=2.5)`
returns `functools.partial(f, 1.0, 2.5)` — a C object whose vectorcall prepends the constants —
so a bind costs well under a microsecond, compiles nothing, and every variant shares f's
specialisations and native code.

What f is moves up with the template's total call count over *all* its variants:

1. cold: the template run by CPython behind an in-function call counter, so a variant called
   once costs one CPython call (~0.1 us; the cold path of a tier="auto" function costs ~1 us,
   too much when each of 27,000 variants is called once);
2. after PROMOTE_AFTER calls: `tierjit.jit(f)`, an ordinary tier="auto" function — the
   dispatcher's own policy decides when to compile it (on the compiler thread) and switches its
   entry to native code in place. New binds call it directly; variants bound earlier reach it
   through their counted function, whose code object is swapped for a one-line trampoline
   (the analogue of patching a lazy-binding stub);
3. `Template.compile()` skips both waits: binds from then on call a tier="opt" function,
   compiled on its first call.
"""

from __future__ import annotations

import ast
import builtins
import copy
import functools
import keyword
import threading
import weakref
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from . import source as _src

PROMOTE_AFTER = 10_000   # cold calls (over all variants) before the template goes to tierjit.jit

# the template behind a bound variant's callable (its counted function, later its jit entry)
# (keyed by id; each callable also holds its template in an attribute, so a template lives as
# long as any of its variants and an entry dies with both)
_templates: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def _register(fn: Any, t: Template) -> None:
    fn.__tierjit_template__ = t
    _templates[id(fn)] = t


class Template:
    """A function with `params` turned into leading arguments; binds make variants."""

    def __init__(self, fdef: ast.FunctionDef, params: Iterable[str],
                 namespace: dict[str, Any], *, own_namespace: bool = False,
                 prelude: list[ast.stmt] | None = None, what: str = "template",
                 trusted: bool = False):
        self.params = tuple(params)
        self.name = fdef.name
        if not trusted:                       # (structure.py makes its params itself)
            _check_params(fdef, self.params, what)
        # what evaluate passes a row's values to: the positional parameters (a keyword-only
        # one with its default was counted as an input, and X was said to lack a column)
        self.inputs = tuple(x.arg for x in fdef.args.posonlyargs + fdef.args.args)
        self.fdef = fdef                      # the user's definition (not to be mutated)
        self.namespace = namespace
        self._own = own_namespace
        self._prelude = list(prelude or ())
        self._self_body: list[ast.stmt] | None = None   # _body(), made once
        self._regcode: Any = None             # straightline.RegisterCode | reason, lazily
        self._py: Callable | None = None      # built on first use: evaluate() of
                                              # straight-line code never needs it
        self._target: Any = None
        self._counted: Callable | None = None
        self._jitted: Any = None
        self._compiled = False
        self._state: list[Any] = [0, self._promote]
        self._lock = threading.RLock()

    @property
    def target(self) -> Any:
        """What binds call now (see the module docstring)."""
        return self._target if self._target is not None else self._build()

    @property
    def source(self) -> str:
        self.py_function()
        return self._source

    # -- variants ---------------------------------------------------------------------------
    def bind(self, *values: Any, **consts: Any) -> functools.partial:
        """A variant with these values of the params (by name, or positionally in order)."""
        target = self._target if self._target is not None else self._build()
        if values:
            if consts or len(values) != len(self.params):
                return self.bind(**self._by_name(values, consts))
            return functools.partial(target, *values)
        try:
            if len(consts) == len(self.params):
                return functools.partial(target, *[consts[p] for p in self.params])
        except KeyError:
            pass
        raise self._binding_error(consts)

    def bind_many(self, rows: Iterable[Any]) -> list[functools.partial]:
        """Variants for many bindings: mappings of param -> value, or rows of values in
        params order (a 2-d array works: one variant per row)."""
        target, partial = self.target, functools.partial
        if hasattr(rows, "tolist") and hasattr(rows, "ndim"):
            if rows.ndim != 2:
                raise ValueError(f"{self.name}.bind_many: rows must be a 2-d array, one row of "
                                 f"values per variant; got shape {rows.shape}")
            if rows.shape[1] != len(self.params):
                raise ValueError(f"{self.name}.bind_many: rows have {rows.shape[1]} values; "
                                 f"the params are {', '.join(self.params)}")
            return [partial(target, *r) for r in rows.tolist()]
        out = []
        for k, r in enumerate(rows):
            if isinstance(r, Mapping):
                out.append(self.bind(**r))
                continue
            try:
                if isinstance(r, (str, bytes)):     # len() works, and binds its characters
                    raise TypeError
                n = len(r)
            except TypeError:
                raise TypeError(f"{self.name}.bind_many: row {k} is a {type(r).__name__}; "
                                f"each row must be a mapping or a sequence of values "
                                f"(params: {', '.join(self.params) or 'none'})") from None
            if n == len(self.params):
                out.append(partial(target, *r))
            else:
                out.append(self.bind(*r))          # raises, naming what is wrong
        return out

    def _by_name(self, values: tuple, consts: dict) -> dict:
        if len(values) > len(self.params):
            raise TypeError(f"{self.name}.bind: {len(values)} values for "
                            f"{len(self.params)} params ({', '.join(self.params)})")
        named = dict(zip(self.params, values))
        twice = sorted(set(named) & set(consts))
        if twice:
            raise TypeError(f"{self.name}.bind: {', '.join(twice)} given twice")
        named.update(consts)
        return named

    def _binding_error(self, consts: Mapping) -> TypeError:
        unknown = [k for k in consts if k not in self.params]
        missing = [p for p in self.params if p not in consts]
        parts = []
        if unknown:
            parts.append(f"unknown param{'s' * (len(unknown) > 1)} {', '.join(unknown)}")
        if missing:
            parts.append(f"missing binding for {', '.join(missing)}")
        return TypeError(f"{self.name}.bind: {'; '.join(parts)} (params: "
                         f"{', '.join(self.params) or 'none'})")

    # -- tiers ------------------------------------------------------------------------------
    @property
    def tier(self) -> str:
        """"cold" (counted CPython), "jit" (tierjit.jit, tier auto) or "opt"."""
        return "opt" if self._compiled else "cold" if self._jitted is None else "jit"

    @property
    def calls(self) -> int:
        """Calls counted in the cold phase."""
        return self._state[0]

    def py_function(self) -> Callable:
        """The template as a plain Python function (params first)."""
        if self._py is None:
            with self._lock:
                if self._py is None:
                    fdef = _src.with_leading_args(self.fdef, self.params, body=self._body())
                    module = ast.Module(body=[*self._prelude, fdef], type_ignores=[])
                    defs, self._source = _src.build(module, self.name, self.namespace,
                                                    self._own)
                    self._py = defs[self.name]
        return self._py

    def compile(self) -> Template:
        """Compile now: binds from here on call a tier="opt" function (native from its first
        call); variants bound earlier are forwarded to it too."""
        with self._lock:
            if not self._compiled:
                import tierjit
                target = tierjit.jit(self.py_function(), tier="opt")
                _register(target, self)
                self._compiled = True
                self._promote_to(target)
        return self

    def explain(self) -> str:
        if self._jitted is None and not self._compiled:
            return (f"{self.name}: template run by CPython ({self.calls} calls so far; goes to "
                    f"tierjit.jit after {PROMOTE_AFTER})")
        import tierjit
        return tierjit.explain(self._target)

    def _promote(self, /, *args: Any, **kwargs: Any) -> Any:
        """Called by the counted function when the template is hot (with the keyword
        arguments of keyword-only parameters and **kwargs, which may be named `self`)."""
        with self._lock:
            if self._jitted is None and not self._compiled:
                import tierjit
                jitted = tierjit.jit(self.py_function())
                _register(jitted, self)
                self._promote_to(jitted)
        return self._state[1](*args, **kwargs)

    def _promote_to(self, target: Any) -> None:
        self._jitted = target
        self._target = target
        if self._counted is not None:
            self._state[1] = target
            self._counted.__code__ = self._trampoline

    def _build(self) -> Any:
        """The counted function (made once): the first target."""
        with self._lock:
            if self._target is None:
                self._counted = self._make_counted()
                _register(self._counted, self)
                self._target = self._counted
        return self._target

    def _make_counted(self) -> Callable:
        """The template behind a call counter, and (kept aside) the trampoline code that
        replaces it on promotion. Both close over one cell: [count, promote-or-target]."""
        # names of the generated code that no user code reads: nested in the maker, the
        # counted function saw the maker's locals in place of globals of the same names, and
        # in a namespace of our own the maker replaced a global the source reads
        state, counted_name, hot_name, maker_name = (
            self._unused(n) for n in ("_tj_state", "_tj_counted", "_tj_hot", "_tj_make"))
        slot = ast.Subscript(ast.Name(state, ast.Load()), ast.Constant(1), ast.Load())
        forward = ast.Return(ast.Call(slot, *_forwarded(self.fdef, self.params)))
        count = _src.parse(f"{state}[0] += 1\nif {state}[0] > {PROMOTE_AFTER}: pass").body
        # the counted function of a generator function is a generator itself: `return g()`
        # there would end it (the call that promotes the template yielded nothing)
        delegate = ast.Return(ast.YieldFrom(forward.value)) if _src.is_generator(self.fdef) \
            else forward
        count[1].body = [delegate]
        counted = _src.with_leading_args(self.fdef, self.params, name=counted_name,
                                         body=count + self._body())
        hot = _src.with_leading_args(self.fdef, self.params, name=hot_name, body=[forward])
        maker = ast.FunctionDef(
            name=maker_name, args=ast.arguments(posonlyargs=[], args=[ast.arg(state)],
                                                kwonlyargs=[], kw_defaults=[], defaults=[]),
            body=[counted, hot, ast.Return(ast.Tuple([ast.Name(counted_name, ast.Load()),
                                                      ast.Name(hot_name, ast.Load())],
                                                     ast.Load()))],
            decorator_list=[], returns=None, type_comment=None)
        module = ast.Module(body=[*self._prelude, maker], type_ignores=[])
        defs, _ = _src.build(module, self.name, self.namespace, self._own)
        counted_fn, hot_fn = defs[maker_name](self._state)
        rename = {"co_name": self.name, "co_qualname": self.name}
        counted_fn.__code__ = counted_fn.__code__.replace(**rename)
        counted_fn.__name__ = counted_fn.__qualname__ = self.name
        self._trampoline = hot_fn.__code__.replace(**rename)
        return counted_fn

    def _body(self) -> list[ast.stmt]:
        """The body as compiled. In source text the function's name, read in its body, is the
        function itself (exec binds it in the namespace): recursion. But the functions built
        here take the params first, and none of them is bound to that name, so each read of
        it becomes the template's current target with this call's params bound."""
        if self._self_body is None:
            name, fdef = self.name, self.fdef
            recursive = (self._own and name in _src.read_names(fdef) and name not in self.params
                         and name not in _src.arg_names(fdef)
                         and name not in _src.assigned_names(fdef))
            if not recursive:
                self._self_body = list(fdef.body)
            else:
                me, partial = self._unused("_tj_self"), self._unused("_tj_partial")
                self.namespace[me] = self._call_target
                self.namespace[partial] = functools.partial
                if self.params:
                    itself: ast.expr = ast.Call(ast.Name(partial, ast.Load()), [
                        ast.Name(me, ast.Load()),
                        *[ast.Name(p, ast.Load()) for p in self.params]], [])
                else:
                    itself = ast.Name(me, ast.Load())
                self._self_body = [_Renamed(name, itself).visit(copy.deepcopy(s))
                                   for s in fdef.body]
        return self._self_body

    def _call_target(self, /, *args: Any, **kwargs: Any) -> Any:
        return self.target(*args, **kwargs)

    def _unused(self, base: str) -> str:
        """A name for generated code that the source (function and prelude) never uses."""
        return _src.unused_name(base, [*self._prelude, self.fdef])

    # -- register machine -------------------------------------------------------------------
    def register_code(self) -> Any:
        """The template as straight-line register code (straightline.RegisterCode), or a str
        saying why it is not straight-line arithmetic."""
        if self._regcode is None:
            from .straightline import lower
            self._regcode = lower(self)
        return self._regcode

    def __repr__(self) -> str:
        return (f"<tierjit.Template {self.name}({', '.join(self.inputs)}) params="
                f"({', '.join(self.params)}) tier={self.tier}>")


def template_of(variant: Any) -> tuple[Template, tuple] | None:
    """(template, constants) of a bound variant, or None."""
    if type(variant) is functools.partial and not variant.keywords:
        t = _templates.get(id(variant.func))
        if t is not None:
            return t, variant.args
    return None


class _Renamed(ast.NodeTransformer):
    """Replaces each read of one name by an expression."""

    def __init__(self, name: str, expr: ast.expr):
        self.name, self.expr = name, expr

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if node.id == self.name and isinstance(node.ctx, ast.Load):
            return ast.copy_location(copy.deepcopy(self.expr), node)
        return node


def _forwarded(fdef: ast.FunctionDef, params: tuple[str, ...]) -> tuple[list, list]:
    """(args, keywords) of a call passing on every argument of fdef with params first, as it
    was received: compile_source's templates may take *args, keyword-only parameters and
    **kwargs (passed positionally, they went into the wrong parameters after promotion)."""
    a = fdef.args
    args: list[ast.expr] = [ast.Name(n, ast.Load()) for n in
                            (*params, *[x.arg for x in a.posonlyargs + a.args])]
    if a.vararg:
        args.append(ast.Starred(ast.Name(a.vararg.arg, ast.Load()), ast.Load()))
    keywords = [ast.keyword(x.arg, ast.Name(x.arg, ast.Load())) for x in a.kwonlyargs]
    if a.kwarg:
        keywords.append(ast.keyword(None, ast.Name(a.kwarg.arg, ast.Load())))
    return args, keywords


def _check_params(fdef: ast.FunctionDef, params: tuple[str, ...], what: str) -> None:
    name = fdef.name
    for p in params:
        if not isinstance(p, str) or not p.isidentifier() or keyword.iskeyword(p):
            raise TypeError(f"{what}: params must be names (identifiers); got {p!r}")
    dup = sorted({p for p in params if params.count(p) > 1})
    if dup:
        raise ValueError(f"{what}: {', '.join(dup)} named twice in params")
    a = fdef.args
    if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs:
        raise ValueError(f"{what}: {name} takes *args, **kwargs, keyword-only or "
                         "positional-only parameters; templates take plain parameters")
    args = set(_src.arg_names(fdef))
    assigned = _src.assigned_names(fdef)
    free = sorted(_src.read_names(fdef) - args - set(assigned))
    for p in params:
        if p in args:
            raise ValueError(f"{what}: {p!r} is already an argument of {name}; params must be "
                             "free names the body reads")
        if p in assigned:
            raise ValueError(f"{what}: {p!r} is assigned in {name} (line {assigned[p]}); "
                             "params must be free names the body reads but never assigns")
        if p not in free:
            raise ValueError(f"{what}: {p!r} is not a free name of {name}; its free names "
                             f"are: {', '.join(free) or 'none'}")


def template(fn_or_source: Callable | str, params: Iterable[str] = (), *,
             name: str | None = None, globals: dict[str, Any] | None = None) -> Template:
    """Build a Template from a function (its source is read back) or from source text."""
    if isinstance(params, str):
        params = (params,)
    try:
        params = tuple(params)
    except TypeError:
        raise TypeError(f"template: params must be a name or a sequence of names; got "
                        f"{type(params).__name__}") from None
    _src.check_globals(globals, "template")
    if isinstance(fn_or_source, str):
        prelude, fdef = _src.parse_function(fn_or_source, name, "template")
        ns = {"__builtins__": builtins, **(globals or {})}
        return Template(fdef, params, ns, own_namespace=True, prelude=prelude)
    fn = getattr(fn_or_source, "py_func", fn_or_source)
    if not callable(fn) or not hasattr(fn, "__code__"):
        raise TypeError(f"template: expected a Python function or source text, got "
                        f"{type(fn_or_source).__name__}")
    fdef, namespace = _src.function_tree(fn, "template")
    return Template(fdef, params, namespace)
