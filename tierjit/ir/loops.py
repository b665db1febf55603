"""Natural loops: for each loop header, the blocks of its loop.

An edge src → h is a back edge when h dominates src; the loop of h is h plus every block
that reaches a back edge's source without passing through h.
"""

from __future__ import annotations

from .nodes import Block, Function
from .verifier import dominators, predecessors


def natural_loops(fn: Function, dom: dict[Block, set[Block]] | None = None,
                  preds: dict[Block, list[Block]] | None = None) -> dict[Block, set[Block]]:
    """(dom and preds: the function's dominators and predecessors, when already known.)"""
    dom = dom if dom is not None else dominators(fn)
    preds = preds if preds is not None else predecessors(fn)
    loops: dict[Block, set[Block]] = {}
    for src in fn.blocks:
        if src not in dom:
            continue
        for h in src.successors:
            if h in dom[src]:
                body = loops.setdefault(h, {h})
                stack = [src]
                while stack:
                    b = stack.pop()
                    if b not in body:
                        body.add(b)
                        stack.extend(preds[b])
    return loops
