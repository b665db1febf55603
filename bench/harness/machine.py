"""What a run was measured on: CPU, cores, load, memory, interpreter and library versions."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

from harness import cbuild

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("tierjit", "numpy", "numba", "llvmlite")


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _cpu_features() -> list[str]:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                return [f for f in ("sse4_2", "avx", "avx2", "fma", "avx512f") if f in flags]
    except OSError:
        pass
    return []


def _mem_total_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    except (OSError, ValueError):
        pass
    return None


def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def _git_commit() -> str | None:
    """HEAD of the project checkout (read-only), or None before the first commit."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--verify", "--quiet", "HEAD"],
            cwd=ROOT, capture_output=True, text=True, check=False, timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None


def load_average() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def info() -> dict[str, Any]:
    return {
        "cpu": _cpu_model(),
        "cpu_features": _cpu_features(),
        "logical_cpus": os.cpu_count(),
        "memory_gib": _mem_total_gib(),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "python_implementation": platform.python_implementation(),
        "executable": sys.executable,
        "packages": {name: _version(name) for name in PACKAGES},
        "cc": cbuild.compiler_version(),
        "cflags": " ".join(cbuild.CFLAGS),
        "git_commit": _git_commit(),
        "load_average_start": load_average(),
    }


def header_lines(data: dict[str, Any]) -> list[str]:
    """A few human lines for the top of a report."""
    packages = data["packages"]
    libs = ", ".join(f"{k} {v}" for k, v in packages.items() if v) or "no packages found"
    features = " ".join(data["cpu_features"])
    return [
        (
            f"machine: {data['cpu']} ({features}), {data['logical_cpus']} logical CPUs, "
            f"{data['memory_gib']} GiB, {data['platform']}"
        ),
        f"python {data['python']}; {libs}",
        f"C: {data['cc'] or 'no compiler'} {data['cflags'] if data['cc'] else ''}".rstrip(),
        f"load average at start: {data['load_average_start']}"
        + (f", at end: {data['load_average_end']}" if data.get("load_average_end") else "")
        + " (a shared machine: timings are noisy)",
    ]
