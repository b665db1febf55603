"""Ctrl-C reaches a long native loop: KeyboardInterrupt within 100 ms of SIGINT."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

SCRIPT = textwrap.dedent("""
    import sys, time
    import tierjit

    @tierjit.jit(tier="opt")
    def spin(n):
        s = 0
        for i in range(n):
            s = (s + i * 7) % 1000003
        return s

    spin(10)                        # compiled and native now
    print("ready", flush=True)
    try:
        spin(10 ** 13)              # hours in native code
    except KeyboardInterrupt:
        print("interrupted", time.perf_counter(), flush=True)
        sys.exit(0)
    print("finished?!", flush=True)
""")


def test_ctrl_c_interrupts_a_native_loop(tmp_path):
    path = tmp_path / "spin.py"
    path.write_text(SCRIPT)
    proc = subprocess.Popen([sys.executable, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(0.3)             # well inside the native loop
        sent = time.perf_counter()
        os.kill(proc.pid, signal.SIGINT)
        line = proc.stdout.readline().split()
        assert proc.wait(timeout=10) == 0
    finally:
        proc.kill()
    assert line[0] == "interrupted"
    assert float(line[1]) - sent < 0.1
