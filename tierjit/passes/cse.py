"""Common-subexpression elimination: a pure operation already computed, with the same operands,
in a block that dominates it (or earlier in its own block) is not computed again.

Only operations on Python's own numbers are merged (constants, ints, floats, bools; `range`
items; `math` functions): each gives the same value for the same operands, and one that
raises (a zero divisor, a math domain error) raises at the first of the two, which runs
first. NumPy scalars are left alone: each operation may warn, and the warning belongs to its
own line. Value ranges (passes/ranges.py) stay valid: the same operation on the same operands
has the same range.

Analogue: dominator-based global value numbering (Alpern, Wegman & Zadeck), without phis.
"""

from __future__ import annotations

from ..ir.nodes import Block, Function, Value
from ..ir.ops import BINARY_OPS, COMPARE_OPS, UNARY_OPS, Op
from ..ir.verifier import dominators, reverse_postorder
from ..types.lattice import Scalar

_PURE = (BINARY_OPS - {Op.POW}) | UNARY_OPS | COMPARE_OPS | {
    Op.NOT, Op.TRUTH, Op.RANGE_ITEM, Op.CALL_MATH}
_NUMBERS = frozenset({int, float, bool})


def eliminate_common_subexpressions(fn: Function) -> Function:
    if len(fn.blocks) > 1:
        dom = dominators(fn)
        order = reverse_postorder(fn)      # a dominator comes before the blocks it dominates
    else:
        dom, order = None, fn.blocks
    seen: dict[tuple, list[tuple[Value, Block]]] = {}
    same: dict[Value, Value] = {}
    for b in order:
        keep = []
        for ins in b.instrs:
            if same:
                ins.args = [same.get(a, a) for a in ins.args]
                for e in ins.targets:
                    e.args = [same.get(a, a) for a in e.args]
            r = ins.result
            if r is None or not _number(r):
                keep.append(ins)
                continue
            if ins.op is Op.CONST:
                # by its repr: 0.0 == -0.0 (and 1 == True) must stay apart
                key = (Op.CONST, type(ins.attr), repr(ins.attr), r.type)
            elif ins.op in _PURE and all(_number(a) for a in ins.args):
                key = (ins.op, ins.attr, r.type, *ins.args)
            else:
                keep.append(ins)
                continue
            earlier = seen.setdefault(key, [])
            for v, blk in earlier:
                if blk is b or dom is not None and blk in dom[b]:
                    same[r] = v
                    break
            else:
                earlier.append((r, b))
                keep.append(ins)
        b.instrs[:] = keep
    if same:
        # uses reached before their definition's block in reverse postorder: back edges'
        # arguments, and blocks' instructions visited before the merge was found
        for b in fn.blocks:
            for ins in b.instrs:
                ins.args = [same.get(a, a) for a in ins.args]
                for e in ins.targets:
                    e.args = [same.get(a, a) for a in e.args]
    return fn


def _number(v: Value) -> bool:
    t = v.type
    return isinstance(t, Scalar) and t.py in _NUMBERS
