"""Type kinds for stencil selection: what a value's type is to the baseline tier (int, float,
NumPy float, union, array...) and how many frame slots it takes, cached per type object."""

from __future__ import annotations

from itertools import filterfalse

from ...ir.nodes import Value
from ...ir.ops import Op
from ...types.lattice import BOOL, FLOAT, INT, ArrayT, Scalar, TupleT, Type
from . import frame as fr

_ARITH = {Op.ADD: "add", Op.SUB: "sub", Op.MUL: "mul", Op.TRUEDIV: "truediv",
          Op.FLOORDIV: "floordiv", Op.MOD: "mod", Op.POW: "pow", Op.LSHIFT: "lshift",
          Op.RSHIFT: "rshift", Op.BITAND: "bitand", Op.BITOR: "bitor", Op.BITXOR: "bitxor"}
_CMP = {Op.LT: "lt", Op.LE: "le", Op.GT: "gt", Op.GE: "ge", Op.EQ: "eq", Op.NE: "ne"}
# the same keyed by the op's string (hashing an Enum member is a Python-level call)
_ARITH_V = {op.value: name for op, name in _ARITH.items()}
_CMP_V = {op.value: name for op, name in _CMP.items()}
_INTK = frozenset({"int", "bool"})
_FLOATK = frozenset({"float", "npf64", "union"})
_NUMK = _INTK | _FLOATK
_FLOAT_KINDS = frozenset({"float", "npf64", "npf32"})
_DOUBLE_KINDS = frozenset({"float", "npf64"})        # what a float union's double holds
_FLOAT_OPS = frozenset({"add", "sub", "mul", "truediv", "floordiv", "mod", "pow"})
# results written by moves (several stencils): never computed into a parameter's slots
_NO_SHARE = frozenset({Op.CONST, Op.MAKE_TUPLE, Op.TUPLE_GET, Op.GETATTR, Op.LEN, Op.POS,
                       Op.CALL_BUILTIN, Op.CALL_JIT, Op.TRUTH, Op.GETITEM})
_NO_SHARE_V = frozenset(op.value for op in _NO_SHARE)


# Keyed by the types themselves: interned, they hash by identity, in C (types/lattice.py).
_KIND: dict[Type, str] = {}
_WIDTH: dict[Type, int] = {}


def width(t: Type) -> int:
    """Number of frame slots of a value of type t."""
    n = _WIDTH.get(t)
    if n is None:
        n = _WIDTH[t] = len(fr.slots(t))
    return n


_NO_UNION: set[Type] = set()   # types that hold no float union


def any_union(types: set[Type]) -> bool:
    """Whether any of `types` is float | np.float64 or a tuple holding one. The types known
    to hold none are remembered and skipped in C (filterfalse: no Python call per type; not
    a set difference, which would walk all of _NO_UNION)."""
    for t in filterfalse(_NO_UNION.__contains__, types):
        if fr.holds_union(t):
            return True
        _NO_UNION.add(t)
    return False


def kind(t: Type) -> str:
    """A type's class for selection, cached: int, bool, float, npf64, npf32, npint, union,
    array, tuple, none or other."""
    k = _KIND.get(t)
    if k is None:
        if t == INT:
            k = "int"
        elif t == BOOL:
            k = "bool"
        elif t == FLOAT:
            k = "float"
        elif fr.is_np_float(t):
            k = "npf64" if t.py.__name__ == "float64" else "npf32"
        elif fr.is_np_int(t):
            k = "npint"
        elif fr.float_union(t):
            k = "union"
        elif isinstance(t, ArrayT):
            k = "array"
        elif isinstance(t, TupleT):
            k = "tuple"
        elif t == Scalar(type(None)):
            k = "none"
        else:
            k = "other"
        _KIND[t] = k
    return k


def _is_int(t: Type) -> bool:
    return kind(t) in ("int", "bool")


def _is_float(t: Type) -> bool:
    return kind(t) in ("float", "npf64", "union")


def _vid(v: Value) -> int:
    return v.id
