"""The function symbols of an ELF64 little-endian object file: name, section, offset, size.

A stand-in for the stencil library's full ELF reader (`tierjit.backends.stencils.elf`), which
runtime.perfmap prefers when it is there: the perf map needs only the symbol table. Same
shape as that reader's `read_elf(data).functions()`.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

SHT_SYMTAB, STT_FUNC, SHN_UNDEF = 2, 2, 0


@dataclass(frozen=True, slots=True)
class Symbol:
    """A defined function symbol: analogous to a line of `nm --size`."""

    name: str
    value: int          # offset in its section (relocatable objects)
    size: int
    section: int


class _Functions:
    def __init__(self, symbols: list[Symbol]) -> None:
        self._symbols = symbols

    def functions(self) -> list[Symbol]:
        return sorted(self._symbols, key=lambda s: (s.section, s.value))


def read_elf(data: bytes) -> _Functions:
    """The defined STT_FUNC symbols of `data`; ValueError when it is not ELF64 LE."""
    if len(data) < 64 or data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not a 64-bit little-endian ELF file")
    (shoff,) = struct.unpack_from("<Q", data, 40)
    shentsize, shnum = struct.unpack_from("<HH", data, 58)
    if shentsize != 64 or shoff + shnum * 64 > len(data):
        raise ValueError("truncated section header table")
    headers = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * 64) for i in range(shnum)]
    symbols: list[Symbol] = []
    for _name, typ, _flags, _addr, off, size, link, _info, _align, _ent in headers:
        if typ != SHT_SYMTAB:
            continue
        str_off, str_size = headers[link][4], headers[link][5]
        strtab = data[str_off:str_off + str_size]
        for at in range(off, off + size - size % 24, 24):
            name, info, _other, shndx, value, sym_size = struct.unpack_from("<IBBHQQ", data, at)
            if info & 0xF == STT_FUNC and shndx != SHN_UNDEF:
                end = strtab.find(b"\0", name)
                symbols.append(Symbol(strtab[name:end].decode("utf-8", "replace"), value,
                                      sym_size, shndx))
    return _Functions(symbols)
