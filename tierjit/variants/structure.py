"""Structures: functions from source text or `ast` trees, with their float literals abstracted.

Analogue: hash-consing / a code cache keyed on the shape of the code. Two functions that differ
only in float literals have one *structure*: one Template whose params are the literals
(`_tjc0`, `_tjc1`, ... in source order), and each function is a bind of it. So a new variant
with other constants costs a dictionary lookup and a bind, never a parse or a compile.

Only float literals are abstracted (with their sign: `-1.5` is one constant, -1.5): int and
bool literals shape loops, indices and exponents,
so they stay part of the structure (as do literals in default values, decorators and match
patterns, which are evaluated elsewhere). Complex literals stay too.

Two ways in, both ending in the same structure table:

- source text: a regular expression splits the text around float literals, and the text
  between them is the key (microseconds, no parse). The first time a key is seen the source is
  parsed and the split is checked against the tree: the literals found in the text must be
  exactly the tree's abstracted constants, at the same places. A literal inside a string or a
  comment, or anything else the expression misjudges, marks the key "parse every time".
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
_FLOAT = re.compile(r"(?<![\w.])((?:\d+\.\d*|\.\d+)(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+)(?![\w.])")
# where a "-" right before a literal can only be a unary minus (it then belongs to the
# constant: `-1.5` is one constant to the user, as it is to the tree abstraction)
_UNARY_CHARS = frozenset("-+*/%=([,:<>&|^~@")
_UNARY_WORD = re.compile(r"(?<![\w.])(?:return|else|if|and|or|not|in|is|lambda|yield)$")
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


def _tree_key(node: ast.AST, out: list, consts: list, spans: list,
              abstract: bool = True) -> None:
    """Append node's shape to `out` and its abstracted float literals to `consts`, in the
    order `_Abstract` numbers them (the function's signature, decorators and match patterns
    are structure: their literals are kept in the key)."""
    t = type(node)
    if t is ast.Constant:
        v = node.value
        if abstract and type(v) is float:
            consts.append(v)
            spans.append(node)
            out.append(0.0)
        else:
            out.append((type(v), v))
        return
    if abstract and t is ast.UnaryOp and type(node.op) is ast.USub and \
            type(node.operand) is ast.Constant and type(node.operand.value) is float:
        consts.append(-node.operand.value)
        spans.append(node)
        out.append(0.0)
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
                    _tree_key(x, out, consts, spans, keep)
                else:
                    out.append(x)
        elif isinstance(v, ast.AST):
            _tree_key(v, out, consts, spans, keep)
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

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        if isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) and \
                type(node.operand.value) is float:
            return self.visit_Constant(node.operand)      # -1.5 is one constant
        return self.generic_visit(node)

    def visit_match_case(self, node: ast.match_case) -> ast.AST:
        if node.guard is not None:
            node.guard = self.visit(node.guard)
        node.body = [self.visit(s) for s in node.body]
        return node

    def abstract(self, fdef: ast.FunctionDef) -> ast.FunctionDef:
        fdef.body = [self.visit(s) for s in fdef.body]
        return fdef


def _structure(key: tuple, prelude: list[ast.stmt], fdef: ast.FunctionDef,
               globals: dict | None, owned: bool, prefix: str) -> Template:
    """The Template for this tree key, made on first sight (fdef is copied unless owned)."""
    t = _by_tree.get(key)
    if t is None:
        fdef = fdef if owned else copy.deepcopy(fdef)
        ab = _Abstract(prefix)
        ab.abstract(fdef)
        params = tuple(f"{prefix}{k}" for k in range(ab.n))
        ns = {"__builtins__": builtins, **(globals or {})}
        t = _by_tree[key] = Template(fdef, params, ns, own_namespace=True, prelude=prelude,
                                     what="compile_source", trusted=True)
    return t


def _from_tree(tree: ast.AST, name: str | None, globals: dict | None, owned: bool,
               what: str, spans: list | None = None) -> tuple[Template, list[float]]:
    prelude, fdef = _src.split_module(tree, name, what)
    out: list = [fdef.name, len(prelude)]
    for s in prelude:
        out.append(ast.dump(s))
    consts: list[float] = []
    _tree_key(fdef, out, consts, [] if spans is None else spans)
    prefix = PREFIX
    while any(type(x) is str and x.startswith(prefix) for x in out):
        prefix += "_"                  # the function has names like ours: use longer ones
    key = (_ns_key(globals), tuple(out))
    with _lock:
        t = _structure(key, prelude, fdef, globals, owned, prefix)
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
    consts = []
    for k in range(1, len(parts), 2):
        v = float(parts[k])
        before = parts[k - 1]
        if before.endswith("-"):
            head = before[:-1].rstrip()
            if head and (head[-1] in _UNARY_CHARS or _UNARY_WORD.search(head)):
                parts[k - 1] = before[:-1]
                v = -v
        consts.append(v)
    key = (_ns_key(globals), name, "\0".join(parts[0::2]))
    hit = _by_text.get(key)
    if hit is not None and hit is not _UNSAFE:
        return hit, consts
    spans: list[ast.AST] = []
    t, tree_consts = _from_tree(_parse(source), name, globals, True, "compile_source", spans)
    if hit is None:             # first sight of this text key: may it skip the parse?
        with _lock:
            safe = tree_consts == consts and _same_places(source, parts, spans)
            _by_text[key] = t if safe else _UNSAFE
    return t, tree_consts


def _parse(source: str) -> ast.Module:
    try:
        return ast.parse(source)
    except SyntaxError as e:
        raise SyntaxError(f"compile_source: the source does not parse: {e.msg} "
                          f"(line {e.lineno})") from None


def _same_places(source: str, parts: list[str], nodes: list[ast.AST]) -> bool:
    """Are the literals the split found exactly where the tree's abstracted constants are
    (same start and end offsets, in order)? Then every source with the same split text has its
    constants in the same places of the same tree (see the module docstring)."""
    if not source.isascii() or len(nodes) != len(parts) // 2:
        return False                   # (ast offsets count UTF-8 bytes)
    line_start = [0]
    for line in source.splitlines(True):
        line_start.append(line_start[-1] + len(line))
    pos = 0
    for k, part in enumerate(parts):
        if k % 2:
            node = nodes[k // 2]
            start = line_start[node.lineno - 1] + node.col_offset
            end = line_start[node.end_lineno - 1] + node.end_col_offset
            lit = len(part) + (1 if source[pos - 1:pos] == "-" and
                               not parts[k - 1].endswith("-") else 0)
            if (start, end) != (pos - (lit - len(part)), pos + len(part)):
                return False
            del lit
        pos += len(part)
    return True
