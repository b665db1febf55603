"""One `tierjit run`'s outputs: the sampler while the script runs, report, trace and plot at exit.

The outputs are written by an exit handler registered before the script runs, so it runs after
the script's own exit handlers and after non-daemon threads have finished (CPython joins them
first), whatever way the script ends: normally, by `sys.exit`, or by an uncaught exception.
A failure of an output is reported on stderr, prefixed with `tierjit:`, and never changes the
script's exit status.
"""

from __future__ import annotations

import sys


class Session:
    """What `tierjit run --report/--trace/--plot` asked for, and the sampler they need."""

    def __init__(self, report: bool = False, trace: str | None = None,
                 plot: str | None = None) -> None:
        self.report, self.trace, self.plot = report, trace, plot
        self.sampler = None

    def start(self) -> None:
        import atexit
        if self.report:
            from .sampler import Sampler
            self.sampler = Sampler()
            self.sampler.start()
        if self.report or self.trace or self.plot:
            atexit.register(self.finish)

    def finish(self) -> None:
        if self.sampler is not None:
            self.sampler.stop()
        for what, fn in (("trace", self._write_trace), ("plot", self._write_plot),
                         ("report", self._print_report)):
            try:
                fn()
            except Exception as e:     # noqa: BLE001 - never the script's problem
                print(f"tierjit: could not write the {what}: {type(e).__name__}: {e}",
                      file=sys.stderr)

    def _write_trace(self) -> None:
        if self.trace:
            from .trace import write_trace
            write_trace(self.trace)

    def _write_plot(self) -> None:
        if self.plot:
            from .plot import write_plot
            write_plot(self.plot)

    def _print_report(self) -> None:
        if self.report:
            from .report import print_report
            print_report(self.sampler, file=sys.stderr)
