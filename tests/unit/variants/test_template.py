"""Templates: params become arguments, binds make variants without compiling, errors name the
problem, and variants move up the tiers together."""

from __future__ import annotations

import functools

import pytest

import tierjit
from tierjit.variants import template as template_mod
from tierjit.variants.template import template_of

OFFSET = 100.0


def calc(myinput):
    return (myinput + myplus) * mymul  # noqa: F821


def uses_global(x):
    return x * scale + OFFSET  # noqa: F821


def assigns(x):
    a = 3.0
    return x + a + b  # noqa: F821


def test_bind_by_name_position_and_many():
    t = tierjit.template(calc, params=("myplus", "mymul"))
    assert t.params == ("myplus", "mymul") and t.inputs == ("myinput",)
    assert t.bind(myplus=1.0, mymul=2.5)(-10.0) == (-10.0 + 1.0) * 2.5
    assert t.bind(1.0, 2.5)(2.0) == 7.5
    assert t.bind(1.0, mymul=3.0)(1.0) == 6.0
    import numpy as np
    variants = t.bind_many(np.array([[1.0, 2.0], [3.0, 4.0]]))
    assert [v(1.0) for v in variants] == [4.0, 16.0]
    assert [v(1.0) for v in t.bind_many([{"myplus": 0.0, "mymul": 1.0}, (2.0, 2.0)])] == \
        [1.0, 6.0]


def test_bound_variant_is_a_partial_and_knows_its_template():
    t = tierjit.template(calc, params=("myplus", "mymul"))
    v = t.bind(myplus=1.0, mymul=2.5)
    assert type(v) is functools.partial and v.args == (1.0, 2.5)
    assert template_of(v) == (t, (1.0, 2.5))
    assert template_of(functools.partial(calc, 1.0)) is None


def test_other_free_names_resolve_in_the_functions_globals():
    t = tierjit.template(uses_global, params=("scale",))
    assert t.bind(scale=2.0)(1.0) == 102.0


@pytest.mark.parametrize("params, error, message", [
    (("nope",), ValueError, (r"'nope' is not a free name of calc; its free names are: "
                            r"mymul, myplus")),
    (("myinput",), ValueError, "'myinput' is already an argument of calc"),
    (("myplus", "myplus"), ValueError, "myplus named twice"),
    (("1x",), TypeError, "params must be names"),
])
def test_bad_params(params, error, message):
    with pytest.raises(error, match=message):
        tierjit.template(calc, params=params)


PROGRAMS = {
    "double": lambda x: x * 2.0,
    "shift": lambda x: x + k,  # noqa: F821
}


@pytest.mark.parametrize("call, error, message", [
    # inspect gives a lambda's whole line: "illegal target for annotation (line 1)"
    (lambda: tierjit.template(PROGRAMS["shift"], params=("k",)), ValueError,
     r"template: the lambda of line \d+ of .*test_template.py cannot be read back"),
    (lambda: tierjit.template(calc, params=5), TypeError,          # 'int' is not iterable
     "template: params must be a name or a sequence of names; got int"),
    (lambda: tierjit.template("def f(x):\n    return x + k\n", params=("k",),
                              globals=[("k", 1.0)]), TypeError,     # 'list' is not a mapping
     "template: globals must be a dict of names to values; got list"),
])
def test_bad_arguments_are_named(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_bind_many_names_bad_rows():
    import numpy as np
    t = tierjit.template(calc, params=("myplus", "mymul"))
    # a 1-d array gave "object of type 'numpy.float64' has no len()"; a 3-d one bound arrays
    for rows in (np.array([1.0, 2.0]), np.zeros((2, 2, 2))):
        with pytest.raises(ValueError, match="rows must be a 2-d array, one row of values"):
            t.bind_many(rows)
    with pytest.raises(TypeError, match="calc.bind_many: row 1 is a float; each row must be"):
        t.bind_many([(1.0, 2.0), 3.0])
    with pytest.raises(TypeError, match="calc.bind_many: row 0 is a str; each row must be"):
        t.bind_many(["ab"])                         # bound the characters 'a' and 'b'


DECORATED = """
def twice(fn):
    return lambda x: 2.0 * fn(x)

@twice
def f(x):
    return x + k
"""


def test_a_decorated_definition_is_refused_not_dropped():
    """The decorators were dropped: the variant returned 2.5 where the source run by CPython
    returns 5.0. A variant is the plain function with its params bound, so a decorator cannot
    be applied to it: the definition is refused, naming the decorator and its line."""
    with pytest.raises(ValueError, match=r"template: line 5: f is decorated with @twice, "
                                         r"which template cannot apply to variants"):
        tierjit.template(DECORATED, params=("k",), name="f")


def test_decorators_of_helpers_and_of_function_objects_are_applied():
    """A helper before the function is run as written (its decorator applied); a function
    object is what its decorators made (here tierjit.jit: its Python function is used)."""
    helper = "def halve(fn):\n    return lambda v: fn(v) / 2.0\n\n@halve\n" \
             "def h(v):\n    return v * K\n\ndef f(x):\n    return h(x) + k\n"
    t = tierjit.template(helper, params=("k",), name="f", globals={"K": 4.0})
    assert t.bind(k=1.0)(3.0) == 7.0
    jitted = tierjit.jit(uses_global)
    assert tierjit.template(jitted, params=("scale",)).bind(scale=2.0)(1.0) == 102.0


def test_param_assigned_in_the_body_names_the_line():
    line = assigns.__code__.co_firstlineno + 1
    with pytest.raises(ValueError, match=rf"'a' is assigned in assigns \(line {line}\)"):
        tierjit.template(assigns, params=("a",))


@pytest.mark.parametrize("kwargs, message", [
    ({"myplus": 1.0}, "missing binding for mymul"),
    ({"myplus": 1.0, "mymul": 2.0, "extra": 3}, "unknown param extra"),
    ({"typo": 1.0}, "unknown param typo; missing binding for myplus, mymul"),
])
def test_bad_bindings(kwargs, message):
    t = tierjit.template(calc, params=("myplus", "mymul"))
    with pytest.raises(TypeError, match=message):
        t.bind(**kwargs)


def test_too_many_positional_values():
    t = tierjit.template(calc, params=("myplus", "mymul"))
    with pytest.raises(TypeError, match="3 values for 2 params"):
        t.bind(1.0, 2.0, 3.0)


def test_template_from_source_text_with_imports():
    t = tierjit.template("import math\ndef f(x):\n    return math.sqrt(x) * k\n", params="k")
    assert t.bind(k=3.0)(4.0) == 6.0
    with pytest.raises(ValueError, match="exactly one function definition"):
        tierjit.template("x = 1\n", params=())


def test_closure_variables_are_captured():
    offset = 5.0

    def inner(x):
        return x * k + offset  # noqa: F821

    assert tierjit.template(inner, params=("k",)).bind(k=2.0)(1.0) == 7.0


def test_cold_variants_cost_a_cpython_call_and_compile_nothing():
    t = tierjit.template(calc, params=("myplus", "mymul"))
    v = t.bind(myplus=1.0, mymul=2.5)
    v(1.0)
    assert t.tier == "cold" and t.calls == 1 and "run by CPython" in t.explain()


def test_promotion_moves_old_and_new_variants(monkeypatch):
    monkeypatch.setattr(template_mod, "PROMOTE_AFTER", 5)
    t = tierjit.template(calc, params=("myplus", "mymul"))
    old = t.bind(myplus=1.0, mymul=2.0)
    results = [old(float(i)) for i in range(10)]
    assert results == [(i + 1.0) * 2.0 for i in range(10)]
    assert t.tier == "jit"
    new = t.bind(myplus=1.0, mymul=2.0)
    assert template_of(new)[0] is t and new.func is not old.func
    assert old(3.0) == new(3.0) == 8.0


def test_compile_makes_native_variants():
    t = tierjit.template(calc, params=("myplus", "mymul")).compile()
    v = t.bind(myplus=1.0, mymul=2.5)
    assert v(-10.0) == -22.5
    assert t.tier == "opt" and "calc(float, float, float): opt" in t.explain()


def _drain(gen):
    """(values yielded, value returned) of a generator."""
    out = []
    while True:
        try:
            out.append(next(gen))
        except StopIteration as stop:
            return out, stop.value


def test_generator_template_yields_on_the_promoting_call(monkeypatch):
    # the counted function of a generator is a generator: its forward to the promoted
    # function returned that function's generator as its StopIteration value, so the call
    # that promoted the template yielded nothing
    monkeypatch.setattr(template_mod, "PROMOTE_AFTER", 3)
    t = tierjit.template("def g(x):\n    yield x + a\n    return x * a\n", params=("a",))
    v = t.bind(a=2.0)
    assert [_drain(v(float(i))) for i in range(6)] == [([i + 2.0], i * 2.0) for i in range(6)]
    assert t.tier == "jit"
    assert _drain(t.bind(a=3.0)(1.0)) == ([4.0], 3.0)


@pytest.mark.parametrize("name", ["_tj_hot", "_tj_make", "_tj_counted", "_tj_columns",
                                  "_tj_state"])
def test_names_of_generated_code_do_not_hide_the_users(name):
    # the counted function was nested in a maker whose locals _tj_counted and _tj_hot hid
    # globals of those names, and _tj_make and _tj_columns replaced the user's globals
    env = {name: 5.0}
    t = tierjit.template(f"def f(x):\n    return x + {name} * a\n", params=("a",),
                         globals=env)
    assert t.bind(a=2.0)(1.0) == 11.0
    import numpy as np
    branchy = f"def f(x):\n    if x > 0:\n        x = x * 2.5\n    return x + {name}\n"
    got = tierjit.evaluate([tierjit.compile_source(branchy, globals=env)], np.array([1.0, 2.0]))
    assert got.tolist() == [[7.5, 10.0]]
