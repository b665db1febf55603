"""Counted loops run in chunks of POLL_PERIOD iterations (mixed into FunctionCodegen).

A loop polls for signals every POLL_PERIOD back edges: a counter to step and test on every
iteration, and a call, which keeps LLVM from vectorising the loop. When the loop is counted
— its header tests `k < n`, k a counter that every back edge increases by one and n fixed
before the loop — its test becomes `k < chunk`, chunk = min(k + POLL_PERIOD, n) on entry;
when a chunk ends before n, the poll (and, in a pure loop, the test of its guards) runs once
and the next chunk starts. The loop inside a chunk has no call: a pure one can be vectorised
(a float sum stays in order: the vectoriser keeps ordered reductions ordered), and any one
loses the counter. Tier 0 sees the same loop: nothing changes in the IR.
"""

from __future__ import annotations

from ...ir.nodes import Block, Edge, Instr, Value
from ...ir.ops import Op
from ...types.lattice import INT
from .deopt import POLL_PERIOD
from .lltypes import ll


class ChunkOps:
    """Mixed into FunctionCodegen."""

    def find_chunked_loops(self) -> None:
        """Chunk the counted loops that are a pure region's header or outside any region
        (after find_pure_loops)."""
        from ...ir.loops import natural_loops
        for h, body in natural_loops(self.fn).items():
            if h in self.region_fs or h not in self.region_of:
                self.find_chunked(h, body)

    def find_chunked(self, h: Block, body: set) -> None:
        """Record loop h as chunked when its header is a counted loop's test."""
        term = h.terminator
        if term.op is not Op.BRANCH or term.targets[0].block not in body \
                or term.targets[1].block in body:
            return
        cond = next((i for i in h.instrs if i.result is term.args[0]), None)
        if cond is None or cond.op is not Op.LT:
            return
        k, n = cond.args
        if k not in h.params or k.type != INT or n.type != INT or k.range is None \
                or n.range is None or k.range[0] < 0 or n.range[0] < 0 \
                or any(n is x.result for b in body for x in b.instrs) or n in h.params:
            return
        uses = sum(a is cond.result for b in self.fn.blocks for x in b.instrs
                   for a in x.args + [y for e in x.targets for y in e.args])
        if uses != 1:
            return
        i = h.params.index(k)
        defs = {x.result: x for b in body for x in b.instrs if x.result is not None}
        for b in body:
            for e in b.terminator.targets:
                if e.block is h and not _plus_one(defs.get(e.args[i]), k):
                    return
        self.chunked[h] = (k, n, cond)
        self.chunk_incoming[h] = []

    def chunk_test(self, h: Block, ins: Instr) -> str:
        """Header h's `k < n` as `k < chunk`."""
        return self.emit(f"icmp slt i64 {self.vals[ins.args[0]]}, %chunk.{h.id}")

    def chunk_limit(self, k: str, n: str) -> str:
        """min(k + POLL_PERIOD, n), for 0 <= k and 0 <= n (no overflow)."""
        left = self.emit(f"sub i64 {n}, {k}")
        small = self.emit(f"icmp slt i64 {left}, {POLL_PERIOD}")
        step = self.emit(f"select i1 {small}, i64 {left}, i64 {POLL_PERIOD}")
        return self.emit(f"add i64 {k}, {step}")

    def chunk_end(self, h: Block, exit_edge: Edge) -> None:
        """The header's test failed: a chunk ended; start the next (after a poll) or leave."""
        k, n, _ = self.chunked[h]
        more = self.emit(f"icmp slt i64 {self.vals[k]}, {self.vals[n]}")
        again, out = self.new_label("chunk"), self.new_label("chunked")
        self.emit_void(f"br i1 {more}, label %{again}, label %{out}")
        self.start(again)
        self.edge(h, list(h.params), chunk=self.chunk_limit(self.vals[k], self.vals[n]))
        self.start(out)
        self.edge(exit_edge.block, exit_edge.args)

    def chunk_of_edge(self, target: Block, vals: list[str], chunk: str | None,
                      entering: bool) -> tuple[str, bool]:
        """(the chunk an edge into chunked header `target` passes, whether the edge polls):
        entering the loop starts the first chunk, a back edge inside a chunk keeps it, and
        only the edge starting a new chunk (`chunk_end`) polls."""
        k, n, _ = self.chunked[target]
        if entering:
            return self.chunk_limit(vals[target.params.index(k)], self.vals[n]), False
        if chunk is None:
            return f"%chunk.{target.id}", False
        return chunk, True

    def chunk_header(self, b: Block) -> list[str]:
        """The lines of chunked loop b's chunk header `c<id>`, which the edges starting a
        chunk (into the loop, and from chunk_end) enter: the chunk's limit and the header's
        parameters as phis (`%o<id>`), then a jump to b, whose own phis take those and the
        back edges inside a chunk. The loop in a chunk is then a loop of its own, nested in
        the loop of chunks: with both kinds of edge into b, LLVM made one loop of them, and
        its unswitching left the chunk's test, the next chunk's limit and the test of the
        region's guards in every iteration (closest's loop: 20 instructions an element
        instead of 11)."""
        inc = self.chunk_incoming.get(b)
        if inc is None:
            return []
        lines = [f"c{b.id}:",
                 f"  %chunk.{b.id} = phi i64 " + ", ".join(f"[{c}, %{lab}]" for lab, c, _ in inc)]
        for i, p in enumerate(b.params):
            lines.append(f"  %o{p.id} = phi {ll(p.type)} "
                         + ", ".join(f"[{vals[i]}, %{lab}]" for lab, _, vals in inc))
        lines.append(f"  br label %b{b.id}")
        return lines


def _plus_one(ins: Instr | None, k: Value) -> bool:
    if ins is None or ins.op is not Op.ADD or k not in ins.args:
        return False
    other = ins.args[1] if ins.args[0] is k else ins.args[0]
    return other.range == (1, 1)
