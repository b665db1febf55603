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

from ...errors import Unsupported
from ...ir.liveness import FrameStates
from ...ir.nodes import Block, Function, Instr, Value
from ...ir.ops import Op
from ...ir.verifier import dominators, reverse_postorder
from ...types.lattice import BOOL, FLOAT, INT, ArrayT, Scalar, TupleT, Type, UnionT
from . import frame as fr
from .emit import Data, Label
from .templates import ARRAY_SLOTS, ELEMS, FLOAT_CMP, INT_CMP, LIBM_1

OUT, POLL, OWN, FIRST = 0, 8, 16, 24
_ARITH = {Op.ADD: "add", Op.SUB: "sub", Op.MUL: "mul", Op.TRUEDIV: "truediv",
          Op.FLOORDIV: "floordiv", Op.MOD: "mod", Op.POW: "pow", Op.LSHIFT: "lshift",
          Op.RSHIFT: "rshift", Op.BITAND: "bitand", Op.BITOR: "bitor", Op.BITXOR: "bitxor"}
_CMP = {Op.LT: "lt", Op.LE: "le", Op.GT: "gt", Op.GE: "ge", Op.EQ: "eq", Op.NE: "ne"}
_INTLIKE = "i"


def _is_int(t: Type) -> bool:
    return isinstance(t, Scalar) and (t.py is int or t.py is bool)


def _is_float(t: Type) -> bool:
    return t == FLOAT or fr.is_np_float(t) and t.py.__name__ == "float64" or fr.float_union(t)


class Selection:
    """The pieces of one function, with what its deopt and Python-call hooks need."""

    def __init__(self, fn: Function, ret_type: Type | None):
        self.fn = fn
        self.ret_type = ret_type
        self.fs = FrameStates(fn)
        self.pieces: list[tuple[str, dict]] = []
        self.offset: dict[Value, int] = {}
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
            at += 8 * len(fr.slots(p.type))
        self.nargs = (at - FIRST) // 8
        const_start = at
        for b in self.fn.blocks:
            for ins in b.instrs:
                if ins.op is Op.CONST and ins.result is not None:
                    self.offset[ins.result] = at
                    n = len(fr.slots(ins.result.type))
                    self.consts += _const_words(ins.attr, ins.result.type)
                    at += 8 * n
        self.zero, self.one = at, at + 8             # union tags of known members
        self.consts += [0, 1]
        at += 16
        self.nconsts = (at - const_start) // 8
        for v in self.fn.values():
            if v not in self.offset:
                self.offset[v] = at
                at += 8 * len(fr.slots(v.type))
        self.scratch = at                           # call arguments, parallel moves
        return at

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
        order = reverse_postorder(fn)
        dom = dominators(fn)
        uses: dict[Value, int] = {}
        for b in fn.blocks:
            for ins in b.instrs:
                for a in ins.args:
                    uses[a] = uses.get(a, 0) + 1
                for e in ins.targets:
                    for a in e.args:
                        uses[a] = uses.get(a, 0) + 1
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
                elif (ins.op in _CMP and i + 2 == len(instrs) and instrs[-1].op is Op.BRANCH
                      and instrs[-1].args[0] is ins.result and uses.get(ins.result) == 1
                      and self.fused_cmp(ins) is not None):
                    self.branch(b, i + 1, instrs[-1], nxt, dom, fused=ins)
                    break
                else:
                    self.instr(b, i, ins)
        self.frame_bytes = (size + 8 * self.max_scratch + 15) & ~15

    def finish(self, deopt_fn: int) -> None:
        """Append the deopt stubs and resolve labels (called with the deopt callable)."""
        for holes, hole, target in self.fixups:
            if isinstance(target, tuple):
                n = target[1]
                if n not in self.deopt_stubs:
                    self.deopt_stubs[n] = len(self.pieces)
                    self.pieces.append(("deopt", {"K": deopt_fn, "K2": n}))
                holes[hole] = Label(self.deopt_stubs[n])
            else:
                holes[hole] = Label(self.block_label[target])

    # -- control flow ------------------------------------------------------------------------
    def edge(self, src: Block, e, nxt: Block | None, dom) -> None:
        """Moves of the edge's arguments into the target's parameters, then the jump."""
        target = e.block
        params = target.params
        if params:
            srcs = [(self.offset[a], len(fr.slots(a.type)), a.type) for a in e.args]
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
            self.mov(off, dst, len(fr.slots(t)))
        elif fr.float_union(p.type) and _is_float(t):
            self.mov(off, dst, 1)
            self.add("mov", A=self.one if fr.is_np_float(t) else self.zero, C=dst + 8)
        elif isinstance(p.type, ArrayT) and isinstance(t, ArrayT):
            self.mov(off, dst, ARRAY_SLOTS)
        elif isinstance(p.type, TupleT) and isinstance(t, TupleT):
            for it, pt in zip(t.items, p.type.items):
                n = len(fr.slots(pt))
                if len(fr.slots(it)) != n and not (fr.float_union(pt) and _is_float(it)):
                    raise Unsupported(f"a {t} passed where {p.type} is expected")
                if it == pt or len(fr.slots(it)) == n:
                    self.mov(off, dst, n)
                else:
                    self.mov(off, dst, 1)
                    self.add("mov", A=self.one if fr.is_np_float(it) else self.zero, C=dst + 8)
                off += 8 * len(fr.slots(it))
                dst += 8 * n
        else:
            raise Unsupported(f"a {t} passed where {p.type} is expected")

    def branch(self, b: Block, i: int, ins: Instr, nxt, dom, fused: Instr | None) -> None:
        t_edge, f_edge = ins.targets
        if fused is not None:
            name, a, c = self.fused_cmp(fused)
            h = self.add(f"br_{name}", A=a, B=c)
        else:
            h = self.add("br_b", A=self.offset[ins.args[0]])
        for hole, e in (("JT", t_edge), ("JF", f_edge)):
            if e.args or e.block in dom[b]:
                # an edge with moves (or a back edge): its own pieces, right after the branch
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
        return None

    # -- instructions ------------------------------------------------------------------------
    def ret(self, ins: Instr) -> None:
        v = ins.args[0]
        n = len(fr.slots(v.type))
        if n > 16:
            raise Unsupported("a result of more than 16 slots")
        off = self.offset[v]
        for k in range(n):
            self.add("ret_copy", A=off + 8 * k, E=8 * k)
        self.add("ret")

    def instr(self, b: Block, i: int, ins: Instr) -> None:
        op = ins.op
        r = ins.result
        args = ins.args
        ts = [a.type for a in args]
        o = self.offset
        if op is Op.CONST:
            return
        if op in _ARITH and len(args) == 2:
            name = self.arith(op, ts, r.type)
            if name is not None:
                a, c = (self.as_double(x, b, i) if name.endswith(("ffp", "ffn")) else o[x]
                        for x in args)
                h = self.add(name, A=a, B=c, C=o[r])
                self.deopt(h, b, i)
                if fr.float_union(r.type):
                    self.add("tag_or", TA=self.tag(args[0]), TB=self.tag(args[1]), TC=o[r] + 8)
                return
        elif op in _CMP:
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
                self.mov(o[x], o[r], len(fr.slots(t)))
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
                self.mov(o[a], at, len(fr.slots(it)))
                at += 8 * len(fr.slots(it))
            else:
                return
        elif op is Op.TUPLE_GET:
            k = ins.attr[0]
            items = ts[0].items
            if r.type == items[k]:
                at = o[args[0]] + 8 * sum(len(fr.slots(t)) for t in items[:k])
                self.mov(at, o[r], len(fr.slots(r.type)))
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

    def arith(self, op: Op, ts: list[Type], rt: Type) -> str | None:
        base = _ARITH[op]
        if all(_is_int(t) for t in ts) and rt == INT or op is Op.TRUEDIV and rt == FLOAT \
                and all(_is_int(t) for t in ts):
            if base == "pow" and rt != INT:
                return None
            return f"{base}_ii"
        if op in (Op.ADD, Op.SUB, Op.MUL, Op.TRUEDIV, Op.FLOORDIV, Op.MOD, Op.POW) and \
                all(_is_float(t) or t == INT or t == BOOL for t in ts) and _is_float(rt):
            numpy = any(fr.is_np_float(t) or fr.float_union(t) for t in ts + [rt])
            if numpy and op is Op.POW:
                return None
            if fr.float_union(rt) and not any(fr.float_union(t) for t in ts):
                return None
            if fr.is_np_float(rt) and rt.py.__name__ != "float64":
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
                at = self.offset[ins.args[0]] + 8 * sum(len(fr.slots(t)) for t in items[:k])
                self.mov(at, self.offset[ins.result], len(fr.slots(items[k])))
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
        are copied to this frame's scratch area, the result lands in the call's slots."""
        key = tuple(a.type for a in ins.args)
        at = self.scratch
        for a in ins.args:
            self.mov(self.offset[a], at, len(fr.slots(a.type)))
            at += 8 * len(fr.slots(a.type))
        # the callee's out area: its result, or the object it returns when it deoptimised
        nres = len(fr.slots(ins.result.type))
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
