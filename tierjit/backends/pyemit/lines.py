"""Giving tier 0's code the user's line numbers, after compiling the generated source.

Tier 0 is compiled from its generated source, whose line k came from the user's line
`lines[k - 1]`. Tracebacks, warnings and `f_lineno` must name the user's lines, so the
compiled code object's location table (CPython 3.11+, Objects/locations.md) is written anew:
each instruction keeps its generated line's mapped line and has no columns, which are
columns of the generated text. This replaces parsing the source to an `ast` tree, renumbering
its nodes and compiling the tree: two C calls that hold the GIL for as long as the source
takes to parse and to compile, against one (compiling the source) here.
"""

from __future__ import annotations

from types import CodeType

# location table entry codes (the first byte's bits 3-6)
_NO_COLUMNS = 13              # then the line's delta as a signed varint
_NO_LOCATION = 15
_MAX_UNITS = 8                # code units one entry covers at most


def relined(code: CodeType, lines: list[int]) -> CodeType:
    """`code` (and the code objects nested in it) with generated line k moved to lines[k-1]."""
    table = bytearray()
    first = prev = lines[code.co_firstlineno - 1]
    for start, end, line in code.co_lines():
        units = (end - start) // 2
        mapped = None if line is None else lines[line - 1]
        while units > 0:
            n = min(units, _MAX_UNITS)
            units -= n
            if mapped is None:
                table.append(0x80 | _NO_LOCATION << 3 | n - 1)
            else:
                table.append(0x80 | _NO_COLUMNS << 3 | n - 1)
                _signed_varint(table, mapped - prev)
                prev = mapped
    consts = tuple(relined(c, lines) if isinstance(c, CodeType) else c for c in code.co_consts)
    return code.replace(co_linetable=bytes(table), co_firstlineno=first, co_consts=consts)


def _signed_varint(out: bytearray, value: int) -> None:
    v = -value << 1 | 1 if value < 0 else value << 1
    while v >= 64:                   # 6-bit chunks, least significant first; 0x40: more
        out.append(0x40 | v & 63)
        v >>= 6
    out.append(v)
