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

# by value: hashing an Enum member is a Python-level call on 3.11, and this runs on every
# baseline compile
_PURE_V = frozenset(op.value for op in (BINARY_OPS - {Op.POW}) | UNARY_OPS | COMPARE_OPS | {
    Op.NOT, Op.TRUTH, Op.RANGE_ITEM, Op.CALL_MATH})
_CONST_V = Op.CONST.value
_NUMBERS = frozenset({int, float, bool})


def eliminate_common_subexpressions(fn: Function) -> Function:
    if len(fn.blocks) > 1:
        order = reverse_postorder(fn)      # a dominator comes before the blocks it dominates
        dom = dominators(fn, order)
    else:
        dom, order = None, fn.blocks
    seen: dict[tuple, list[tuple[Value, Block]]] = {}
    same: dict[Value, Value] = {}
    for b in order:
        dropped = None
        for ins in b.instrs:
            if same:
                ins.args = [same.get(a, a) for a in ins.args]
                for e in ins.targets:
                    e.args = [same.get(a, a) for a in e.args]
            r = ins.result
            if r is None:
                continue
            t = r.type
            if type(t) is not Scalar or t.py not in _NUMBERS:
                continue
            key = None
            op = ins.op._value_
            if op == _CONST_V:
                # by its repr: 0.0 == -0.0 (and 1 == True) must stay apart
                key = (op, type(ins.attr), repr(ins.attr), t.py)
            elif op in _PURE_V:
                for a in ins.args:
                    at = a.type
                    if type(at) is not Scalar or at.py not in _NUMBERS:
                        break
                else:
                    key = (op, ins.attr, t.py, *ins.args)
                if key is None:
                    continue
            else:
                continue
            earlier = seen.get(key)
            if earlier is None:
                seen[key] = [(r, b)]
                continue
            for v, blk in earlier:
                if blk is b or dom is not None and blk in dom[b]:
                    same[r] = v
                    if dropped is None:
                        dropped = set()
                    dropped.add(ins)
                    break
            else:
                earlier.append((r, b))
        if dropped:
            b.instrs[:] = [ins for ins in b.instrs if ins not in dropped]
    if same:
        # uses reached before their definition's block in reverse postorder: back edges'
        # arguments, and blocks' instructions visited before the merge was found
        for b in fn.blocks:
            for ins in b.instrs:
                ins.args = [same.get(a, a) for a in ins.args]
                for e in ins.targets:
                    e.args = [same.get(a, a) for a in e.args]
    return fn

