"""Dead-code elimination: drop results nobody uses, when computing them cannot fail.

An op that might raise (division, a call, an index) stays even when unused: removing it
would remove the exception the program raises."""

from __future__ import annotations

from ..ir.nodes import Function
from ..ir.ops import COMPARE_OPS, IDENTITY_OPS, Op

# never raise on Python's own int, float and bool (an int never overflows in Python)
_ARITH = frozenset({Op.ADD, Op.SUB, Op.MUL, Op.NEG, Op.POS, Op.NOT, Op.TRUTH})


def _removable(ins) -> bool:
    if ins.op in (Op.CONST, Op.MAKE_TUPLE, Op.TUPLE_GET, Op.RANGE_ITEM) or \
            ins.op in IDENTITY_OPS:
        return True
    # arithmetic and comparisons on builtin scalars cannot fail except where they raise
    # (division) or warn (NumPy scalars); keep those.
    if ins.op in _ARITH or ins.op in COMPARE_OPS:
        # all ints (exact, never overflow in Python) or all floats: never raises; an int
        # mixed with a float is converted, which raises OverflowError for a big int
        kinds = {getattr(a.type, "py", None) for a in ins.args}
        return kinds <= {int, bool} or kinds <= {float} or \
            (ins.op in COMPARE_OPS and kinds <= {int, bool, float})
    return False


def eliminate_dead_code(fn: Function) -> Function:
    while True:
        used = set()
        for b in fn.blocks:
            for ins in b.instrs:
                used.update(ins.args)
                for e in ins.targets:
                    used.update(e.args)
        removed = False
        for b in fn.blocks:
            keep = [i for i in b.instrs
                    if i.result is None or i.result in used or not _removable(i)]
            removed |= len(keep) != len(b.instrs)
            b.instrs[:] = keep
        if not removed:
            return fn
