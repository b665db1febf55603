"""Small if/else diamonds in pure loops as selects (mixed into FunctionCodegen).

`if n % 2 == 0: n = n // 2 else: n = 3 * n + 1` branches on data a CPU cannot predict. In a
pure loop both arms can simply be computed and the result selected: they are a few
arithmetic ops that cannot trap, and their guards are deferred anyway — each arm's pending
guards are selected too, so a guard of the arm not taken never fails. The IR keeps its
branch: tier 0 and the deopt frame states (the loop's entry) are unchanged.
"""

from __future__ import annotations

from ...ir.nodes import Block, Instr
from ...ir.ops import COMPARE_OPS, Op
from ...types.lattice import Scalar
from .lltypes import ll

MAX_ARM = 8                # instructions per arm, the jump excluded
# ops that cannot trap in native code (their guards are deferred): arithmetic without a
# division by a value that may be zero
_SAFE = COMPARE_OPS | {Op.CONST, Op.ADD, Op.SUB, Op.MUL, Op.NEG, Op.POS, Op.NOT, Op.TRUTH,
                       Op.BITAND, Op.BITOR, Op.BITXOR, Op.INVERT}
_BY_CONSTANT = {Op.FLOORDIV, Op.MOD}


class SelectOps:
    """Mixed into FunctionCodegen."""

    def diamond(self, b: Block, ins: Instr) -> Block | None:
        """The join block when branch `ins` ending b in a pure loop is a small diamond
        (each arm one block, reached only from b, of safe ops, jumping to the same join)."""
        if self.cur_region is None:
            return None
        arms = [e.block for e in ins.targets]
        if arms[0] is arms[1] or any(e.args for e in ins.targets):
            return None
        join = None
        for arm in arms:
            term = arm.terminator
            consts = {i.result: i.attr for i in arm.instrs if i.op is Op.CONST}
            if term.op is not Op.JUMP or len(arm.instrs) - 1 > MAX_ARM or \
                    self.region_of.get(arm) is not self.cur_region or \
                    self.predecessors.get(arm) != [b] or \
                    not all(_safe(i, consts) for i in arm.instrs[:-1]):
                return None
            if join is not None and term.targets[0].block is not join:
                return None
            join = term.targets[0].block
        return join if self.region_of.get(join) is self.cur_region else None

    def branch_as_select(self, b: Block, ins: Instr, join: Block) -> None:
        """Both arms computed in b, their results and pending guards selected."""
        c = self.vals[ins.args[0]]
        here = self.cur_block_index
        outer, outer_nan = self.pending, self.nan_terms
        picked = []
        for arm in (e.block for e in ins.targets):
            self.pending, self.nan_terms = None, {}
            for i, x in enumerate(arm.instrs[:-1]):
                self.cur_block_index = (arm, i)
                r = self.value(arm, i, x)
                if x.result is not None:
                    self.vals[x.result] = r
            nan = self.nan_sum(list(self.nan_terms.values()))
            edge = arm.terminator.targets[0]
            args = [self.coerce(self.vals[a], a.type, p.type)
                    for a, p in zip(edge.args, join.params)]
            picked.append((self.pending or "false", nan or "0.0", args))
            self.folded.add(arm)
        self.cur_block_index = here
        (pt, nt, at), (pf, nf, af) = picked
        self.nan_terms = outer_nan
        self.pending = self.emit(f"select i1 {c}, i1 {pt}, i1 {pf}")
        if outer is not None:
            self.pending = self.emit(f"or i1 {outer}, {self.pending}")
        self.nan_terms[f"select{id(ins)}"] = self.emit(f"select i1 {c}, double {nt}, double {nf}")
        vals = [self.emit(f"select i1 {c}, {ll(p.type)} {x}, {ll(p.type)} {y}")
                for p, x, y in zip(join.params, at, af)]
        self.flush()
        self.edge(join, [], vals=vals)


def _safe(ins: Instr, consts: dict) -> bool:
    """Whether ins may run when its arm is not taken: a plain op on scalars that cannot
    trap (an int floor division or modulo only by a positive constant)."""
    if not all(isinstance(v.type, Scalar) for v in ins.args) or \
            ins.result is not None and not isinstance(ins.result.type, Scalar):
        return False
    if ins.op in _BY_CONSTANT:
        d = consts.get(ins.args[1])
        return type(d) is int and d > 0 and ins.args[0].type.py is int
    return ins.op in _SAFE
