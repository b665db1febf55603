"""Compiles, tier-ups, deopts and (when tierjit has OSR) an OSR entry, for the trace and plot.

`factorial` is hot by calls and compiled; factorial(25) then overflows 64 bits in native code
(a deopt) every third call. `scan` is called once with a long loop: with OSR (and
TIERJIT_WATCH_MS=0, so that a function is watched from its first call) the call enters native
code in the middle of it."""

import numpy as np

from tierjit.runtime import compiler


def factorial(n):
    r = 1
    for i in range(2, n + 1):
        r *= i
    return r


def scan(v):
    best = 0.0
    for i in range(len(v)):
        if v[i] > best:
            best = v[i]
    return best


for k in range(1500):
    factorial(12)
compiler.wait_idle(60)
for k in range(30):
    factorial(25 if k % 3 == 0 else 12)
print(scan(np.linspace(0.0, 1.0, 10_000_000)))
compiler.wait_idle(60)
print(factorial(25))
