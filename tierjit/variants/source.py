"""Sources of functions made at run time: parsing, checking, registering, executing.

tierjit compiles from source (`inspect.getsource`), so every function this package makes is
built from source text registered in `linecache` under a unique file name first — the same
trick as the differential harness. Analogue: a loader that keeps the "file" of code it
generated, so debuggers, tracebacks and the compiler can read it back.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import itertools
import linecache
import sys
import textwrap
import weakref
from collections.abc import Callable, Mapping
from types import CodeType
from typing import Any

_serial = itertools.count()


def parse(text: str) -> ast.Module:
    """ast.parse, safe against CPython 3.11's AST race (see frontend/astlock.py)."""
    from ..frontend import astlock
    return astlock.parse(text)


def register(source: str, tag: str) -> str:
    """Give `source` a file name linecache knows (and never evicts); return the name."""
    digest = hashlib.sha1(source.encode()).hexdigest()[:10]
    filename = f"<tierjit-variant {tag} {digest} {next(_serial)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    return filename


def forget_with(code: CodeType, filename: str) -> None:
    """Drop `filename`'s registered source once the last function compiled from `code` (a
    module's code) is gone, nested ones included (a variant is a closure its template's maker
    made, and may outlive the maker): a program making structures by the million would
    otherwise keep every one's source (~1.2 KB each) for good."""
    inner, todo = [], [code]
    while todo:
        for c in todo.pop().co_consts:
            if type(c) is CodeType:
                inner.append(c)
                todo.append(c)
    left = [len(inner)]

    def gone() -> None:
        left[0] -= 1
        if not left[0]:
            linecache.cache.pop(filename, None)

    for c in inner:
        weakref.finalize(c, gone)


def parse_function(source: str, name: str | None, what: str) -> tuple[list[ast.stmt],
                                                                      ast.FunctionDef]:
    """Split a module's source into (imports before the function, the function). The module
    must hold one function definition (or `name` picks one) and otherwise only imports."""
    try:
        tree = parse(textwrap.dedent(source))
    except SyntaxError as e:
        raise SyntaxError(f"{what}: the source does not parse: {e.msg} (line {e.lineno})") \
            from None
    return split_module(tree, name, what)


def split_module(tree: ast.AST, name: str | None, what: str) -> tuple[list[ast.stmt],
                                                                      ast.FunctionDef]:
    """(imports and helper functions before the function, the function) of a module or a
    function definition; the function must not be decorated (see _undecorated)."""
    if isinstance(tree, ast.FunctionDef):
        return [], _undecorated(tree, what)
    if not isinstance(tree, ast.Module):
        raise TypeError(f"{what}: expected an ast.Module or ast.FunctionDef, got "
                        f"{type(tree).__name__}")
    defs = [s for s in tree.body if isinstance(s, ast.FunctionDef)]
    if name is not None:
        defs = [d for d in defs if d.name == name]
    if len(defs) != 1:
        found = ", ".join(d.name for d in tree.body if isinstance(d, ast.FunctionDef))
        want = f"a function named {name!r}" if name else "exactly one function definition"
        raise ValueError(f"{what}: the source must define {want}; it defines "
                         f"{found or 'none'}")
    prelude = [s for s in tree.body if s is not defs[0]]
    for s in prelude:
        allowed = isinstance(s, (ast.Import, ast.ImportFrom, ast.FunctionDef)) or (
            isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
        if not allowed:
            raise ValueError(f"{what}: line {s.lineno}: only imports and other functions may "
                             f"accompany the function, not {type(s).__name__}")
    return [s for s in prelude if not isinstance(s, ast.Expr)], _undecorated(defs[0], what)


def _undecorated(fdef: ast.FunctionDef, what: str) -> ast.FunctionDef:
    """fdef, if it has no decorators. A variant is the plain function with its params bound
    (a functools.partial of the template), so a decorator cannot be applied to it; dropped,
    it made a variant that returned another value than the source run by CPython (or ran
    although the decorator's name is undefined)."""
    if fdef.decorator_list:
        dec = fdef.decorator_list[0]
        raise ValueError(f"{what}: line {getattr(dec, 'lineno', '?')}: {fdef.name} is "
                         f"decorated with @{ast.unparse(dec)}, which {what} cannot apply to "
                         "variants; remove the decorator and apply it to the result")
    return fdef


def function_tree(fn: Callable, what: str) -> tuple[ast.FunctionDef, dict[str, Any]]:
    """The definition of a Python function and the globals its body reads (closure variables
    are copied in, by value)."""
    if fn.__code__.co_name == "<lambda>":
        # inspect gives the lines the lambda is on, which need not parse on their own
        # (`"double": lambda x: x * 2.0,` in a dict raised "illegal target for annotation")
        code = fn.__code__
        raise ValueError(f"{what}: the lambda of line {code.co_firstlineno} of "
                         f"{code.co_filename} cannot be read back (only whole lines can); "
                         "define it with def, or pass its source text")
    try:
        src = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError) as e:
        raise ValueError(f"{what}: the source of {getattr(fn, '__qualname__', fn)!r} is not "
                         f"available ({e}); pass the source text instead") from None
    tree = parse(src)
    ast.increment_lineno(tree, fn.__code__.co_firstlineno - 1)   # lines of the real file
    for s in tree.body:
        if isinstance(s, ast.FunctionDef):
            # fn is what its decorators made of this definition (tierjit.jit's py_func, say):
            # they have been applied, and fn's code is the plain definition
            s.decorator_list = []
    _, fdef = split_module(tree, fn.__code__.co_name, what)
    namespace = fn.__globals__
    if fn.__closure__:
        namespace = dict(namespace)
        for var, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                namespace[var] = cell.cell_contents
            except ValueError:        # an empty cell: the name is unbound, as in CPython
                pass
    return fdef, namespace


def check_globals(globals: Any, what: str) -> None:
    """`globals` must map names to values (it is copied into the function's namespace)."""
    if globals is not None and not isinstance(globals, Mapping):
        raise TypeError(f"{what}: globals must be a dict of names to values; got "
                        f"{type(globals).__name__}")


def assigned_names(fdef: ast.FunctionDef) -> dict[str, int]:
    """Names the body binds (assignment, loop targets, imports, with/except ... as, nested
    definitions), each with the line of its first binding."""
    out: dict[str, int] = {}

    def bind(name: str, line: int) -> None:
        out.setdefault(name, line)

    for node in ast.walk(fdef):
        if node is fdef:
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bind(node.id, node.lineno)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bind(node.name, node.lineno)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                bind((a.asname or a.name).split(".")[0], node.lineno)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bind(node.name, node.lineno)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for n in node.names:
                bind(n, node.lineno)
    return out


def read_names(fdef: ast.FunctionDef) -> set[str]:
    return {n.id for n in ast.walk(fdef) if isinstance(n, ast.Name)
            and isinstance(n.ctx, ast.Load)}


def unused_name(base: str, trees: list[ast.AST]) -> str:
    """base, with "_"s appended until it is no identifier (nor string) in the trees: a name
    for generated code that cannot capture or shadow one the user's code reads."""
    taken = {v for tree in trees for node in ast.walk(tree)
             for _, v in ast.iter_fields(node) if isinstance(v, str)}
    while base in taken:
        base += "_"
    return base


def is_generator(fdef: ast.FunctionDef) -> bool:
    """Whether fdef's own body yields (not a nested function's or lambda's)."""
    todo = list(fdef.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return True
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                                 ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))
    return False


def arg_names(fdef: ast.FunctionDef) -> list[str]:
    a = fdef.args
    return [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs] + \
        [x.arg for x in (a.vararg, a.kwarg) if x is not None]


def with_leading_args(fdef: ast.FunctionDef, params: tuple[str, ...], name: str | None = None,
                      body: list[ast.stmt] | None = None) -> ast.FunctionDef:
    """A copy of fdef (shallow: the body is shared) taking `params` before its own arguments,
    without decorators. Positional-only parameters stay so (params before them become
    positional-only too): made ordinary, they could be passed by keyword."""
    a = fdef.args
    lead = [ast.arg(p) for p in params]
    if a.posonlyargs:
        posonly, plain = lead + a.posonlyargs, a.args
    else:
        posonly, plain = [], lead + a.args
    args = ast.arguments(posonlyargs=posonly, args=plain, vararg=a.vararg,
                         kwonlyargs=a.kwonlyargs, kw_defaults=a.kw_defaults, kwarg=a.kwarg,
                         defaults=a.defaults)
    new = ast.FunctionDef(name=name or fdef.name, args=args,
                          body=fdef.body if body is None else body, decorator_list=[],
                          returns=None, type_comment=None, lineno=1, col_offset=0)
    return ast.copy_location(new, fdef)


def too_deep(what: str) -> RecursionError:
    """The error for a function nested too deeply for the tree walks here (ast.unparse and
    copy.deepcopy among them), which take a few Python frames per level of nesting: a sum of
    ~300 terms at CPython's default recursion limit, where CPython itself compiles the text."""
    return RecursionError(
        f"{what}: the function is nested too deeply for tierjit's variants, which take its "
        f"tree apart recursively (a few frames per level, within the recursion limit of "
        f"{sys.getrecursionlimit()}); split the expression, or raise the limit")


def build(module: ast.Module, tag: str, namespace: dict[str, Any],
          own_namespace: bool) -> tuple[dict[str, Any], str]:
    """Unparse, register and execute `module`. When the namespace is not ours (a user
    module's globals) the definitions land in a separate dict, which is returned."""
    try:
        ast.fix_missing_locations(module)
        source = ast.unparse(module) + "\n"
    except RecursionError:
        raise too_deep(tag) from None
    filename = register(source, tag)
    code = compile(source, filename, "exec")
    forget_with(code, filename)
    if own_namespace:
        exec(code, namespace)  # noqa: S102 - building run-time functions is the point
        return namespace, source
    local: dict[str, Any] = {}
    exec(code, namespace, local)  # noqa: S102
    return local, source
