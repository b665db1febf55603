"""Typed IR → LLVM IR → native code: the optimising tier.

Each specialisation becomes two functions in one LLVM module:

    i32 core(args..., ret* out, PyObject** obj_out)
        0: returned normally, result in *out
        1: a Python exception is set (raised by code tier 0 ran after a deopt, or a callee)
        2: deoptimised; the exact Python result object is in *obj_out
    PyObject* entry(self, args, nargsf, kwnames)      METH_FASTCALL-style vectorcall
        unboxes and type-checks the arguments, calls core, boxes the result; on any
        mismatch it calls self->fallback, so it never gives a wrong answer.

Every instruction that can leave the fast path has a frame state (`ir.liveness`). On a
failing guard, core hands the frame state's live values, raw, to a shared helper that boxes
them and calls the specialisation's resume function — tier-0 Python generated from the same
IR, starting before that instruction — and returns its result as status 2. Operations not
lowered natively call the Python function they stand for (status 2 on a surprising result
type, a deopt if it raises), so the native tier covers every typed program and stays exact.
"""

from __future__ import annotations

import ctypes
import functools
import itertools
import threading
from dataclasses import dataclass, field

from ...errors import Unsupported
from ...ir.liveness import FrameStates
from ...ir.nodes import Block, Function, Instr, Value
from ...ir.ops import BINARY_OPS, COMPARE_OPS, Op
from ...ir.verifier import dominators, reverse_postorder
from ...passes.ranges import I64, arith, within_i64
from ...types.lattice import BOOL, INT, Scalar, TupleT, Type, UnionT, members
from .. import nesting
from ..pure_callees import inline_body
from .arrays import ArrayOps
from .boxing import Boxing
from .calls import CallOps
from .chunks import ChunkOps
from .deopt import NOT_COUNTED, DeoptOps, ImpureLoop
from .helpers import HELPERS, NEEDS
from .inline import InlineOps, NotInlined
from .lltypes import kind, ll, union_members
from .mathfns import MathOps
from .scalar import ScalarOps, fconst
from .selects import SelectOps
from .unions import UnionOps

# Op's members bound once (see ir/ops.py: `Op.X` is slow on Python 3.11)
_ADD, _BRANCH, _CALL_BUILTIN, _CALL_JIT = Op.ADD, Op.BRANCH, Op.CALL_BUILTIN, Op.CALL_JIT
_CALL_MATH, _CONST, _GETATTR = Op.CALL_MATH, Op.CONST, Op.GETATTR
_CALL_UFUNC = Op.CALL_UFUNC
_GETITEM, _GT, _GUARD_INBOUNDS, _GUARD_RANGE = Op.GETITEM, Op.GT, Op.GUARD_INBOUNDS, Op.GUARD_RANGE
_INVERT, _IS, _IS_NOT, _JUMP, _LEN, _LT = Op.INVERT, Op.IS, Op.IS_NOT, Op.JUMP, Op.LEN, Op.LT
_MAKE_TUPLE, _MUL, _NEG, _NOT, _POS, _POW = Op.MAKE_TUPLE, Op.MUL, Op.NEG, Op.NOT, Op.POS, Op.POW
_RAISE, _RANGE_ITEM, _RANGE_LEN, _RETURN = Op.RAISE, Op.RANGE_ITEM, Op.RANGE_LEN, Op.RETURN
_SETITEM, _SUB, _TRUTH, _TUPLE_GET = Op.SETITEM, Op.SUB, Op.TRUTH, Op.TUPLE_GET

_counter = itertools.count()
_counter_lock = threading.Lock()


@dataclass(eq=False, repr=False)
class NativeCode:
    """A compiled specialisation: what the dispatcher needs to call it and to resume it."""

    entry_address: int
    core_address: int
    entry_callable: object
    frame_states: list
    llvm_text: str                  # the optimised IR (the generated IR is not kept)
    compile_seconds: float
    keepalive: list = field(default_factory=list)
    # what a caller's module needs to embed this core and inline it: function texts by
    # name (the core and the cores it embedded itself), declarations and helpers
    core_name: str = ""
    functions: dict = field(default_factory=dict)
    decls: set = field(default_factory=set)
    helpers: set = field(default_factory=set)

    @property
    def asm(self) -> str:
        from .engine import get_engine
        return get_engine().emit_assembly(self.llvm_text)


class _Module:
    """Declarations, helpers and function bodies of one LLVM module being generated."""

    def __init__(self):
        self.decls: set[str] = set()
        self.helpers: set[str] = set()
        self.functions: list[str] = []
        self.embedded: dict[int, str] = {}     # id(NativeCode) -> name of its core here

    def text(self) -> str:
        from .engine import ir_header
        parts = [ir_header()]
        parts += sorted(self.decls)
        parts += [HELPERS[h] for h in sorted(self.helpers)]
        parts += self.functions
        parts.append("attributes #0 = { nobuiltin }")
        return "\n".join(parts) + "\n"


class FunctionCodegen(DeoptOps, ChunkOps, SelectOps, CallOps, InlineOps, UnionOps, ScalarOps,
                      Boxing, ArrayOps, MathOps):
    """Generates the core function of one specialisation."""

    def __init__(self, mod: _Module, dispatcher, spec, name: str,
                 impure_loops: frozenset = frozenset(), no_inline: frozenset = frozenset()):
        self.mod, self.dispatcher, self.spec, self.name = mod, dispatcher, spec, name
        self.impure_loops = impure_loops      # loop headers found to call into Python
        self.fn: Function = spec.typed.fn
        # calls generated in place (backends/llvm/inline.py), but not those that failed to
        self.inlined: dict[Instr, Function] = {
            ins: body for b in self.fn.blocks for ins in b.instrs
            if ins.op is _CALL_JIT and ins not in no_inline
            and (body := inline_body(ins, dispatcher)) is not None}
        self.ret_type: Type | None = spec.typed.return_type
        self.fs = FrameStates(self.fn)
        self.lines: list[str] = []
        self.allocas: list[str] = []
        self.nests = True             # a core: it has a depth word (backends/nesting.py)
        self.tmp = itertools.count()
        self.labels = itertools.count()
        self.vals: dict[Value, str] = {}
        self.cur_label = "entry"
        self.cur_fs: int | None = None
        self.deopt_sites: dict[int, list] = {}    # frame state -> [(label, obj or None)]
        self.incoming: dict[Block, list] = {b: [] for b in self.fn.blocks}
        self.block_start: dict[Block, int] = {}
        self.keepalive: list = []
        self.deopt_buffer = 0               # slots of %deoptbuf (deopt_body)
        self.cur_block_index: tuple = (None, None)
        self.ended_region = False
        self.undo: list[tuple] = []           # stores since the region's start (store_undoably)
        self.undo_blocks: list[tuple] = []     # (label, stores to undo, frame state)
        self.uses_owned = False
        self.pending: str | None = None      # deferred guard condition (see deopt_if)
        self.nan_terms: dict[str, str] = {}  # deferred non-finite checks (defer_non_finite)
        self.pending_fs: int | None = None
        self.strict_floats = False           # Python float ops also guard non-finite results
        self.cur_region: Block | None = None  # header of the pure loop being generated
        self.region_of: dict[Block, Block] = {}
        self.region_slots: dict[Block, str] = {}      # its flag: has a guard failed?
        self.region_fs: dict[Block, int] = {}
        self.region_accumulators: dict[Block, list[Value]] = {}   # see find_accumulators
        self.chunked: dict[Block, tuple] = {}    # counted pure loops run in chunks (chunks.py)
        self.folded: set[Block] = set()         # if/else arms generated as selects
        self.predecessors: dict[Block, list[Block]] = {}
        self.chunk_incoming: dict[Block, list] = {}
        self.unchecked: set[Instr] = set()     # their updates, checked when the loop is left
        self.fs_subst: dict[int, dict[Value, Value]] = {}
        self.writes_arrays = any(i.op is _SETITEM for b in self.fn.blocks for i in b.instrs)
        self.resume_obj = functools.partial(_resume, dispatcher, spec)
        self.keepalive.append(self.resume_obj)

    # -- emission primitives ------------------------------------------------------------
    def emit(self, text: str) -> str:
        name = f"%t{next(self.tmp)}"
        self.lines.append(f"  {name} = {text}")
        return name

    def emit_void(self, text: str) -> None:
        self.lines.append(f"  {text}")

    def new_label(self, prefix: str) -> str:
        return f"{prefix}{next(self.labels)}"

    def start(self, label: str) -> None:
        self.lines.append(f"{label}:")
        self.cur_label = label

    def declare(self, line: str) -> None:
        self.mod.decls.add(line)

    def helper(self, name: str) -> str:
        self.mod.helpers.add(name)
        for d in NEEDS.get(name, ()):
            self.declare(d)
        self.declare_intrinsics()
        return f"tj_{name}"

    def declare_intrinsics(self) -> None:
        for t in ("i8", "i16", "i32", "i64"):
            for op in ("sadd", "ssub", "smul", "uadd", "usub", "umul"):
                self.declare(f"declare {{{t}, i1}} @llvm.{op}.with.overflow.{t}({t}, {t})")
        for f, s in (("double", "f64"), ("float", "f32")):
            for op in ("fabs", "floor", "ceil", "trunc", "sqrt", "roundeven"):
                self.declare(f"declare {f} @llvm.{op}.{s}({f})")
            self.declare(f"declare {f} @llvm.copysign.{s}({f}, {f})")

    def alloca(self, ty: str) -> str:
        name = f"%a{len(self.allocas)}"
        self.allocas.append(f"  {name} = alloca {ty}")
        return name

    # -- guards and deoptimisation ----------------------------------------------------------
    def release_owned(self) -> None:
        self.lines.append("  ;RELEASE")

    def coerce(self, v: str, src: Type, dst: Type) -> str:
        """A value of type src as the representation of the (wider) type dst."""
        if src == dst or ll(src) == ll(dst) and not isinstance(dst, UnionT):
            return v
        if isinstance(dst, UnionT):
            ms = union_members(dst)
            ty = ll(dst)
            if isinstance(src, UnionT):
                sm = union_members(src)
                tag = self.emit(f"extractvalue {ll(src)} {v}, 1")
                payload = self.emit(f"extractvalue {ll(src)} {v}, 0")
                new_tag = "0"
                for i, m in enumerate(sm):
                    is_i = self.emit(f"icmp eq i8 {tag}, {i}")
                    new_tag = self.emit(f"select i1 {is_i}, i8 {ms.index(m)}, i8 {new_tag}")
            else:
                payload, new_tag = v, str(ms.index(src))
            s = self.emit(f"insertvalue {ty} undef, {ll(ms[0])} {payload}, 0")
            return self.emit(f"insertvalue {ty} {s}, i8 {new_tag}, 1")
        if isinstance(dst, TupleT) and isinstance(src, TupleT):
            agg = "undef"
            for i, (s, d) in enumerate(zip(src.items, dst.items)):
                x = self.coerce(self.emit(f"extractvalue {ll(src)} {v}, {i}"), s, d)
                agg = self.emit(f"insertvalue {ll(dst)} {agg}, {ll(d)} {x}, {i}")
            return agg
        raise Unsupported(f"a value of type {src} where {dst} is expected")

    def edge(self, target: Block, args: list[Value], chunk: str | None = None,
             vals: list[str] | None = None) -> None:
        """Jump to target with args (or their LLVM values `vals`); `chunk`: the next chunk
        of a chunked loop (chunks.py)."""
        if vals is None:
            vals = [self.coerce(self.vals[a], a.type, p.type)
                    for a, p in zip(args, target.params)]
        into = self.region_of.get(target)
        entering = into is not None and into is not self.cur_region
        polls = target in self.dom[self.cur_block_index[0]]        # a loop's back edge
        # the edges that start a chunk of a chunked loop enter its chunk header (chunks.py)
        outer = False
        if target in self.chunked:
            outer = chunk is not None or not polls
            chunk, polls = self.chunk_of_edge(target, vals, chunk, not polls)
        if polls:
            self.poll_signals(dict(zip(target.params, vals)), counted=target not in self.chunked)
        if self.cur_region is not None and into is not self.cur_region:
            self.flush_region(self.cur_region)    # leaving a pure loop
        if entering:
            # entering one: no guard has failed yet
            self.emit_void(f"store i1 false, ptr {self.region_slots[into]}")
            self.note_region_entry(into, args)
        if outer:
            self.chunk_incoming[target].append((self.cur_label, chunk, vals))
            self.emit_void(f"br label %c{target.id}")
            return
        self.incoming[target].append((self.cur_label, vals))
        self.emit_void(f"br label %b{target.id}")

    # -- the core function ----------------------------------------------------------------
    def generate(self) -> str:
        ret_ll = ll(self.ret_type) if self.ret_type is not None else "i8"
        params = [f"{ll(p.type)} %v{p.id}" for p in self.fn.entry.params]
        for p in self.fn.entry.params:
            self.vals[p] = f"%v{p.id}"
        head = (f"define {self.ret_pair} @{self.name}_core("
                f"{', '.join(params + ['ptr %objout', 'i64 %depth'])})")
        self.lines.append("entry:")
        self.bake_shapes()
        self.owned = self.alloca("ptr")
        self.emit_void(f"store ptr null, ptr {self.owned}")
        self.poll_count = self.alloca("i32")
        self.emit_void(f"store i32 0, ptr {self.poll_count}")
        self.dom = dominators(self.fn)
        self.find_pure_loops()
        self.find_chunked_loops()
        if self.writes_arrays:
            self.cur_fs = self.fs.at(self.fn.entry, 0)
            for p in self.fn.entry.params:
                self.require_writeable(self.vals[p], p.type)
        if any(ins.op is _CALL_JIT and ins not in self.inlined
               for b in self.fn.blocks for ins in b.instrs):
            # entered with too many native calls below: tier 0 runs this call, so its calls
            # cost Python frames (backends/nesting.py); not a failed guard
            self.cur_fs = self.fs.at(self.fn.entry, 0) | NOT_COUNTED
            below = self.emit("trunc i64 %depth to i32")
            self.branch_to_deopt(self.emit(f"icmp uge i32 {below}, {nesting.NATIVE_DEPTH}"))
            self.emit_void("%depth.next = add i64 %depth, 1")    # what its calls pass
            self.poll_ticked()                # a recursion has no loop to poll in
        self.emit_void("br label %b0")
        # reverse postorder: every value's definition is emitted before its uses
        self.predecessors = {b: [] for b in self.fn.blocks}
        for b in self.fn.blocks:
            for e in b.terminator.targets:
                self.predecessors[e.block].append(b)
        for b in reverse_postorder(self.fn):
            if b in self.folded:
                continue                      # generated as selects (selects.py)
            self.start(f"b{b.id}")
            self.block_start[b] = len(self.lines)
            if b is not self.fn.entry:          # the entry's are the arguments, set above
                for p in b.params:
                    self.vals[p] = f"%v{p.id}"
            region = 0
            self.undo = []
            self.cur_region = self.region_of.get(b)
            for i, ins in enumerate(b.instrs):
                # Guards of side-effect-free code deoptimise to the start of its region:
                # tier 0 recomputes those pure ops, and all the region's guards can share
                # one branch. A call or a call into Python ends a region; a store does
                # not: a deopt undoes it (DeoptOps.store_undoably).
                self.cur_block_index = (b, i)
                if self.cur_region is not None:
                    self.cur_fs = self.region_fs[self.cur_region]
                else:
                    self.cur_fs = self.fs.at(b, region) if _may_deopt(ins) else None
                self.ended_region = self.side_effect(ins)
                self.instr(b, i, ins)
                if self.ended_region:
                    region = i + 1
                    self.undo = []
        self.cur_fs, self.cur_region = None, None
        assert self.pending is None and not self.nan_terms, \
            "a guard was left pending past a terminator"
        self.emit_deopt_blocks()
        if self.deopt_buffer:
            self.allocas.append(f"  %deoptbuf = alloca [{self.deopt_buffer} x i64]")
        self.insert_phis()
        body = []
        for line in self.lines:
            if line == "  ;RELEASE":
                body.extend(self.release_text())
            else:
                body.append(line)
        body[1:1] = self.allocas
        return head + " {\n" + "\n".join(body) + "\n}\n" + f"; returns {ret_ll}\n"

    def bake_shapes(self) -> None:
        """A value-specialised version's arrays that always had one shape (a tuple in `values`,
        checked by its entry: entry_wrapper.py) have these dimensions as constants, and the
        strides that follow from them when C-contiguous: known trip counts and addresses,
        bounds checks LLVM can decide, loops it can unroll. (A dimension of 1 may have any
        stride in NumPy; its only index is 0, so the address is the same.)"""
        values = getattr(self.spec, "values", None) or {}
        for i, p in enumerate(self.fn.entry.params):
            shape = values.get(i)
            if type(shape) is not tuple:
                continue
            t, v = p.type, self.vals[p]
            for d, n in enumerate(shape):
                v = self.emit(f"insertvalue {ll(t)} {v}, i64 {n}, 1, {d}")
            if t.layout == "C":
                import numpy as np
                stride = np.dtype(t.dtype).itemsize
                for d in reversed(range(len(shape))):
                    v = self.emit(f"insertvalue {ll(t)} {v}, i64 {stride}, 2, {d}")
                    stride *= shape[d]
            self.vals[p] = v

    @property
    def ret_pair(self) -> str:
        """What a core returns: {status, value}, in registers for small values."""
        return f"{{i32, {ll(self.ret_type) if self.ret_type is not None else 'i8'}}}"

    def ret_status(self, status: int) -> None:
        """Return status 1 (exception set) or 2 (result object in *objout)."""
        self.emit_void(f"ret {self.ret_pair} {{i32 {status}, "
                       f"{self.ret_pair[6:-1]} undef}}")

    def release_text(self) -> list[str]:
        if not self.uses_owned:
            return []
        self.declare("declare void @Py_DecRef(ptr)")
        n = next(self.tmp)
        return [f"  %rel{n} = load ptr, ptr {self.owned}",
                f"  call void @Py_DecRef(ptr %rel{n})"]

    def insert_phis(self) -> None:
        # insert from the last block backwards so earlier indices stay valid
        for b in sorted(self.block_start, key=lambda x: -self.block_start[x]):
            if b is self.fn.entry:
                continue            # its parameters are the function's arguments
            incoming = self.incoming[b]
            outer = self.chunk_header(b)
            if outer:
                incoming = [(f"c{b.id}", [f"%o{p.id}" for p in b.params]), *incoming]
            phis = []
            for i, p in enumerate(b.params):
                inc = ", ".join(f"[{vals[i]}, %{lab}]" for lab, vals in incoming)
                phis.append(f"  %v{p.id} = phi {ll(p.type)} {inc}")
            start = self.block_start[b]
            self.lines[start:start] = phis
            self.lines[start - 1:start - 1] = outer      # before the block's label

    # -- instructions ---------------------------------------------------------------------
    @property
    def cur_ins(self) -> Instr | None:
        b, i = self.cur_block_index
        return b.instrs[i] if b is not None else None

    def side_effect(self, ins: Instr) -> bool:
        """A call that is not generated in place: it ends a region."""
        return ins.op in _SIDE_EFFECTS and ins not in self.inlined

    def instr(self, b: Block, i: int, ins: Instr) -> None:
        op = ins.op
        if op.is_terminator or self.side_effect(ins):
            self.flush()
        if op is _JUMP:
            self.edge(ins.targets[0].block, ins.targets[0].args)
            return
        if op is _BRANCH:
            join = self.diamond(b, ins)
            if join is not None:
                self.branch_as_select(b, ins, join)
                return
            c = self.vals[ins.args[0]]
            lt, lf = self.new_label("then"), self.new_label("else")
            self.emit_void(f"br i1 {c}, label %{lt}, label %{lf}")
            self.start(lt)
            self.edge(ins.targets[0].block, ins.targets[0].args)
            self.start(lf)
            if b in self.chunked:                # a chunk ended: poll and go on, or leave
                self.chunk_end(b, ins.targets[1])
            else:
                self.edge(ins.targets[1].block, ins.targets[1].args)
            return
        if op is _RETURN:
            v = ins.args[0]
            val = self.coerce(self.vals[v], v.type, self.ret_type)
            self.own_result_arrays(val, self.ret_type)
            self.release_owned()
            pair = self.emit(f"insertvalue {self.ret_pair} {{i32 0, {ll(self.ret_type)} undef}}, "
                             f"{ll(self.ret_type)} {val}, 1")
            self.emit_void(f"ret {self.ret_pair} {pair}")
            return
        if op is _RAISE:
            self.deopt_if("true", defer=False)   # tier 0 raises the exception and message
            self.emit_void("unreachable")
            return
        r = self.value(b, i, ins)
        if ins.result is not None:
            self.vals[ins.result] = r

    def value(self, b: Block, i: int, ins: Instr) -> str | None:
        op, args = ins.op, ins.args
        rt = ins.result.type if ins.result is not None else None
        a = [self.vals[x] for x in args]
        ts = [x.type for x in args]
        if op is _CONST:
            return self.const(ins.attr, rt)
        if b in self.chunked and self.chunked[b][2] is ins:
            return self.chunk_test(b, ins)
        if op not in _STRUCTURAL and \
                (any(isinstance(t, UnionT) for t in ts) or isinstance(rt, UnionT)) and \
                (rt is None or isinstance(rt, (Scalar, UnionT))):
            ok, r = self.union_op(ins, a, ts, rt)
            if ok:
                return r
            return self.pycall(b, i, ins, a, ts, rt)
        if op is _SETITEM:
            self.setitem(a[0], ts[0], a[1:-1], ts[1:-1], a[-1], ts[-1],
                         _index_facts(ins, ins.args[1:-1]))
            return None
        if op is _GUARD_INBOUNDS:
            n = self.emit(f"extractvalue {ll(ts[0])} {a[0]}, 1, {ins.attr}")
            none = self.emit(f"icmp sle i64 {self.to_i64(a[2], ts[2])}, 0")
            fits = self.emit(f"icmp slt i64 {self.to_i64(a[1], ts[1])}, {n}")
            # never deferred: the loop's accesses rely on it
            self.deopt_unless(self.emit(f"or i1 {none}, {fits}"), defer=False)
            return None
        r = self.native(ins, a, ts, rt)
        if r is not None:
            return r
        return self.pycall(b, i, ins, a, ts, rt)

    def lower_one(self, ins: Instr, a: list[str], ts: list[Type], rt: Type | None) -> str | None:
        """Native code for one op on non-union types; "" for a SETITEM done, None if not."""
        if ins.op is _SETITEM:
            self.setitem(a[0], ts[0], a[1:-1], ts[1:-1], a[-1], ts[-1],
                         _index_facts(ins, ins.args[1:-1]))
            return ""
        return self.native(ins, a, ts, rt)

    def native(self, ins: Instr, a: list[str], ts: list[Type], rt: Type) -> str | None:
        """The op in native code, or None to call into Python for it."""
        op = ins.op
        scalars = all(isinstance(t, Scalar) for t in ts) and isinstance(rt, Scalar)
        if op in (_ADD, _SUB, _MUL) and rt == INT and all(t in (INT, BOOL) for t in ts) \
                and within_i64(arith(op, *(x.range or I64 for x in ins.args))):
            # the value ranges show it cannot overflow: no guard
            x, y = (self.to_i64(v, t) for v, t in zip(a, ts))
            return self.emit(f"{op.value} nsw i64 {x}, {y}")
        if op in BINARY_OPS or op in COMPARE_OPS:
            return self.binary(op, a[0], ts[0], a[1], ts[1], rt) if scalars else None
        if op in (_NEG, _POS, _INVERT):
            return self.unary(op, a[0], ts[0], rt) if scalars else None
        if op in (_IS, _IS_NOT):
            same = ts[0] == ts[1] == Scalar(type(None))
            differ = Scalar(type(None)) not in members(ts[0]) or \
                Scalar(type(None)) not in members(ts[1])
            if not same and not differ:
                return None
            return "true" if same == (op is _IS) else "false"
        if op in (_TRUTH, _NOT):
            t = ts[0]
            if isinstance(t, TupleT):
                v = "true" if t.items else "false"
            elif isinstance(t, Scalar):
                v = self.truth(a[0], t)
            else:
                return None
            return v if op is _TRUTH else self.emit(f"xor i1 {v}, true")
        if op is _MAKE_TUPLE:
            agg = "undef"
            for i, (x, t, it) in enumerate(zip(a, ts, rt.items)):
                agg = self.emit(f"insertvalue {ll(rt)} {agg}, {ll(it)} {self.coerce(x, t, it)}, {i}")
            return agg if ts else "zeroinitializer"
        if op is _TUPLE_GET:
            return self.emit(f"extractvalue {ll(ts[0])} {a[0]}, {ins.attr[0]}")
        if op is _GETITEM and isinstance(ts[0], TupleT):
            if ins.attr is None:
                return None
            return self.emit(f"extractvalue {ll(ts[0])} {a[0]}, {ins.attr % len(ts[0].items)}")
        if op is _GETITEM:
            return self.getitem(a[0], ts[0], a[1:], ts[1:], _index_facts(ins, ins.args[1:]))
        if op is _LEN:
            if isinstance(ts[0], TupleT):
                return str(len(ts[0].items))
            return self.emit(f"extractvalue {ll(ts[0])} {a[0]}, 1, 0")
        if op is _GETATTR:
            return self.getattr(a[0], ts[0], ins.attr, rt)
        if op is _GUARD_RANGE:
            lo, hi = ins.attr
            self.deopt_unless(self.in_range(self.to_i64(a[0], ts[0]), lo, hi + 1))
            return self.to_i64(a[0], ts[0]) if rt == INT else a[0]
        if op is _RANGE_LEN:
            return self.range_len(*(self.to_i64(x, t) for x, t in zip(a, ts)))
        if op is _RANGE_ITEM:
            s, _, st, k = (self.to_i64(x, t) for x, t in zip(a, ts))
            return self.emit(f"add i64 {s}, {self.emit(f'mul i64 {k}, {st}')}")
        if op is _CALL_BUILTIN:
            return self.builtin(ins.attr, a, ts, rt)
        if op is _CALL_MATH:
            return self.math_call(ins.attr, a, ts, rt) if scalars else None
        if op is _CALL_UFUNC:
            return self.ufunc_call(ins.attr, a, ts, rt) if scalars else None
        if op is _CALL_JIT:
            body = self.inlined.get(ins)
            if body is not None:
                return self.call_inlined(ins, body, a)
            return self.call_jit(ins, a, ts, rt)
        return None

    def to_i64(self, x: str, t: Type) -> str:
        return self.to_kind(x, kind(t), kind(Scalar(int)))

    def const(self, c, t: Type) -> str:
        if isinstance(c, bool):
            return "true" if c else "false"
        if c is None:
            return "0"
        if isinstance(c, int):
            if not -2 ** 63 <= c < 2 ** 63:
                raise Unsupported(f"integer constant {c} beyond 64 bits")
            return str(c)
        if isinstance(c, float):
            return fconst(c)
        if isinstance(c, complex):
            return f"{{double {fconst(c.real)}, double {fconst(c.imag)}}}"
        raise Unsupported(f"constant {c!r}")

    def range_len(self, start: str, stop: str, step: str) -> str:
        self.deopt_if(self.emit(f"icmp eq i64 {step}, 0"), defer=False)   # guards the udiv
        pos = self.emit(f"icmp sgt i64 {step}, 0")
        lo = self.emit(f"select i1 {pos}, i64 {start}, i64 {stop}")
        hi = self.emit(f"select i1 {pos}, i64 {stop}, i64 {start}")
        neg_step = self.emit(f"sub i64 0, {step}")
        ustep = self.emit(f"select i1 {pos}, i64 {step}, i64 {neg_step}")
        nonempty = self.emit(f"icmp slt i64 {lo}, {hi}")
        diff = self.emit(f"sub i64 {hi}, {lo}")
        d1 = self.emit(f"sub i64 {diff}, 1")
        q = self.emit(f"udiv i64 {d1}, {ustep}")
        n = self.emit(f"add i64 {q}, 1")
        # more than 2**63 - 1 items (an empty range's n is garbage: not a deopt every time)
        self.deopt_if(self.emit(f"and i1 {nonempty}, {self.emit(f'icmp slt i64 {n}, 0')}"))
        return self.emit(f"select i1 {nonempty}, i64 {n}, i64 0")

    # -- builtins ---------------------------------------------------------------------------
    def builtin(self, name: str, a: list[str], ts: list[Type], rt: Type) -> str | None:
        if not all(isinstance(t, Scalar) for t in ts) or not isinstance(rt, Scalar):
            if name == "len" and len(ts) == 1:
                return self.native(Instr(_LEN, []), a, ts, rt)
            return None
        if name == "abs" and len(a) == 1:
            return self.absolute(a[0], ts[0], rt)
        if name == "int" and len(a) == 1 and rt.py is int:
            return self.to_int(a[0], ts[0])
        if name == "float" and len(a) == 1 and rt.py is float:
            return self.to_float(a[0], ts[0])
        if name == "bool" and len(a) == 1:
            return self.truth(a[0], ts[0])
        if name in ("min", "max") and all(t == rt for t in ts):
            cmp = _LT if name == "min" else _GT
            cur = a[0]
            for x in a[1:]:
                c = self.compare(cmp, x, kind(rt), cur, kind(rt), rt, rt)
                if c is None:
                    return None
                cur = self.emit(f"select i1 {c}, {ll(rt)} {x}, {ll(rt)} {cur}")
            return cur
        if name == "pow" and len(a) == 2:
            return self.binary(_POW, a[0], ts[0], a[1], ts[1], rt)
        if name == "round" and len(a) == 1 and rt.py is int:
            k = kind(ts[0])
            if k.cls in ("int", "bool") and not k.numpy:
                return self.to_int(a[0], ts[0])
            if k.cls == "float" and not k.numpy:
                r = self.emit(f"call double @llvm.roundeven.f64(double {a[0]})")
                self.declare_intrinsics()
                return self.to_int(r, Scalar(float))
        if name == "complex" and rt.py is complex and 1 <= len(a) <= 2 and \
                all(kind(t).cls in ("int", "bool", "float") for t in ts):
            re = self.to_float(a[0], ts[0])
            im = self.to_float(a[1], ts[1]) if len(a) == 2 else "0.0"
            s = self.emit(f"insertvalue {{double, double}} undef, double {re}, 0")
            return self.emit(f"insertvalue {{double, double}} {s}, double {im}, 1")
        return None

    # -- calls into Python ------------------------------------------------------------------
def _index_facts(ins: Instr, values: list[Value]) -> list:
    """Per index: "inbounds" when a hoisted GUARD_INBOUNDS proved it (passes/bounds.py), else
    whether it is never negative (passes/ranges.py), so needs no wrap-around."""
    return ["inbounds" if d in ins.inbounds else v.range is not None and v.range[0] >= 0
            for d, v in enumerate(values)]


# what ends a region of guards; a store does not (DeoptOps.store_undoably)
_SIDE_EFFECTS = frozenset({Op.CALL_JIT})


def _may_deopt(ins: Instr) -> bool:
    return ins.op not in (_CONST, _JUMP, _BRANCH, _RETURN) and ins.op not in _STRUCTURAL


# ops that only move values in or out of a tuple, union-typed ones included: always native,
# never a guard
_STRUCTURAL = frozenset({Op.MAKE_TUPLE, Op.TUPLE_GET})


def _resume(dispatcher, spec, index):
    """Called by native code at a failing guard: the tier-0 function that finishes the call
    from frame state `index`, which the native code then calls with the live values."""
    if index & NOT_COUNTED:
        return dispatcher.resume_function(spec, index & ~NOT_COUNTED, counted=False)
    spec.deopts[index] = spec.deopts.get(index, 0) + 1
    return dispatcher.resume_function(spec, index)


def compile_native(dispatcher, spec) -> NativeCode:
    """Compile one specialisation through LLVM and return its NativeCode."""
    import time

    from ...runtime import entry as entry_mod
    from ...runtime.names import guard_for
    from .engine import compile_ir
    from .entry_wrapper import entry_function

    t0 = time.perf_counter()
    with _counter_lock:
        # LLVM's unquoted names are ASCII: `def größe` is a legal Python name
        name = f"tj{next(_counter)}_{_symbol_safe(dispatcher.__name__)}"
    if spec.core_cell is None:
        spec.core_cell = ctypes.c_void_p(0)
    impure: frozenset = frozenset()
    no_inline: frozenset = frozenset()
    try:
        while True:
            mod = _Module()
            gen = FunctionCodegen(mod, dispatcher, spec, name, impure, no_inline)
            try:
                core = gen.generate()
                break
            except ImpureLoop as e:
                impure = impure | {e.header}
            except NotInlined as e:
                no_inline = no_inline | {e.ins}
        if f"@{name}_core(" in core.split("\n", 1)[1]:
            from .recursion import unroll_recursion   # its regexes: self-recursive cores only
            core = unroll_recursion(core, f"{name}_core")
        mod.functions.insert(0, core)
        # one entry per function: a recursive core's twins and peel are functions of their
        # own, which a caller embedding this core renames like the rest (calls.embed)
        cores = dict(_defined(_split(core)))
        cores.update((n, f) for n, f in _defined(mod.functions[1:]))
        mod.functions.append(entry_function(gen, name, guard_for(dispatcher, spec.typed.fn)))
        text = mod.text()
        cm = compile_ir(text)
    except Unsupported:
        spec.core_cell = None
        raise
    spec.core_cell.value = cm.address(f"{name}_core")
    entry_addr = cm.address(f"{name}_entry")
    # A value-specialised version's tier 0 bakes its values in: other values go to CPython.
    fallback = spec.tier0 if not spec.values else dispatcher.py_func
    callable_ = entry_mod.make_entry(dispatcher, fallback)
    entry_mod.set_slot(callable_, entry_addr)
    return NativeCode(entry_addr, spec.core_cell.value, callable_, gen.fs.states,
                      cm.llvm_text, time.perf_counter() - t0, gen.keepalive,
                      f"{name}_core", cores, set(mod.decls), set(mod.helpers))


def _split(text: str) -> list[str]:
    """The function definitions in text, each its own string."""
    parts = text.split("\ndefine ")
    return parts[:1] + ["define " + p for p in parts[1:]]


def _defined(functions: list[str]):
    """(name, text) of the functions a module defines (after its own core)."""
    for f in functions:
        head = f.split("(", 1)[0]
        yield head.rsplit("@", 1)[1], f


def _symbol_safe(name: str) -> str:
    return "".join(c if c.isascii() and (c.isalnum() or c == "_") else "_" for c in name)
