"""The IR verifier: broken IR built with the Builder, and the message naming each break.

One test per invariant of the verifier's header, then tests that several breaks are reported
at once (within each of the verifier's two phases: structure, then dominance and types).
"""

from __future__ import annotations

import pytest

from tierjit.ir.builder import Builder
from tierjit.ir.nodes import Block, Edge, Function, Instr
from tierjit.ir.ops import Op
from tierjit.ir.verifier import VerifyError, dominators, verify
from tierjit.types.lattice import BOOL, INT


def _fn(*args: str) -> tuple[Function, Builder, Block]:
    fn = Function("f", list(args))
    b = Builder(fn)
    entry = b.new_block(tuple(args))
    b.at(entry)
    return fn, b, entry


def _diamond():
    """b0(x, y): branch x < y to b1 / b2; both jump to b3(p); b3 returns p * x."""
    fn, b, entry = _fn("x", "y")
    x, y = entry.params
    then, other, join = b.new_block(), b.new_block(), b.new_block(("p",))
    c = b.emit(Op.LT, [x, y])
    b.branch(c, then, [], other, [])
    b.at(then)
    a = b.emit(Op.ADD, [x, x])
    b.jump(join, [a])
    b.at(other)
    b.jump(join, [y])
    b.at(join)
    r = b.emit(Op.MUL, [join.params[0], x])
    b.ret(r)
    return fn, (entry, then, other, join), (x, y, c, a, r)


def _errors(fn: Function, typed: bool = False) -> str:
    with pytest.raises(VerifyError) as info:
        verify(fn, typed=typed)
    return str(info.value)


def test_well_formed_ir_verifies():
    fn, _, _ = _diamond()
    verify(fn)


def test_no_blocks():
    assert "f: no blocks" in _errors(Function("f", []))


def test_entry_params_must_match_arguments():
    fn, b, _ = _fn()
    fn.arg_names.append("x")
    b.ret(b.const(None))
    assert "entry block has 0 params for 1 arguments" in _errors(fn)


def test_missing_terminator():
    fn, b, _ = _fn("x")
    b.const(1)
    msg = _errors(fn)
    assert "b0[0] %1 = const 1: terminator must be last, and only last" in msg


def test_empty_block():
    fn, b, entry = _fn()
    empty = b.new_block()
    b.at(entry).jump(empty)
    assert "b1 is empty" in _errors(fn)


def test_terminator_in_the_middle():
    fn, b, entry = _fn("x")
    b.ret(entry.params[0])
    entry.instrs.append(Instr(Op.CONST, [], fn.new_value(), 1))
    assert "b0[0] return %0: terminator must be last, and only last" in _errors(fn)


def test_edge_arity_mismatch():
    fn, (entry, then, other, _), _ = _diamond()
    then.terminator.targets[0].args.append(entry.params[0])
    other.terminator.targets[0].args.clear()
    msg = _errors(fn)
    assert "b1[1] jump b3(%4, %0): passes 2 args to b3 which has 1 params" in msg
    assert "b2[0] jump b3(): passes 0 args to b3 which has 1 params" in msg


def test_edge_to_a_block_of_another_function():
    fn, b, _ = _fn()
    stranger = Block(7, [], [Instr(Op.RETURN, [])])
    b.jump(stranger)
    assert "target b7 is not in this function" in _errors(fn)


def test_block_ids_follow_positions():
    fn, (_, then, _, _), _ = _diamond()
    then.id = 5
    assert "b5 is at position 1" in _errors(fn)


def test_op_arity():
    fn, b, entry = _fn("x")
    x = entry.params[0]
    b.emit(Op.ADD, [x])
    b.emit(Op.NEG, [x, x])
    b.block.instrs.append(Instr(Op.RETURN, [], None))
    msg = _errors(fn)
    assert "add takes 2 args and 0 targets, has 1 and 0" in msg
    assert "neg takes 1 args and 0 targets, has 2 and 0" in msg
    assert "return takes 1 args and 0 targets, has 0 and 0" in msg


def test_branch_needs_two_targets():
    fn, b, entry = _fn("x")
    other = b.new_block()
    entry.instrs.append(Instr(Op.BRANCH, [entry.params[0]], None, None, 0,
                              [Edge(other, [])]))
    b.at(other).ret(entry.params[0])
    assert "branch takes 1 args and 2 targets, has 1 and 1" in _errors(fn)


def test_result_presence_must_match_op():
    fn, b, entry = _fn("x")
    x = entry.params[0]
    entry.instrs.append(Instr(Op.ADD, [x, x], None))                    # no result
    entry.instrs.append(Instr(Op.SETITEM, [x, x, x], fn.new_value()))   # a result
    b.ret(x)
    msg = _errors(fn)
    assert "b0[0] add %0, %0: result presence does not match op" in msg
    assert "b0[1] %1 = setitem %0, %0, %0: result presence does not match op" in msg


def test_duplicate_definition():
    fn, b, entry = _fn("x")
    x = entry.params[0]
    v = b.emit(Op.NEG, [x])
    entry.instrs.append(Instr(Op.POS, [x], v))          # defines %1 a second time
    b.ret(v)
    assert "b0[1] %1 = pos %0: %1 defined twice" in _errors(fn)


def test_duplicate_parameter():
    fn, b, entry = _fn("x")
    x = entry.params[0]
    other = b.new_block()
    other.params.append(x)                               # %0 again, as b1's parameter
    b.jump(other, [x])
    b.at(other).ret(x)
    assert "%0 defined twice" in _errors(fn)


def test_use_before_definition_in_one_block():
    fn, b, entry = _fn("x")
    x = entry.params[0]
    later = fn.new_value()
    b.emit(Op.ADD, [x, later])
    entry.instrs.append(Instr(Op.NEG, [x], later))
    b.ret(later)
    assert "b0[0] %2 = add %0, %1: %1 does not dominate its use" in _errors(fn)


def test_non_dominating_use_across_blocks():
    fn, (_, _, _, join), (_, _, _, a, _) = _diamond()
    join.terminator.args[0] = a          # defined in b1 only, used in the join
    assert "b3[1] return %4: %4 does not dominate its use" in _errors(fn)


def test_use_of_an_undefined_value():
    fn, b, _ = _fn("x")
    ghost = fn.new_value()
    b.ret(ghost)
    assert "b0[0] return %1: uses undefined %1" in _errors(fn)


def test_unreachable_block():
    fn, b, entry = _fn("x")
    b.ret(entry.params[0])
    island = b.new_block()
    b.at(island).ret(entry.params[0])
    assert "b1 is unreachable from the entry" in _errors(fn)


def test_typed_ir_needs_a_type_on_every_value():
    fn, _, (_, _, c, a, r) = _diamond()
    verify(fn)                            # fine as untyped IR
    for v in fn.values():
        v.type = INT
    c.type = BOOL
    verify(fn, typed=True)
    p = fn.blocks[3].params[0]
    a.type = p.type = None
    msg = _errors(fn, typed=True)
    assert f"{a!r} has no type" in msg and f"{p!r} has no type" in msg
    assert f"{r!r} has no type" not in msg


def test_several_structural_errors_at_once():
    fn, b, entry = _fn("x")
    x = entry.params[0]
    b.new_block()                             # empty
    target = b.new_block(("p",))
    b.emit(Op.ADD, [x])                       # arity
    b.jump(target, [])                        # edge arity
    b.at(target).const(3)                     # no terminator
    lines = _errors(fn).split("\n")
    assert lines[0].startswith("f: ")
    for want in ("add takes 2 args", "passes 0 args to b2 which has 1 params",
                 "b1 is empty", "b2[0] %3 = const 3: terminator must be last"):
        assert sum(want in line for line in lines) == 1, (want, lines)


def test_several_dominance_and_type_errors_at_once():
    fn, b, entry = _fn("x")
    x = entry.params[0]
    ghost, later = fn.new_value(), fn.new_value()
    b.emit(Op.ADD, [x, ghost])
    b.emit(Op.ADD, [x, later])
    entry.instrs.append(Instr(Op.NEG, [x], later))
    b.ret(x)
    island = b.new_block()
    b.at(island).ret(x)
    msg = _errors(fn, typed=True)
    for want in ("uses undefined %1", "%2 does not dominate its use",
                 "b1 is unreachable from the entry", "%0 has no type", "%3 has no type"):
        assert want in msg, (want, msg)


def test_dominators_of_a_diamond():
    fn, (entry, then, _, join), _ = _diamond()
    dom = dominators(fn)
    assert dom[join] == {entry, join}
    assert dom[then] == {entry, then}
    assert dom[entry] == {entry}


def _reachable_without(fn: Function, removed: Block | None) -> set[Block]:
    seen, todo = set(), [fn.entry]
    while todo:
        b = todo.pop()
        if b is removed or b in seen:
            continue
        seen.add(b)
        todo.extend(b.successors)
    return seen


@pytest.mark.parametrize("seed", range(40))
def test_dominators_match_their_definition_on_random_graphs(seed):
    """d dominates b exactly when b cannot be reached once d is taken away; random graphs
    with loops, irreducible parts and unreachable blocks."""
    import random
    rng = random.Random(seed)
    fn, b, entry = _fn("x")
    x = entry.params[0]
    blocks = [entry] + [b.new_block() for _ in range(rng.randint(1, 24))]
    for blk in blocks:
        b.at(blk)
        shape = rng.random()
        if shape < 0.15:
            b.ret(x)
        elif shape < 0.45:
            b.jump(rng.choice(blocks))
        else:
            b.branch(x, rng.choice(blocks), [], rng.choice(blocks), [])
    dom = dominators(fn)
    reachable = _reachable_without(fn, None)
    assert set(dom) == reachable
    for blk in reachable:
        want = {d for d in reachable if d is blk or blk not in _reachable_without(fn, d)}
        assert dom[blk] == want, blk.id
