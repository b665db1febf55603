"""The perf map writer and the ELF symbol reader it falls back to, on an object LLVM emits."""

from __future__ import annotations

import os

import pytest

from tierjit import config
from tierjit.backends.stencils import elf
from tierjit.runtime import perfmap

IR = """
define internal i64 @helper(i64 %x) noinline {
  %y = mul i64 %x, 3
  ret i64 %y
}
define i64 @visible(i64 %x) {
  %y = call i64 @helper(i64 %x)
  %z = add i64 %y, 1
  ret i64 %z
}
"""


def emit_object() -> bytes:
    llvm = pytest.importorskip("llvmlite.binding")
    from tierjit.backends.llvm.engine import get_engine
    from tierjit.backends.llvm.engine import ir_header
    engine = get_engine()
    tm, _ = engine._machine(3)
    with engine.lock:
        module = llvm.parse_assembly(ir_header() + IR, context=engine._context)
        return tm.emit_object(module)


def test_symbol_reader_finds_internal_and_external_functions():
    fns = {s.name: s for s in elf.read_elf(emit_object()).functions()}
    assert {"helper", "visible"} <= set(fns)
    assert all(s.size > 0 for s in fns.values())
    assert fns["helper"].section == fns["visible"].section
    assert fns["helper"].value != fns["visible"].value


def test_reader_rejects_what_is_not_elf():
    with pytest.raises(ValueError):
        elf.read_elf(b"not an object file at all" * 4)


def test_note_region_writes_hex_lines_only_when_on(tmp_path, monkeypatch):
    target = tmp_path / "perf.map"
    monkeypatch.setattr(perfmap, "path", lambda pid=None: str(target))
    monkeypatch.setattr(perfmap, "_file", None)
    with config.override(perf=False):
        perfmap.note_region(0x1000, 0x20, "off")
    assert not target.exists()
    with config.override(perf=True):
        perfmap.note_region(0x7F00DEAD0000, 0x1A0, "tierjit:f(int)")
        perfmap.note_object(emit_object(), {"visible": 0x500000})
    perfmap._file.close()
    monkeypatch.setattr(perfmap, "_file", None)
    lines = target.read_text().splitlines()
    assert lines[0] == "7f00dead0000 1a0 tierjit:f(int)"
    noted = {ln.split()[2]: (int(ln.split()[0], 16), int(ln.split()[1], 16)) for ln in lines[1:]}
    fns = {s.name: s for s in elf.read_elf(emit_object()).functions()}
    base = 0x500000 - fns["visible"].value
    assert noted["tierjit:visible"] == (0x500000, fns["visible"].size)
    assert noted["tierjit:helper"] == (base + fns["helper"].value, fns["helper"].size)
    assert os.path.exists(target)
