"""Speculate that array dimensions stay below 2**30.

NumPy bounds a dimension only by memory (below 2**60 for float64 items), so index arithmetic
over dimensions — `(i + j) * (i + j + 1)`, `3 * i + 2` over a large bound — keeps its
overflow guards. Real arrays have fewer than 2**30 items per dimension, so each dimension
read (`a.shape[d]`, `len(a)`, `a.size`) is followed by one GUARD_RANGE to [0, 2**30 - 1]:
the value ranges of passes/ranges.py then bound every loop variable and index derived from
it, and the guards they make unnecessary go. A guard that fails deoptimises like any other;
one that fails often is left out of the next version (`avoid` holds ("dims", value id)).

It needs no ranges, so it runs before they are first computed (passes/pipeline.py), which
then see its guards: no second computation.
"""

from __future__ import annotations

from ..ir.nodes import Function, Instr, Value
from ..ir.ops import Op
from ..types.lattice import ArrayT

# Op's members bound once (see ir/ops.py: `Op.X` is slow on Python 3.11)
_CALL_BUILTIN, _GETATTR, _GETITEM = Op.CALL_BUILTIN, Op.GETATTR, Op.GETITEM
_GUARD_RANGE, _LEN, _TUPLE_GET = Op.GUARD_RANGE, Op.LEN, Op.TUPLE_GET

DIM_LIMIT = 2 ** 30


def is_dim(ins: Instr, defs: dict[Value, Instr]) -> bool:
    """Whether ins reads an array dimension or size."""
    a = ins.args[0] if ins.args else None
    if a is None:
        return False
    if ins.op is _LEN or ins.op is _GETATTR and ins.attr == "size" or \
            ins.op is _CALL_BUILTIN and ins.attr == "len":
        return isinstance(a.type, ArrayT)
    if ins.op in (_TUPLE_GET, _GETITEM):
        src = defs.get(a)
        return src is not None and src.op is _GETATTR and src.attr == "shape" and \
            isinstance(src.args[0].type, ArrayT)
    return False


def speculate_small_dims(fn: Function, avoid: frozenset = frozenset()) -> Function:
    defs = {ins.result: ins for b in fn.blocks for ins in b.instrs if ins.result is not None}
    guards: dict[Value, Value] = {}
    for b in fn.blocks:
        for i in range(len(b.instrs) - 1, -1, -1):
            ins = b.instrs[i]
            if not is_dim(ins, defs) or ("dims", ins.result.id) in avoid:
                continue
            g = fn.new_value(ins.result.name)
            g.type = ins.result.type
            b.instrs.insert(i + 1, Instr(_GUARD_RANGE, [ins.result], g,
                                         (0, DIM_LIMIT - 1), ins.line))
            guards[ins.result] = g
    if not guards:
        return fn
    for b in fn.blocks:
        for ins in b.instrs:
            if ins.op is _GUARD_RANGE and ins.args[0] in guards:
                continue
            ins.args = [guards.get(a, a) for a in ins.args]
            for e in ins.targets:
                e.args = [guards.get(a, a) for a in e.args]
    return fn
