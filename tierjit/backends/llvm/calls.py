"""Calls from native code: into other jitted functions' native cores (inlined when they are
compiled, through their dispatch cell otherwise) and into Python, for operations native code
does not implement itself (mixed into FunctionCodegen).

A core returns {status, value}: 0 a value, 1 a Python exception is set, 2 the exact result
object after a deopt (in *objout). A Python call's result is unboxed to the expected type; a
surprising result deoptimises just after the call, handing tier 0 the object itself.
"""

from __future__ import annotations

import ctypes
import itertools

from ...errors import Unsupported
from ...ir.loops import natural_loops
from ...ir.nodes import Block, Instr
from ...types.lattice import ArrayT, TupleT, Type, UnionT
from ..pyops import native_callable
from .deopt import RARELY, USUALLY, ImpureLoop, published
from .lltypes import ll, union_members

TYPE_CHECKING = False
if TYPE_CHECKING:                       # pragma: no cover - typing only
    from .codegen import NativeCode

_embed_ids = itertools.count()


class CallOps:
    """Mixed into FunctionCodegen."""

    def pycall(self, b: Block, i: int, ins: Instr, a: list[str], ts: list[Type],
               rt: Type) -> str:
        """Call the Python function the op stands for; exact by construction. Its exception
        propagates (backends/pyops.py): tier 0 would make the call a second time, warning
        twice, or a jitted callee's effects twice."""
        fn = native_callable(ins, self.fn, self.dispatcher.py_func.__globals__)
        if fn is None:
            raise Unsupported(f"operation {ins.op.value} on {', '.join(map(str, ts))} in "
                              "native code", ins.line)
        self.keepalive.append(fn)
        if self.cur_region is not None:
            raise ImpureLoop(self.cur_region)   # tier 0 would run this call twice
        self.ended_region = True      # Python code may warn: never run it twice
        self.flush()
        boxed = [self.box(x, t) for x, t in zip(a, ts)]
        res = self.call_object(id(fn), boxed, steal=True)
        return self.take_result(b, i, res, rt)

    def take_result(self, b: Block, i: int, obj: str, rt: Type) -> str:
        """Unbox a call's new-reference result; NULL propagates the exception."""
        self.propagate_error_if(self.emit(f"icmp eq ptr {obj}, null"))
        if rt is None:
            self.decref(obj)
            return "0"
        fail = self.new_label("unboxfail")
        ok_label = self.new_label("unboxed")
        v = self.unbox_value(obj, rt, fail)
        if isinstance(rt, ArrayT) or has_arrays(rt):
            self.own(obj)
            if self.writes_arrays:
                self.incref(obj)                # handed over, or released: still owned
                self.writeable_or_deopt(b, i, v, rt, obj)
                self.decref(obj)
        else:
            self.decref(obj)
        self.emit_void(f"br label %{ok_label}")
        self.start(fail)
        after = self.fs.at(b, i + 1)
        self.deopt_with_object(after, obj)
        self.start(ok_label)
        return v

    def writeable_or_deopt(self, b: Block, i: int, v: str, t: Type, obj: str | None) -> None:
        """In a function that writes arrays, after call i of b returned arrays in v: unless
        all are writeable, deoptimise just after the call, handing tier 0 its result (obj,
        a new reference, or v boxed), where the store raises NumPy's error. Not a guard of
        the call's own frame state, which is before it: tier 0 would call again."""
        bad = self.read_only(v, t)
        no, yes = self.new_label("readonly"), self.new_label("writeable")
        self.emit_void(f"br i1 {bad}, label %{no}, label %{yes}{RARELY}")
        self.start(no)
        self.deopt_with_object(self.fs.at(b, i + 1), obj if obj is not None else self.box(v, t))
        self.start(yes)

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

    def publish_nesting(self, sign: int) -> None:
        """Around a call into Python (sign 1 before it, -1 after): the native calls this
        one nested below its entry count for native code Python calls (backends/nesting.py)."""
        if self.nests:
            self.emit_void(f"call void @{self.helper('publish')}(i64 %depth, ptr "
                           f"{published()}, i64 {sign})")

    def propagate_error_if(self, cond: str) -> None:
        err, ok = self.new_label("err"), self.new_label("noerr")
        self.emit_void(f"br i1 {cond}, label %{err}, label %{ok}{RARELY}")
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
                if has_arrays(it):
                    self.own_result_arrays(self.emit(f"extractvalue {ll(t)} {v}, {i}"), it)

    # -- calls between jitted functions -----------------------------------------------------
    def call_jit(self, ins: Instr, a: list[str], ts: list[Type], rt: Type) -> str | None:
        callee = ins.attr
        key = tuple(ts)
        if callee is self.dispatcher and key == self.spec.arg_types and not self.spec.values:
            fp = f"@{self.name}_core"       # (a value-specialised version's own self-calls
            # pass other values: they go to the generic version, below)
        else:
            spec = callee.specs.get(key)
            if spec is None or (spec.native is None and spec.core_cell is None):
                spec = callee.specialise(key)        # compiles the callee now
            if spec.gave_up is not None:
                return None             # its native code keeps deoptimising: call its entry
            if getattr(spec.native, "tier", None) == "baseline":
                return None             # copy-and-patch code has its own ABI: call its entry
            if spec.native is not None and spec.typed.return_type == rt \
                    and not natural_loops(spec.typed.fn):
                return self.call_core("@" + self.embed(spec.native), a, ts, rt)
            # A callee with loops is called, not embedded: a call costs nothing next to its
            # loops, and embedding would have LLVM optimise its body (and everything it
            # embedded) again in every caller, level after level of the call tree.
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
        self.flush()                    # the call must not run after a failed guard
        args += [f"ptr {objout}", "i64 %depth.next"]      # tested by the callee's prologue
        pair = self.emit(f"call {pair_t} {fp}({', '.join(args)})")
        st = self.emit(f"extractvalue {pair_t} {pair}, 0")
        ok, other = self.new_label("callok"), self.new_label("callnok")
        is0 = self.emit(f"icmp eq i32 {st}, 0")
        self.emit_void(f"br i1 {is0}, label %{ok}, label %{other}{USUALLY}")
        self.start(other)
        self.propagate_error_if(self.emit(f"icmp eq i32 {st}, 1"))
        obj = self.emit(f"load ptr, ptr {objout}")
        b, i = self.cur_block_index
        v2 = self.take_result(b, i, obj, rt)
        l2 = self.cur_label
        join = self.new_label("calljoin")
        self.emit_void(f"br label %{join}")
        self.start(ok)
        v1 = self.emit(f"extractvalue {pair_t} {pair}, 1")
        if has_arrays(rt):
            self.own_arrays_in(v1, rt)
            if self.writes_arrays:
                self.writeable_or_deopt(b, i, v1, rt, None)
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
        # The core keeps its name, available_externally: LLVM inlines it, and a call it
        # does not inline goes to the code the engine already has, not to a copy compiled
        # again. What the core embedded itself is internal to its module: copied, renamed.
        renames = {old: f"{old.split('__')[0]}__e{next(_embed_ids)}" for old in native.functions
                   if old != native.core_name}
        for old, text in native.functions.items():
            for was, new in renames.items():
                text = text.replace(f"@{was}(", f"@{new}(")
            self.mod.functions.append(_relink(
                text, "available_externally" if old == native.core_name else "internal"))
        self.mod.decls |= native.decls
        self.mod.helpers |= native.helpers
        self.keepalive.append(native)
        name = self.mod.embedded[id(native)] = native.core_name
        return name

    def own_arrays_in(self, v: str, t: Type) -> None:
        if isinstance(t, ArrayT):
            self.own(self.emit(f"extractvalue {ll(t)} {v}, 3"))
        elif isinstance(t, TupleT):
            for i, it in enumerate(t.items):
                if has_arrays(it):
                    self.own_arrays_in(self.emit(f"extractvalue {ll(t)} {v}, {i}"), it)

    # -- unions of one representation -------------------------------------------------------


def _relink(text: str, linkage: str) -> str:
    """A function definition's text with `linkage` in place of the one it had."""
    head = text.removeprefix("define ")
    for was in ("internal ", "available_externally "):
        head = head.removeprefix(was)
    return f"define {linkage} {head}"


def has_arrays(t: Type | None) -> bool:
    if isinstance(t, ArrayT):
        return True
    if isinstance(t, TupleT):
        return any(has_arrays(x) for x in t.items)
    return False
