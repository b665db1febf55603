"""The Python callable an IR instruction stands for.

Both native backends run an operation they have no native code for by calling Python: the
LLVM tier through `PyObject_Call...` with the callable as a constant, the baseline tier
through its `pyop` stencil. Both take the callable from here, so they call the same one.
"""

from __future__ import annotations

import functools
import math
import operator

from ..ir.nodes import Instr
from ..ir.ops import Op
from ..types.rules import _PY_OPS

_PY_FUNCS = {
    **_PY_OPS,
    Op.NOT: operator.not_, Op.TRUTH: bool, Op.IS: operator.is_, Op.IS_NOT: operator.is_not,
    Op.LEN: len,
}


def python_function(ins: Instr):
    """The Python callable an instruction stands for (for ops without native lowering)."""
    op = ins.op
    if op in _PY_FUNCS:
        return _PY_FUNCS[op]
    if op is Op.CALL_BUILTIN:
        import builtins
        return getattr(builtins, ins.attr)
    if op is Op.CALL_MATH:
        return getattr(math, ins.attr)
    if op is Op.CALL_JIT:
        return ins.attr.entry
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


def _setitem(a, *rest):
    """a[i, ...] = v as an op: rest is the indices, then the value."""
    a[rest[0] if len(rest) == 2 else rest[:-1]] = rest[-1]
