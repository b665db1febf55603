"""Constant folding: an op whose operands are all constants becomes a constant.

The op is evaluated by Python itself on the constant values, so the folded result is
exactly what the program would compute. Ops that raise, warn or produce a value of another
type than the one inferred (e.g. `2 ** -1`) are left for run time.
"""

from __future__ import annotations

import operator
import warnings

from ..ir.nodes import Function, Value
from ..ir.ops import Op
from ..types.lattice import type_of_value
from ..types.rules import _PY_OPS

_FOLDABLE = dict(_PY_OPS)
_FOLDABLE[Op.NOT] = operator.not_
_FOLDABLE[Op.TRUTH] = bool


def fold_constants(fn: Function) -> Function:
    consts: dict[Value, object] = {}
    for b in fn.blocks:
        for ins in b.instrs:
            if ins.op is Op.CONST:
                consts[ins.result] = ins.attr
            elif ins.op in _FOLDABLE and ins.args and all(a in consts for a in ins.args):
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("error")
                        r = _FOLDABLE[ins.op](*(consts[a] for a in ins.args))
                except Exception:   # noqa: BLE001 - the program raises this at run time
                    continue
                if type_of_value(r) != ins.result.type or _too_big(r):
                    continue
                ins.op, ins.args, ins.attr = Op.CONST, [], r
                consts[ins.result] = r
    return fn


def _too_big(r) -> bool:
    """Native code keeps ints in 64 bits; a bigger constant is left to run time."""
    return isinstance(r, int) and not -2**63 <= r < 2**63
