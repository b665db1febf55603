"""evaluate(executor=...): descriptions travel, workers rebuild, results are identical."""

from __future__ import annotations

import math
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import numpy as np
import pytest

import tierjit
from tierjit.variants import random_programs
from tierjit.variants.executors import describe, split, template_from
from tierjit.variants.population import plan
from tierjit.variants.template import template_of

K = 3.0


def calc(v1):
    return (v1 + myplus) * mymul * K + math.floor(v1)  # noqa: F821


def population():
    progs = random_programs(120, 8, n_consts=3, seed=5)
    t = tierjit.template(calc, params=("myplus", "mymul"))
    branchy = "import math\ndef f(x):\n    if x > 0.5:\n        return math.sqrt(x)\n    " \
              "return x / 0.0\n"
    return progs, [progs.to_source(i) for i in range(120)] + [branchy] + \
        t.bind_many([(1.0, 2.0), (3.0, -1.0), (0.5, 0.25)])


def test_description_rebuilds_the_structure():
    t = tierjit.template(calc, params=("myplus", "mymul"))
    desc = describe(t)
    assert ("K", "value", 3.0) in desc.env and ("math", "module", "math") in desc.env
    again = template_from(desc)
    assert template_from(describe(t)) is again
    assert again.bind(1.0, 2.0)(1.5) == t.bind(1.0, 2.0)(1.5)


def test_helper_functions_of_a_source_travel_as_source():
    """A source may define helpers before its function. describe() shipped a helper as the
    value of a free name, and pickling it failed (PicklingError) under every executor; what
    the helper reads (SCALE) must travel instead."""
    src = "def helper(v):\n    return v * SCALE\n\ndef f(x):\n    return helper(x) + 1.5\n"
    prog = tierjit.compile_source(src, name="f", globals={"SCALE": 2.0})
    desc = describe(template_of(prog)[0])
    assert [name for name, _, _ in desc.env] == ["SCALE"]
    X = np.array([1.0, 2.0])
    with ThreadPoolExecutor(2) as ex:
        assert tierjit.evaluate([prog], X, executor=ex).tolist() == [[3.5, 5.5]]


def test_split_covers_every_program_once():
    progs, mixed = population()
    for p in (plan(mixed), plan(progs)):
        tasks = split(p, 7)
        positions = sorted(int(x) for t in tasks for _, _, pos in t.groups for x in pos) + \
            sorted(int(x) for t in tasks for _, pos in t.encoded for x in pos)
        assert sorted(positions) == list(range(p.n_programs))
        assert max(t.size for t in tasks) <= -(-p.n_programs // 7)


@pytest.mark.parametrize("kind", ["threads", "processes"])
def test_executors_match_local_evaluation(kind):
    progs, mixed = population()
    X = np.linspace(-2, 2, 301)
    pool = ThreadPoolExecutor(2) if kind == "threads" else ProcessPoolExecutor(2)
    with pool as ex:
        for reduce in (None, "max", "sum"):
            local = tierjit.evaluate(mixed, X, reduce)
            remote = tierjit.evaluate(mixed, X, reduce, executor=ex)
            assert np.array_equal(local, remote, equal_nan=True), reduce
        assert np.array_equal(tierjit.evaluate(progs, X, "max", executor=ex),
                              tierjit.evaluate(progs, X, "max"))


def test_not_an_executor():
    with pytest.raises(TypeError, match="executor must be"):
        tierjit.evaluate(["def f(x):\n    return x\n"], np.zeros(2), executor=object())
