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


def emit(lib: Library, pieces: list[tuple[str, dict]], data: bytes) -> Emitted:
    """Copy and patch `pieces` (in order) into a new sealed region, with `data` after them."""
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
        nxt = holes.get("NEXT")
        size = len(st.code)
        if st.tail is not None and (nxt is None or nxt == i + 1):
            size = st.tail
        starts[i] = at
        lengths[i] = size
        at += size
    code_size = at
    cfuncs: dict[str, int] = {}
    for st in used:
        for h in st.holes:
            if h.kind in (elf.R_X86_64_PC32, elf.R_X86_64_PLT32) and h.target not in cfuncs \
                    and h.target not in _LOCAL:
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
        st = used[i]
        start = starts[i]
        size = lengths[i]
        buf[start:start + size] = st.code[:size]
        for h in st.holes:
            off = h.offset
            if off >= size:
                continue                       # in the dropped tail jump
            t = h.target
            if t in holes:
                v = holes[t]
                if type(v) is Label:
                    s = base + starts[v]
                elif type(v) is Data:
                    s = base + data_at + v
                else:
                    s = v
            elif t == "NEXT":
                s = base + starts[i + 1]
            elif t == "@data":
                s = lib_data
            elif t in cfuncs:
                s = base + cfuncs[t]
            else:
                raise EmitError(f"stencil {name}: no value for hole {t}")
            kind = h.kind
            value = s + h.addend
            if kind == elf.R_X86_64_PLT32 or kind == elf.R_X86_64_PC32:
                value -= base + start + off
                if not -2**31 <= value < 2**31:
                    raise EmitError(f"stencil {name}: {t} out of PC-relative range")
                _pack_i(buf, start + off, value)
            elif kind == elf.R_X86_64_32S:
                if not -2**31 <= value < 2**31:
                    raise EmitError(f"stencil {name}: {t}={value} does not fit 32 bits")
                _pack_i(buf, start + off, value)
            elif kind == elf.R_X86_64_64:
                _pack_q(buf, start + off, value if value < 2**63 else value - 2**64)
            elif kind == elf.R_X86_64_32:
                if not 0 <= value < 2**32:
                    raise EmitError(f"stencil {name}: {t}={value} does not fit 32 bits")
                _pack_I(buf, start + off, value)
            else:
                raise EmitError(f"stencil {name}: relocation type {kind} not supported")
    region.write(0, bytes(buf))
    region.seal()
    starts[n] = code_size
    return Emitted(region, [base + s for s in starts], base + data_at, code_size)


# holes that are code of this function or the library, never C functions
_LOCAL = frozenset({"NEXT", "JT", "JF", "DEOPT", "DEOPT2", "CORE", "BODY", "CALLEE", "@data"})
