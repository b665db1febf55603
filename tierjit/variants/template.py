"""Templates: one function, compiled once, for many values of some of its free names.

Analogue: Operon's "compile once per structure, pass the constants as data", or a C++ template
whose parameters are run-time values. `template(calc, params=("myplus", "mymul"))` turns the
free names into leading arguments of a new function, `f = tierjit.jit(...)` of it, and
`bind(myplus=1.0, mymul=2.5)` returns `functools.partial(f, 1.0, 2.5)` — a C object whose
vectorcall prepends the constants — so a bind costs well under a microsecond and compiles
nothing, and every variant shares f's specialisations and native code.

f is an ordinary tier="auto" function: it runs as CPython while cold and is compiled (on the
compiler thread) once its calls over *all* variants make it hot; variants bound before that
move up with it, because the object they call becomes the native entry in place. A variant
called once therefore costs a CPython call. `Template.compile()` skips the wait: later binds
call a tier="opt" function, compiled on its first call.
"""

from __future__ import annotations

import ast
import builtins
import functools
import keyword
import weakref
from typing import Any, Callable, Iterable, Mapping

from . import source as _src


# the template behind a bound variant's callable (its counted function, later its jit entry)
_templates: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class Template:
    """A function with `params` turned into leading arguments; binds make variants."""

    def __init__(self, fdef: ast.FunctionDef, params: Iterable[str],
                 namespace: dict[str, Any], *, own_namespace: bool = False,
                 prelude: list[ast.stmt] | None = None, what: str = "template"):
        self.params = tuple(params)
        self.name = fdef.name
        _check_params(fdef, self.params, what)
        self.inputs = tuple(_src.arg_names(fdef))
        self.fdef = fdef                      # the user's definition (not to be mutated)
        self.namespace = namespace
        self._own = own_namespace
        self._prelude = list(prelude or ())
        self._regcode: Any = None             # straightline.RegisterCode | reason, lazily
        self._py, self.source = self._build()
        import tierjit
        self.jitted: Any = tierjit.jit(self._py)
        self.target: Callable = self.jitted   # what new binds call
        self._compiled = False
        _templates[self.jitted] = self

    # -- variants ---------------------------------------------------------------------------
    def bind(self, *values: Any, **consts: Any) -> functools.partial:
        """A variant with these values of the params (by name, or positionally in order)."""
        if values:
            if consts or len(values) != len(self.params):
                return self.bind(**self._by_name(values, consts))
            return functools.partial(self.target, *values)
        try:
            if len(consts) == len(self.params):
                return functools.partial(self.target, *[consts[p] for p in self.params])
        except KeyError:
            pass
        raise self._binding_error(consts)

    def bind_many(self, rows: Iterable[Any]) -> list[functools.partial]:
        """Variants for many bindings: mappings of param -> value, or rows of values in
        params order (a 2-d array works: one variant per row)."""
        target, partial = self.target, functools.partial
        if hasattr(rows, "tolist") and getattr(rows, "ndim", 0) == 2:
            if rows.shape[1] != len(self.params):
                raise ValueError(f"{self.name}.bind_many: rows have {rows.shape[1]} values; "
                                 f"the params are {', '.join(self.params)}")
            return [partial(target, *r) for r in rows.tolist()]
        out = []
        for r in rows:
            if isinstance(r, Mapping):
                out.append(self.bind(**r))
            elif len(r) == len(self.params):
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
    def py_function(self) -> Callable:
        """The template as a plain Python function (params first)."""
        return self._py

    def compile(self) -> Template:
        """Compile now: later binds call a tier="opt" function (native from its first call)
        instead of waiting for the template to get hot."""
        if not self._compiled:
            import tierjit
            self.target = tierjit.jit(self._py, tier="opt")
            _templates[self.target] = self
            self._compiled = True
        return self

    def explain(self) -> str:
        import tierjit
        return tierjit.explain(self.target)

    def _build(self) -> tuple[Callable, str]:
        """Execute the template's source (params first); return the function and source."""
        fdef = _src.with_leading_args(self.fdef, self.params)
        module = ast.Module(body=[*self._prelude, fdef], type_ignores=[])
        defs, source = _src.build(module, self.name, self.namespace, self._own)
        return defs[self.name], source

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
                f"({', '.join(self.params)})>")


def template_of(variant: Any) -> tuple[Template, tuple] | None:
    """(template, constants) of a bound variant, or None."""
    if type(variant) is functools.partial and not variant.keywords:
        t = _templates.get(variant.func)
        if t is not None:
            return t, variant.args
    return None


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
    if isinstance(fn_or_source, str):
        prelude, fdef = _src.parse_function(fn_or_source, name, "template")
        ns = {"__builtins__": builtins, **(globals or {})}
        return Template(fdef, params, ns, own_namespace=True, prelude=prelude)
    fn = getattr(fn_or_source, "py_func", fn_or_source)
    if not callable(fn) or not hasattr(fn, "__code__"):
        raise TypeError(f"template: expected a Python function or source text, got "
                        f"{type(fn_or_source).__name__}")
    fdef, namespace = _src.function_tree(fn)
    return Template(fdef, params, namespace)
