"""The stencil library: the ELF reader, the library LLVM builds once, and its disk cache
(missing, stale and corrupt caches rebuilt; threads that may not build it)."""

from __future__ import annotations

import marshal
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tierjit.backends.stencils import elf, library

pytest.importorskip("llvmlite")

TINY = r'''
@A = external dso_local global i8
@K = external dso_local global i8, code_model "large"
declare dso_local i32 @NEXT(ptr)
define i32 @st_tiny(ptr %f) {
  %p = getelementptr i8, ptr %f, i64 ptrtoint (ptr @A to i64)
  %k = ptrtoint ptr @K to i64
  %q = getelementptr i8, ptr %f, i64 %k
  %r0 = musttail call i32 @NEXT(ptr %q)
  ret i32 %r0
}
define i32 @st_tiny2(ptr %f) {
  %p = getelementptr i8, ptr %f, i64 ptrtoint (ptr @A to i64)
  store i64 0, ptr %p
  %r = musttail call i32 @NEXT(ptr %f)
  ret i32 %r
}
'''


@pytest.fixture(scope="module")
def tiny_object() -> bytes:
    from tierjit.backends.llvm.engine import get_engine
    engine = get_engine()
    text = (f'target triple = "{engine.triple}"\n'
            f'target datalayout = "{engine.data_layout}"\n' + TINY)
    return library.build_object(text)


def test_elf_reader_sections_symbols_relocations(tiny_object):
    f = elf.read_elf(tiny_object)
    text = f.section(".text")
    sym = f.symbol("st_tiny")
    assert sym.type == elf.STT_FUNC and sym.defined and sym.section == text.index
    assert 0 < sym.size <= text.size
    kinds = {(f.symbols[r.symbol].name, r.type) for r in f.relocations_in(text.index)}
    assert ("A", elf.R_X86_64_32S) in kinds
    assert ("K", elf.R_X86_64_64) in kinds
    assert ("NEXT", elf.R_X86_64_PLT32) in kinds
    assert not f.symbol("NEXT").defined
    assert [s.name for s in f.functions()] == ["st_tiny", "st_tiny2"]


def test_elf_reader_rejects_garbage(tiny_object):
    with pytest.raises(elf.ElfError):
        elf.read_elf(b"not an elf file at all" * 4)
    with pytest.raises(elf.ElfError):
        elf.read_elf(tiny_object[:100])


def test_library_stencils_have_holes():
    lib = library.load()
    add = lib.stencils["add_ii"]
    targets = {h.target for h in add.holes}
    assert {"A", "B", "C", "NEXT", "DEOPT"} <= targets
    assert len(lib.stencils) > 100


def _key():
    return library.cache_key()


def test_load_without_building_does_not_wait_for_a_build(monkeypatch):
    # another thread building the library holds its lock for seconds: a thread that may not
    # build it does not wait for it either
    monkeypatch.setattr(library, "_library", None)
    monkeypatch.setattr(library, "_building", True)
    with library._lock:
        assert library.load(build=False) is None
    assert library.load(build=False) is not None       # cached by the earlier tests' loads


def test_load_without_building_waits_for_a_thread_reading_the_cache(monkeypatch):
    # the compiler thread reading the cache holds the lock for milliseconds: a recursion DEEP
    # in that asks meanwhile gets the library (None left it to run out of recursion limit)
    monkeypatch.setattr(library, "_library", None)
    library._lock.acquire()
    reader = threading.Timer(0.05, library._lock.release)
    reader.start()
    try:
        assert library.load(build=False) is not None
    finally:
        reader.join()


def test_cache_missing_stale_corrupt_are_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("TIERJIT_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(library, "_library", None)
    assert library.load(build=False) is None           # missing, and not to be built
    assert not list(tmp_path.iterdir())
    lib = library.load()
    assert lib.source == "built"                       # missing: built and written
    key = _key()
    path = Path(library.cache_path(key))
    assert path.exists()
    assert library.read_cache(path, key) is not None
    monkeypatch.setattr(library, "_library", None)
    assert library.load().source == "cache"            # valid: trusted
    good = path.read_bytes()
    # corrupt: one flipped byte in the stencils
    bad = bytearray(good)
    bad[-100] ^= 0xFF
    path.write_bytes(bytes(bad))
    assert library.read_cache(path, key) is None
    monkeypatch.setattr(library, "_library", None)
    assert library.load().source == "built"
    assert library.read_cache(path, key) is not None  # rewritten
    # truncated
    path.write_bytes(good[:50])
    assert library.read_cache(path, key) is None
    monkeypatch.setattr(library, "_library", None)
    assert library.load(build=False) is None and path.read_bytes() == good[:50]
    path.write_bytes(good[:-1000])
    assert library.read_cache(path, key) is None
    # stale: written for another key (another llvmlite, CPU or template)
    other = dict(key, llvmlite="0.0.0")
    library.write_cache(path, other, library.serialise(lib))
    assert library.read_cache(path, key) is None
    monkeypatch.setattr(library, "_library", None)
    assert library.load().source == "built"
    assert library.read_cache(path, key) is not None
    assert not list(tmp_path.glob("*.new"))            # no temporary file left behind
    # a body the checksum vouches for but that is not a library: rebuilt
    library.write_cache(path, key, b"not marshal data")
    monkeypatch.setattr(library, "_library", None)
    assert library.load().source == "built"


def test_cache_key_names_what_shapes_the_code():
    key = _key()
    assert {"format", "tierjit", "python", "machine", "llvmlite", "llvmlite_lib", "cpu",
            "templates"} <= set(key)
    assert key["format"] == library.MAGIC.decode(), "two formats must not share one file"
    assert key["cpu"] and key["templates"]
    assert key["llvmlite_lib"], "llvmlite's shared library (LLVM's version) is part of the key"


def test_cached_stencils_decode_on_use_as_parsed():
    """A library read from the cache decodes each stencil when it is first asked for; what it
    gives is what the object file's parse gave, holes and hole names included."""
    lib = library.load()
    body = library.serialise(lib)
    cached = library.deserialise(body, lib.key)
    assert isinstance(cached.stencils, library.CachedStencils)
    assert not cached.stencils._decoded                  # nothing decoded yet
    assert list(cached.stencils) == list(lib.stencils)
    assert len(cached.stencils) == len(lib.stencils)
    name = next(iter(lib.stencils))
    assert cached.stencils[name] == lib.stencils[name]
    assert list(cached.stencils._decoded) == [name]      # that one only
    assert cached.stencils[name].hole_names == frozenset(h.target for h in lib.stencils[name].holes)
    assert dict(cached.stencils) == dict(lib.stencils)
    assert "no such stencil" not in cached.stencils
    with pytest.raises(ValueError):
        library.deserialise(marshal.dumps(((("x", b"", ()),), b"")), lib.key)


def test_cached_library_loads_without_llvm(tmp_path):
    """A valid cache is all a process needs: neither llvmlite's shared library nor ELF parsing
    (a baseline-only program starts in milliseconds)."""
    env = dict(os.environ, TIERJIT_CACHE_DIR=str(tmp_path))
    code = ("import sys; from tierjit.backends.stencils import library as l; "
            "lib = l.load(); print(lib.source, len(lib.stencils), "
            "'llvmlite.binding' in sys.modules)")
    runs = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                           text=True, check=True).stdout.split() for _ in range(2)]
    assert runs[0][0] == "built" and runs[1][0] == "cache"
    assert runs[0][1] == runs[1][1]
    assert runs[1][2] == "False"
