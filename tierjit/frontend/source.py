"""A Python function's AST, from the lines of its definition.

The lines are found from the function's code object: from `co_firstlineno` (its first
decorator's line) to the last line any of its instructions, or of the code objects nested in
it, comes from. Only those lines are parsed. Parsing the whole file to find the definition
would be one C call holding the GIL for as long as the file takes to parse — ~10-60 ms for a
few thousand lines — which stops every other thread of the program while the compiler
thread does it; `inspect.getsource` tokenizes the file, in Python, from the function on.

Code that no instruction comes from can be cut off the end: a trailing `pass`, say, or
unreachable statements after a `return`. What remains is the code that runs, unless the cut
leaves something that does not parse or does not define the function; then
`inspect.getsource` decides, as for a function whose file linecache does not have.
"""

from __future__ import annotations

import ast
import inspect
import linecache
from types import CodeType

from ..errors import Unsupported
from . import astlock


def function_ast(pyfunc) -> ast.FunctionDef:
    """The AST of a Python function, its line numbers those of its file."""
    src = definition_lines(pyfunc)
    node = None
    if src is not None:
        try:
            node = _find_def(pyfunc, src)
        except SyntaxError:              # cut inside a statement (see the module docstring)
            node = None
    if node is None:
        try:
            src = inspect.getsource(pyfunc)
        except (OSError, TypeError) as e:
            raise Unsupported("source code is not available", 0, str(e)) from None
        node = _find_def(pyfunc, src)
    if node is None:
        raise Unsupported("function definition not found in its source", 0)
    return node


def definition_lines(pyfunc) -> str | None:
    """The source lines of pyfunc's definition as its code object places them, or None
    (no code object, a lambda, no lines in linecache, lines that do not reach that far)."""
    code = getattr(pyfunc, "__code__", None)
    if code is None or code.co_name == "<lambda>":
        return None
    name = code.co_filename
    linecache.checkcache(name)          # as inspect does: a file edited since is read again
    lines = linecache.getlines(name, getattr(pyfunc, "__globals__", None))
    first, last = code.co_firstlineno, last_line(code)
    if not 1 <= first <= last <= len(lines):
        return None
    return "".join(lines[first - 1:last])


def last_line(code: CodeType) -> int:
    """The last source line that an instruction of `code` or of a code object nested in it
    comes from."""
    last, todo = code.co_firstlineno, [code]
    while todo:
        c = todo.pop()
        for _, end, _, _ in c.co_positions():
            if end is not None and end > last:
                last = end
        todo.extend(k for k in c.co_consts if isinstance(k, CodeType))
    return last


def _find_def(pyfunc, src: str) -> ast.FunctionDef | None:
    """Parse `src` (dedented) and return the outermost definition named like pyfunc, its
    line numbers moved to where pyfunc's code object says it starts."""
    if src[:1].isspace():        # a method or nested function: its lines share an indent
        import textwrap          # (~1.5 ms to load: its regexes)
        src = textwrap.dedent(src)
    code = pyfunc.__code__
    # blank lines before it, so that the parser numbers its lines as the file does (moving
    # the numbers afterwards walks the whole tree in Python)
    tree = astlock.parse("\n" * (code.co_firstlineno - 1) + src)
    name = code.co_name

    def named(node) -> bool:
        return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name

    # the outermost definition: normally the first statement; else breadth first
    body = tree.body
    node = body[0] if body and named(body[0]) else next(filter(named, ast.walk(tree)), None)
    if node is None:
        return None
    # co_firstlineno is the line of the first decorator, when there is one
    first = min([node.lineno] + [d.lineno for d in node.decorator_list])
    if first != code.co_firstlineno:
        ast.increment_lineno(tree, code.co_firstlineno - first)
    return node
