"""Structures: sources and trees that differ only in float literals share one template."""

from __future__ import annotations

import ast
import gc
import linecache
import math

import numpy as np
import pytest

import tierjit
from tierjit.variants import structure
from tierjit.variants import template as template_mod
from tierjit.variants.template import template_of


def forum(plus: float, mul: float, op: str = "+") -> str:
    return (f"def calc(v1):\n    v2 = {plus!r}; v3 = {mul!r}\n    v4 = v1 {op} v2\n"
            f"    v5 = v4 * v3\n    return v5\n")


def run(src: str, *args, **kwargs):
    ns: dict = {}
    exec(src, ns)  # noqa: S102
    return [f for f in ns.values() if callable(f)][-1](*args, **kwargs)


def test_same_structure_shares_one_template():
    a = tierjit.compile_source(forum(0.37, -1.25))
    b = tierjit.compile_source(forum(1.5, 2.0))
    c = tierjit.compile_source(forum(1.5, 2.0, "-"))
    assert template_of(a)[0] is template_of(b)[0] is not template_of(c)[0]
    assert template_of(a)[1] == (0.37, -1.25)          # the sign belongs to the constant
    assert a(2.0) == run(forum(0.37, -1.25), 2.0) and c(2.0) == run(forum(1.5, 2.0, "-"), 2.0)


@pytest.mark.parametrize("body", [
    "return x - 1.5 * -2.5 + (x if x > 0.5 else -0.25) + 2**-1.5 - -3.0",
    "return -1.5",
    "return x*1e3 + .5 - 1.e-2 + 2E+2",
    "return x -2.5",
    "return x - 2.5",
    "s = 'has 1.5 in it'\n    return x * 2.5  # and 3.5 here",
    "return [1.5, -2.5][0] * x + 7",
])
def test_literals_become_constants_with_the_same_results(body):
    src = f"def f(x):\n    {body}\n"
    f = tierjit.compile_source(src)
    for x in (2.0, -1.0, 0.75):
        assert f(x) == run(src, x)
    again = tierjit.compile_source(src)        # the second sight takes the text fast path
    assert again(3.0) == run(src, 3.0)


@pytest.mark.parametrize("first, second", [
    ("return x + (0.5 ** 2.0)", "return x + (-7.25 ** 2.0)"),     # -(7.25 ** 2.0)
    ("return 2.0 ** 3.0 ** 2.0 + x", "return 2.0 ** -1.0 ** 2.0 + x"),
    ("return (3.0 .hex(), x)", "return (-0.0 .hex(), x)"),        # -(0.0 .hex()): TypeError
    ("return x * (2.5)", "return x * -(2.5)"),
])
def test_a_minus_before_what_binds_tighter_is_not_the_literals(first, second):
    """A source with a minus before a literal that a power or a trailer binds first has
    another structure than the same text without the minus, seen first."""
    structure.clear()
    for body in (first, second):
        src = f"def f(x):\n    {body}\n"
        try:
            expected = run(src, 2.0)
        except TypeError as e:
            with pytest.raises(TypeError, match=str(e)):
                tierjit.compile_source(src)(2.0)
        else:
            assert tierjit.compile_source(src)(2.0) == expected


def test_ints_are_structure():
    a = tierjit.compile_source("def f(x):\n    return x * 2\n")
    b = tierjit.compile_source("def f(x):\n    return x * 3\n")
    assert template_of(a)[0] is not template_of(b)[0] and a(2) == 4 and b(2) == 6


def test_literals_in_strings_and_comments_do_not_confuse_the_key():
    s1 = "def f(x):\n    s = '1.5'\n    return x * 2.5  # 9.5\n"
    s2 = "def f(x):\n    s = '7.5'\n    return x * 3.5  # 1.5\n"
    assert tierjit.compile_source(s1)(2.0) == 5.0
    assert tierjit.compile_source(s2)(2.0) == 7.0
    assert tierjit.compile_source(s1)(2.0) == 5.0


def test_default_values_and_names_like_ours():
    src = "def f(x, y=0.5):\n    _tjc0 = 1.5\n    return x * _tjc0 + y\n"
    f = tierjit.compile_source(src)
    assert f(2.0) == 3.5 and f(2.0, 1.0) == 4.0


def tree_with_default(value) -> ast.Module:
    tree = ast.parse("def g(x, y=0.0):\n    return y\n")
    tree.body[0].args.defaults[0] = ast.Constant(value)     # as a GP system builds trees
    return ast.fix_missing_locations(tree)


@pytest.mark.parametrize("first, second", [
    (0.0, -0.0), ((1.0, 0.0), (1.0, -0.0)), (1, True), (1, 1.0),
])
def test_equal_literals_that_behave_differently_are_other_structures(first, second):
    """Literals kept in the structure were keyed by (type, value), and 0.0 == -0.0: the tree
    with the default -0.0 got the structure made for 0.0, and returned 0.0."""
    f = tierjit.compile_ast(tree_with_default(first))
    g = tierjit.compile_ast(tree_with_default(second))
    assert template_of(f)[0] is not template_of(g)[0]
    assert repr(f(1.0)) == repr(first) and repr(g(1.0)) == repr(second)


def test_complex_literals_are_keyed_by_their_bits():
    # (only the key: the template's source is ast.unparse'd, and unparse writes the Constant
    # complex(0.0, -0.0) as `-0j`, which is -(0j) == (-0-0j): a separate limitation)
    f = tierjit.compile_ast(tree_with_default(0j))
    g = tierjit.compile_ast(tree_with_default(complex(0.0, -0.0)))
    assert template_of(f)[0] is not template_of(g)[0]


def test_a_nan_literal_finds_its_structure_again():
    f = tierjit.compile_ast(tree_with_default(float("nan")))
    g = tierjit.compile_ast(tree_with_default(float("nan")))
    assert template_of(f)[0] is template_of(g)[0] and math.isnan(g(1.0))


def test_compile_ast_shares_with_source_and_leaves_the_tree_alone():
    tree = ast.parse(forum(0.25, 4.0))
    before = ast.dump(tree)
    f = tierjit.compile_ast(tree)
    assert ast.dump(tree) == before
    assert f(1.0) == run(forum(0.25, 4.0), 1.0)
    g = tierjit.compile_ast(ast.parse(forum(0.5, 3.0)).body[0])
    assert template_of(f)[0] is template_of(g)[0]


def test_an_indented_source_is_taken_as_template_takes_it():
    src = "\n    def f(x):\n        return x * 1.5  # indented, as in a docstring\n"
    assert tierjit.compile_source(src)(2.0) == 3.0
    assert tierjit.compile_source(src.replace("1.5", "2.5"))(2.0) == 5.0   # the fast path
    assert tierjit.template(src, ()).bind()(2.0) == 3.0


def test_globals_and_imports():
    f = tierjit.compile_source("def f(x):\n    return x * k\n", globals={"k": 3.0})
    assert f(2.0) == 6.0
    g = tierjit.compile_source("import math\ndef g(x):\n    return math.floor(x * 2.5)\n")
    assert g(1.0) == math.floor(2.5)


def _registered() -> set:
    return {k for k in linecache.cache if k.startswith("<tierjit-variant")}


def test_a_structures_source_goes_with_its_last_function():
    """Every structure's source stayed in linecache for good (~1.2 KB each), after
    structure.clear() and its functions dropped; a variant that outlives the table keeps its
    source, and is still compiled from it when it gets hot."""
    structure.clear()
    gc.collect()
    before = _registered()
    for k in range(50):
        tierjit.compile_source(f"def f(x):\n    return x * 1.5 + {k}\n")(1.0)
    kept = tierjit.compile_source("def f(x):\n    return x * 2.5 + 0.25 * x * x\n")
    structure.clear()
    gc.collect()
    assert len(_registered() - before) == 1         # kept's
    t = template_of(kept)[0].compile()              # compiled from source after all that
    assert kept(2.0) == 6.0 and t.tier == "opt"
    assert "plain CPython" not in t.explain()
    del kept, t
    gc.collect()
    assert _registered() <= before


def test_a_globals_dict_changed_since_makes_new_structures():
    """The template of a structure copies its globals when it is made; a source of that
    structure compiled with the same dict after a name in it was bound again computed with the
    copy (5.5 where exec gives 102.5). Functions made before keep their copy."""
    env = {"K": 3}
    f = tierjit.compile_source("def f(x):\n    return x * 1.5 + K\n", globals=env)
    env["K"] = 100
    g = tierjit.compile_source("def f(x):\n    return x * 2.5 + K\n", globals=env)
    assert (f(1.0), g(1.0)) == (4.5, 102.5)
    assert template_of(g)[0] is not template_of(f)[0]
    h = tierjit.compile_source("def f(x):\n    return x * 0.5 + K\n", globals=env)
    assert template_of(h)[0] is template_of(g)[0] and h(1.0) == 100.5   # unchanged since
    env["L"] = 1.0
    k = tierjit.compile_source("def f(x):\n    return x * 0.5 + K\n", globals=env)
    assert template_of(k)[0] is not template_of(h)[0] and k(1.0) == 100.5


@pytest.mark.parametrize("source, calls", [
    ("def f(x, *, k=2.5):\n    return x * k * 1.5\n", [((2.0,), {}), ((2.0,), {"k": 2.0})]),
    ("def f(*xs):\n    return xs[-1] * 1.5\n", [((2.0,), {}), ((1.0, 3.0), {})]),
    ("def f(x, **kw):\n    return x * kw.get('self', 1.0) * 1.5\n",
     [((2.0,), {}), ((2.0,), {"self": 2.0})]),
    ("def f(x, /, y=0.5):\n    return x * y\n", [((2.0,), {}), ((2.0, 3.0), {})]),
])
def test_non_plain_parameters_keep_working_after_promotion(monkeypatch, source, calls):
    # the promotion forwarder passed every parameter positionally: from the promoting call
    # on, keyword-only and **kwargs arguments raised TypeError and *args were mixed up
    monkeypatch.setattr(template_mod, "PROMOTE_AFTER", 3)
    f = tierjit.compile_source(source)
    expected = [run(source, *a, **k) for a, k in calls]
    assert [[f(*a, **k) for a, k in calls] for _ in range(4)] == [expected] * 4
    assert template_of(f)[0].tier == "jit"
    assert [f(*a, **k) for a, k in calls] == expected


def test_positional_only_parameters_stay_positional_only():
    f = tierjit.compile_source("def f(x, /):\n    return x * 1.5\n")
    with pytest.raises(TypeError, match="positional-only"):
        f(x=2.0)


def test_a_function_nested_too_deeply_is_refused_saying_so():
    src = "def f(x):\n    return " + " + ".join(f"x * {k}.5" for k in range(1000)) + "\n"
    with pytest.raises(RecursionError, match="^compile_source: the function is nested too "
                                             "deeply for tierjit's variants"):
        tierjit.compile_source(src)
    with pytest.raises(RecursionError, match="^f: the function is nested too deeply"):
        tierjit.template(src).bind()(1.0)


def test_decorated_definitions_are_refused():
    """compile_source dropped the decorators (a wrong value), and accepted a decorator name
    that is not defined, where CPython raises NameError."""
    with pytest.raises(ValueError, match=r"compile_source: line 1: f is decorated with "
                                         r"@undefined_name, which compile_source cannot apply"):
        tierjit.compile_source("@undefined_name\ndef f(x):\n    return x * 1.5\n")
    tree = ast.parse("@functools.cache\ndef f(x):\n    return x * 1.5\n")
    with pytest.raises(ValueError, match=r"compile_ast: line 1: f is decorated with "
                                         r"@functools.cache"):
        tierjit.compile_ast(tree.body[0])


def test_errors():
    with pytest.raises(SyntaxError, match="does not parse"):
        tierjit.compile_source("def f(x):\n    return x +\n")
    with pytest.raises(ValueError, match="it defines f, g"):
        tierjit.compile_source("def f(x):\n    return x\ndef g(x):\n    return x\n")
    with pytest.raises(ValueError, match="only imports and other functions may accompany"):
        tierjit.compile_source("y = 2\ndef f(x):\n    return x\n")
    with pytest.raises(TypeError, match="expected source text"):
        tierjit.compile_source(42)
    with pytest.raises(TypeError, match="compile_source: globals must be a dict of names"):
        tierjit.compile_source("def f(x):\n    return x * k\n", globals=[("k", 1.0)])
    with pytest.raises(TypeError, match="compile_ast: globals must be a dict of names"):
        tierjit.compile_ast(ast.parse("def f(x):\n    return x * k\n"), globals=[("k", 1.0)])


def test_variant_called_once_costs_less_than_exec():
    import timeit
    sources = [forum(0.1 + k, 2.0) for k in range(300)]
    tierjit.compile_source(sources[0])

    def ours():
        for s in sources:
            tierjit.compile_source(s)(1.0)

    def cpython():
        for s in sources:
            ns: dict = {}
            exec(s, ns)  # noqa: S102
            ns["calc"](1.0)

    assert min(timeit.repeat(ours, number=1, repeat=5)) < \
        min(timeit.repeat(cpython, number=1, repeat=5))
    structure.clear()


def test_recursive_source_calls_itself_with_its_own_constants(monkeypatch):
    # the function's name is not bound in the namespace of the template's functions, which
    # take the constants first: a recursive source raised NameError
    monkeypatch.setattr(template_mod, "PROMOTE_AFTER", 3)
    fact = "def fact(n):\n    if n <= 1:\n        return 1.5\n    return n * fact(n - 1)\n"
    f, g = tierjit.compile_source(fact), tierjit.compile_source(fact.replace("1.5", "2.5"))
    assert [(f(5), g(5)) for _ in range(4)] == [(180.0, 300.0)] * 4
    assert template_of(f)[0].tier == "jit"
    assert tierjit.evaluate([fact], np.array([5.0, 1.0])).tolist() == [[180.0, 1.5]]
    t = tierjit.template("def s(n):\n    return a if n <= 0 else a + s(n - 1)\n", params=("a",))
    assert t.bind(a=2.0)(3) == 8.0 and t.compile().bind(a=1.0)(3) == 4.0
