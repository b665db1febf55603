"""How each tierjit type is represented in native code, as LLVM IR types.

    int → i64 (speculated to fit)      float → double         bool → i1      None → i8
    complex → {double, double}         numpy.intN/uintN → iN  numpy.float32 → float
    numpy.float64 → double             numpy.bool_ → i1       numpy.complex64/128 → {fT, fT}
    tuple → {item, ...}                array → {ptr data, [n x i64] shape, [n x i64] strides,
                                                ptr object}
    union of types with one representation (float | numpy.float64) → {repr, i8 member}

An array value keeps a *borrowed* pointer to its ndarray object: arguments are kept alive
by the caller, arrays made in native code by the function's list of owned objects.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import Unsupported
from ...types.lattice import ArrayT, Scalar, TupleT, Type, UnionT


@dataclass(slots=True, eq=False)
class Kind:
    """What native code needs to know about a scalar type."""

    cls: str          # "int" "bool" "float" "complex" "none" (numpy flavours share these)
    bits: int         # width of the value (of each part, for complex)
    signed: bool = True
    numpy: bool = False

    @property
    def ll(self) -> str:
        if self.cls in ("int",):
            return f"i{self.bits}"
        if self.cls == "bool":
            return "i1"
        if self.cls == "none":
            return "i8"
        f = "double" if self.bits == 64 else "float"
        return f if self.cls == "float" else f"{{{f}, {f}}}"


def kind(t: Scalar) -> Kind:
    if not isinstance(t, Scalar):
        raise Unsupported(f"a value of type {t} where a scalar is needed in native code")
    py = t.py
    if py is int:
        return Kind("int", 64)
    if py is bool:
        return Kind("bool", 1)
    if py is float:
        return Kind("float", 64)
    if py is complex:
        return Kind("complex", 64)
    if py is type(None):
        return Kind("none", 8)
    import numpy as np
    dt = np.dtype(py)
    if dt.kind == "b":
        return Kind("bool", 1, numpy=True)
    if dt.kind in "iu":
        return Kind("int", dt.itemsize * 8, dt.kind == "i", True)
    if dt.kind == "f" and dt.itemsize in (4, 8):
        return Kind("float", dt.itemsize * 8, numpy=True)
    if dt.kind == "c" and dt.itemsize in (8, 16):
        return Kind("complex", dt.itemsize * 4, numpy=True)
    raise Unsupported(f"values of type {t} in native code")


def union_members(t: UnionT) -> list[Type]:
    """Members in a fixed order: a union value's tag is an index into this list."""
    return sorted(t.members, key=str)


def ll(t: Type) -> str:
    if isinstance(t, Scalar):
        return kind(t).ll
    if isinstance(t, TupleT):
        return "{" + ", ".join(ll(x) for x in t.items) + "}"
    if isinstance(t, ArrayT):
        return f"{{ptr, [{t.ndim} x i64], [{t.ndim} x i64], ptr}}"
    if isinstance(t, UnionT):
        reprs = {ll(m) for m in t.members}
        if len(reprs) != 1 or not all(isinstance(m, Scalar) for m in t.members):
            raise Unsupported(f"a value that is {t} (types with different representations) "
                              "in native code")
        return f"{{{reprs.pop()}, i8}}"
    raise Unsupported(f"values of type {t} in native code")
