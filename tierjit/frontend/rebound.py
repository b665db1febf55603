"""Globals a function reads as constants, but that its module binds again.

The frontend compiles a global that names a number in as a constant: its value when the
function is lowered. That is only right while the name keeps that value, which a module
that binds the name again (a second assignment, an assignment in a module-level loop, one
in a function that declares it `global`) does not promise. Such a read keeps the function
in CPython, which reads the global at every call; `tierjit.explain` names the line that
binds it again. Rebinding that the module's source does not show (another module assigning
`mod.NAME`, `globals()[...]`) is the limitation docs/guide.md describes.

The module is not parsed: parsing a long module holds the GIL for tens of milliseconds
(see frontend/source.py). The lines the name occurs on are found by a plain text search;
those that may bind it are matched by a pattern, and each one's enclosing blocks are read
from the indentation of the lines above it: a binding inside a `def` or `class` binds a
name of that scope, unless the function declares the name `global`. The patterns match a
superset of the binding sites (`a[NAME] = ...`, a keyword argument on a line of its own), so
a doubt keeps the function in CPython rather than compiling a value in.
"""

from __future__ import annotations

import linecache
import re
import threading

_LOCK = threading.Lock()
_MODULES: dict[str, _Module] = {}   # filename -> what is known of that module's names
_TARGET = r"[\w \t,()\[\]*.]*"
_HEADER = re.compile(r"[ \t]*(async[ \t]+def|def|class|for|async[ \t]+for|while)\b")


class _Module:
    """One version of a module's source (linecache's list of its lines) and the answers
    found in it so far."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.answers: dict[str, int | None] = {}


def rebinding_line(pyfunc, name: str) -> int | None:
    """The line of pyfunc's module that binds the global `name` again (a second binding at
    module level, one inside a module-level loop, or a `global` declaration of it), or None
    when the module's source binds it once at most or is not available."""
    code = pyfunc.__code__
    if name in code.co_freevars or name not in pyfunc.__globals__:
        return None                  # a closure cell, or a builtin
    lines = linecache.getlines(code.co_filename, pyfunc.__globals__)
    if not lines:
        return None
    with _LOCK:
        m = _MODULES.get(code.co_filename)
        if m is None or m.lines is not lines:
            m = _MODULES[code.co_filename] = _Module(lines)
        if name in m.answers:
            return m.answers[name]
    line = _rebinding(lines, name)
    with _LOCK:
        m.answers[name] = line
    return line


def _rebinding(lines: list[str], name: str) -> int | None:
    n = re.escape(name)
    binds = re.compile(
        rf"(?:.*[:;])?[ \t]*{_TARGET}\b{n}\b{_TARGET}"          # targets, also after
        rf"(?:[-+*/%&|^@]|//|\*\*|<<|>>)?=(?!=)"                 # `if c:` or `x = 1;`
        rf"|[ \t]*{n}[ \t]*:|.*\b{n}[ \t]*:="                   # name: T = ..., name := ...
        rf"|[ \t]*(?:async[ \t]+)?for\b[^:=]*?\b{n}\b[^:]*?\bin\b"       # for name in
        rf"|.*(?:\bas[ \t]+{n}\b|\b(?:import|del)\b[^#]*\b{n}\b)")
    declares = re.compile(rf"[ \t]*global\b[^;#]*\b{n}\b")
    word = re.compile(rf"\b{n}\b")
    module_sites = []
    for k, text in enumerate(lines):
        if name not in text or not word.search(text):
            continue
        if declares.match(text):
            return k + 1
        if not binds.match(text):
            continue
        scope = _enclosing(lines, k)
        if scope == "function":
            continue
        if scope == "loop" or _HEADER.match(text):    # in a loop, or a for loop's target
            return k + 1
        module_sites.append(k + 1)
        if len(module_sites) > 1:
            return module_sites[1]
    return None


def _enclosing(lines: list[str], k: int) -> str:
    """What line k is inside, read from the indentation of the lines above it: "function"
    (a def or class body), "loop" (a module-level for or while) or "module"."""
    indent = _indent(lines[k])
    inside_loop = False
    for j in range(k - 1, -1, -1):
        if indent == 0:
            break
        text = lines[j]
        if not text.strip() or text.lstrip().startswith("#"):
            continue
        i = _indent(text)
        if i < indent:
            indent = i
            head = _HEADER.match(text)
            if head:
                if head.group(1).endswith(("def", "class")):
                    return "function"
                inside_loop = True
    return "loop" if inside_loop else "module"


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" \t"))
