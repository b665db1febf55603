"""Calls of small pure jitted functions, generated in place (mixed into FunctionCodegen).

A callee whose typed IR is one block of pure operations (backends/pure_callees.py: arithmetic,
comparisons, math, builtins, array reads; no stores, calls, raises or unions) is generated
inside its caller, from a copy of its IR whose parameters take the caller's arguments:

- its value ranges start from the arguments' ranges, so a caller's loop bounds reach the
  callee's index arithmetic (`eval_a(i, j)` computing `(i + j) * (i + j + 1)` needs no
  overflow guard when i and j are indices of an array);
- its guards deoptimise to the caller's frame state before the call, where tier 0 makes the
  call itself: a failing guard is replayed by the real callee, with its own exceptions,
  warnings and traceback;
- such a call has no side effect, so a loop making it can still be a pure region.

LLVM would inline the callee's compiled core anyway, but not its guards' frame states nor
ranges it cannot see.
"""

from __future__ import annotations

from ...errors import Unsupported
from ...ir.clone import clone
from ...ir.nodes import Function, Instr
from ...ir.ops import Op


class NotInlined(Exception):
    """A call chosen for inlining whose body native code could not generate after all:
    generate the caller again, calling it."""

    def __init__(self, ins: Instr):
        self.ins = ins


class InlineOps:
    """Mixed into FunctionCodegen."""

    def call_inlined(self, ins: Instr, body: Function, a: list[str]) -> str:
        """Generate body in place of ins; its guards deoptimise to the current frame state."""
        from ...passes.fold import fold_constants
        from ...passes.ranges import compute_ranges
        fn = clone(body)
        ranges = [x.range for x in ins.args]
        fn = compute_ranges(fold_constants(fn), entry=ranges)
        block = fn.blocks[0]
        for p, x, arg in zip(block.params, a, ins.args):
            self.vals[p] = self.coerce(x, arg.type, p.type)
        for callee_ins in block.instrs[:-1]:
            args = [self.vals[x] for x in callee_ins.args]
            rt = callee_ins.result.type if callee_ins.result is not None else None
            if callee_ins.op is Op.CONST:
                r = self.const(callee_ins.attr, rt)
            else:
                try:
                    r = self.native(callee_ins, args, [x.type for x in callee_ins.args], rt)
                except Unsupported:
                    r = None
                if r is None:
                    raise NotInlined(ins)
            if callee_ins.result is not None:
                self.vals[callee_ins.result] = r
        ret = block.instrs[-1].args[0]
        return self.coerce(self.vals[ret], ret.type, ins.result.type)
