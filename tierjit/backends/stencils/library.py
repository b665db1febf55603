"""The stencil library: templates.py compiled once by LLVM into one object, cached on disk.

The object is built for the host CPU (name and features), with the static relocation model
and the small code model, so a stencil's holes become 32-bit absolute, 32-bit PC-relative and
(for `code_model "large"` holes) 64-bit absolute relocations — the three kinds emit.py
patches. The object is read once, when it is built (elf.py), and the cache keeps what was
read from it: each stencil's bytes and holes and the constant data, in `marshal` form, so a
process that finds the cache valid neither starts LLVM nor parses ELF (a baseline-only
program never loads llvmlite's shared library).

The cache file is keyed by everything that shaped the code, all of it known without LLVM:
its format, tierjit's and Python's versions, llvmlite's version and the identity of its
shared library (which fixes LLVM's version), the machine and the CPU (its model and feature
flags, from /proc/cpuinfo; where that file does not exist, LLVM's own host CPU name and
features) and a digest of the template sources (backends/gil.py's offer among them). It is
written atomically (a temporary file, then `os.replace`) and carries a CRC-32 of its payload:
a missing, stale or corrupt file is rebuilt, never trusted. (A checksum, not a cryptographic
digest: it is there to catch a truncated or damaged file; whoever can write the cache
directory could write a valid digest too. SHA-256 took 3.5 ms of every process's start-up
for the 560 KB file, CRC-32 0.25 ms.)

    cache file = MAGIC | crc32(payload) as u32 | payload
    payload    = len(key) as u32 | key (the repr of its sorted items, UTF-8) | body
    body       = marshal((stencil names, each stencil's row, constant data))
    row        = marshal(a stencil as a tuple), decoded when the stencil is first used
"""

from __future__ import annotations

import marshal
import os
import struct
import sys
import zlib
from _thread import allocate_lock
from collections.abc import Iterator, Mapping

from .. import float_pow, gil
from . import shared_ir, templates

try:
    # The builtin SHA-256: hashlib's OpenSSL backend costs ~2 ms to load, a tenth of the
    # entry type's whole start-up (runtime/entry.py); the digests are the same.
    from _sha256 import sha256
except ImportError:  # pragma: no cover - an interpreter built without it
    from hashlib import sha256

MAGIC = b"TJSTENC5"
_lock = allocate_lock()
_building = False       # the lock's holder is building the library (LLVM: seconds)
_LOCK_POLL = 0.002      # how often load(build=False) looks whether the holder is building
_library: Library | None = None


class _Record:
    """A value compared, hashed and shown by its fields (`_fields`, the slots), and never
    changed once made. Written out, not a frozen dataclass: a frozen dataclass with slots
    compiles six generated methods at import (~4M instructions each for Hole and Stencil),
    and every process that makes native code imports this module."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()

    def _values(self) -> tuple:
        return tuple(getattr(self, f) for f in self._fields)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._values() == other._values()      # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        return f"{type(self).__name__}(" + ", ".join(
            f"{f}={getattr(self, f)!r}" for f in self._fields) + ")"


class Hole(_Record):
    """A place to patch in a stencil: analogous to a relocation record in an object file.
    `target` is a hole or C function name, or "@data" for the library's constant data (then
    `addend` includes the offset in that data). `kind` is a relocs.R_X86_64_* number."""

    __slots__ = _fields = ("offset", "kind", "target", "addend")

    def __init__(self, offset: int, kind: int, target: str, addend: int) -> None:
        self.offset, self.kind, self.target, self.addend = offset, kind, target, addend


class Stencil(_Record):
    """One operation's machine code with its holes. `tail` is the offset of a final 5-byte
    jump (to the hole `tail_target`: NEXT, or a branch's JF) that the emitter drops when its
    target is laid out right after the stencil (else None). `writes`: the holes of the frame
    slots it may write (None: not known, so any); `clobbers`: it passes no cached register on
    (templates.WRITES, CLOBBERS; regs.py). `hole_names`, the names of its holes, is derived:
    selection asks for a deopt stub only where a stencil has a DEOPT hole (a float add in
    Python's flavour, an access proven in bounds have none)."""

    _fields = ("name", "code", "holes", "tail", "tail_target", "writes", "clobbers")
    __slots__ = (*_fields, "hole_names")

    def __init__(self, name: str, code: bytes, holes: tuple[Hole, ...], tail: int | None,
                 tail_target: str | None = None, writes: tuple[str, ...] | None = None,
                 clobbers: bool = False) -> None:
        self.name, self.code, self.holes, self.tail = name, code, holes, tail
        self.tail_target, self.writes, self.clobbers = tail_target, writes, clobbers
        self.hole_names = frozenset(h.target for h in holes)


class Library:
    """Every stencil and the constant data they share: analogous to one object file.
    (Classes here are written out, not dataclasses: importing dataclasses costs ~25 ms, and
    the native entry type's start-up, runtime/entry.py, imports this module.)"""

    __slots__ = ("data", "key", "source", "stencils")

    def __init__(self, stencils: Mapping[str, Stencil], data: bytes, key: dict,
                 source: str) -> None:
        self.stencils = stencils
        self.data = data            # the object's read-only constants, shared by every stencil
        self.key = key
        self.source = source        # "cache" or "built"


class CachedStencils(Mapping):
    """The stencils of a cache file, each decoded from its row the first time it is asked
    for: the native entry type (runtime/entry.py) needs 7 of them, a process that uses only
    LLVM no others, and decoding all ~340 costs ~4 ms (analogue: lazy symbol binding)."""

    __slots__ = ("_decoded", "_rows")

    def __init__(self, names: tuple, rows: tuple) -> None:
        self._rows = dict(zip(names, rows))
        self._decoded: dict[str, Stencil] = {}

    def __getitem__(self, name: str) -> Stencil:
        st = self._decoded.get(name)
        if st is None:
            _name, code, holes, tail, tail_target, writes, clobbers = \
                marshal.loads(self._rows[name])
            # two threads may both decode one: the first stored is the one both use
            st = self._decoded.setdefault(name, Stencil(
                name, code, tuple(Hole(*h) for h in holes), tail, tail_target, writes,
                clobbers))
        return st

    def __contains__(self, name: object) -> bool:
        return name in self._rows

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)


def cache_dir() -> str:
    d = os.environ.get("TIERJIT_CACHE_DIR")
    if d:
        return d
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "tierjit")


def _target():
    import llvmlite.binding as llvm

    from ..llvm.engine import get_engine
    engine = get_engine()          # initialises LLVM's native target
    target = llvm.Target.from_triple(engine.triple)
    tm = target.create_target_machine(cpu=engine.cpu_name, features=engine.cpu_features,
                                      opt=3, reloc="static", codemodel="small")
    return llvm, engine, tm


def cache_key() -> dict:
    """The key naming everything that shapes the library (see the module docstring)."""
    import llvmlite

    from ... import __version__
    sources = sha256()
    for module in (templates, shared_ir, gil, float_pow):
        with open(module.__file__, "rb") as f:
            sources.update(f.read())
    # the file format too: two tierjit trees of one version sharing a cache directory would
    # otherwise take turns rebuilding one file
    key = {"format": MAGIC.decode(), "tierjit": __version__, "python": sys.version,
           "machine": os.uname().machine,
           "llvmlite": llvmlite.__version__, "llvmlite_lib": _llvmlite_library(llvmlite),
           "cpu": _cpu_identity(), "templates": sources.hexdigest()}
    if key["cpu"] is None:
        _llvm, engine, _tm = _target()
        key["cpu"] = f"{engine.triple} {engine.cpu_name} {engine.cpu_features}"
    return key


def _llvmlite_library(llvmlite) -> list:
    """Name, size and modification time of llvmlite's shared library (LLVM itself)."""
    d = os.path.join(os.path.dirname(llvmlite.__file__), "binding")
    return sorted([name, st.st_size, st.st_mtime_ns] for name in os.listdir(d)
                  if "llvmlite" in name and name.endswith((".so", ".dylib", ".dll"))
                  for st in [os.stat(os.path.join(d, name))])


def _cpu_identity() -> str | None:
    """The first CPU's vendor, model and feature flags from /proc/cpuinfo (hashed), or None."""
    try:
        with open("/proc/cpuinfo", errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    # the first processor's block, less the fields that change while it runs
    varying = ("cpu mhz", "bogomips")
    lines = [line for line in text.split("\n\n", 1)[0].splitlines()
             if line.partition(":")[0].strip().lower() not in varying]
    if not lines:
        return None
    return sha256("\n".join(lines).encode()).hexdigest()


def module_text() -> str:
    """The template module for the host (its triple and data layout come from LLVM)."""
    _llvm, engine, tm = _target()
    return templates.module_text(engine.triple, str(tm.target_data))


def build_object(text: str) -> bytes:
    """Compile the template module (O2 over the IR, then the host's code generator)."""
    llvm, _engine, tm = _target()
    mod = llvm.parse_assembly(text)
    mod.verify()
    pto = llvm.create_pipeline_tuning_options(speed_level=2)
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(mod, pb)
    return tm.emit_object(mod)


def _encode(key: dict) -> bytes:
    return repr(sorted(key.items())).encode()


def cache_path(key: dict) -> str:
    digest = sha256(_encode(key)).hexdigest()[:24]
    return os.path.join(cache_dir(), f"stencils-{digest}.bin")


def read_cache(path: str, key: dict) -> memoryview | None:
    """The cached body for key, or None when the file is missing, stale or corrupt."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError:
        return None
    if len(raw) < len(MAGIC) + 8 or raw[:len(MAGIC)] != MAGIC:
        return None
    # views, not copies: the file is ~700 KB, read by every process's first compile
    (crc,), payload = struct.unpack_from("<I", raw, len(MAGIC)), memoryview(raw)[len(MAGIC) + 4:]
    if zlib.crc32(payload) != crc:
        return None
    (n,) = struct.unpack_from("<I", payload, 0)
    if payload[4:4 + n] != _encode(key):
        return None
    return payload[4 + n:]


def write_cache(path: str, key: dict, obj: bytes) -> None:
    """Atomically: a temporary file in the same directory, then os.replace."""
    import tempfile
    k = _encode(key)
    payload = struct.pack("<I", len(k)) + k + obj
    folder, name = os.path.split(path)
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=name, suffix=".new", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(MAGIC + struct.pack("<I", zlib.crc32(payload)) + payload)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def parse(obj: bytes, key: dict, source: str) -> Library:
    """Stencils (code + holes) of every `st_*` function of the object."""
    import bisect

    from . import elf
    f = elf.read_elf(obj)
    text = f.section(".text")
    # read-only data sections, laid out one after the other (aligned)
    data = bytearray()
    base: dict[int, int] = {}
    for s in f.sections:
        if s.name.startswith(".rodata") and s.type != elf.SHT_NOBITS:
            if f.relocations_in(s.index):
                raise elf.ElfError(f"{s.name} has relocations (a jump table?)")
            align = max(s.align, 1)
            data.extend(b"\0" * (-len(data) % align))
            base[s.index] = len(data)
            data.extend(s.data)
    relocs = sorted(f.relocations_in(text.index), key=lambda r: r.offset)
    offsets = [r.offset for r in relocs]
    stencils = {}
    for sym in f.functions():
        if sym.section != text.index or not sym.name.startswith("st_"):
            continue
        lo, hi = sym.value, sym.value + sym.size
        holes = []
        for r in relocs[bisect.bisect_left(offsets, lo):bisect.bisect_left(offsets, hi)]:
            target = f.symbols[r.symbol]
            if not target.defined:
                holes.append(Hole(r.offset - lo, r.type, target.name, r.addend))
            elif target.section in base:
                holes.append(Hole(r.offset - lo, r.type, "@data",
                                  r.addend + base[target.section] + target.value))
            else:
                raise elf.ElfError(f"{sym.name} refers to {target.name or 'a section'} in "
                                   f"section {target.section}")
        code = text.data[lo:hi]
        tail = tail_target = None
        if len(code) >= 5 and code[-5] == 0xE9:
            for h in holes:
                if h.offset == len(code) - 4 and h.target in ("NEXT", "JT", "JF"):
                    tail, tail_target = len(code) - 5, h.target
        name = sym.name[3:]
        writes = templates.WRITES.get(name)
        stencils[name] = Stencil(name, code, tuple(holes), tail, tail_target,
                                 None if writes is None else tuple(sorted(writes)),
                                 name in templates.CLOBBERS)
    return Library(stencils, bytes(data), key, source)


def serialise(lib: Library) -> bytes:
    """The cache file's body: what parse() read, as plain tuples for marshal."""
    stencils = lib.stencils.values()
    return marshal.dumps((
        tuple(st.name for st in stencils),
        tuple(marshal.dumps((st.name, st.code, tuple((h.offset, h.kind, h.target, h.addend)
                                                     for h in st.holes),
                             st.tail, st.tail_target, st.writes, st.clobbers))
              for st in stencils),
        lib.data))


def deserialise(body: bytes | memoryview, key: dict) -> Library:
    """serialise()'s inverse; raises ValueError (or TypeError, EOFError) on a malformed body."""
    names, rows, data = marshal.loads(body)
    if not rows or type(data) is not bytes or len(names) != len(rows):
        raise ValueError("empty stencil library")
    if any(type(row) is not bytes for row in rows):   # checked while a bad file can be rebuilt
        raise ValueError("malformed stencil row")
    return Library(CachedStencils(names, rows), data, key, "cache")


def load(rebuild: bool = False, build: bool = True) -> Library | None:
    """The library for this process: from the cache when it is valid, else built (and
    cached). Built once per process. `build=False`: None instead of building it (LLVM takes
    seconds: a program's own thread does not wait for that, nor for another thread building
    it; it does wait for one reading the cache, a few milliseconds)."""
    lib = _library
    if lib is not None and not rebuild:
        return lib                   # every compile asks: no lock once it is loaded
    if build:
        _lock.acquire()
    else:
        # (a recursion DEEP in asks while the compiler thread reads the cache: None would
        # leave it to run out of recursion limit through the shim)
        while not _lock.acquire(timeout=_LOCK_POLL):
            if _building:
                return None
    try:
        return _load(rebuild, build)
    finally:
        _lock.release()


def _load(rebuild: bool, build: bool) -> Library | None:
    """load's work, under the lock."""
    global _library, _building
    if _library is not None and not rebuild:
        return _library
    key = cache_key()
    path = cache_path(key)
    body = None if rebuild else read_cache(path, key)
    lib = None
    if body is not None:
        try:
            lib = deserialise(body, key)
        except (ValueError, TypeError, EOFError):
            lib = None           # corrupt in a way the digest did not catch: rebuild
    if lib is None:
        if not build:
            return None
        _building = True
        try:
            lib = parse(build_object(module_text()), key, "built")
        finally:
            _building = False
        try:
            write_cache(path, key, serialise(lib))
        except OSError:
            pass                 # a read-only home: the library still works
    _library = lib
    return lib
