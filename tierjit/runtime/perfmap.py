"""Linux perf's map of JIT code: `/tmp/perf-<pid>.map`, one `START SIZE name` line per region.

`perf report` (and `perf top`) read this file to name samples that fall in anonymous executable
memory, which is where JIT code lives (the format is Linux's tools/perf/Documentation/
jit-interface.txt: start and size in hexadecimal without `0x`, then the name). Analogue: the
perf maps written by V8 (`--perf-basic-prof`), the JVM's perf-map-agent and CPython 3.12's
`-X perf`. Written only when `tierjit.config.perf` is on (`TIERJIT_PERF=1`, or
`tierjit run --perf`); lines are appended as code is finalised, and the file is left behind for
perf to read after the process has gone.

Every tier calls `note_region` for the native code it finalises: the LLVM tier through
`note_object` with the object file MCJIT emitted (its ELF symbol table gives each function's
offset in its section and size; the engine gives the loaded addresses), the baseline tier for
the stencils it copies.
"""

from __future__ import annotations

import os
import threading

from .config import config

PREFIX = "tierjit:"

_lock = threading.Lock()
_file = None
_file_pid = 0


def enabled() -> bool:
    return config.perf


def path(pid: int | None = None) -> str:
    return f"/tmp/perf-{os.getpid() if pid is None else pid}.map"


def note_region(address: int, size: int, name: str) -> None:
    """Append `START SIZE name` for native code at [address, address + size)."""
    global _file, _file_pid
    if not config.perf or size <= 0 or address <= 0:
        return
    line = f"{address:x} {size:x} {_clean(name)}\n"
    with _lock:
        try:
            if _file is None or _file_pid != os.getpid():   # a forked child writes its own
                _file = open(path(), "a", encoding="utf-8")
                _file_pid = os.getpid()
            _file.write(line)
            _file.flush()
        except OSError:             # /tmp not writable: perf names no JIT frames, nothing else
            pass


def note_object(obj: bytes, addresses: dict[str, int]) -> int:
    """Note every function of an object file MCJIT loaded: `addresses` are the loaded
    addresses of its external symbols; a function without one (internal linkage) is placed by
    its offset from an external function of the same section (sections are loaded whole).
    Returns the number of regions noted."""
    from ..backends.stencils.elf import read_elf
    elf = read_elf(obj)
    functions = [s for s in elf.functions() if s.size > 0]
    base: dict[int, int] = {}                # section index -> loaded address
    for s in functions:
        if s.name in addresses and s.section not in base:
            base[s.section] = addresses[s.name] - s.value
    noted = 0
    for s in functions:
        if s.section in base:
            note_region(base[s.section] + s.value, s.size, PREFIX + s.name)
            noted += 1
    return noted


def _clean(name: str) -> str:
    # one region per line: perf reads the rest of the line as the name
    return name.replace("\n", " ").replace("\r", " ")


class ObjectWatch:
    """The object files one MCJIT instance emits, caught by its object-cache notify hook
    (llvmlite's `ExecutionEngine.set_object_cache`), until `note` maps them."""

    def __init__(self) -> None:
        self.objects: list[bytes] = []

    def notify(self, module, buffer: bytes) -> None:
        self.objects.append(buffer)

    def note(self, addresses: dict[str, int]) -> int:
        """Note the functions of the objects emitted since the last call (see note_object);
        a failure only costs the perf map its lines."""
        objects, self.objects = self.objects, []
        noted = 0
        for obj in objects:
            try:
                noted += note_object(obj, addresses)
            except Exception:     # noqa: BLE001 - an unreadable object: no names for perf
                pass
        return noted


_watches: dict[int, ObjectWatch] = {}


def watch(engine) -> ObjectWatch | None:
    """The ObjectWatch of an MCJIT instance while the perf map is on (None when it is off)."""
    if not config.perf:
        return None
    w = _watches.get(id(engine))
    if w is None:
        w = _watches[id(engine)] = ObjectWatch()
        engine.set_object_cache(w.notify)
    return w
