"""Structures: functions from source text or `ast` trees, with their float literals abstracted.

Analogue: hash-consing / a code cache keyed on the shape of the code. Two functions that differ
only in float literals have one *structure*: one Template whose params are the literals
(`_tjc0`, `_tjc1`, ... in source order), and each function is a bind of it. So a new variant
with other constants costs a dictionary lookup and a bind, never a parse or a compile.

Only float literals are abstracted: int and bool literals shape loops, indices and exponents,
so they stay part of the structure (as do literals in default values, decorators and match
patterns, which are evaluated elsewhere). Complex literals stay too.

Two ways in, both ending in the same structure table:

- source text: a regular expression splits the text around float literals, and the text
  between them is the key (microseconds, no parse). The first time a key is seen the source is
  parsed and the split is checked against the tree (a literal inside a string or a comment,
  or anything else the expression misjudges, marks the key "parse every time");
- an ast tree: a walk collects the float constants and the rest of the tree as the key.
"""

from __future__ import annotations

import ast
import builtins
import copy
import re
import threading
from typing import Any

from . import source as _src
from .template import Template

PREFIX = "_tjc"
# a float literal as a whole token: digits with a point and/or an exponent, no neighbouring
# word character or point (so not part of a name, an int, a complex or an attribute access)
_FLOAT = re.compile(r"(?<![\w.])(\d+\.\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|"
                    r"\d+[eE][+-]?\d+)(?![\w.])")
_UNSAFE = object()

_lock = threading.RLock()
_by_text: dict[tuple, Any] = {}         # (namespace key, name, text key) -> Template | _UNSAFE
_by_tree: dict[tuple, Template] = {}    # (namespace key, name, tree key) -> Template
_namespaces: dict[int, dict] = {}       # keeps user namespaces alive while keyed by id


def clear() -> None:
    """Forget every structure (their compiled code stays alive while variants use it)."""
    with _lock:
        _by_text.clear()
        _by_tree.clear()
        _namespaces.clear()


def _ns_key(globals: dict | None) -> int:
    if globals is None:
        return 0
    _namespaces[id(globals)] = globals
    return id(globals)


# -- the tree key -----------------------------------------------------------------------------
_SKIP_FIELDS = {"decorator_list", "args", "returns", "type_comment"}


def _tree_key(node: ast.AST, out: list, consts: list, abstract: bool = True) -> None:
    """Append node's shape to `out` and its abstracted float literals to `consts`, in the
    order `_Abstract` numbers them (the function's signature, decorators and match patterns
    are structure: their literals are kept in the key)."""
    t = type(node)
    if t is ast.Constant:
        v = node.value
        if abstract and type(v) is float:
            consts.append(v)
            out.append(0.0)
        else:
            out.append((type(v), v))
        return
    out.append(t)
    for f in node._fields:
        v = getattr(node, f, None)
        keep = abstract and not (t is ast.FunctionDef and f in _SKIP_FIELDS or
                                 t is ast.match_case and f == "pattern")
        if isinstance(v, list):
            out.append(len(v))
            for x in v:
                if isinstance(x, ast.AST):
                    _tree_key(x, out, consts, keep)
                else:
                    out.append(x)
        elif isinstance(v, ast.AST):
            _tree_key(v, out, consts, keep)
        else:
            out.append(v)


class _Abstract(ast.NodeTransformer):
    """Float literals -> names _tjc0, _tjc1, ... (same order and same skips as _tree_key)."""

    def __init__(self, prefix: str):
        self.prefix, self.n = prefix, 0

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if type(node.value) is not float:
            return node
        name = ast.copy_location(ast.Name(f"{self.prefix}{self.n}", ast.Load()), node)
        self.n += 1
        return name

    def visit_match_case(self, node: ast.match_case) -> ast.AST:
        if node.guard is not None:
            node.guard = self.visit(node.guard)
        node.body = [self.visit(s) for s in node.body]
        return node

    def abstract(self, fdef: ast.FunctionDef) -> ast.FunctionDef:
        fdef.body = [self.visit(s) for s in fdef.body]
        return fdef


def _prefix_for(fdef: ast.FunctionDef) -> str:
    names = _src.read_names(fdef) | set(_src.assigned_names(fdef)) | set(_src.arg_names(fdef))
    prefix = PREFIX
    while any(n.startswith(prefix) for n in names):
        prefix += "_"
    return prefix


def _structure(key: tuple, prelude: list[ast.stmt], fdef: ast.FunctionDef,
               globals: dict | None, owned: bool) -> Template:
    """The Template for this tree key, made on first sight (fdef is copied unless owned)."""
    t = _by_tree.get(key)
    if t is None:
        fdef = fdef if owned else copy.deepcopy(fdef)
        prefix = _prefix_for(fdef)
        ab = _Abstract(prefix)
        ab.abstract(fdef)
        params = tuple(f"{prefix}{k}" for k in range(ab.n))
        ns = {"__builtins__": builtins, **(globals or {})}
        t = _by_tree[key] = Template(fdef, params, ns, own_namespace=True, prelude=prelude,
                                     what="compile_source")
        t.const_prefix = prefix
    return t


def _from_tree(tree: ast.AST, name: str | None, globals: dict | None, owned: bool,
               what: str) -> tuple[Template, list[float]]:
    prelude, fdef = _src.split_module(tree, name, what)
    out: list = [fdef.name, len(prelude)]
    for s in prelude:
        out.append(ast.dump(s))
    consts: list[float] = []
    _tree_key(fdef, out, consts)
    key = (_ns_key(globals), tuple(out))
    with _lock:
        t = _structure(key, prelude, fdef, globals, owned)
    return t, consts


# -- public -----------------------------------------------------------------------------------
def compile_source(source: str, *, name: str | None = None,
                   globals: dict[str, Any] | None = None) -> Any:
    """A callable for the function `source` defines, sharing code with every earlier source of
    the same structure (see the module docstring). `globals` (copied) is what its free names
    resolve in; imports at the top of the source are run too."""
    if not isinstance(source, str):
        raise TypeError(f"compile_source: expected source text, got {type(source).__name__}")
    t, consts = split_source(source, name, globals)
    return t.bind(*consts)


def compile_ast(tree: ast.AST, *, name: str | None = None,
                globals: dict[str, Any] | None = None) -> Any:
    """compile_source for an ast.Module (one function definition, maybe imports) or an
    ast.FunctionDef. The tree is not modified."""
    t, consts = _from_tree(tree, name, globals, False, "compile_ast")
    return t.bind(*consts)


def split_source(source: str, name: str | None = None,
                 globals: dict | None = None) -> tuple[Template, list[float]]:
    """(structure template, float constants in order) of a function's source."""
    parts = _FLOAT.split(source)
    key = (_ns_key(globals), name, "\0".join(parts[0::2]))
    hit = _by_text.get(key)
    if hit is not None and hit is not _UNSAFE:
        return hit, [float(x) for x in parts[1::2]]
    tree = _parse(source)
    t, consts = _from_tree(tree, name, globals, True, "compile_source")
    if hit is None:             # first sight of this text key: may it skip the parse?
        with _lock:
            _by_text[key] = t if _split_agrees(parts, t, consts, name) else _UNSAFE
    return t, consts


def _parse(source: str) -> ast.Module:
    try:
        return ast.parse(source)
    except SyntaxError as e:
        raise SyntaxError(f"compile_source: the source does not parse: {e.msg} "
                          f"(line {e.lineno})") from None


def _split_agrees(parts: list[str], t: Template, consts: list[float],
                  name: str | None) -> bool:
    """Does the text split find exactly the tree's abstracted literals, in the same order?
    Checked by parsing the split text with the literals replaced by the structure's names."""
    literals = parts[1::2]
    if len(literals) != len(consts) or any(float(x) != c for x, c in zip(literals, consts)):
        return False
    prefix = t.const_prefix
    text = "".join(p if k % 2 == 0 else f"{prefix}{k // 2}" for k, p in enumerate(parts))
    try:
        prelude, fdef = _src.split_module(ast.parse(text), name, "compile_source")
    except (SyntaxError, ValueError):
        return False
    return ast.dump(fdef) == ast.dump(t.fdef) and \
        [ast.dump(s) for s in prelude] == [ast.dump(s) for s in t._prelude]
