"""Errors the compiler raises about user code (never escape to the user's program)."""

from __future__ import annotations


class Unsupported(Exception):
    """A construct or a type combination keeps code out of a tier.

    It names the construct and the source line, so `tierjit.explain` can say which line kept
    a function (or one specialisation of it) in plain CPython."""

    def __init__(self, construct: str, line: int = 0, detail: str = ""):
        self.construct, self.line, self.detail = construct, line, detail
        super().__init__(self.describe())

    def describe(self) -> str:
        where = f"line {self.line}: " if self.line else ""
        return f"{where}{self.construct}" + (f" ({self.detail})" if self.detail else "")


class CompileError(Exception):
    """A bug in tierjit itself; the dispatcher catches it and runs plain CPython."""


def the_programs(e: BaseException) -> bool:
    """Whether e, caught around the JIT's own work on the program's thread, is the program's
    to receive rather than the JIT's to absorb: not an Exception (Ctrl-C's KeyboardInterrupt,
    SystemExit), or one a signal handler raised (from_signal_handler)."""
    return not isinstance(e, Exception) or from_signal_handler(e)


def from_signal_handler(e: BaseException) -> bool:
    """Whether e, caught around the JIT's own work on the program's thread (a compile there),
    was raised by one of the program's Python signal handlers, which CPython runs between any
    two bytecodes, the JIT's included (a timeout's alarm raising TimeoutError): the program's
    exception, to reach it as under CPython, not a compiler bug to absorb."""
    import signal
    handlers = set()
    for s in signal.valid_signals():
        try:
            h = signal.getsignal(s)
        except (ValueError, OSError):
            continue
        code = getattr(getattr(h, "__func__", h), "__code__", None)
        if code is not None:
            handlers.add(code)
    tb = e.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code in handlers:
            return True
        tb = tb.tb_next
    return False
