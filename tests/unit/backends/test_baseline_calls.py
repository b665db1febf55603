"""Baseline code calling baseline code: a recursive call makes its callee's frame in place
(the call_self stencil) and must behave as the call through the prologue does — results,
big-int results handed back by a callee that deoptimised, exceptions, and the depth at
which calls stop nesting on the C stack."""

from __future__ import annotations

import sys

import pytest

pytest.importorskip("llvmlite")


def _pieces(jf) -> list:
    import tierjit
    return tierjit.runtime.dispatch.dispatcher_of(jf).latest().native.pieces


def _outcome(f, args):
    try:
        return f(*args)
    except Exception as e:          # noqa: BLE001 - compared with CPython's
        return type(e), str(e)


FIB = '''
def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)

def fact(n):
    if n <= 1:
        return 1
    return n * fact(n - 1)

def down(n, d):
    if n == 0:
        return 10 // d
    return down(n - 1, d) + n

def mixed(n, x):
    if n <= 0:
        return x * 0.5
    return mixed(n - 1, x + n) - mixed(n - 2, x)

def many(n, a, b, c, d):
    if n <= 0:
        return a + 2 * b + 3 * c + 4 * d + 5 + 6.5 + 7
    return many(n - 1, b, c, d, a + 1) * 0.5 + many(n - 3, d, c, b, a) + 11
'''


def _module(tmp_path, source: str, name: str):
    """The source as an importable module (jit needs the functions' source) with its
    functions jitted in the baseline tier, and a plain copy for CPython."""
    import importlib.util

    import tierjit
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    mods = []
    for _ in range(2):
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        mods.append(mod)
    jitted, plain = mods
    for k, v in list(vars(jitted).items()):
        if callable(v) and getattr(v, "__module__", None) == name:
            setattr(jitted, k, tierjit.jit(v, tier="baseline"))
    return jitted, plain


def test_recursive_calls_match_python_and_make_frames_in_place(tmp_path):
    jm, pm = _module(tmp_path, FIB, "rec_calls")
    cases = {"fib": [(0,), (1,), (2,), (15,), (-4,)],
             # 21! and beyond overflow: the callee deoptimises and hands its caller the int
             "fact": [(0,), (1,), (20,), (21,), (25,)],
             # the innermost call raises ZeroDivisionError through every recursive frame
             "down": [(5, 2), (5, 0), (0, 0), (30, -3)],
             "mixed": [(6, 1.5), (0, 2.0), (9, -0.25)],
             # more words than call_self_A_C copies in straight-line code: call_self's loops
             "many": [(0, 1, 2, 3, 4), (7, 1, -2, 3, 0), (9, 2**61, 2**61, 1, 1)]}
    for name, argsets in cases.items():
        jf, pf = getattr(jm, name), getattr(pm, name)
        for args in argsets:
            got, want = _outcome(jf, args), _outcome(pf, args)
            assert repr(got) == repr(want) and type(got) is type(want), (name, args)
        names = [n for n, _ in _pieces(jf)]
        assert any(n.startswith("call_self") for n in names), name
        assert "call_jit" not in names, name
    assert "call_self" in [n for n, _ in _pieces(jm.many)]
    assert "call_self_1_2" in [n for n, _ in _pieces(jm.fib)]


OWNING = '''
import numpy as np

def owning(n, big, d):
    a = np.zeros(2)
    a[0] = n
    if n <= 0:
        return (big + big) // d
    return owning(n - 1, big, d) + n
'''


def test_recursive_calls_release_their_callees_objects_and_keep_its_status(tmp_path):
    """A callee that made objects by calling Python (np.zeros: its frame's owner list) has
    them released after a recursive call, and its status — done, deoptimised (an int past
    64 bits, handed back to the caller), an exception — survives the release."""
    import gc

    jm, pm = _module(tmp_path, OWNING, "owning_calls")
    for args in [(0, 1, 1), (6, 5, 2), (6, 2**62, 1), (6, 5, 0), (3, -2**62, 3), (5, 7, -1)]:
        got, want = _outcome(jm.owning, args), _outcome(pm.owning, args)
        assert repr(got) == repr(want) and type(got) is type(want), args
    names = [n for n, _ in _pieces(jm.owning)]
    assert "pyop" in names and any(n.startswith("call_self") for n in names), names
    jm.owning(8, 5, 1)
    gc.collect()
    before = sys.getallocatedblocks()
    for _ in range(100):
        jm.owning(8, 5, 1)
    gc.collect()
    assert sys.getallocatedblocks() - before < 300     # 900 arrays made, none kept


DEEP = '''
def deep(n, x):
    if n == 0:
        return x
    a = x + 1.0
    b = a * 2.0
    c = b - a
    d = c * c
    e = d + b
    g = e - c
    h = g * 0.5
    k = h + a
    return deep(n - 1, k * 0.001) + a + b + c + d + e + g + h
'''


def test_recursion_past_the_native_stack_budget_finishes_in_tier_0(tmp_path):
    """Past NATIVE_STACK bytes of nested baseline frames a recursive call goes through the
    prologue (call_self's CORE), which deoptimises at entry: tier 0 finishes the call."""
    from tierjit.backends.nesting import NATIVE_STACK
    jm, pm = _module(tmp_path, DEEP, "rec_deep")
    assert jm.deep(3, 1.0) == pm.deep(3, 1.0)
    [frame] = {h["E"] for n, h in _pieces(jm.deep) if n.startswith("call_self")}
    depth = NATIVE_STACK // (frame + 256) + 200          # 200 calls in tier 0
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(depth + 500)
    try:
        assert jm.deep(depth, 0.5) == pm.deep(depth, 0.5)
        assert jm.deep(depth // 2, 0.5) == pm.deep(depth // 2, 0.5)
    finally:
        sys.setrecursionlimit(limit)
