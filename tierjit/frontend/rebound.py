"""Globals and closure variables read as constants that the source binds over and over.

The frontend compiles a free name that names a number in as a constant: its value when the
function is lowered. Every call's entry into compiled code checks that the name still holds
it, and a function whose names changed starts anew (runtime/names.py, runtime/restart.py):
a module that binds a number a second time (`N = int(sys.argv[1])` after `N = 1000`) has
the function compiled with the value it holds when the function gets hot, and again if it
changes after that. What the source shows binding the name over and over — an assignment
in a module-level loop or one in a function that declares it `global`; for a closure
variable, the same within the enclosing function (`nonlocal`) — would have it compiled and
started anew at call after call, so such a read keeps the function in CPython from the
start, which reads the name at every call; `tierjit.explain` names the line. So does a
number attribute of a module (`cfg.N`) that the reading module assigns in a loop or a
function, or that `cfg`'s source binds over and over.

The module is not parsed: parsing a long module holds the GIL for tens of milliseconds
(see frontend/source.py). The lines the name occurs on are found by a plain text search;
those that may bind it are matched by a pattern, and each one's enclosing blocks are read
from the indentation of the lines above it: a binding inside a nested `def` or `class`
binds a name of that scope, unless it declares the name `global` or `nonlocal`. The
patterns match a superset of the binding sites (`a[NAME] = ...`, a keyword argument on a
line of its own), so a doubt keeps the function in CPython rather than compiling a value in.
"""

from __future__ import annotations

import linecache
import os
import re
import sys
import threading

_LOCK = threading.Lock()
_MODULES: dict[str, _Module] = {}   # filename -> what is known of that module's names
_TARGET = r"[\w \t,()\[\]*.]*"
# Patterns, not compiled ones: re compiles (and caches) them when a function first reads a
# number from a global, not at every first call's import of the front end (~0.5 ms).
_HEADER = r"[ \t]*(async[ \t]+def|def|class|for|async[ \t]+for|while)\b"
_DEF = r"[ \t]*(?:async[ \t]+)?def\b"
_DEF_OR_CLASS = r"[ \t]*(?:async[ \t]+)?(?:def|class)\b"


def _assigned(target: str) -> str:
    """A pattern for a line assigning to the escaped `target` (also augmented, as one of
    several targets, of a chain `a = target = ...`, after `if c:` or `x = 1;` on the same
    line)."""
    return (rf"(?:.*[:;])?[ \t]*(?:{_TARGET}=(?!=)[ \t]*)*{_TARGET}\b{target}\b{_TARGET}"
            r"(?:[-+*/%&|^@]|//|\*\*|<<|>>)?=(?!=)")


class _Module:
    """One version of a module's source (linecache's list of its lines) and the answers
    found in it so far."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.answers: dict[tuple[str, int], int | None] = {}    # (name, scope) -> line


def rebinding_line(pyfunc, name: str) -> int | None:
    """The line that binds the global or closure variable `name` of pyfunc over and over:
    for a global, a binding inside a module-level loop (a `for` target included) or a
    `global` declaration of it; for a closure variable, the same within the enclosing
    function (`nonlocal` for `global`). None when the source shows no such line or is not
    available."""
    code = pyfunc.__code__
    cell = name in code.co_freevars
    if not cell and name not in pyfunc.__globals__:
        return None                  # a builtin
    lines = linecache.getlines(code.co_filename, pyfunc.__globals__)
    if not lines:
        return None
    key = (name, code.co_firstlineno if cell else 0)
    with _LOCK:
        m = _MODULES.get(code.co_filename)
        if m is None or m.lines is not lines:
            m = _MODULES[code.co_filename] = _Module(lines)
        if key in m.answers:
            return m.answers[key]
    if cell:
        # the scope the cell belongs to: the innermost enclosing function that binds it
        line, first = None, code.co_firstlineno - 1
        while 0 <= first < len(lines):
            scope = _enclosing_def(lines, first)
            if scope is None:
                break
            line, bound = _rebinding(lines, name, *scope)
            if bound:
                break
            first = scope[3]
    else:
        line, _ = _rebinding(lines, name, 0, len(lines), 0, None)
    with _LOCK:
        m.answers[key] = line
    return line


def attribute_rebinding(pyfunc, module, dotted: str, attr: str) -> str | None:
    """Where the number attribute `dotted` (`cfg.N`, module.attr) of a module pyfunc reads
    is bound over and over: an assignment to it in a loop or a function of pyfunc's own
    module, or what `rebinding_line` finds for `attr` in the module's source (which is not
    looked into for the standard library and installed packages). "line L" or "line L of
    FILE"; None when neither shows."""
    code = pyfunc.__code__
    lines = linecache.getlines(code.co_filename, pyfunc.__globals__)
    # the module under any name the reading module has for it (`import cfg as c`: c.N = ...)
    names = {dotted} | {f"{k}.{attr}" for k, v in pyfunc.__globals__.items() if v is module}
    for spelled in names:
        assigns = re.compile(_assigned(re.escape(spelled)))
        for k, text in enumerate(lines):
            if spelled in text and assigns.match(text) and _enclosing(lines, k, 0, 0) != "scope":
                return f"line {k + 1}"
    path = getattr(module, "__file__", None)
    if not isinstance(path, str) or not path.endswith(".py") or "-packages" in path \
            or path.startswith((sys.prefix, sys.base_prefix)):
        return None
    mlines = linecache.getlines(path, module.__dict__)
    line = _rebinding(mlines, attr, 0, len(mlines), 0, None)[0] if mlines else None
    return None if line is None else f"line {line} of {os.path.basename(path)}"


def _rebinding(lines: list[str], name: str, lo: int, hi: int, body: int,
               header: int | None) -> tuple[int | None, bool]:
    """(the line of lines[lo:hi], the body of a scope whose statements are indented by
    `body` (lines[header] its `def`, None for a module), that binds `name` in a loop of the
    scope or declares it `global` or `nonlocal`, or None; whether the scope binds it at
    all)."""
    n = re.escape(name)
    binds = re.compile(
        _assigned(n)                                            # name = ..., a, name += ...
        + rf"|[ \t]*{n}[ \t]*:|.*\b{n}[ \t]*:="                  # name: T = ..., name := ...
        rf"|[ \t]*(?:async[ \t]+)?for\b[^:=]*?\b{n}\b[^:]*?\bin\b"       # for name in
        rf"|[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+{n}\b"         # def name, class name
        rf"|[ \t]*case\b[^#]*\b{n}\b"                              # a pattern capturing it
        rf"|.*(?:\bas[ \t]+\(?[\w \t,()]*\b{n}\b|\b(?:import|del)\b[^#]*\b{n}\b)")
    declares = re.compile(rf"[ \t]*(?:global|nonlocal)\b[^;#]*\b{n}\b")
    word = re.compile(rf"\b{n}\b")
    bound = header is not None and word.search(lines[header]) is not None    # a parameter
    for k in range(lo, hi):
        text = lines[k]
        if name not in text or not word.search(text):
            continue
        j = k
        while text.rstrip().endswith("\\") and j + 1 < hi:   # a continued line: joined
            j += 1
            text = text.rstrip()[:-1] + " " + lines[j]
        if declares.match(text):
            return k + 1, True
        if not binds.match(text):
            continue
        scope = _enclosing(lines, k, lo, body)
        if scope == "function":
            continue
        if scope == "loop" or re.match(_HEADER, text) and not re.match(_DEF_OR_CLASS, text):
            return k + 1, True                            # in a loop, or a for loop's target
        bound = True
    return None, bound


def _enclosing(lines: list[str], k: int, lo: int, body: int) -> str:
    """What line k is inside, read from the indentation of the lines above it down to lo:
    "function" (a def or class body nested in the scope), "loop" (a for or while of the
    scope's own statements) or "scope"."""
    inside_loop = False
    if _indent(lines[k]) > body:
        for _j, text, indent in _openers(lines, k, lo):
            head = re.match(_HEADER, text)
            if head:
                if head.group(1).endswith(("def", "class")):
                    return "function"
                inside_loop = True
            if indent <= body:
                break
    return "loop" if inside_loop else "scope"


def _enclosing_def(lines: list[str], first: int) -> tuple[int, int, int, int] | None:
    """The body of the function enclosing the definition that starts on lines[first]:
    (its first line, the line after its last, its statements' indent, its `def` line)."""
    for j, text, indent in _openers(lines, first, 0):
        if re.match(_DEF, text):
            break
    else:
        return None
    end, body = j + 1, None
    while end < len(lines):
        text = lines[end]
        if text.strip() and not text.lstrip().startswith("#"):
            if _indent(text) <= indent:
                break
            body = _indent(text) if body is None else min(body, _indent(text))
        end += 1
    return j + 1, end, body if body is not None else indent + 1, j


def _openers(lines: list[str], k: int, lo: int):
    """The lines opening the blocks that enclose lines[k], innermost first, down to lines[lo]:
    (index, text, indent) of each line above k indented less than everything since."""
    indent = _indent(lines[k])
    for j in range(k - 1, lo - 1, -1):
        text = lines[j]
        if not text.strip() or text.lstrip().startswith("#"):
            continue
        i = _indent(text)
        if i < indent:
            indent = i
            yield j, text, i


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" \t"))
