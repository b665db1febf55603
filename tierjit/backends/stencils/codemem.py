"""Code memory for the baseline tier: W^X pages from one reserved arena, pooled.

One arena of address space is reserved once (PROT_NONE, MAP_NORESERVE: no memory is committed
until a page is used), so every region the baseline tier hands out — function code, the
library's constant data — lies within ±2 GiB of every other, and 32-bit PC-relative
references between them always reach. A region is written while it is read+write, then
sealed read+execute (or read-only for data); no page is ever writable and executable at once.

Freed regions go back to a pool (by page count) for the next function. A region is only
freed when no baseline code is running (`active` counts the baseline calls in progress: the
core prologue increments it), because a dropped function's code may still be on a stack.
Pages wait for their next function read+write — pooled ones made so when they are freed,
fresh ones committed a few at a time — so that a compile makes one `mprotect`, its seal;
waiting pages are never executable (a stale jump into them faults as before).
Analogue: V8's code space and HotSpot's code cache, on a very small scale.
"""

from __future__ import annotations

import ctypes
import mmap
from _thread import RLock, allocate_lock

PROT_NONE, PROT_READ, PROT_WRITE, PROT_EXEC = 0, 1, 2, 4
MAP_PRIVATE, MAP_ANONYMOUS, MAP_NORESERVE = 0x02, 0x20, 0x4000
PAGE = mmap.PAGESIZE
ARENA_BYTES = 256 << 20
COMMIT_PAGES = 16          # fresh pages made read+write at a time

_libc = ctypes.CDLL(None, use_errno=True)
_mmap = _libc.mmap
_mmap.restype = ctypes.c_void_p
_mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                  ctypes.c_long]
_mprotect = _libc.mprotect
_mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]


class CodeMemoryError(MemoryError):
    pass


def _protect(address: int, size: int, prot: int) -> None:
    if _mprotect(address, size, prot) != 0:
        raise CodeMemoryError(f"mprotect failed: errno {ctypes.get_errno()}")


class Region:
    """Pages of the arena owned by one function (or the library's data)."""

    __slots__ = ("address", "size", "sealed", "__weakref__")

    def __init__(self, address: int, size: int):
        self.address, self.size, self.sealed = address, size, False

    def write(self, offset: int, data: bytes) -> None:
        if self.sealed:
            raise CodeMemoryError("region is sealed (read+execute): it cannot be written")
        if offset < 0 or offset + len(data) > self.size:
            raise CodeMemoryError("write outside the region")
        ctypes.memmove(self.address + offset, data, len(data))

    def seal(self, executable: bool = True) -> None:
        """Make the region read+execute (or read-only): from now on it cannot be written."""
        _protect(self.address, self.size, PROT_READ | (PROT_EXEC if executable else 0))
        self.sealed = True


class Arena:
    def __init__(self, size: int = ARENA_BYTES):
        addr = _mmap(None, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
        if addr in (None, ctypes.c_void_p(-1).value):
            raise CodeMemoryError("cannot reserve the code arena")
        self.base, self.size = addr, size
        self.top = 0
        self.ready = 0          # [top, ready) is read+write, not yet handed out
        self.pool: dict[int, list[int]] = {}     # page count -> free region addresses
        self.pending: list[tuple[int, int]] = []  # freed while baseline code was running
        # reentrant: a collection may run at any allocation while it is held, and a finalizer
        # it runs (a dropped function's BaselineCode.__del__) frees a region on this thread
        self.lock = RLock()
        # two words: the baseline calls in progress (one i64 the core prologue and call_self
        # increment and decrement), then call_self's countdown to its next signal poll
        self._words = (ctypes.c_int64 * 2)()
        self.active = ctypes.c_int64.from_buffer(self._words)
        self.in_use = 0

    def allocate(self, nbytes: int) -> Region:
        """A fresh read+write region of at least nbytes (never executable while writable)."""
        pages = max(1, -(-nbytes // PAGE))
        with self.lock:
            self._collect()
            free = self.pool.get(pages)
            if free:
                addr = free.pop()
            else:
                end = self.top + pages * PAGE
                if end > self.size:
                    raise CodeMemoryError("the baseline code arena is full")
                # claimed before a call that may allocate, and so let a finalizer allocate
                # on this thread (a region of its own: past this one)
                addr = self.base + self.top
                self.top = end
                if end > self.ready:
                    ready = min(max(end, self.ready + COMMIT_PAGES * PAGE), self.size)
                    _protect(self.base + self.ready, ready - self.ready, PROT_READ | PROT_WRITE)
                    self.ready = max(self.ready, ready)
            self.in_use += pages
        return Region(addr, pages * PAGE)

    def free(self, address: int, size: int) -> None:
        """Give a region back; while baseline code runs it waits (it may be on a stack)."""
        region = (address, size)
        with self.lock:
            self.pending.append(region)
            self._collect()

    def _collect(self) -> None:
        if self.active.value != 0 or not self.pending:
            return
        # taken first: a region a finalizer frees meanwhile waits for the next collect
        pending, self.pending = self.pending, []
        for address, size in pending:
            _protect(address, size, PROT_READ | PROT_WRITE)     # for the next function
            self.pool.setdefault(size // PAGE, []).append(address)
            self.in_use -= size // PAGE


_arena: Arena | None = None
_arena_lock = allocate_lock()


def arena() -> Arena:
    global _arena
    if _arena is None:
        with _arena_lock:
            if _arena is None:
                _arena = Arena()
    return _arena


def mappings() -> list[tuple[int, int, str]]:
    """(start, end, permissions) of this process's mappings that overlap the arena."""
    a = arena()
    out = []
    with open("/proc/self/maps") as f:
        for line in f:
            span, perms = line.split()[:2]
            lo, hi = (int(x, 16) for x in span.split("-"))
            if lo < a.base + a.size and hi > a.base:
                out.append((lo, hi, perms))
    return out
