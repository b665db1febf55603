"""The poll ticker (backends/llvm/ticker.py): a native thread raising a flag that LLVM cores
making native calls read on entry, once per native frame."""

import glob
import os
import subprocess
import sys
import textwrap
import time

import tierjit
from tierjit.backends.llvm import ticker
from tierjit.runtime.dispatch import dispatcher_of


def raised_within(seconds: float) -> bool:
    ticker.flag_address()                        # the thread started
    flag = ticker.FLAG
    flag.value = 0
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        if flag.value:
            return True
        time.sleep(0.001)
    return False


def test_the_flag_is_raised_every_period():
    assert raised_within(0.5)
    ticks = 0
    start = time.perf_counter()
    while time.perf_counter() - start < 0.2:
        if raised_within(0.5):
            ticks += 1
    # every PERIOD_NS (10 ms): ~20 in 0.2 s; a loaded machine may stretch the sleeps
    assert 3 <= ticks <= 25


def ticker_sleeps() -> int:
    """How many times the ticker thread has slept (voluntary context switches)."""
    for task in glob.glob(f"/proc/{os.getpid()}/task/*"):
        with open(f"{task}/comm") as f:
            if f.read().strip() == "tierjit-ticker":
                with open(f"{task}/status") as f:
                    for line in f:
                        if line.startswith("voluntary_ctxt_switches"):
                            return int(line.split()[1])
    raise AssertionError("no tierjit-ticker thread")


def test_the_ticker_slows_down_while_no_core_takes_the_flag_down():
    ticker.flag_address()
    ticker.FLAG.value = 1                      # up, and left up: as when no recursion runs
    time.sleep(0.3)                            # 10, 20, 40, then 80 ms sleeps
    before = ticker_sleeps()
    time.sleep(1.0)
    idle = ticker_sleeps() - before            # ~12 (IDLE_NS)
    before = ticker_sleeps()
    end = time.perf_counter() + 1.0
    while time.perf_counter() < end:           # taken down as a recursion's cores would
        ticker.FLAG.value = 0
        time.sleep(0.001)
    busy = ticker_sleeps() - before            # ~100 (PERIOD_NS), fewer on a loaded machine
    assert idle <= 20
    assert busy >= 2 * idle


def test_a_forked_child_raises_its_own_flag(tmp_path):
    script = tmp_path / "fork.py"
    script.write_text(textwrap.dedent("""
        import os, time
        from tierjit.backends.llvm import ticker
        ticker.flag_address()                    # the thread runs in the parent
        flag = ticker.FLAG
        pid = os.fork()
        if pid == 0:                             # fork() copied no thread
            flag.value = 0
            end = time.perf_counter() + 2
            while not flag.value and time.perf_counter() < end:
                time.sleep(0.001)
            os._exit(0 if flag.value else 1)
        _, status = os.waitpid(pid, 0)
        print("child", os.waitstatus_to_exitcode(status))
    """))
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIERJIT_")}
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                         timeout=60, check=False)
    assert out.stdout.strip() == "child 0", out.stdout + out.stderr


def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


def test_a_recursive_core_reads_the_flag_once_per_native_frame():
    """Its twins, inlined into its frame (backends/llvm/recursion.py), do not read it: the
    optimised module has one read, in the core's entry; and the answers stay right when the
    flag is up as a call starts."""
    global fib
    plain = fib
    fib = tierjit.jit(plain, tier="opt")
    try:
        assert fib(20) == 6765
        (spec,) = dispatcher_of(fib).specs.values()
        assert spec.native.llvm_text.count("load atomic i32") == 1
        flag = ticker.FLAG
        for _ in range(50):
            flag.value = 1
            assert fib(18) == 2584
    finally:
        fib = plain
