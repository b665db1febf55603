"""Differential tests of variants: bound templates, compile_source and tierjit.evaluate against
CPython per row and against NumPy op at a time, and evaluation on a Dask cluster.

CPython is the oracle for calls (value or exception, exactly); for `evaluate` the oracle is
NumPy op at a time (tierjit.variants.reference), and CPython per row must agree on every row
where CPython does not raise (where it raises ZeroDivisionError, NumPy gives ±inf or nan).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import tierjit
from tierjit.variants import random_programs, reference
from tierjit.variants import template as template_mod


def outcome(f, *args):
    try:
        return ("value", f(*args))
    except Exception as e:  # noqa: BLE001 - the exception is the outcome
        return ("raise", type(e))


def same_outcome(a, b) -> bool:
    if a[0] != b[0]:
        return False
    if a[0] == "raise":
        return a[1] is b[1]
    x, y = a[1], b[1]
    return type(x) is type(y) and (x == y or (math.isnan(x) and math.isnan(y)))


TEMPLATE = """def calc(x):
    v2 = a
    v3 = b
    v4 = x * v2 - v3 / x
    v5 = v4 * v4 + v2
    return v5 / (v3 - x)
"""


def literal(a: float, b: float) -> str:
    return TEMPLATE.replace("= a\n", f"= {a!r}\n").replace("= b\n", f"= {b!r}\n")


def run_source(src: str):
    ns: dict = {}
    exec(src, ns)  # noqa: S102
    return ns["calc"]


ROWS = [-3.5, -1.0, -0.0, 0.0, 0.25, 1.0, 2.0, 1e300, math.inf]
CONSTS = [(0.5, 2.0), (-1.25, 0.0), (3.0, 1.0), (1e-300, -7.5), (2.0, 2.0)]


@pytest.mark.parametrize("stage", ["cold", "promoted", "compiled"])
def test_bound_variants_match_cpython_per_row(stage, monkeypatch):
    if stage == "promoted":
        monkeypatch.setattr(template_mod, "PROMOTE_AFTER", 3)
    t = tierjit.template(TEMPLATE, params=("a", "b"))
    if stage == "compiled":
        t.compile()
    for a, b in CONSTS:
        v, ref = t.bind(a=a, b=b), run_source(literal(a, b))
        for x in ROWS:
            assert same_outcome(outcome(v, x), outcome(ref, x)), (stage, a, b, x)


def test_compile_source_variants_match_exec():
    for a, b in CONSTS:
        src = literal(a, b)
        f, ref = tierjit.compile_source(src), run_source(src)
        for x in ROWS:
            assert same_outcome(outcome(f, x), outcome(ref, x)), (a, b, x)


def cpython_rows(src: str, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row: (value, True) or (nan, False) where CPython raised."""
    ns: dict = {}
    exec(src, ns)  # noqa: S102
    f = [v for k, v in ns.items() if callable(v) and not k.startswith("__")][-1]
    vals, ok = np.empty(len(X)), np.zeros(len(X), bool)
    for i, row in enumerate(X.tolist()):
        try:
            vals[i], ok[i] = f(*row), True
        except (ZeroDivisionError, OverflowError):
            vals[i] = np.nan
    return vals, ok


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_evaluate_encoding_matches_numpy_and_cpython(seed):
    progs = random_programs(150, int(3 + seed * 3), n_consts=3, n_regs=5, seed=seed)
    rng = np.random.default_rng(seed)
    X = rng.uniform(-5, 5, size=(200, 1))
    X[::10] = 0.0
    X[5::17] = [[1e308], [-np.inf], [np.inf]][seed - 1]
    for dtype in ("float64", "float32"):
        with np.errstate(over="ignore"):
            Xd = X.astype(dtype)
        got = tierjit.evaluate(progs, Xd)
        assert np.array_equal(got, reference.run(progs, Xd), equal_nan=True)
        best = tierjit.evaluate(progs, Xd, "max")
        assert np.array_equal(best, reference.run(progs, Xd, "max"))
    got64, agree = tierjit.evaluate(progs, X), 0
    for p in range(len(progs)):
        vals, ok = cpython_rows(progs.to_source(p), X)
        assert np.array_equal(got64[p][ok], vals[ok], equal_nan=True), progs.to_source(p)
        agree += ok.all()
    assert agree > 0


def test_evaluate_sources_and_bound_variants_match_cpython():
    t = tierjit.template(TEMPLATE, params=("a", "b"))
    variants = [t.bind(a=a, b=b) for a, b in CONSTS]
    sources = [literal(a, b) for a, b in CONSTS]
    X = np.array(ROWS[:-1])[:, None]
    by_variant = tierjit.evaluate(variants, X)
    by_source = tierjit.evaluate(sources, X)
    assert np.array_equal(by_variant, by_source, equal_nan=True)
    for k, src in enumerate(sources):
        vals, ok = cpython_rows(src, X)
        assert np.array_equal(by_source[k][ok], vals[ok], equal_nan=True)
        with np.errstate(all="ignore"):
            a, b = CONSTS[k]
            x = X[:, 0]
            v4 = x * a - b / x
            want = (v4 * v4 + a) / (b - x)
        assert np.array_equal(by_source[k], want, equal_nan=True)


def test_evaluate_called_programs_match_cpython():
    src = ("import math\ndef f(x, y):\n    if x > y:\n        return math.sqrt(x - y) * 1.5\n"
           "    s = 0.0\n    for i in range(3):\n        s += x * i - y\n    return s\n")
    X = np.random.default_rng(0).uniform(-2, 2, size=(64, 2))
    got = tierjit.evaluate([src], X)[0]
    vals, ok = cpython_rows(src, X)
    assert ok.all() and np.array_equal(got, vals)


def test_dask_cluster_matches_local_evaluation():
    distributed = pytest.importorskip("distributed")
    progs = random_programs(200, 8, n_consts=3, seed=7)
    t = tierjit.template(TEMPLATE, params=("a", "b"))
    mixed = [progs.to_source(i) for i in range(40)] + [t.bind(a=a, b=b) for a, b in CONSTS]
    X = np.linspace(-3, 3, 257)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        for reduce in (None, "max"):
            remote = tierjit.evaluate(mixed, X, reduce, executor=client)
            assert np.array_equal(remote, tierjit.evaluate(mixed, X, reduce), equal_nan=True)
        remote = tierjit.evaluate(progs, X, "sum", executor=client)
        assert np.array_equal(remote, tierjit.evaluate(progs, X, "sum"), equal_nan=True)
        # the workers built each structure once and reuse it
        again = tierjit.evaluate(mixed, X, "max", executor=client)
        assert np.array_equal(again, tierjit.evaluate(mixed, X, "max"))
