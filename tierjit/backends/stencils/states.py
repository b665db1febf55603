"""Frame states for the baseline tier: ir.liveness.FrameStates computed with bit sets.

The same frame states (block, instruction, live values), numbered in the order selection asks
for them, but each built only when it is first needed — at a deopt, or by a tool — since most
guards never fail.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...ir.nodes import Block, FrameState, Function, Value
from .kinds import _vid


class States:
    """ir.liveness.FrameStates — the same frame states, numbered in the order they are asked
    for — computed with bit sets (a Python int per set, one bit per value in id order) by a
    worklist over per-block use/def sets, and each block's live sets in one backward pass.

    Compiling only numbers frame states (at()); liveness is solved the first time a live set
    is needed (coalescing asks about a parameter, a deopt boxes a state's values), so a
    function whose edges carry no arguments compiles without it."""

    def __init__(self, fn: Function):
        self.fn = fn
        self.states = _LazyStates(self)
        self._index: dict[tuple[Block, int], int] = {}
        self._before: dict[Block, list] = {}
        self._out: dict[Block, int] | None = None

    def _solve(self) -> dict[Block, int]:
        """The live-out set of every block (and the value numbering the bit sets use), all
        three published together at the end (see before())."""
        fn = self.fn
        vals = sorted(fn.values(), key=_vid)
        bit = {v: 1 << i for i, v in enumerate(vals)}
        blocks = fn.blocks
        gen: dict[Block, int] = {}
        kill: dict[Block, int] = {}
        params: dict[Block, int] = {}
        preds: dict[Block, list] = {b: [] for b in blocks}
        for b in blocks:
            g = k = 0
            for ins in reversed(b.instrs):
                r = ins.result
                if r is not None:
                    g &= ~bit[r]
                    k |= bit[r]
                for x in ins.args:
                    g |= bit[x]
            gen[b], kill[b] = g, k
            m = 0
            for x in b.params:
                m |= bit[x]
            params[b] = m
            for e in b.terminator.targets:
                preds[e.block].append(b)
        live_in = dict(gen)
        out = dict.fromkeys(blocks, 0)
        work = list(blocks)                 # every block once; then what a change affects
        queued = set(blocks)
        while work:
            b = work.pop()
            queued.discard(b)
            o = 0
            for e in b.terminator.targets:
                o |= live_in[e.block] & ~params[e.block]
                for x in e.args:
                    o |= bit[x]
            out[b] = o
            new_in = gen[b] | (o & ~kill[b])
            if new_in != live_in[b]:
                live_in[b] = new_in
                for q in preds[b]:
                    if q not in queued:
                        queued.add(q)
                        work.append(q)
        self.vals, self.bit = vals, bit
        self._out = out
        return out

    def live_before(self, block: Block, index: int, v: Value) -> bool:
        """Whether v is live before block.instrs[index]."""
        live = self.before(block)[index]
        return bool(live & self.bit[v])

    def before(self, block: Block) -> list[int]:
        """The live set (bits) before each instruction of block.

        Published only once complete: deopts on several threads build frame states at once,
        and one that found a list still being filled would box the values of an empty set."""
        bf = self._before.get(block)
        if bf is None:
            out = self._out if self._out is not None else self._solve()
            bit = self.bit
            live = out[block]
            bf = [0] * len(block.instrs)
            for i in range(len(block.instrs) - 1, -1, -1):
                ins = block.instrs[i]
                if ins.result is not None:
                    live &= ~bit[ins.result]
                for x in ins.args:
                    live |= bit[x]
                bf[i] = live
            self._before[block] = bf
        return bf

    def values(self, bits: int) -> tuple[Value, ...]:
        vals, out = self.vals, []
        while bits:
            low = bits & -bits
            out.append(vals[low.bit_length() - 1])
            bits ^= low
        return tuple(out)

    def at(self, block: Block, index: int) -> int:
        """The number of the frame state before block.instrs[index]."""
        key = (block, index)
        n = self._index.get(key)
        if n is None:
            wanted = self.states.wanted
            n = self._index[key] = len(wanted)
            wanted.append(key)
        return n


class _LazyStates(Sequence):
    """The frame states, each built when it is first needed (at a deopt, or by a tool):
    compiling only numbers them."""

    def __init__(self, states: States):
        self.owner = states
        self.wanted: list[tuple[Block, int]] = []
        self.built: dict[int, FrameState] = {}

    def __len__(self) -> int:
        return len(self.wanted)

    def __getitem__(self, n):
        if isinstance(n, slice):
            return [self[i] for i in range(*n.indices(len(self)))]
        fs = self.built.get(n)
        if fs is None:
            block, index = self.wanted[n]
            o = self.owner
            fs = FrameState(block.id, index, o.values(o.before(block)[index]))
            # two threads may build it at once: both then use the first one stored
            fs = self.built.setdefault(n, fs)
        return fs
