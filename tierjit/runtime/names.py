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
globals). A dict whose tag did not change costs two loads; one that did (the program bound
some other global) has each name looked up, and when all still name what they did its new
tag is kept. CPython 3.11 has no dict watchers (3.12's `PyDict_Watch`), so this check on
entry is how a change is seen; analogue: the dict-version guards of CPython 3.11's
specialised LOAD_GLOBAL.

The table covers the function's own names and those of every jitted function its code may
reach without passing through an entry (a callee embedded and inlined, or called core to
core), transitively. When a name no longer names its object, the call goes to the guard
object (`NameGuard.__call__`): each function whose names changed, and the function whose
code embedded it, stops using what it compiled (`Dispatcher.rebound`) and runs as CPython
from then on, `explain` naming the name and its line; the call itself runs the original
function. A number bound again to an equal number of the same type (`N = 1000` computed
again) changes nothing: the table takes the new object.

Only a call's start is checked: a name bound again while a native call runs (by a function
it called that runs as CPython, or by another thread) reaches the code at its next call, and
an OSR entry, entered in the middle of a call that was checked, has no check of its own.
Closure variables are not in the table: only their enclosing function can bind them again,
and frontend/rebound.py reads that function's source for it.
"""

from __future__ import annotations

import builtins
import sys
import types

from ..ir.ops import Op
from .shim import same_value

TYPE_CHECKING = False
if TYPE_CHECKING:                       # pragma: no cover - typing only
    from typing import Any

_CALL_JIT = Op.CALL_JIT
_MISSING = object()


def guard_for(dispatcher: Any, fn: Any) -> NameGuard | None:
    """The guard of native code made from `fn` (typed IR) of `dispatcher`: None for an OSR
    entry's code, whose calls were checked when they started."""
    if fn.osr:
        return None
    return NameGuard(dispatcher, fn)


class NameGuard:
    """The names check's table for one piece of native code, and what a failed check calls."""

    __slots__ = ("__weakref__", "baked", "dispatcher", "expect", "keep", "table")

    def __init__(self, dispatcher: Any, fn: Any) -> None:
        self.dispatcher = dispatcher
        # (function, dict, name, object, what explain calls it), for the functions reached
        self.baked = [(d, *b) for d in _reached(dispatcher, fn) for b in _baked(d)]
        # (dict id, name) -> (dict, name, the object the name must name there, or _MISSING:
        # it must be absent)
        self.expect: dict[tuple[int, str], tuple[dict, str, Any]] = {}
        for _d, where, name, obj, _label in self.baked:
            self.expect.setdefault((id(where), name), (where, name, obj))
        self.table: Any = None
        self.keep: list = []
        self._fill()

    @property
    def address(self) -> int:
        import ctypes
        return ctypes.addressof(self.table)

    def _fill(self) -> None:
        """(Re)write the table from `expect`; each dict's tag 0, so the first check looks up
        every name and keeps the dict's tag."""
        import ctypes
        groups: dict[int, list] = {}
        for where, name, obj in self.expect.values():
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
        if self.table is None:
            self.table = (ctypes.c_uint64 * len(words))(*words)
        else:                   # in place: native code holds its address (same keys, size)
            self.table[:] = words
        self.keep = keep

    def current(self) -> bool:
        """Does every name still name what the table expects? (What the names check
        computes, in Python: for tier 0 of a tier="interp" function.)"""
        for where, name, obj in self.expect.values():
            if where.get(name, _MISSING) is not obj:
                return False
        return True

    def stale(self) -> list[tuple[Any, str, int]]:
        """(function, why, line) for each function reached whose names no longer name what its
        code baked in; an equal number of the same type in a name's place is taken over."""
        out: list = []
        renewed = False
        for d, where, name, obj, label in self.baked:
            key = (id(where), name)
            was = self.expect[key][2]
            now = where.get(name, _MISSING)
            if now is was or now is obj or any(d is o for o, _, _ in out):
                continue
            if type(obj) in _constant_types() and same_value(now, obj):
                self.expect[key] = (where, name, now)
                renewed = True
                continue
            why = f"'{label}' was bound to another object after the function was compiled"
            out.append((d, why, _line_of(d, name)))
        if renewed:
            self._fill()
        return out

    def __call__(self, *args, **kwargs):
        """A call whose names check failed (native code calls this instead of running)."""
        d = self.dispatcher
        stale = self.stale()
        if not stale and self.current():
            return d.entry(*args, **kwargs)        # the table is current again
        for dep, why, line in stale:
            dep.rebound(why, line)
        if not any(dep is d for dep, _, _ in stale):
            if stale:
                dep, why, line = stale[0]
                d.rebound(f"it calls {dep.__qualname__}, in which {why}", _call_line(d, dep))
            else:           # the table keeps failing: another thread keeps binding a name
                d.rebound("its free names keep being bound again")
        return d.py_func(*args, **kwargs)


def _constant_types() -> tuple:
    from ..frontend.resolve import CONSTANT_TYPES
    return CONSTANT_TYPES


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
    """(dict, name, object or _MISSING, what explain calls it) for each free name and module
    attribute the lowered IR of `d` baked in: where CPython looks it up, and what it must
    find there."""
    from ..frontend.resolve import _MISSING as missing
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
            continue
        obj = _MISSING if obj is missing else obj
        if obj is not _MISSING and glb.get(name, _MISSING) is obj:
            out.append((glb, name, obj, name))
        else:                           # a builtin: the globals must not shadow it
            out.append((glb, name, _MISSING, name))
            out.append((b, name, obj, name))
    for (mname, attr), (module, obj) in ir.attrs.items():
        out.append((vars(module), attr, obj, f"{mname}.{attr}"))
    return out


def _call_line(d: Any, callee: Any) -> int:
    """The line of `d` that reads the name of `callee` (0 when it calls it through another
    function)."""
    for name, obj in d._ir.free.items():
        # (the dispatcher itself: dispatcher_of goes on to the one that started anew)
        if not isinstance(obj, types.ModuleType) and \
                getattr(obj, "__tierjit_dispatcher__", None) is callee:
            return _line_of(d, name)
    return 0


def _line_of(d: Any, name: str) -> int:
    """The first line of `d` reading `name` (its `def` line when none is found)."""
    code = d.py_func.__code__
    import dis
    for ins in dis.get_instructions(code):
        if ins.argval == name and ins.opname in ("LOAD_GLOBAL", "LOAD_NAME", "LOAD_ATTR",
                                                 "LOAD_METHOD", "LOAD_DEREF"):
            line = ins.positions.lineno if ins.positions else None
            if line:
                return line
    return code.co_firstlineno
