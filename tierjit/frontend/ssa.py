"""Variables to SSA values on the fly (Braun et al., "Simple and Efficient Construction of
Static Single Assignment Form", CC 2013), with block parameters in place of phi nodes.

A block is *sealed* once all its predecessors are known. Reading a variable in a sealed
block with one predecessor asks that predecessor; otherwise a block parameter stands for it,
and every incoming edge passes the variable's value from its own block. Parameters that turn
out to merge one value only are removed by `remove_trivial_params`.
"""

from __future__ import annotations

from ..errors import Unsupported
from ..ir.nodes import Block, Edge, Function, Value


class SSABuilder:
    """Tracks the current definition of each variable in each block."""

    def __init__(self, fn: Function):
        self.fn = fn
        self.defs: dict[Block, dict[str, Value]] = {}
        self.preds: dict[Block, list[tuple[Block, Edge]]] = {}
        self.sealed: set[Block] = set()
        self.param_var: dict[Value, str] = {}     # block parameter -> variable it stands for

    def write(self, block: Block, var: str, value: Value) -> None:
        self.defs.setdefault(block, {})[var] = value

    def read(self, block: Block, var: str, line: int) -> Value:
        v = self.defs.get(block, {}).get(var)
        if v is not None:
            return v
        preds = self.preds.get(block, [])
        if block in self.sealed and len(preds) == 1:
            v = self.read(preds[0][0], var, line)
        elif block in self.sealed and not preds:
            raise Unsupported(f"variable '{var}' may be used before it is assigned", line)
        else:
            v = self.fn.new_value(var)
            block.params.append(v)
            self.param_var[v] = var
            self.write(block, var, v)             # before the reads: breaks cycles
            if block in self.sealed:
                for pred, edge in preds:
                    edge.args.append(self.read(pred, var, line))
        self.write(block, var, v)
        return v

    def add_edge(self, pred: Block, edge: Edge) -> None:
        """Record an edge just created by a terminator of `pred`."""
        target = edge.block
        assert target not in self.sealed, "edge into a sealed block"
        self.preds.setdefault(target, []).append((pred, edge))

    def seal(self, block: Block, line: int) -> None:
        """All predecessors of `block` are known: fill the arguments of its parameters."""
        self.sealed.add(block)
        for pred, edge in self.preds.get(block, []):
            for p in block.params[len(edge.args):]:
                edge.args.append(self.read(pred, self.param_var[p], line))


def remove_trivial_params(fn: Function) -> None:
    """Drop block parameters that only ever receive one value (or themselves)."""
    changed = True
    while changed:
        changed = False
        incoming: dict[Block, list[Edge]] = {b: [] for b in fn.blocks}
        for b in fn.blocks:
            for e in b.terminator.targets:
                incoming[e.block].append(e)
        replace: dict[Value, Value] = {}
        for b in fn.blocks[1:]:
            for i, p in enumerate(b.params):
                vals = {e.args[i] for e in incoming[b]} - {p}
                if len(vals) == 1:
                    replace[p] = vals.pop()
        if not replace:
            break
        changed = True

        def sub(v: Value) -> Value:
            while v in replace:
                v = replace[v]
            return v

        for b in fn.blocks:
            keep = [i for i, p in enumerate(b.params) if p not in replace]
            for e in incoming[b]:
                e.args[:] = [e.args[i] for i in keep]
            b.params[:] = [b.params[i] for i in keep]
        for b in fn.blocks:
            for ins in b.instrs:
                ins.args[:] = [sub(a) for a in ins.args]
                for e in ins.targets:
                    e.args[:] = [sub(a) for a in e.args]


def remove_unreachable(fn: Function) -> None:
    """Drop blocks the entry cannot reach and renumber the rest in order."""
    seen, stack = {fn.entry}, [fn.entry]
    while stack:
        for s in stack.pop().successors:
            if s not in seen:
                seen.add(s)
                stack.append(s)
    fn.blocks[:] = [b for b in fn.blocks if b in seen]
    for i, b in enumerate(fn.blocks):
        b.id = i
