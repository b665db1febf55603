"""Liveness of SSA values, and frame states built from it.

A frame state says where tier 0 resumes and which values it needs: those live just before
the instruction (used by it or by anything that can run after it). Backward data-flow over
blocks, with block parameters defined on entry to their block and edge arguments used at
the end of the edge's source block.
"""

from __future__ import annotations

from .nodes import Block, FrameState, Function, Value


def live_out(fn: Function) -> dict[Block, set[Value]]:
    """Values live at the end of each block (including the arguments its edges pass)."""
    live_in: dict[Block, set[Value]] = {b: set() for b in fn.blocks}
    out: dict[Block, set[Value]] = {b: set() for b in fn.blocks}
    changed = True
    while changed:
        changed = False
        for b in reversed(fn.blocks):
            o = set()
            for e in b.terminator.targets:
                o |= live_in[e.block] - set(e.block.params)
                o.update(e.args)
            live = set(o)
            for ins in reversed(b.instrs):
                if ins.result is not None:
                    live.discard(ins.result)
                live.update(ins.args)
            if o != out[b] or live != live_in[b]:
                out[b], live_in[b], changed = o, live, True
    return out


class FrameStates:
    """Frame states of one function, numbered in the order they are asked for."""

    def __init__(self, fn: Function):
        self.fn = fn
        self.out = live_out(fn)
        self.states: list[FrameState] = []
        self._index: dict[tuple[int, int], int] = {}

    def at(self, block: Block, index: int) -> int:
        """The number of the frame state before block.instrs[index]."""
        key = (block.id, index)
        n = self._index.get(key)
        if n is None:
            live = set(self.out[block])
            for ins in reversed(block.instrs[index:]):
                if ins.result is not None:
                    live.discard(ins.result)
                live.update(ins.args)
            ordered = tuple(sorted(live, key=lambda v: v.id))
            n = self._index[key] = len(self.states)
            self.states.append(FrameState(block.id, index, ordered))
        return n
