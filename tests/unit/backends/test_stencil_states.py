"""The baseline tier's frame states (backends/stencils/states.py): built lazily, at a deopt,
and so possibly on several threads at once."""

from __future__ import annotations

import threading

from tierjit.backends.stencils.states import States
from tierjit.ir.builder import Builder
from tierjit.ir.liveness import FrameStates
from tierjit.ir.nodes import Function
from tierjit.ir.ops import Op
from tierjit.ir.verifier import verify


def _square() -> Function:
    """b0(x): r = x * x; return r  (the e2e threads test's `sq`)."""
    fn = Function("sq", ["x"])
    b = Builder(fn)
    x = b.at(b.new_block(("x",))).block.params[0]
    b.ret(b.emit(Op.MUL, [x, x]))
    verify(fn)
    return fn


class _HoldingBits(dict):
    """A bit numbering that holds the first thread to look a value up (in the middle of
    computing a block's live sets) until `release` is set."""

    def __init__(self, bits: dict) -> None:
        super().__init__(bits)
        self.holding, self.release = threading.Event(), threading.Event()
        self.held: int | None = None

    def __getitem__(self, v):
        if self.held is None:
            self.held = threading.get_ident()
        if self.held == threading.get_ident() and not self.release.is_set():
            self.holding.set()
            assert self.release.wait(10)
        return super().__getitem__(v)


def test_a_frame_state_asked_for_on_two_threads_at_once_has_its_live_values():
    """Thread A builds the frame state before `x * x` and is switched out while it computes
    the block's live sets; thread B, deoptimising at the same guard, asks for that state then.
    Both must get x. (A list published before it was filled gave B no live values: the e2e
    threads test resumed `sq` in a tier-0 function taking none, with A's one value.)"""
    fn = _square()
    ref = FrameStates(fn)
    want = ref.states[ref.at(fn.entry, 0)].live
    assert len(want) == 1
    states = States(fn)
    n = states.at(fn.entry, 0)
    states._solve()                  # the live-out sets; held: the block's own pass
    bits = states.bit = _HoldingBits(states.bit)
    got = {}
    a = threading.Thread(target=lambda: got.setdefault("A", states.states[n]))
    a.start()
    try:
        assert bits.holding.wait(10)
        got["B"] = states.states[n]
    finally:
        bits.release.set()
        a.join(10)
    assert got["B"].live == want
    assert got["A"].live == want
    assert got["A"] is got["B"]      # one frame state: a resume function and its values agree
