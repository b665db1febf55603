"""Every construct the frontend rejects: the Unsupported error names it and its line.

Each case function marks the line that must be reported with a trailing `# <-` comment; the
test finds that line in this file, so moving code around never breaks a test.
"""

from __future__ import annotations

import enum
import inspect
import math

import numpy as np
import pytest

import tierjit
from tierjit.errors import Unsupported
from tierjit.frontend import lower

GLOBAL_COUNTER = 0


def helper(x):
    return x


def nested_function(x):
    def inner(y):  # <-
        return y
    return x


def list_comprehension(xs):
    n = 0
    return [x for x in range(n)]  # <-


def generator_expression(n):
    return sum(x for x in range(n))  # <-


def dict_comprehension(n):
    return {i: i for i in range(n)}  # <-


def star_args(*args):  # <-
    return 0


def star_kwargs(x, **kw):  # <-
    return x


def keyword_only(x, *, y):  # <-
    return x + y


def enumerate_start_not_a_literal(a, n):
    s = 0
    for i, x in enumerate(a, n):  # <-
        s += i
    return s


def enumerate_two_starts(a):
    s = 0
    for i, x in enumerate(a, 1, start=2):  # <-
        s += i
    return s


def zip_strict(a, b):
    s = 0
    for x, y in zip(a, b, strict=True):  # <-
        s += x
    return s


def zip_without_arguments():
    s = 0
    for x in zip():  # <-
        s += 1
    return s


def float_of_a_bad_string():
    return float("one")  # <-


def enumerate_outside_a_for(a):
    return enumerate(a)  # <-


def global_statement(x):
    global GLOBAL_COUNTER  # <-
    GLOBAL_COUNTER = x
    return x


def reads_a_global_a_function_rebinds(x):
    return x + GLOBAL_COUNTER  # <-


def nonlocal_statement(x):
    v = x

    def inner():  # <-
        nonlocal v
        v = 1
    return v


def slicing(a):
    b = a[1:]  # <-
    return b


def slicing_in_a_tuple_index(a):
    return a[0, 1:]  # <-


def string_constant(x):
    s = "abc"  # noqa: F841  # <-
    return x


def bytes_constant(x):
    return b"abc"  # <-


def unknown_name(x):
    return x + no_such_name  # noqa: F821  # <-


def call_of_a_plain_python_function(x):
    y = x + 1
    return helper(y)  # <-


def call_of_a_method(a):
    return a.reshape(2, 3)  # <-


def array_method_with_keywords(a):
    return a.sum(axis=0)  # <-


def delete_statement(x):
    y = x
    del y  # <-
    return x


def try_except(x):
    try:  # <-
        return 1 / x
    except ZeroDivisionError:
        return 0


def with_statement(x):
    with open("f") as fh:  # <-
        return fh


def lambda_expression(x):
    f = lambda y: y + 1  # <-
    return f(x)


def class_definition(x):
    class C:  # <-
        pass
    return x


def generator(n):
    for i in range(n):  # noqa: UP028
        yield i  # <-


def yield_from(n):
    yield from range(n)  # <-


async def async_function(x):  # <-
    return x


def list_display(x):
    return [x, x]  # <-


def fstring(x):
    return f"{x}"  # <-


def walrus(x):
    if (y := x + 1) > 2:  # <-
        return y
    return x


def membership_test(x, t):
    return x in t  # <-


def matmul(a, b):
    return a @ b  # <-


def matmul_assign(a, b):
    a @= b  # <-
    return a


def unknown_attribute(a):
    return a.T  # <-


def module_as_value(x):
    m = math  # noqa: F841  # <-
    return x


def function_as_value(x):
    f = abs  # <-
    return f(x)


def starred_assignment(t):
    a, *b = t  # noqa: RUF059  # <-
    return a


def starred_in_tuple(t):
    return (1, *t)  # <-


def call_with_star_args(t):
    return max(*t)  # <-


def builtin_with_keywords(x):
    return round(x, ndigits=2)  # <-


def numpy_keywords(n):
    return np.zeros(n, order="F")  # <-


def numpy_dtype_not_a_scalar_type(n):
    return np.zeros(n, dtype="float64")  # <-


def numpy_scalar_type_call(x):
    return np.float64(x, 1)  # <-


def range_with_four_arguments(n):
    s = 0
    for i in range(0, n, 1, 2):  # <-
        s += i
    return s


def for_target_attribute(a, b):
    for a.x in range(b):  # <-
        pass
    return 0


def raise_from(x):
    if x:
        raise ValueError("x") from None  # <-
    return x


def bare_raise(x):
    if x:
        raise  # noqa: PLE0704  # <-
    return x


def raise_non_exception(x):
    if x:
        raise helper  # <-
    return x


def raise_non_constant_argument(x):
    if x:
        raise ValueError(x)  # <-
    return x


def raise_keyword_argument(x):
    if x:
        raise ValueError(msg=1)  # <-
    return x


def assert_non_constant_message(x):
    assert x, x  # <-
    return x


class _Mode(enum.IntEnum):
    FAST = 3


_SCALE = _Mode.FAST


def int_enum_global(x):
    return x * _SCALE  # <-


def import_statement(x):
    import os  # noqa: F401  # <-
    return x


def assign_to_attribute(a, x):
    a.y = x  # <-
    return x


def may_be_unbound(x):
    if x:
        y = 1
    return y  # <-


def loop_variable_after_the_loop(n):
    for i in range(n):
        pass
    return i  # <-


# (function, words its Unsupported message must contain: the construct's name, not the prose)
CASES = [
    (nested_function, ["nested", "FunctionDef"]),
    (list_comprehension, ["comprehension", "ListComp"]),
    (generator_expression, ["comprehension", "GeneratorExp"]),
    (dict_comprehension, ["comprehension", "DictComp"]),
    (star_args, ["*args"]),
    (star_kwargs, ["**kwargs"]),
    (keyword_only, ["keyword-only"]),
    (global_statement, ["global"]),
    (nonlocal_statement, ["nested", "FunctionDef"]),
    (slicing, ["slicing"]),
    (slicing_in_a_tuple_index, ["slicing"]),
    (string_constant, ["constant", "str"]),
    (bytes_constant, ["constant", "bytes"]),
    (unknown_name, ["no_such_name", "not defined"]),
    (call_of_a_plain_python_function, ["call of 'helper'"]),
    (call_of_a_method, ["call of 'a.reshape'"]),
    (array_method_with_keywords, ["a.sum", "keyword"]),
    (delete_statement, ["Delete"]),
    (try_except, ["Try"]),
    (with_statement, ["With"]),
    (lambda_expression, ["Lambda"]),
    (class_definition, ["ClassDef"]),
    (generator, ["Yield"]),
    (yield_from, ["YieldFrom"]),
    (async_function, ["async"]),
    (list_display, ["List"]),
    (fstring, ["JoinedStr"]),
    (walrus, ["NamedExpr"]),
    (membership_test, ["comparison", "In"]),
    (matmul, ["MatMult"]),
    (matmul_assign, ["MatMult"]),
    (unknown_attribute, ["attribute", ".T"]),
    (module_as_value, ["'math'", "value"]),
    (function_as_value, ["'abs'", "value"]),
    (starred_assignment, ["starred", "assignment"]),
    (starred_in_tuple, ["starred", "tuple"]),
    (call_with_star_args, ["call", "*args"]),
    (builtin_with_keywords, ["round", "keyword"]),
    (numpy_keywords, ["order", "np.zeros"]),
    (numpy_dtype_not_a_scalar_type, ["dtype"]),
    (numpy_scalar_type_call, ["call of 'np.float64'"]),
    (range_with_four_arguments, ["range()"]),
    (enumerate_start_not_a_literal, ["enumerate()", "start", "int literal"]),
    (enumerate_two_starts, ["enumerate()"]),
    (zip_strict, ["zip()", "keywords"]),
    (zip_without_arguments, ["zip()", "no argument"]),
    (float_of_a_bad_string, ["float('one')", "ValueError"]),
    (enumerate_outside_a_for, ["call of 'enumerate'"]),
    (for_target_attribute, ["for-loop target"]),
    (raise_from, ["raise ... from"]),
    (bare_raise, ["bare raise"]),
    (raise_non_exception, ["raise", "exception class"]),
    (raise_non_constant_argument, ["exception argument", "not a constant"]),
    (raise_keyword_argument, ["exception", "keyword"]),
    (assert_non_constant_message, ["assert message", "not a constant"]),
    (import_statement, ["Import"]),
    (int_enum_global, ["use of '_SCALE'", "_Mode"]),
    (assign_to_attribute, ["assignment", "Attribute"]),
    (may_be_unbound, ["'y'", "before it is assigned"]),
    (loop_variable_after_the_loop, ["'i'", "before it is assigned"]),
    (reads_a_global_a_function_rebinds, ["global 'GLOBAL_COUNTER'", "binds again"]),
]


def marked_line(fn) -> int:
    """The line of `fn` (in this file) that ends with the `# <-` marker."""
    lines, first = inspect.getsourcelines(fn)
    marked = [first + k for k, text in enumerate(lines) if text.rstrip().endswith("# <-")]
    assert len(marked) == 1, f"{fn.__name__}: mark exactly one line"
    return marked[0]


@pytest.mark.parametrize(("fn", "words"), CASES, ids=[c[0].__name__ for c in CASES])
def test_unsupported_names_construct_and_line(fn, words):
    with pytest.raises(Unsupported) as info:
        lower(fn)
    e = info.value
    for w in words:
        assert w in e.construct, (w, e.construct)
    assert e.line == marked_line(fn)
    assert str(e).startswith(f"line {e.line}: {e.construct}")


def test_call_of_a_plain_function_says_what_can_be_called():
    with pytest.raises(Unsupported) as info:
        lower(call_of_a_plain_python_function)
    assert "only @jit functions, math, numpy constructors, ufuncs and reductions, numeric " \
        "builtins and some array methods can be called" in str(info.value)


def test_source_not_available():
    ns = {}
    exec("def made_by_exec(x):\n    return x\n", ns)  # noqa: S102
    with pytest.raises(Unsupported) as info:
        lower(ns["made_by_exec"])
    assert "source" in info.value.construct


def test_more_than_one_decorator():
    def passthrough(f):
        return f

    @passthrough
    @passthrough
    def twice(x):
        return x

    with pytest.raises(Unsupported) as info:
        lower(twice)
    assert "decorator" in info.value.construct


@tierjit.jit
def decorated_with_a_comprehension(n):
    return [i for i in range(n)]  # <-


def test_lines_of_a_decorated_function():
    """co_firstlineno is the first decorator's line, not the `def` line (a bug once: every
    line of a decorated function was reported one line too early)."""
    fn = decorated_with_a_comprehension.__wrapped__
    with pytest.raises(Unsupported) as info:
        lower(fn)
    assert info.value.line == marked_line(fn)
