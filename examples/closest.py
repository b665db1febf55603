"""Nearest point to a query among a million 2-d points: one long loop per query.

Plain Python, no tierjit in it: `tierjit run examples/closest.py` jits `closest` because it is
defined in the script. Its first call is a single loop over a million points: with OSR the call
moves from tier 0 into native code in the middle of that loop; later calls run native code from
the start. Prints the nearest point of each query; `--time` also prints the time taken.

    python examples/closest.py [--n N] [--time]
"""

import sys
import time

import numpy as np


def closest(xs, ys, qx, qy):
    """Index of the point nearest to (qx, qy), and its squared distance."""
    best = 0
    best_d = (xs[0] - qx) ** 2 + (ys[0] - qy) ** 2
    for i in range(1, len(xs)):
        d = (xs[i] - qx) ** 2 + (ys[i] - qy) ** 2
        if d < best_d:
            best_d = d
            best = i
    return best, best_d


def main(argv):
    n = int(argv[argv.index("--n") + 1]) if "--n" in argv else 1_000_000
    rng = np.random.default_rng(2024)
    xs, ys = rng.random(n), rng.random(n)
    queries = [(0.25, 0.75), (0.5, 0.5), (0.9, 0.1), (0.01, 0.99)]
    start = time.perf_counter()
    for qx, qy in queries:
        i, d = closest(xs, ys, qx, qy)
        print(f"closest to ({qx}, {qy}): point {i} at ({xs[i]:.6f}, {ys[i]:.6f}), "
              f"squared distance {d:.3e}")
    if "--time" in argv:
        print(f"time: {time.perf_counter() - start:.3f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
