"""The import hook of `tierjit run`: a script and the modules beside it, with their functions jitted.

Analogue: PyPy's promise (run my program, faster) as a meta-path finder, the same mechanism
coverage tools and assertion rewriters (pytest) use. The script and every module it imports
from its own directory (plus `--include` packages, minus `--exclude` patterns) are compiled
from a rewritten AST in which each eligible module-level `def` gets `tierjit.jit` (tier "auto")
as its innermost decorator, so the name is bound to the jitted function from the moment the
`def` runs: module-level code, recursion through the global and calls from other modules all
see it, and the compiler can compile calls between them.

Eligible, to keep the program's behaviour: a plain `def` (not `async def`, not a generator,
whose `inspect.isgeneratorfunction` would change) at module level (also inside module-level
`if`/`try`/`for`/`while`/`with` blocks), with no decorators of its own (a decorator may expect
a real function object: `functools.lru_cache`, `numba.njit`, `property`). Methods are not
jitted: their first argument is an object, which tierjit does not compile.

What stays the same: `__name__`, `__qualname__`, `__doc__`, `__module__`, `__wrapped__`,
`inspect.signature`, pickling by qualified name, and `__code__`, `__globals__`, `__defaults__`,
`__kwdefaults__`, `__closure__`, `__annotations__` for reading (see `jit_for_run`). What does
not: `type(f)` and `inspect.isfunction(f)`; assigning `f.__code__`; a cold
call adds a Python frame (a recursion without loops goes straight, runtime.straight, and
native calls add none); frames of the call path are removed from tracebacks (see
`tierjit.runtime.tracebacks`).

Rewritten modules are never written to `__pycache__`: plain `python` must not load them.
"""

from __future__ import annotations

import ast
import builtins
import fnmatch
import importlib.machinery
import os
import sys

WRAP_NAME = "__tierjit_jit__"    # the decorator's name: a builtin, so no module's globals change
# Read-only function attributes the jitted object answers like the function it wraps (its
# __defaults__ and __kwdefaults__ it answers from the function itself: runtime.shim).
_FUNCTION_ATTRS = ("__code__", "__globals__", "__closure__", "__annotations__", "__builtins__")
_FunctionType = type(lambda: None)


class Selection:
    """Which modules and functions `tierjit run` jits (the --include/--exclude options)."""

    def __init__(self, roots: list[str], include: list[str], exclude: list[str]) -> None:
        self.roots = [os.path.realpath(r) for r in roots]   # directories of top-level modules
        self.include = list(include)                         # package names, with submodules
        self.exclude = list(exclude)                         # fnmatch patterns

    def excluded(self, name: str) -> bool:
        """`name` (a module, or module.function) matches an --exclude pattern."""
        return any(fnmatch.fnmatchcase(name, p) for p in self.exclude)

    def included_package(self, fullname: str) -> bool:
        return any(fullname == p or fullname.startswith(p + ".") for p in self.include)


class JitFinder:
    """Meta-path finder: the modules of the selection get a JitLoader, others are untouched."""

    def __init__(self, selection: Selection) -> None:
        self.selection = selection
        self.hooked: set[str] = set()     # packages whose submodules are hooked too

    def find_spec(self, fullname: str, path=None, target=None):
        sel = self.selection
        if fullname == "tierjit" or fullname.startswith("tierjit.") or sel.excluded(fullname):
            return None
        parent = fullname.rpartition(".")[0]
        if not (sel.included_package(fullname) or (parent and parent in self.hooked)
                or (not parent and path is None)):
            return None
        if not parent and (importlib.machinery.BuiltinImporter.find_spec(fullname)
                           or importlib.machinery.FrozenImporter.find_spec(fullname)):
            return None               # they come before the path: a local math.py is not math
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or not isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            return None
        if not parent and not sel.included_package(fullname):
            # A top-level module is ours only when it lies in the script's directory itself
            # (site-packages may be below that directory: a venv in the project).
            top = os.path.dirname(spec.origin)
            if spec.submodule_search_locations is not None:
                top = os.path.dirname(top)
            if os.path.realpath(top) not in sel.roots:
                return None
        if spec.submodule_search_locations is not None:
            self.hooked.add(fullname)
        spec.loader = JitLoader(fullname, spec.origin, sel)
        return spec


class JitLoader(importlib.machinery.SourceFileLoader):
    """SourceFileLoader whose code comes from the rewritten AST and is never cached."""

    def __init__(self, fullname: str, path: str, selection: Selection) -> None:
        super().__init__(fullname, path)
        self.selection = selection

    def get_code(self, fullname: str):
        source = self.get_data(self.path)
        return compile_jitted(source, self.path, fullname, self.selection)


class _AddJit(ast.NodeTransformer):
    """Adds the decorator to every eligible module-level def (see the module docstring)."""

    def __init__(self, module: str, selection: Selection) -> None:
        self.module, self.selection = module, selection
        self.wrapped: list[str] = []

    # Descend through module-level compound statements, never into defs or classes.
    def visit_ClassDef(self, node):
        return node

    def visit_AsyncFunctionDef(self, node):
        return node

    def visit_Lambda(self, node):
        return node

    def visit_FunctionDef(self, node):
        if (node.decorator_list or _is_generator(node)
                or self.selection.excluded(f"{self.module}.{node.name}")):
            return node
        # The decorator sits on the def's own line: co_firstlineno and the line CPython
        # reports for the def statement stay what they were.
        deco = ast.Name(WRAP_NAME, ast.Load())
        ast.copy_location(deco, node)
        deco.end_lineno, deco.end_col_offset = node.lineno, node.col_offset
        node.decorator_list = [deco]
        self.wrapped.append(node.name)
        return node


def _is_generator(fn: ast.FunctionDef) -> bool:
    """A yield or await in fn's own body (not in nested functions, lambdas or classes)."""
    stack = list(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await)):
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        stack.extend(ast.iter_child_nodes(node))
    return False


def compile_jitted(source: bytes | str, filename: str, module: str, selection: Selection):
    """The code object of a module whose eligible functions are jitted (see _AddJit)."""
    tree = ast.parse(source, filename)
    _AddJit(module, selection).visit(tree)
    return compile(tree, filename, "exec", dont_inherit=True)


def jit_for_run(fn):
    """The decorator the rewritten modules call: tierjit.jit(fn), which answers reads of the
    function attributes in _FUNCTION_ATTRS like fn itself. Anything but a plain function (a
    def rebound by a metaclass trick, say) is returned unchanged, as is fn when jit fails."""
    if type(fn) is not _FunctionType:
        return fn
    from .. import jit
    try:
        entry = jit(fn)
    except Exception:           # noqa: BLE001 - the program must run as it would without us
        return fn
    d = entry.__tierjit_dispatcher__    # cold or whole: the attributes are the same to it
    for name in _FUNCTION_ATTRS:
        setattr(d, name, getattr(fn, name))
    return entry


def install(selection: Selection) -> JitFinder:
    """Put the finder first on sys.meta_path and the decorator among the builtins."""
    setattr(builtins, WRAP_NAME, jit_for_run)
    finder = JitFinder(selection)
    sys.meta_path.insert(0, finder)
    return finder
