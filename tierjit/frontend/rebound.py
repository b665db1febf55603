"""Globals and closure variables a function reads as constants, but that are bound again.

The frontend compiles a free name that names a number in as a constant: its value when the
function is lowered. That is only right while the name keeps that value, which a module
that binds the name again (a second assignment, an assignment in a module-level loop, one
in a function that declares it `global`) does not promise, nor an enclosing function that
binds its closure variable again, nor a module attribute (`cfg.N`) that the reading module
assigns or `cfg` binds again. Such a read keeps the function in CPython, which reads the
name at every call; `tierjit.explain` names the line that binds it again. Rebinding that
these sources do not show (a third module assigning `cfg.N`, `globals()[...]`) is the
limitation docs/guide.md describes.

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
    """The line that binds the global or closure variable `name` of pyfunc again: for a
    global, a second binding at module level, one inside a module-level loop, or a `global`
    declaration of it; for a closure variable, the same within the enclosing function (its
    parameters included, `nonlocal` for `global`). None when the source binds it once at
    most or is not available."""
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
        line, _ = _rebinding(lines, name, 0, len(lines), 0, None,
                             _star_exporters(lines, name))
    with _LOCK:
        m.answers[key] = line
    return line


def attribute_rebinding(pyfunc, module, dotted: str, attr: str) -> str | None:
    """Where the number attribute `dotted` (`cfg.N`, module.attr) of a module pyfunc reads
    is bound again: an assignment to it in pyfunc's own module, or a second binding of `attr`
    in the module's source (which is not looked into for the standard library and installed
    packages). "line L" or "line L of FILE"; None when neither shows."""
    code = pyfunc.__code__
    lines = linecache.getlines(code.co_filename, pyfunc.__globals__)
    # the module under any name the reading module has for it (`import cfg as c`: c.N = ...)
    names = {dotted} | {f"{k}.{attr}" for k, v in pyfunc.__globals__.items() if v is module}
    for spelled in names:
        assigns = re.compile(_assigned(re.escape(spelled)))
        for k, text in enumerate(lines):
            if spelled in text and assigns.match(text):
                return f"line {k + 1}"
    path = getattr(module, "__file__", None)
    if not isinstance(path, str) or not path.endswith(".py") or "-packages" in path \
            or path.startswith((sys.prefix, sys.base_prefix)):
        return None
    mlines = linecache.getlines(path, module.__dict__)
    line = _rebinding(mlines, attr, 0, len(mlines), 0, None)[0] if mlines else None
    return None if line is None else f"line {line} of {os.path.basename(path)}"


def _rebinding(lines: list[str], name: str, lo: int, hi: int, body: int,
               header: int | None, stars: str = "") -> tuple[int | None, bool]:
    """(the line of lines[lo:hi], the body of a scope whose statements are indented by
    `body` (lines[header] its `def`, None for a module), that binds `name` again, or None;
    whether the scope binds it at all). `stars`: a pattern for the modules whose `import *`
    binds the name (_star_exporters)."""
    n = re.escape(name)
    binds = re.compile(
        _assigned(n)                                            # name = ..., a, name += ...
        + rf"|[ \t]*{n}[ \t]*:|.*\b{n}[ \t]*:="                  # name: T = ..., name := ...
        rf"|[ \t]*(?:async[ \t]+)?for\b[^:=]*?\b{n}\b[^:]*?\bin\b"       # for name in
        rf"|[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+{n}\b"         # def name, class name
        rf"|[ \t]*case\b[^#]*\b{n}\b"                              # a pattern capturing it
        rf"|.*(?:\bas[ \t]+\(?[\w \t,()]*\b{n}\b|\b(?:import|del)\b[^#]*\b{n}\b)"
        + (rf"|[ \t]*from[ \t]+(?:{stars})[ \t]+import[ \t]*\*" if stars else ""))
    declares = re.compile(rf"[ \t]*(?:global|nonlocal)\b[^;#]*\b{n}\b")
    word = re.compile(rf"\b{n}\b|import[ \t]*\*" if stars else rf"\b{n}\b")
    sites = [header + 1] if header is not None and word.search(lines[header]) else []
    for k in range(lo, hi):
        text = lines[k]
        if (name not in text and not stars) or not word.search(text):
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
        sites.append(k + 1)
        if len(sites) > 1:
            return sites[1], True
    return None, bool(sites)


def _star_exporters(lines: list[str], name: str) -> str:
    """A pattern for the modules whose `from m import *` in lines binds `name` (those
    imported already: the module that has the line ran it), or ""."""
    found = []
    for text in lines:
        if "import" in text and "*" in text:
            m = re.match(r"[ \t]*from[ \t]+([\w.]+)[ \t]+import[ \t]*\*", text)
            mod = sys.modules.get(m.group(1)) if m else None
            if mod is not None:
                public = getattr(mod, "__all__", None)
                if name in public if public is not None else \
                        name in vars(mod) and not name.startswith("_"):
                    found.append(re.escape(m.group(1)))
    return "|".join(found)


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
