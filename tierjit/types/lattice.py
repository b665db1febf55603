"""The type lattice: what type inference knows about a value.

    Scalar(int | float | bool | complex | NoneType | a NumPy scalar type)
    TupleT(item types)                       a Python tuple of known length
    ArrayT(dtype, ndim, layout)              a numpy.ndarray; layout "C" (contiguous) or "A"
    UnionT(members)                          one of several types, decided at run time

Python's `int` stands for an int that is *speculated* to fit in 64 bits: native code guards
every operation that could leave that range. NumPy scalar types are distinct from Python's
(`a[i]` on a float64 array is a numpy.float64, and `0.0 + a[i]` is one too), because they
differ in results, warnings and errors.
"""

from __future__ import annotations

from dataclasses import dataclass


class Type:
    """Base of all types; instances are immutable and compare by value."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class Scalar(Type):
    """A scalar of exactly this Python type (int, float, numpy.float32, ...)."""

    py: type

    def __str__(self) -> str:
        mod = self.py.__module__
        return self.py.__name__ if mod == "builtins" else f"np.{self.py.__name__}"

    @property
    def is_numpy(self) -> bool:
        return self.py.__module__ == "numpy"


@dataclass(frozen=True, slots=True)
class TupleT(Type):
    """A Python tuple of known length and these item types."""

    items: tuple[Type, ...]

    def __str__(self) -> str:
        return "(" + ", ".join(map(str, self.items)) + ("," if len(self.items) == 1 else "") + ")"


@dataclass(frozen=True, slots=True)
class ArrayT(Type):
    """A numpy.ndarray of this dtype and number of dimensions, C-contiguous or not."""

    dtype: str          # NumPy dtype name: "float64", "int32", "bool", ...
    ndim: int
    layout: str = "A"   # "C": C-contiguous; "A": any strides

    def __str__(self) -> str:
        return f"array({self.dtype}, {self.ndim}d, {self.layout})"

    @property
    def scalar(self) -> Scalar:
        import numpy as np
        return Scalar(np.dtype(self.dtype).type)


@dataclass(frozen=True, slots=True)
class UnionT(Type):
    """One of several types, which one known only at run time."""

    members: frozenset[Type]

    def __str__(self) -> str:
        return " | ".join(sorted(map(str, self.members)))


INT, FLOAT, BOOL, COMPLEX, NONE = (Scalar(t) for t in (int, float, bool, complex, type(None)))
MAX_DEPTH = 4


def members(t: Type) -> frozenset[Type]:
    return t.members if isinstance(t, UnionT) else frozenset({t})


def join(a: Type | None, b: Type | None) -> Type | None:
    """Least upper bound; None is bottom (nothing known yet)."""
    if a is None:
        return b
    if b is None or a == b:
        return a
    if isinstance(a, ArrayT) and isinstance(b, ArrayT) and (a.dtype, a.ndim) == (b.dtype, b.ndim):
        return ArrayT(a.dtype, a.ndim, "A")
    if isinstance(a, TupleT) and isinstance(b, TupleT) and len(a.items) == len(b.items):
        return TupleT(tuple(join(x, y) for x, y in zip(a.items, b.items)))
    # a union: each member of b merges with the member of a it joins without a union
    # (arrays differing in layout, tuples of one length), so join stays associative
    ms = list(members(a))
    for m in members(b):
        for i, x in enumerate(ms):
            j = join(x, m) if _mergeable(x, m) else None
            if j is not None:
                ms[i] = j
                break
        else:
            ms.append(m)
    ms = set(ms)
    return ms.pop() if len(ms) == 1 else UnionT(frozenset(ms))


def _mergeable(a: Type, b: Type) -> bool:
    if a == b:
        return True
    if isinstance(a, ArrayT) and isinstance(b, ArrayT):
        return (a.dtype, a.ndim) == (b.dtype, b.ndim)
    return isinstance(a, TupleT) and isinstance(b, TupleT) and len(a.items) == len(b.items)


def depth(t: Type) -> int:
    if isinstance(t, TupleT):
        return 1 + max((depth(x) for x in t.items), default=0)
    if isinstance(t, UnionT):
        return max(depth(x) for x in t.members)
    return 0


def type_of_value(x) -> Type | None:
    """The type of a run-time argument, or None when no native type describes it."""
    t = type(x)
    if t in (int, float, bool, complex, type(None)):
        return Scalar(t)
    if t is tuple:
        items = tuple(type_of_value(i) for i in x)
        return None if any(i is None for i in items) else TupleT(items)
    mod = t.__module__
    if mod == "numpy":
        import numpy as np
        if t is np.ndarray:
            if x.dtype.kind not in "biufc" or not x.dtype.isnative or not 1 <= x.ndim <= 3:
                return None
            layout = "C" if x.flags.c_contiguous else "A"
            return ArrayT(x.dtype.name, x.ndim, layout)
        if isinstance(x, np.generic) and x.dtype.kind in "biufc" and x.dtype.isnative \
                and type(x) is x.dtype.type:
            return Scalar(t)
    return None
