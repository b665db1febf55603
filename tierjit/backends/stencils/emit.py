"""The copy-and-patch emitter: lay pieces out, copy their stencils, patch their holes.

A piece is one use of a stencil: its name and the values of its holes. Values are ints
(slot offsets, constants), `Label`s (the address of another piece: a jump target, the core),
`Stub`s (the address of a deopt stub) or `Data` (an offset into the function's data, placed
after its code).
`NEXT` defaults to the piece laid out next; when a stencil ends in `jmp NEXT` to that very
piece the jump is dropped (code falls through), as CPython's JIT does.

Relocation kinds (x86-64 psABI): R_X86_64_64 gets S + A; R_X86_64_32 / 32S get S + A, which
must fit (slot offsets and small constants do); R_X86_64_PC32 / PLT32 get S + A - P. Every
piece and the library's data share one arena (codemem.py), so PC-relative references between
them always reach; C functions are reached through a trampoline in the function's own region
(`jmp *0(%rip)` followed by the 64-bit address) whatever their distance.
"""

from __future__ import annotations

import ctypes
import struct

from ...runtime.config import config
from .. import gil
from . import codemem
from .library import Library
from .relocs import R_X86_64_32, R_X86_64_32S, R_X86_64_64, R_X86_64_PC32, R_X86_64_PLT32
from .templates import C_FUNCTIONS, LIBM, SMALL_HOLES

_pack_q, _pack_i, _pack_I = struct.Struct("<q").pack_into, struct.Struct("<i").pack_into, \
    struct.Struct("<I").pack_into
_TRAMPOLINE = b"\xff\x25\x00\x00\x00\x00"      # jmp *0(%rip); the address follows
# a deopt stub: store the frame state's word (its one hole of its own), jump to the deopt
# routine (templates.py)
STUB, STUB_HOLE = "deopt_site", "K2"
_c_addresses: dict[str, int] = {}


class Label(int):
    """The address of piece number `int(self)`."""


class Stub(int):
    """The address of deopt stub number `int(self)` (the stubs are laid out after the pieces,
    so selection can name one before it knows how many pieces there will be)."""


class Data(int):
    """An address `int(self)` bytes into the function's data."""


class EmitError(RuntimeError):
    pass


class Emitted:
    """What emit() made: its sealed region and where each piece and the data start (the
    output of a linker run)."""

    def __init__(self, region: codemem.Region, starts: list[int], data_address: int,
                 code_size: int) -> None:
        self.region = region
        self.starts = starts       # address of every piece
        self.data_address = data_address
        self.code_size = code_size


def c_address(name: str) -> int:
    """Address of a C function of the running process (libpython, libc, libm)."""
    a = _c_addresses.get(name)
    if a is None:
        try:
            fn = getattr(ctypes.pythonapi, name)
        except AttributeError:
            fn = getattr(ctypes.CDLL(None), name)
        a = _c_addresses[name] = ctypes.cast(fn, ctypes.c_void_p).value
    return a


class LibraryData:
    """The library's shared read-only data, placed in the arena once per process."""

    _regions: dict[int, int] = {}

    @classmethod
    def address(cls, lib: Library) -> int:
        a = cls._regions.get(id(lib))
        if a is None:
            r = codemem.arena().allocate(max(len(lib.data), 1))
            r.write(0, lib.data)
            r.seal(executable=False)
            cls._regions[id(lib)] = a = r.address
            cls._keep = getattr(cls, "_keep", []) + [r, lib]
        return a


def emit(lib: Library, pieces: list[tuple[str, dict]], data: bytes,
         externals: dict[str, int] | None = None,
         data_refs: list[tuple[int, int]] = (), stubs: list[int] = ()) -> Emitted:
    """Copy and patch `pieces` (in order) into a new sealed region, with `data` after them.
    `externals` gives the addresses of holes outside the region (the shared routines and
    trampolines, see shared()); C functions it does not name get trampolines here.
    `data_refs` are (offset in data, Label or Data): 64-bit addresses to store in the data.
    `stubs` are deopt stubs (the STUB stencil), each given by the value of its STUB_HOLE,
    laid out after the pieces (Stub(k) is stub k): being alike but for that word, they are
    copied and patched in one go."""
    ext = externals or {}
    patches = _patches(lib)
    n = len(pieces)
    m = len(stubs)
    # layout: drop a final `jmp NEXT` that would jump to the following piece
    starts = [0] * (n + m + 1)
    used: list[Patch] = [None] * n        # type: ignore[list-item]
    at = 0
    for i, (name, holes) in enumerate(pieces):
        try:
            p, short = patches[name]
        except KeyError:
            raise EmitError(f"no stencil {name!r}") from None
        if short is not None:
            nxt = holes.get(short.tail_target)
            if nxt is None and short.tail_target == "NEXT" or nxt == i + 1 and type(nxt) is Label:
                p = short
        used[i] = p
        starts[i] = at
        at += p.size
    stub = patches[STUB][0]
    starts[n:n + m] = range(at, at + m * stub.size, stub.size)
    code_size = starts[n + m] = at + m * stub.size
    cfuncs: dict[str, int] = {}
    for p in used + [stub] if m else used:
        for name in p.calls:
            if name not in ext and name not in cfuncs:
                cfuncs[name] = 0
    tramp_at = (code_size + 15) & ~15
    for k, name in enumerate(cfuncs):
        cfuncs[name] = tramp_at + 16 * k
    data_at = (tramp_at + 16 * len(cfuncs) + 15) & ~15
    region = codemem.arena().allocate(data_at + len(data))
    base = region.address
    addr = [base + s for s in starts]
    data_base = base + data_at
    lib_data = LibraryData.address(lib)

    def fixed(t: str, name: str) -> int:
        """The address of a hole that names no piece: library data or a trampoline."""
        if t == "@data":
            return lib_data
        if t in cfuncs:
            return base + cfuncs[t]
        raise EmitError(f"stencil {name}: no value for hole {t}")

    # every stencil's bytes in one copy (the stubs packed in one go); then the pieces'
    # holes, one pack_into each
    buf = bytearray().join([p.code for p in used])
    if m:
        buf += _pack_stubs(stub, stubs, addr[n], ext, fixed)
    buf += bytes(data_at - code_size)
    buf += data
    for name, off in cfuncs.items():
        buf[off:off + 6] = _TRAMPOLINE
        _pack_q(buf, off + 6, c_address(name))
    for i, (p, (_name, holes), start, here) in enumerate(zip(used, pieces, starts, addr)):
        try:
            for off, pack, t, addend in p.slots:
                pack(buf, start + off, holes[t] + addend)
        except (KeyError, struct.error) as e:
            raise EmitError(f"stencil {pieces[i][0]}: hole {t}: {e!r} ({dict(holes)})") from None
        for off, kind, t, addend in p.holes:
            v = holes.get(t)
            if v is None:
                v = addr[i + 1] if t == "NEXT" else ext.get(t)
                if v is None:
                    v = fixed(t, pieces[i][0])
            else:
                tv = type(v)
                if tv is Stub:
                    v = addr[n + v]
                elif tv is Label:
                    v = addr[v]
                elif tv is Data:
                    v = data_base + v
            if kind is _PC:
                v -= here + off
            elif kind is _ABS64 and v + addend >= 2**63:
                v -= 2**64
            try:
                kind(buf, start + off, v + addend)
            except struct.error as e:
                raise EmitError(f"stencil {pieces[i][0]}: a hole's value does not fit ({e}): "
                                f"{dict(holes)}") from None
    for at, v in data_refs:
        tv = type(v)
        _pack_q(buf, data_at + at, addr[v] if tv is Label else addr[n + v] if tv is Stub
                else data_base + v)
    region.write(0, bytes(buf))
    region.seal()
    return Emitted(region, addr, data_base, code_size)


# how a hole is patched: the pack_into of its width; PC-relative ones less their own address
_PC = struct.Struct("<i").pack_into
_ABS64 = _pack_q
_ABS32S = _pack_i
_ABS32 = _pack_I
# the same as a struct format character (the deopt stubs are packed by one Struct)
_FORMAT = {_PC: "i", _ABS64: "q", _ABS32S: "i", _ABS32: "I"}


def _pack_stubs(stub: Patch, words: list[int], first: int, ext: dict[str, int],
                fixed) -> bytes:
    """The deopt stubs, one per frame state word, laid out from address `first`: one Struct
    packs them all, its values a template of the stub's code chunks and holes repeated, each
    hole's values filled in with one slice assignment (its STUB_HOLE the words; a
    PC-relative jump an arithmetic progression, the stubs being equally spaced)."""
    m, size = len(words), stub.size
    packer, template = _stub_packer(stub, m)
    vals = template * m
    k = len(template)
    for j, (off, kind, t, addend) in enumerate(stub.holes):
        at = 2 * j + 1                  # a hole's place in the template (after a chunk)
        if t == STUB_HOLE:
            vals[at::k] = [w + addend for w in words] if addend else words
            continue
        v = ext.get(t)
        if v is None:
            v = fixed(t, STUB)
        v += addend
        if kind is _PC:
            v -= first + off
            vals[at::k] = range(v, v - m * size, -size)
        else:
            vals[at::k] = [v] * m
    return packer.pack(*vals)


_stub_packers: dict[tuple[int, int], tuple[struct.Struct, list]] = {}


def _stub_packer(stub: Patch, m: int) -> tuple[struct.Struct, list]:
    """A Struct for m stubs and the values of one (its code chunks, 0 for each hole),
    remembered per stub stencil (kept alive by its library's patch table) and count."""
    key = (id(stub), m)
    got = _stub_packers.get(key)
    if got is None:
        if stub.slots:
            raise EmitError(f"{STUB}: frame-slot holes in a deopt stub are not supported")
        fmt, template, at = "", [], 0
        for off, kind, _t, _a in stub.holes:
            fmt += f"{off - at}s{_FORMAT[kind]}"
            template += [stub.code[at:off], 0]
            at = off + struct.calcsize(_FORMAT[kind])
        fmt += f"{stub.size - at}s"
        template.append(stub.code[at:])
        got = _stub_packers[key] = (struct.Struct("<" + fmt * m), template)
    return got


class Patch:
    """A stencil as the emitter copies it (whole, or without its final jump): its bytes, its
    holes as (offset, pack_into, target, addend) and the C functions it calls. Built once per
    library (analogue: a linker's precomputed relocation table)."""

    __slots__ = ("calls", "code", "holes", "size", "slots", "tail_target")

    def __init__(self, code: bytes, size: int, slots: tuple, holes: tuple,
                 calls: tuple[str, ...], tail_target: str | None) -> None:
        self.code, self.size = code, size
        self.slots = slots         # (offset, pack_into, target, addend): frame offsets
        self.holes = holes         # the others
        self.calls, self.tail_target = calls, tail_target


_KINDS = {R_X86_64_PC32: _PC, R_X86_64_PLT32: _PC, R_X86_64_32S: _ABS32S,
          R_X86_64_32: _ABS32, R_X86_64_64: _ABS64}


class _PatchTable(dict):
    """Per stencil name: its whole Patch, and the one without the final jump (or None),
    made the first time the stencil is emitted (the entry type needs 7 of ~340)."""

    def __init__(self, lib: Library) -> None:
        super().__init__()
        self.lib = lib

    def __missing__(self, name: str) -> tuple[Patch, Patch | None]:
        st = self.lib.stencils[name]        # KeyError: no such stencil
        for h in st.holes:
            if h.kind not in _KINDS:
                raise EmitError(f"stencil {name}: relocation type {h.kind} not supported")
        whole = _patch(st, len(st.code))
        # two threads may both make one: the first stored is the one both use (a Patch's id
        # keys _stub_packers, so a discarded twin must never have been handed out)
        return self.setdefault(name, (whole, None if st.tail is None else _patch(st, st.tail)))


_patch_tables: dict[int, _PatchTable] = {}


def _patches(lib: Library) -> _PatchTable:
    table = _patch_tables.get(id(lib))
    if table is None:
        _keep.append(lib)                   # its id names its table for good
        table = _patch_tables.setdefault(id(lib), _PatchTable(lib))
    return table


def _patch(st, size: int) -> Patch:
    holes = [(h.offset, _KINDS[h.kind], h.target, h.addend)
             for h in sorted(st.holes, key=lambda h: h.offset) if h.offset < size]
    calls = tuple(sorted({t for _o, k, t, _a in holes if k is _PC and t not in _LOCAL}))
    slots = tuple(h for h in holes if h[2] in SLOT_HOLES)
    others = tuple(h for h in holes if h[2] not in SLOT_HOLES)
    return Patch(st.code[:size], size, slots, others, calls, st.tail_target if size < len(st.code) else None)


# holes that are frame offsets (templates.SMALL_HOLES) or, in ret_copy, an out-area offset
SLOT_HOLES = frozenset(SMALL_HOLES)
# holes that are code of this function or the library, never C functions
_LOCAL = frozenset({"NEXT", "JT", "JF", "DEOPT", "DEOPT2", "DEOPTALL", "SIGNALS", "ENTER",
                    "ENTRY", "CORE", "@data"})
_shared: dict[int, dict[str, int]] = {}


def shared(lib: Library, active_counter: int, fallback_offset: int) -> dict[str, int]:
    """The routines every function shares (prologue, entry, deopt), and a trampoline for
    every C function the library calls: emitted once per process, in the arena."""
    ext = _shared.get(id(lib))
    if ext is not None:
        return ext
    # every C function templates.py declares (not read off the stencils: that would decode
    # them all); one called but not declared gets a trampoline in its caller's region
    cfuncs = sorted({*C_FUNCTIONS, *LIBM})
    # the trampolines: one "jump" piece per C function would do, but a data-only region of
    # jmp *0(%rip) + address is simpler: built as code by hand
    n = len(cfuncs)
    region = codemem.arena().allocate(16 * n)
    buf = bytearray(16 * n)
    for k, name in enumerate(cfuncs):
        buf[16 * k:16 * k + 6] = _TRAMPOLINE
        _pack_q(buf, 16 * k + 6, c_address(name))
    region.write(0, bytes(buf))
    region.seal()
    ext = {name: region.address + 16 * k for k, name in enumerate(cfuncs)}
    from ...runtime import cstack
    out = emit(lib, [("enter", {"K3": active_counter}),
                     ("entry", {"E": fallback_offset, "K3": active_counter,
                                "KS": cstack.cell_address()}),
                     ("deopt", {"K2": id(None)}),
                     ("signals", {"K3": ctypes.addressof(gil.STATE)})], b"",
               ext)
    ext = dict(ext, ENTER=out.starts[0], ENTRY=out.starts[1], DEOPTALL=out.starts[2],
               SIGNALS=out.starts[3])
    _shared[id(lib)] = ext
    note_perf(region.address, 16 * n, "tierjit:baseline:trampolines")
    for k, name in enumerate(("enter", "entry", "deopt", "signals")):
        note_perf(out.starts[k], out.starts[k + 1] - out.starts[k], f"tierjit:baseline:{name}")
    _keep.extend((region, out, lib))
    return ext


_ENTRY_TYPE_SLOTS = ("forward", "straight", "stack", "new", "dealloc", "traverse", "clear",
                     "descr_get", "upgrade", "names", "relay")


def entry_type_slots(lib: Library, offsets: dict[str, int]) -> dict[str, int]:
    """The native entry type's C slots and the shim upgrade (shared_ir.ENTRY_TYPE), copied
    and patched into the arena: name -> address. `offsets` fills the field-offset holes
    (A ... G, TA ... TC, DV, CR). Called once per process (runtime/entry.py); no LLVM runs."""
    message = ctypes.create_string_buffer(
        b"tierjit.Function() takes exactly 2 arguments (dispatcher, fallback)")
    from ...runtime import cstack
    holes = dict(offsets, K=Label(0), K2=id(None), K3=c_address("PyExc_TypeError"),
                 K4=ctypes.addressof(message), KS=cstack.cell_address())
    out = emit(lib, [(f"type_{name}", holes) for name in _ENTRY_TYPE_SLOTS], b"")
    _keep.extend((out, message))
    for k, name in enumerate(_ENTRY_TYPE_SLOTS):
        note_perf(out.starts[k], out.starts[k + 1] - out.starts[k], f"tierjit:entry:{name}")
    return dict(zip(_ENTRY_TYPE_SLOTS, out.starts))


_keep: list = []


def perf_enabled() -> bool:
    """Whether the perf map wants to hear about code (runtime/perfmap.py)."""
    return config.perf


def note_perf(address: int, size: int, name: str) -> None:
    """Tell the perf map (runtime/perfmap.py, when there is one) where code is."""
    try:
        from ...runtime.perfmap import note_region
    except ImportError:
        return
    try:
        note_region(address, size, name)
    except Exception:      # noqa: BLE001 - a profiler aid must never break a compile
        pass
