"""Jump threading of short-circuit joins: a block that only branches on its one bool parameter
(`a and b`, `a or b` feeding an `if` or a `while`) is bypassed by the edges into it.

    J(p: bool):  branch truth(p) -> T, F        (p and its truth used nowhere else)

An unconditional jump into J passing v becomes `branch v -> T, F` (the truth of a bool is
the bool itself). An edge of a branch on c (or on the truth of a bool c) that passes c to J
knows c's value on that edge, so it goes straight to T or F. J, once no edge comes in, is
dropped. The compare computing v then feeds the branch directly (one fused stencil in the
baseline tier), and the block after the join is dominated by the block computing `b`, so
passes/cse.py can reuse what the condition computed (mandelbrot's `zr * zr`).

Values J's branch passes on, other than p, are defined in blocks that dominate J, hence
every block jumping to J: available there. A loop's header is left alone (its back edge, where
the baseline tier polls for signals, stays a back edge).
"""

from __future__ import annotations

from ..frontend.ssa import remove_unreachable
from ..ir.nodes import Block, Edge, Function, Instr, Value
from ..ir.ops import Op
from ..ir.verifier import dominators, predecessors
from ..types.lattice import BOOL


def thread_jumps(fn: Function) -> Function:
    changed = False
    dom = None
    for j in list(fn.blocks):
        if j is fn.entry or not _is_join(fn, j):
            continue
        if dom is None:
            dom = dominators(fn)
        preds = predecessors(fn).get(j, ())
        if any(j in dom.get(q, ()) for q in preds):
            continue                    # a loop's header: its back edge stays one
        p = j.params[0]
        branch = j.instrs[-1]
        mine = {p, branch.args[0]}           # p, and its truth if J computes that
        for pred in preds:
            term = pred.instrs[-1]
            if term.op is Op.JUMP:
                v = term.targets[0].args[0]
                pred.instrs[-1] = Instr(Op.BRANCH, [v], None, None, branch.line,
                                        [_edge(e, mine, v) for e in branch.targets])
                changed = True
            elif term.op is Op.BRANCH:
                known = _known(pred, term.args[0])
                for k, e in enumerate(term.targets):
                    if e.block is j and e.args[0] in known:
                        # on the true edge the condition is True, on the false edge False
                        taken = branch.targets[k]
                        term.targets[k] = _edge(taken, mine, e.args[0])
                        changed = True
    if changed:
        remove_unreachable(fn)          # J, once no edge comes in
    return fn


def _is_join(fn: Function, j: Block) -> bool:
    """J(p: bool): [truth(p)], branch — p and the truth used by nothing else."""
    if len(j.params) != 1 or j.params[0].type != BOOL:
        return False
    p = j.params[0]
    instrs = j.instrs
    if len(instrs) == 1:
        cond = p
    elif len(instrs) == 2 and instrs[0].op is Op.TRUTH and instrs[0].args[0] is p:
        cond = instrs[0].result
    else:
        return False
    branch = instrs[-1]
    if branch.op is not Op.BRANCH or branch.args[0] is not cond:
        return False
    uses = 0
    for b in fn.blocks:
        for ins in b.instrs:
            uses += sum(a is p or a is cond for a in ins.args)
            for e in ins.targets:
                uses += sum(a is p or a is cond for a in e.args)
    return uses == len(instrs)           # the truth's use of p, the branch's of cond


def _known(block: Block, c: Value) -> set[Value]:
    """Values equal to branch condition c: c, and the bool it is the truth of."""
    known = {c}
    for ins in block.instrs:
        if ins.result is c and ins.op is Op.TRUTH and ins.args[0].type == BOOL:
            known.add(ins.args[0])
    return known


def _edge(e: Edge, mine: set[Value], v: Value) -> Edge:
    """J's edge e taken from another block, where J's parameter (and its truth) is v."""
    return Edge(e.block, [v if a in mine else a for a in e.args])

