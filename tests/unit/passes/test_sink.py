"""Sinking a recurrence's new float after the old one's last read (baseline tier): what moves,
what stays, and that the new value is then computed straight into its parameter's slot."""

from __future__ import annotations

import numpy as np

import tierjit
from tierjit.ir.clone import clone
from tierjit.ir.ops import Op
from tierjit.ir.verifier import verify
from tierjit.passes import pipeline
from tierjit.passes.cse import eliminate_common_subexpressions
from tierjit.passes.pipeline import optimise
from tierjit.passes.sink import sink_edge_floats
from tierjit.passes.thread import thread_jumps
from tierjit.runtime.dispatch import dispatcher_of
from tierjit.types.lattice import type_of_value


def escape(cr, ci, limit):
    zr = 0.0
    zi = 0.0
    n = 0
    while n < limit and zr * zr + zi * zi <= 4.0:
        t = zr * zr - zi * zi + cr
        zi = 2.0 * zr * zi + ci
        zr = t
        n += 1
    return n


def drift(x, v, n):
    for _ in range(n):
        y = x * 0.5 + 1.0
        v = v + x * 0.25
        x = y
    return x, v


def rotate(x, v, n):
    for _ in range(n):
        y = x * 0.5 + v             # a swap: moved after v's new value, it would keep v
        v = v - x * 0.25            # alive (a move either way)
        x = y
    return x, v


def stays(x, a, n):
    for i in range(n):
        y = x * 0.5 + a[i]          # np.float64: may warn, so it keeps its place
        z = x + 1.0
        w = z * 2.0                 # z read twice
        x = y + z + w
    return x


def _sunk(py, *args):
    d = dispatcher_of(tierjit.jit(py, tier="interp"))
    fn = optimise(clone(d.infer(tuple(type_of_value(a) for a in args)).fn))
    fn = eliminate_common_subexpressions(thread_jumps(fn))    # as the baseline pipeline
    before = {b.id: [ins.op for ins in b.instrs] for b in fn.blocks}
    fn = sink_edge_floats(fn)
    verify(fn, typed=True)
    return before, fn


def _block_with(fn, value_name):
    """The block that makes the value of the source variable `value_name` from + - *."""
    return next(b for b in fn.blocks for ins in b.instrs
                if ins.result is not None and ins.result.name == value_name
                and ins.op in (Op.ADD, Op.SUB, Op.MUL))


def test_the_new_value_moves_after_the_old_ones_last_read():
    _before, fn = _sunk(escape, 0.1, 0.2, 10)
    b = _block_with(fn, "t")
    names = [ins.result.name if ins.result is not None else ins.op for ins in b.instrs]
    # t (and the sub feeding it) after zi's computation, which still reads zr
    assert names.index("t") > names.index("zi")
    assert b.instrs[-1].op is Op.JUMP


def test_a_loop_body_moves_into_its_latch():
    before, fn = _sunk(drift, 1.0, 0.5, 3)
    latch = next(b for b in fn.blocks if b.instrs[-1].op is Op.JUMP
                 and any(p.name == "x" for p in b.instrs[-1].targets[0].block.params)
                 and b.instrs[-1].targets[0].args
                 and any(ins.op is Op.ADD and ins.result.name == "y" for ins in b.instrs))
    ops = [ins.op for ins in latch.instrs]
    assert ops[-3:] == [Op.MUL, Op.ADD, Op.JUMP]            # x * 0.5 + 1.0, then the jump
    assert len(ops) > len(before[latch.id])


def test_values_that_may_warn_are_read_twice_or_swap_stay():
    for py, args in ((stays, (1.0, np.zeros(3), 3)), (rotate, (1.0, 0.5, 3))):
        before, fn = _sunk(py, *args)
        assert {b.id: [ins.op for ins in b.instrs] for b in fn.blocks} == before, py


def _pieces(py, args, sink: bool):
    saved = pipeline.BASELINE_PIPELINE
    if not sink:
        pipeline.BASELINE_PIPELINE = tuple(p for p in saved if p is not sink_edge_floats)
    try:
        f = tierjit.jit(py, tier="baseline")
        result = f(*args)
        spec = next(iter(dispatcher_of(f).specs.values()))
        return result, [name for name, _holes in spec.native.pieces]
    finally:
        pipeline.BASELINE_PIPELINE = saved


def test_baseline_code_has_no_move_on_the_back_edge():
    for py, args in ((escape, (-0.75, 0.1, 200)), (drift, (1.0, 0.5, 20))):
        with_sink, pieces = _pieces(py, args, True)
        without, pieces0 = _pieces(py, args, False)
        assert with_sink == without == py(*args)
        moves = sum(n.startswith("mov") for n in pieces)
        assert moves < sum(n.startswith("mov") for n in pieces0), (pieces, pieces0)
