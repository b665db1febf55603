"""tierjit.evaluate: every kind of program, NumPy's rules per row, clear errors."""

from __future__ import annotations

import ast
import warnings

import numpy as np
import pytest

import tierjit
from tierjit.variants import Op, Programs, random_programs, reference


def test_all_program_kinds_in_one_call_keep_their_order():
    progs = random_programs(20, 6, n_consts=3, seed=2)
    sources = [progs.to_source(i) for i in range(20)]
    t = tierjit.template("def f(v1):\n    return v1 * k + 1.0\n", params=("k",))

    def plain(v1):
        return v1 - 0.5

    branchy = "def g(v1):\n    if v1 > 0.0:\n        return v1 / 0.0\n    return -v1\n"
    mixed = [sources[0], ast.parse(sources[1]), t.bind(k=2.0), plain, branchy, progs]
    X = np.linspace(-2, 2, 9)
    with pytest.raises(TypeError, match="program 5 is a Programs"):
        tierjit.evaluate(mixed, X)
    out = tierjit.evaluate(mixed[:5], X)
    ref = reference.run(progs, X[:, None])
    assert np.array_equal(out[:2], ref[:2], equal_nan=True)
    assert np.array_equal(out[2], X * 2.0 + 1.0) and np.array_equal(out[3], X - 0.5)
    with np.errstate(all="ignore"):
        want = np.where(X > 0, X / 0.0, -X)
    assert np.array_equal(out[4], want)


def test_no_warnings_and_no_exceptions():
    src = ["def f(x):\n    return x / 0.0 - x / x\n",
           "import math\ndef g(x):\n    return math.log(x)\n"]          # raises for x <= 0
    X = np.array([-1.0, 0.0, 1.0, np.e])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = tierjit.evaluate(src, X)
    assert np.isnan(out[0][1]) and out[0][0] == -np.inf and out[0][2] == np.inf
    assert np.isnan(out[1][:2]).all() and out[1][2] == 0.0 and out[1][3] == 1.0


def test_complex_results_give_nan_rows_and_no_warning():
    """A NumPy complex result (`x + 2j` on a float64 row) was stored as its real part, with a
    ComplexWarning, where a Python complex one gave nan: both are nan now, silently."""
    src = ["def f(x):\n    return float(x) ** 0.5\n", "def g(x):\n    return x + 2j\n"]
    X = np.array([1.0, -4.0])
    with warnings.catch_warnings(record=True) as caught:     # ("error" would turn the
        warnings.simplefilter("always")                     # warning into a nan row)
        out = tierjit.evaluate(src, X)
    assert out[0][0] == 1.0 and np.isnan(out[0][1]) and np.isnan(out[1]).all()
    assert not caught


def test_programs_updating_their_inputs_in_place_change_nothing_outside():
    """A called program got whole columns as arrays, where `x -= 1.5` updates in place: it
    changed the caller's X, and so every later program's input and every later call's."""
    shift = "import math\ndef g(x, y):\n    x -= 1.5\n    return min(x, 7.0) ** 2\n"
    progs = [shift, "def f(x, y):\n    return x\n", "def h(x, y):\n    return y\n"]
    X = np.array([[2.5, 0.25], [4.0, -1.0]])
    for _ in range(2):
        out = tierjit.evaluate(progs, X)
        assert out.tolist() == [[1.0, 6.25], [2.5, 4.0], [0.25, -1.0]]
    assert X.tolist() == [[2.5, 0.25], [4.0, -1.0]]


def test_called_programs_rebind_on_augmented_assignment():
    """On numbers `t = x; x *= 2.0` leaves t alone; on whole columns `x *= 2.0` updated the
    array t is bound to as well (the result was (2x)**2 instead of x**2)."""
    src = "def p(x, y):\n    t = x\n    x *= 2.0\n    t /= y\n    return t ** 2 + x\n"
    X = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.0]])
    with np.errstate(all="ignore"):
        want = [(r[0] / r[1]) ** 2 + 2.0 * r[0] for r in X]
    assert tierjit.evaluate([src], X)[0].tolist() == want


@pytest.mark.parametrize("source, X", [
    ("def p(x):\n    return x ** 0.5 if x == x else x\n", [-np.inf]),
    ("def p(x):\n    return x ** 0.5 if x == x else x\n", [-np.inf, 4.0]),
    ("def p(x):\n    return x ** 3\n", [1.1520125639065677]),
    ("import numpy as np\ndef p(x):\n    return x - np.mean(x)\n", [1.0, 2.0, 3.0, 10.0]),
])
def test_a_called_program_gives_each_row_what_a_call_on_that_row_gives(source, X):
    """A program that took arrays was called on whole columns: NumPy's array loops gave
    `-inf ** 0.5` as nan (inf called on the row), `x ** 3` another last bit, and
    `x - np.mean(x)` used the mean of all rows; a branchy one took arrays only when X had
    one row, so a row's result depended on how many rows there were."""
    ns: dict = {}
    exec(source, ns)
    X = np.array(X)
    with np.errstate(all="ignore"):
        want = [float(ns["p"](x)) for x in X]
    assert np.array_equal(tierjit.evaluate([source], X)[0], want)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("body", ["x * -0", "x + -3 / 0", "x * 0 + 16777217 * -3",
                                  "x * -(K - K)", "x * (1 / 3)", "-x * -0.0"])
def test_literal_parts_are_computed_as_when_called(body, dtype):
    """Python computes a part made of int literals before NumPy sees it: `-0` is 0 (the
    register code made it -0.0, so a positive x * -0 was -0.0), `3 / 0` raises (a nan row,
    not -inf), `16777217 * -3` is exact before it is rounded. Straight-line programs (the
    register code) and the same body in a program that is called agree."""
    env = {"K": 5}
    straight = tierjit.compile_source(f"def p(x):\n    return {body}\n", globals=env)
    called = tierjit.compile_source(f"def p(x):\n    if x == x:\n        return {body}\n"
                                    "    return x\n", globals=env)
    X = np.array([2.0, -1.0, 0.0], dtype)
    got = tierjit.evaluate([straight, called], X)
    with np.errstate(all="ignore"):
        rows = []
        for x in X:
            try:
                rows.append(eval(body, {"x": x, **env}))        # noqa: S307 - the oracle
            except ZeroDivisionError:
                rows.append(np.nan)
    want = np.array(rows, dtype)
    for g in got:
        assert np.array_equal(g, want, equal_nan=True)
        assert np.array_equal(np.signbit(g), np.signbit(want))


def test_names_holding_literal_parts_hold_what_python_computed():
    """`u = 16777217` holds a Python int when the program is called: u * u is exact before it
    meets x (the register code squared 16777216.0 in float32)."""
    src = ("def p(x):\n    t = u = 16777217\n    t *= 3\n    u = -0\n"
           "    return x * u + (t + u * u) * x\n")
    X = np.array([1.0, -2.0], np.float32)
    got = tierjit.evaluate([src], X)[0]
    assert got.tolist() == [50331652.0, -100663304.0]
    assert np.signbit(got).tolist() == [False, True]


def test_a_constant_beyond_the_dtype_gives_nan_rows_for_its_program_only():
    """One variant bound to 10**400 made evaluate raise a bare OverflowError for the whole
    population. Called on a row, that variant raises, so its rows are nan, as for any
    program that raises, and the other programs keep their results."""
    t = tierjit.template("def f(x):\n    return (x + a) * b\n", params=("a", "b"))
    X = np.array([0.0, 1.0])
    got = tierjit.evaluate([t.bind(1.0, 2.0), t.bind(10**400, 1.0)], X)
    assert got[0].tolist() == [2.0, 4.0] and np.isnan(got[1]).all()
    assert tierjit.evaluate([t.bind(1.0, 10**400)], X, "max").tolist() == [-np.inf]


def test_reductions_and_dtypes():
    progs = random_programs(30, 8, n_consts=2, seed=3)
    for dtype in (np.float32, np.float64):
        X = np.linspace(-3, 3, 50).astype(dtype)
        assert tierjit.evaluate(progs, X).dtype == dtype
        assert tierjit.evaluate(progs, X, "max").dtype == dtype
        assert tierjit.evaluate(progs, X, "sum").dtype == np.float64
        m = tierjit.evaluate(progs, X, "mse", y=np.zeros(50))
        assert np.allclose(m, reference.run(progs, X[:, None], "mse", np.zeros(50, dtype)),
                           equal_nan=True)


def test_float32_constants_are_rounded_once():
    src = "def f(x):\n    return x * 0.1 + 0.2\n"
    X = np.linspace(0, 1, 5, dtype=np.float32)
    want = X * np.float32(0.1) + np.float32(0.2)
    assert np.array_equal(tierjit.evaluate([src], X)[0], want)


def test_a_keyword_only_parameter_is_not_an_input():
    """evaluate passes a row's values positionally: `k` with its default was counted as an
    input, and X was said to lack a column."""
    X = np.array([1.0, 2.0])
    for body in ("return x * k + 0.5", "if x > 1.5:\n        return x\n    return x * k + 0.5"):
        src = f"def p(x, *, k=2.0):\n    {body}\n"
        ns: dict = {}
        exec(src, ns)  # noqa: S102
        assert tierjit.evaluate([src], X).tolist() == [[ns["p"](x) for x in X]]


def test_errors_of_a_program_name_it():
    """A source that does not parse, or defines two functions, or is nested too deeply for
    the tree walks (a sum of 1,000 terms: the bare RecursionError said nothing of where)."""
    good = "def f(x):\n    return x * 1.5\n"
    deep = "def f(x):\n    return " + " + ".join(f"x * {k}.5" for k in range(1000)) + "\n"
    for bad, error, message in (
            ("def f(x):\n    return x +\n", SyntaxError, "does not parse"),
            ("def g(x):\n    return x\ndef f(x):\n    return x\n", ValueError, "defines g, f"),
            (deep, RecursionError, "nested too deeply for tierjit's variants")):
        with pytest.raises(error, match=rf"^evaluate: program 1: .*{message}"):
            tierjit.evaluate([good, bad], np.ones(2))


@pytest.mark.parametrize("kwargs, error, message", [
    ({"X": np.zeros(3, np.int64)}, TypeError, "float32 or float64"),
    ({"X": np.zeros((2, 2, 2))}, ValueError, "must be 2-d"),
    ({"reduce": "min"}, ValueError, "reduce must be one of"),
    ({"reduce": "mse"}, ValueError, "y is needed"),
    ({"y": np.zeros(3)}, ValueError, "y is needed"),
    ({"reduce": "mse", "y": np.zeros(4)}, ValueError, r"y must be 1-d, one value per row of "
                                                       r"X \(3\); got shape \(4,\)"),
    ({"reduce": "mse", "y": np.zeros((1, 3))}, ValueError, r"got shape \(1, 3\)"),
    ({"reduce": "mse", "y": ["a", "b", "c"]}, ValueError, "y must be numbers, one per row"),
    ({"X": np.zeros((3, 2))}, ValueError, "takes 1 inputs, but X has 2 columns"),
    ({"threads": 0}, ValueError, "threads must be an int >= 1 or None"),
    ({"threads": 2.0}, ValueError, "threads must be an int >= 1 or None"),
])
def test_errors(kwargs, error, message):
    args = {"X": np.zeros(3), **kwargs}
    with pytest.raises(error, match=message):
        tierjit.evaluate(["def f(x):\n    return x\n"], **args)


def test_a_lambda_is_named_with_its_program():
    """inspect gives a lambda's whole line, here a dict entry, which does not parse: the error
    was "SyntaxError: illegal target for annotation (<unknown>, line 1)"."""
    progs = {"double": lambda x: x * 2.0}
    with pytest.raises(ValueError, match="evaluate: program 1: the lambda of line"):
        tierjit.evaluate(["def f(x):\n    return x\n", progs["double"]], np.zeros(3))


def test_programs_need_a_sequence_and_known_kinds():
    with pytest.raises(TypeError, match="wrap a single program in a list"):
        tierjit.evaluate("def f(x):\n    return x\n", np.zeros(2))
    with pytest.raises(TypeError, match="got int"):
        tierjit.evaluate(3, np.zeros(2))
    with pytest.raises(TypeError, match="program 1 is a int"):
        tierjit.evaluate(["def f(x):\n    return x\n", 3], np.zeros(2))
    t = tierjit.template("def f(x):\n    return x * k\n", params="k")
    with pytest.raises(TypeError, match="bind it first"):
        tierjit.evaluate([t], np.zeros(2))
    with pytest.raises(ValueError, match="n_inputs=1, but X has 2 columns"):
        tierjit.evaluate(random_programs(2, 2, seed=0), np.zeros((3, 2)))


@pytest.mark.parametrize("code, starts, message", [
    ([[Op.ADD, 1, 0, 0]], [0, 1_000_000], "must rise from 0 to the number of instructions"),
    ([[Op.ADD, 1000, 0, 0]], [0, 1], r"dst = 1000, a register outside 0\.\.1"),
])
def test_programs_from_the_constructor_are_checked_before_they_run(code, starts, message):
    """The constructor does not check its arrays, and evaluate ran them natively anyway:
    starts past the end of code crashed the process (SIGSEGV), register 1000 of 2 read and
    wrote outside the registers and returned zeros."""
    p = Programs(np.array(code, np.int32), np.zeros(1), np.array(starts, np.int64),
                 np.array([1], np.int32), 1, 2)
    with pytest.raises(ValueError, match=message):
        tierjit.evaluate(p, np.zeros(3))


def test_programs_changed_in_place_are_checked_again():
    """A population is checked at every evaluation, not once: linear GP mutates code in
    place, and a check remembered from before the change would let the register through."""
    p = random_programs(50, 6, seed=4)
    X = np.linspace(-1.0, 1.0, 7)
    tierjit.evaluate(p, X)
    p.code[40, 2] = -3
    with pytest.raises(ValueError, match=r"instruction 40 \(program 6\) has a = -3"):
        tierjit.evaluate(p, X)


SHIFT = 1.0      # module globals read by the programs of the test below
SCALE = 0.0


def shifted(x):
    return x + SHIFT * 2


def scaled(x):
    return (x + a) * SCALE          # a: a param


def test_module_globals_are_read_at_each_evaluate(monkeypatch):
    """Straight-line programs are lowered once, with the values of the globals they read
    written into the code: evaluate kept the value of the first evaluate, while a call of
    the program (and evaluate on an executor) used the global's value of the moment."""
    X = np.array([1.0, -2.0])
    v = tierjit.template(scaled, params=("a",)).bind(a=1.0)
    assert tierjit.evaluate([shifted, v], X).tolist() == [[3.0, 0.0], [0.0, -0.0]]
    monkeypatch.setitem(globals(), "SHIFT", 100.0)
    monkeypatch.setitem(globals(), "SCALE", -0.0)      # equal to 0.0, but not the same code
    got = tierjit.evaluate([shifted, v], X)
    want = np.array([[shifted(1.0), shifted(-2.0)], [v(1.0), v(-2.0)]])
    assert np.array_equal(got, want) and np.array_equal(np.signbit(got), np.signbit(want))
