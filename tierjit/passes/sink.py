"""Sinking of a loop-carried float's new value after the old value's last read, for the baseline
tier.

    C:  a = mul zr zr;  b = mul zi zi;  ...;  branch (a + b <= 4.0) -> B(), ...
    B:  t = sub a b;  t2 = add t cr                     (zr*zr - zi*zi + cr)
        u = mul (mul 2.0 zr) zi;  zi2 = add u ci        (2.0*zr*zi + ci: reads zr after t2)
        jump H(zi2, t2)                                 (H's parameters zi, zr)
 => B:  u = ...;  zi2 = add u ci;  t = sub a b;  t2 = add t cr;  jump H(zi2, t2)

Baseline code computes an edge argument straight into its parameter's slot when the parameter
is dead from the argument's definition on (stencils.select.coalesce); otherwise the value is
computed into a slot of its own and the back edge moves it, a store and a load on the loop's
critical path (mandelbrot's `zr = t`). Moved after the last read of zr, t2 goes straight into
zr's slot. The value's block is the jump's or one of the straight line of blocks ending there
(a `for` body and its latch): it moves to just before the jump.

Only Python-float + - * move (with the operations feeding them that nothing else reads): they
never raise, warn or deoptimise, so no guard or call between the old place and the new sees a
difference, and a frame state taken in between resumes tier 0 in this same order (the baseline
code's tier 0 is made from this IR). The LLVM tier leaves the IR alone: its registers need no
such help.
"""

from __future__ import annotations

from ..ir.nodes import Block, Function, Instr, Value
from ..ir.ops import Op
from ..types.lattice import Scalar

_PURE = frozenset({Op.ADD, Op.SUB, Op.MUL})
_JUMP = Op.JUMP


def sink_edge_floats(fn: Function) -> Function:
    # the jumps passing a Python float on (many functions have none: nothing else to do)
    jumps = []
    for b in fn.blocks:
        term = b.instrs[-1]
        if term.op is _JUMP and term.targets[0].block is not b \
                and any(map(_is_float, term.targets[0].args)):
            jumps.append(b)
    if not jumps:
        return fn
    uses: dict[Value, int] = {}
    preds: dict[Block, list[Block]] = {}
    for b in fn.blocks:
        for ins in b.instrs:
            for a in ins.args:
                uses[a] = uses.get(a, 0) + 1
        for e in b.instrs[-1].targets:
            preds.setdefault(e.block, []).append(b)
            for a in e.args:
                uses[a] = uses.get(a, 0) + 1
    for b in jumps:
        term = b.instrs[-1]
        edge = term.targets[0]
        # the straight line of blocks ending in b (a loop body and its latch), first to last:
        # where each instruction is, by the value it makes
        chain = _chain(b, edge.block, preds)
        where = {ins.result: (k, i) for k, c in enumerate(chain)
                 for i, ins in enumerate(c.instrs) if ins.result is not None}
        # each parameter whose new value is made in the chain: computed into its slot
        # once the old value is dead (select.coalesce)
        made_here = {p for a, p in zip(edge.args, edge.block.params) if a in where}
        moving: set[tuple[int, int]] = set()
        for a, p in zip(edge.args, edge.block.params):
            at = where.get(a)
            if at is None or uses.get(a) != 1 or not _pure(chain[at[0]].instrs[at[1]]):
                continue
            if not any(p in ins.args for k, c in enumerate(chain)
                       for i, ins in enumerate(c.instrs) if (k, i) > at):
                continue                 # p is dead where a is made: nothing to gain
            tree = _tree(chain, at, where, uses)
            # Moved after another parameter's new value, a tree reading that parameter would
            # keep it alive and its new value out of its slot: x, v = x*0.5 + v, v - x*0.25
            # needs a move either way (a swap), so it stays as written.
            if any(q is not p and q in made_here
                   for k, i in tree for q in chain[k].instrs[i].args):
                continue
            moving |= tree
        if not moving:
            continue
        # the moved instructions' results are read only among themselves and by the jump, and
        # their operands are made before their old places: in their order, before the jump
        moved = [chain[k].instrs[i] for k, i in sorted(moving)]
        for k, c in enumerate(chain):
            c.instrs = [ins for i, ins in enumerate(c.instrs) if (k, i) not in moving]
        b.instrs[-1:] = moved + [term]
    return fn


def _chain(b: Block, t: Block, preds: dict[Block, list[Block]]) -> list[Block]:
    """b and the straight line of blocks before it (each the only predecessor of the next,
    ending in a jump without arguments; none of them t), first to last."""
    chain = [b]
    while True:
        ps = preds.get(chain[-1], ())
        if len(ps) != 1:
            break
        q = ps[0]
        if q is t or q in chain or q.instrs[-1].op is not _JUMP or q.instrs[-1].targets[0].args:
            break
        chain.append(q)
    return chain[::-1]


def _is_float(v: Value) -> bool:
    t = v.type
    return type(t) is Scalar and t.py is float     # (no Type.__eq__ call)


def _pure(ins: Instr) -> bool:
    """A Python-float + - * of Python floats: no exception, warning or guard."""
    return ins.op in _PURE and _is_float(ins.result) and all(map(_is_float, ins.args))


def _tree(chain: list[Block], at: tuple[int, int], where: dict[Value, tuple[int, int]],
          uses: dict[Value, int]) -> set[tuple[int, int]]:
    """The instruction at `at` and those (in the chain) feeding it that nothing else reads."""
    out = {at}
    work = [at]
    while work:
        k, i = work.pop()
        for a in chain[k].instrs[i].args:
            w = where.get(a)
            if w is not None and w not in out and uses.get(a) == 1 \
                    and _pure(chain[w[0]].instrs[w[1]]):
                out.add(w)
                work.append(w)
    return out
