"""A symbolic-regression style search: which of 1000 random formulas fits the data best?

Each candidate is a small formula in x (source text, with random constants), scored by its mean
squared error over 10,000 data points. `tierjit.evaluate` scores the whole population in one
native call; with `--cpython` every formula is compiled by CPython (`exec`) and evaluated row by
row, which is what a plain Python search does. Both give the same ranking. Prints the best
formulas; `--time` also prints the time taken.

    python examples/variants.py [--programs N] [--cpython] [--time]
"""

import sys
import time

import numpy as np

import tierjit

OPS = ("+", "-", "*")


def random_formula(rng, depth):
    """Source of a random expression in x with constants rounded to two decimals."""
    if depth == 0 or rng.random() < 0.3:
        return "x" if rng.random() < 0.5 else f"{rng.uniform(-2, 2):.2f}"
    op = OPS[rng.integers(len(OPS))]
    return f"({random_formula(rng, depth - 1)} {op} {random_formula(rng, depth - 1)})"


def mse_cpython(sources, xs, ys):
    """Mean squared error of each formula, evaluated by CPython one row at a time."""
    scores = []
    for src in sources:
        env = {}
        exec(src, env)
        f = env["f"]
        total = 0.0
        for x, y in zip(xs.tolist(), ys.tolist()):
            r = f(x) - y
            total += r * r
        scores.append(total / len(xs))
    return np.array(scores)


def main(argv):
    n = int(argv[argv.index("--programs") + 1]) if "--programs" in argv else 1000
    rng = np.random.default_rng(7)
    xs = np.linspace(-1.0, 1.0, 10_000)
    ys = 0.5 * xs * xs * xs - xs + 0.25                     # the hidden target
    formulas = [random_formula(rng, 4) for _ in range(n)]
    sources = [f"def f(x):\n    return {e}\n" for e in formulas]
    start = time.perf_counter()
    if "--cpython" in argv:
        scores = mse_cpython(sources, xs, ys)
    else:
        scores = tierjit.evaluate(sources, xs.reshape(-1, 1), reduce="mse", y=ys)
    best = np.argsort(scores, kind="stable")[:3]
    for rank, k in enumerate(best, 1):
        print(f"#{rank}: mse {scores[k]:.6g}  f(x) = {formulas[k]}")
    if "--time" in argv:
        print(f"time: {time.perf_counter() - start:.3f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
