"""The Python callable an IR instruction stands for.

Both native backends run an operation they have no native code for by calling Python: the
LLVM tier through `PyObject_Call...` with the callable as a constant, the baseline tier
through its `pyop` stencil. Both take the callable from here, so they call the same one.

Called from native code, the callable would run under the Python frame that called the
jitted function, so a warning it emits (NumPy's "overflow encountered in scalar multiply")
would name that caller's line, or tierjit's own. `native_callable` calls it from a frame of
its own at the instruction's line of the function's file, with the function's globals: the
warning is then CPython's to the letter, and counted in the same module's registry.

An operation that raises (after warning, maybe: NumPy's arange of float32 bounds) is not made
again by tier 0, which would warn twice: its exception propagates from that frame (the LLVM
tier), or is raised again by the deopt from a frame of `located_raise` (the baseline tier,
whose `pyop` hook is a Python frame of tierjit's). Either way the traceback shows one frame
at the function's line, as tier 0's would; these frames have no column positions, as tier
0's have none (carets would point into this module's text).
"""

from __future__ import annotations

import functools
import math
import operator
import types

from ..ir.nodes import Function, Instr
from ..ir.ops import INPLACE, Op
from ..types.rules import _PY_OPS, py_function
from .pyemit.lines import relined

_PY_FUNCS = {
    **_PY_OPS,
    Op.NOT: operator.not_, Op.TRUTH: bool, Op.IS: operator.is_, Op.IS_NOT: operator.is_not,
    Op.LEN: len,
}


def python_function(ins: Instr):
    """The Python callable an instruction stands for (for ops without native lowering)."""
    op = ins.op
    if ins.attr == INPLACE:
        return py_function(op, INPLACE)
    if op in _PY_FUNCS:
        return _PY_FUNCS[op]
    if op is Op.CALL_BUILTIN:
        import builtins
        return getattr(builtins, ins.attr)
    if op is Op.CALL_MATH:
        return getattr(math, ins.attr)
    if op is Op.CALL_UFUNC:
        import numpy as np
        return getattr(np, ins.attr)
    if op is Op.CALL_JIT:
        return ins.attr.entry
    if op is Op.CALL_METHOD:
        return _method(ins.attr)
    if op is Op.GETITEM:
        return lambda a, *i: a[i[0] if len(i) == 1 else i]
    if op is Op.GETATTR:
        return operator.attrgetter(ins.attr)
    if op is Op.CALL_NUMPY:
        import numpy as np
        name, dtype = ins.attr
        f = getattr(np, name)
        return f if dtype is None else functools.partial(f, dtype=dtype)
    if op is Op.TUPLE_GET:
        return operator.itemgetter(ins.attr[0])
    if op is Op.MAKE_TUPLE:
        return lambda *xs: xs
    if op is Op.SETITEM:
        return _setitem
    return None


def native_callable(ins: Instr, fn: Function, py_globals: dict):
    """python_function(ins) as native code calls it: from a frame at ins's line of fn's file
    (see the module docstring). A jitted callee runs its own frames: called as it is."""
    f = python_function(ins)
    if f is None or ins.op is Op.CALL_JIT:
        return f
    # item access and methods: done in that frame itself (NumPy's methods warn from Python
    # code of their own, one frame up: stacklevel=2)
    own = _method_frame(ins.attr) if ins.op is Op.CALL_METHOD else _OWN_FRAME.get(ins.op)
    g = _at_line(own or _CALL, ins, fn, py_globals)
    return g if own else functools.partial(g, f)


def located_raise(ins: Instr, fn: Function, py_globals: dict):
    """A function that raises the exception it is given (whose traceback is what came after
    the operation's own frame) from a frame at ins's line of fn's file."""
    return _at_line(_RAISE, ins, fn, py_globals)


def _at_line(code: types.CodeType, ins: Instr, fn: Function, py_globals: dict):
    code = code.replace(co_filename=fn.filename, co_firstlineno=max(ins.line, 1),
                        co_name=fn.name, co_qualname=fn.name)
    return types.FunctionType(code, py_globals)


def _one_line(src: str):
    """The code of a function written on one line: all of it at co_firstlineno, with no
    column positions."""
    return relined(compile(src, "<tierjit>", "exec").co_consts[0], [1])


_CALL = _one_line("def _at(f, *a): return f(*a)")
_RAISE = _one_line("def _at(e): raise e")
_OWN_FRAME = {
    Op.GETITEM: _one_line("def _at(a, *i): return a[i[0] if len(i) == 1 else i]"),
    Op.SETITEM: _one_line("def _at(a, *r): a[r[0] if len(r) == 2 else r[:-1]] = r[-1]"),
}


@functools.cache
def _method(name: str):
    """a.NAME(*args) as a function of (a, *args)."""
    return lambda a, *args: getattr(a, name)(*args)


@functools.cache
def _method_frame(name: str):
    assert name.isidentifier()
    return _one_line(f"def _at(a, *x): return a.{name}(*x)")


def _setitem(a, *rest):
    """a[i, ...] = v as an op: rest is the indices, then the value."""
    a[rest[0] if len(rest) == 2 else rest[:-1]] = rest[-1]
