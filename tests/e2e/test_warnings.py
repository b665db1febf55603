"""NumPy's warnings survive deoptimisation: same category, message, count and line.

Native code never warns itself: where NumPy would warn (a float overflowing to inf, an
integer wrapping), it deoptimises and tier 0 lets NumPy compute and warn. In a pure loop the
guards deoptimise to the loop's entry, so tier 0 recomputes the loop; the warning must still
be issued exactly once, attributed to the source line, as CPython does. An operation native
code calls Python for warns from a frame at its own line (backends/pyops.py)."""

from __future__ import annotations

import math
import traceback
import warnings

import numpy as np
import pytest

import tierjit


def grow(a, n):
    x = a[0]
    for i in range(n):
        x = x * a[1]                  # overflows to inf at some iteration: one warning
    return x


def wrap(a, n):
    s = a[0]
    for i in range(n):
        s = s + a[1]                  # np.int64 wraps: NumPy warns
    return s


def store_then_overflow(a, out):
    for i in range(out.shape[0]):
        out[i] = a[0] * a[1] ** i     # the store ends each region; overflow at i = 4
    return out


def dot_overflow(a, b):
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i] * b[i]              # the product overflows; only the sum is checked
    return s


def dot_store(a, b, out):
    for i in range(a.shape[0]):
        s = 1.0 - a[i] * b[i]         # product inf, difference -inf: one warning, the product's
        out[i] = s
    return out


def quotient_of_inf(a, b):
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i] / (b[i] * b[i])     # x / inf is 0.0: the divisor is checked on its own
    return s


def running(a, b):
    s = a[0] * 0.0
    for i in range(a.shape[0]):
        s += a[i]                     # the sum overflows, then inf - inf is NaN: two warnings
    for i in range(b.shape[0]):
        s = b[i] - s                  # the accumulator as the subtrahend
    return s


def quotients(a):
    q = a[0]
    for i in range(1, a.shape[0]):
        q = q / a[i]                  # divide by zero, then inf / inf
    return q


def nested(a, n):
    s = a[0] * 0.0
    for i in range(a.shape[0]):
        t = a[i]
        for k in range(n):            # an inner loop polls with the outer sum in flight
            t = t * a[i]
        s += t
    return s


def read_modify_write(v, x, y):
    for i in range(v.shape[0] - 1):
        v[i] += x[i]                  # stored, then undone when the next check fails
        v[i + 1] += x[i] * y          # overflows for a big y
        v[i] -= 1.0
    return v


def aliased(v, i, j, y):
    v[i] = v[j] + 1.0
    v[j] = v[i] * y                   # the same element when i == j; overflows
    return v


def adv_store_cast32(a, b):
    for i in range(a.shape[0]):
        a[i] = b[i] * 2.0             # a float64 beyond float32's range: cast overflow
    return a


def adv_store_cast_int8(a, b):
    for i in range(a.shape[0]):
        a[i] = b[i]                   # -1.0 into uint8 is 255, without a warning
    return a


def adv_float32_plus_float(a, x):
    s = a[0]
    for i in range(a.shape[0]):
        s = s + x                     # a Python float is weak: the sum stays float32
    return s


def adv_diamond(a, b):
    s = 0.0
    for i in range(a.shape[0]):
        x = a[i]
        y = b[i]
        if x > 0.0:                   # a select: only the taken arm may warn
            t = x * y
        else:
            t = x - y
        s += t
    return s


def adv_square(x):
    return x * x


def adv_inlined_callee(a):
    s = 0.0
    for i in range(a.shape[0]):
        s += adv_square(a[i])         # generated in place; the callee's line warns
    return s


def adv_dot32_into64(a, b):
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i] * b[i]              # a float32 product overflows before the float64 sum
    return s


def adv_dot8_into64(a, b, s):
    for i in range(a.shape[0]):
        s += a[i] * b[i]              # an int8 product wraps before the int64 sum
    return s


def adv_undo_then_warn(v, w, y):
    for i in range(v.shape[0]):
        v[i] = v[i] * y               # stored, then undone when an overflow is found
        w[i] = v[i] + w[i]
        v[i] = w[i] - v[i]
    return w


def adv_pair_updates(pos, vel, mass, dt):
    n = mass.shape[0]
    for i in range(n):
        for j in range(i + 1, n):     # six stores and one product checked per iteration
            dx = pos[2 * i] - pos[2 * j]
            dy = pos[2 * i + 1] - pos[2 * j + 1]
            d2 = dx * dx + dy * dy
            mag = dt / (d2 * d2)
            vel[2 * i] -= dx * mass[j] * mag
            vel[2 * i + 1] -= dy * mass[j] * mag
            vel[2 * j] += dx * mass[i] * mag
            vel[2 * j + 1] += dy * mass[i] * mag
    return vel


def weighted_int32(a):
    s = 0.0
    for i in range(len(a)):
        s = s * 0.5 + i * a[i]        # int * np.int32: NumPy's, called from native code
    return s


def roots(a):
    s = 0.0
    for i in range(a.shape[0]):
        s += np.sqrt(a[i])            # of a negative: "invalid value encountered in sqrt"
    return s


def logs(a):
    s = 0.0
    for x in a:
        s += np.log(x) * np.exp(x)    # NumPy's own calls: log(0.0) "divide by zero"
    return s


def spread(a):
    return a.mean() + a.var()         # empty: NumPy's own warnings, from Python code


def f32_against_a_big_float(a, x):
    return a[0] / x + (a[1] < x)      # x past float32: NumPy's cast warns, the results do not


def untaken_cast(x, flag):
    if flag:
        return math.sqrt(x) + 0j     # of a NumPy complex: ComplexWarning, when it runs
    return x


def quotient_array(a, d):
    return a / d                      # of a transposed array: NumPy's result is F-ordered


def span(x, y, s):
    return np.arange(x, y, s).shape[0]   # NumPy's subtraction overflows: it warns, may raise


def union_mul(a, c):
    s = 0.0
    if c:
        s = a[0]                      # float | np.float64: NumPy warns where float is silent
    return s * 2.0


def union_sub(a, c):
    s = 0.0
    if c:
        s = a[0]
    return s - s


def union_mod(a, c):
    s = 0.0
    if c:
        s = a[0]
    return s % 2.0


def running_max(a):
    m = 0.0
    for i in range(a.shape[0]):
        if a[i] > m:
            m = a[i]
    return m * m


def cast_complex(a):
    return np.float64(a[0]), np.int16(a[1])   # ComplexWarning, once each (not at typing)


def _record(fn, *args):
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        r = fn(*args)
    return r, [(w.category, str(w.message), w.filename, w.lineno) for w in ws]


@pytest.mark.parametrize("fn, args", [
    (grow, (np.array([1.0, 1e30]), 20)),
    (wrap, (np.array([2 ** 62, 2 ** 61], dtype=np.int64), 5)),
    (store_then_overflow, (np.array([1.0, 1e100]), np.zeros(6))),
    (dot_overflow, (np.array([1.0, 1e300, 2.0]), np.array([1.0, 1e10, 3.0]))),
    (dot_store, (np.array([1.0, 1e300, 2.0]), np.array([1.0, 1e10, 3.0]), np.zeros(3))),
    (quotient_of_inf, (np.array([1.0, 2.0]), np.array([3.0, 1e200]))),
    (running, (np.array([1e308, 1e308, -np.inf, 1.0]), np.array([1.0, 2.0]))),
    (running, (np.array([1.0, 2.0]), np.array([1e308, -1e308, 1e308]))),
    (quotients, (np.array([1.0, 2.0, 0.0, 5.0]),)),
    (nested, (np.array([1.5, 2.0, 1e100]), 3)),
    (read_modify_write, (np.ones(4), np.array([1.0, 2.0, 3.0]), 1e308)),
    (read_modify_write, (np.ones(4), np.array([1.0, 2.0, 3.0]), 3.0)),
    (aliased, (np.array([1.0, 2.0]), 0, 0, 1e308)),
    (aliased, (np.array([1.0, 2.0]), 0, 1, 1e308)),
    (nested, (np.array([1.0, -1.0, 1.0 + 1e-12]), 3000)),
    (quotients, (np.array([np.inf, 2.0, np.inf]),)),
    (quotient_of_inf, (np.array([1.0, 1e300]), np.array([3.0, 1e-10]))),
    (adv_store_cast32, (np.zeros(3, np.float32), np.array([1.0, 1e300, 2.0]))),
    (adv_store_cast32, (np.zeros(3, np.float32), np.array([1.0, np.inf, -1e300]))),
    (adv_store_cast_int8, (np.zeros(3, np.uint8), np.array([1.0, -1.0, 2.0]))),
    (adv_float32_plus_float, (np.ones(5, np.float32), 1e300)),
    (adv_float32_plus_float, (np.ones(5, np.float32), 3e38)),
    (adv_diamond, (np.array([1.0, -1.0, 2.0]), np.array([1.0, 1e308, 3.0]))),
    (adv_diamond, (np.array([-1.0, 1e200, 2.0]), np.array([1.0, 1e200, 3.0]))),
    (adv_diamond, (np.array([np.nan, -1e308, 1e308]), np.array([1.0, 1e308, 1e308]))),
    (adv_inlined_callee, (np.array([1.0, 1e200, 1e300]),)),
    (adv_dot32_into64, (np.array([1.0, 1e20, 2.0], np.float32), np.array([1.0, 1e20, 3.0], np.float32))),
    (adv_dot32_into64, (np.full(3000, 2.0, np.float32), np.full(3000, 3e38, np.float32))),
    (adv_dot8_into64, (np.array([1, 100, 2], np.int8), np.array([1, 100, 3], np.int8), np.int64(0))),
    (adv_dot8_into64, (np.full(3000, 200, np.uint8), np.full(3000, 2, np.uint8), np.int64(5))),
    (adv_undo_then_warn, (np.ones(3), np.ones(3), 1e308)),
    (adv_undo_then_warn, (np.array([1.0, 1e200, 1.0]), np.ones(3), 1e200)),
    # d2 * d2 overflows (mag 0.0) in the second pair; a stored sum overflows in the last;
    # an inf or NaN already in vel (NumPy is silent); large finite values only (no warning)
    (adv_pair_updates, (np.array([0.0, 0.0, 1.0, 1.0, 1e160, 0.0]), np.zeros(6),
                        np.ones(3), 0.01)),
    (adv_pair_updates, (np.array([0.0, 0.0, 1.0, 1.0, 2.0, 0.0]),
                        np.array([1.0, 2.0, 3.0, 4.0, 1.7e308, 5.0]), np.ones(3), -1e308)),
    (adv_pair_updates, (np.array([0.0, 0.0, 1.0, 1.0, 2.0, 0.0]),
                        np.array([1.0, np.inf, 3.0, np.nan, 1.0, 5.0]), np.ones(3), 0.01)),
    (adv_pair_updates, (np.array([0.0, 0.0, 1.0, 1.0, 2.0, 0.0]), np.full(6, 1.5e308),
                        np.ones(3), 1e-300)),
    (adv_pair_updates, (np.array([0.0, 0.0, 1.0, 1.0, 2.0, 0.0], np.float32),
                        np.full(6, 3e38, np.float32), np.ones(3, np.float32), np.float32(2e38))),
    (weighted_int32, (np.array([5, -2, 9, 2**31 - 1], dtype=np.int32),)),
    (roots, (np.array([1.0, -1.0, 4.0, -2.0]),)),
    (roots, (np.abs(np.arange(-1500.0, 1500.0)) - 1.0,)),
    (logs, (np.array([1.0, 0.0, 2.0, 800.0]),)),
    (spread, (np.zeros(0),)),
    (f32_against_a_big_float, (np.array([-7.0, 3.0], np.float32), 1e300)),
    (f32_against_a_big_float, (np.array([-7.0, 3.0], np.float32), 2.0)),
    (untaken_cast, (np.complex128(1 + 2j), False)),
    (untaken_cast, (np.complex128(1 + 2j), True)),
    (quotient_array, (np.array([[-1.0, 2.0], [3.0, 4.0]]).T, 0)),
    (quotient_array, (np.array([[-1.0, 2.0], [3.0, 4.0]])[:, ::-1], 0.0)),
    (cast_complex, (np.array([1 + 2j, 3 - 1j], np.complex64),)),
    (union_mul, (np.array([1e308]), True)),
    (union_mul, (np.array([1e308]), False)),
    (union_sub, (np.array([np.inf]), True)),
    (union_mod, (np.array([np.inf]), True)),
    (union_mod, (np.array([5.5]), False)),
    (running_max, (np.array([3.0, 1e200, 2.0]),)),
    (running_max, (np.array([-1.0, -2.0]),)),
])
@pytest.mark.parametrize("tier", ["baseline", "opt"])
def test_warnings_match_cpython(fn, args, tier):
    import copy
    expected, ew = _record(fn, *copy.deepcopy(args))
    native = tierjit.jit(fn, tier=tier)
    got, gw = _record(native, *copy.deepcopy(args))
    assert gw == ew
    if isinstance(expected, np.ndarray):
        assert np.array_equal(got, expected, equal_nan=expected.dtype.kind == "f")
    else:
        assert type(got) is type(expected) and (got == expected or np.isnan(expected))


def _outcome(fn, *args):
    """The result or exception (its type, message and the frames of this file), and the
    warnings."""
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        try:
            r = fn(*args)
        except Exception as e:   # noqa: BLE001 - compared
            r = (type(e), str(e), [(t.name, t.lineno, t.line) for t in
                                   traceback.extract_tb(e.__traceback__) if t.filename == __file__])
    return r, [(w.category, str(w.message), w.filename, w.lineno) for w in ws]


@pytest.mark.parametrize("args", [
    (np.float32(3e38), np.float32(-3e38), np.float32(-1)),     # warns, then raises
    (np.int64(-2**63), np.int64(2**63 - 1), np.int64(1)),      # warns, returns
    (0.0, np.inf, 1.0),                                          # raises
    (np.int64(0), np.int64(5), 0),
    (np.int32(0), np.int32(7), np.int32(2)),
])
@pytest.mark.parametrize("tier", ["baseline", "opt"])
def test_an_operation_that_warns_then_raises_does_both_once(args, tier):
    """Native code makes np.arange in Python; its warning and exception are CPython's, once
    each (tier 0 does not make it again), with the traceback's frame at the line."""
    assert _outcome(tierjit.jit(span, tier=tier), *args) == _outcome(span, *args)


def test_a_result_native_code_cannot_take_is_not_made_again(monkeypatch):
    """Baseline code hands tier 0 a result of the wrong type (here: typed C-ordered, as
    before transposed arrays were typed any-layout) after the operation, which NumPy makes
    once: one warning; the deopt is counted."""
    from tierjit.types import rules
    monkeypatch.setattr(rules, "_any_layout", lambda t: t)
    rules._array_op_type.cache_clear()
    try:
        a = np.array([[-1.0, 2.0], [3.0, 4.0]], dtype=np.float32).T
        native = tierjit.jit(quotient_array, tier="baseline")
        got, gw = _record(native, a, 0)
        expected, ew = _record(quotient_array, a, 0)
        assert gw == ew and np.array_equal(got, expected) and got.flags.f_contiguous
        assert "baseline (1 deopts)" in tierjit.explain(native)
    finally:
        rules._array_op_type.cache_clear()


def overflow(x, y):
    return x * y                      # NumPy's scalar multiply warns on overflow


def _shown(fn, action: str) -> list:
    """The warnings shown for three overflowing calls of fn of two argument types, under a
    filter `action` for RuntimeWarning and one ignoring it in this module."""
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter(action)
        warnings.filterwarnings("ignore", category=RuntimeWarning, module="nowhere")
        for args in ((np.int16(300), np.int16(300)), (np.int32(2**30), np.int32(4)),
                     (np.int16(300), np.int16(300))):
            fn(*args)
        warnings.filterwarnings("ignore", category=RuntimeWarning, module=__name__)
        fn(np.int16(300), np.int16(300))
    return [(w.category, str(w.message), w.filename, w.lineno) for w in ws]


def test_a_warning_tier0_raises_names_the_module_its_globals_name():
    """A function whose globals have no `__name__` (its source run in a plain dict): its
    warnings' module is "<string>", in tier 0 as under CPython."""
    src = "def overflow(x, y):\n    return x * y\n"
    ns: dict = {}
    exec(compile(src, "<made>", "exec"), ns)         # noqa: S102 - such a function is the point
    import linecache
    linecache.cache["<made>"] = (len(src), None, src.splitlines(True), "<made>")

    def shown(fn):
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            warnings.filterwarnings("ignore", category=RuntimeWarning, module="<string>")
            fn(np.int16(300), np.int16(300))
        return [str(w.message) for w in ws]
    assert shown(tierjit.jit(ns["overflow"], tier="interp")) == shown(ns["overflow"]) == []


@pytest.mark.parametrize("action", ["default", "module", "always"])
@pytest.mark.parametrize("tier", ["interp", "baseline", "opt"])
def test_a_warning_tier0_raises_is_the_modules(tier, action):
    """Tier 0 warns as the function's module: a filter by module name matches, and the
    module's registry shows a "default" or "module" warning once for its line (not once
    per specialisation's tier 0)."""
    assert _shown(tierjit.jit(overflow, tier=tier), action) == _shown(overflow, action)
