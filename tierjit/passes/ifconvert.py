"""If-conversion of conditional increments, for the baseline tier: `if cond: n += 1` on a
Python int becomes `n = n + cond`, with no branch.

    B:  ...  branch cond -> T(), F()          (cond a bool)
    T:  m = add n, 1;  jump J(..., m, ...)    (T and F reached only from B)
    F:  jump J(..., n, ...)                   (the same arguments but that one)
 => B:  ...  m' = add n, cond;  jump J(..., m', ...)

Python's `n + True` is `n + 1` and `n + False` is `n`, for every int n, so the values are
CPython's; `-=` is `n - cond`. A branch on data, such as mc_pi's
`if x * x + y * y <= 1.0: inside += 1` on random numbers, is one a CPU mispredicts often (one
time in five there), some 15–20 cycles each time, where the stencils of a compare and an add
cost a few. (Where the branch was predictable, sieve's `if flags[k]: count += 1`, the count
now goes through its slot every iteration, and the loop's time stayed the same.) The LLVM
tier leaves the IR alone: LLVM makes the same select itself. Only ints: for a float
`s + 0.0` is not `s` when s is -0.0, and NumPy ints wrap and warn.
"""

from __future__ import annotations

from ..frontend.ssa import remove_unreachable
from ..ir.nodes import Block, Edge, Function, Instr, Value
from ..ir.ops import Op
from ..types.lattice import BOOL, INT

_ADD, _SUB, _CONST, _JUMP, _BRANCH = Op.ADD, Op.SUB, Op.CONST, Op.JUMP, Op.BRANCH


def if_convert_increments(fn: Function) -> Function:
    preds: dict[Block, int] = {}
    consts: dict[Value, object] = {}
    for b in fn.blocks:
        for ins in b.instrs:
            if ins.op is _CONST:
                consts[ins.result] = ins.attr
        for s in b.successors:
            preds[s] = preds.get(s, 0) + 1
    changed = False
    for b in fn.blocks:
        br = b.instrs[-1]
        if br.op is not _BRANCH or br.args[0].type != BOOL:
            continue
        t, f = br.targets
        if t.args or f.args or preds[t.block] != 1 or preds[f.block] != 1:
            continue
        inc = _increment(t.block, f.block, consts)
        if inc is None:
            continue
        op, n, m, j, k = inc
        cond = br.args[0]
        m2 = fn.new_value(m.name)
        m2.type = INT
        if n.range is not None and m.range is not None:
            m2.range = (min(n.range[0], m.range[0]), max(n.range[1], m.range[1]))
        args = list(f.block.instrs[0].targets[0].args)
        args[k] = m2
        b.instrs[-1:] = [Instr(op, [n, cond], m2, None, t.block.instrs[-2].line),
                         Instr(_JUMP, [], None, None, br.line, [Edge(j, args)])]
        changed = True
    if changed:
        remove_unreachable(fn)          # T and F (and a block's id is its position)
    return fn


def _increment(t: Block, f: Block, consts: dict) -> tuple | None:
    """(op, n, m, J, k) when T is `m = n +/- 1; jump J(...)` (and constants) and F jumps to J
    with the same arguments but n for m at position k."""
    # T's constants go with it (what T defines is used in T alone)
    body = [ins for ins in t.instrs if ins.op is not _CONST]
    if t.params or f.params or len(body) != 2 or len(f.instrs) != 1:
        return None
    inc, tj, fj = body[0], body[1], f.instrs[0]
    if inc.op is not _ADD and inc.op is not _SUB or tj.op is not _JUMP or fj.op is not _JUMP:
        return None
    n, one = inc.args
    m = inc.result
    if n.type != INT or m.type != INT or type(consts.get(one)) is not int \
            or consts[one] != 1:
        return None
    te, fe = tj.targets[0], fj.targets[0]
    if te.block is not fe.block:
        return None
    diff = [k for k, (a, c) in enumerate(zip(te.args, fe.args)) if a is not c]
    if len(diff) != 1 or te.args[diff[0]] is not m or fe.args[diff[0]] is not n:
        return None
    return inc.op, n, m, te.block, diff[0]
