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

The lines are read when the function is lowered, maybe long after its module was loaded: a
file edited since holds other code than the one that runs. So the definition found is
compiled and compared with the function's code object (`_compiles_to`); where they differ,
the function is not lowered (it stays CPython's, and `explain` says why).
"""

from __future__ import annotations

import ast
import inspect
import linecache
from types import CodeType, ModuleType

from ..errors import Unsupported
from . import astlock


def function_ast(pyfunc) -> ast.FunctionDef:
    """The AST of a Python function, its line numbers those of its file."""
    src = definition_lines(pyfunc)
    node = None
    code, names = pyfunc.__code__, getattr(pyfunc, "__globals__", {})
    if src is not None:
        try:
            node = _find_def(pyfunc, src)
        except SyntaxError:              # cut inside a statement (see the module docstring)
            node = None
        if node is not None and not _compiles_to(node, code, names):
            node = None                  # (or the cut left out constants the code keeps)
    if node is None:
        try:
            src = inspect.getsource(pyfunc)
        except (OSError, TypeError) as e:
            raise Unsupported("source code is not available", 0, str(e)) from None
        node = _find_def(pyfunc, src)
        if node is None:
            raise Unsupported("function definition not found in its source", 0)
        if not _compiles_to(node, code, names):
            raise Unsupported("its source text is not the code that runs (the file was "
                              "edited after it was loaded?)", code.co_firstlineno)
    return node


def _compiles_to(node: ast.FunctionDef, code: CodeType, module_names: dict) -> bool:
    """Does the definition compile to `code` (bytecode, constants, names)? The text is read
    when the function is lowered, maybe long after it was loaded: a file edited since holds
    other code than the one that runs. The definition is compiled in a function whose
    locals are `code`'s free variables, so that they are cells as in the original, and
    which declares the function's own name global (unless it is one of them)."""
    import __future__
    at = {"lineno": node.lineno, "col_offset": 0, "end_lineno": node.end_lineno,
          "end_col_offset": 0}
    cells = [ast.Assign(targets=[ast.Name(v, ast.Store(), **at) for v in code.co_freevars],
                        value=ast.Constant(None, **at), **at)] if code.co_freevars else []
    if code.co_name not in code.co_freevars:     # its name (a recursion's) stays a global
        cells.insert(0, ast.Global([code.co_name], **at))
    outer = ast.FunctionDef(
        name="__tierjit_outer__",
        args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
        body=[*cells, node], decorator_list=[], **at)
    # CPython compiles `m.f()` without its method call optimisation where `m` is imported at
    # module level: the modules the function names, imported (the module is only compiled)
    imports = [ast.Import([ast.alias(n, **at)], **at) for n in sorted(_names(code))
               if type(module_names.get(n)) is ModuleType]
    tree = ast.Module(body=[*imports, outer], type_ignores=[])
    flags = 0
    for feature in __future__.all_feature_names:
        flags |= getattr(__future__, feature).compiler_flag
    try:
        module = compile(tree, code.co_filename, "exec", flags=code.co_flags & flags,
                         dont_inherit=True)
    except (SyntaxError, ValueError, TypeError):
        return False
    found = _nested(module, code.co_name)
    return found is not None and _same_code(found, code) or _assert_rewritten(code)


def _assert_rewritten(code: CodeType) -> bool:
    """Was the function's module rewritten by pytest, whose asserts set locals `@py_assert…`
    and call `@pytest_ar`? Its other statements are the text's: it is lowered as before."""
    return any(n.startswith("@py") for c in (code.co_varnames, code.co_names) for n in c)


def _names(code: CodeType) -> set[str]:
    names, todo = set(), [code]
    while todo:
        c = todo.pop()
        names.update(c.co_names)
        todo.extend(k for k in c.co_consts if isinstance(k, CodeType))
    return names


def _instructions(code: CodeType) -> list[tuple[str, object]]:
    """code's instructions as (name, argument), jump targets as instruction indices, and a
    method's load as an attribute's (a module bound otherwise than by an import statement
    compiles as one imported)."""
    import dis
    ins = list(dis.get_instructions(code))
    index = {i.offset: k for k, i in enumerate(ins)}
    return [("LOAD_ATTR" if i.opname == "LOAD_METHOD" else i.opname,
             index.get(i.argval) if i.opcode in dis.hasjrel or i.opcode in dis.hasjabs
             else i.argval if not isinstance(i.argval, CodeType) else None)
            for i in ins]


def _nested(code: CodeType, name: str) -> CodeType | None:
    """The code object named `name` two levels down (module -> outer -> the function)."""
    for outer in code.co_consts:
        if isinstance(outer, CodeType):
            for c in outer.co_consts:
                if isinstance(c, CodeType) and c.co_name == name:
                    return c
    return None


def _same_code(a: CodeType, b: CodeType) -> bool:
    """Is `a` (compiled from the text) `b` (the original)? b's names, locals and constants
    may go on past a's: those of unreachable code after the last line an instruction comes
    from, which the text was cut before (see the module docstring)."""
    if (a.co_freevars, a.co_cellvars) != (b.co_freevars, b.co_cellvars) or \
            any(x != y[:len(x)] for x, y in ((a.co_names, b.co_names),
                                              (a.co_varnames, b.co_varnames))) or \
            len(a.co_consts) > len(b.co_consts) or \
            a.co_code != b.co_code and _instructions(a) != _instructions(b):
        return False
    for x, y in zip(a.co_consts, b.co_consts):
        if isinstance(x, CodeType) and isinstance(y, CodeType):
            if not _same_code(x, y):
                return False
        elif type(x) is not type(y) or repr(x) != repr(y) and not (
                type(x) is str and _unindented(x) == _unindented(y)):
            return False
    return True


def _unindented(s: str) -> str:
    # a method's text is dedented to be parsed, and its multi-line strings with it
    return "\n".join(line.lstrip(" \t") for line in s.split("\n"))


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
