"""`for` loops in counting tier 0, which runs before anything is known of the arguments: over a
dict, a set, a generator, an iterator, a list the loop grows, the result is CPython's
(backends/pyemit/iteration.py), not that of indexing 0..len - 1; and a non-iterable raises
CPython's TypeError. Each program runs as CPython and in counting tier 0 (every call watched)
on fresh arguments; the results, exceptions and what is left in the iterators must agree."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

import tierjit

from .harness import build

PROGRAMS = {
    "plain": """
        def f(xs):
            s = 0
            for x in xs:
                s += x
            return s
        """,
    "enumerate": """
        def f(xs):
            s = 0
            for i, x in enumerate(xs, 1):
                s += i * x
            return s
        """,
    "zip_with_range": """
        def f(xs):
            s = 0
            for x, r in zip(xs, range(3)):
                s += x * 10 + r
            return s
        """,
    "zip_with_itself": """
        def f(xs):
            s = 0
            for x, y in zip(xs, xs):
                s = s * 100 + x * 10 + y
            return s
        """,
    "zip_tuple_first": """
        def f(xs):
            s = 0
            for t, x in zip((7, 8), xs):
                s = s * 100 + t * 10 + x
            return s
        """,
    "break_early": """
        def f(xs):
            s = 0
            for x in xs:
                if x > 4:
                    break
                s += x
            return s
        """,
    "nested_same": """
        def f(xs):
            s = 0
            for x in xs:
                for y in xs:
                    s += x * y
            return s
        """,
    "no_back_edge": """
        def f(xs):
            for x in xs:
                return x          # the body never loops back
            n = 3
            while n > 0:
                n -= 1
            return n
        """,
    "zip_then_range": """
        def f(xs):
            s = 0
            for x, (i, r) in zip(xs, enumerate(range(3))):
                s = s * 100 + x * 10 + r
            return s
        """,
    "grows": """
        def f(xs):
            s = 0
            for x in xs:
                s += x
                if s < 20:
                    xs += (1,)
            return s
        """,
}


def _values():
    """Fresh arguments, and whether the argument is left for inspection (an iterator)."""
    return [
        [2, 4, 6],
        (1, 2, 3),
        {0: 10, 1: 20, 2: 30},
        {5: 1, 7: 2},
        {3, 4},
        (x * 3 for x in range(5)),
        iter([1, 2, 3, 4, 5, 6, 7]),
        {9: 0, 8: 1}.keys(),
        {9: 0, 8: 1}.values(),
        range(2, 7),
        range(2 ** 70, 2 ** 70 + 3),
        np.array([1, 2, 3]),
        np.arange(6).reshape(3, 2)[:, 0],
        np.array(5),
        "abc",
        5,
        2 ** 70,
        2.5,
        None,
    ]


def _run(f, arg):
    try:
        r = ("ok", f(arg))
        if isinstance(r[1], np.ndarray):
            r = ("ok", r[1].tolist())
    except Exception as e:  # noqa: BLE001 - compared
        r = ("raised", type(e), str(e))
    left = list(arg) if hasattr(arg, "__next__") else arg if isinstance(arg, list) else None
    return r, left


@pytest.mark.parametrize("name", PROGRAMS)
def test_for_loops_over_anything_in_counting_tier0(name):
    ref = build(textwrap.dedent(PROGRAMS[name]), "cpython", name)["f"]
    with tierjit.config.override(watch_seconds=0.0, watch_size=None, hot_calls=10**9,
                                 hot_seconds=None):
        f = tierjit.jit(ref)
        for k, arg in enumerate(_values()):
            want = _run(ref, arg)
            got = _run(f, _values()[k])
            assert got == want, (name, arg)
        assert "counting tier 0" in tierjit.explain(f)
