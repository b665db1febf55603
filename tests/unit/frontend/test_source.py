"""Finding a function's definition (frontend/source.py): only its own lines are parsed, the
line numbers are the file's, and where the lines its code object gives do not make a
definition, inspect's do."""

from __future__ import annotations

import ast
import functools

import pytest

from tierjit.errors import Unsupported
from tierjit.frontend import astlock, function_ast, lower, source
from tierjit.ir.ops import Op


def trailing_dead_code(x):
    return x + 1
    y = x * 2     # unreachable: no instruction comes from here
    return y


def cut_mid_statement(x):
    return x; y = (x +  # noqa: F841 - unreachable, and goes on past the line
                   1)


def ends_in_a_nested_function(x):
    def inner(y):
        return (y +
                x)
    return inner


def ends_in_a_comprehension(n):
    return [i * i
            for i in range(n)]


@functools.lru_cache(
    maxsize=8)
def decorated(x):
    return x * 3


class Holder:
    def method(self, x):
        return x - 1


def test_only_the_definitions_lines_are_parsed(monkeypatch):
    parsed = []
    real = astlock.parse
    monkeypatch.setattr(astlock, "parse", lambda text: parsed.append(text) or real(text))
    function_ast(ends_in_a_comprehension)
    assert len(parsed) == 1
    # blank lines up to the definition (the parser numbers lines as the file does), then it
    first = ends_in_a_comprehension.__code__.co_firstlineno
    assert parsed[0][:first - 1] == "\n" * (first - 1)
    assert parsed[0][first - 1:].splitlines() == ["def ends_in_a_comprehension(n):",
                                                  "    return [i * i",
                                                  "            for i in range(n)]"]


def test_lines_are_the_files():
    tree = function_ast(ends_in_a_nested_function)
    first = ends_in_a_nested_function.__code__.co_firstlineno
    assert tree.lineno == first
    assert [s.lineno for s in tree.body] == [first + 1, first + 4]


def test_nested_code_objects_reach_the_end():
    first = ends_in_a_nested_function.__code__.co_firstlineno
    assert source.last_line(ends_in_a_nested_function.__code__) == first + 4
    assert source.last_line(ends_in_a_comprehension.__code__) == \
        ends_in_a_comprehension.__code__.co_firstlineno + 2


def test_unreachable_trailing_code_is_left_out():
    tree = function_ast(trailing_dead_code)
    assert len(tree.body) == 1 and isinstance(tree.body[0], ast.Return)
    assert [i.op for b in lower(trailing_dead_code).blocks for i in b.instrs][-1] is Op.RETURN


def test_a_cut_that_does_not_parse_falls_back_to_inspect():
    # no instruction comes from the assignment's second line: the lines end inside it
    with pytest.raises(SyntaxError):
        ast.parse(source.definition_lines(cut_mid_statement))
    tree = function_ast(cut_mid_statement)
    assert [type(s) for s in tree.body] == [ast.Return, ast.Assign]
    assert tree.lineno == cut_mid_statement.__code__.co_firstlineno


def test_decorators_and_methods():
    tree = function_ast(decorated.__wrapped__)
    assert tree.name == "decorated" and len(tree.decorator_list) == 1
    assert tree.decorator_list[0].lineno == decorated.__wrapped__.__code__.co_firstlineno
    tree = function_ast(Holder.method)
    assert tree.name == "method" and tree.lineno == Holder.method.__code__.co_firstlineno


@pytest.mark.parametrize("fn", [lambda x: x + 1, len])
def test_no_lines_from_the_code_object(fn):
    assert source.definition_lines(fn) is None


def test_a_file_edited_after_loading_is_not_lowered(tmp_path, monkeypatch):
    """The text is read when the function is lowered, maybe long after the module was
    loaded: a file edited since holds other code than the one that runs (here x + 1000 in
    place of x + 1, the same lines), so the function stays CPython's, for every tier."""
    import importlib
    import sys

    import tierjit
    path = tmp_path / "edited_module.py"
    path.write_text("def f(x):\n    return x + 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("edited_module")
    try:
        path.write_text("def f(x):\n    return x + 1000\n")
        with pytest.raises(Unsupported, match="not the code that runs"):
            function_ast(mod.f)
        for tier in ("interp", "baseline", "opt"):
            assert tierjit.jit(mod.f, tier=tier)(1) == 2
        assert "not the code that runs" in tierjit.explain(tierjit.jit(mod.f, tier="opt"))
    finally:
        sys.modules.pop("edited_module", None)


def outer_with_cells(k):
    import math

    def inner(x):
        """A docstring
        over lines."""
        return math.floor(x * k) + inner_calls(x)
    return inner


def inner_calls(x):
    return 0 if x < 1 else inner_calls(x - 1) + 1


@pytest.mark.parametrize("fn", [outer_with_cells(3), inner_calls, Holder.method,
                                decorated.__wrapped__, ends_in_a_comprehension,
                                ends_in_a_nested_function])
def test_unedited_definitions_are_the_code_that_runs(fn):
    """Closures, recursion, methods (their text dedented), decorators, nested code objects,
    modules used as `m.f()`: the definition compiles to the very code."""
    assert function_ast(fn).name == fn.__name__
