"""Which calls of jitted functions native code generates in place: small pure callees.

A callee whose typed IR (for the call's argument types) is one block of at most MAX_INSTRS
pure operations — arithmetic, comparisons, math, builtins, array reads; no stores, calls,
raises or unions — can be generated inside its caller. Its guards then deoptimise to the
caller's frame state before the call, where tier 0 makes the real call (with the callee's own
exceptions, warnings and traceback). Both native tiers do it: the LLVM tier
(backends/llvm/inline.py) and the baseline tier (backends/stencils/select_ops.py), which
would otherwise go through its generic call prologue for every call.
"""

from __future__ import annotations

from ..errors import Unsupported
from ..ir.nodes import Function, Instr
from ..ir.ops import BINARY_OPS, COMPARE_OPS, IDENTITY_OPS, UNARY_OPS, Op
from ..types.lattice import ArrayT, Scalar, TupleT, Type

_PURE_OPS = BINARY_OPS | COMPARE_OPS | IDENTITY_OPS | UNARY_OPS | {
    Op.CONST, Op.NOT, Op.TRUTH, Op.CALL_MATH, Op.CALL_BUILTIN, Op.MAKE_TUPLE, Op.TUPLE_GET,
    Op.GETITEM, Op.GETATTR, Op.LEN, Op.GUARD_RANGE, Op.RETURN}
MAX_INSTRS = 40          # larger callees are called: their code is worth sharing


def _plain(t: Type | None) -> bool:
    if isinstance(t, TupleT):
        return all(_plain(i) for i in t.items)
    return isinstance(t, (Scalar, ArrayT))


def inline_body(ins: Instr, caller) -> Function | None:
    """The callee's typed IR to generate in place of CALL_JIT ins, or None to call it."""
    callee = ins.attr
    if callee is caller:
        return None
    try:
        typed = callee.infer(tuple(a.type for a in ins.args))
    except Unsupported:
        return None
    fn = typed.fn
    if typed.partial or len(fn.blocks) != 1 or len(fn.blocks[0].instrs) > MAX_INSTRS:
        return None
    for i in fn.blocks[0].instrs:
        if i.op not in _PURE_OPS or not all(_plain(a.type) for a in i.args) or \
                i.result is not None and not _plain(i.result.type):
            return None
    return fn
