"""Counting tier 0 makes the calls CPython makes, in CPython's order, on any objects: each
program runs as CPython and in counting tier 0 (every call watched) with arguments that log
their special-method calls; results, exceptions, logs and the arguments' final state agree."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

import tierjit

from .harness import build

LOG: list[str] = []


class Index:
    """An int by __index__, logged; `step` makes each call answer more (range must read it
    once)."""

    def __init__(self, name: str, value: int, step: int = 0) -> None:
        self.name, self.value, self.step = name, value, step

    def __index__(self) -> int:
        LOG.append(f"{self.name}.__index__")
        self.value += self.step
        return self.value - self.step

    def __repr__(self) -> str:
        return f"Index({self.name}, {self.value})"


class Iterable:
    def __init__(self, name: str, items) -> None:
        self.name, self.items = name, list(items)

    def __iter__(self):
        LOG.append(f"{self.name}.__iter__")
        return iter(self.items)

    def __repr__(self) -> str:
        return f"Iterable({self.name}, {self.items})"


class Acc:
    """A value whose `+=` is in place (logged), unlike its `+`."""

    def __init__(self, v: int) -> None:
        self.v = v

    def __add__(self, o):
        LOG.append("__add__")
        return Acc(self.v + o)

    def __iadd__(self, o):
        LOG.append("__iadd__")
        self.v += o
        return self

    def __repr__(self) -> str:
        return f"Acc({self.v})"


class Freed:
    """An iterable whose iterator logs when it is freed."""

    class It:
        def __init__(self, items) -> None:
            self.items = iter(items)

        def __iter__(self):
            return self

        def __next__(self):
            return next(self.items)

        def __del__(self) -> None:
            LOG.append("iterator freed")

    def __init__(self, items) -> None:
        self.items = items

    def __iter__(self):
        return Freed.It(self.items)

    def __repr__(self) -> str:
        return f"Freed({self.items})"


class After:
    """A value whose `+` logs (after the loop)."""

    def __radd__(self, o):
        LOG.append("after the loop")
        return o

    def __repr__(self) -> str:
        return "After()"


class Truth:
    """A value whose truth is logged."""

    def __init__(self, name: str, v: bool) -> None:
        self.name, self.v = name, v

    def __bool__(self) -> bool:
        LOG.append(f"bool({self.name})")
        return self.v

    def __lt__(self, o):
        return Truth(f"{self.name}<", self.v)

    def __repr__(self) -> str:
        return f"Truth({self.name})"


# (a program, the arguments of its calls)
CASES = [
    ("""
        def f(x, y):
            s = 0
            for v in x:
                s += v
            s = s + y
            return s
        """, [lambda: (Freed([1, 2]), After())]),
    ("""
        def f(x, y):
            s = 0
            for a, b in zip(x, range(5)):
                s += a * b
            s = s + y
            return s
        """, [lambda: (Freed([1, 2]), After())]),
    ("""
        def f(x, y):
            n = 0
            for i in range(2):
                if x and y or not (y and x):
                    n += 1
                while x < y < 3:
                    break
                assert x or y or i < 5
                n += 1 if not x else 2
            return n
        """, [lambda: (Truth("x", False), Truth("y", True)),
              lambda: (Truth("x", True), Truth("y", False))]),
    ("""
        def f(a, b):
            s = 0
            for i in range(a, b):
                s = s * 10 + i
            return s
        """, [lambda: (Index("a", 1, 1), 5)]),
    ("""
        def f(a, b):
            s = 0
            for i in range(0, a, b):
                s = s * 10 + i
            return s
        """, [lambda: (9, Index("step", 2, 5))]),
    ("""
        def f(x, n):
            s = 0
            for a, b in zip(x, range(n)):
                s += a * b
            return s
        """, [lambda: (Iterable("x", [1, 2, 3]), Index("n", 2)), lambda: (None, "z")]),
    ("""
        def f(x, y):
            s = 0
            for a, (i, b) in zip(x, enumerate(y)):
                s += a * b + i
            return s
        """, [lambda: (Iterable("x", [1, 2]), Iterable("y", [3, 4, 5]))]),
    ("""
        def f(x, v):
            for i in range(len(x)):
                x[i] += v
            return x
        """, [lambda: ([Acc(1), Acc(2)], 5), lambda: ([[1], [2]], (7,)),
              lambda: (np.zeros((2, 2), dtype=np.int64), 0.5)]),
]


def _run(f, args):
    LOG.clear()
    try:
        r = ("ok", f(*args))
    except Exception as e:  # noqa: BLE001 - compared
        r = ("raised", type(e), str(e))
    return repr(r), list(LOG), repr(args)


@pytest.mark.parametrize("k, j", [(k, j) for k, (_, makes) in enumerate(CASES)
                                  for j in range(len(makes))])
def test_counting_tier0_makes_cpython_s_calls(k, j):
    source, makes = CASES[k]
    make = makes[j]
    ref = build(textwrap.dedent(source), "cpython", f"counting{k}")["f"]
    with tierjit.config.override(watch_seconds=0.0, watch_size=None, hot_calls=10**9,
                                 hot_seconds=None):
        f = tierjit.jit(ref)
        for _ in range(2):
            assert _run(f, make()) == _run(ref, make())
        assert "counting tier 0" in tierjit.explain(f)
