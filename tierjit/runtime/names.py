"""Free names checked at every call: native code that a rebinding made stale is never run.

Lowering resolves a function's free names once (frontend/resolve.py) and the code bakes in
what they named: a jitted callee, a builtin, a `math` function, a number, a module's
attribute (`np.zeros`, `cfg.N`). A program may bind such a name to another object later —
`g = h`, `del g`, a builtin shadowed, a class defined again, a notebook cell run again,
`cfg.N = 10` from a third module — and CPython's next call sees the new object.

So every call's entry into native code (the LLVM tier's vectorcall entry, baseline code's
entry thunk) first runs the names check (`st_type_names`, backends/stencils/shared_ir.py)
over a table made here: per dict (the function's globals, the builtins, a module's
`__dict__`) the version tag it had when last found unchanged, and each name with the object
the code expects (NULL: a name that dict must not have, such as a builtin's name in the
globals); then the closure's cells and their objects. A dict whose tag did not change costs
two loads; one that did (the program bound some other global) has each name looked up, and
when all still name what they did its new tag is kept. CPython 3.11 has no dict watchers (3.12's `PyDict_Watch`), so this check on
entry is how a change is seen; analogue: the dict-version guards of CPython 3.11's
specialised LOAD_GLOBAL.

The table covers the function's own names and those of every jitted function its code may
reach without passing through an entry (a callee embedded and inlined, or called core to
core), transitively. When a name no longer names its object, the call goes to the guard
object (`NameGuard.__call__`): each function whose names changed, and the function whose
code reached it, drops what it compiled and starts anew (runtime/restart.py: lowered
again, with what the names name now, when it gets hot; `explain` names the name and its
line), and the call itself runs the original function. A number bound again to an equal
number of the same type and bits (`N = 1000` computed again) changes nothing: the table
takes the new object.

Only a call's start is checked: a name bound again while a native call runs (by a function
it called that runs as CPython, or by another thread) reaches the code at its next call. An
OSR entry, entered in the middle of a call whose start checked the function's own names,
checks those of the callees its code reached when a loop moves into it (runtime/osr.py).
A closure variable is checked in its cell (the cell's object, no lookup).
"""

from __future__ import annotations

import builtins
import sys
import types

from ..frontend.resolve import _MISSING  # what a name that was not found resolved to
from ..ir.ops import Op

TYPE_CHECKING = False
if TYPE_CHECKING:                       # pragma: no cover - typing only
    from typing import Any

_CALL_JIT = Op.CALL_JIT
_CELL = types.CellType
_TABLES: dict[int, Any] = {}   # words -> the ctypes array type of a table of that size
_STALE = object()               # expected where no object will do (NameGuard: two baked in)
_NAME_OPS = ("LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF", "LOAD_CLOSURE")
_ATTR_OPS = ("LOAD_ATTR", "LOAD_METHOD")


def guard_for(dispatcher: Any, fn: Any) -> NameGuard | None:
    """The guard of native code made from `fn` (typed IR) of `dispatcher`: None for an OSR
    entry's code, whose calls were checked when they started."""
    if fn.osr:
        return None
    return NameGuard(dispatcher, fn)


class NameGuard:
    """The names check's table for one piece of native code, and what a failed check calls."""

    __slots__ = ("__weakref__", "baked", "deps", "dispatcher", "expect", "keep", "table")

    def __init__(self, dispatcher: Any, fn: Any) -> None:
        self.dispatcher = dispatcher
        # the functions reached (this one first), and per function (function, where, name,
        # object, what explain calls it, the opcodes reading it); `where` a dict, or a
        # closure's cell
        self.deps = _reached(dispatcher, fn)
        self.baked = [(d, *b) for d in self.deps for b in _baked(d)]
        # (id of where, name) -> (where, name, the object the name must name there, or
        # _MISSING: it must be absent, or the cell empty)
        self.expect: dict[tuple[int, str], tuple[Any, str, Any]] = {}
        for _d, where, name, obj, _label, _ops in self.baked:
            key = (id(where), name)
            was = self.expect.setdefault(key, (where, name, obj))[2]
            if was is not obj and not _same_number(was, obj):
                # two functions' code baked in two objects for one name (a callee lowered
                # before the name was bound again, inlined into a caller lowered after): one
                # of them is stale from the start, so the check must fail
                self.expect[key] = (where, name, _STALE)
        self.table: Any = None
        self.keep: list = []
        self._fill()

    @property
    def address(self) -> int:
        import ctypes
        return ctypes.addressof(self.table)

    def _fill(self) -> None:
        """(Re)write the table from `expect`: the dicts' groups, each dict's tag 0 (so the
        first check looks every name up and keeps the dict's tag), then the cells."""
        import ctypes
        groups: dict[int, list] = {}
        cells = []
        for where, name, obj in self.expect.values():
            if type(where) is _CELL:
                cells.append((where, obj))
            else:
                groups.setdefault(id(where), [where]).append((name, obj))
        words = [len(groups)]
        keep: list = []
        for where, *pairs in groups.values():
            words += [id(where), 0, len(pairs)]
            keep.append(where)
            for name, obj in pairs:
                name = sys.intern(name)
                words += [id(name), 0 if obj is _MISSING else id(obj)]
                keep += (name, obj)
        words.append(len(cells))
        for cell, obj in cells:
            words += [id(cell), 0 if obj is _MISSING else id(obj)]
            keep += (cell, obj)
        if self.table is None:
            n = len(words)
            kind = _TABLES.get(n)
            if kind is None:                # (making a ctypes array type takes microseconds)
                kind = _TABLES[n] = ctypes.c_uint64 * n
            self.table = kind(*words)
        else:                   # in place: native code holds its address (same keys, size)
            self.table[:] = words
        self.keep = keep

    def current(self) -> bool:
        """Does every name still name what the table expects? (What the names check
        computes, in Python: for tier 0, and for OSR entries.)"""
        for where, name, obj in self.expect.values():
            if _now(where, name) is not obj:
                return False
        return not any(d.rebound_why is not None for d in self.deps[1:])

    def stale(self) -> list[tuple[Any, str, int]]:
        """(function, why, line) for each function reached whose names no longer name what its
        code baked in; an equal number of the same type in a name's place is taken over."""
        out: list = []
        renewed = False
        for d, where, name, obj, label, ops in self.baked:
            key = (id(where), name)
            was = self.expect[key][2]
            now = _now(where, name)
            if now is was or now is obj or any(d is o for o, _, _ in out):
                continue
            if _same_number(now, obj):
                if was is not _STALE:        # (else another function's object differs)
                    self.expect[key] = (where, name, now)
                    renewed = True
                continue
            why = f"'{label}' was bound to another object after the function was compiled"
            out.append((d, why, _line_of(d, name, ops)))
        for d in self.deps[1:]:             # a callee that started anew since (its names
            if d.rebound_why is not None and not any(d is o for o, _, _ in out):  # are gone)
                out.append((d, d._ir_error.construct, d._ir_error.line))
        if renewed:
            self._fill()
        return out

    def settle(self) -> bool:
        """After a failed check: True when the names still name what the code expects (an
        equal number taken over); else each function whose names changed, and the one this
        code belongs to, starts anew (runtime/restart.py), and False."""
        d = self.dispatcher
        stale = self.stale()
        if not stale and self.current():
            return True
        for dep, why, line in stale:
            dep.rebound(why, line)
        if not any(dep is d for dep, _, _ in stale):
            if stale:
                dep, why, line = stale[0]
                d.rebound(f"it calls {dep.__qualname__}, in which {why}", _call_line(d, dep))
            else:           # the table keeps failing: another thread keeps binding a name
                d.rebound("its free names keep being bound again")
        return False

    def __call__(self, *args, **kwargs):
        """A call whose names check failed (native code calls this instead of running)."""
        d = self.dispatcher
        if self.settle():
            return d.entry(*args, **kwargs)        # the table is current again
        return d.py_func(*args, **kwargs)


def _now(where: Any, name: str) -> Any:
    """What `name` names now in `where` (a dict, or a cell), _MISSING when nothing."""
    if type(where) is _CELL:
        try:
            return where.cell_contents
        except ValueError:                      # an empty cell
            return _MISSING
    return where.get(name, _MISSING)


def _same_number(a: Any, b: Any) -> bool:
    """Are `a` and `b` numbers that compiled code cannot tell apart: the same type and
    value, floats and complex numbers bit for bit (-0.0 is not 0.0, nor -nan nan)?"""
    t = type(a)
    if t is not type(b) or t not in (int, float, complex, bool):
        return False
    if t is float:
        return _bits(a) == _bits(b)
    if t is complex:
        return _bits(a.real) == _bits(b.real) and _bits(a.imag) == _bits(b.imag)
    return a == b


def _bits(x: float) -> bytes:
    import struct
    return struct.pack("<d", x)


def _reached(dispatcher: Any, fn: Any) -> tuple:
    """`dispatcher` and every jitted function its code for `fn` may reach core to core: the
    callees of `fn` and, transitively, of their lowered IR."""
    seen = {id(dispatcher): dispatcher}
    todo = [fn]
    while todo:
        f = todo.pop()
        for b in f.blocks:
            for ins in b.instrs:
                if ins.op is _CALL_JIT and id(ins.attr) not in seen:
                    callee = seen[id(ins.attr)] = ins.attr
                    ir = getattr(callee, "_ir", None)
                    if ir is not None:
                        todo.append(ir)
    return tuple(seen.values())


def _baked(d: Any) -> list:
    """(where, name, object or _MISSING, what explain calls it, the opcodes that read it)
    for each free name and module attribute the lowered IR of `d` baked in: where CPython
    looks it up (a dict, or the closure's cell), and what it must find there."""
    ir = getattr(d, "_ir", None)
    if ir is None:
        return []
    f = d.py_func
    glb = f.__globals__
    b = glb.get("__builtins__", builtins)
    b = b.__dict__ if isinstance(b, types.ModuleType) else b
    cells = f.__code__.co_freevars
    out = []
    for name, obj in ir.free.items():
        if name in cells:
            out.append((f.__closure__[cells.index(name)], name, obj, name, _NAME_OPS))
        elif obj is not _MISSING and glb.get(name, _MISSING) is obj:
            out.append((glb, name, obj, name, _NAME_OPS))
        else:                           # a builtin: the globals must not shadow it
            out.append((glb, name, _MISSING, name, _NAME_OPS))
            out.append((b, name, obj, name, _NAME_OPS))
    for (_, attr), (module, obj, written) in ir.attrs.items():
        out.append((vars(module), attr, obj, written, _ATTR_OPS))
    return out


def _call_line(d: Any, callee: Any) -> int:
    """The line of `d` that calls `callee` (0 when it calls it through another function)."""
    ir = d._ir
    for b in ir.blocks if ir is not None else ():
        for ins in b.instrs:
            if ins.op is _CALL_JIT and ins.attr is callee:
                return ins.line
    return 0


def _line_of(d: Any, name: str, ops: tuple) -> int:
    """The first line of `d` reading `name` by one of `ops` (its `def` line when none is
    found)."""
    code = d.py_func.__code__
    import dis
    for ins in dis.get_instructions(code):
        if ins.argval == name and ins.opname in ops:
            line = ins.positions.lineno if ins.positions else None
            if line:
                return line
    return code.co_firstlineno
