"""Instruction selection for the baseline tier: typed IR -> a list of stencil pieces.

Each instruction becomes one stencil (or a few moves), chosen by its op and the types of its
operands; a compare feeding the branch right after it becomes one fused compare-and-branch
stencil, and pairs of arithmetic operations or an array read and the operation using it one
fused stencil (fuse.py). Blocks are laid out in reverse postorder, so a loop body falls through from its
header. Every guard continues at the deopt stub of the instruction's own frame state (tier 0
resumes *before* the instruction, which has had no effect yet), so no region analysis is
needed. Operations without a stencil for their types run by calling the Python function they
stand for (`pyop`); anything the frame cannot represent raises Unsupported.
"""

from __future__ import annotations

import math
import struct
from functools import cached_property

from ...errors import Unsupported
from ...ir.nodes import Block, Function, Instr, Value
from ...ir.ops import Op
from ...ir.verifier import dominators, predecessors
from ...passes.ranges import arith, within_i64
from ...types.lattice import INT, Scalar, TupleT, Type
from . import frame as fr
from . import library, regs
from .emit import Label, Stub
from .fuse import FusedSelection, after_consts
from .kinds import (
    _CMP,
    _CMP_V,
    _DOUBLE_KINDS,
    _FLOAT_KINDS,
    _NO_SHARE_V,
    _is_float,
    _is_int,
    any_union,
    kind,
    width,
)
from .select_ops import SIMPLE, OpSelection
from .states import States
from .templates import INT_NOT

OUT, POLL, OWN, DESC, DEOPTING, FIRST = 0, 8, 16, 24, 32, 40     # POLL: see call_self
# Op's members bound once (see ir/ops.py: `Op.X` is slow on Python 3.11)
_ADD, _MUL, _CONST, _TRUTH, _CALL_JIT = Op.ADD, Op.MUL, Op.CONST, Op.TRUTH, Op.CALL_JIT
_GETITEM, _SUB, _RANGE_ITEM, _TRUEDIV = Op.GETITEM, Op.SUB, Op.RANGE_ITEM, Op.TRUEDIV
_BRANCH, _JUMP, _RETURN, _RAISE = Op.BRANCH, Op.JUMP, Op.RETURN, Op.RAISE


class Selection(OpSelection, FusedSelection):
    """The pieces of one function, with what its deopt and Python-call hooks need."""

    def __init__(self, fn: Function, ret_type: Type | None, me: tuple | None = None):
        self.fn = fn
        # (dispatcher, argument types) of the code being made, when the cell of its callers
        # holds it: a call of exactly that is a recursive call_self
        self.me = me
        self.self_calls: list[tuple[dict, int]] = []    # (holes, frame state before it)
        self._defs: dict[Value, tuple[Block, int]] | None = None     # see defined_at
        self.ret_type = ret_type
        self.fs = States(fn)
        self.stencils = library.load().stencils
        # pieces 0 and 1 are the function's entry and core thunks (code.py)
        self.pieces: list[tuple[str, dict]] = [("", {}), ("", {})]
        self.offset: dict[Value, int] = {}
        self.pow2: dict[Value, int] = {}       # int constants 2**k -> k
        # float constants 2**k dividing, whose reciprocal is a normal float -> its slot:
        # `x / c` is `x * (1 / c)`, bit for bit (both round the same real number), and a
        # multiplication takes a cycle where a division takes four or five
        self.recip: dict[Value, int] = {}
        self.consts: list[int] = []            # the constant table (i64 bit patterns)
        self.const_at: dict[tuple[int, ...], int] = {}     # a constant's words -> its slots
        self.block_label: dict[Block, int] = {}
        self.fixups: list[tuple[dict, str, Block]] = []    # (holes, hole, target block)
        self.deopt_stubs: dict[int, Stub] = {}    # frame state word -> its stub
        self.stubs: list[int] = []                 # the stubs' frame state words, in order
        self.overrides: list[tuple[Value, int]] = []   # call results: (value, object slot)
        # (instr, frame state | its override's number << 32 for a handed-over result, holes)
        self.pyops: list[tuple[Instr, int, dict]] = []
        self.calls: list[tuple[Instr, tuple]] = []
        self.call_cells: list[tuple[dict, object, tuple]] = []
        # calls of small pure callees generated in place (select_ops.inline): the call ->
        # a copy of the callee's IR, its ranges from the call's arguments
        self.inlined: dict[Instr, Function] = {}
        self.cache: dict[Block, regs.Cached] = {}     # see select()
        self.in_loops: set[Block] = set()
        self.polls: list[tuple[dict, Block]] = []     # (holes, loop header) of every poll

    # -- slots -----------------------------------------------------------------------------
    def allocate(self) -> int:
        """Slots for every value: the arguments, the constants (the constant table), then the
        rest in definition order; see coalesce() for values that need none of their own."""
        fn = self.fn
        offset = self.offset
        at = FIRST
        for p in fn.entry.params:
            offset[p] = at
            at += 8 * width(p.type)
        self.nargs = (at - FIRST) // 8
        const_start = at
        # one pass over the instructions: constants, use counts, the values needing slots
        uses: dict[Value, int] = {}
        alias: dict[Value, Value] = {}
        rest: list[Value] = []
        into_result: dict[Value, Value] = {}     # an inlined callee's result -> the call's
        types: set[Type] = set()                  # the results' types
        counted: list[tuple[Value, Value]] = []   # range(n) items and their counters
        tested: list[tuple[Value, Value]] = []    # truth of an int, and the int
        edge_args: set[Value] = set()
        union = False
        for b in fn.blocks:
            if b.params and b is not fn.entry:
                rest += b.params
            for e in b.instrs[-1].targets:          # only a terminator has targets
                for a in e.args:
                    uses[a] = uses.get(a, 0) + 1
                    edge_args.add(a)
            for ins in b.instrs:
                for a in ins.args:
                    uses[a] = uses.get(a, 0) + 1
                r = ins.result
                if r is None:
                    continue
                op = ins.op
                t = r.type
                if op is _CALL_JIT:
                    body = _inline_copy(ins)
                    if body is not None:
                        self.inlined[ins] = body
                        at, u = self._inlined_values(ins, body, at, rest, into_result)
                        union = union or u
                if op is _CONST:
                    at = self._constant(r, ins.attr, at)
                elif op is _TRUTH and kind(t) == "bool" and kind(ins.args[0].type) == "bool":
                    alias[r] = ins.args[0]       # truth of a bool: that bool
                elif op is _TRUTH and kind(ins.args[0].type) in ("int", "npint") \
                        and ins is b.instrs[-2] and b.instrs[-1].op is _BRANCH \
                        and b.instrs[-1].args[0] is r:
                    tested.append((r, ins.args[0]))      # see below
                elif op is _RANGE_ITEM and ins.args[0].range == (0, 0) \
                        and ins.args[2].range == (1, 1) and t == INT \
                        and ins.args[3].type == INT:
                    counted.append((r, ins.args[3]))     # range(n)'s item k: k itself
                else:
                    rest.append(r)
                types.add(t)
            for p in b.params:
                types.add(p.type)
        if self.ret_type is not None:
            types.add(self.ret_type)
        union = union or any_union(types)
        if self.recip:
            # the reciprocals of the powers of two that divide (a slot each): not of those
            # that only multiply or add
            divisors = {ins.args[1] for b in fn.blocks for ins in b.instrs
                        if ins.op is _TRUEDIV}
            for v, r in list(self.recip.items()):
                if v in divisors:
                    self.recip[v], at = self._words(_const_words(r, v.type), at)
                else:
                    del self.recip[v]
        if union:
            self.zero, self.one = at, at + 8         # union tags of known members
            self.consts += [0, 1]
            at += 16
        self.nconsts = (at - const_start) // 8
        self.uses = uses
        for r, x in tested:
            if uses[r] == 1:
                # truth of an int tested only by the branch right after it: the branch tests
                # the int (br_b: non-zero), in no frame state (no guard in between)
                alias[r] = x
            else:
                rest.append(r)
        share = self.coalesce()
        for r, k in counted:
            if self.same_as_counter(r, k, share, edge_args):
                alias[r] = k
            else:
                rest.append(r)
        if edge_args:
            self.coalesce_params(share, set(alias.values()) | {k for _r, k in counted})
        for v in rest:
            if v not in share:
                offset[v] = at
                at += 8 * width(v.type)
        for v, p in share.items():                  # an edge argument in its parameter's slots
            while p in share:                       # a join's parameter in a header's
                p = share[p]
            offset[v] = offset[p]
        for v, r in into_result.items():
            offset[v] = offset[r]
        for v in alias:                             # the same value under another name
            x = v
            while x in alias:
                x = alias[x]
            offset[v] = offset[x]
        self.scratch = at                           # call arguments, parallel moves
        return at

    def _constant(self, v: Value, value, at: int) -> int:
        """Constant v's slots in the constant table, from `at`; returns the next free slot.
        Constants of the same bits share slots (no stencil writes a constant's slots), so
        that a prologue copies fewer words."""
        if type(value) is int and 0 < value < 2**62 and value & (value - 1) == 0:
            self.pow2[v] = value.bit_length() - 1
        self.offset[v], at = self._words(_const_words(value, v.type), at)
        if type(value) is float and abs(math.frexp(value)[0]) == 0.5 \
                and 2.0 ** -1021 <= abs(value) <= 2.0 ** 1021:
            self.recip[v] = 1.0 / value         # its slot once it is known to divide
        return at

    def _words(self, words: list[int], at: int) -> tuple[int, int]:
        """The slots of a constant's words (shared with an equal constant's) and the next
        free slot."""
        key = tuple(words)
        same = self.const_at.get(key)
        if same is not None:
            return same, at
        self.const_at[key] = at
        self.consts += words
        return at, at + 8 * len(words)

    def _inlined_values(self, ins: Instr, body: Function, at: int, rest: list[Value],
                        into_result: dict[Value, Value]) -> tuple[int, bool]:
        """Slots for the values of a callee generated in place of CALL_JIT ins: its
        constants in the table, the others after the function's own (its parameters are the
        call's arguments), except the value it returns, computed straight into the call's
        slots. Returns the next free constant slot and whether a value is a union."""
        instrs = body.blocks[0].instrs
        ret = instrs[-1].args[0]
        if sum(a is ret for x in instrs for a in x.args) == 1:
            into_result[ret] = ins.result
        union = False
        for cins in instrs:
            c = cins.result
            if c is None:
                continue
            if cins.op is _CONST:
                at = self._constant(c, cins.attr, at)
                into_result.pop(c, None)
            elif c not in into_result:
                rest.append(c)
                union = union or fr.holds_union(c.type)
        return at, union

    def same_as_counter(self, r: Value, k: Value, share: dict[Value, Value],
                        edge_args: set[Value]) -> bool:
        """Whether item r of a range(n) loop (r == k, its counter) can live in k's slot:
        the counter's slot is written only by edges into its loop header (where r, defined
        after the header, is dead) and by the edge argument computed into it (its `k + 1`),
        after which r must be dead. r must not be computed into a parameter itself nor be an
        edge argument (an edge's moves compare values, not slots, for clashes)."""
        if r in share or r in edge_args:
            return False
        for a, p in share.items():
            if p is k:
                blk, i = self.defined_at(a)
                if self.fs.live_before(blk, i + 1, r):
                    return False
        return True

    def defined_at(self, v: Value) -> tuple[Block, int]:
        """The block and index of the instruction defining v (an instruction's result;
        KeyError for a block parameter)."""
        defs = self._defs
        if defs is None:
            defs = self._defs = {ins.result: (b, i) for b in self.fn.blocks
                                 for i, ins in enumerate(b.instrs) if ins.result is not None}
        return defs[v]

    def coalesce(self) -> dict[Value, Value]:
        """Edge arguments computed straight into their parameter's slots (allocate() has
        already made `truth` of a bool an alias of that bool).

        An edge argument computed in the edge's block (or a straight line of blocks ending
        there), used by nothing but that edge, whose target parameter is dead from the
        argument's definition on, is computed straight into the parameter's slots (so a
        loop's `i = i + 1` needs no move on the back edge; a float or np.float64 goes into
        the double of a `float | np.float64` parameter, the edge still sets the tag, so that
        a loop's `s += a[i] * b[i]` keeps no store-to-load round trip off its critical path).
        The candidates are one-stencil results of at most two slots (the stencil reads its
        operands before it writes its result): see _candidates(). Several edges may compute
        their arguments into one parameter (a `while` loop's `j = i * i` before it and
        `j += i` in it): the chains of two edges to one block never share a block, so from
        each argument's definition control goes straight to its own edge."""
        share: dict[Value, Value] = {}
        uses = self.uses
        defs: dict[Block, dict[Value, int]] = {}
        for b in self.fn.blocks:
            term = b.instrs[-1]
            if len(term.targets) != 1:
                continue
            e = term.targets[0]
            t = e.block
            if t is b or not e.args:
                continue
            # the straight line of blocks ending in b: the only way from a definition in it
            # to this edge, so no other value of the parameter's slot can come in between
            chain = _chain(b, t, self.preds)
            if t in chain:
                continue
            for a, p in zip(e.args, t.params):
                if uses.get(a) != 1 or p in self.offset or a.type != p.type \
                        and not (fr.float_union(p.type) and kind(a.type) in _DOUBLE_KINDS):
                    continue
                for blk in chain:
                    got = defs.get(blk)
                    if got is None:
                        got = defs[blk] = _candidates(blk)
                    i = got.get(a)
                    if i is not None:
                        break
                else:
                    continue                        # not defined in the chain
                if self.fs.live_before(blk, i + 1, p):
                    continue                        # the parameter is still needed
                share[a] = p
        return share

    def coalesce_params(self, share: dict[Value, Value], aliased: set[Value]) -> None:
        """A join's parameter q passed on only to a parameter p of another block (mc_pi's
        `if ...: inside += 1`: the join's `inside` goes to the loop header's) lives in p's
        slots when the two are never live at once, so that neither the edges into the join
        nor the edge to p's block move it. The slots are written by the edges into either
        block and by the values computed into either parameter (coalesce()), so: p must be
        dead at the join's entry (q is not live beyond its one use, the edge), no edge into
        the join may pass p to another parameter (its moves would read p's slots after
        writing them), no value computed into q may be defined while p is live nor one
        computed into p while q is. Neither may be named by another value (an alias: a
        `truth`, a range(n) item, a counter), and p's slots hold no other parameter."""
        uses, fs = self.uses, self.fs
        params = {p: blk for blk in self.fn.blocks for p in blk.params}
        for b in self.fn.blocks:
            term = b.instrs[-1]
            if len(term.targets) != 1 or not term.targets[0].args:
                continue
            e = term.targets[0]
            for a, p in zip(e.args, e.block.params):
                j = params.get(a)
                if j is None or uses.get(a) != 1 or a.type != p.type or p in share \
                        or p in self.offset or a in self.offset or p in aliased \
                        or a in aliased or fs.live_before(j, 0, p):
                    continue
                if any(x is p and q is not a for pb in self.preds.get(j, ())
                       for t in pb.instrs[-1].targets if t.block is j
                       for x, q in zip(t.args, j.params)):
                    continue
                if any(v in params and q in (a, p)
                       or q is a and fs.live_before(*self._after(v), p)
                       or q is p and fs.live_before(*self._after(v), a)
                       for v, q in share.items()):
                    continue
                share[a] = p

    def _after(self, v: Value) -> tuple[Block, int]:
        blk, i = self.defined_at(v)
        return blk, i + 1

    # -- pieces ----------------------------------------------------------------------------
    def add(self, name: str, **holes) -> dict:
        self.pieces.append((name, holes))
        return holes

    def deopt(self, holes: dict, b: Block, i: int, hole: str = "DEOPT") -> int | None:
        """The deopt stub of the frame state before b.instrs[i] into `hole` of the piece
        just added; none (and None) when that stencil has no such hole."""
        name, last = self.pieces[-1]
        assert last is holes
        if hole not in self.stencils[name].hole_names:
            return None
        n = self.fs.at(b, i)
        holes[hole] = self.stub(n)
        return n

    def stub(self, word: int) -> Stub:
        """The deopt stub that stores frame state word `word` (a frame state's number, with
        the number of an override in its high bits): one per word, numbered as first asked
        for (emit lays them out after the pieces)."""
        s = self.deopt_stubs.get(word)
        if s is None:
            s = self.deopt_stubs[word] = Stub(len(self.stubs))
            self.stubs.append(word)
        return s

    def mov(self, src: int, dst: int, n: int) -> None:
        for k in range(n):
            if src + 8 * k != dst + 8 * k:
                self.add("mov", A=src + 8 * k, C=dst + 8 * k)

    def select(self) -> None:
        fn = self.fn
        size = self.allocate()
        order = _layout(fn)
        # loops whose counter and sum live in registers (regs.py): none without a loop
        if len(order) > 1:
            self.cache, self.in_loops = regs.plan(self)
        uses = self.uses
        self.max_scratch = 0
        o, pieces, at, stub = self.offset, self.pieces, self.fs.at, self.stub
        simple = SIMPLE
        for pos, b in enumerate(order):
            self.block_label[b] = len(pieces)
            nxt = order[pos + 1] if pos + 1 < len(order) else None
            instrs = b.instrs
            skip: set[int] = set()
            for i, ins in enumerate(instrs):
                if i in skip:
                    continue                        # fused into an instruction before it
                op = ins.op
                if op is _CONST:
                    continue                        # in the constant table: no code
                args = ins.args
                if op is _MUL and uses.get(ins.result) == 1:
                    j = after_consts(instrs, i)
                    if self.mul_add(b, i, ins, instrs[j]):
                        skip.add(j)
                        continue
                if op is _GETITEM and uses.get(ins.result) == 1:
                    fused = self.element_operands(b, i, instrs)
                    if fused:
                        skip.update(fused)
                        continue
                if len(args) == 2 and ins.result is not None:
                    # the common case first: a binary op with a stencil for its types alone
                    x, y = args
                    r = ins.result
                    rule = simple.get((op._value_, x.type, y.type, r.type))
                    if op is _TRUEDIV and y in self.recip:
                        rule = None                 # by a power of two: a multiplication
                    # a float + or - may be the first of a fused pair (mul_add); rule[3] says
                    # so without the kind of its type, as does kind() the first time
                    if (rule[3] if rule is not None else (op is _ADD or op is _SUB)
                            and kind(r.type) in _DOUBLE_KINDS) and uses.get(r) == 1:
                        j = after_consts(instrs, i)
                        if self.mul_add(b, i, ins, instrs[j]):
                            skip.add(j)
                            continue
                    if rule is not None:
                        h = {"A": o[x], "B": o[y], "C": o[r]}
                        if rule[2] and _cannot_overflow(op, x.range, y.range):
                            pieces.append((rule[2], h))     # no guard needed
                            continue
                        pieces.append((rule[0], h))
                        if rule[1]:
                            h["DEOPT"] = stub(at(b, i))
                        continue
                if op is _BRANCH:
                    self.branch(b, i, ins, nxt, fused=None)
                elif op is _JUMP:
                    self.edge(b, ins.targets[0], nxt)
                elif op is _RETURN:
                    self.ret(ins)
                elif op is _RAISE:
                    h = self.add("jump")
                    self.deopt(h, b, i, "NEXT")
                elif (op._value_ in _CMP_V and instrs[-1].op is _BRANCH
                      and self.fused_cmp(ins) is not None and uses.get(ins.result) == 1
                      and (i + 2 == len(instrs) and instrs[-1].args[0] is ins.result
                           or i + 3 == len(instrs) and instrs[-2].op is _TRUTH
                           and instrs[-2].args[0] is ins.result
                           and instrs[-1].args[0] is instrs[-2].result
                           and uses.get(instrs[-2].result) == 1)):
                    # compare (and truth of it) then branch: one stencil
                    self.branch(b, len(instrs) - 1, instrs[-1], nxt, fused=ins)
                    break
                elif op is _TRUTH and ins.result is not None and \
                        o[ins.result] == o[ins.args[0]]:
                    continue                        # truth of a bool: the bool itself
                else:
                    self.instr(b, i, ins)
        if self.in_loops:
            regs.apply(self, order)
        self.frame_bytes = (size + 8 * self.max_scratch + 15) & ~15
        for h, _n in self.self_calls:
            h["E"] = self.frame_bytes

    def finish(self) -> None:
        """Resolve the jumps to blocks (a block's first piece is known once it is laid out)."""
        block_label = self.block_label
        for holes, hole, target in self.fixups:
            holes[hole] = Label(block_label[target])

    # -- control flow ------------------------------------------------------------------------
    @cached_property
    def preds(self) -> dict[Block, list[Block]]:
        return predecessors(self.fn)

    @cached_property
    def dom(self) -> dict[Block, set]:
        """The dominators of every block, computed for the first edge (a back edge is one to
        a dominator): a function of one block has none."""
        return dominators(self.fn, preds=self.preds)

    def edge(self, src: Block, e, nxt: Block | None) -> None:
        """Moves of the edge's arguments into the target's parameters, then the jump."""
        target = e.block
        params = target.params
        if params:
            srcs = [(self.offset[a], width(a.type), a.type) for a in e.args]
            clash = any(a in params and a is not p for a, p in zip(e.args, params))
            if clash:                                   # a parallel move: through scratch
                at = self.scratch
                staged = []
                for (off, n, t) in srcs:
                    self.mov(off, at, n)
                    staged.append((at, n, t))
                    at += 8 * n
                self.max_scratch = max(self.max_scratch, (at - self.scratch) // 8)
                srcs = staged
            for (off, n, t), p in zip(srcs, params):
                self.move_value(off, t, p)
        c = regs.enters(self.cache, src, target) if self.cache else None
        if c is not None:
            self.pieces.append(c.loads())
        if target in self.dom[src]:
            # a loop's back edge: the poll continues at the loop's header (its common path
            # is a conditional jump there, `jne NEXT`: no separate jump)
            h = self.add("poll")
            # its way out at the header (runtime/tierup.py); K3, the exit word, is code.py's
            h["DEOPT"] = self.stub(self.fs.at(target, 0))
            self.polls.append((h, target))
        elif target is not nxt:
            h = self.add("jump")
        else:
            return
        self.fixups.append((h, "NEXT", target))

    def move_value(self, off: int, t: Type, p: Value) -> None:
        dst = self.offset[p]
        if t == p.type:
            self.mov(off, dst, width(t))
            return
        for k, (src, _kind) in enumerate(self.words_as(off, t, p.type)):
            if src != dst + 8 * k:
                self.add("mov", A=src, C=dst + 8 * k)

    def branch(self, b: Block, i: int, ins: Instr, nxt, fused: Instr | None) -> None:
        """A (fused compare-and-) branch. Its final jump (the stencil's tail: to JT or to JF,
        as LLVM laid it out) is dropped when its target's code follows: so the condition is
        inverted when that puts the edge laid out next (an edge's own moves, or the next
        block) on the tail."""
        t_edge, f_edge = ins.targets
        dom, cache = self.dom, self.cache

        def complex_(e):
            return bool(e.args) or e.block in dom[b] or \
                bool(cache) and regs.enters(cache, b, e.block) is not None
        tc, fc = complex_(t_edge), complex_(f_edge)
        if tc or fc:
            falls = t_edge if tc and not fc else f_edge
        else:
            falls = t_edge if t_edge.block is nxt else f_edge if f_edge.block is nxt else None
        for invert in (False, True):
            te, fe = (f_edge, t_edge) if invert else (t_edge, f_edge)
            if fused is not None:
                name, a, c = self.fused_cmp(fused)
                if invert:
                    op, ty = name.split("_")
                    name = f"{INT_NOT[op]}_ii" if ty == "ii" else f"not_{op}_ff"
                name, holes = f"br_{name}", {"A": a, "B": c}
            else:
                name, holes = "br_not_b" if invert else "br_b", {"A": self.offset[ins.args[0]]}
            tail = self.stencils[name].tail_target
            if falls is None or (te if tail == "JT" else fe) is falls:
                break
        h = self.add(name, **holes)
        # the tail's edge first: its moves, if any, are the pieces right after the branch
        order = (("JT", te), ("JF", fe)) if tail == "JT" else (("JF", fe), ("JT", te))
        for hole, e in order:
            if complex_(e):
                # an edge with moves (or a back edge): its own pieces after the branch
                # (which never falls through), ending in a jump to the target
                start = len(self.pieces)
                self.edge(b, e, None)
                h[hole] = Label(start)
            else:
                self.fixups.append((h, hole, e.block))

    def fused_cmp(self, ins: Instr):
        x, y = ins.args
        name = _CMP[ins.op]
        if _is_int(x.type) and _is_int(y.type):
            return f"{name}_ii", self.offset[x], self.offset[y]
        if _is_float(x.type) and _is_float(y.type):
            return f"{name}_ff", self.offset[x], self.offset[y]
        return None

    # -- instructions ------------------------------------------------------------------------
    def ret(self, ins: Instr) -> None:
        v = ins.args[0]
        if (v.type is self.ret_type or self.ret_type is None) and width(v.type) == 1:
            self.add("ret1", A=self.offset[v])         # an int or a float (words_as's case)
            return
        words = self.words_as(self.offset[v], v.type, self.ret_type or v.type)
        if len(words) > 16:
            raise Unsupported("a result of more than 16 slots")
        if len(words) == 1 and words[0][1] in ("i", "f"):
            self.add("ret1", A=words[0][0])
            return
        for k, (src, sk) in enumerate(words):
            # an array's object: a new reference for the caller (the entry returns it)
            self.add("ret_copy_ref" if sk == "o" else "ret_copy", A=src, E=8 * k)
        self.add("ret")

    def words_as(self, off: int, t: Type, rt: Type) -> list[tuple[int, str]]:
        """(slot offset, slot kind) of each word of a value of type t, held at off, taken as
        type rt (an edge's parameter, the function's result): a float where rt has
        float | np.float64 gets its union tag from the constant table."""
        if t == rt or fr.slots(t) == fr.slots(rt):
            return [(off + 8 * k, sk) for k, sk in enumerate(fr.slots(t))]
        if fr.float_union(rt) and _is_float(t):
            return [(off, "f"), (self.one if fr.is_np_float(t) else self.zero, "t")]
        if isinstance(t, TupleT) and isinstance(rt, TupleT) and len(t.items) == len(rt.items):
            words = []
            for it, pt in zip(t.items, rt.items):
                words += self.words_as(off, it, pt)
                off += 8 * width(it)
            return words
        raise Unsupported(f"a {t} where {rt} is expected")


def _chain(b: Block, t: Block, preds: dict) -> list[Block]:
    """b and the straight line of blocks before it (each the only predecessor of the next,
    ending in a jump without arguments; at most 8, none of them t): the only way from a
    definition in one of them to b's edge to t."""
    chain = [b]
    q = b
    while len(chain) < 8:
        ps = preds.get(q, ())
        if len(ps) != 1:
            break
        pq = ps[0]
        if pq is t or pq in chain or pq.terminator.op is not _JUMP \
                or pq.terminator.targets[0].args:
            break
        chain.append(pq)
        q = pq
    return chain


def _layout(fn: Function) -> list[Block]:
    """Blocks in a reverse postorder that puts each block's first successor (a branch's true
    side: a loop's body, an if's then-part) right after it, so that it falls through."""
    if len(fn.blocks) == 1:
        return [fn.entry]
    seen, post = {fn.entry}, []
    stack = [(fn.entry, iter(fn.entry.successors[::-1]))]
    while stack:
        b, it = stack[-1]
        nxt = next(it, None)
        if nxt is None:
            post.append(b)
            stack.pop()
        elif nxt not in seen:
            seen.add(nxt)
            stack.append((nxt, iter(nxt.successors[::-1])))
    return post[::-1]


def _candidates(b: Block) -> dict[Value, int]:
    """The results of b's instructions that may be computed into a parameter's slots (one
    stencil: not written by moves; at most two slots), by instruction index."""
    return {ins.result: i for i, ins in enumerate(b.instrs) if ins.result is not None
            and ins.op._value_ not in _NO_SHARE_V and width(ins.result.type) <= 2}


_FITS: dict[tuple, bool] = {}


def _cannot_overflow(op: Op, a: tuple[int, int] | None, b: tuple[int, int] | None) -> bool:
    """Whether int `a op b` stays within 64 bits for operands in ranges a and b (None:
    unknown), remembered per (op, a, b): a function's operands mostly have a few ranges
    (often the whole i64 range), and arith() is Python work."""
    key = (op._value_, a, b)          # (hashing an Enum member is a Python-level call)
    fits = _FITS.get(key)
    if fits is None:
        if len(_FITS) > 4096:               # ranges of long-gone functions
            _FITS.clear()
        fits = _FITS[key] = a is not None and b is not None and within_i64(arith(op, a, b))
    return fits


_DOUBLE, _I64 = struct.Struct("<d"), struct.Struct("<q")
_INT_KINDS = frozenset({"int", "bool", "npint"})


def _const_words(c, t: Type) -> list[int]:
    k = kind(t)
    if k in _INT_KINDS:
        v = int(c)
        if not -2**63 <= v < 2**63:
            raise Unsupported(f"the constant {c!r} (beyond 64 bits)")
        return [v]
    if k in _FLOAT_KINDS:
        return [_I64.unpack(_DOUBLE.pack(float(c)))[0]]
    if isinstance(t, Scalar):
        if t.py is float or fr.is_np_float(t):
            return [struct.unpack("<q", struct.pack("<d", float(c)))[0]]
        if t.py is type(None):
            return []
        if t.py in (int, bool) or fr.is_np_int(t):
            v = int(c)
            if not -2**63 <= v < 2**63:
                raise Unsupported(f"the constant {c!r} (beyond 64 bits)")
            return [v]
    raise Unsupported(f"a constant of type {t}")      # complex, for one


def _inline_copy(ins: Instr) -> Function | None:
    """A copy of the callee's IR to generate in place of CALL_JIT ins (pure_callees), with
    its constants folded, its common subexpressions merged and its value ranges starting
    from the arguments' ranges."""
    from ...ir.clone import clone
    from ...passes.cse import eliminate_common_subexpressions
    from ...passes.fold import fold_constants
    from ...passes.ranges import compute_ranges
    from ..pure_callees import inline_body
    body = inline_body(ins, None)
    if body is None:
        return None
    body = eliminate_common_subexpressions(fold_constants(clone(body)))
    return compute_ranges(body, entry=[a.range for a in ins.args])
