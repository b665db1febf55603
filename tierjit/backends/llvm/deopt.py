"""Guards, deoptimisation and deopt regions of native code (mixed into FunctionCodegen).

A guard is a condition under which native code stops and hands its frame state to tier 0.
Guards of side-effect-free code are *deferred*: or-ed into one pending condition (NaN checks
into one pending sum) and tested once, before anything that must not run after a failed
guard — a trapping operation, a side effect, a terminator. Their frame state is the start of
their region, since tier 0 can recompute pure operations. A loop without stores, calls,
raises or returns is one region: its guards deoptimise to the loop's entry, with the values
its parameters entered with, and are tested once, when the loop is left.
"""

from __future__ import annotations

import ctypes

from ...ir.nodes import Block, Value
from ...ir.ops import Op
from ...types.lattice import ArrayT, Scalar, UnionT
from .. import gil, nesting
from . import ticker
from .lltypes import kind, ll, union_members

POLL_PERIOD = 1024          # loop back edges between two checks for pending signals
# Or-ed into a frame state's number at a deopt that is no failed guard (a call nested too
# deep, backends/nesting.py): tier 0 resumes there, the deopt is not counted.
NOT_COUNTED = 1 << 32
_ACCUMULATE = frozenset({Op.ADD, Op.SUB, Op.MUL, Op.TRUEDIV})

# Branch weights for a condition that is almost never true (a guard failing, a call raising)
# or almost always true (a type check passing): they let LLVM lay the cold paths out of line
# and place the register spills their calls need there, not in the loop around them.
RARELY = ', !prof !{!"branch_weights", i32 1, i32 1048576}'
USUALLY = ', !prof !{!"branch_weights", i32 1048576, i32 1}'


def published() -> str:
    """The address of the count of published native calls (backends/nesting.py), as an
    LLVM constant."""
    return f"inttoptr (i64 {ctypes.addressof(nesting.PUBLISHED)} to ptr)"


class ImpureLoop(Exception):
    """A loop taken for pure calls into Python: generate again without it as a region."""

    def __init__(self, header: Block):
        self.header = header


class DeoptOps:
    """Mixed into FunctionCodegen."""

    def deopt_if(self, cond: str, defer: bool = True) -> None:
        """Deoptimise to the current frame state when cond holds. A deferred guard (one
        that protects nothing that could trap: overflow, NaN, range) is or-ed into one
        pending condition, tested by `flush` before anything that must not run after it:
        a side effect, a terminator, a guard with another frame state. A guard that is not
        deferred (it protects a trapping operation: a load, a division) branches at once,
        on its own condition: the pending guards share its frame state and may go on
        waiting, since what runs after it is pure and cannot trap. (A store or a call
        tests them right before its effect.)"""
        if self.cur_fs is None:
            raise AssertionError("guard outside an instruction")
        if self.pending_fs is not None and self.pending_fs != self.cur_fs:
            self.flush()
        if defer:
            self.pending = cond if self.pending is None else \
                self.emit(f"or i1 {self.pending}, {cond}")
            self.pending_fs = self.cur_fs
            return
        self.branch_to_deopt(cond)

    def defer_non_finite(self, x: str, ll_type: str, operands: tuple[str, ...] = ()) -> None:
        """Deoptimise (deferred) if x is inf or NaN: the pending values are combined into
        one (`nan_sum`) that is NaN if any of them is not finite, tested once, at the flush.

        `operands` are values a finite x proves finite (those of an add, sub or mul, the
        dividend of a division): their own pending checks, with the same frame state, are
        dropped. In `s += a[i] * b[i]` only the sum is tested."""
        if self.pending_fs is not None and self.pending_fs != self.cur_fs:
            self.flush()
        if self.cur_ins in self.unchecked:        # checked when its loop is left
            for o in operands:
                self.nan_terms.pop(o, None)
            return
        d = self.emit(f"fpext float {x} to double") if ll_type == "float" else x
        for o in operands:
            self.nan_terms.pop(o, None)
        self.nan_terms[x] = d
        self.pending_fs = self.cur_fs

    def flush(self) -> None:
        """Test the pending guards: deoptimise to their frame state if any failed.
        In a pure loop, guards wait for the loop's exit (see flush_region): the pending
        conditions, the pending values' `nan_sum` tested among them, are or-ed into its
        flag here, once per block: one `or` per iteration on the loop's critical path (a
        running float sum of the values took an addition's latency, 3-4 cycles, in every
        iteration, and an integer `or` is reassociable, so it vectorises)."""
        nan = self.nan_sum(list(self.nan_terms.values()))
        self.nan_terms = {}
        if nan is not None:
            nan = self.emit(f"fcmp uno double {nan}, 0.0")
            self.pending = nan if self.pending is None else \
                self.emit(f"or i1 {self.pending}, {nan}")
        if self.cur_region is not None:
            if self.pending is not None:
                flag = self.region_slots[self.cur_region]
                old = self.emit(f"load i1, ptr {flag}")
                self.emit_void(f"store i1 {self.emit(f'or i1 {old}, {self.pending}')}, ptr {flag}")
            self.pending = self.pending_fs = None
            return
        if self.pending is not None:
            cond, self.pending = self.pending, None
            self.cur_fs, saved = self.pending_fs, self.cur_fs
            self.pending_fs = None
            self.branch_to_deopt(cond)
            self.cur_fs = saved

    def nan_sum(self, terms: list[str]) -> str | None:
        """One double that is NaN if any of `terms` is inf or NaN, else ±0.0: the sum of
        the terms times 0.0 (inf * 0.0 is NaN, NaN absorbs), each product fused into the
        sum (llvm.fmuladd: one FMA per term where the CPU has them, and no overflow to
        inf, as adding the terms themselves could)."""
        if not terms:
            return None
        self.declare("declare double @llvm.fmuladd.f64(double, double, double)")
        acc = self.emit(f"fmul double {terms[0]}, 0.0")
        for x in terms[1:]:
            acc = self.emit(f"call double @llvm.fmuladd.f64(double {x}, double 0.0, "
                            f"double {acc})")
        return acc

    def flush_region(self, h: Block, values: dict | None = None) -> None:
        """Leaving the pure loop of h (or polling in it): deoptimise to its entry if any of
        its guards failed or an accumulator (find_accumulators) is not finite. `values`
        are the values a back edge passes to its header's parameters: on h's own back
        edges, the accumulators' latest values are not the parameters yet."""
        f = self.emit(f"load i1, ptr {self.region_slots[h]}")
        terms = []
        for p in self.region_accumulators.get(h, ()):
            x = (values or {}).get(p, self.vals[p])
            t = p.type
            if isinstance(t, UnionT):               # float | numpy.float64: the double
                x = self.emit(f"extractvalue {ll(t)} {x}, 0")
                t = union_members(t)[0]
            terms.append(self.emit(f"fpext float {x} to double") if ll(t) == "float" else x)
        if terms:
            f = self.emit(f"or i1 {f}, {self.emit(f'fcmp uno double {self.nan_sum(terms)}, 0.0')}")
        self.cur_fs, saved = self.region_fs[h], self.cur_fs
        self.branch_to_deopt(f)
        self.cur_fs = saved

    def branch_to_deopt(self, cond: str) -> None:
        """Deoptimise to the current frame state when cond holds, through a block that
        first undoes the stores made since that frame state (see `store_undoably`)."""
        ok = self.new_label("ok")
        if self.undo:
            target = self.new_label("undo")
            self.undo_blocks.append((target, list(self.undo), self.cur_fs))
        else:
            target = f"deopt{self.cur_fs}"
            self.deopt_sites.setdefault(self.cur_fs, []).append((self.cur_label, None))
        self.emit_void(f"br i1 {cond}, label %{target}, label %{ok}{RARELY}")
        self.start(ok)

    def store_undoably(self, ty: str, x: str, p: str, align: int) -> None:
        """Store x at p, keeping the old value: a store does not end its block's region
        of guards, which go on waiting past it (one test for all the checks of
        `vel[k] -= dx * m; vel[k + 1] -= dy * m; ...`). A deopt to the region's frame
        state restores the old values, last store first, and tier 0 makes the stores
        again. Nothing else can see memory in between: native code holds the GIL."""
        old = self.emit(f"load {ty}, ptr {p}, align {align}")
        self.undo.append((ty, p, old, align))
        self.emit_void(f"store {ty} {x}, ptr {p}, align {align}")

    def deopt_unless(self, cond: str, defer: bool = True) -> None:
        self.deopt_if(self.emit(f"xor i1 {cond}, true"), defer)

    def deopt_with_object(self, fs: int, obj: str) -> None:
        """Jump to the deopt block of frame state fs, the object standing for the value the
        current instruction produced (a call whose result native code cannot take)."""
        self.deopt_sites.setdefault(fs, []).append((self.cur_label, obj))
        self.emit_void(f"br label %objdeopt{fs}")

    def emit_deopt_blocks(self) -> None:
        for label, undo, fs in self.undo_blocks:
            self.start(label)
            for ty, p, old, align in reversed(undo):
                self.emit_void(f"store {ty} {old}, ptr {p}, align {align}")
            self.deopt_sites.setdefault(fs, []).append((label, None))
            self.emit_void(f"br label %deopt{fs}")
        for fs, sites in self.deopt_sites.items():
            state = self.fs.states[fs & ~NOT_COUNTED]
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
        """Hand frame state fs to tier 0: its number and live values go, raw, into the
        function's one deopt buffer, with a constant string of their kinds, and the shared
        helper tj_resume boxes them, asks for the resume function and calls it. Each deopt
        site is a few stores and a call, not a boxing call per value: two thirds of a
        function's code was deopt sites, and LLVM compiled every one."""
        produced = self.fn.blocks[state.block].instrs[state.index - 1].result \
            if obj is not None else None
        subst = self.fs_subst.get(fs & ~NOT_COUNTED, {})
        values = [(str(fs), Scalar(int))]
        for v in state.live:
            if v is produced:
                values.append((obj, None))
            elif v in subst:                  # a pure loop's parameter: its entry value
                values.append((self.vals[subst[v]], subst[v].type))
            else:
                values.append((self.vals[v], v.type))
        kinds = []
        for i, (x, t) in enumerate(values):
            kind, ty, raw = self.packed(x, t)
            kinds.append(kind)
            p = self.emit(f"getelementptr i64, ptr %deoptbuf, i64 {i}")
            self.emit_void(f"store {ty} {raw}, ptr {p}")
        self.deopt_buffer = max(self.deopt_buffer, len(values))
        table = "@tj_kinds_" + "".join(map(str, kinds))
        data = "".join("\\0" + str(k) for k in kinds)    # bytes as LLVM's hex escapes
        self.declare(f"{table} = private unnamed_addr constant [{len(kinds)} x i8] c\"{data}\"")
        self.helper("resume")
        self.helper("publish")
        res = self.emit(f"call ptr @tj_resume(ptr {self.addr(id(self.resume_obj))}, "
                        f"ptr %deoptbuf, ptr {table}, i64 {len(values)}, i64 %depth, "
                        f"ptr {published()})")
        self.release_owned()
        fail = self.emit(f"icmp eq ptr {res}, null")
        err, ok = self.new_label("deopterr"), self.new_label("deoptok")
        self.emit_void(f"br i1 {fail}, label %{err}, label %{ok}{RARELY}")
        self.start(err)
        self.ret_status(1)
        self.start(ok)
        self.emit_void(f"store ptr {res}, ptr %objout")
        self.ret_status(2)

    def packed(self, x: str, t) -> tuple[int, str, str]:
        """(kind, LLVM type, value) of one deopt buffer slot; the kinds are tj_resume's:
        0 a new reference, 1 an int64, 2 a double, 3 a borrowed reference."""
        if t is None:
            return 0, "ptr", x
        if t == Scalar(int):
            return 1, "i64", x
        if t == Scalar(float):
            return 2, "double", x
        if t == Scalar(bool):
            return 3, "ptr", self.emit(f"select i1 {x}, ptr {self.addr(id(True))}, "
                                       f"ptr {self.addr(id(False))}")
        if t == Scalar(type(None)):
            return 3, "ptr", self.addr(id(None))
        if isinstance(t, ArrayT):
            return 3, "ptr", self.emit(f"extractvalue {ll(t)} {x}, 3")
        return 0, "ptr", self.box(x, t)

    # -- values and edges -----------------------------------------------------------------

    def poll_signals(self, values: dict, counted: bool = True) -> None:
        """Every POLL_PERIOD back edges, let CPython run pending signal handlers, so Ctrl-C
        interrupts a long native loop with KeyboardInterrupt (status 1: exception set), and
        test a pure loop's pending guards. `values`: the loop parameters' values on the
        back edge. Not `counted`: every time (a chunked loop's chunk ends)."""
        check, cont = self.new_label("poll"), self.new_label("polled")
        if counted:
            c = self.emit(f"load i32, ptr {self.poll_count}")
            c1 = self.emit(f"add i32 {c}, 1")
            self.emit_void(f"store i32 {c1}, ptr {self.poll_count}")
            due = self.emit(f"icmp eq i32 {self.emit(f'and i32 {c1}, {POLL_PERIOD - 1}')}, 0")
            self.emit_void(f"br i1 {due}, label %{check}, label %{cont}, !prof !{{!\"branch_weights\", i32 1, i32 {POLL_PERIOD}}}")
        else:
            self.emit_void(f"br label %{check}")
        self.start(check)
        if self.cur_region is not None:
            # A failed guard in a pure loop is only tested when the loop is left; if the
            # loop's own exit test depends on the value that broke it (x = x * 3 wrapping),
            # it would never leave. Testing here too bounds the pointless work to
            # POLL_PERIOD iterations, which change nothing tier 0 can see.
            self.flush_region(self.cur_region, values)
        self.signals_then(cont)

    def poll_ticked(self) -> None:
        """On entering a core that makes native calls: the poll above, when the ticker has
        raised its flag since the last one (ticker.py), so that a recursion without loops
        answers Ctrl-C and lets other threads run too. (recursion.py takes the read out of a
        self-recursive core's twins: one per native frame of the recursion.)"""
        flag = f"ptr inttoptr (i64 {ticker.flag_address()} to ptr)"
        check, cont = self.new_label("ticked"), self.new_label("unticked")
        up = self.emit(f"load atomic i32, {flag} monotonic, align 4")
        self.emit_void(f"br i1 {self.emit(f'icmp ne i32 {up}, 0')}, label %{check}, "
                       f"label %{cont}{RARELY}")
        self.start(check)
        self.emit_void(f"store atomic i32 0, {flag} monotonic, align 4")
        self.signals_then(cont)

    def signals_then(self, cont: str) -> None:
        """A due poll's work, then on to label `cont`: the GIL offered, pending signal
        handlers run, and the exception one raises (Ctrl-C's KeyboardInterrupt) propagated."""
        self.declare("declare i32 @PyErr_CheckSignals()")
        self.publish_nesting(1)              # a signal handler may call native code
        self.offer_gil()
        raised = self.emit("call i32 @PyErr_CheckSignals()")
        self.publish_nesting(-1)
        self.propagate_error_if(self.emit(f"icmp ne i32 {raised}, 0"))
        self.emit_void(f"br label %{cont}")
        self.start(cont)

    def offer_gil(self) -> None:
        """Offer the GIL to a waiting thread once its time has come (backends/gil.py)."""
        self.emit_void(f"call void @{self.helper('offer_gil')}(ptr inttoptr (i64 "
                       f"{ctypes.addressof(gil.STATE)} to ptr))")

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
            if len(entries) != 1 or any(i.op in impure and i not in self.inlined
                                        for b in body for i in b.instrs):
                continue
            for b in body:
                self.region_of[b] = h
            self.region_slots[h] = self.alloca("i1")
            fs = self.fs.at(h, 0)
            self.region_fs[h] = fs
            self.fs_subst[fs] = {}
            self.find_accumulators(h, body)

    def find_accumulators(self, h: Block, body: set) -> None:
        """Float parameters of pure loop h that each iteration only updates by one add,
        sub, mul or division (`s += a[i] * b[i]`): their non-finite checks are made once,
        on the value that leaves the loop (and at each signal poll), not per iteration.
        Inf and NaN are absorbing under these ops (inf + x is inf or NaN, inf * 0.0 is
        NaN), so an update that went non-finite leaves a non-finite value behind when the
        loop is left — only from its header, which is required — and the region's
        deopt replays the whole loop in tier 0 either way. A division keeps the check of
        its divisor's own update (x / inf is 0.0) by allowing the parameter only as the
        dividend."""
        if any(e.block not in body for b in body if b is not h for e in b.terminator.targets):
            return
        uses: dict[Value, int] = {}
        for b in self.fn.blocks:
            for ins in b.instrs:
                for a in ins.args + [x for e in ins.targets for x in e.args]:
                    uses[a] = uses.get(a, 0) + 1
        defs = {ins.result: ins for b in body for ins in b.instrs if ins.result is not None}
        back = [e for b in body for e in b.terminator.targets if e.block is h]
        for i, p in enumerate(h.params):
            if not all(isinstance(m, Scalar) and kind(m).cls == "float"
                       for m in (union_members(p.type) if isinstance(p.type, UnionT)
                                 else [p.type])):
                continue
            updates = []
            for e in back:
                r = e.args[i]
                if r is p:
                    continue
                ins = defs.get(r)
                if ins is None or ins.op not in _ACCUMULATE or uses[r] != 1 or \
                        p not in ins.args or ins.op is Op.TRUEDIV and ins.args[0] is not p:
                    break
                updates.append(ins)
            else:
                for ins in updates:
                    self.unchecked.add(ins)
                if updates:
                    self.region_accumulators.setdefault(h, []).append(p)

    def note_region_entry(self, h: Block, args: list[Value]) -> None:
        """The region's frame state resumes h with the values its parameters enter with."""
        self.fs_subst[self.region_fs[h]] = dict(zip(h.params, args))
