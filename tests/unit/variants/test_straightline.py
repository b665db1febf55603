"""Straight-line templates as register code; everything else is reported with its line."""

from __future__ import annotations

import numpy as np
import pytest

import tierjit
from tierjit.variants import reference
from tierjit.variants.straightline import RegisterCode, instantiate

SCALE = 4.0


def lowered(src: str, params=()):
    t = tierjit.template(src, params=params, globals={"SCALE": SCALE, "np": np})
    return t, t.register_code()


@pytest.mark.parametrize("body", [
    "v2 = x + c\n    v3 = v2 * v2 / x\n    return v3 - -v2",
    "y = x\n    y += c\n    y *= y\n    return y",
    "a = b = x * c\n    a = a + 1\n    return a - b",
    "z: float = x / 0\n    return +z",
    "return ((x + 1) * (x - 2.5)) / (c - x) + SCALE",
    "x = x * x\n    return x",
    "return c",
])
def test_lowering_computes_what_numpy_computes(body):
    src = f"def f(x):\n    {body}\n"
    t, rc = lowered(src, ("c",) if "c" in body else ())
    assert isinstance(rc, RegisterCode), rc
    X = np.array([[-2.0], [0.0], [0.5], [3.0], [np.inf]])
    consts = np.array([[1.5], [-0.25]]) if t.params else np.zeros((2, 0))
    progs = instantiate(rc, consts)
    got = reference.run(progs, X)
    with np.errstate(all="ignore"):
        for k in range(len(consts)):
            want = t.py_function()(*[np.float64(c) for c in consts[k]], X[:, 0].copy())
            assert np.array_equal(got[k], np.broadcast_to(want, len(X)), equal_nan=True)


@pytest.mark.parametrize("body, reason", [
    ("if x > 0:\n        return x\n    return -x", "line 2: statement If"),
    ("return x ** 2", "line 2: operator Pow"),
    ("y = y + x\n    return y", "'y' read before it is assigned"),
    ("y += x\n    return y", "'y' read before it is assigned"),
    ("return np.sin(x)", "expression Call"),
    ("return x + undefined_name", "free name 'undefined_name'"),
    ("x = 1.0", "no return statement"),
    ("return x\n    x = 2", "return before the end"),
    ("a, b = x, x\n    return a", "assignment to Tuple"),
])
def test_not_straight_line_says_why(body, reason):
    _, rc = lowered(f"def f(x):\n    {body}\n")
    assert isinstance(rc, str) and reason in rc, rc


def test_params_are_slots():
    _, rc = lowered("def f(x):\n    return x * a + a - b\n", ("a", "b"))
    progs = instantiate(rc, [[2.0, 1.0], [3.0, 0.5]])
    assert len(progs) == 2 and progs.n_inputs == 1
    out = reference.run(progs, np.array([[1.0], [2.0]]))
    assert out.tolist() == [[3.0, 5.0], [5.5, 8.5]]
