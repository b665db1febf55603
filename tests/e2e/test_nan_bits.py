"""NaN bits where native code keeps CPython's: the differential harness lets any NaN match any
NaN (their sign and payload are not portable, docs/guide.md), so these compare the bits of
the NaNs that come from a library call CPython makes too."""

from __future__ import annotations

import math
import struct

import pytest

import tierjit

NAN = float("nan")


def atan2(y, x):
    return math.atan2(y, x)            # CPython's m_atan2: any NaN argument, its own NaN


def remainder(x, y):
    # the C library's fmod: inf % 2.0 is its NaN (LLVM's `frem` by a constant power of two
    # is arithmetic whose NaN has the dividend's sign)
    return x % y, x // y, x % 2.0, x // 4.0, x % -1.0


def _bits(values) -> list[str]:
    return [struct.pack("<d", v).hex() for v in values]


@pytest.mark.parametrize("args", [(-NAN, 1.5), (1.5, -NAN), (NAN, NAN), (math.inf, -NAN)])
@pytest.mark.parametrize("tier", ["baseline", "opt"])
def test_atan2_of_a_nan_is_cpythons_nan(args, tier):
    assert _bits([tierjit.jit(atan2, tier=tier)(*args)]) == _bits([atan2(*args)])


@pytest.mark.parametrize("args", [(math.inf, 2.0), (-math.inf, 2.0), (math.inf, -4.0),
                                  (math.inf, 0.75), (-NAN, 2.0), (5.0, 2.0)])
@pytest.mark.parametrize("tier", ["baseline", "opt"])
def test_float_remainder_of_an_infinity_is_the_c_librarys_nan(args, tier):
    assert _bits(tierjit.jit(remainder, tier=tier)(*args)) == _bits(remainder(*args))
