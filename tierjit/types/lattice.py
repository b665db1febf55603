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

from _thread import allocate_lock
from _weakref import ref as _weakref
from dataclasses import FrozenInstanceError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Self


class Type:
    """Base of all types; instances are immutable and interned: one object per value, so
    that types compare and hash by identity, in C.

    Every type is made once: the class's `__new__` returns the object already made with the
    same fields, from a table of its own that keeps it for the process's life (a program's
    types are few), or while it is used (a tuple's type, see _TUPLES). Compiled code is
    keyed by types in caches that must not grow with every compile (the stencil selector's
    are keyed by the type objects themselves), and dispatching a call looks its argument
    types up at every call. Made by @dataclass(frozen=
    True, slots=True) they would cost ~0.7 ms a class at the first compile (generated from
    source text) and a Python call per hash or comparison; written out, each type names its
    fields in __slots__, in the order of its `__new__`'s arguments, and the rest is shared
    here."""

    __slots__ = ()

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __repr__(self) -> str:
        fields = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._fields())
        return f"{type(self).__qualname__}({fields})"

    def __reduce__(self) -> tuple:
        # copy and pickle make a type through __new__ (__setattr__ refuses their way)
        return type(self), tuple(getattr(self, n) for n in self._fields())

    def _fields(self) -> list[str]:
        return [n for n in self.__slots__ if n != "__weakref__"]


# The interning tables, by fields (see Type). Tuple types are held weakly: a program may pass
# tuples of ever new shapes (their types are made at every call, to dispatch it), and there
# is no bound on those; made under _LOCK (see TupleT).
_SCALARS: dict[type, Scalar] = {}
_TUPLES: dict[tuple, _weakref] = {}
_ARRAYS: dict[tuple, ArrayT] = {}
_UNIONS: dict[frozenset, UnionT] = {}
_LOCK = allocate_lock()
_sweep_at = 1024                # _TUPLES's size at which its dead entries are next dropped


def _make(cls: type, table: dict, key: object, fields: tuple) -> Type:  # (but TupleT's)
    """The first type of its value: made, and entered in its class's table (setdefault is
    atomic: another thread may be making the same one)."""
    t = object.__new__(cls)
    for name, value in zip(cls.__slots__, fields):
        object.__setattr__(t, name, value)
    return table.setdefault(key, t)


class Scalar(Type):
    """A scalar of exactly this Python type (int, float, numpy.float32, ...)."""

    __slots__ = ("py",)
    py: type

    def __new__(cls, py: type) -> Self:
        return _SCALARS.get(py) or _make(cls, _SCALARS, py, (py,))

    def __str__(self) -> str:
        mod = self.py.__module__
        return self.py.__name__ if mod == "builtins" else f"np.{self.py.__name__}"

    @property
    def is_numpy(self) -> bool:
        return self.py.__module__ == "numpy"


class TupleT(Type):
    """A Python tuple of known length and these item types."""

    __slots__ = ("items", "__weakref__")     # noqa: RUF023 - the field first
    items: tuple[Type, ...]

    def __new__(cls, items: tuple[Type, ...]) -> Self:
        items = tuple(items)
        r = _TUPLES.get(items)
        t = r() if r is not None else None
        return t if t is not None else cls._make(items)

    @classmethod
    def _make(cls, items: tuple[Type, ...]) -> Self:
        """The live type of these items, made if there is none. Under the lock: a dead
        entry's replacement and the sweep must not race another thread's."""
        global _sweep_at
        with _LOCK:
            r = _TUPLES.get(items)
            t = r() if r is not None else None
            if t is None:
                t = object.__new__(cls)
                object.__setattr__(t, "items", items)
                _TUPLES[items] = _weakref(t)
                if len(_TUPLES) >= _sweep_at:
                    for k in [k for k, r in _TUPLES.items() if r() is None]:
                        del _TUPLES[k]
                    _sweep_at = max(1024, 2 * len(_TUPLES))
            return t

    def __str__(self) -> str:
        return "(" + ", ".join(map(str, self.items)) + ("," if len(self.items) == 1 else "") + ")"


class ArrayT(Type):
    """A numpy.ndarray of this dtype and number of dimensions, C-contiguous or not."""

    __slots__ = ("dtype", "ndim", "layout")     # noqa: RUF023 - the order of the fields
    dtype: str          # NumPy dtype name: "float64", "int32", "bool", ...
    ndim: int
    layout: str         # "C": C-contiguous; "A": any strides

    def __new__(cls, dtype: str, ndim: int, layout: str = "A") -> Self:
        key = (dtype, ndim, layout)
        return _ARRAYS.get(key) or _make(cls, _ARRAYS, key, key)

    def __str__(self) -> str:
        return f"array({self.dtype}, {self.ndim}d, {self.layout})"

    @property
    def scalar(self) -> Scalar:
        import numpy as np
        return Scalar(np.dtype(self.dtype).type)


class UnionT(Type):
    """One of several types, which one known only at run time."""

    __slots__ = ("members",)
    members: frozenset[Type]

    def __new__(cls, members: frozenset[Type]) -> Self:
        members = frozenset(members)
        return _UNIONS.get(members) or _make(cls, _UNIONS, members, (members,))

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


# A tuple's type names each item's: a longer tuple (data, not a record) runs as CPython,
# rather than be typed item by item at every call and compiled as a struct of that many.
MAX_TUPLE_ITEMS = 64


def type_of_value(x, _depth: int = 0) -> Type | None:
    """The type of a run-time argument, or None when no native type describes it (a tuple
    nesting deeper than MAX_DEPTH, as inference has none either)."""
    t = type(x)
    if t in (int, float, bool, complex, type(None)):
        return Scalar(t)
    if t is tuple:
        if len(x) > MAX_TUPLE_ITEMS or _depth >= MAX_DEPTH:
            return None
        items = tuple(type_of_value(i, _depth + 1) for i in x)
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
