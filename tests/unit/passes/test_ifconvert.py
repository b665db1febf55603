"""If-conversion of conditional increments (baseline tier): which branches go, which stay,
and that baseline code computes what CPython does, overflow past 64 bits included."""

from __future__ import annotations

import numpy as np

import tierjit
from tierjit.ir.clone import clone
from tierjit.ir.ops import Op
from tierjit.ir.verifier import verify
from tierjit.passes.ifconvert import if_convert_increments
from tierjit.passes.pipeline import optimise
from tierjit.runtime.dispatch import dispatcher_of
from tierjit.types.lattice import BOOL, type_of_value


def counts(a, n):
    for i in range(a.shape[0]):
        if a[i] > 0.5:
            n += 1
        if a[i] < 0.25:
            n -= 1
    return n


def kept(a, n, s):
    for i in range(a.shape[0]):
        if a[i] > 0.5:
            n += 2                  # not 1
        if a[i] < 0.25:
            s += 1.0                # a float: s + 0.0 is not s for s = -0.0
        if a[i] > 0.9:
            n += 1
        else:
            n -= 1                  # both sides change n
    return n, s


def _converted(py, *args):
    d = dispatcher_of(tierjit.jit(py, tier="interp"))
    fn = optimise(clone(d.infer(tuple(type_of_value(a) for a in args)).fn))
    branches = sum(b.instrs[-1].op is Op.BRANCH for b in fn.blocks)
    fn = if_convert_increments(fn)
    verify(fn, typed=True)
    return branches, fn


def test_increments_lose_their_branches():
    branches, fn = _converted(counts, np.zeros(3), 0)
    assert branches - sum(b.instrs[-1].op is Op.BRANCH for b in fn.blocks) == 2
    adds = [ins for b in fn.blocks for ins in b.instrs
            if ins.op in (Op.ADD, Op.SUB) and ins.args[1].type == BOOL]
    assert [ins.op for ins in adds] == [Op.ADD, Op.SUB]
    assert all(ins.args[1].range == (0, 1) for ins in adds)


def test_other_branches_stay():
    branches, fn = _converted(kept, np.zeros(3), 0, 0.0)
    assert sum(b.instrs[-1].op is Op.BRANCH for b in fn.blocks) == branches


def test_baseline_code_counts_as_cpython():
    f = tierjit.jit(counts, tier="baseline")
    a = np.array([0.9, 0.1, 0.6, 0.3, 0.0])
    for n in (0, -5, 2**63 - 1, 2**63 - 2, -2**63):
        assert f(a, n) == counts(a, n), n
    assert dispatcher_of(f).specs[(type_of_value(a), type_of_value(0))].tier == "baseline"
