"""Inline a small recursive function into itself, two levels, for the baseline tier.

Baseline code pays for a call in full (`call_self`: a frame made, arguments and constants
copied, the running calls counted, the status checked: some 50 instructions), and a
recursion such as fib's is little but calls. So each self-call of a small function without
loops is replaced by a copy of the function's body: its entry block receives the call's
arguments, and each of its returns jumps to the rest of the caller's block with the value
returned; the copies' self-calls get copies in turn, once. Their own self-calls stay calls
(of the whole inlined function), so every call made does the work of up to seven of fib's.

The result is one function, with the same operations in the same order, so its frame states
need nothing new: a guard failing inside a copy resumes tier 0 of this function there, which
finishes the copy, then the caller. A copy's values and blocks are new ones (ids after the
function's own), typed and ranged as the originals: the call passes exactly the argument
types the function was typed for (the cell's own specialisation: a value specialisation's
body is only right for its values, so it is never inlined). The LLVM tier does the same
with LLVM's inliner (backends/llvm/recursion.py: two levels of twins).
"""

from __future__ import annotations

from ..ir.clone import clone
from ..ir.loops import natural_loops
from ..ir.nodes import Block, Edge, Function, Instr, Value
from ..ir.ops import Op

# Two levels, as the LLVM tier inlines, when the copies stay within BUDGET instructions in
# all (a body of n instructions with c self-calls: n * (1 + c + c * c)), else one: fib's 9
# instructions become 63, and each call made does the work of up to seven.
LEVELS = 2
BUDGET = 160

_CALL_JIT, _RETURN, _JUMP, _GUARD_RANGE = Op.CALL_JIT, Op.RETURN, Op.JUMP, Op.GUARD_RANGE


def inline_self_calls(fn: Function, callee: object, arg_types: tuple) -> Function:
    """fn (the specialisation of `callee` for `arg_types`) with its self-calls inlined, one
    or two levels; fn itself when it is not small, has loops or speculative guards, or makes
    no such call."""
    def is_self(ins: Instr) -> bool:
        return (ins.op is _CALL_JIT and ins.attr is callee and ins.result is not None
                and tuple(a.type for a in ins.args) == arg_types)

    instrs = [ins for b in fn.blocks for ins in b.instrs]
    calls = sum(map(is_self, instrs))
    levels, copies = 0, 1
    while levels < LEVELS and len(instrs) * (copies + calls ** (levels + 1)) <= BUDGET:
        copies += calls ** (levels + 1)
        levels += 1
    if not calls or not levels or tuple(p.type for p in fn.entry.params) != arg_types:
        return fn
    # every return one value of the calls' result type: a copy's returns are jumps to a
    # join taking that value as it is
    rets = [ins for ins in instrs if ins.op is _RETURN]
    types = {ins.result.type for ins in instrs if is_self(ins)}
    if any(len(r.args) != 1 for r in rets) or {r.args[0].type for r in rets} != types:
        return fn
    # not one with loops, nor with speculative guards (array dimensions below 2**30): the
    # dispatcher learns from a failing one by its value's and block's ids, which a copy's
    # guard does not have
    if natural_loops(fn) or any(ins.op is _GUARD_RANGE for ins in instrs):
        return fn
    out = clone(fn)
    ranges = {v.id: v.range for v in fn.values()}     # clone() leaves them to the passes
    for v in out.values():
        v.range = ranges[v.id]
    todo = [(b, 0) for b in out.blocks]
    while todo:
        b, depth = todo.pop()
        for i, ins in enumerate(b.instrs):
            if is_self(ins):
                n = len(out.blocks)
                todo.append((_splice(out, fn, b, i, ins), depth))
                if depth + 1 < levels:
                    todo.extend((c, depth + 1) for c in out.blocks[n + 1:])
                break
    return out


def _splice(out: Function, body: Function, b: Block, i: int, call: Instr) -> Block:
    """Replace call (b.instrs[i]) by a copy of body: b jumps to the copy's entry with the
    call's arguments; the rest of b moves to a new block whose parameter is the call's
    result, where the copy's returns jump. Returns that block (it may hold further calls)."""
    rest = Block(len(out.blocks), [call.result], b.instrs[i + 1:])
    out.blocks.append(rest)
    bmap: dict[Block, Block] = {}
    for c in body.blocks:
        bmap[c] = Block(len(out.blocks))
        out.blocks.append(bmap[c])
    first = out.next_value_id
    vmap = {x: Value(k, x.name, x.type, x.range) for k, x in enumerate(body.values(), first)}
    out.next_value_id = first + len(vmap)
    for c in body.blocks:
        nc = bmap[c]
        nc.params = [vmap[p] for p in c.params]
        for ins in c.instrs:
            if ins.op is _RETURN:
                nc.instrs.append(Instr(_JUMP, [], None, None, ins.line,
                                       [Edge(rest, [vmap[ins.args[0]]])]))
            else:
                nc.instrs.append(Instr(ins.op, [vmap[a] for a in ins.args],
                                       vmap.get(ins.result), ins.attr, ins.line,
                                       [Edge(bmap[e.block], [vmap[a] for a in e.args])
                                        for e in ins.targets], ins.inbounds))
    b.instrs = b.instrs[:i] + [Instr(_JUMP, [], None, None, call.line,
                                     [Edge(bmap[body.entry], list(call.args))])]
    return rest
