"""The copy-and-patch emitter: lay pieces out, copy their stencils, patch their holes.

A piece is one use of a stencil: its name and the values of its holes. Values are ints
(slot offsets, constants), `Label`s (the address of another piece: a jump target, a deopt
stub, the core) or `Data` (an offset into the function's data, placed after its code).
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
from dataclasses import dataclass

from . import codemem, elf
from .library import Library

_pack_q, _pack_i, _pack_I = struct.Struct("<q").pack_into, struct.Struct("<i").pack_into, \
    struct.Struct("<I").pack_into
_TRAMPOLINE = b"\xff\x25\x00\x00\x00\x00"      # jmp *0(%rip); the address follows
_c_addresses: dict[str, int] = {}


class Label(int):
    """The address of piece number `int(self)`."""


class Data(int):
    """An address `int(self)` bytes into the function's data."""


class EmitError(RuntimeError):
    pass


@dataclass
class Emitted:
    region: codemem.Region
    starts: list[int]          # address of every piece
    data_address: int
    code_size: int


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
         data_refs: list[tuple[int, int]] = ()) -> Emitted:
    """Copy and patch `pieces` (in order) into a new sealed region, with `data` after them.
    `externals` gives the addresses of holes outside the region (the shared routines and
    trampolines, see shared()); C functions it does not name get trampolines here.
    `data_refs` are (offset in data, Label or Data): 64-bit addresses to store in the data."""
    ext = externals or {}
    stencils = lib.stencils
    n = len(pieces)
    # layout: drop a final `jmp NEXT` that would jump to the following piece
    starts = [0] * (n + 1)
    lengths = [0] * n
    used: list = []
    at = 0
    for i, (name, holes) in enumerate(pieces):
        st = stencils[name]
        used.append(st)
        size = len(st.code)
        if st.tail is not None:
            nxt = holes.get(st.tail_target)
            if nxt == i + 1 and type(nxt) is Label or nxt is None and st.tail_target == "NEXT":
                size = st.tail
        starts[i] = at
        lengths[i] = size
        at += size
    code_size = at
    cfuncs: dict[str, int] = {}
    for st in used:
        for h in st.holes:
            if h.kind in (elf.R_X86_64_PC32, elf.R_X86_64_PLT32) and h.target not in cfuncs \
                    and h.target not in _LOCAL and h.target not in ext:
                cfuncs[h.target] = 0
    tramp_at = (code_size + 15) & ~15
    for k, name in enumerate(cfuncs):
        cfuncs[name] = tramp_at + 16 * k
    data_at = (tramp_at + 16 * len(cfuncs) + 15) & ~15
    region = codemem.arena().allocate(data_at + len(data))
    base = region.address
    buf = bytearray(data_at + len(data))
    for name, off in cfuncs.items():
        buf[off:off + 6] = _TRAMPOLINE
        _pack_q(buf, off + 6, c_address(name))
    buf[data_at:] = data
    lib_data = LibraryData.address(lib)
    for i, (name, holes) in enumerate(pieces):
        start = starts[i]
        fmt, chunks, plan = _plan(used[i], lengths[i])
        args = []
        for (off, kind, t, addend), chunk in zip(plan, chunks):
            args.append(chunk)
            v = holes.get(t)
            if v is not None:
                tv = type(v)
                s = base + starts[v] if tv is Label else base + data_at + v if tv is Data else v
            elif t == "NEXT":
                s = base + starts[i + 1]
            elif t in ext:
                s = ext[t]
            elif t == "@data":
                s = lib_data
            elif t in cfuncs:
                s = base + cfuncs[t]
            else:
                raise EmitError(f"stencil {name}: no value for hole {t}")
            if kind == _PC:
                s -= base + start + off
            elif kind == _ABS64 and s + addend >= 2**63:
                s -= 2**64
            args.append(s + addend)
        args.append(chunks[-1])
        try:
            buf[start:start + lengths[i]] = fmt.pack(*args)
        except struct.error as e:
            raise EmitError(f"stencil {name}: a hole's value does not fit ({e}): "
                            f"{dict(holes)}") from None
    for at, v in data_refs:
        _pack_q(buf, data_at + at, base + (starts[v] if type(v) is Label else data_at + v))
    region.write(0, bytes(buf))
    region.seal()
    starts[n] = code_size
    return Emitted(region, [base + s for s in starts], base + data_at, code_size)


_PC, _ABS64 = "pc", "abs64"
_plans: dict[tuple[int, int], tuple] = {}


def _plan(st, size: int):
    """How to patch stencil st copied up to `size` bytes in one struct.pack: the format, the
    literal chunks between holes, and (offset, kind, target, addend) per hole."""
    key = (id(st), size)
    p = _plans.get(key)
    if p is not None:
        return p
    fmt = ["<"]
    chunks = []
    plan = []
    at = 0
    for h in sorted(st.holes, key=lambda h: h.offset):
        if h.offset >= size:
            continue                           # in the dropped tail jump
        chunks.append(st.code[at:h.offset])
        fmt.append(f"{h.offset - at}s")
        if h.kind in (elf.R_X86_64_PC32, elf.R_X86_64_PLT32):
            fmt.append("i")
            plan.append((h.offset, _PC, h.target, h.addend))
            at = h.offset + 4
        elif h.kind == elf.R_X86_64_32S:
            fmt.append("i")
            plan.append((h.offset, "abs32s", h.target, h.addend))
            at = h.offset + 4
        elif h.kind == elf.R_X86_64_32:
            fmt.append("I")
            plan.append((h.offset, "abs32", h.target, h.addend))
            at = h.offset + 4
        elif h.kind == elf.R_X86_64_64:
            fmt.append("q")
            plan.append((h.offset, _ABS64, h.target, h.addend))
            at = h.offset + 8
        else:
            raise EmitError(f"stencil {st.name}: relocation type {h.kind} not supported")
    chunks.append(st.code[at:size])
    fmt.append(f"{size - at}s")
    p = _plans[key] = (struct.Struct("".join(fmt)), chunks, plan)
    _keep.append(st)
    return p


# holes that are code of this function or the library, never C functions
_LOCAL = frozenset({"NEXT", "JT", "JF", "DEOPT", "DEOPT2", "DEOPTALL", "ENTER", "ENTRY",
                    "@data"})
_shared: dict[int, dict[str, int]] = {}


def shared(lib: Library, active_counter: int, fallback_offset: int) -> dict[str, int]:
    """The routines every function shares (prologue, entry, deopt), and a trampoline for
    every C function the library calls: emitted once per process, in the arena."""
    ext = _shared.get(id(lib))
    if ext is not None:
        return ext
    cfuncs = sorted({h.target for st in lib.stencils.values() for h in st.holes
                     if h.kind in (elf.R_X86_64_PC32, elf.R_X86_64_PLT32)
                     and h.target not in _LOCAL})
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
    out = emit(lib, [("enter", {"K3": active_counter}), ("entry", {"E": fallback_offset, "K3": active_counter}),
                     ("deopt", {})], b"",
               ext)
    ext = dict(ext, ENTER=out.starts[0], ENTRY=out.starts[1], DEOPTALL=out.starts[2])
    _shared[id(lib)] = ext
    note_perf(region.address, 16 * n, "tierjit:baseline:trampolines")
    for k, name in enumerate(("enter", "entry", "deopt")):
        note_perf(out.starts[k], out.starts[k + 1] - out.starts[k], f"tierjit:baseline:{name}")
    _keep.extend((region, out, lib))
    return ext


_keep: list = []


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
