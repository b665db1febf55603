"""Constant folding: what it folds, and what it leaves for run time."""

from __future__ import annotations

import warnings

import numpy as np

import tierjit

_FILTERS = ("simplefilter", "filterwarnings", "catch_warnings", "resetwarnings")


def test_compiling_leaves_the_warnings_filters_alone():
    """The filters are the whole process's: changing them while compiling would turn another
    thread's warnings into exceptions, or silence them."""
    @tierjit.jit(tier="opt")
    def f(x, y):
        a = 2 + 3
        b = (a * 7 - 1) // 3 % 5 + (1 << 4) + 2.5 * 4.0 - 7 ** 2
        return x * y + a + b + ~a

    def forbidden(*args, **kwargs):
        raise AssertionError("the compiler changed the process's warnings filters")

    saved = {name: getattr(warnings, name) for name in _FILTERS}
    for name in _FILTERS:
        setattr(warnings, name, forbidden)
    try:
        r = f(np.int8(3), np.int8(2))         # compiles: folding, NumPy scalar type rules
    finally:
        for name, fn in saved.items():
            setattr(warnings, name, fn)
    assert r == 3 * 2 + 5 + (34 // 3 % 5 + 16 + 10.0 - 49) + ~5
    assert tierjit.explain(f).splitlines()[1].endswith("opt")
