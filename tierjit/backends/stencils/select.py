"""Instruction selection for the baseline tier: typed IR -> a list of stencil pieces.

Each instruction becomes one stencil (or a few moves), chosen by its op and the types of its
operands; a compare feeding the branch right after it becomes one fused compare-and-branch
stencil. Blocks are laid out in reverse postorder, so a loop body falls through from its
header. Every guard continues at the deopt stub of the instruction's own frame state (tier 0
resumes *before* the instruction, which has had no effect yet), so no region analysis is
needed. Operations without a stencil for their types run by calling the Python function they
stand for (`pyop`); anything the frame cannot represent raises Unsupported.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...errors import Unsupported
from ...ir.nodes import Block, FrameState, Function, Instr, Value
from ...ir.ops import Op
from ...ir.verifier import dominators, predecessors
from ...types.lattice import BOOL, FLOAT, INT, ArrayT, Scalar, TupleT, Type
from . import frame as fr
from .emit import Label
from .templates import ARRAY_SLOTS, INT_NOT, LIBM_1

OUT, POLL, OWN, DESC, DEOPTING, FIRST = 0, 8, 16, 24, 32, 40
_ARITH = {Op.ADD: "add", Op.SUB: "sub", Op.MUL: "mul", Op.TRUEDIV: "truediv",
          Op.FLOORDIV: "floordiv", Op.MOD: "mod", Op.POW: "pow", Op.LSHIFT: "lshift",
          Op.RSHIFT: "rshift", Op.BITAND: "bitand", Op.BITOR: "bitor", Op.BITXOR: "bitxor"}
_CMP = {Op.LT: "lt", Op.LE: "le", Op.GT: "gt", Op.GE: "ge", Op.EQ: "eq", Op.NE: "ne"}
# the same keyed by the op's string (hashing an Enum member is a Python-level call)
_ARITH_V = {op.value: name for op, name in _ARITH.items()}
_CMP_V = {op.value: name for op, name in _CMP.items()}
_INTK = frozenset({"int", "bool"})
_FLOATK = frozenset({"float", "npf64", "union"})
_NUMK = _INTK | _FLOATK
_FLOAT_OPS = frozenset({"add", "sub", "mul", "truediv", "floordiv", "mod", "pow"})
# results written by moves (several stencils): never computed into a parameter's slots
_NO_SHARE = frozenset({Op.CONST, Op.MAKE_TUPLE, Op.TUPLE_GET, Op.GETATTR, Op.LEN, Op.POS,
                       Op.CALL_BUILTIN, Op.CALL_JIT, Op.TRUTH, Op.GETITEM})
_INTLIKE = "i"


_KIND: dict[int, str] = {}
_KEEP: list = []             # the types _KIND and _WIDTH are keyed by (by id: hashing a
_WIDTH: dict[int, int] = {}  # frozen dataclass costs a Python call each time)


def width(t: Type) -> int:
    """Number of frame slots of a value of type t."""
    n = _WIDTH.get(id(t))
    if n is None:
        n = _WIDTH[id(t)] = len(fr.slots(t))
        _KEEP.append(t)
    return n


def kind(t: Type) -> str:
    """A type's class for selection, cached: int, bool, float, npf64, npf32, npint, union,
    array, tuple, none or other."""
    k = _KIND.get(id(t))
    if k is None:
        if t == INT:
            k = "int"
        elif t == BOOL:
            k = "bool"
        elif t == FLOAT:
            k = "float"
        elif fr.is_np_float(t):
            k = "npf64" if t.py.__name__ == "float64" else "npf32"
        elif fr.is_np_int(t):
            k = "npint"
        elif fr.float_union(t):
            k = "union"
        elif isinstance(t, ArrayT):
            k = "array"
        elif isinstance(t, TupleT):
            k = "tuple"
        elif t == Scalar(type(None)):
            k = "none"
        else:
            k = "other"
        _KIND[id(t)] = k
        _KEEP.append(t)
    return k


def _is_int(t: Type) -> bool:
    return kind(t) in ("int", "bool")


def _is_float(t: Type) -> bool:
    return kind(t) in ("float", "npf64", "union")


def _vid(v: Value) -> int:
    return v.id


class States:
    """ir.liveness.FrameStates — the same frame states, numbered in the order they are asked
    for — computed with bit sets (a Python int per set, one bit per value in id order) by a
    worklist over per-block use/def sets, and each block's live sets in one backward pass."""

    def __init__(self, fn: Function):
        self.fn = fn
        vals = sorted(fn.values(), key=_vid)
        self.vals = vals
        bit = self.bit = {v: 1 << i for i, v in enumerate(vals)}
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
        self.out = out
        self.states = _LazyStates(self)
        self._index: dict[tuple[int, int], int] = {}
        self._before: dict[Block, list] = {}

    def before(self, block: Block) -> list[int]:
        """The live set (bits) before each instruction of block."""
        bf = self._before.get(block)
        if bf is None:
            bit = self.bit
            live = self.out[block]
            bf = self._before[block] = [0] * len(block.instrs)
            for i in range(len(block.instrs) - 1, -1, -1):
                ins = block.instrs[i]
                if ins.result is not None:
                    live &= ~bit[ins.result]
                for x in ins.args:
                    live |= bit[x]
                bf[i] = live
        return bf

    def values(self, bits: int) -> tuple[Value, ...]:
        vals, out = self.vals, []
        while bits:
            low = bits & -bits
            out.append(vals[low.bit_length() - 1])
            bits ^= low
        return tuple(out)

    def at(self, block: Block, index: int) -> int:
        key = (block.id, index)
        n = self._index.get(key)
        if n is None:
            n = self._index[key] = len(self.states.wanted)
            self.states.wanted.append((block, index))
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
            fs = self.built[n] = FrameState(block.id, index, o.values(o.before(block)[index]))
        return fs


class Selection:
    """The pieces of one function, with what its deopt and Python-call hooks need."""

    def __init__(self, fn: Function, ret_type: Type | None):
        self.fn = fn
        self.ret_type = ret_type
        self.fs = States(fn)
        # pieces 0 and 1 are the function's entry and core thunks (code.py)
        self.pieces: list[tuple[str, dict]] = [("", {}), ("", {})]
        self.offset: dict[Value, int] = {}
        self.pow2: dict[Value, int] = {}       # int constants 2**k -> k
        self.consts: list[int] = []            # the constant table (i64 bit patterns)
        self.block_label: dict[Block, int] = {}
        self.fixups: list[tuple[dict, str, object]] = []   # (holes, hole, block | ('fs', n))
        self.deopt_stubs: dict[int, int] = {}
        self.overrides: list[tuple[Value, int]] = []   # call results: (value, object slot)
        self.pyops: list[tuple[Instr, int]] = []   # (instr, frame state)
        self.calls: list[tuple[Instr, tuple]] = []
        self.call_cells: list[tuple[dict, object, tuple]] = []

    # -- slots -----------------------------------------------------------------------------
    def allocate(self) -> int:
        at = FIRST
        for p in self.fn.entry.params:
            self.offset[p] = at
            at += 8 * width(p.type)
        self.nargs = (at - FIRST) // 8
        const_start = at
        for b in self.fn.blocks:
            for ins in b.instrs:
                if ins.op is Op.CONST and ins.result is not None:
                    self.offset[ins.result] = at
                    c = ins.attr
                    if type(c) is int and 0 < c < 2**62 and c & (c - 1) == 0:
                        self.pow2[ins.result] = c.bit_length() - 1
                    n = width(ins.result.type)
                    self.consts += _const_words(ins.attr, ins.result.type)
                    at += 8 * n
        if any(kind(v.type) == "union" for v in self.fn.values()):
            self.zero, self.one = at, at + 8         # union tags of known members
            self.consts += [0, 1]
            at += 16
        self.nconsts = (at - const_start) // 8
        alias, share = self.coalesce()
        for v in self.fn.values():
            if v not in self.offset and v not in alias and v not in share:
                self.offset[v] = at
                at += 8 * width(v.type)
        for v, p in share.items():                  # an edge argument in its parameter's slots
            self.offset[v] = self.offset[p]
        for v in alias:                             # the same value under another name
            x = v
            while x in alias:
                x = alias[x]
            self.offset[v] = self.offset[x]
        self.scratch = at                           # call arguments, parallel moves
        return at

    def coalesce(self) -> tuple[dict, dict]:
        """Values that need no slots of their own.

        alias: `truth` of a bool is that bool. share: an edge argument computed in the edge's
        block (or a straight line of blocks ending there), used by nothing but that edge, whose target parameter is dead from the
        argument's definition on, is computed straight into the parameter's slots (so a loop's
        `i = i + 1` needs no move on the back edge). Only for one-stencil results of at most
        two slots (the stencil reads its operands before it writes its result)."""
        alias: dict[Value, Value] = {}
        share: dict[Value, Value] = {}
        uses: dict[Value, int] = {}
        for b in self.fn.blocks:
            for ins in b.instrs:
                for a in ins.args:
                    uses[a] = uses.get(a, 0) + 1
                for e in ins.targets:
                    for a in e.args:
                        uses[a] = uses.get(a, 0) + 1
        self.uses = uses
        taken: set = set()
        defs: dict[Value, tuple[Block, int]] = {}
        for b in self.fn.blocks:
            for i, ins in enumerate(b.instrs):
                r = ins.result
                if r is None:
                    continue
                if ins.op is Op.TRUTH and kind(ins.args[0].type) == "bool" and r.type == BOOL:
                    alias[r] = ins.args[0]
                elif ins.op not in _NO_SHARE and width(r.type) <= 2:
                    defs[r] = (b, i)
        if not defs:
            return alias, share
        preds = predecessors(self.fn)
        for b in self.fn.blocks:
            term = b.terminator
            if len(term.targets) != 1:
                continue
            e = term.targets[0]
            t = e.block
            if t is b or not e.args:
                continue
            # the straight line of blocks ending in b: the only way from a definition in it
            # to this edge, so no other value of the parameter's slot can come in between
            chain = [b]
            q = b
            while len(chain) < 8:
                ps = preds.get(q, ())
                if len(ps) != 1:
                    break
                pq = ps[0]
                if pq is t or pq in chain or pq.terminator.op is not Op.JUMP \
                        or pq.terminator.targets[0].args:
                    break
                chain.append(pq)
                q = pq
            if t in chain:
                continue
            for a, p in zip(e.args, t.params):
                d = defs.get(a)
                if d is None or d[0] not in chain or uses.get(a) != 1 or a.type != p.type \
                        or p in taken or p in self.offset:
                    continue
                blk, i = d
                if self.fs.before(blk)[i + 1] & self.fs.bit[p]:
                    continue                        # the parameter is still needed
                share[a] = p
                taken.add(p)
        return alias, share

    # -- pieces ----------------------------------------------------------------------------
    def add(self, name: str, **holes) -> dict:
        self.pieces.append((name, holes))
        return holes

    def deopt(self, holes: dict, b: Block, i: int, hole: str = "DEOPT") -> int:
        n = self.fs.at(b, i)
        self.fixups.append((holes, hole, ("fs", n)))
        return n

    def mov(self, src: int, dst: int, n: int) -> None:
        for k in range(n):
            if src + 8 * k != dst + 8 * k:
                self.add("mov", A=src + 8 * k, C=dst + 8 * k)

    def select(self) -> None:
        fn = self.fn
        size = self.allocate()
        order = _layout(fn)
        dom = dominators(fn)
        uses = self.uses
        self.max_scratch = 0
        for pos, b in enumerate(order):
            self.block_label[b] = len(self.pieces)
            nxt = order[pos + 1] if pos + 1 < len(order) else None
            instrs = b.instrs
            for i, ins in enumerate(instrs):
                if ins.op is Op.BRANCH:
                    self.branch(b, i, ins, nxt, dom, fused=None)
                elif ins.op is Op.JUMP:
                    self.edge(b, ins.targets[0], nxt, dom)
                elif ins.op is Op.RETURN:
                    self.ret(ins)
                elif ins.op is Op.RAISE:
                    h = self.add("jump")
                    self.deopt(h, b, i, "NEXT")
                elif (ins.op in _CMP and instrs[-1].op is Op.BRANCH
                      and self.fused_cmp(ins) is not None and uses.get(ins.result) == 1
                      and (i + 2 == len(instrs) and instrs[-1].args[0] is ins.result
                           or i + 3 == len(instrs) and instrs[-2].op is Op.TRUTH
                           and instrs[-2].args[0] is ins.result
                           and instrs[-1].args[0] is instrs[-2].result
                           and uses.get(instrs[-2].result) == 1)):
                    # compare (and truth of it) then branch: one stencil
                    self.branch(b, len(instrs) - 1, instrs[-1], nxt, dom, fused=ins)
                    break
                elif ins.op is Op.TRUTH and ins.result is not None and \
                        self.offset[ins.result] == self.offset[ins.args[0]]:
                    continue                        # truth of a bool: the bool itself
                else:
                    self.instr(b, i, ins)
        self.frame_bytes = (size + 8 * self.max_scratch + 15) & ~15

    def finish(self) -> None:
        """Append the deopt stubs and resolve labels."""
        for holes, hole, target in self.fixups:
            if isinstance(target, tuple):
                n = target[1]
                if n not in self.deopt_stubs:
                    self.deopt_stubs[n] = len(self.pieces)
                    self.pieces.append(("deopt_site", {"K2": n}))
                holes[hole] = Label(self.deopt_stubs[n])
            else:
                holes[hole] = Label(self.block_label[target])

    # -- control flow ------------------------------------------------------------------------
    def edge(self, src: Block, e, nxt: Block | None, dom) -> None:
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
        if target in dom[src]:
            self.add("poll")                          # a loop's back edge
        if target is not nxt:
            h = self.add("jump")
            self.fixups.append((h, "NEXT", target))

    def move_value(self, off: int, t: Type, p: Value) -> None:
        dst = self.offset[p]
        if t == p.type:
            self.mov(off, dst, width(t))
        elif fr.float_union(p.type) and _is_float(t):
            self.mov(off, dst, 1)
            self.add("mov", A=self.one if fr.is_np_float(t) else self.zero, C=dst + 8)
        elif isinstance(p.type, ArrayT) and isinstance(t, ArrayT):
            self.mov(off, dst, ARRAY_SLOTS)
        elif isinstance(p.type, TupleT) and isinstance(t, TupleT):
            for it, pt in zip(t.items, p.type.items):
                n = width(pt)
                if width(it) != n and not (fr.float_union(pt) and _is_float(it)):
                    raise Unsupported(f"a {t} passed where {p.type} is expected")
                if it == pt or width(it) == n:
                    self.mov(off, dst, n)
                else:
                    self.mov(off, dst, 1)
                    self.add("mov", A=self.one if fr.is_np_float(it) else self.zero, C=dst + 8)
                off += 8 * width(it)
                dst += 8 * n
        else:
            raise Unsupported(f"a {t} passed where {p.type} is expected")

    def branch(self, b: Block, i: int, ins: Instr, nxt, dom, fused: Instr | None) -> None:
        """A (fused compare-and-) branch. Its final jump is to JF, dropped when JF's code
        follows: so the condition is inverted when that makes the false side the one laid
        out next (an edge's own moves, or the next block)."""
        t_edge, f_edge = ins.targets

        def complex_(e):
            return bool(e.args) or e.block in dom[b]
        invert = (complex_(t_edge) and not complex_(f_edge)
                  or not complex_(t_edge) and not complex_(f_edge) and t_edge.block is nxt
                  and f_edge.block is not nxt)
        if invert:
            t_edge, f_edge = f_edge, t_edge
        if fused is not None:
            name, a, c = self.fused_cmp(fused)
            if invert:
                op, ty = name.split("_")
                name = f"{INT_NOT[op]}_ii" if ty == "ii" else f"not_{op}_ff"
            h = self.add(f"br_{name}", A=a, B=c)
        else:
            h = self.add("br_not_b" if invert else "br_b", A=self.offset[ins.args[0]])
        for hole, e in (("JF", f_edge), ("JT", t_edge)):
            if complex_(e):
                # an edge with moves (or a back edge): its own pieces after the branch
                # (which never falls through), ending in a jump to the target
                start = len(self.pieces)
                self.edge(b, e, None, dom)
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
        n = width(v.type)
        if n > 16:
            raise Unsupported("a result of more than 16 slots")
        off = self.offset[v]
        kinds = fr.slots(v.type)
        if kinds == ("i",) or kinds == ("f",):
            self.add("ret1", A=off)
            return
        for k, sk in enumerate(kinds):
            # an array's object: a new reference for the caller (the entry returns it)
            self.add("ret_copy_ref" if sk == "o" else "ret_copy", A=off + 8 * k, E=8 * k)
        self.add("ret")

    def instr(self, b: Block, i: int, ins: Instr) -> None:
        op = ins.op
        r = ins.result
        args = ins.args
        ts = [a.type for a in args]
        o = self.offset
        if op is Op.CONST or op is Op.GUARD_INBOUNDS:
            return              # (baseline code checks every access itself)
        v = op._value_
        base = _ARITH_V.get(v)
        if base is not None and len(args) == 2:
            x, y = args
            kr = kind(r.type)
            name = self.arith(base, kind(x.type), kind(y.type), kr)
            if name in ("floordiv_ii", "mod_ii"):
                k = self.pow2.get(y)
                if k is not None:              # by a constant 2**k: a shift or a mask
                    if name == "floordiv_ii":
                        self.add("floordiv_pow2", A=o[x], C=o[r], K=k)
                    else:
                        self.add("mod_pow2", A=o[x], C=o[r], K=(1 << k) - 1)
                    return
            if name is not None:
                if name[-1] in "pn" and name[-3:-1] == "ff":
                    a, c = self.as_double(x, b, i), self.as_double(y, b, i)
                else:
                    a, c = o[x], o[y]
                h = self.add(name, A=a, B=c, C=o[r])
                self.deopt(h, b, i)
                if kr == "union":
                    self.add("tag_or", TA=self.tag(x), TB=self.tag(y), TC=o[r] + 8)
                return
        elif v in _CMP_V:
            x, y = args
            if _is_int(x.type) and _is_int(y.type) and _is_int(r.type):
                self.add(f"{_CMP[op]}_ii", A=o[x], B=o[y], C=o[r])
                return
            if (_is_float(x.type) or _is_int(x.type)) and (_is_float(y.type) or _is_int(y.type)) \
                    and (r.type == BOOL or fr.is_np_int(r.type)):
                a, c = self.exact_double(x, b, i), self.exact_double(y, b, i)
                self.add(f"{_CMP[op]}_ff", A=a, B=c, C=o[r])
                return
        elif op in (Op.NEG, Op.POS, Op.INVERT, Op.NOT, Op.TRUTH):
            (x,) = args
            t = x.type
            if op is Op.POS and t == r.type:
                self.mov(o[x], o[r], width(t))
                return
            if _is_int(t) or fr.is_np_int(t) and op in (Op.NOT, Op.TRUTH):
                name = {Op.NEG: "neg_i", Op.INVERT: "invert_i", Op.NOT: "not_i",
                        Op.TRUTH: "truth_i"}.get(op)
                if name and (op in (Op.NOT, Op.TRUTH) or t == INT and r.type == INT):
                    h = self.add(name, A=o[x], C=o[r])
                    self.deopt(h, b, i)
                    return
            if t == FLOAT or fr.is_np_float(t) and op in (Op.NOT, Op.TRUTH) \
                    or fr.float_union(t) and op in (Op.NOT, Op.TRUTH):
                name = {Op.NEG: "neg_f", Op.NOT: "not_f", Op.TRUTH: "truth_f"}.get(op)
                if name:
                    self.add(name, A=o[x], C=o[r])
                    return
        elif op is Op.RANGE_LEN:
            if all(t == INT for t in ts):
                h = self.add("range_len", A=o[args[0]], B=o[args[1]], D=o[args[2]], C=o[r])
                self.deopt(h, b, i)
                return
        elif op is Op.RANGE_ITEM:
            if all(_is_int(t) for t in ts):
                self.add("range_item", A=o[args[0]], D=o[args[2]], B=o[args[3]], C=o[r])
                return
        elif op is Op.GUARD_RANGE:
            lo, hi = ins.attr
            if _is_int(ts[0]):
                h = self.add("guard_range", A=o[args[0]], C=o[r], K=lo, K2=hi)
                self.deopt(h, b, i)
                return
        elif op is Op.GETITEM:
            if self.getitem(b, i, ins):
                return
        elif op is Op.SETITEM:
            if self.setitem(b, i, ins):
                return
        elif op is Op.LEN and isinstance(ts[0], ArrayT):
            self.add("mov", A=o[args[0]] + 16, C=o[r])
            return
        elif op is Op.GETATTR and isinstance(ts[0], ArrayT) and ins.attr == "shape":
            self.mov(o[args[0]] + 16, o[r], ts[0].ndim)
            return
        elif op is Op.MAKE_TUPLE:
            at = o[r]
            for a, it in zip(args, r.type.items):
                if a.type != it:
                    break
                self.mov(o[a], at, width(it))
                at += 8 * width(it)
            else:
                return
        elif op is Op.TUPLE_GET:
            k = ins.attr[0]
            items = ts[0].items
            if r.type == items[k]:
                at = o[args[0]] + 8 * sum(width(t) for t in items[:k])
                self.mov(at, o[r], width(r.type))
                return
        elif op is Op.CALL_MATH:
            if self.math(b, i, ins):
                return
        elif op is Op.CALL_BUILTIN:
            if self.builtin(b, i, ins):
                return
        elif op is Op.CALL_JIT:
            if self.call_jit(b, i, ins):
                return
        self.pyop(b, i, ins)

    def tag(self, v: Value) -> int:
        if fr.float_union(v.type):
            return self.offset[v] + 8
        return self.one if fr.is_np_float(v.type) else self.zero

    def arith(self, base: str, ka: str, kb: str, kr: str) -> str | None:
        """The stencil of a binary arithmetic op for operand and result kinds, or None."""
        if ka in _INTK and kb in _INTK:
            if kr == "int" or base == "truediv" and kr == "float":
                return f"{base}_ii"
            return None
        if base in _FLOAT_OPS and ka in _NUMK and kb in _NUMK and kr in _FLOATK:
            numpy = "npf64" in (ka, kb, kr) or "union" in (ka, kb, kr)
            if numpy and base == "pow":
                return None
            if kr == "union" and ka != "union" and kb != "union":
                return None
            return f"{base}_ff{'n' if numpy else 'p'}"
        return None

    def as_double(self, v: Value, b: Block, i: int) -> int:
        """Slot of v as a double: ints converted (exactly as Python's int -> float)."""
        if _is_int(v.type):
            return self.convert(v, "i2f")
        return self.offset[v]

    def exact_double(self, v: Value, b: Block, i: int) -> int:
        """For comparisons Python compares int and float exactly: deopt beyond 2**53."""
        if _is_int(v.type) or fr.is_np_int(v.type):
            at = self.scratch + 8 * self.max_scratch
            self.max_scratch += 1
            h = self.add("i2f_exact", A=self.offset[v], C=at)
            self.deopt(h, b, i)
            return at
        return self.offset[v]

    def convert(self, v: Value, name: str) -> int:
        at = self.scratch + 8 * self.max_scratch
        self.max_scratch += 1
        self.add(name, A=self.offset[v], C=at)
        return at

    def element(self, ins: Instr):
        arr, idx = ins.args[0], ins.args[1:]
        t = arr.type
        if not isinstance(t, ArrayT) or t.dtype not in fr.ELEM_KINDS:
            return None
        if ins.op is Op.SETITEM:
            idx = idx[:-1]
        if len(idx) != t.ndim or not all(_is_int(x.type) or fr.is_np_int(x.type)
                                         and x.type.py.__name__ != "uint64" for x in idx):
            return None
        holes = {"A": self.offset[arr]}
        for hole, x in zip(("B", "D", "E"), idx):
            holes[hole] = self.offset[x]
        return t, fr.ELEM_KINDS[t.dtype], holes

    def getitem(self, b: Block, i: int, ins: Instr) -> bool:
        if isinstance(ins.args[0].type, TupleT) and isinstance(ins.attr, int):
            items = ins.args[0].type.items
            k = ins.attr if ins.attr >= 0 else ins.attr + len(items)
            if 0 <= k < len(items) and items[k] == ins.result.type:
                at = self.offset[ins.args[0]] + 8 * sum(width(t) for t in items[:k])
                self.mov(at, self.offset[ins.result], width(items[k]))
                return True
            return False
        e = self.element(ins)
        if e is None:
            return False
        t, kind, holes = e
        h = self.add(f"getitem{t.ndim}_{kind}", C=self.offset[ins.result], **holes)
        self.deopt(h, b, i)
        return True

    def setitem(self, b: Block, i: int, ins: Instr) -> bool:
        e = self.element(ins)
        if e is None:
            return False
        t, kind, holes = e
        v = ins.args[-1]
        vt = v.type
        if kind == "f64" and (vt == FLOAT or fr.float_union(vt)
                              or fr.is_np_float(vt) and vt.py.__name__ == "float64"):
            name = "f64"
        elif kind == "f64" and _is_int(vt):
            name = "f64_from_int"
        elif kind not in ("f64", "f32", "b1") and vt == INT:
            name = kind
        elif kind == "b1" and vt == BOOL:
            name = kind
        else:
            return False
        h = self.add(f"setitem{t.ndim}_{name}", C=self.offset[v], **holes)
        self.deopt(h, b, i)
        return True

    def math(self, b: Block, i: int, ins: Instr) -> bool:
        name, args, r = ins.attr, ins.args, ins.result
        if not all(_is_float(a.type) and not fr.float_union(a.type) or _is_int(a.type)
                   for a in args):
            if not (len(args) == 1 and fr.float_union(args[0].type)):
                return False
        xs = [self.as_double(a, b, i) for a in args]
        table1 = {"sqrt": "sqrt_f", "fabs": "fabs_f", "floor": "floor_f2i", "ceil": "ceil_f2i",
                  "trunc": "f2i", "isnan": "isnan_f", "isinf": "isinf_f",
                  "isfinite": "isfinite_f", **{n: f"m_{n}" for n in LIBM_1}}
        if len(xs) == 1 and name in table1:
            st = table1[name]
            if st.endswith("f2i") and r.type != INT or st.startswith("is") and r.type != BOOL:
                return False
            if name in ("floor", "ceil", "trunc") and _is_int(args[0].type):
                self.mov(self.offset[args[0]], self.offset[r], 1)
                return True
            h = self.add(st, A=xs[0], C=self.offset[r])
            self.deopt(h, b, i)
            return True
        if len(xs) == 2 and name in ("atan2", "fmod") and r.type == FLOAT:
            h = self.add(f"m_{name}", A=xs[0], B=xs[1], C=self.offset[r])
            self.deopt(h, b, i)
            return True
        return False

    def builtin(self, b: Block, i: int, ins: Instr) -> bool:
        name, args, r = ins.attr, ins.args, ins.result
        ts = [a.type for a in args]
        o = self.offset
        if name == "abs" and len(args) == 1:
            if ts[0] == INT and r.type == INT:
                h = self.add("abs_i", A=o[args[0]], C=o[r])
                self.deopt(h, b, i)
                return True
            if ts[0] == r.type and (ts[0] == FLOAT or fr.is_np_float(ts[0])
                                    and ts[0].py.__name__ == "float64"):
                self.add("abs_f", A=o[args[0]], C=o[r])
                return True
        if name in ("min", "max") and len(args) == 2 and ts[0] == ts[1] == r.type:
            if ts[0] == INT:
                self.add(f"{name}_ii", A=o[args[0]], B=o[args[1]], C=o[r])
                return True
            if ts[0] == FLOAT:
                self.add(f"{name}_ff", A=o[args[0]], B=o[args[1]], C=o[r])
                return True
        if name == "float" and len(args) == 1 and r.type == FLOAT:
            if _is_int(ts[0]):
                self.add("i2f", A=o[args[0]], C=o[r])
                return True
            if ts[0] == FLOAT:
                self.mov(o[args[0]], o[r], 1)
                return True
        if name == "int" and len(args) == 1 and r.type == INT:
            if _is_int(ts[0]) or fr.is_np_int(ts[0]):
                self.mov(o[args[0]], o[r], 1)
                return True
            if ts[0] == FLOAT or fr.is_np_float(ts[0]):
                h = self.add("f2i", A=o[args[0]], C=o[r])
                self.deopt(h, b, i)
                return True
        if name == "len" and len(args) == 1 and isinstance(ts[0], ArrayT):
            self.add("mov", A=o[args[0]] + 16, C=o[r])
            return True
        return False

    def call_jit(self, b: Block, i: int, ins: Instr) -> bool:
        """A call of another jitted function's baseline core through its cell: the arguments
        are copied to this frame's scratch area, the result lands in the call's slots. A
        callee returning arrays returns new references: that call goes through Python
        (pyop), which keeps them for the length of this call."""
        if "o" in fr.slots(ins.result.type):
            return False
        key = tuple(a.type for a in ins.args)
        at = self.scratch
        for a in ins.args:
            self.mov(self.offset[a], at, width(a.type))
            at += 8 * width(a.type)
        # the callee's out area: its result, or the object it returns when it deoptimised
        nres = width(ins.result.type)
        self.max_scratch = max(self.max_scratch, (at - self.scratch) // 8 + max(nres, 1))
        h = self.add("call_jit", A=self.scratch, C=at)
        self.calls.append((ins, key))
        self.call_cells.append((h, ins.attr, key))
        self.deopt(h, b, i)
        # its own stub even when a guard shares the frame state: this one also hands over
        # the callee's result object (numbered from 1 in the stub's high bits)
        n = self.fs.at(b, i + 1)
        self.overrides.append((ins.result, at))
        self.fixups.append((h, "DEOPT2", ("fs", n | len(self.overrides) << 32)))
        self.mov(at, self.offset[ins.result], nres)
        return True

    def pyop(self, b: Block, i: int, ins: Instr) -> None:
        from ..llvm.calls import python_function
        if python_function(ins) is None:
            raise Unsupported(f"the operation {ins.op.value} (line {ins.line}) for "
                              f"{', '.join(str(a.type) for a in ins.args)}")
        for v in ins.args:
            fr.slots(v.type)
        h = self.add("pyop")
        h["_pyop"] = len(self.pyops)
        n = self.deopt(h, b, i)
        self.pyops.append((ins, n))


def _layout(fn: Function) -> list[Block]:
    """Blocks in a reverse postorder that puts each block's first successor (a branch's true
    side: a loop's body, an if's then-part) right after it, so that it falls through."""
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


def _const_words(c, t: Type) -> list[int]:
    import struct
    if isinstance(t, Scalar):
        if t.py is float or fr.is_np_float(t):
            return [struct.unpack("<q", struct.pack("<d", float(c)))[0]]
        if t.py is type(None):
            return []
        v = int(c)
        if not -2**63 <= v < 2**63:
            raise Unsupported(f"the constant {c!r} (beyond 64 bits)")
        return [v]
    raise Unsupported(f"a constant of type {t}")
