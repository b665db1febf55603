"""A small reader of ELF64 little-endian relocatable objects: sections, symbols, RELA relocations.

Enough of the format (System V gABI, x86-64 psABI) for the stencil library, which LLVM emits as
one object file, and for tools that need symbol addresses and sizes (a perf map). It reads; it
never writes. Everything it returns is plain frozen data.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

# x86-64 relocation types the stencil patcher handles, re-exported: the reader's vocabulary
from .relocs import (  # noqa: F401
    R_X86_64_32, R_X86_64_32S, R_X86_64_64, R_X86_64_PC32, R_X86_64_PLT32, RELOC_NAMES)

# Section types and symbol types we name (gABI).
SHT_SYMTAB, SHT_STRTAB, SHT_RELA, SHT_NOBITS = 2, 3, 4, 8
STT_NOTYPE, STT_OBJECT, STT_FUNC, STT_SECTION = 0, 1, 2, 3
SHN_UNDEF = 0


class ElfError(ValueError):
    """The bytes are not an ELF64 little-endian object this reader understands."""


@dataclass(frozen=True, slots=True)
class Section:
    """A section header, with its bytes (empty for SHT_NOBITS)."""

    index: int
    name: str
    type: int
    flags: int
    offset: int
    size: int
    link: int
    info: int
    align: int
    data: bytes


@dataclass(frozen=True, slots=True)
class Symbol:
    """A symbol table entry: `section` is the defining section's index (0: undefined)."""

    name: str
    value: int
    size: int
    type: int
    bind: int
    section: int

    @property
    def defined(self) -> bool:
        return self.section != SHN_UNDEF


@dataclass(frozen=True, slots=True)
class Relocation:
    """A RELA record: patch `section` at `offset` with `type`, against `symbol` + `addend`.
    `symbol` is the index into `ElfFile.symbols`."""

    section: int
    offset: int
    type: int
    symbol: int
    addend: int


@dataclass(frozen=True, slots=True)
class ElfFile:
    sections: tuple[Section, ...]
    symbols: tuple[Symbol, ...]
    relocations: tuple[Relocation, ...]
    machine: int

    def section(self, name: str) -> Section:
        for s in self.sections:
            if s.name == name:
                return s
        raise KeyError(name)

    def symbol(self, name: str) -> Symbol:
        for s in self.symbols:
            if s.name == name:
                return s
        raise KeyError(name)

    def functions(self) -> list[Symbol]:
        """Defined function symbols, in address order within their sections."""
        return sorted((s for s in self.symbols if s.type == STT_FUNC and s.defined),
                      key=lambda s: (s.section, s.value))

    def relocations_in(self, section: int) -> list[Relocation]:
        return [r for r in self.relocations if r.section == section]


def _cstr(table: bytes, at: int) -> str:
    end = table.find(b"\0", at)
    if end < 0:
        raise ElfError("unterminated string in a string table")
    return table[at:end].decode("utf-8", "replace")


def read_elf(data: bytes) -> ElfFile:
    """Parse an ELF64 little-endian file (any machine; relocation types are not interpreted)."""
    if len(data) < 64 or data[:4] != b"\x7fELF":
        raise ElfError("not an ELF file")
    if data[4] != 2 or data[5] != 1:
        raise ElfError("only 64-bit little-endian ELF is supported")
    (machine,) = struct.unpack_from("<H", data, 18)
    shoff, = struct.unpack_from("<Q", data, 40)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 58)
    if shentsize != 64 or shoff + shnum * 64 > len(data):
        raise ElfError("truncated or malformed section header table")
    raw = []
    for i in range(shnum):
        raw.append(struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * 64))
    if not 0 <= shstrndx < shnum:
        raise ElfError("bad section name table index")
    names = data[raw[shstrndx][4]:raw[shstrndx][4] + raw[shstrndx][5]]
    sections = []
    for i, (name, typ, flags, _addr, off, size, link, info, align, _ent) in enumerate(raw):
        if typ != SHT_NOBITS and off + size > len(data):
            raise ElfError(f"section {i} runs past the end of the file")
        body = b"" if typ == SHT_NOBITS else data[off:off + size]
        sections.append(Section(i, _cstr(names, name), typ, flags, off, size, link, info,
                                align, body))
    symbols: list[Symbol] = []
    relocs: list[Relocation] = []
    for s in sections:
        if s.type == SHT_SYMTAB:
            if symbols:
                raise ElfError("more than one symbol table")
            strtab = sections[s.link].data
            for at in range(0, s.size - s.size % 24, 24):
                name, info, _other, shndx, value, size = struct.unpack_from("<IBBHQQ", s.data, at)
                symbols.append(Symbol(_cstr(strtab, name), value, size, info & 0xF, info >> 4,
                                      shndx))
    for s in sections:
        if s.type == SHT_RELA:
            for at in range(0, s.size - s.size % 24, 24):
                off, info, addend = struct.unpack_from("<QQq", s.data, at)
                sym = info >> 32
                if sym >= len(symbols):
                    raise ElfError("relocation against a symbol that does not exist")
                relocs.append(Relocation(s.info, off, info & 0xFFFFFFFF, sym, addend))
    return ElfFile(tuple(sections), tuple(symbols), tuple(relocs), machine)
