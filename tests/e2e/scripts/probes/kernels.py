"""Every kernel of `make bench` (bench/kernels) at its quick scale, under `tierjit run --report
--include kernels`: each entry function is called until its native code is installed (or
20 s have passed), then twice more. Prints each kernel's result."""

import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parents[4] / "bench"
sys.path.insert(0, str(BENCH))

import importlib  # noqa: E402

from kernels import KERNELS  # noqa: E402

from tierjit.runtime import compiler  # noqa: E402
from tierjit.runtime.dispatch import dispatcher_of  # noqa: E402

names = sys.argv[1].split(",") if len(sys.argv) > 1 else list(KERNELS)
for name in names:
    mod = importlib.import_module(f"kernels.{name}")
    args = mod.setup(mod.SCALES["quick"])
    entry = getattr(mod, mod.ENTRY)
    d = dispatcher_of(entry)
    deadline = time.perf_counter() + 20
    result = entry(*args)
    while time.perf_counter() < deadline and not any(
            s.installed or s.value_spec is not None and s.value_spec.installed
            for s in d.specs.values()):
        compiler.wait_idle(5)
        result = entry(*args)
    for _ in range(2):
        result = entry(*args)
    print(name, type(result).__name__)
