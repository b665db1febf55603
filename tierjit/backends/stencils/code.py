"""A specialisation compiled by copy-and-patch: compile_baseline and the BaselineCode it
returns (what the dispatcher needs — entry, frame states — like the LLVM tier's NativeCode).

Baseline code of one function is one region of the code arena:

    entry  vectorcall: unbox by the argument descriptor, call the core, box the result
    core   the prologue: a frame on the C stack, arguments and constants copied in, then
    body   the chain of stencils, block after block
    stubs  one deopt stub per frame state a guard can fail at
    data   the constant table, the entry's descriptors; trampolines to C functions

Deoptimisation calls `_Hooks.deopt(frame address, frame state)` (Python): it boxes the frame
state's live values out of the frame and answers the tier-0 function that resumes the call
(the dispatcher's `resume_function`, like the LLVM tier), which the deopt stub calls.
Operations without a stencil call `_Hooks.pyop`.
"""

from __future__ import annotations

import ctypes
import struct
import time
from _thread import get_ident
from dataclasses import dataclass, field

from ...errors import Unsupported
from ...ir.ops import Op
from ...passes.pipeline import optimise_for_baseline
from ...runtime import entry as entry_mod
from ...runtime.names import guard_for
from ...types.lattice import ArrayT, Scalar, TupleT, Type
from ..nesting import NATIVE_STACK
from . import codemem, frame as fr, library, templates as T
from .emit import STUB, STUB_HOLE, Data, Label, emit, note_perf, perf_enabled, shared
from .kinds import width
from .select import OWN, Selection

_TRUE = id(True)
STAY = object()            # what a loop exit returns when the call resumes in tier 0 instead
DEPTH_SITE = 0xFFFF        # the deopt "site" of that: not a failed guard, not counted


@dataclass(eq=False, repr=False)
class BaselineCode:
    """A specialisation in baseline code: what the dispatcher needs to call it and to
    resume it (the baseline tier's NativeCode)."""

    entry_address: int
    core_address: int
    entry_callable: object
    frame_states: list
    code_size: int
    compile_seconds: float
    pieces: list
    stubs: list                # the deopt stubs' frame state words (laid out after the pieces)
    keepalive: list = field(default_factory=list)
    tier = "baseline"
    core_cell: ctypes.c_void_p | None = None
    region: tuple[int, int] | None = None      # (address, size) in the code arena
    # loop header (block id) -> its exit; frame state -> where a call leaving there goes
    exits: dict = field(default_factory=dict)
    leaving: dict = field(default_factory=dict)
    climb: object = None                       # its calls' tier-up (runtime/tierup.py)
    # the self-calls' exit: opened, each leaves to tier 0, which calls through the slot
    calls_exit: LoopExit | None = None
    fn: object = None                          # the typed IR it was made from
    return_type: object = None
    frame_bytes: int = 0
    given_up: bool = False     # it deoptimised max_deopts times: no calls run it any more

    def body_depth(self) -> int:
        """The running calls' count (codemem.Arena.active) that the body of a call of this
        code made now through its entry sees: the entry adds 1, the core prologue the frame's
        bytes and 256 (shared_ir.py)."""
        return codemem.arena().active.value + 1 + self.frame_bytes + 256

    def __del__(self) -> None:
        # the pages go back to the pool once no baseline call runs (codemem.Arena.free)
        if self.region is not None:
            try:
                codemem.arena().free(*self.region)
            except Exception:       # noqa: BLE001 - interpreter shutdown
                pass

    @property
    def llvm_text(self) -> str:
        return "; baseline code: copied stencils, no LLVM IR\n" + "\n".join(
            [f"; {n} {h}" for n, h in self.pieces]
            + [f"; {STUB} {{'{STUB_HOLE}': {w}}}" for w in self.stubs])

    @property
    def asm(self) -> str:
        return self.llvm_text


@dataclass(slots=True, eq=False)
class LoopExit:
    """A loop header's way out of baseline code: its polls leave the call through the deopt
    stub of frame state `state` (the header's) once word `k` of `words` is open, and the call
    goes on in what `BaselineCode.leaving[state]` calls (runtime/tierup.py). The self-calls'
    exit is one too (state -1: each self-call has its own)."""

    state: int
    words: ctypes.Array
    k: int
    taken: int = 0                  # calls that left by it

    def open(self, word: int = 1) -> None:
        """(`word`: a loop's, the running calls' count its frame runs at; see templates.py)"""
        self.words[self.k] = word

    def close(self) -> None:
        self.words[self.k] = 0


class _Hooks:
    """The Python side of one function's baseline code (deopt and pyop targets)."""

    def __init__(self, dispatcher, spec, sel: Selection, own: bool):
        self.dispatcher, self.spec, self.own = dispatcher, spec, own
        self.fn = sel.fn
        self.deopt_count = 0
        self.offset = sel.offset
        self.overrides = sel.overrides
        self.states = sel.fs.states
        self.resumes: dict = {}
        self.leaving: dict = {}       # frame state -> f(values): a loop exit (BaselineCode)
        self.code = None
        self.on_give_up = None
        self.pyops = []
        if sel.pyops:
            from ..pyops import native_callable
            # each operation's function and globals: an inlined callee's are its own
            own_place = (sel.fn, dispatcher.py_func.__globals__)
            place = {c: (body, call.attr.py_func.__globals__)
                     for call, body in sel.inlined.items()
                     for blk in body.blocks for c in blk.instrs}
        # the deopt sites of operations' results handed over (not a callee's): counted
        self.counted_sites: set[int] = set()
        for ins, n, _h in sel.pyops:
            # a result is handed over (select_ops.pyop): the override's slot
            handed_at = sel.overrides[(n >> 32) - 1][1] if n >> 32 else None
            if n >> 32 and ins.op is not Op.CALL_JIT:
                self.counted_sites.add(n >> 32)
            where = place.get(ins, own_place)
            self.pyops.append((native_callable(ins, *where),
                               [(sel.offset[a], a.type) for a in ins.args],
                               None if ins.result is None else
                               (sel.offset[ins.result], ins.result.type), handed_at,
                               (ins, *where)))
        # thread -> (a located raise, the exception) an operation raised: its deopt raises it
        self.raised: dict[int, tuple] = {}

    def deopt(self, addr: int, index: int) -> tuple:
        """Box the live values of frame state `index`: (the tier-0 function that finishes
        the call, its arguments), which the deopt stub calls; or (None, the result) when a
        loop exit has made the rest of the call."""
        site, index = index >> 32, index & 0xFFFFFFFF
        if self.raised:
            raised = self.raised.pop(get_ident(), None)
            if raised is not None:                     # (see pyop)
                return raised
        override, obj_at = self.overrides[site - 1] if 0 < site < DEPTH_SITE else (None, 0)
        values = []
        obj = None
        if override is not None:
            # the callee deoptimised and returned this object (a reference we own)
            p = ctypes.c_void_p.from_address(addr + obj_at).value
            obj = ctypes.cast(p, ctypes.py_object).value
            ctypes.pythonapi.Py_DecRef(ctypes.c_void_p(p))
        offset = self.offset
        fs = self.states[index]      # the values and the resume function: one frame state
        for v in fs.live:
            values.append(obj if v is override else fr.box(v.type, addr + offset[v]))
        leave = self.leaving.get(index) if not site else None
        if leave is not None:
            # a poll leaving by its loop's exit (or a guard failing at the loop header): the
            # rest of the call runs elsewhere, unless that code cannot take these values
            result = leave(values)
            if result is not STAY:
                return None, result
        spec = self.spec
        # A callee that deoptimised hands its result on: not a failed guard of this code,
        # so not counted (a deep recursion would otherwise count one per frame).
        counted = not site or site in self.counted_sites
        if counted and self.own and spec.native is self.code:
            spec.deopts[index] = spec.deopts.get(index, 0) + 1
            return self.dispatcher.resume_function(spec, index), tuple(values)
        # this code is not (or no longer) the specialisation's native code (adaptive
        # tiering's baseline code, or a callee's kept for baseline callers): its own resume
        # functions, its own deopt count
        if counted:
            self.deopt_count += 1
            if self.deopt_count == _max_deopts() and self.on_give_up is not None:
                self.on_give_up()
        return self._resume(index), tuple(values)

    def _resume(self, index: int):
        """This code's own tier 0 from frame state `index` on."""
        f = self.resumes.get(index)
        if f is None:
            from ..pyemit import compile_tier0
            f = self.resumes[index] = compile_tier0(self.fn, self.states[index],
                                                    name=self.dispatcher.__name__)
        return f

    def resume_uncounted(self, index: int, ex: LoopExit):
        """Where a self-call leaving by exit `ex` goes (BaselineCode.leaving): tier 0 from
        frame state `index`, which makes the call through the slot; not a deopt."""
        def leave(values: list):
            ex.taken += 1
            return self._resume(index)(*values)
        return leave

    def pyop(self, k: int, addr: int) -> bool:
        """Make operation k in Python (once: tier 0 making it again would warn again, or
        make a jitted callee's effects again). A jitted callee's exception propagates; any
        other operation's is raised again by the deopt False makes, from a frame at the
        operation's line. False also deoptimises after the operation, handing tier 0 a
        result native code cannot take (`handed_at`)."""
        fn, args, res, handed_at, where = self.pyops[k]
        try:
            r = fn(*[fr.box(t, addr + off) for off, t in args])
        except Exception as e:
            if where[0].op is Op.CALL_JIT:
                raise
            # what came after the operation's own frame (and this one's)
            tb = e.__traceback__.tb_next
            e.__traceback__ = tb.tb_next if tb is not None else None
            from ..pyops import located_raise
            self.raised[get_ident()] = (located_raise(*where), (e,))
            return False
        if res is None:
            return True
        off, t = res
        if fr.type_fits(r, t) and fr.unbox(r, t, addr + off, _owned(addr)):
            return True
        if handed_at is not None:             # a new reference, taken by deopt()
            ctypes.pythonapi.Py_IncRef(ctypes.py_object(r))
            ctypes.c_void_p.from_address(addr + handed_at).value = id(r)
        return False


def _owned(addr: int) -> list:
    """The list that owns objects made by calls into Python during this call (slot OWN);
    the core prologue releases it when the call ends."""
    cell = ctypes.c_void_p.from_address(addr + OWN)
    if not cell.value:
        lst: list = []
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(lst))
        cell.value = id(lst)
        return lst
    return ctypes.cast(cell.value, ctypes.py_object).value


def _arg_record(t: Type) -> list[int]:
    if isinstance(t, Scalar):
        py = t.py
        if py is int:
            return [T.K_INT, id(int), 0, 0]
        if py is float:
            return [T.K_FLOAT, id(float), 0, 0]
        if py is bool:
            return [T.K_BOOL, id(True), id(False), 0]
        if py is type(None):
            return [T.K_NONE, id(None), 0, 0]
        if fr.is_np_float(t):
            return [T.K_NPFLOAT, id(py), 4 if py.__name__ == "float32" else 8, 0]
        if fr.is_np_int(t):
            import numpy as np
            dt = np.dtype(py)
            return [T.K_NPINT, id(py), dt.itemsize | (256 if dt.kind in "ub" else 0), 0]
    if isinstance(t, ArrayT):
        import numpy as np
        return [T.K_ARRAY, id(np.ndarray), id(np.dtype(t.dtype).type),
                t.ndim | ((t.layout == "C") << 8)]
    raise Unsupported(f"an argument of type {t} at the baseline entry")


def _result_record(t: Type | None, slot: int) -> list[int]:
    if t is None or t == Scalar(type(None)):
        return [T.K_NONE, id(None), 0, slot]
    if fr.float_union(t):
        import numpy as np
        return [T.K_UNION, id(np.float64), 0, slot]
    if isinstance(t, (Scalar, ArrayT)):
        rec = _arg_record(t)
        return [rec[0], rec[1], rec[2], slot]
    raise Unsupported(f"a result of type {t} at the baseline entry")


_descriptor_cache: dict[tuple, tuple[bytes, bytes]] = {}


def _descriptors(sel: Selection, params, ret: Type | None) -> tuple[bytes, bytes]:
    """The entry's argument and result descriptors: a function of the types alone, so
    remembered per signature."""
    key = (*[p.type for p in params], ret)
    d = _descriptor_cache.get(key)
    if d is None:
        d = _descriptor_cache[key] = _make_descriptors(sel, params, ret)
    return d


def _make_descriptors(sel: Selection, params, ret: Type | None) -> tuple[bytes, bytes]:
    args = [len(params), max(sel.nargs, 1)]
    for p in params:
        args += _arg_record(p.type)
    if isinstance(ret, TupleT):
        res = [T.K_TUPLE, 0, len(ret.items), 0]
        slot = 0
        for it in ret.items:
            if isinstance(it, TupleT):
                raise Unsupported(f"a result of type {ret} at the baseline entry")
            res += _result_record(it, slot)
            slot += len(fr.slots(it))
    else:
        res = _result_record(ret, 0)
    return struct.pack(f"<{len(args)}q", *args), struct.pack(f"<{len(res)}q", *res)


def baseline_cells(dispatcher) -> dict:
    """Per dispatcher: argument types -> the cell holding that specialisation's baseline core
    (its own ABI, unlike the LLVM tier's core cells). Created before the code exists, so that
    recursive and mutually recursive calls can refer to it."""
    cells = dispatcher.__dict__.get("_baseline_cells")
    if cells is None:
        cells = dispatcher.__dict__.setdefault("_baseline_cells", {})
    return cells


def compile_baseline(dispatcher, spec, typed=None, fallback=None, *,
                     python_in_loops: bool = True) -> BaselineCode:
    """Copy and patch the stencils of spec's typed IR (or of `typed`, an optimised copy);
    raises Unsupported for what the baseline tier cannot do. Calls the entry does not take go
    to `fallback` (default: spec's tier 0). `python_in_loops=False` (adaptive tiering) also
    declines code that would call Python for an operation inside a loop (see _pyop_in_loop)."""
    t0 = time.perf_counter()
    # the cell callers use: only the specialisation's own code goes there (not a value
    # specialisation's, which is only right for some argument values)
    publish = dispatcher.specs.get(spec.arg_types) is spec
    me = (dispatcher, spec.arg_types) if publish else None
    # the specialisation's own native code (not adaptive tiering's or an OSR entry's, made
    # from their own copies): its deopts are the dispatcher's to count and learn from
    own = typed is None
    typed = typed if typed is not None else spec.typed
    fn = optimise_for_baseline(typed.fn, me)
    ret = typed.return_type
    sel = Selection(fn, ret, me)
    sel.select()
    # the exit words: one per loop header its polls read (K3), then the one its self-calls
    # read (K4); runtime/tierup.py sets them
    exits: dict = {}
    for _h, header in sel.polls:
        exits.setdefault(header, len(exits))
    words = (ctypes.c_int64 * (len(exits) + 1))()
    active = ctypes.addressof(codemem.arena().active)
    for h, header in sel.polls:
        h["K3"], h["K4"] = ctypes.addressof(words) + 8 * exits[header], active
    for h, _n in sel.self_calls:
        h["K4"] = ctypes.addressof(words) + 8 * len(exits)
    if not python_in_loops and sel.pyops:
        _pyop_in_loop(fn, sel.pyops)
    if ret is not None and width(ret) > 16:
        raise Unsupported("a result of more than 16 slots")
    lib = library.load()
    # too deep a recursion deoptimises at frame state 0 (asked for before the hooks copy
    # the frame states)
    entry_stub = sel.fs.at(fn.entry, 0)
    hooks = _Hooks(dispatcher, spec, sel, own)
    keep: list = [hooks, words]
    deopt_fn = hooks.deopt
    keep.append(deopt_fn)
    sel.finish()
    for k, (_ins, _n, h) in enumerate(sel.pyops):
        f = _bind(hooks.pyop, k)
        keep.append(f)
        h["K"], h["K2"] = id(f), _TRUE
    # callees: their baseline cells (compiled first when they are not yet)
    if publish:
        my_cell = baseline_cells(dispatcher).setdefault(spec.arg_types, ctypes.c_void_p(0))
    else:
        my_cell = ctypes.c_void_p(0)
    for h, callee, key in sel.call_cells:
        cells = baseline_cells(callee)
        cell = cells.get(key)
        if cell is None:
            cell = cells.setdefault(key, ctypes.c_void_p(0))
            _compile_callee(callee, key)
        if not cell.value and cell is not my_cell and not _pending(callee, key):
            raise Unsupported(f"the call of {callee.__qualname__} (no baseline code for it)")
        h["K"] = ctypes.addressof(cell)
        keep.append(cell)
        other = callee.specs.get(key)
        if other is not None and isinstance(other.native, BaselineCode):
            keep.append(other.native)
    # layout: entry thunk, core thunk, body..., deopt stubs; data: the function descriptor,
    # constants, the entry's descriptors
    ext = shared(lib, active, entry_mod.FALLBACK_OFFSET)
    for h, _n in sel.self_calls:
        h["K3"] = active
    pieces = sel.pieces
    depth_stub = sel.stub(entry_stub | DEPTH_SITE << 32)
    consts = struct.pack(f"<{len(sel.consts)}q", *sel.consts)
    args_desc, res_desc = _descriptors(sel, fn.entry.params, ret)
    c_at = 72
    a_at = c_at + len(consts)
    r_at = a_at + len(args_desc)
    counts = sel.nargs | (sel.nconsts << 20) | (NATIVE_STACK << 40)
    fd = struct.pack("<9q", sel.frame_bytes, counts, 0, 0, 0, id(deopt_fn), 0, 0, 0)
    data = fd + consts + args_desc + res_desc
    refs = [(16, Data(c_at)), (24, Label(2)), (32, depth_stub),
            (48, Data(a_at)), (56, Data(r_at)), (64, Label(1))]
    guard = guard_for(dispatcher, typed.fn)        # (its calls as typed, none inlined)
    if guard is None:
        pieces[0] = ("entry_thunk", {"K": Data(0)})
    else:               # runtime/names.py: the names check first
        pieces[0] = ("entry_thunk_guarded", {"K": Data(0), "KT": guard.address,
                                             "KH": id(guard)})
        ext = dict(ext, NAMES=entry_mod.names_check_address())
        keep.append(guard)
    pieces[1] = ("core", {"K": Data(0)})
    out = emit(lib, pieces, data, ext, refs, sel.stubs)
    _note_perf(out, dispatcher)
    core = out.starts[1]
    callable_ = entry_mod.make_entry(dispatcher, fallback if fallback is not None else
                                     spec.tier0 if spec.tier0 is not None else
                                     dispatcher.py_func)
    entry_mod.set_slot(callable_, out.starts[0])
    my_cell.value = core
    code = BaselineCode(out.starts[0], core, callable_, sel.fs.states, out.code_size,
                        time.perf_counter() - t0, pieces, sel.stubs, keep)
    code.core_cell = my_cell
    code.exits = {b.id: LoopExit(sel.fs.at(b, 0), words, k) for b, k in exits.items()}
    if sel.self_calls:
        ex = code.calls_exit = LoopExit(-1, words, len(exits))
        for _h, n in sel.self_calls:
            hooks.leaving[n] = hooks.resume_uncounted(n, ex)
    code.fn, code.return_type, code.frame_bytes = fn, ret, sel.frame_bytes
    code.leaving = hooks.leaving
    hooks.code = code
    if publish:
        # the cell's code stays alive as long as the cell points at it
        dispatcher.__dict__.setdefault("_baseline_cell_code", {})[spec.arg_types] = code
    code.region = (out.region.address, out.region.size)
    return code


def _pyop_in_loop(fn, pyops: list) -> None:
    """Raise Unsupported for the first operation in a loop that baseline code would make by
    calling Python (`pyop`: boxing its operands, the call, unboxing the result; several
    microseconds): such code runs slower than the CPython it would replace (`(v[i] - q) ** 2`
    on NumPy floats: ~30x), so adaptive tiering leaves the function to LLVM."""
    from ...ir.loops import natural_loops
    in_loops = {id(ins) for body in natural_loops(fn).values() for b in body
                for ins in b.instrs}
    for ins, _n, _holes in pyops:
        if id(ins) in in_loops:
            raise Unsupported(f"{ins.op.value} of {', '.join(str(a.type) for a in ins.args)} "
                              "in a loop, made by calling Python", ins.line)


def _max_deopts() -> int:
    from ...runtime.config import config
    return config.max_deopts


def _bind(method, k):
    return lambda addr: method(k, addr)


_building: set = set()


def _pending(callee, key) -> bool:
    return (id(callee), key) in _building


def _compile_callee(callee, key) -> None:
    """Build a callee's baseline code now (its typed IR, passes, tier 0 first)."""
    from ...runtime import baseline as policy
    _building.add((id(callee), key))
    try:
        policy.ensure_baseline(callee, key)
    finally:
        _building.discard((id(callee), key))


def _note_perf(out, dispatcher) -> None:
    if perf_enabled():
        note_perf(out.starts[0], out.code_size, f"tierjit:baseline:{dispatcher.__qualname__}")
