"""Golden text-IR tests (xDSL / Bril style): each case's untyped IR, typed IR and tier-0 source,
compared line by line with the expected text in tests/ir/golden/<case>.txt.

The cases are small Python functions in tests/ir/cases/*.py; each module's `GOLDEN` dict names
its cases, the argument values whose types seed inference, and whether the tier-0 source is part
of the golden output. To accept new output run with `TIERJIT_UPDATE_GOLDEN=1` (or
`pytest --update-golden`) and review the diff of tests/ir/golden/ by eye before committing:
every block parameter must merge the values the source merges, and every use must be dominated
by its definition.
"""

from __future__ import annotations

import copy
import difflib
import importlib.util
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from tierjit.backends.pyemit.emit import emit
from tierjit.frontend import lower
from tierjit.ir.printer import format_function
from tierjit.ir.verifier import verify
from tierjit.passes.pipeline import optimise
from tierjit.runtime.dispatch import dispatcher_of
from tierjit.types.infer import infer
from tierjit.types.lattice import type_of_value

HERE = Path(__file__).parent
CASES_DIR = HERE / "cases"
GOLDEN_DIR = HERE / "golden"


def _load(path: Path):
    name = f"_tierjit_golden_cases_{path.stem}"
    mod = sys.modules.get(name)
    if mod is None:
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return mod


def _cases() -> list[tuple[str, object, dict]]:
    out = []
    for path in sorted(CASES_DIR.glob("*.py")):
        mod = _load(path)
        for name, case in mod.GOLDEN.items():
            out.append((f"{path.stem}.{name}", getattr(mod, name), case))
    names = [n.split(".")[1] for n, _, _ in out]
    assert len(names) == len(set(names)), "golden case names must be unique"
    return out


CASES = _cases()


def _render(qualname: str, func, case: dict) -> str:
    """Every stage of one case as one text, each stage verified before it is printed."""
    py = dispatcher_of(func).py_func if dispatcher_of(func) is not None else func
    arg_types = tuple(type_of_value(a) for a in case["args"])
    fn = lower(py)
    verify(fn)
    parts = [f";; {qualname}: regenerate with TIERJIT_UPDATE_GOLDEN=1 and review by eye",
             ";; ---- ir", format_function(fn)]
    typed = infer(fn, arg_types)
    verify(typed.fn, typed=True)
    parts += [f";; ---- typed ({', '.join(map(str, arg_types))}) -> {typed.return_type}",
              format_function(typed.fn)]
    if case.get("tier0"):
        src, _ = emit(optimise(typed.fn))
        parts += [";; ---- tier0 (after optimise)", src]
    return "\n".join(parts)


def _golden_path(qualname: str) -> Path:
    return GOLDEN_DIR / f"{qualname.split('.')[1]}.txt"


@pytest.mark.parametrize(("qualname", "func", "case"), CASES, ids=[c[0] for c in CASES])
def test_golden(qualname, func, case):
    actual = _render(qualname, func, case)
    path = _golden_path(qualname)
    if os.environ.get("TIERJIT_UPDATE_GOLDEN", "") not in ("", "0"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(actual)
        return
    assert path.exists(), f"{path} is missing: run with TIERJIT_UPDATE_GOLDEN=1 and review it"
    expected = path.read_text()
    if actual != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True),
                                            str(path), "actual"))
        pytest.fail(f"golden output of {qualname} changed:\n{diff}", pytrace=False)


@pytest.mark.parametrize(("qualname", "func", "case"),
                         [c for c in CASES if c[2].get("tier0")],
                         ids=[c[0] for c in CASES if c[2].get("tier0")])
def test_tier0_source_runs_like_cpython(qualname, func, case):
    """The golden tier-0 source is executable and agrees with CPython on the case's args."""
    from tierjit.backends.pyemit.emit import compile_tier0
    py = dispatcher_of(func).py_func if dispatcher_of(func) is not None else func
    fn = optimise(infer(lower(py), tuple(type_of_value(a) for a in case["args"])).fn)
    t0 = compile_tier0(fn)
    want_args, got_args = copy.deepcopy(case["args"]), copy.deepcopy(case["args"])
    want, got = py(*want_args), t0(*got_args)
    assert type(got) is type(want) and got == want
    for w, g in zip(want_args, got_args):
        if isinstance(w, np.ndarray):
            np.testing.assert_array_equal(g, w)


def test_no_stale_golden_files():
    expected = {_golden_path(q).name for q, _, _ in CASES}
    stale = {p.name for p in GOLDEN_DIR.glob("*.txt")} - expected
    assert not stale, f"golden files without a case: {sorted(stale)}"
