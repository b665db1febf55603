"""Structures: functions from source text or `ast` trees, with their float literals abstracted.

Analogue: hash-consing / a code cache keyed on the shape of the code. Two functions that differ
only in float literals have one *structure*: one Template whose params are the literals
(`_tjc0`, `_tjc1`, ... in source order), and each function is a bind of it. So a new variant
with other constants costs a dictionary lookup and a bind, never a parse or a compile.

Only float literals are abstracted (with their sign: `-1.5` is one constant, -1.5): int and
bool literals shape loops, indices and exponents, so they stay part of the structure, as do
complex literals and literals in default values and match patterns (which are evaluated
elsewhere than the body). The function itself has no decorators (source.split_module).

Two ways in, both ending in the same structure table:

- source text: a regular expression splits the text around float literals, and the text
  between them is the key (microseconds, no parse). The first time a key is seen the source is
  parsed and the split is checked against the tree: the literals found in the text must be
  exactly the tree's abstracted constants, at the same places. Then the key is safe for every
  later source with the same split text: the literals stand where the first source had float
  literal tokens, surrounded by the same text, so it parses to the same tree with other
  constants (a minus is moved into a constant only where it can only be a unary minus
  applied to that literal alone, as the tree abstraction has it). A literal inside a string
  or a comment, or anything else the expression misjudges, marks the key "parse every time".
- an ast tree: a walk collects the float constants and the rest of the tree as the key.
"""

from __future__ import annotations

import ast
import builtins
import copy
import re
import struct
import textwrap
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
# ... unless what follows the literal binds tighter than that minus: a power (`-7.25 ** 2.0`
# is -(7.25 ** 2.0)) or a trailer (`-0.0 .hex()`, a call, a subscript); the minus then stays
# in the text, where the tree has it
_TIGHTER = re.compile(r"(?:[ \t]|\\\r?\n)*(?:\*\*|[.(\[])")
_UNSAFE = object()

_lock = threading.RLock()
_by_text: dict[tuple, Any] = {}         # (namespace key, name, text key) -> Template | _UNSAFE
_by_tree: dict[tuple, Template] = {}    # (namespace key, name, tree key) -> Template
# id of a user namespace -> (it, kept alive while keyed by id; a copy of what it held when its
# structures were made; their version)
_namespaces: dict[int, tuple[dict, dict, int]] = {}
_MISSING = object()


def clear() -> None:
    """Forget every structure (their compiled code stays alive while variants use it)."""
    with _lock:
        _by_text.clear()
        _by_tree.clear()
        _namespaces.clear()


def _ns_key(globals: dict | None) -> tuple[int, int]:
    """The namespace part of a structure's key: the dict's identity, and a version that
    changes when what the dict holds changes. A structure's template copies the dict when it
    is made, so a source compiled after `env["K"] = 100` must not find a structure made with
    the old K (it computed with it: 5.5 where exec gives 102.5)."""
    if globals is None:
        return (0, 0)
    with _lock:
        seen = _namespaces.get(id(globals))
        version = 0
        if seen is not None:
            held, version = seen[1], seen[2]
            try:
                if len(held) == len(globals) and \
                        all(held.get(k, _MISSING) is v for k, v in globals.items()):
                    return (id(globals), version)
            except RuntimeError:        # another thread changed it meanwhile: changed
                pass
            version += 1
        _namespaces[id(globals)] = (globals, dict(globals), version)
        return (id(globals), version)


# -- the tree key -----------------------------------------------------------------------------
_SKIP_FIELDS = {"decorator_list", "args", "returns", "type_comment"}


_LEAVES = (ast.Load, ast.Store, ast.Del, ast.Add, ast.Sub, ast.Mult, ast.Div, ast.USub,
           ast.UAdd, ast.Not, ast.Lt, ast.Gt, ast.Eq, ast.NotEq, ast.LtE, ast.GtE, ast.And,
           ast.Or, ast.Pow, ast.Mod, ast.FloorDiv)
_NO_FIELDS = frozenset(_LEAVES)


def _tree_key(node: ast.AST, out: list, consts: list, slots: list,
              abstract: bool = True) -> None:
    """Append node's shape to `out`, its abstracted float literals to `consts` (in source
    order: fields are visited in the order they are written) and, for each, where it sits to
    `slots`: (parent, field, index or None, node). A literal is a float Constant, or unary
    minus applied to one (-1.5 is one constant). The function's signature and match
    patterns are structure: their literals stay in the key.

    Hot: compile_ast runs it for every variant, so list fields and single fields share one
    inline loop over their children rather than a helper call per child."""
    append = out.append
    top = type(node) is ast.FunctionDef
    for f in node._fields:
        v = getattr(node, f, None)
        keep = abstract and not (top and f in _SKIP_FIELDS or f == "pattern")
        if type(v) is list:
            append(len(v))
            children = enumerate(v)
        else:
            children = ((None, v),)         # a single child: its slot has no index
        for i, x in children:
            t = type(x)
            if t in _NO_FIELDS:
                append(t)
            elif t is ast.Constant:
                c = x.value
                if keep and type(c) is float:
                    consts.append(c)
                    slots.append((node, f, i, x))
                    append(0.0)
                else:
                    append(_literal_key(c) if type(c) in _INEXACT else (type(c), c))
            elif keep and t is ast.UnaryOp and type(x.op) is ast.USub and \
                    type(x.operand) is ast.Constant and type(x.operand.value) is float:
                consts.append(-x.operand.value)
                slots.append((node, f, i, x))
                append(0.0)
            elif isinstance(x, ast.AST):
                append(t)
                _tree_key(x, out, consts, slots, keep)
            else:
                append(x)


_INEXACT = frozenset({float, complex, tuple, frozenset})
_DOUBLE = struct.Struct("<d")


def _literal_key(c: Any) -> Any:
    """The key of a literal that stays in the structure (a default value, say): equal only for
    literals that behave the same. `==` is not that: 0.0 == -0.0 (a tree with the default
    -0.0 got the structure of one with 0.0, and its result was 0.0), and nan != nan (a tree
    with a nan default never found its structure again). The type keeps 1, 1.0 and True
    apart; floats and complex numbers are keyed by their bits, a tuple by its elements."""
    t = type(c)
    if t is float:
        return (t, _DOUBLE.pack(c))
    if t is complex:
        return (t, _DOUBLE.pack(c.real), _DOUBLE.pack(c.imag))
    if t is tuple:
        return (t, tuple(_literal_key(x) for x in c))
    if t is frozenset:
        return (t, frozenset(_literal_key(x) for x in c))
    return (t, c)


def _abstract(slots: list, prefix: str) -> None:
    """Replace each recorded literal by the name prefix0, prefix1, ... in place."""
    for k, (parent, field, index, node) in enumerate(slots):
        name = ast.copy_location(ast.Name(f"{prefix}{k}", ast.Load()), node)
        if index is None:
            setattr(parent, field, name)
        else:
            getattr(parent, field)[index] = name


def _structure(key: tuple, prelude: list[ast.stmt], fdef: ast.FunctionDef,
               globals: dict | None, slots: list, owned: bool) -> Template:
    """The Template for this tree key, made on first sight (fdef is copied unless owned)."""
    t = _by_tree.get(key)
    if t is None:
        if not owned:
            fdef, slots = copy.deepcopy(fdef), []
            _tree_key(fdef, [], [], slots)
        names = "\0".join(x for x in key[1] if type(x) is str)   # every identifier
        prefix = PREFIX
        while prefix in names:
            prefix += "_"              # the function has names like ours: use longer ones
        _abstract(slots, prefix)
        params = tuple(f"{prefix}{k}" for k in range(len(slots)))
        ns = {"__builtins__": builtins, **(globals or {})}
        t = _by_tree[key] = Template(fdef, params, ns, own_namespace=True, prelude=prelude,
                                     what="compile_source", trusted=True)
    return t


def _from_tree(tree: ast.AST, name: str | None, globals: dict | None, owned: bool,
               what: str, slots: list | None = None) -> tuple[Template, list[float]]:
    prelude, fdef = _src.split_module(tree, name, what)
    out: list = [fdef.name, len(prelude)]
    for s in prelude:
        out.append(ast.dump(s))
    consts: list[float] = []
    slots = [] if slots is None else slots
    _tree_key(fdef, out, consts, slots)
    key = (_ns_key(globals), tuple(out))
    with _lock:
        t = _structure(key, prelude, fdef, globals, slots, owned)
    return t, consts


# -- public -----------------------------------------------------------------------------------
def compile_source(source: str, *, name: str | None = None,
                   globals: dict[str, Any] | None = None) -> Any:
    """A callable for the function `source` defines, sharing code with every earlier source of
    the same structure (see the module docstring). `globals` (copied) is what its free names
    resolve in; imports at the top of the source are run too."""
    if not isinstance(source, str):
        raise TypeError(f"compile_source: expected source text, got {type(source).__name__}")
    _src.check_globals(globals, "compile_source")
    try:
        t, consts = split_source(source, name, globals)
    except RecursionError:
        raise _src.too_deep("compile_source") from None
    return t.bind(*consts)


def compile_ast(tree: ast.AST, *, name: str | None = None,
                globals: dict[str, Any] | None = None) -> Any:
    """compile_source for an ast.Module (one function definition, maybe imports) or an
    ast.FunctionDef. The tree is not modified."""
    _src.check_globals(globals, "compile_ast")
    try:
        t, consts = _from_tree(tree, name, globals, False, "compile_ast")
    except RecursionError:
        raise _src.too_deep("compile_ast") from None
    return t.bind(*consts)


def split_source(source: str, name: str | None = None,
                 globals: dict | None = None) -> tuple[Template, list[float]]:
    """(structure template, float constants in order) of a function's source."""
    if source[:1] in " \t\n\r":
        source = textwrap.dedent(source)    # an indented source, as template() takes it
    parts = _FLOAT.split(source)
    consts, moved = [], []
    for k in range(1, len(parts), 2):
        v = float(parts[k])
        before = parts[k - 1]
        sign = False
        if before.endswith("-") and not _TIGHTER.match(parts[k + 1]):
            head = before[:-1].rstrip()
            if head and (head[-1] in _UNARY_CHARS or _UNARY_WORD.search(head)):
                parts[k - 1] = before[:-1]
                v, sign = -v, True
        consts.append(v)
        moved.append(sign)
    key = (_ns_key(globals), name, "\0".join(parts[0::2]))
    hit = _by_text.get(key)
    if hit is not None and hit is not _UNSAFE:
        return hit, consts
    slots: list = []
    t, tree_consts = _from_tree(_parse(source), name, globals, True, "compile_source", slots)
    if hit is None:             # first sight of this text key: may it skip the parse?
        with _lock:
            safe = tree_consts == consts and \
                _same_places(source, parts, moved, [s[3] for s in slots])
            _by_text[key] = t if safe else _UNSAFE
    return t, tree_consts


def _parse(source: str) -> ast.Module:
    try:
        return _src.parse(source)
    except SyntaxError as e:
        raise SyntaxError(f"compile_source: the source does not parse: {e.msg} "
                          f"(line {e.lineno})") from None


def _same_places(source: str, parts: list[str], moved: list[bool],
                 nodes: list[ast.AST]) -> bool:
    """Are the literals the split found exactly where the tree's abstracted constants are
    (same start and end offsets, in order)? Then every source with the same split text has its
    constants in the same places of the same tree (see the module docstring). `moved[j]`: the
    text before literal j lost the minus sign that now belongs to the literal."""
    if not source.isascii() or len(nodes) != len(moved):
        return False                   # (ast offsets count UTF-8 bytes)
    line_start = [0]
    for line in source.splitlines(True):
        line_start.append(line_start[-1] + len(line))
    pos = 0
    for j, node in enumerate(nodes):
        pos += len(parts[2 * j]) + moved[j]
        start, end = pos - moved[j], pos + len(parts[2 * j + 1])
        if (start, end) != (line_start[node.lineno - 1] + node.col_offset,
                            line_start[node.end_lineno - 1] + node.end_col_offset):
            return False
        pos = end
    return True
