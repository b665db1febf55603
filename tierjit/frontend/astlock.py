"""All of tierjit's parsing to `ast` trees goes through here.

CPython 3.11 keeps the AST converters' recursion-depth counter in state all threads share
(gh-106905): two threads converting ASTs at once can fail with `SystemError: AST constructor
recursion depth mismatch`. tierjit's compiler thread and the program's threads both do it,
so tierjit serialises its own AST work with one lock, and retries when the program's own
threads (which the lock cannot reach) collide with it.
"""

from __future__ import annotations

import ast
import threading

AST_LOCK = threading.Lock()
_TRIES = 4


def _retrying(f, *args):
    for attempt in range(_TRIES):
        try:
            with AST_LOCK:
                return f(*args)
        except SystemError as e:
            if "recursion depth mismatch" not in str(e) or attempt == _TRIES - 1:
                raise
    raise AssertionError("unreachable")


def parse(source: str) -> ast.Module:
    """ast.parse, safe against the race."""
    return _retrying(ast.parse, source)
