"""Ctrl-C reaches a long native loop, or recursion: KeyboardInterrupt within 100 ms of SIGINT.

The 100 ms are the process's own: the time its thread waited for a core in between (another
process running on a loaded machine, from /proc's schedstat) is not the JIT's latency."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

SCRIPT = textwrap.dedent("""
    import sys, time
    import numpy as np
    import tierjit

    @tierjit.jit(tier="opt")
    def spin(a, n):
        s = 0
        LOOP
        return s

    def WAITED():                    # seconds this thread has waited for a core
        try:
            with open("/proc/thread-self/schedstat") as f:
                return int(f.read().split()[1]) / 1e9
        except OSError:
            return 0.0

    a = np.zeros(8, np.int64)
    spin(a, 10)                     # compiled and native now
    print("ready", flush=True)
    try:
        spin(a, 10 ** 13)           # hours in native code
    except KeyboardInterrupt:
        print("interrupted", time.perf_counter(), WAITED(), flush=True)
        sys.exit(0)
    print("finished?!", flush=True)
""")

LOOPS = {   # each replaces LOOP, indented by 4 in the script
    # a pure counted loop: run in chunks, polled at each chunk's end
    "pure": "for i in range(n):\n"
            "        s = (s + i * 7) % 1000003",
    # a counted loop that stores: chunked too
    "stores": "for i in range(n):\n"
              "        a[i % 8] = (s + i) % 1000003\n"
              "        s = a[i % 8]",
    # not counted: polled every POLL_PERIOD back edges
    "while": "i = 0\n"
             "    while i < n:\n"
             "        s = (s + i * 7) % 1000003\n"
             "        i += 1",
}


# a recursion without loops: LLVM's polls when the ticker's flag is up (backends/llvm/
# ticker.py), baseline code's self-calls every 1024
RECURSION = SCRIPT.replace(
    "def spin(a, n):\n    s = 0\n    LOOP\n    return s",
    "def spin(a, n):\n    if n < 2:\n        return n\n"
    "    return spin(a, n // 2) + spin(a, n - n // 2)")
# whole scripts, beside LOOPS's loops in the LLVM tier
SCRIPTS_OF = {"recursion": RECURSION.replace('tier="opt"', 'tier="baseline"'),
              "recursion-llvm": RECURSION,
              # baseline code's loops poll at their back edges (the poll stencil)
              "pure-baseline": SCRIPT.replace("LOOP", LOOPS["pure"]).replace(
                  'tier="opt"', 'tier="baseline"')}


def _waited(pid: int) -> float:
    """Seconds the process's main thread has waited for a core (0 where /proc has none)."""
    try:
        with open(f"/proc/{pid}/task/{pid}/schedstat") as f:
            return int(f.read().split()[1]) / 1e9
    except OSError:
        return 0.0


@pytest.mark.parametrize("loop", sorted(LOOPS) + sorted(SCRIPTS_OF))
def test_ctrl_c_interrupts_a_native_loop(tmp_path, loop):
    path = tmp_path / "spin.py"
    path.write_text(SCRIPTS_OF[loop] if loop in SCRIPTS_OF
                    else SCRIPT.replace("LOOP", LOOPS[loop]))
    proc = subprocess.Popen([sys.executable, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(0.3)             # well inside the native loop
        waited = _waited(proc.pid)
        sent = time.perf_counter()
        os.kill(proc.pid, signal.SIGINT)
        out, _ = proc.communicate(timeout=10)     # fails, not hangs, if never interrupted
    finally:
        proc.kill()
    line = out.split()
    assert proc.returncode == 0, out
    assert line[0] == "interrupted"
    assert float(line[1]) - sent - (float(line[2]) - waited) < 0.1
