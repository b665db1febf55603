"""Deep copy of an IR function: passes that mutate IR work on their own copy."""

from __future__ import annotations

from .nodes import Block, Edge, Function, Instr, Value


def clone(fn: Function) -> Function:
    vmap: dict[Value, Value] = {}

    def v(x: Value) -> Value:
        y = vmap.get(x)
        if y is None:
            y = vmap[x] = Value(x.id, x.name, x.type)
        return y

    out = Function(fn.name, list(fn.arg_names), first_line=fn.first_line,
                   filename=fn.filename, next_value_id=fn.next_value_id, free=fn.free,
                   attrs=fn.attrs, osr=fn.osr, module_globals=fn.module_globals)
    bmap = {b: Block(b.id) for b in fn.blocks}
    for b in fn.blocks:
        nb = bmap[b]
        nb.params = [v(p) for p in b.params]
        nb.instrs = [Instr(i.op, [v(a) for a in i.args], v(i.result) if i.result else None,
                           i.attr, i.line, [Edge(bmap[e.block], [v(a) for a in e.args])
                                            for e in i.targets], i.inbounds)
                     for i in b.instrs]
        out.blocks.append(nb)
    return out
