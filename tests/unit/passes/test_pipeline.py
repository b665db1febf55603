"""The optimisation pipeline under test settings: the verifier runs around every pass, and the
two passes (constant folding, dead-code elimination) keep the program's meaning."""

from __future__ import annotations

import pytest

from tierjit.frontend import lower
from tierjit.ir.ops import Op
from tierjit.ir.verifier import VerifyError
from tierjit.passes import pipeline
from tierjit.passes.pipeline import optimise
from tierjit.runtime import dispatch
from tierjit.types.infer import infer
from tierjit.types.lattice import FLOAT, INT


def test_session_runs_the_verifier_and_is_strict():
    """tests/conftest.py sets TIERJIT_VERIFY=1 and TIERJIT_STRICT=1 before tierjit loads."""
    assert pipeline.VERIFY is True
    assert dispatch.STRICT is True


def constants(x):
    a = 2 + 3
    b = 1 / 0 if x else 7 // 2
    c = 2 ** -1
    d = 2 ** 70
    unused = x * 2  # noqa: F841
    unused_div = x / 3  # noqa: F841
    return a + b + c + d


def _optimised(pyfunc, *types):
    return optimise(infer(lower(pyfunc), types).fn)


def _instrs(fn):
    return [ins for b in fn.blocks for ins in b.instrs]


def test_constant_folding_keeps_what_python_would_raise_or_change():
    fn = _optimised(constants, INT)
    consts = [i.attr for i in _instrs(fn) if i.op is Op.CONST]
    assert 5 in consts and 3 in consts                  # 2 + 3 and 7 // 2 folded
    ops = [i.op for i in _instrs(fn)]
    assert Op.TRUEDIV in ops                            # 1 / 0 raises: left for run time
    pows = [i for i in _instrs(fn) if i.op is Op.POW]
    assert len(pows) == 2                               # 2 ** -1 is a float; 2 ** 70 too big


def test_dead_code_elimination_keeps_ops_that_can_raise():
    fn = _optimised(constants, INT)
    ops = [(i.op, [a.name for a in i.args]) for i in _instrs(fn)]
    assert (Op.MUL, ["x", ""]) not in ops               # x * 2 on an int cannot fail
    assert any(op is Op.TRUEDIV and args[0] == "x" for op, args in ops)   # x / 3 may


def test_dead_code_elimination_keeps_numpy_scalar_arithmetic():
    import numpy as np

    from tierjit.types.lattice import Scalar
    fn = _optimised(constants, Scalar(np.float64))
    assert any(i.op is Op.MUL for i in _instrs(fn))     # may warn (overflow): kept


def test_the_verifier_runs_after_every_pass(monkeypatch):
    def breaks_the_ir(fn):
        fn.blocks[0].instrs.pop()                       # drop the entry's terminator
        return fn

    breaks_the_ir.__name__ = "breaks_the_ir"
    monkeypatch.setattr(pipeline, "PIPELINE", pipeline.PIPELINE + (breaks_the_ir,))
    with pytest.raises(VerifyError, match="terminator must be last"):
        _optimised(constants, INT)


def test_the_verifier_checks_the_pipeline_input(monkeypatch):
    fn = infer(lower(constants), (FLOAT,)).fn
    fn.entry.params[0].type = None
    with pytest.raises(VerifyError, match="%0 has no type"):
        optimise(fn)


def unused_mixed_add(x):
    y = x + 0.5  # noqa: F841
    return 1


def test_dead_code_elimination_keeps_int_float_arithmetic():
    fn = _optimised(unused_mixed_add, INT)
    assert any(i.op is Op.ADD for i in _instrs(fn))
