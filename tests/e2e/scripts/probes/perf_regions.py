"""Run under `tierjit run --perf`: compile a few functions, then check /tmp/perf-<pid>.map
against what the engine loaded and against this process's executable mappings; prints one
JSON object for the test to assert on."""

import json
import os

from tierjit.backends.llvm.engine import get_engine
from tierjit.runtime import compiler


def poly(x):
    return 3.0 * x * x - 2.0 * x + 1.0


def total(n):
    s = 0.0
    for i in range(n):
        s += poly(i * 0.5)
    return s


for _ in range(1500):
    total(50)
compiler.wait_idle(60)
total(50)

lines = open(f"/tmp/perf-{os.getpid()}.map").read().splitlines()
regions = []
for line in lines:
    start, size, name = line.split(" ", 2)
    regions.append((int(start, 16), int(size, 16), name))
executable = []
with open("/proc/self/maps") as f:
    for line in f:
        span, perms = line.split()[:2]
        lo, hi = (int(x, 16) for x in span.split("-"))
        if "x" in perms:
            executable.append((lo, hi))
engine = get_engine()
functions = sorted(s for s in engine._defined
                   if any(r[2] == "tierjit:" + s for r in regions)
                   or s.startswith(("tj", "tierjit_")))
print(json.dumps({
    "lines": len(lines),
    "names": [r[2] for r in regions],
    "inside_executable": [any(lo <= a and a + n <= hi for lo, hi in executable)
                          for a, n, _ in regions],
    "sizes_positive": all(n > 0 for _, n, _ in regions),
    "engine_functions": functions,
    "overlaps": sum(1 for (a, n, _), (b, _m, _x) in zip(sorted(regions), sorted(regions)[1:])
                    if a + n > b),
    "poly_installed": type(poly).__name__, "total": total(50),
}))
os.remove(f"/tmp/perf-{os.getpid()}.map")
