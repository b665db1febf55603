"""Load a kernel module and turn it into a callable for one column (CPython, tierjit, Numba, C)."""

from __future__ import annotations

import importlib.util
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

KERNEL_DIR = Path(__file__).resolve().parents[1] / "kernels"
Column = Literal["cpython", "tierjit", "numba", "c"]
COLUMNS: tuple[Column, ...] = ("cpython", "tierjit", "numba", "c")
JIT_COLUMNS: tuple[Column, ...] = ("tierjit", "numba")


@dataclass(frozen=True, slots=True)
class Kernel:
    """One benchmark: a kernel module's contract (see kernels/__init__.py) in typed form."""

    name: str
    module: ModuleType
    bench_scale: int
    quick_scale: int
    cpython_scale: int

    def work(self, scale: int) -> float:
        fn = getattr(self.module, "work", None)
        return float(fn(scale)) if fn is not None else float(scale)

    def scales(self, quick: bool) -> tuple[int, int]:
        """(scale the fast columns run at, scale CPython runs at)."""
        if quick:
            return self.quick_scale, self.quick_scale
        return self.bench_scale, self.cpython_scale

    def setup(self, scale: int) -> tuple:
        return tuple(self.module.setup(scale))


def load(name: str, tag: str = "") -> Kernel:
    """Import bench/kernels/<name>.py as a new module object (named apart by `tag`).

    A separate module object per column matters: a JIT column rebinds the module's globals to
    compiled functions, and the CPython column must keep seeing the plain ones.
    """
    path = KERNEL_DIR / f"{name}.py"
    if not path.is_file():
        raise FileNotFoundError(f"no kernel module {path}")
    spec = importlib.util.spec_from_file_location(f"bench_kernel_{name}{tag}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # as an import would; Numba's recursion needs it
    spec.loader.exec_module(module)
    scales = module.SCALES
    return Kernel(
        name=name,
        module=module,
        bench_scale=scales["bench"],
        quick_scale=scales["quick"],
        cpython_scale=scales.get("cpython", scales["bench"]),
    )


def jit_decorator(column: Column) -> Callable[[Callable[..., Any]], Any]:
    if column == "tierjit":
        import tierjit

        return tierjit.jit(tier="opt")
    if column == "numba":
        import numba

        return numba.njit
    raise ValueError(f"{column} is not a JIT column")


def build(kernel: Kernel, column: Column) -> Callable[..., Any]:
    """The callable for one column; for a JIT this decorates every function in JIT, callees first,
    rebinding each in the module so calls between kernel functions reach compiled code."""
    module = kernel.module
    entry = getattr(module, module.ENTRY)
    if column == "cpython":
        return entry
    if column == "c":
        from harness import cbuild

        lib = cbuild.load(kernel.name)
        return lambda *args: module.call_c(lib, *args)
    decorate = jit_decorator(column)
    for fn_name in module.JIT:
        setattr(module, fn_name, decorate(getattr(module, fn_name)))
    return getattr(module, module.ENTRY)


def extrapolate(kernel: Kernel, seconds: float, ran_at: int, wanted: int) -> float:
    """Scale a time by the kernel's work ratio (exact only where `work` is exact)."""
    if ran_at == wanted:
        return seconds
    return seconds * kernel.work(wanted) / kernel.work(ran_at)


def geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else math.nan
