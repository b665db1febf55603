"""The public API: tierjit.jit in both forms, tierjit.explain, f.inspect(stage), and the cost of
`import tierjit` (which must not pull in llvmlite or NumPy)."""

from __future__ import annotations

import functools
import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tierjit

ROOT = Path(__file__).resolve().parents[2]
IMPORT_BUDGET_US = 30_000


def marked_line(fn) -> int:
    lines, first = inspect.getsourcelines(fn)
    return next(first + k for k, text in enumerate(lines) if text.rstrip().endswith("# <-"))


# -- jit ---------------------------------------------------------------------------------------

@tierjit.jit
def bare(x):
    return x * 2 + 1


@tierjit.jit(tier="interp")
def with_options(x):
    return x * 2 + 1


def plain(x):
    return x - 1


def test_bare_decorator():
    assert bare(3) == 7 and bare(1.5) == 4.0
    assert bare.__name__ == "bare" and bare.__wrapped__.__name__ == "bare"
    text = tierjit.explain(bare)            # adaptive: two calls are not hot
    assert "tier=auto" in text and "cold: 2 calls" in text
    with tierjit.config.override(hot_calls=0, background=False):
        assert bare(3) == 7
    assert "bare(int): opt" in tierjit.explain(bare)


def test_decorator_with_options():
    assert with_options(3) == 7
    text = tierjit.explain(with_options)
    assert "tier=interp" in text and "with_options(int): interp" in text


def test_jit_called_directly_and_rewrapped():
    f = tierjit.jit(plain)
    g = tierjit.jit(tier="interp")(f)            # wraps the original Python function again
    assert f(5) == 4 and g(5) == 4
    assert g.__wrapped__ is plain
    assert "tier=interp" in tierjit.explain(g) and "tier=auto" in tierjit.explain(f)


@pytest.mark.parametrize("make", [
    lambda: tierjit.jit(plain, tier="fast"),
    lambda: tierjit.jit(tier="fast")(plain),
], ids=["direct", "decorator"])
def test_bad_tier_names_the_allowed_values(make):
    with pytest.raises(ValueError) as info:
        make()
    msg = str(info.value)
    for word in ("'fast'", "auto", "interp", "opt"):
        assert word in msg


class NotAFunction:
    def method(self, x):
        return x


@pytest.mark.parametrize("obj", [42, "f", len, NotAFunction, functools.partial(plain, 1),
                                 np.sin, NotAFunction().method],
                         ids=["int", "str", "builtin", "class", "partial", "ufunc", "method"])
@pytest.mark.parametrize("tier", ["auto", "opt"])
def test_jit_of_a_non_function_is_a_type_error(obj, tier):
    with pytest.raises(TypeError, match="expected a Python function"):
        tierjit.jit(obj, tier=tier)


# -- explain ------------------------------------------------------------------------------------

@pytest.mark.parametrize("obj", [plain, 42, None, len])
def test_explain_of_something_not_jitted_is_a_type_error(obj):
    with pytest.raises(TypeError, match="not a function made by tierjit.jit"):
        tierjit.explain(obj)


@tierjit.jit
def squares(n):
    total = 0
    vals = [i * i for i in range(n)]  # <-
    for v in vals:
        total += v
    return total


def test_explain_names_line_and_construct_of_an_unsupported_function():
    assert squares(4) == 14                     # runs, as plain CPython
    text = tierjit.explain(squares)
    assert f"line {marked_line(squares)}" in text
    assert "comprehension" in text and "plain CPython" in text


@tierjit.jit
def not_yet_called(x):
    return x


def test_explain_before_a_call():
    assert "first call" in tierjit.explain(not_yet_called)


def test_explain_of_a_specialisation_a_tier_rejects():
    f = tierjit.jit(plain)
    with tierjit.config.override(hot_calls=0, background=False), pytest.raises(TypeError):
        f((1, 2))                                # CPython's TypeError, not the compiler's
    text = tierjit.explain(f)
    assert "plain((int, int)): python" in text and "sub on (int, int), int" in text


# -- inspect ------------------------------------------------------------------------------------

@tierjit.jit
def poly(x):
    y = 0.0
    for k in range(3):
        y = y * x + k
    return y


@tierjit.jit(tier="interp")
def poly_interp(x):
    return x * x


def test_inspect_before_a_call():
    assert poly.inspect("ir").startswith("func poly(x)")
    for stage in ("typed", "opt", "py", "llvm", "asm"):
        with pytest.raises(ValueError, match="has not been called yet"):
            poly.inspect(stage)


def test_inspect_every_stage_after_a_call():
    with tierjit.config.override(hot_calls=0, background=False):   # compiled by this call
        assert poly(2.0) == 4.0
    text = {stage: poly.inspect(stage) for stage in ("ir", "typed", "opt", "py", "llvm", "asm")}
    assert all(t.strip() for t in text.values())
    assert "x: float" in text["typed"] and "x: float" in text["opt"]
    assert text["py"].startswith("def _tier0(")
    assert "define" in text["llvm"]
    assert poly.inspect() == text["ir"]


def test_inspect_bad_stage_names_the_stages():
    with pytest.raises(ValueError) as info:
        poly.inspect("bytecode")
    for word in ("'bytecode'", "ir", "typed", "opt", "py", "llvm", "asm"):
        assert word in str(info.value)


def test_inspect_native_stages_of_an_interp_function():
    assert poly_interp(3) == 9
    assert poly_interp.inspect("py").startswith("def _tier0(")
    with pytest.raises(ValueError, match="has no native code"):
        poly_interp.inspect("llvm")


def test_inspect_of_an_unsupported_function():
    squares(2)
    with pytest.raises(ValueError, match=f"line {marked_line(squares)}"):
        squares.inspect("ir")


# -- calls tierjit cannot type run as CPython -----------------------------------------------------

@tierjit.jit
def first(r):
    return 1


def test_a_structured_record_argument_runs_as_cpython():
    rec = np.zeros(2, dtype="i4,f8")[0]
    assert first(rec) == 1


# -- import cost --------------------------------------------------------------------------------

def _import_tierjit() -> tuple[int, int, str]:
    code = ("import tierjit, sys; "
            "print(','.join(m for m in ('numpy', 'llvmlite') if m in sys.modules))")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", code], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=60, check=True)
    m = re.search(r"import time:\s+(\d+) \|\s+(\d+) \| tierjit$", out.stderr, re.MULTILINE)
    assert m, out.stderr[-2000:]
    return int(m.group(1)), int(m.group(2)), out.stdout.strip()


def test_import_is_cheap_and_lazy():
    runs = [_import_tierjit() for _ in range(3)]
    assert all(heavy == "" for _, _, heavy in runs), f"import tierjit imported {runs[0][2]}"
    self_us = min(r[0] for r in runs)
    assert self_us < IMPORT_BUDGET_US, f"import tierjit: {self_us} us self time"


def test_a_function_getting_hot_imports_little_on_the_programs_thread():
    """The modules a call that makes a function hot imports on the program's thread (the
    dispatcher, the baseline job, the compiler thread, events) leave the compiler's own
    imports (dataclasses, inspect, ast, dis, re: ~20 ms in a program without NumPy) to the
    compiler thread."""
    code = ("import sys, tierjit; before = set(sys.modules); "
            "import tierjit.runtime.dispatch, tierjit.runtime.baseline, "
            "tierjit.runtime.compiler, tierjit.runtime.events; "
            "print(sorted(set(sys.modules) - before))")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=60, check=True)
    heavy = {"dataclasses", "inspect", "ast", "dis", "re", "numpy", "llvmlite"}
    assert not heavy & set(eval(out.stdout)), out.stdout


def _is_three(x, y):
    return x is y                            # typing fails here, in the callee


_jitted_is_three = tierjit.jit(_is_three, tier="opt")


def _calls_is_three(x):
    return _jitted_is_three(x, 3)            # explain names this line, and the callee's


def test_explain_names_the_call_line_and_the_callees_own():
    import inspect
    f = tierjit.jit(_calls_is_three, tier="opt")
    assert f(1) is False
    call = inspect.getsourcelines(_calls_is_three)[1] + 1
    inner = inspect.getsourcelines(_is_three)[1] + 1
    assert (f"line {call}: the call of jitted _is_three (its line {inner}): 'is' between"
            in tierjit.explain(f))


def _element(a, i):
    return a[i]


def test_explain_of_a_pinned_tier_has_no_specialisation_limit():
    """max_specialisations limits tier="auto" alone: a tier="opt" function compiles every
    signature, and explain must not say that further ones run as CPython."""
    f = tierjit.jit(_element, tier="opt")
    dtypes = ("float64", "float32", "int8", "int16", "int32", "int64", "uint8", "uint16",
              "uint32", "bool")
    for dt in dtypes:
        assert f(np.ones(3, dt), 1) == _element(np.ones(3, dt), 1)
    text = tierjit.explain(f)
    assert text.count(": opt") == len(dtypes) > tierjit.config.max_specialisations
    assert "max_specialisations" not in text
