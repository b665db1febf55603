"""Write a run's raw JSON to bench/results/ and its table into docs/performance.md."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parents[1]
RESULTS_DIR = BENCH / "results"
DOCS = BENCH.parent / "docs" / "performance.md"
BEGIN = "<!-- bench:begin -->"
END = "<!-- bench:end -->"

INTRO = f"""# Performance

How fast tierjit's compiled code runs next to plain CPython, Numba and C, on the kernel suite in
`bench/kernels/` (each kernel is plain Python in tierjit's supported subset; its C twin in
`bench/c/` runs the same algorithm and must return the same result).

How the figures are measured (`make bench`, i.e. `.venv/bin/python bench/run.py`):

- Every (kernel, column) cell runs in a fresh worker process, one at a time, so a crash or a
  hang in one JIT cannot take the run down and no column warms another's caches.
- **CPython** is the plain function. **tierjit** is `tierjit.jit(tier="opt")(fn)`, **Numba**
  `numba.njit(fn)`; both are warmed up (first call compiles), then timed. **C** is
  `bench/c/<kernel>.c` built with `gcc -O3 -march=native -ffp-contract=off` and called through
  ctypes (one call per run of 10–100 ms, so the call overhead does not matter).
  `-ffp-contract=off` stops gcc fusing `a*b+c` into FMA, which Python never does.
- A figure is the best of up to N timed calls (garbage collector paused), within a few seconds'
  budget per cell. CPython runs each kernel once or a few times; where that would take too long
  it runs at a smaller scale and its time is scaled by the kernel's (exactly known) work, marked
  `*`, and every other column is also run once at that scale to be checked against it.
- Results are checked against CPython's: ints exactly, floats bit-identical (`=`) or within
  1e-9 relative (`~`); anything else is reported as a MISMATCH and left out of the geomeans.
- "First call" is measured in a fresh process with imports already done: decorating, compiling
  and running the kernel once.
- The machine has 2 cores shared with other work: expect ±10–20 % noise between runs. Raw
  timings of every call, the machine and the versions are in `bench/results/<UTC time>.json`.

Run a subset with `bench/run.py --kernels fib,nbody`, a smoke test with `--quick`
(small scales, one repeat; it does not touch this file), skip first calls with
`--no-first-call`.

## Latest full run

{BEGIN}
{END}
"""


def write_json(data: dict[str, Any], stamp: str) -> Path:
    """bench/results/<stamp>.json, written under a temporary name and renamed into place."""
    RESULTS_DIR.mkdir(exist_ok=True)
    path = RESULTS_DIR / f"{stamp}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n")
    os.replace(tmp, path)
    return path


def update_docs(body: str, path: Path = DOCS) -> Path:
    """Replace what lies between the bench markers (creating the page when it is missing)."""
    text = path.read_text() if path.exists() else INTRO
    if BEGIN not in text or END not in text:
        text = text.rstrip("\n") + f"\n\n## Latest full run\n\n{BEGIN}\n{END}\n"
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    new = f"{head}{BEGIN}\n{body.strip()}\n{END}{tail}"
    path.parent.mkdir(exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(new)
    os.replace(tmp, path)
    return path
