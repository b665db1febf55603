"""The 5-body (Sun and gas giants) simulation: a small numeric kernel called once per step.

Plain Python and NumPy, no tierjit in it: under `tierjit run examples/nbody.py`, `advance`
runs as CPython for its first calls, gets hot after 1000 calls (or 5 ms), is compiled on the
compiler thread meanwhile, and runs native code for the remaining steps. Prints the energy
before and after; `--time` also prints the time taken.

    python examples/nbody.py [--steps N] [--time]
"""

import math
import sys
import time

import numpy as np

PI = 3.141592653589793
SOLAR_MASS = 4 * PI * PI
DAYS_PER_YEAR = 365.24
# x y z, vx vy vz (per day), mass: the Computer Language Benchmarks Game's initial conditions
BODIES = (
    (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0),
    (4.84143144246472090e+00, -1.16032004402742839e+00, -1.03622044471123109e-01,
     1.66007664274403694e-03, 7.69901118419740425e-03, -6.90460016972063023e-05,
     9.54791938424326609e-04),
    (8.34336671824457987e+00, 4.12479856412430479e+00, -4.03523417114321381e-01,
     -2.76742510726862411e-03, 4.99852801234917238e-03, 2.30417297573763929e-05,
     2.85885980666130812e-04),
    (1.28943695621391310e+01, -1.51111514016986312e+01, -2.23307578892655734e-01,
     2.96460137564761618e-03, 2.37847173959480950e-03, -2.96589568540237556e-05,
     4.36624404335156298e-05),
    (1.53796971148509165e+01, -2.59193146099879641e+01, 1.79258772950371181e-01,
     2.68067772490389322e-03, 1.62824170038242295e-03, -9.51592254519715870e-05,
     5.15138902046611451e-05),
)


def energy(pos, vel, mass):
    e = 0.0
    n = mass.shape[0]
    for i in range(n):
        e += 0.5 * mass[i] * (vel[3 * i] ** 2 + vel[3 * i + 1] ** 2 + vel[3 * i + 2] ** 2)
        for j in range(i + 1, n):
            dx = pos[3 * i] - pos[3 * j]
            dy = pos[3 * i + 1] - pos[3 * j + 1]
            dz = pos[3 * i + 2] - pos[3 * j + 2]
            e -= mass[i] * mass[j] / math.sqrt(dx * dx + dy * dy + dz * dz)
    return e


def advance(pos, vel, mass, dt):
    """One time step: velocities from the pairwise forces, then positions."""
    n = mass.shape[0]
    for i in range(n):
        for j in range(i + 1, n):
            dx = pos[3 * i] - pos[3 * j]
            dy = pos[3 * i + 1] - pos[3 * j + 1]
            dz = pos[3 * i + 2] - pos[3 * j + 2]
            d2 = dx * dx + dy * dy + dz * dz
            mag = dt / (d2 * math.sqrt(d2))
            mj = mass[j] * mag
            vel[3 * i] -= dx * mj
            vel[3 * i + 1] -= dy * mj
            vel[3 * i + 2] -= dz * mj
            mi = mass[i] * mag
            vel[3 * j] += dx * mi
            vel[3 * j + 1] += dy * mi
            vel[3 * j + 2] += dz * mi
    for i in range(n):
        pos[3 * i] += dt * vel[3 * i]
        pos[3 * i + 1] += dt * vel[3 * i + 1]
        pos[3 * i + 2] += dt * vel[3 * i + 2]


def main(argv):
    steps = int(argv[argv.index("--steps") + 1]) if "--steps" in argv else 50_000
    pos = np.array([c for b in BODIES for c in b[0:3]])
    vel = np.array([c * DAYS_PER_YEAR for b in BODIES for c in b[3:6]])
    mass = np.array([b[6] * SOLAR_MASS for b in BODIES])
    for k in range(3):                    # the Sun balances the planets' momentum
        vel[k] = -sum(vel[3 * i + k] * mass[i] for i in range(1, len(BODIES))) / SOLAR_MASS
    start = time.perf_counter()
    print(f"energy before: {energy(pos, vel, mass):.9f}")
    for _ in range(steps):
        advance(pos, vel, mass, 0.01)
    print(f"energy after {steps} steps: {energy(pos, vel, mass):.9f}")
    if "--time" in argv:
        print(f"time: {time.perf_counter() - start:.3f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
