"""Compile-time resolution of the names a function reads but never assigns.

A name resolves, as CPython would resolve it when the function runs, through the closure
cells, the function's globals and the builtins. What it names decides how a call or an
attribute is lowered: a jitted function (CALL_JIT), a supported builtin (CALL_BUILTIN), a
function of `math` (CALL_MATH), an array constructor of NumPy (CALL_NUMPY), a NumPy ufunc or
function of arrays (CALL_UFUNC), a module, an exception class, or a constant.
"""

from __future__ import annotations

import builtins
import math
import sys
import types
from dataclasses import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:                       # pragma: no cover - typing only
    from typing import Any

SUPPORTED_BUILTINS = frozenset({
    "abs", "min", "max", "len", "int", "float", "bool", "complex", "round", "divmod", "pow",
})
NUMPY_CONSTRUCTORS = frozenset({"empty", "zeros", "ones", "arange"})
# NumPy functions that may be called (besides ufuncs and scalar types): of arrays, making new
# arrays or scalars (no view: native code knows which arrays may share memory)
NUMPY_FUNCTIONS = frozenset({
    "sum", "prod", "mean", "std", "var", "min", "max", "amin", "amax", "argmin", "argmax",
    "any", "all", "dot", "vdot", "inner", "outer", "cumsum", "cumprod", "trace",
    "count_nonzero", "copy", "median", "average", "clip", "round",
    "nansum", "nanprod", "nanmean", "nanstd", "nanvar", "nanmin", "nanmax",
})
CONSTANT_TYPES = (int, float, complex, bool, type(None))
_MISSING = object()
_BUILTIN_FUNCTION = type(len)


def _is_builtin(obj: Any, name: str) -> bool:
    """Is `obj` the builtin `name` itself (a program may have patched another object into
    `builtins`, `unittest.mock.patch("builtins.abs")`, which compiled code must not take
    for the builtin)?"""
    if isinstance(obj, type):
        return obj is getattr(builtins, name, None) and obj.__module__ == "builtins"
    return type(obj) is _BUILTIN_FUNCTION and obj.__self__ is builtins and obj.__name__ == name


@dataclass(slots=True, eq=False)
class Resolved:
    """What a free name (or a module attribute) refers to at compile time."""

    # "jit" "builtin" "iterable" (what a for loop runs through: range, enumerate, zip)
    # "math" "numpy" (a constructor) "ufunc" "npfunc" (NUMPY_FUNCTIONS) "module" "exception"
    # "const" "dtype" "other"
    kind: str
    obj: Any
    name: str
    what: Any = None     # a dtype's: the object named (np.float64, or an np.dtype)


def classify(obj: Any, name: str) -> Resolved:
    from ..runtime.dispatch import Dispatcher, dispatcher_of   # late: avoids an import cycle

    if isinstance(obj, types.ModuleType):      # (not asked for a dispatcher: its __getattr__)
        return Resolved("module", obj, getattr(obj, "__name__", name))
    d = dispatcher_of(obj)
    if isinstance(d, Dispatcher):
        return Resolved("jit", d, name)
    if name in SUPPORTED_BUILTINS and _is_builtin(obj, name):
        return Resolved("builtin", obj, name)
    if obj is range or obj is enumerate or obj is zip:
        return Resolved("iterable", obj, obj.__name__)
    if isinstance(obj, type) and issubclass(obj, BaseException):
        return Resolved("exception", obj, obj.__name__)
    if isinstance(obj, CONSTANT_TYPES) and (type(obj) in CONSTANT_TYPES
                                            or type(obj).__module__ == "numpy"):
        return Resolved("const", obj, name)       # (not an IntEnum member: "other")
    if type(obj) is _BUILTIN_FUNCTION and obj.__self__ is math and \
            getattr(math, obj.__name__, None) is obj:    # (not one a program patched in)
        return Resolved("math", obj, obj.__name__)
    np = sys.modules.get("numpy")
    if np is not None:
        for cname in NUMPY_CONSTRUCTORS:
            if obj is getattr(np, cname) and getattr(obj, "__name__", None) == cname \
                    and getattr(obj, "__module__", None) == "numpy":
                return Resolved("numpy", obj, cname)
        if isinstance(obj, type) and issubclass(obj, np.generic) or isinstance(obj, np.dtype):
            # a scalar type (np.float64) may also be called: `what` keeps it
            return Resolved("dtype", np.dtype(obj), name, obj)
        if isinstance(obj, np.ufunc) and obj.nout == 1 and getattr(np, obj.__name__, None) is obj:
            return Resolved("ufunc", obj, obj.__name__)
        # one of numpy's, by identity first: the program's object is not asked its
        # __name__ (its __getattr__ could run code CPython would not run here)
        if any(getattr(np, f, None) is obj for f in NUMPY_FUNCTIONS):
            fname = obj.__name__
            if fname in NUMPY_FUNCTIONS and getattr(np, fname, None) is obj:
                return Resolved("npfunc", obj, fname)
    return Resolved("other", obj, name)


def lookup(fn, name: str) -> Any:
    """The object the free name `name` of `fn` refers to now (_MISSING if none), found as
    CPython finds it: closure cell, globals, builtins."""
    code = fn.__code__
    if fn.__closure__ and name in code.co_freevars:
        try:
            return fn.__closure__[code.co_freevars.index(name)].cell_contents
        except ValueError:       # empty cell: NameError at run time
            return _MISSING
    g = fn.__globals__
    try:
        return g[name]
    except KeyError:
        pass
    b = g.get("__builtins__", builtins)
    b = b.__dict__ if isinstance(b, types.ModuleType) else b
    return b.get(name, _MISSING)


def resolve_name(fn, name: str, seen: dict[str, Any] | None = None) -> Resolved | None:
    """Resolve a free name of the Python function `fn`; None when CPython would fail.
    `seen` collects name -> object, for `unchanged` and the names check, and a name in it
    already resolves to what it held then: every read of a name in one lowering sees one
    object, though another thread may bind it meanwhile (the check compares one object per
    name with what the name holds at a call)."""
    if seen is not None and name in seen:
        obj = seen[name]
    else:
        obj = lookup(fn, name)
        if seen is not None:
            seen[name] = obj
    return None if obj is _MISSING else classify(obj, name)


def unchanged(fn, ir) -> bool:
    """Do the free names of `fn` and the module attributes it reads still refer to the
    objects they did when it was lowered as `ir` (an ir.nodes.Function)?"""
    for name, obj in ir.free.items():
        if lookup(fn, name) is not obj:
            return False
    for (_, attr), (module, obj, _written) in ir.attrs.items():
        if vars(module).get(attr, _MISSING) is not obj:
            return False
    return True


def resolve_attr(base: Resolved, attr: str, seen: dict | None = None,
                 written: str = "") -> Resolved | None:
    """A module's attribute, from its __dict__ alone (None when it is not there): one its
    __getattr__ (PEP 562) or its type computes is computed when the line runs — reading it
    now could warn, import, or give a value later reads would not — so it is not compiled.
    `seen` collects (id of the module, attribute) -> (module, object, `written`: as the
    source spells it), and an attribute in it already resolves to that object, as
    resolve_name's `seen` does for names."""
    if base.kind != "module":
        return None
    key = (id(base.obj), attr)
    known = seen.get(key) if seen is not None else None
    obj = known[1] if known is not None else vars(base.obj).get(attr, _MISSING)
    if obj is _MISSING:
        return None
    r = classify(obj, attr)
    if base.obj is math and isinstance(obj, float):
        r = Resolved("const", obj, f"math.{attr}")
    if r is not None and seen is not None and known is None:
        seen[key] = (base.obj, obj, written)
    return r
