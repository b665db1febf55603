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
