"""`make demo`: the example scripts under plain CPython and under `tierjit run`, side by side.

    bench/demo.py [--no-tour]

Each script in EXAMPLES runs twice in a fresh process: `python script --time` and
`tierjit run script --time` (the scripts themselves contain no tierjit code, except the
variants search, which calls `tierjit.evaluate`, and runs with `--cpython` for the CPython
column). The scripts print their results and, last, `time: T s` for their work; the table shows
those times, the whole process's wall time (start-up, imports and compiles included) and
whether the results printed were the same. Then examples/tour.py, the tour of the decorator
API, runs as it is.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = (
    # script, extra arguments for the CPython column, what it shows
    ("closest.py", (), "one long loop per call: OSR, then native calls"),
    ("nbody.py", (), "a kernel called once per step: hot by call count"),
    ("variants.py", ("--cpython",), "1000 formulas x 10,000 rows: tierjit.evaluate vs exec"),
)


def run(cmd: list[str]) -> tuple[float, float | None, list[str], int]:
    """(process wall time, the script's own `time:` figure, its other lines, exit status)"""
    start = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - start
    if p.returncode:
        sys.stderr.write(p.stderr)
    work, lines = None, []
    for line in p.stdout.splitlines():
        if line.startswith("time: "):
            work = float(line.split()[1])
        else:
            lines.append(line)
    return wall, work, lines, p.returncode


def main(argv: list[str]) -> int:
    py = sys.executable
    print("tierjit run: the example scripts under plain CPython and under tierjit run\n")
    print(f"{'script':<13} {'CPython':>9} {'tierjit':>9} {'speed-up':>9}   "
          f"{'process (CPython / tierjit)':<28} same output")
    status = 0
    for name, cpython_args, what in EXAMPLES:
        script = str(ROOT / "examples" / name)
        w_py, t_py, out_py, rc_py = run([py, script, "--time", *cpython_args])
        w_jit, t_jit, out_jit, rc_jit = run([py, "-m", "tierjit", "run", script, "--time"])
        if rc_py or rc_jit or t_py is None or t_jit is None:
            print(f"{name:<13} failed (exit status {rc_py} / {rc_jit})")
            status = 1
            continue
        same = out_py == out_jit
        status |= not same
        print(f"{name:<13} {t_py:8.2f}s {t_jit:8.2f}s {t_py / t_jit:8.1f}x   "
              f"{w_py:5.2f} s / {w_jit:5.2f} s{'':<12} {'yes' if same else 'NO'}")
        print(f"{'':<13} {what}; result: {out_jit[-1] if out_jit else ''}")
    print("\nTimes are the scripts' own (their work, after imports); the process times include "
          "start-up\nand, for tierjit, compiling. `tierjit run --report script.py` shows where "
          "the time went.")
    if "--no-tour" not in argv:
        print("\n--- examples/tour.py: the decorator API ---")
        sys.stdout.flush()
        status |= subprocess.run([py, str(ROOT / "examples" / "tour.py")],
                                 cwd=ROOT, env=dict(os.environ)).returncode
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
