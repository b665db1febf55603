"""Benchmark harness: kernel loading, C builds, timing, result checks, reports.

`bench/run.py` is the command line; `harness/worker.py` measures one (kernel, column) cell in a
fresh process, so a crash, hang or leak in one JIT never takes the whole run down.
"""
