"""Liveness and frame states: hand-built IR with known answers, and lowered functions.

A frame state must name every value tier 0 needs to resume before an instruction and nothing
that is dead there; the strongest check is to resume the generated tier-0 code at a frame state
and get the answer the whole call gets.
"""

from __future__ import annotations

from tierjit.backends.pyemit.emit import compile_tier0
from tierjit.frontend import lower
from tierjit.ir.builder import Builder
from tierjit.ir.liveness import FrameStates, live_out
from tierjit.ir.nodes import FrameState, Function
from tierjit.ir.ops import Op
from tierjit.ir.verifier import dominators, verify
from tierjit.types.infer import infer
from tierjit.types.lattice import INT


def _diamond():
    """b0(x, y): branch x < y, b1, b2.  b1: a = x + x -> b3(a).  b2: -> b3(y).
    b3(p): r = p * x; return r."""
    fn = Function("diamond", ["x", "y"])
    b = Builder(fn)
    entry = b.at(b.new_block(("x", "y"))).block
    x, y = entry.params
    then, other, join = b.new_block(), b.new_block(), b.new_block(("p",))
    c = b.emit(Op.LT, [x, y])
    b.branch(c, then, [], other, [])
    a = b.at(then).emit(Op.ADD, [x, x])
    b.jump(join, [a])
    b.at(other).jump(join, [y])
    r = b.at(join).emit(Op.MUL, [join.params[0], x])
    b.ret(r)
    verify(fn)
    return fn, {"x": x, "y": y, "c": c, "a": a, "p": join.params[0], "r": r}


def _counting_loop():
    """b0(n): z = 0 -> b1(z, z).  b1(i, s): i < n ? b2 : b3.
    b2: s2 = s + i; i2 = i + 1 -> b1(i2, s2).  b3: return s."""
    fn = Function("loop", ["n"])
    b = Builder(fn)
    entry = b.at(b.new_block(("n",))).block
    n = entry.params[0]
    head, body, done = b.new_block(("i", "s")), b.new_block(), b.new_block()
    z = b.const(0)
    b.jump(head, [z, z])
    i, s = head.params
    c = b.at(head).emit(Op.LT, [i, n])
    b.branch(c, body, [], done, [])
    s2 = b.at(body).emit(Op.ADD, [s, i])
    one = b.const(1)
    i2 = b.emit(Op.ADD, [i, one])
    b.jump(head, [i2, s2])
    b.at(done).ret(s)
    verify(fn)
    return fn, {"n": n, "z": z, "i": i, "s": s, "c": c, "s2": s2, "one": one, "i2": i2}


def test_live_out_of_a_diamond():
    fn, v = _diamond()
    out = live_out(fn)
    b0, b1, b2, b3 = fn.blocks
    assert out[b0] == {v["x"], v["y"]}
    assert out[b1] == {v["a"], v["x"]}          # the edge argument, and x for the join
    assert out[b2] == {v["y"], v["x"]}
    assert out[b3] == set()


def test_live_out_around_a_loop_back_edge():
    fn, v = _counting_loop()
    out = live_out(fn)
    b0, head, body, done = fn.blocks
    assert out[b0] == {v["z"], v["n"]}
    assert out[head] == {v["i"], v["s"], v["n"]}
    assert out[body] == {v["i2"], v["s2"], v["n"]}   # n stays live around the loop
    assert out[done] == set()


def test_frame_states_hold_exactly_the_live_values():
    fn, v = _diamond()
    fs = FrameStates(fn)
    b0, b1, b2, b3 = fn.blocks
    cases = [((b0, 0), {"x", "y"}), ((b0, 1), {"x", "y", "c"}), ((b1, 0), {"x"}),
             ((b1, 1), {"x", "a"}), ((b2, 0), {"x", "y"}), ((b3, 0), {"p", "x"}),
             ((b3, 1), {"r"})]
    names = {val: k for k, val in v.items()}
    for (block, index), want in cases:
        state = fs.states[fs.at(block, index)]
        assert state == FrameState(block.id, index, state.live)
        assert {names[x] for x in state.live} == want, (block, index)
        assert [x.id for x in state.live] == sorted(x.id for x in state.live)


def test_frame_states_are_numbered_once_in_the_order_asked():
    fn, _ = _counting_loop()
    fs = FrameStates(fn)
    _, head, body, _ = fn.blocks
    assert fs.at(body, 1) == 0
    assert fs.at(head, 0) == 1
    assert fs.at(body, 1) == 0
    assert [(s.block, s.index) for s in fs.states] == [(body.id, 1), (head.id, 0)]


def test_loop_frame_states():
    fn, v = _counting_loop()
    fs = FrameStates(fn)
    b0, head, body, done = fn.blocks
    names = {val: k for k, val in v.items()}

    def live(block, index):
        return {names[x] for x in fs.states[fs.at(block, index)].live}

    assert live(b0, 0) == {"n"}
    assert live(head, 0) == {"i", "s", "n"}
    assert live(body, 0) == {"i", "s", "n"}
    assert live(body, 2) == {"i", "s2", "n", "one"}
    assert live(body, 3) == {"i2", "s2", "n"}
    assert live(done, 0) == {"s"}


# -- lowered functions ----------------------------------------------------------------------

def weighted_sum(n, w):
    s = 0
    for i in range(1, n, 2):
        if i % 3 == 0:
            continue
        s += i * w
    return s


def test_frame_states_of_a_lowered_function_are_available_where_they_are_taken():
    """Every live value is defined at a point that dominates the frame state."""
    fn = infer(lower(weighted_sum), (INT, INT)).fn
    fs = FrameStates(fn)
    dom = dominators(fn)
    site = {}
    for b in fn.blocks:
        for p in b.params:
            site[p] = (b, -1)
        for j, ins in enumerate(b.instrs):
            if ins.result is not None:
                site[ins.result] = (b, j)
    for b in fn.blocks:
        for j in range(len(b.instrs)):
            for v in fs.states[fs.at(b, j)].live:
                db, dj = site[v]
                assert (dj < j) if db is b else db in dom[b], (b, j, v)
    assert len(fs.states) == sum(len(b.instrs) for b in fn.blocks)


def test_resuming_tier0_at_the_loop_header_finishes_the_call():
    """Stop the loop after some iterations by hand, resume at the header, same answer."""
    fn = infer(lower(weighted_sum), (INT, INT)).fn
    header = next(b for b in fn.blocks if any(p.name.startswith(".k") for p in b.params))
    fs = FrameStates(fn)
    state = fs.states[fs.at(header, 0)]
    n, w, k_done = 20, 3, 4                        # after 4 iterations: i = 1, 3, 5, 7
    s_done = sum(i * w for i in (1, 3, 5, 7) if i % 3)
    rng = next(ins for b in fn.blocks for ins in b.instrs if ins.op is Op.RANGE_LEN)
    known = {"n": n, "w": w, "s": s_done}
    values = []
    for v in state.live:
        if v.name in known:
            values.append(known[v.name])
        elif v.name.startswith(".k"):
            values.append(k_done)
        elif v is rng.result:
            values.append(len(range(1, n, 2)))
        else:                                    # a constant the loop body still uses
            ins = next(i for b in fn.blocks for i in b.instrs if i.result is v)
            assert ins.op is Op.CONST, ins
            values.append(ins.attr)
    resume = compile_tier0(fn, state)
    assert resume(*values) == weighted_sum(n, w)
