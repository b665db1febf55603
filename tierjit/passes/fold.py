"""Constant folding: an op whose operands are all constants becomes a constant.

The op is evaluated by Python itself on the constant values, so the folded result is
exactly what the program would compute. Ops that raise or produce a value of another type
than the one inferred (e.g. `2 ** -1`) are left for run time, and so are ops that could
warn: only Python's own numbers are folded (NumPy scalars warn on overflow), not `~` of a
bool (deprecated), and no power or shift big enough to take long. Warnings are not caught
to find out: the filters are the whole process's, and another thread may be warning.
"""

from __future__ import annotations

import operator

from ..ir.nodes import Function, Value
from ..ir.ops import Op
from ..types.lattice import type_of_value
from ..types.rules import _PY_OPS

# Op's members bound once (see ir/ops.py: `Op.X` is slow on Python 3.11)
_CONST, _INVERT, _LSHIFT, _POW = Op.CONST, Op.INVERT, Op.LSHIFT, Op.POW

_FOLDABLE = dict(_PY_OPS)
_FOLDABLE[Op.NOT] = operator.not_
_FOLDABLE[Op.TRUTH] = bool


def fold_constants(fn: Function) -> Function:
    consts: dict[Value, object] = {}
    for b in fn.blocks:
        for ins in b.instrs:
            if ins.op is _CONST:
                consts[ins.result] = ins.attr
            elif ins.op in _FOLDABLE and ins.args and all(a in consts for a in ins.args):
                args = [consts[a] for a in ins.args]
                if not _quiet(ins.op, args):
                    continue
                try:
                    r = _FOLDABLE[ins.op](*args)
                except Exception:   # noqa: BLE001 - the program raises this at run time
                    continue
                if type_of_value(r) != ins.result.type or _too_big(r):
                    continue
                ins.op, ins.args, ins.attr = _CONST, [], r
                consts[ins.result] = r
    return fn


_NUMBERS = frozenset({int, float, bool, complex, type(None)})


def _quiet(op: Op, args: list) -> bool:
    """Whether Python computes op on args without a warning, and at once."""
    if not all(type(a) in _NUMBERS for a in args):
        return False
    if op is _INVERT:
        return type(args[0]) is not bool
    if op in (_POW, _LSHIFT) and type(args[1]) is int:
        return args[1] <= 64          # a bigger result is left to run time anyway
    return True


def _too_big(r) -> bool:
    """Native code keeps ints in 64 bits; a bigger constant is left to run time."""
    return isinstance(r, int) and not -2**63 <= r < 2**63
