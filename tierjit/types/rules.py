"""Per-operation type rules: the result type of an op given its argument types.

For scalar operators the rule is CPython (and NumPy) itself: the operator is applied to
sample values of the argument types, and the type of the result is the answer. That gets
Python's promotions (bool + bool is int, int / int is float) and NumPy 2's (NEP 50: a Python
float with a numpy.float32 stays float32) exactly right, without a hand-written table.
Results that depend on values, not types (`int ** int` is a float for a negative exponent),
are typed as the common case; native code guards the rest and deoptimises.
"""

from __future__ import annotations

import contextlib
import functools
import math
import operator
import sys

from ..errors import Unsupported
from ..ir.ops import INPLACE, Op
from .lattice import (BOOL, INT, NONE, ArrayT, Scalar, TupleT, Type, UnionT, join,
                      members, type_of_value)

TYPE_CHECKING = False
if TYPE_CHECKING:                       # pragma: no cover - typing only
    from collections.abc import Callable

# Op's members bound once (see ir/ops.py: `Op.X` is slow on Python 3.11)
_CALL_BUILTIN, _CALL_JIT, _CALL_MATH = Op.CALL_BUILTIN, Op.CALL_JIT, Op.CALL_MATH
_CALL_METHOD, _CALL_UFUNC = Op.CALL_METHOD, Op.CALL_UFUNC
_CALL_NUMPY, _CONST, _GETATTR, _GETITEM = Op.CALL_NUMPY, Op.CONST, Op.GETATTR, Op.GETITEM
_GUARD_RANGE, _IS, _IS_NOT, _LEN = Op.GUARD_RANGE, Op.IS, Op.IS_NOT, Op.LEN
_MAKE_TUPLE, _NOT, _RANGE_ITEM, _RANGE_LEN = Op.MAKE_TUPLE, Op.NOT, Op.RANGE_ITEM, Op.RANGE_LEN
_SETITEM, _TRUTH, _TUPLE_GET = Op.SETITEM, Op.TRUTH, Op.TUPLE_GET

_PY_OPS = {
    Op.ADD: operator.add, Op.SUB: operator.sub, Op.MUL: operator.mul,
    Op.TRUEDIV: operator.truediv, Op.FLOORDIV: operator.floordiv, Op.MOD: operator.mod,
    Op.POW: operator.pow, Op.LSHIFT: operator.lshift, Op.RSHIFT: operator.rshift,
    Op.BITAND: operator.and_, Op.BITOR: operator.or_, Op.BITXOR: operator.xor,
    Op.LT: operator.lt, Op.LE: operator.le, Op.GT: operator.gt, Op.GE: operator.ge,
    Op.EQ: operator.eq, Op.NE: operator.ne, Op.NEG: operator.neg, Op.POS: operator.pos,
    Op.INVERT: operator.invert,
}

# by value: hashing an Enum member is a Python-level call on 3.11
_PY_OPS_BY_VALUE = {op.value: fn for op, fn in _PY_OPS.items()}
# `x op= y` (attr "inplace"): an array changes in place
_INPLACE_OPS = {
    Op.ADD: operator.iadd, Op.SUB: operator.isub, Op.MUL: operator.imul,
    Op.TRUEDIV: operator.itruediv, Op.FLOORDIV: operator.ifloordiv, Op.MOD: operator.imod,
    Op.POW: operator.ipow, Op.LSHIFT: operator.ilshift, Op.RSHIFT: operator.irshift,
    Op.BITAND: operator.iand, Op.BITOR: operator.ior, Op.BITXOR: operator.ixor,
}


def py_function(op: Op, attr) -> Callable | None:
    """The operator function an arithmetic, comparison or unary op stands for."""
    if attr == INPLACE:
        return _INPLACE_OPS.get(op)
    return _PY_OPS_BY_VALUE.get(op._value_)


def has_arrays(args) -> bool:
    return any(isinstance(m, ArrayT) for t in args for m in members(t))


def samples(t: Scalar) -> list:
    """Sample values of a scalar type, safe for every operator (non-zero, small)."""
    py = t.py
    if py is bool or py.__name__ == "bool":
        return [py(True)]
    if py is type(None):
        return [None]
    if py is int:
        return [3, 2]
    if py is float:
        return [1.5, 0.5]
    if py is complex:
        return [1.5 + 0.5j]
    kind = py().dtype.kind if py.__module__ == "numpy" else ""
    if kind in "iu":
        return [py(3), py(2)]
    if kind == "c":
        return [py(1.5 + 0.5j)]
    return [py(1.5), py(0.5)]


@functools.lru_cache(maxsize=4096)
def _trial(fn, arg_types: tuple[Scalar, ...]) -> Type:
    """Type of fn(*samples); raises Unsupported when Python itself raises for every sample."""
    import itertools
    err = None
    # NumPy's error state is the thread's own; the warnings filters are the process's, and
    # the samples are small numbers that Python's own operators do not warn about
    np = sys.modules.get("numpy")
    if np is not None and _casts_complex(np, fn, arg_types):
        # (a real NumPy scalar type of a NumPy complex: NumPy warns ComplexWarning, which
        # the trial would raise in the program; the result is of that type)
        return Scalar(fn)
    with np.errstate(all="ignore") if np is not None else contextlib.nullcontext():
        combos = itertools.product(*(samples(t) for t in arg_types))
        for args in itertools.islice(combos, 8):
            try:
                r = fn(*args)
            except Exception as e:            # noqa: BLE001 - CPython's answer, recorded
                err = e
                continue
            t = type_of_value(r)
            if t is None:
                raise Unsupported(f"result of type {type(r).__name__}")
            return t
    on = f" on {', '.join(map(str, arg_types))}" if arg_types else ""
    raise Unsupported(f"{getattr(fn, '__name__', fn)}{on}", 0, f"{type(err).__name__}: {err}")


def _casts_complex(np, fn, arg_types: tuple[Scalar, ...]) -> bool:
    """Is fn(x) a real NumPy scalar type applied to a NumPy complex scalar?"""
    return (isinstance(fn, type) and issubclass(fn, np.number)
            and not issubclass(fn, np.complexfloating) and len(arg_types) == 1
            and _numpy_complex(arg_types[0]))


def _numpy_complex(m: Type) -> bool:
    return isinstance(m, Scalar) and m.is_numpy and m.py().dtype.kind == "c"


@functools.lru_cache(maxsize=4096)
def _over_members(fn, arg_types: tuple[Type, ...]) -> Type:
    """Apply a scalar rule to every combination of union members and join the results.
    (Cached: type inference asks the same few questions hundreds of times per function.)"""
    import itertools
    result = None
    for combo in itertools.product(*(sorted(members(t), key=str) for t in arg_types)):
        if not all(isinstance(c, Scalar) for c in combo):
            raise Unsupported(f"{getattr(fn, '__name__', fn)} on "
                              f"{', '.join(map(str, combo))}")
        result = join(result, _trial(fn, tuple(combo)))
    return result


def _index_type_ok(t: Type) -> bool:
    return all(isinstance(m, Scalar) and m.py is not bool and
               (m.py is int or (m.is_numpy and m.py().dtype.kind in "iu"))
               for m in members(t))


def result_type(op: Op, args: list[Type], attr, callee_types=None) -> Type | None:
    """The type of `op(args)`; None when the op has no result. Raises Unsupported."""
    py_op = _PY_OPS_BY_VALUE.get(op._value_)
    if py_op is not None:
        if has_arrays(args):                # NumPy's: by trial on sample arrays
            return _array_op_type(op, attr, tuple(args))
        # (`x op= y` by its own operator: the same type, and its TypeError names `op=`)
        return _over_members(py_function(op, attr) or py_op, tuple(args))
    if op in (_IS, _IS_NOT):
        # identity of numbers is CPython's object identity, which native code does not
        # keep; with None on one side it is decided by the types alone
        if NONE not in members(args[0]) and NONE not in members(args[1]):
            raise Unsupported("'is' between values that are not None")
        return BOOL
    if op in (_NOT, _TRUTH):
        return BOOL
    if op is _CONST:
        return type_of_value(attr)
    if op is _GUARD_RANGE:
        return args[0]
    if op is _MAKE_TUPLE:
        return TupleT(tuple(args))
    if op is _TUPLE_GET:
        t = args[0]
        index, count = attr
        if not isinstance(t, TupleT) or len(t.items) != count:
            raise Unsupported(f"unpacking {t} into {count} names")
        return t.items[index]
    if op in (_RANGE_LEN, _RANGE_ITEM):
        for t in args:
            if not all(isinstance(m, Scalar) and (m.py in (int, bool)) for m in members(t)):
                raise Unsupported(f"range() of {t}")
        return INT
    if op is _LEN:
        if isinstance(args[0], (ArrayT, TupleT)):
            return INT
        raise Unsupported(f"len() or iteration of {args[0]}")
    if op is _GETATTR:
        return _getattr_type(args[0], attr)
    if op is _GETITEM:
        return _getitem_type(args[0], args[1:], attr)
    if op is _SETITEM:
        a = args[0]
        if not isinstance(a, ArrayT) or len(args) - 2 != a.ndim:
            raise Unsupported(f"item assignment to {a}" if not isinstance(a, ArrayT)
                              else f"assignment to a partial index of a {a.ndim}-d array")
        if not all(_index_type_ok(i) for i in args[1:-1]):
            raise Unsupported("array index that is not an int")
        if not all(isinstance(m, Scalar) for m in members(args[-1])):
            raise Unsupported(f"storing {args[-1]} into an array")
        return None
    if op is _CALL_BUILTIN:
        if attr in ("int", "float"):
            _no_numpy_complex(attr, args)
        return _builtin_type(attr, args)
    if op is _CALL_MATH:
        _no_numpy_complex(f"math.{attr}", args)
        return _over_members(getattr(math, attr), tuple(args))
    if op is _CALL_NUMPY:
        return _numpy_type(attr, args)
    if op is _CALL_METHOD:
        return _method_type(attr, tuple(args))
    if op is _CALL_UFUNC:
        return _numpy_call_type(attr, tuple(args))
    if op is _CALL_JIT:
        return callee_types(attr, tuple(args))
    raise Unsupported(f"operation {op.value}")


def _getattr_type(t: Type, name: str) -> Type:
    if isinstance(t, ArrayT):
        if name == "shape":
            return TupleT((INT,) * t.ndim)
        if name in ("size", "ndim"):
            return INT
    if isinstance(t, Scalar) and name in ("real", "imag"):
        return _trial(operator.attrgetter(name), (t,))
    raise Unsupported(f"attribute .{name} of {t}")


def _getitem_type(t: Type, idx: list[Type], attr) -> Type:
    if isinstance(t, ArrayT):
        if not all(_index_type_ok(i) for i in idx):
            raise Unsupported("array index that is not an int")
        if len(idx) != t.ndim:
            raise Unsupported(f"partial indexing of a {t.ndim}-d array (a view)")
        return t.scalar
    if isinstance(t, TupleT) and len(idx) == 1:
        if attr is not None:
            if not -len(t.items) <= attr < len(t.items):
                raise Unsupported("tuple index out of range")
            return t.items[attr]
        if not _index_type_ok(idx[0]) or not t.items:
            raise Unsupported(f"indexing {t} with {idx[0]}")
        out = None
        for x in t.items:
            out = join(out, x)
        return out
    raise Unsupported(f"indexing of {t}")


_BUILTINS = {"abs": abs, "int": int, "float": float, "bool": bool, "complex": complex,
             "round": round, "divmod": divmod, "pow": pow, "len": len}


def _no_numpy_complex(what: str, args: list[Type]) -> None:
    """A math function, int() or float() of a NumPy complex casts it to a real number, and
    NumPy warns (ComplexWarning): so would the trial that types it, at compile time, also for
    a call the program never makes. Such a specialisation runs as CPython."""
    for t in args:
        for m in members(t):
            if _numpy_complex(m):
                raise Unsupported(f"{what}() of {m} (NumPy warns as it casts it to a real)")


def _builtin_type(name: str, args: list[Type]) -> Type:
    if name in ("min", "max"):
        if len(args) < 2:
            raise Unsupported(f"{name}() of a single iterable")
        out = None
        for a in args:
            out = join(out, a)
        return out
    if name == "len":
        return result_type(_LEN, args, None)
    if name in ("int", "float", "bool", "complex") and not args:
        return Scalar(_BUILTINS[name])
    if name == "abs" and len(args) == 1 and isinstance(args[0], Scalar) and args[0].py is bool:
        return INT
    return _over_members(_BUILTINS[name], tuple(args))


@functools.lru_cache(maxsize=1024)
def _array_op_type(op: Op, attr, args: tuple[Type, ...]) -> Type:
    return _by_samples(op.value, py_function(op, attr), args)


@functools.lru_cache(maxsize=1024)
def _method_type(name: str, args: tuple[Type, ...]) -> Type:
    """The type of array.NAME(*args): `_by_samples` of the method."""
    if not isinstance(args[0], ArrayT):
        raise Unsupported(f"method .{name}() of {args[0]}")
    return _by_samples(f".{name}()", lambda a, *xs: getattr(a, name)(*xs), args)


@functools.lru_cache(maxsize=1024)
def _numpy_call_type(name: str, args: tuple[Type, ...]) -> Type:
    """The type of np.NAME(*args): by trial on samples of scalars (a ufunc's or a scalar
    type's), else `_by_samples` (an array among the arguments)."""
    import numpy as np
    fn = getattr(np, name)
    if all(isinstance(m, Scalar) for t in args for m in members(t)):
        return _over_members(fn, args)
    return _by_samples(f"np.{name}()", fn, args)


def _by_samples(what: str, fn, args: tuple[Type, ...]) -> Type:
    """The type of fn(*args) with arrays among them, by trial: a small array of ones of each
    array type's dtype, rank and layout (a fresh one for each call: `fill` writes it), 0 for
    an int (an axis, a number of decimals, an index), a sample of any other scalar; joined
    over the union members of the scalar arguments."""
    import itertools

    import numpy as np

    def sample_array(t: ArrayT):
        if t.layout == "A":
            return np.ones((2,) * (t.ndim - 1) + (4,), dtype=t.dtype)[..., ::2]
        return np.ones((2,) * t.ndim, dtype=t.dtype, order="F" if t.layout == "F" else "C")

    out = None
    for combo in itertools.product(*([t] if isinstance(t, ArrayT) else sorted(members(t), key=str)
                                     for t in args)):
        if not all(isinstance(c, (Scalar, ArrayT)) for c in combo):
            raise Unsupported(f"{what} of {', '.join(map(str, combo))}")

        def call(combo=combo):
            return fn(*(sample_array(c) if isinstance(c, ArrayT) else
                        c.py(0) if _is_int_type(c) else samples(c)[0] for c in combo))
        call.__name__ = f"{what} on {', '.join(map(str, combo))}"     # what Unsupported names
        out = join(out, _trial.__wrapped__(call, ()))     # (a new function: not cached)
    if any(isinstance(t, ArrayT) and t.layout == "A" for t in args):
        # an array of any strides stands for F-ordered ones too, whose results NumPy makes
        # F-ordered (order "K"), where the sample's is C: a result of 2 or more dimensions
        # may have any layout
        out = _any_layout(out)
    return out


def _any_layout(t: Type) -> Type:
    if isinstance(t, ArrayT) and t.ndim > 1:
        return ArrayT(t.dtype, t.ndim, "A")
    if isinstance(t, TupleT):
        return TupleT(tuple(_any_layout(x) for x in t.items))
    return t


def _is_int_type(t: Scalar) -> bool:
    py = t.py
    return py is int or py.__module__ == "numpy" and py().dtype.kind in "iu"


def _numpy_type(attr, args: list[Type]) -> Type:
    import numpy as np
    name, dtype = attr
    if name == "arange":
        if not 1 <= len(args) <= 3:
            raise Unsupported("np.arange() with this many arguments")
        if dtype is None:       # NumPy's promotion of the arguments' types: by trial
            return _over_members(np.arange, tuple(args))
        return ArrayT(np.dtype(dtype).name, 1, "C")
    if len(args) != 1:
        raise Unsupported(f"np.{name}() with {len(args)} positional arguments")
    shape = args[0]
    if isinstance(shape, TupleT):
        if not 1 <= len(shape.items) <= 3 or not all(_index_type_ok(i) for i in shape.items):
            raise Unsupported(f"np.{name}() with shape {shape}")
        ndim = len(shape.items)
    elif _index_type_ok(shape):
        ndim = 1
    else:
        raise Unsupported(f"np.{name}() with shape {shape}")
    dt = np.dtype(np.float64 if dtype is None else dtype)
    if dt.kind not in "biufc":
        raise Unsupported(f"np.{name}() with dtype {dt}")
    return ArrayT(dt.name, ndim, "C")


__all__ = ["result_type", "samples", "UnionT"]
