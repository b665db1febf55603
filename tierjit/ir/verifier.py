"""The IR verifier. Its header is the list of invariants every pass must preserve.

1. A function has at least one block; blocks[i].id == i; the entry block's parameters are
   the function's arguments, one per name in arg_names.
2. Every block is non-empty and ends in exactly one terminator; no terminator elsewhere.
3. Every edge passes exactly one argument per parameter of its target, and targets a
   block of this function.
4. Every value is defined exactly once (as a block parameter or an instruction result);
   an instruction has a result iff its op produces one.
5. Every use is dominated by its definition (SSA), in the entry-reachable part of the CFG;
   every block is reachable from the entry.
6. Op arity: binary ops and comparisons take 2 args, unary ops 1, BRANCH 1 and 2 targets,
   JUMP 0 args and 1 target, RETURN 1 arg, RAISE none.
7. In typed IR (typed=True): every value has a type.

Not yet checked: that attrs have the right shape for their op.
All errors are collected rather than stopping at the first.
"""

from __future__ import annotations

from .nodes import Block, Function
from .ops import BINARY_OPS, COMPARE_OPS, IDENTITY_OPS, UNARY_OPS, Op
from .printer import format_instr


class VerifyError(Exception):
    """The IR broke one or more invariants; the message lists every one found."""


def _arity_error(ins) -> str | None:
    n, t = len(ins.args), len(ins.targets)
    expect = None
    if ins.op in BINARY_OPS or ins.op in COMPARE_OPS or ins.op in IDENTITY_OPS:
        expect = (2, 0)
    elif ins.op in UNARY_OPS or ins.op in (Op.NOT, Op.TRUTH, Op.LEN, Op.TUPLE_GET, Op.GETATTR,
                                           Op.GUARD_RANGE):
        expect = (1, 0)
    elif ins.op is Op.BRANCH:
        expect = (1, 2)
    elif ins.op is Op.JUMP:
        expect = (0, 1)
    elif ins.op is Op.RETURN:
        expect = (1, 0)
    elif ins.op in (Op.RAISE, Op.CONST):
        expect = (0, 0)
    elif ins.op is Op.RANGE_LEN:
        expect = (3, 0)
    elif ins.op is Op.RANGE_ITEM:
        expect = (4, 0)
    elif ins.op is Op.GUARD_INBOUNDS:
        expect = (3, 0)
    if expect is not None and (n, t) != expect:
        return f"{ins.op.value} takes {expect[0]} args and {expect[1]} targets, has {n} and {t}"
    return None


def dominators(fn: Function, order: list[Block] | None = None,
               preds: dict[Block, list[Block]] | None = None) -> dict[Block, set[Block]]:
    """Dominator sets of the blocks reachable from the entry: the immediate dominators by
    Cooper, Harvey & Kennedy's iterative algorithm ("A Simple, Fast Dominance Algorithm"),
    then each block's set as its immediate dominator's plus itself. (order and preds: the
    function's reverse postorder and predecessors, when already known.)"""
    order = order if order is not None else reverse_postorder(fn)
    preds = preds if preds is not None else predecessors(fn)
    number = {b: i for i, b in enumerate(order)}
    entry = order[0]
    idom: dict[Block, Block] = {entry: entry}
    changed = True
    while changed:
        changed = False
        for b in order[1:]:
            new = None
            for p in preds[b]:
                if p not in idom:           # not processed yet, or unreachable
                    continue
                if new is None:
                    new = p
                    continue
                x, y = p, new               # their nearest common dominator
                while x is not y:
                    while number[x] > number[y]:
                        x = idom[x]
                    while number[y] > number[x]:
                        y = idom[y]
                new = x
            if idom.get(b) is not new:
                idom[b] = new
                changed = True
    dom = {entry: {entry}}
    for b in order[1:]:                     # an immediate dominator comes first in RPO
        dom[b] = dom[idom[b]] | {b}
    return dom


def reverse_postorder(fn: Function) -> list[Block]:
    seen, post = set(), []
    stack = [(fn.entry, iter(fn.entry.successors))]
    seen.add(fn.entry)
    while stack:
        b, it = stack[-1]
        nxt = next(it, None)
        if nxt is None:
            post.append(b)
            stack.pop()
        elif nxt not in seen:
            seen.add(nxt)
            stack.append((nxt, iter(nxt.successors)))
    return post[::-1]


def predecessors(fn: Function) -> dict[Block, list[Block]]:
    preds: dict[Block, list[Block]] = {b: [] for b in fn.blocks}
    for b in fn.blocks:
        if b.instrs and b.instrs[-1].op.is_terminator:
            for s in b.successors:
                preds.setdefault(s, []).append(b)
    return preds


def verify(fn: Function, typed: bool = False) -> None:
    """Raise VerifyError listing every broken invariant of `fn`."""
    errors: list[str] = []
    err = errors.append
    if not fn.blocks:
        raise VerifyError(f"{fn.name}: no blocks")
    if len(fn.entry.params) != len(fn.arg_names):
        err(f"entry block has {len(fn.entry.params)} params for {len(fn.arg_names)} arguments")
    own = set(fn.blocks)
    defined: dict[int, tuple[Block, int]] = {}   # value id -> (block, index; -1 for params)
    for i, b in enumerate(fn.blocks):
        if b.id != i:
            err(f"b{b.id} is at position {i}")
        if not b.instrs:
            err(f"b{b.id} is empty")
            continue
        for p in b.params:
            if p.id in defined:
                err(f"%{p.id} defined twice")
            defined[p.id] = (b, -1)
        for j, ins in enumerate(b.instrs):
            last = j == len(b.instrs) - 1
            where = f"b{b.id}[{j}] {format_instr(ins)}"
            if ins.op.is_terminator != last:
                err(f"{where}: terminator must be last, and only last")
            if (ins.result is not None) != ins.op.has_result:
                err(f"{where}: result presence does not match op")
            if (msg := _arity_error(ins)) is not None:
                err(f"{where}: {msg}")
            for e in ins.targets:
                if e.block not in own:
                    err(f"{where}: target b{e.block.id} is not in this function")
                elif len(e.args) != len(e.block.params):
                    err(f"{where}: passes {len(e.args)} args to b{e.block.id} "
                        f"which has {len(e.block.params)} params")
            if ins.result is not None:
                if ins.result.id in defined:
                    err(f"{where}: %{ins.result.id} defined twice")
                defined[ins.result.id] = (b, j)
    if errors:
        raise VerifyError(f"{fn.name}: " + "\n  ".join(errors))

    dom = dominators(fn)
    for b in fn.blocks:
        if b not in dom:
            err(f"b{b.id} is unreachable from the entry")
    for b in dom:
        for j, ins in enumerate(b.instrs):
            uses = list(ins.args) + [a for e in ins.targets for a in e.args]
            for v in uses:
                site = defined.get(v.id)
                if site is None:
                    err(f"b{b.id}[{j}] {format_instr(ins)}: uses undefined %{v.id}")
                    continue
                db, dj = site
                ok = (db is b and dj < j) if db is b else db in dom[b]
                if not ok:
                    err(f"b{b.id}[{j}] {format_instr(ins)}: %{v.id} does not dominate its use")
    if typed:
        for v in fn.values():
            if v.type is None:
                err(f"%{v.id} has no type")
    if errors:
        raise VerifyError(f"{fn.name}: " + "\n  ".join(errors))
