"""Build bench/c/<kernel>.c into a shared library with gcc and load it with ctypes."""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1]
C_DIR = BENCH / "c"
BUILD_DIR = BENCH / "build"
# -ffp-contract=off: GNU C fuses a*b+c into FMA by default on -march=native, which CPython and
# Numba never do; without it float results drift in the last bits and the check fails.
CFLAGS: tuple[str, ...] = ("-O3", "-march=native", "-ffp-contract=off", "-fPIC", "-shared")


def compiler() -> str | None:
    """Path of the C compiler ($CC or gcc), or None when there is none."""
    return shutil.which(os.environ.get("CC", "gcc"))


def compiler_version() -> str | None:
    cc = compiler()
    if cc is None:
        return None
    out = subprocess.run([cc, "--version"], capture_output=True, text=True, check=False)
    return out.stdout.splitlines()[0] if out.stdout else None


def build(kernel: str) -> Path:
    """Compile one kernel's C twin; the library is named by a digest of source, flags, compiler.

    Like a code cache, the key names everything that shaped the binary, so a stale library is
    never loaded, and the file is written under a temporary name then renamed into place.
    """
    cc = compiler()
    if cc is None:
        raise RuntimeError("no C compiler (gcc) on PATH")
    source = C_DIR / f"{kernel}.c"
    key = hashlib.sha256(
        source.read_bytes() + repr(CFLAGS).encode() + str(compiler_version()).encode()
    ).hexdigest()[:16]
    lib = BUILD_DIR / f"{kernel}-{key}.so"
    if lib.exists():
        return lib
    BUILD_DIR.mkdir(exist_ok=True)
    tmp = lib.with_name(f"{lib.name}.{os.getpid()}.tmp")
    cmd = [cc, *CFLAGS, "-o", str(tmp), str(source), "-lm"]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{done.stderr.strip()}")
    os.replace(tmp, lib)
    return lib


def load(kernel: str) -> ctypes.CDLL:
    return ctypes.CDLL(str(build(kernel)))
