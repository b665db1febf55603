"""How baseline code holds values: frame slots per type, and the Python side of the frame.

Every SSA value owns a fixed group of 8-byte slots in the call's frame (frame states are then
trivial: a value is wherever its slots are):

    int, bool, NumPy ints and bools   1 slot, an i64
    float, np.float64, np.float32     1 slot, a double (float32 values widened exactly)
    float | np.float64                2 slots: the double, then a tag (0 float, 1 np.float64)
    None                              no slot
    array                             8 slots: object, data, shape[3], strides[3] (borrowed)
    tuple                             its items' slots, one after the other

Other types (complex, other unions, uint64) are not representable: the baseline compile says
Unsupported. `box` and `unbox` read and write a frame from Python, for deoptimisation (the
frame state's live values are boxed and handed to tier 0) and for operations the baseline
runs by calling Python.
"""

from __future__ import annotations

import ctypes

from ...errors import Unsupported
from ...types.lattice import ArrayT, Scalar, TupleT, Type, UnionT

_c_int64, _c_double, _c_float = ctypes.c_int64, ctypes.c_double, ctypes.c_float
ELEM_KINDS = {"float64": "f64", "float32": "f32", "int64": "i64", "int32": "i32",
              "int16": "i16", "int8": "i8", "uint8": "u8", "uint16": "u16", "uint32": "u32",
              "bool": "b1"}
_slots_cache: dict[Type, tuple[str, ...]] = {}


def is_np_float(t: Type) -> bool:
    return isinstance(t, Scalar) and t.is_numpy and t.py.__name__ in ("float64", "float32")


def is_np_int(t: Type) -> bool:
    return isinstance(t, Scalar) and t.is_numpy and t.py.__name__ in (
        "int64", "int32", "int16", "int8", "uint32", "uint16", "uint8", "bool")


def float_union(t: Type) -> bool:
    """float | np.float64: a double and a tag."""
    return isinstance(t, UnionT) and {str(m) for m in t.members} == {"float", "np.float64"}


def holds_union(t: Type) -> bool:
    """t is float | np.float64 or a tuple with one among its items."""
    return float_union(t) or isinstance(t, TupleT) and any(holds_union(i) for i in t.items)


def slots(t: Type) -> tuple[str, ...]:
    """The slot kinds of a value of type t: "i" (i64), "f" (double), "t" (union tag),
    "o" (a borrowed object pointer), "p" (raw data)."""
    s = _slots_cache.get(t)
    if s is not None:
        return s
    if isinstance(t, Scalar):
        if t.py in (int, bool) or is_np_int(t):
            s = ("i",)
        elif t.py is float or is_np_float(t):
            s = ("f",)
        elif t.py is type(None):
            s = ()
    elif float_union(t):
        s = ("f", "t")
    elif isinstance(t, ArrayT):
        if t.dtype in ELEM_KINDS and 1 <= t.ndim <= 3:
            s = ("o",) + ("p",) * 7
    elif isinstance(t, TupleT):
        parts = [slots(i) for i in t.items]
        s = tuple(k for p in parts for k in p)
    if s is None:
        raise Unsupported(f"a value of type {t} (the baseline tier has no representation "
                          "for it)")
    _slots_cache[t] = s
    return s


def box(t: Type, addr: int):
    """The Python object for the value of type t held at addr (its first slot)."""
    if isinstance(t, Scalar):
        py = t.py
        if py is int:
            return _c_int64.from_address(addr).value
        if py is float:
            return _c_double.from_address(addr).value
        if py is bool:
            return _c_int64.from_address(addr).value != 0
        if py is type(None):
            return None
        if is_np_float(t):
            return py(_c_double.from_address(addr).value)
        return py(_c_int64.from_address(addr).value)
    if isinstance(t, UnionT):
        v = _c_double.from_address(addr).value
        if _c_int64.from_address(addr + 8).value:
            import numpy as np
            return np.float64(v)
        return v
    if isinstance(t, ArrayT):
        return ctypes.cast(_c_int64.from_address(addr).value, ctypes.py_object).value
    items = []
    for it in t.items:
        items.append(box(it, addr))
        addr += 8 * len(slots(it))
    return tuple(items)


def type_fits(x, t: Type) -> bool:
    from ...types.lattice import type_of_value
    xt = type_of_value(x)
    if xt == t:
        return True
    if isinstance(t, UnionT):
        return xt in t.members
    if isinstance(t, ArrayT) and isinstance(xt, ArrayT):
        return t.layout == "A" and (xt.dtype, xt.ndim) == (t.dtype, t.ndim)
    if isinstance(t, TupleT) and isinstance(xt, TupleT) and len(xt.items) == len(t.items):
        return all(type_fits(a, b) for a, b in zip(x, t.items))
    return False


def unbox(x, t: Type, addr: int, keep: list) -> bool:
    """Store x (of a type that fits t, see type_fits) at addr; False when it cannot be held
    (an int beyond 64 bits). Arrays are kept alive by appending them to `keep`."""
    if isinstance(t, Scalar):
        py = t.py
        if py is float or is_np_float(t):
            _c_double.from_address(addr).value = float(x)
        elif py is type(None):
            pass
        else:
            v = int(x)
            if not -2**63 <= v < 2**63:
                return False
            _c_int64.from_address(addr).value = v
        return True
    if isinstance(t, UnionT):
        _c_double.from_address(addr).value = float(x)
        _c_int64.from_address(addr + 8).value = 0 if type(x) is float else 1
        return True
    if isinstance(t, ArrayT):
        keep.append(x)
        words = [id(x), x.ctypes.data, *x.shape, *[0] * (3 - x.ndim), *x.strides,
                 *[0] * (3 - x.ndim)]
        (ctypes.c_int64 * 8).from_address(addr)[:] = words
        return True
    for item, it in zip(x, t.items):
        if not unbox(item, it, addr, keep):
            return False
        addr += 8 * len(slots(it))
    return True
