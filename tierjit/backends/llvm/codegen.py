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
failing guard, core boxes the frame state's live values and calls the specialisation's
resume function — tier-0 Python generated from the same IR, starting before that
instruction — and returns its result as status 2. Operations not lowered natively call the
Python function they stand for (status 2 on a surprising result type, a deopt if it raises),
so the native tier covers every typed program and stays exact.
"""

from __future__ import annotations

import ctypes
import functools
import itertools
import math
import operator
import threading
from dataclasses import dataclass, field

from ...errors import Unsupported
from ...ir.liveness import FrameStates
from ...ir.verifier import dominators, reverse_postorder
from ...ir.nodes import Block, Function, Instr, Value
from ...ir.ops import BINARY_OPS, COMPARE_OPS, Op
from ...passes.ranges import I64, arith, within_i64
from ...types.lattice import BOOL, INT, ArrayT, Scalar, TupleT, Type, UnionT, members
from .arrays import ArrayOps
from .boxing import Boxing
from .helpers import HELPERS, NEEDS
from .lltypes import kind, ll, union_members
from .mathfns import MathOps
from .scalar import ScalarOps, fconst

POLL_PERIOD = 1024          # loop back edges between two checks for pending signals
_counter = itertools.count()
_counter_lock = threading.Lock()


@dataclass
class NativeCode:
    """A compiled specialisation: what the dispatcher needs to call it and to resume it."""

    entry_address: int
    core_address: int
    entry_callable: object
    frame_states: list
    llvm_text: str
    ir_text: str
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


class FunctionCodegen(ScalarOps, Boxing, ArrayOps, MathOps):
    """Generates the core function of one specialisation."""

    def __init__(self, mod: _Module, dispatcher, spec, name: str,
                 impure_loops: frozenset = frozenset()):
        self.mod, self.dispatcher, self.spec, self.name = mod, dispatcher, spec, name
        self.impure_loops = impure_loops      # loop headers found to call into Python
        self.fn: Function = spec.typed.fn
        self.ret_type: Type | None = spec.typed.return_type
        self.fs = FrameStates(self.fn)
        self.lines: list[str] = []
        self.allocas: list[str] = []
        self.tmp = itertools.count()
        self.labels = itertools.count()
        self.vals: dict[Value, str] = {}
        self.cur_label = "entry"
        self.cur_fs: int | None = None
        self.deopt_sites: dict[int, list] = {}    # frame state -> [(label, obj or None)]
        self.incoming: dict[Block, list] = {b: [] for b in self.fn.blocks}
        self.block_start: dict[Block, int] = {}
        self.keepalive: list = []
        self.max_argv = 1
        self.cur_block_index: tuple = (None, None)
        self.ended_region = False
        self.uses_owned = False
        self.pending: str | None = None      # deferred guard condition (see deopt_if)
        self.pending_nan: str | None = None  # deferred non-finite check (defer_non_finite)
        self.pending_fs: int | None = None
        self.strict_floats = False           # Python float ops also guard non-finite results
        self.cur_region: Block | None = None  # header of the pure loop being generated
        self.region_of: dict[Block, Block] = {}
        self.region_slots: dict[Block, tuple[str, str]] = {}
        self.region_fs: dict[Block, int] = {}
        self.fs_subst: dict[int, dict[Value, Value]] = {}
        self.writes_arrays = any(i.op is Op.SETITEM for b in self.fn.blocks for i in b.instrs)
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
    def deopt_if(self, cond: str, defer: bool = True) -> None:
        """Deoptimise to the current frame state when cond holds. A deferred guard (one
        that protects nothing that could trap: overflow, NaN, range) is or-ed into one
        pending condition, tested by `flush` before anything that must not run after it:
        a trapping operation, a side effect, a terminator."""
        if self.cur_fs is None:
            raise AssertionError("guard outside an instruction")
        if defer and self.cur_region is not None:
            flag, _ = self.region_slots[self.cur_region]
            old = self.emit(f"load i1, ptr {flag}")
            self.emit_void(f"store i1 {self.emit(f'or i1 {old}, {cond}')}, ptr {flag}")
            return
        if self.pending_fs is not None and self.pending_fs != self.cur_fs:
            self.flush()
        if defer:
            self.pending_fs = self.cur_fs
            self.pending = cond if self.pending is None else \
                self.emit(f"or i1 {self.pending}, {cond}")
            self.pending_fs = self.cur_fs
            return
        self.flush()
        self.branch_to_deopt(cond)

    def defer_non_finite(self, x: str, ll_type: str) -> None:
        """Deoptimise (deferred) if x is inf or NaN: x - x is 0.0 for finite x and NaN
        otherwise; the differences are summed and the sum is tested once, at the flush."""
        d = self.emit(f"fsub {ll_type} {x}, {x}")
        if ll_type == "float":
            d = self.emit(f"fpext float {d} to double")
        if self.cur_region is not None:
            _, nan = self.region_slots[self.cur_region]
            old = self.emit(f"load double, ptr {nan}")
            self.emit_void(f"store double {self.emit(f'fadd double {old}, {d}')}, ptr {nan}")
            return
        if self.pending_fs is not None and self.pending_fs != self.cur_fs:
            self.flush()
        self.pending_nan = d if self.pending_nan is None else \
            self.emit(f"fadd double {self.pending_nan}, {d}")
        self.pending_fs = self.cur_fs

    def flush(self) -> None:
        """Test the pending guards: deoptimise to their frame state if any failed.
        (In a pure loop, guards wait for the loop's exit: see flush_region.)"""
        if self.cur_region is not None:
            return
        if self.pending_nan is not None:
            nan = self.emit(f"fcmp uno double {self.pending_nan}, 0.0")
            self.pending_nan = None
            self.pending = nan if self.pending is None else \
                self.emit(f"or i1 {self.pending}, {nan}")
        if self.pending is not None:
            cond, self.pending = self.pending, None
            self.cur_fs, saved = self.pending_fs, self.cur_fs
            self.pending_fs = None
            self.branch_to_deopt(cond)
            self.cur_fs = saved

    def flush_region(self, h: Block) -> None:
        """Leaving the pure loop of h: deoptimise to its entry if any of its guards failed."""
        flag, nan = self.region_slots[h]
        f = self.emit(f"load i1, ptr {flag}")
        n = self.emit(f"fcmp uno double {self.emit(f'load double, ptr {nan}')}, 0.0")
        self.cur_fs, saved = self.region_fs[h], self.cur_fs
        self.branch_to_deopt(self.emit(f"or i1 {f}, {n}"))
        self.cur_fs = saved

    def branch_to_deopt(self, cond: str) -> None:
        ok = self.new_label("ok")
        target = f"deopt{self.cur_fs}"
        self.deopt_sites.setdefault(self.cur_fs, [])
        self.emit_void(f"br i1 {cond}, label %{target}, label %{ok}")
        self.deopt_sites[self.cur_fs].append((self.cur_label, None))
        self.start(ok)

    def deopt_unless(self, cond: str, defer: bool = True) -> None:
        self.deopt_if(self.emit(f"xor i1 {cond}, true"), defer)

    def deopt_with_object(self, fs: int, obj: str) -> None:
        """Jump to the deopt block of frame state fs, the object standing for the value the
        current instruction produced (a call whose result native code cannot take)."""
        self.deopt_sites.setdefault(fs, []).append((self.cur_label, obj))
        self.emit_void(f"br label %objdeopt{fs}")

    def release_owned(self) -> None:
        self.lines.append("  ;RELEASE")

    def emit_deopt_blocks(self) -> None:
        for fs, sites in self.deopt_sites.items():
            state = self.fs.states[fs]
            plain = [s for s in sites if s[1] is None]
            with_obj = [s for s in sites if s[1] is not None]
            if plain:
                self.start(f"deopt{fs}")
                self.deopt_body(fs, state, None)
            if with_obj:
                self.start(f"objdeopt{fs}")
                obj = self.emit("phi ptr " + ", ".join(f"[{o}, %{lab}]" for lab, o in with_obj))
                self.deopt_body(fs, state, obj)

    def deopt_body(self, fs: int, state, obj: str | None) -> None:
        produced = self.fn.blocks[state.block].instrs[state.index - 1].result \
            if obj is not None else None
        boxed = []
        self.declare("declare ptr @PyLong_FromLongLong(i64)")
        boxed.append(self.emit(f"call ptr @PyLong_FromLongLong(i64 {fs})"))
        subst = self.fs_subst.get(fs, {})
        for v in state.live:
            if v is produced:
                boxed.append(obj)
            elif v in subst:                  # a pure loop's parameter: its entry value
                boxed.append(self.box(self.vals[subst[v]], subst[v].type))
            else:
                boxed.append(self.box(self.vals[v], v.type))
        self.max_argv = max(self.max_argv, len(boxed))
        res = self.call_object(id(self.resume_obj), boxed, steal=True)
        self.release_owned()
        fail = self.emit(f"icmp eq ptr {res}, null")
        err, ok = self.new_label("deopterr"), self.new_label("deoptok")
        self.emit_void(f"br i1 {fail}, label %{err}, label %{ok}")
        self.start(err)
        self.ret_status(1)
        self.start(ok)
        self.emit_void(f"store ptr {res}, ptr %objout")
        self.ret_status(2)

    # -- values and edges -----------------------------------------------------------------
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

    def edge(self, target: Block, args: list[Value]) -> None:
        vals = [self.coerce(self.vals[a], a.type, p.type) for a, p in zip(args, target.params)]
        if target in self.dom[self.cur_block_index[0]]:
            self.poll_signals()               # a loop's back edge
        into = self.region_of.get(target)
        if self.cur_region is not None and into is not self.cur_region:
            self.flush_region(self.cur_region)    # leaving a pure loop
        if into is not None and into is not self.cur_region:
            flag, nan = self.region_slots[into]   # entering one: no guard has failed yet
            self.emit_void(f"store i1 false, ptr {flag}")
            self.emit_void(f"store double 0.0, ptr {nan}")
            self.note_region_entry(into, args)
        self.incoming[target].append((self.cur_label, vals))
        self.emit_void(f"br label %b{target.id}")

    def poll_signals(self) -> None:
        """Every POLL_PERIOD back edges, let CPython run pending signal handlers, so Ctrl-C
        interrupts a long native loop with KeyboardInterrupt (status 1: exception set)."""
        self.declare("declare i32 @PyErr_CheckSignals()")
        c = self.emit(f"load i32, ptr {self.poll_count}")
        c1 = self.emit(f"add i32 {c}, 1")
        self.emit_void(f"store i32 {c1}, ptr {self.poll_count}")
        due = self.emit(f"icmp eq i32 {self.emit(f'and i32 {c1}, {POLL_PERIOD - 1}')}, 0")
        check, cont = self.new_label("poll"), self.new_label("polled")
        self.emit_void(f"br i1 {due}, label %{check}, label %{cont}, !prof !{{!\"branch_weights\", i32 1, i32 {POLL_PERIOD}}}")
        self.start(check)
        raised = self.emit("call i32 @PyErr_CheckSignals()")
        self.propagate_error_if(self.emit(f"icmp ne i32 {raised}, 0"))
        self.emit_void(f"br label %{cont}")
        self.start(cont)

    def find_pure_loops(self) -> None:
        """Loops without stores, calls, raises or returns become deopt regions: their guards
        deoptimise to the loop's entry, where tier 0 recomputes the whole loop."""
        from ...ir.loops import natural_loops
        impure = {Op.SETITEM, Op.CALL_JIT, Op.CALL_NUMPY, Op.RAISE, Op.RETURN}
        loops = natural_loops(self.fn)
        for h, body in sorted(loops.items(), key=lambda kv: -len(kv[1])):
            if h in self.impure_loops or any(b in self.region_of for b in body):
                continue
            entries = [e for b in self.fn.blocks if b not in body
                       for e in b.terminator.targets if e.block is h]
            if len(entries) != 1 or any(i.op in impure for b in body for i in b.instrs):
                continue
            for b in body:
                self.region_of[b] = h
            self.region_slots[h] = (self.alloca("i1"), self.alloca("double"))
            fs = self.fs.at(h, 0)
            self.region_fs[h] = fs
            self.fs_subst[fs] = {}

    def note_region_entry(self, h: Block, args: list[Value]) -> None:
        """The region's frame state resumes h with the values its parameters enter with."""
        self.fs_subst[self.region_fs[h]] = dict(zip(h.params, args))

    # -- the core function ----------------------------------------------------------------
    def generate(self) -> str:
        ret_ll = ll(self.ret_type) if self.ret_type is not None else "i8"
        params = [f"{ll(p.type)} %v{p.id}" for p in self.fn.entry.params]
        for p in self.fn.entry.params:
            self.vals[p] = f"%v{p.id}"
        head = (f"define {self.ret_pair} @{self.name}_core("
                f"{', '.join(params + ['ptr %objout'])})")
        self.lines.append("entry:")
        self.owned = self.alloca("ptr")
        self.emit_void(f"store ptr null, ptr {self.owned}")
        self.poll_count = self.alloca("i32")
        self.emit_void(f"store i32 0, ptr {self.poll_count}")
        self.dom = dominators(self.fn)
        self.find_pure_loops()
        if self.writes_arrays:
            self.cur_fs = self.fs.at(self.fn.entry, 0)
            for p in self.fn.entry.params:
                self.require_writeable(self.vals[p], p.type)
        self.emit_void("br label %b0")
        # reverse postorder: every value's definition is emitted before its uses
        for b in reverse_postorder(self.fn):
            self.start(f"b{b.id}")
            self.block_start[b] = len(self.lines)
            for p in b.params:
                self.vals[p] = f"%v{p.id}"
            region = 0
            self.cur_region = self.region_of.get(b)
            for i, ins in enumerate(b.instrs):
                # Guards of side-effect-free code deoptimise to the start of its region:
                # tier 0 recomputes those pure ops, and all the region's guards can share
                # one branch. A store, a call or a call into Python ends a region.
                self.cur_block_index = (b, i)
                if self.cur_region is not None:
                    self.cur_fs = self.region_fs[self.cur_region]
                else:
                    self.cur_fs = self.fs.at(b, region) if _may_deopt(ins) else None
                self.ended_region = ins.op in _SIDE_EFFECTS
                self.instr(b, i, ins)
                if self.ended_region:
                    region = i + 1
        self.cur_fs, self.cur_region = None, None
        assert self.pending is None and self.pending_nan is None, \
            "a guard was left pending past a terminator"
        self.emit_deopt_blocks()
        self.insert_phis()
        body = []
        for line in self.lines:
            if line == "  ;RELEASE":
                body.extend(self.release_text())
            else:
                body.append(line)
        body[1:1] = self.allocas
        return head + " {\n" + "\n".join(body) + "\n}\n" + f"; returns {ret_ll}\n"

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
            phis = []
            for i, p in enumerate(b.params):
                inc = ", ".join(f"[{vals[i]}, %{lab}]" for lab, vals in self.incoming[b])
                phis.append(f"  %v{p.id} = phi {ll(p.type)} {inc}")
            self.lines[self.block_start[b]:self.block_start[b]] = phis

    # -- instructions ---------------------------------------------------------------------
    def instr(self, b: Block, i: int, ins: Instr) -> None:
        op = ins.op
        if op.is_terminator or op in _SIDE_EFFECTS:
            self.flush()
        if op is Op.JUMP:
            self.edge(ins.targets[0].block, ins.targets[0].args)
            return
        if op is Op.BRANCH:
            c = self.vals[ins.args[0]]
            lt, lf = self.new_label("then"), self.new_label("else")
            self.emit_void(f"br i1 {c}, label %{lt}, label %{lf}")
            for lab, e in ((lt, ins.targets[0]), (lf, ins.targets[1])):
                self.start(lab)
                self.edge(e.block, e.args)
            return
        if op is Op.RETURN:
            v = ins.args[0]
            val = self.coerce(self.vals[v], v.type, self.ret_type)
            self.own_result_arrays(val, self.ret_type)
            self.release_owned()
            pair = self.emit(f"insertvalue {self.ret_pair} {{i32 0, {ll(self.ret_type)} undef}}, "
                             f"{ll(self.ret_type)} {val}, 1")
            self.emit_void(f"ret {self.ret_pair} {pair}")
            return
        if op is Op.RAISE:
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
        if op is Op.CONST:
            return self.const(ins.attr, rt)
        if (any(isinstance(t, UnionT) for t in ts) or isinstance(rt, UnionT)) and \
                (rt is None or isinstance(rt, (Scalar, UnionT))):
            ok, r = self.union_op(ins, a, ts, rt)
            if ok:
                return r
            return self.pycall(b, i, ins, a, ts, rt)
        if op is Op.SETITEM:
            self.setitem(a[0], ts[0], a[1:-1], ts[1:-1], a[-1], ts[-1],
                         _nonneg(ins.args[1:-1]))
            return None
        r = self.native(ins, a, ts, rt)
        if r is not None:
            return r
        return self.pycall(b, i, ins, a, ts, rt)

    def lower_one(self, ins: Instr, a: list[str], ts: list[Type], rt: Type | None) -> str | None:
        """Native code for one op on non-union types; "" for a SETITEM done, None if not."""
        if ins.op is Op.SETITEM:
            self.setitem(a[0], ts[0], a[1:-1], ts[1:-1], a[-1], ts[-1],
                         _nonneg(ins.args[1:-1]))
            return ""
        return self.native(ins, a, ts, rt)

    def native(self, ins: Instr, a: list[str], ts: list[Type], rt: Type) -> str | None:
        """The op in native code, or None to call into Python for it."""
        op = ins.op
        scalars = all(isinstance(t, Scalar) for t in ts) and isinstance(rt, Scalar)
        if op in (Op.ADD, Op.SUB, Op.MUL) and rt == INT and all(t in (INT, BOOL) for t in ts) \
                and within_i64(arith(op, *(x.range or I64 for x in ins.args))):
            # the value ranges show it cannot overflow: no guard
            x, y = (self.to_i64(v, t) for v, t in zip(a, ts))
            return self.emit(f"{op.value} nsw i64 {x}, {y}")
        if op in BINARY_OPS or op in COMPARE_OPS:
            return self.binary(op, a[0], ts[0], a[1], ts[1], rt) if scalars else None
        if op in (Op.NEG, Op.POS, Op.INVERT):
            return self.unary(op, a[0], ts[0], rt) if scalars else None
        if op in (Op.IS, Op.IS_NOT):
            same = ts[0] == ts[1] == Scalar(type(None))
            differ = Scalar(type(None)) not in members(ts[0]) or \
                Scalar(type(None)) not in members(ts[1])
            if not same and not differ:
                return None
            return "true" if same == (op is Op.IS) else "false"
        if op in (Op.TRUTH, Op.NOT):
            t = ts[0]
            if isinstance(t, TupleT):
                v = "true" if t.items else "false"
            elif isinstance(t, Scalar):
                v = self.truth(a[0], t)
            else:
                return None
            return v if op is Op.TRUTH else self.emit(f"xor i1 {v}, true")
        if op is Op.MAKE_TUPLE:
            agg = "undef"
            for i, (x, t, it) in enumerate(zip(a, ts, rt.items)):
                agg = self.emit(f"insertvalue {ll(rt)} {agg}, {ll(it)} {self.coerce(x, t, it)}, {i}")
            return agg if ts else "zeroinitializer"
        if op is Op.TUPLE_GET:
            return self.emit(f"extractvalue {ll(ts[0])} {a[0]}, {ins.attr[0]}")
        if op is Op.GETITEM and isinstance(ts[0], TupleT):
            if ins.attr is None:
                return None
            return self.emit(f"extractvalue {ll(ts[0])} {a[0]}, {ins.attr % len(ts[0].items)}")
        if op is Op.GETITEM:
            return self.getitem(a[0], ts[0], a[1:], ts[1:], _nonneg(ins.args[1:]))
        if op is Op.LEN:
            if isinstance(ts[0], TupleT):
                return str(len(ts[0].items))
            return self.emit(f"extractvalue {ll(ts[0])} {a[0]}, 1, 0")
        if op is Op.GETATTR:
            return self.getattr(a[0], ts[0], ins.attr, rt)
        if op is Op.GUARD_RANGE:
            lo, hi = ins.attr
            self.deopt_unless(self.in_range(self.to_i64(a[0], ts[0]), lo, hi + 1))
            return self.to_i64(a[0], ts[0]) if rt == INT else a[0]
        if op is Op.RANGE_LEN:
            return self.range_len(*(self.to_i64(x, t) for x, t in zip(a, ts)))
        if op is Op.RANGE_ITEM:
            s, _, st, k = (self.to_i64(x, t) for x, t in zip(a, ts))
            return self.emit(f"add i64 {s}, {self.emit(f'mul i64 {k}, {st}')}")
        if op is Op.CALL_BUILTIN:
            return self.builtin(ins.attr, a, ts, rt)
        if op is Op.CALL_MATH:
            return self.math_call(ins.attr, a, ts, rt) if scalars else None
        if op is Op.CALL_JIT:
            return self.call_jit(ins, a, ts, rt)
        if op is Op.CALL_NUMPY:
            return self.numpy_new(ins, a, ts, rt)
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
        self.deopt_if(self.emit(f"icmp slt i64 {n}, 0"))   # more than 2**63 - 1 items
        return self.emit(f"select i1 {nonempty}, i64 {n}, i64 0")

    # -- builtins ---------------------------------------------------------------------------
    def builtin(self, name: str, a: list[str], ts: list[Type], rt: Type) -> str | None:
        if not all(isinstance(t, Scalar) for t in ts) or not isinstance(rt, Scalar):
            if name == "len" and len(ts) == 1:
                return self.native(Instr(Op.LEN, []), a, ts, rt)
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
            cmp = Op.LT if name == "min" else Op.GT
            cur = a[0]
            for x in a[1:]:
                c = self.compare(cmp, x, kind(rt), cur, kind(rt), rt, rt)
                if c is None:
                    return None
                cur = self.emit(f"select i1 {c}, {ll(rt)} {x}, {ll(rt)} {cur}")
            return cur
        if name == "pow" and len(a) == 2:
            return self.binary(Op.POW, a[0], ts[0], a[1], ts[1], rt)
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
    def pycall(self, b: Block, i: int, ins: Instr, a: list[str], ts: list[Type],
               rt: Type) -> str:
        """Call the Python function the op stands for; exact by construction."""
        fn = _python_function(ins)
        if fn is None:
            raise Unsupported(f"operation {ins.op.value} on {', '.join(map(str, ts))} in "
                              "native code", ins.line)
        self.keepalive.append(fn)
        if self.cur_region is not None:
            raise _ImpureLoop(self.cur_region)   # tier 0 would run this call twice
        self.ended_region = True      # Python code may warn: never run it twice
        self.flush()
        boxed = [self.box(x, t) for x, t in zip(a, ts)]
        self.max_argv = max(self.max_argv, len(boxed))
        res = self.call_object(id(fn), boxed, steal=True)
        return self.take_result(b, i, res, rt, raised_deopts=True)

    def take_result(self, b: Block, i: int, obj: str, rt: Type, raised_deopts: bool) -> str:
        """Unbox a call's new-reference result; NULL deopts before the call (re-running a
        pure function in tier 0 raises the same error) or propagates the exception."""
        isnull = self.emit(f"icmp eq ptr {obj}, null")
        if raised_deopts:
            self.declare("declare void @PyErr_Clear()")
            err, ok = self.new_label("pyerr"), self.new_label("pyok")
            self.emit_void(f"br i1 {isnull}, label %{err}, label %{ok}")
            self.start(err)
            self.emit_void("call void @PyErr_Clear()")
            self.deopt_if("true", defer=False)
            self.emit_void("unreachable")
            self.start(ok)
        else:
            self.propagate_error_if(isnull)
        if rt is None:
            self.decref(obj)
            return "0"
        fail = self.new_label("unboxfail")
        ok_label = self.new_label("unboxed")
        v = self.unbox_value(obj, rt, fail)
        if isinstance(rt, ArrayT) or _has_arrays(rt):
            self.own(obj)
            if self.writes_arrays:
                self.require_writeable(v, rt)
        else:
            self.decref(obj)
        self.emit_void(f"br label %{ok_label}")
        self.start(fail)
        after = self.fs.at(b, i + 1)
        self.deopt_with_object(after, obj)
        self.start(ok_label)
        return v

    def unbox_value(self, obj: str, t: Type, fail: str) -> str:
        if isinstance(t, UnionT):
            # try each member in turn
            ms = union_members(t)
            done = self.new_label("uu")
            incoming = []
            for idx, m in enumerate(ms):
                nxt = self.new_label("um")
                v = self.unbox(obj, m, nxt)
                s = self.emit(f"insertvalue {ll(t)} undef, {ll(m)} {v}, 0")
                s = self.emit(f"insertvalue {ll(t)} {s}, i8 {idx}, 1")
                incoming.append((s, self.cur_label))
                self.emit_void(f"br label %{done}")
                self.start(nxt)
            self.emit_void(f"br label %{fail}")
            self.start(done)
            return self.emit(f"phi {ll(t)} " + ", ".join(f"[{s}, %{lab}]" for s, lab in incoming))
        return self.unbox(obj, t, fail)

    def propagate_error_if(self, cond: str) -> None:
        err, ok = self.new_label("err"), self.new_label("noerr")
        self.emit_void(f"br i1 {cond}, label %{err}, label %{ok}")
        self.start(err)
        self.release_owned()
        self.ret_status(1)
        self.start(ok)

    def own(self, obj: str) -> None:
        """Keep obj (a new reference) alive until this call returns."""
        self.uses_owned = True
        self.mod.helpers.add("own")
        self.declare("declare ptr @PyList_New(i64)")
        self.declare("declare i32 @PyList_Append(ptr, ptr)")
        self.declare("declare void @Py_DecRef(ptr)")
        self.emit_void(f"call void @tj_own(ptr {self.owned}, ptr {obj})")

    def own_result_arrays(self, v: str, t: Type) -> None:
        """Arrays in a returned value become new references owned by the caller."""
        if isinstance(t, ArrayT):
            self.incref(self.emit(f"extractvalue {ll(t)} {v}, 3"))
        elif isinstance(t, TupleT):
            for i, it in enumerate(t.items):
                if _has_arrays(it):
                    self.own_result_arrays(self.emit(f"extractvalue {ll(t)} {v}, {i}"), it)

    # -- calls between jitted functions -----------------------------------------------------
    def call_jit(self, ins: Instr, a: list[str], ts: list[Type], rt: Type) -> str | None:
        callee = ins.attr
        key = tuple(ts)
        if callee is self.dispatcher and key == self.spec.arg_types:
            fp = f"@{self.name}_core"
        else:
            spec = callee.specs.get(key)
            if spec is None or (spec.native is None and spec.core_cell is None):
                spec = callee.specialise(key)        # compiles the callee now
            if spec.gave_up is not None:
                return None             # its native code keeps deoptimising: call its entry
            if spec.native is not None:
                if spec.typed.return_type != rt:
                    return None
                return self.call_core("@" + self.embed(spec.native), a, ts, rt)
            cell = spec.core_cell
            if cell is None or spec.reason is not None and spec.native is None:
                return None
            if spec.typed.return_type != rt:
                return None
            fp = self.emit(f"load ptr, ptr {self.addr(ctypes.addressof(cell))}")
            self.keepalive.append(cell)
            # a mutually recursive callee whose own compile failed leaves its cell empty
            self.deopt_if(self.emit(f"icmp eq ptr {fp}, null"), defer=False)
        return self.call_core(fp, a, ts, rt)

    def call_core(self, fp: str, a: list[str], ts: list[Type], rt: Type) -> str:
        """Call a native core and take its three kinds of return (see the module doc)."""
        objout = self.alloca("ptr")
        args = [f"{ll(t)} {x}" for x, t in zip(a, ts)]
        pair_t = f"{{i32, {ll(rt)}}}"
        pair = self.emit(f"call {pair_t} {fp}({', '.join(args + [f'ptr {objout}'])})")
        st = self.emit(f"extractvalue {pair_t} {pair}, 0")
        ok, other = self.new_label("callok"), self.new_label("callnok")
        is0 = self.emit(f"icmp eq i32 {st}, 0")
        self.emit_void(f"br i1 {is0}, label %{ok}, label %{other}")
        self.start(other)
        self.propagate_error_if(self.emit(f"icmp eq i32 {st}, 1"))
        obj = self.emit(f"load ptr, ptr {objout}")
        b, i = self.cur_block_index
        v2 = self.take_result(b, i, obj, rt, raised_deopts=False)
        l2 = self.cur_label
        join = self.new_label("calljoin")
        self.emit_void(f"br label %{join}")
        self.start(ok)
        v1 = self.emit(f"extractvalue {pair_t} {pair}, 1")
        if _has_arrays(rt):
            self.own_arrays_in(v1, rt)
            if self.writes_arrays:
                self.require_writeable(v1, rt)
        l1 = self.cur_label
        self.emit_void(f"br label %{join}")
        self.start(join)
        return self.emit(f"phi {ll(rt)} [{v1}, %{l1}], [{v2}, %{l2}]")

    def embed(self, native: NativeCode) -> str:
        """Copy a compiled callee's core (and what it embedded) into this module as
        internal functions, so LLVM can inline it; returns the core's name here."""
        name = self.mod.embedded.get(id(native))
        if name is not None:
            return name
        renames = {old: f"{old.split('__')[0]}__e{next(_counter)}" for old in native.functions}
        for text in native.functions.values():
            for old, new in renames.items():
                text = text.replace(f"@{old}(", f"@{new}(")
            if not text.startswith("define internal "):
                text = text.replace("define ", "define internal ", 1)
            self.mod.functions.append(text)
        self.mod.decls |= native.decls
        self.mod.helpers |= native.helpers
        self.keepalive.append(native)
        name = self.mod.embedded[id(native)] = renames[native.core_name]
        return name

    def own_arrays_in(self, v: str, t: Type) -> None:
        if isinstance(t, ArrayT):
            self.own(self.emit(f"extractvalue {ll(t)} {v}, 3"))
        elif isinstance(t, TupleT):
            for i, it in enumerate(t.items):
                if _has_arrays(it):
                    self.own_arrays_in(self.emit(f"extractvalue {ll(t)} {v}, {i}"), it)

    # -- unions of one representation -------------------------------------------------------
    def union_op(self, ins: Instr, a: list[str], ts: list[Type],
                 rt: Type | None) -> tuple[bool, str | None]:
        """An op on flavours of one representation (float | numpy.float64): generate the op
        for every combination of members, and when the native code is the same for all of
        them, emit it once and compute the result's member from the operands' members.
        Returns (done, result)."""
        combos = list(itertools.product(*(union_members(t) if isinstance(t, UnionT) else [t]
                                          for t in ts)))
        if len(combos) > 16:
            return False, None
        payloads, tags = [], []
        for x, t in zip(a, ts):
            if isinstance(t, UnionT):
                payloads.append(self.emit(f"extractvalue {ll(t)} {x}, 0"))
                tags.append(self.emit(f"extractvalue {ll(t)} {x}, 1"))
            else:
                payloads.append(x)
                tags.append(None)
        self.flush()
        for strict in (False, True):
            self.strict_floats = strict
            try:
                done, r, results = self._union_try(ins, payloads, combos)
            finally:
                self.strict_floats = False
            if done:
                break
        else:
            return False, None
        self.strict_floats = strict
        r = self.lower_one(ins, payloads, list(combos[0]), results[0])
        self.strict_floats = False
        if not isinstance(rt, UnionT):
            return True, r
        rms = union_members(rt)
        tag = "0"
        for combo, crt in zip(combos, results):
            match = "true"
            for tg, t, m in zip(tags, ts, combo):
                if tg is not None:
                    eq = self.emit(f"icmp eq i8 {tg}, {union_members(t).index(m)}")
                    match = self.emit(f"and i1 {match}, {eq}")
            tag = self.emit(f"select i1 {match}, i8 {rms.index(crt)}, i8 {tag}")
        s = self.emit(f"insertvalue {ll(rt)} undef, {ll(results[0])} {r}, 0")
        return True, self.emit(f"insertvalue {ll(rt)} {s}, i8 {tag}, 1")

    def _union_try(self, ins: Instr, payloads: list[str], combos: list) -> tuple:
        """Dry-run the op for every member combination; (same code for all?, _, types)."""
        from ...types.rules import result_type
        texts, results = set(), []
        saved = (self.lines, self.tmp, self.labels, self.cur_label, self.deopt_sites,
                 self.pending, self.pending_nan, self.pending_fs)
        try:
            for combo in combos:
                crt = result_type(ins.op, list(combo), ins.attr, _no_callee)
                if crt is not None and not isinstance(crt, Scalar):
                    return False, None, None
                self.lines, self.tmp, self.labels = [], itertools.count(), itertools.count()
                self.deopt_sites = {k: list(v) for k, v in saved[4].items()}
                self.pending, self.pending_nan, self.pending_fs = None, None, None
                r = self.lower_one(ins, payloads, list(combo), crt)
                if r is None:
                    return False, None, None
                texts.add(("\n".join(self.lines), r, crt and ll(crt)))
                results.append(crt)
        except Unsupported:
            return False, None, None
        finally:
            (self.lines, self.tmp, self.labels, self.cur_label, self.deopt_sites,
             self.pending, self.pending_nan, self.pending_fs) = saved
        return len(texts) == 1, None, results


def _nonneg(values: list[Value]) -> list[bool]:
    """Which indices are never negative (passes/ranges.py), so need no wrap-around."""
    return [v.range is not None and v.range[0] >= 0 for v in values]


class _ImpureLoop(Exception):
    """A loop taken for pure calls into Python: generate again without it as a region."""

    def __init__(self, header: Block):
        self.header = header


def _no_callee(*_):
    raise Unsupported("call in a union operation")


def _has_arrays(t: Type | None) -> bool:
    if isinstance(t, ArrayT):
        return True
    if isinstance(t, TupleT):
        return any(_has_arrays(x) for x in t.items)
    return False



_PY_FUNCS = {
    Op.ADD: operator.add, Op.SUB: operator.sub, Op.MUL: operator.mul,
    Op.TRUEDIV: operator.truediv, Op.FLOORDIV: operator.floordiv, Op.MOD: operator.mod,
    Op.POW: operator.pow, Op.LSHIFT: operator.lshift, Op.RSHIFT: operator.rshift,
    Op.BITAND: operator.and_, Op.BITOR: operator.or_, Op.BITXOR: operator.xor,
    Op.LT: operator.lt, Op.LE: operator.le, Op.GT: operator.gt, Op.GE: operator.ge,
    Op.EQ: operator.eq, Op.NE: operator.ne, Op.NEG: operator.neg, Op.POS: operator.pos,
    Op.INVERT: operator.invert, Op.NOT: operator.not_, Op.TRUTH: bool,
    Op.IS: operator.is_, Op.IS_NOT: operator.is_not, Op.LEN: len,
}


def _python_function(ins: Instr):
    """The Python callable an instruction stands for (for ops without native lowering)."""
    op = ins.op
    if op in _PY_FUNCS:
        return _PY_FUNCS[op]
    if op is Op.CALL_BUILTIN:
        import builtins
        return getattr(builtins, ins.attr)
    if op is Op.CALL_MATH:
        return getattr(math, ins.attr)
    if op is Op.CALL_JIT:
        return ins.attr.entry
    if op is Op.GETITEM:
        return lambda a, *i: a[i[0] if len(i) == 1 else i]
    if op is Op.GETATTR:
        return operator.attrgetter(ins.attr)
    if op is Op.CALL_NUMPY:
        import numpy as np
        name, dtype = ins.attr
        f = getattr(np, name)
        return f if dtype is None else functools.partial(f, dtype=dtype)
    if op is Op.TUPLE_GET:
        return operator.itemgetter(ins.attr[0])
    if op is Op.MAKE_TUPLE:
        return lambda *xs: xs
    if op is Op.SETITEM:
        return _setitem
    return None


def _setitem(a, *rest):
    """a[i, ...] = v as an op: rest is the indices, then the value."""
    a[rest[0] if len(rest) == 2 else rest[:-1]] = rest[-1]


_SIDE_EFFECTS = frozenset({Op.SETITEM, Op.CALL_JIT})


def _may_deopt(ins: Instr) -> bool:
    return ins.op not in (Op.CONST, Op.JUMP, Op.BRANCH, Op.RETURN, Op.MAKE_TUPLE, Op.TUPLE_GET)


def _resume(dispatcher, spec, index, *values):
    """Called by native code at a failing guard: finish the call in tier 0."""
    spec.deopts[index] = spec.deopts.get(index, 0) + 1
    return dispatcher.resume_function(spec, index)(*values)


def compile_native(dispatcher, spec) -> NativeCode:
    """Compile one specialisation through LLVM and return its NativeCode."""
    import time

    from ...runtime import entry as entry_mod
    from .engine import compile_ir
    from .entry_wrapper import entry_function

    t0 = time.perf_counter()
    with _counter_lock:
        name = f"tj{next(_counter)}_{dispatcher.__name__}"
    if spec.core_cell is None:
        spec.core_cell = ctypes.c_void_p(0)
    impure: frozenset = frozenset()
    try:
        while True:
            mod = _Module()
            gen = FunctionCodegen(mod, dispatcher, spec, name, impure)
            try:
                core = gen.generate()
                break
            except _ImpureLoop as e:
                impure = impure | {e.header}
        if f"@{name}_core(" in core.split("\n", 1)[1]:
            core = _unroll_recursion(core, f"{name}_core")
        mod.functions.insert(0, core)
        cores = {f"{name}_core": core}
        cores.update((n, f) for n, f in _defined(mod.functions[1:]))
        mod.functions.append(entry_function(gen, name))
        text = mod.text()
        cm = compile_ir(text)
    except Unsupported:
        spec.core_cell = None
        raise
    spec.core_cell.value = cm.address(f"{name}_core")
    entry_addr = cm.address(f"{name}_entry")
    tier0 = spec.tier0
    callable_ = entry_mod.make_entry(dispatcher, tier0)
    entry_mod.set_slot(callable_, entry_addr)
    return NativeCode(entry_addr, spec.core_cell.value, callable_, gen.fs.states,
                      cm.llvm_text, text, time.perf_counter() - t0, gen.keepalive,
                      f"{name}_core", cores, set(mod.decls), set(mod.helpers))


def _unroll_recursion(core: str, name: str) -> str:
    """A self-recursive core calls an always-inlined twin that calls the core back, so
    LLVM inlines one level of the recursion into every call (as gcc does for fib)."""
    head, body = core.split("\n", 1)
    twin_head = head.replace(f"@{name}(", f"@{name}_twin(").replace("define ", "define internal ", 1)
    twin_head = twin_head[:-2] + " alwaysinline {"
    return head + "\n" + body.replace(f"@{name}(", f"@{name}_twin(") + "\n" + \
        twin_head + "\n" + body


def _defined(functions: list[str]):
    """(name, text) of the functions a module defines (after its own core)."""
    for f in functions:
        head = f.split("(", 1)[0]
        yield head.rsplit("@", 1)[1], f

