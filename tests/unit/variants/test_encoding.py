"""The array encoding: building, checking (errors name what is wrong), slicing, printing."""

from __future__ import annotations

import numpy as np
import pytest

from tierjit.variants import Op, Programs, random_programs


def forum_program() -> Programs:
    # v2 = 0.37; v3 = -1.25; v4 = v1 + v2; v5 = v4 * v3 (registers v1..v5 = 0..4)
    code = [[Op.CONST, 1, 0, 0], [Op.CONST, 2, 0, 0], [Op.ADD, 3, 0, 1], [Op.MUL, 4, 3, 2]]
    return Programs.from_arrays(code, [0.37, -1.25, 0, 0], n_inputs=1, n_regs=5, output=4)


def test_from_arrays_defaults_and_dtypes():
    p = forum_program()
    assert len(p) == 1 and p.n_regs == 5 and p.output.tolist() == [4]
    assert p.code.dtype == np.int32 and p.values.dtype == np.float64
    assert p.starts.tolist() == [0, 4]
    q = Programs.from_arrays(np.zeros((3, 2, 4), np.int64))
    assert len(q) == 3 and q.starts.tolist() == [0, 2, 4, 6] and q.n_regs == 1


def test_to_source_is_the_program():
    src = forum_program().to_source(0)
    ns: dict = {}
    exec(src, ns)  # noqa: S102
    assert ns["program"](2.0) == (2.0 + 0.37) * -1.25
    assert "v4 = v1 + v2" in src and src.rstrip().endswith("return v5")


@pytest.mark.parametrize("code, starts, kw, message", [
    ([[9, 0, 0, 0]], None, {"n_regs": 2}, "unknown opcode"),
    ([[Op.ADD, 0, 0, 7]], None, {"n_regs": 2}, "register outside 0..1"),
    ([[Op.ADD, 0, 0, 0]], [0, 2], {}, "must rise from 0"),
    ([[Op.ADD, 0, 0, 0]], None, {"n_regs": 1, "output": 3}, "output register 3"),
    ([[Op.ADD, 0, 0, 0]], None, {"n_regs": 1, "n_inputs": 2}, "n_inputs must be"),
    ([[Op.ADD, 0, 0, 0]], [0, 1], {"output": [0, 0, 0]},
     r"output must be one register or one per program \(1\); got shape \(3,\)"),
])
def test_check_names_the_problem(code, starts, kw, message):
    with pytest.raises(ValueError, match=message):
        Programs.from_arrays(code, None, starts, **kw)


def test_check_names_instruction_and_program():
    code = [[Op.ADD, 0, 0, 0], [Op.ADD, 0, 0, 0], [Op.DIV, 5, 0, 0]]
    with pytest.raises(ValueError, match=r"instruction 2 \(program 1\)"):
        Programs.from_arrays(code, None, [0, 1, 3], n_regs=2)


def test_check_wants_contiguous_arrays():
    """The evaluator reads the arrays through their data pointers: a strided view of values
    made it read other numbers than the population's."""
    p = forum_program()
    strided = Programs(p.code, np.zeros(8)[::2], p.starts, p.output, 1, 5)
    with pytest.raises(TypeError, match="values must be a C-contiguous float64 array"):
        strided.check()


@pytest.mark.parametrize("code, kw, message", [
    ([[Op.ADD, 2**32 + 1, 0, 0]], {}, r"dst = 4294967297, a register outside 0\.\.1"),
    ([[2**32 + Op.MUL, 1, 0, 0]], {}, r"op = 4294967299, an unknown opcode \(0\.\.6\)"),
    ([[Op.NEG, 1, -2**32, 0]], {}, r"a = -4294967296, a register outside 0\.\.1"),
    ([[Op.NEG, 1, 0, 0]], {"output": 2**32 + 1}, "output register 4294967297, outside 0..1"),
])
def test_out_of_range_values_are_rejected_before_the_cast_to_int32(code, kw, message):
    """from_arrays cast to int32 first and checked after, and the cast wraps: register
    2**32 + 1 became register 1, and the program evaluated as another one."""
    with pytest.raises(ValueError, match=message):
        Programs.from_arrays(np.array(code, np.int64), n_regs=2, **kw)


def test_counts_must_be_ints():
    with pytest.raises(TypeError, match="n_inputs must be an int; got 1.5"):
        Programs.from_arrays([[Op.ADD, 0, 0, 0]], n_inputs=1.5)
    with pytest.raises(TypeError, match="starts must be integers; got float64"):
        Programs.from_arrays([[Op.ADD, 0, 0, 0]], starts=[0.0, 1.7])


def test_float_code_is_rejected():
    with pytest.raises(TypeError, match="integers"):
        Programs.from_arrays([[1.5, 0, 0, 0]])


def test_take_and_concat_round_trip():
    p = random_programs(10, 4, n_consts=2, seed=1)
    parts = [p.take(0, 3), p.take(3, 7), p.take(7, 10)]
    q = Programs.concat(parts)
    for a, b in ((p.code, q.code), (p.values, q.values), (p.starts, q.starts),
                 (p.output, q.output)):
        assert np.array_equal(a, b)
    assert parts[1].starts[0] == 0 and len(parts[1]) == 4


@pytest.mark.parametrize("kw, message", [
    ({"ops": ()}, r"ops must be one or more opcodes \(Op, 0\.\.6\); got \(\)"),
    ({"ops": (Op.ADD, 9)}, r"ops must be one or more opcodes"),
    ({"n_regs": 0}, "n_regs must be an int 1..4096; got 0"),     # was "high <= 0"
    ({"n_consts": -1}, "n_consts must be an int >= 0; got -1"),
    # blamed "instruction 0 ... dst = 2" of code the caller did not write
    ({"n_regs": 2, "n_inputs": 2, "n_consts": 2},
     r"n_inputs must be an int 0..n_regs \(2\), less than n_regs to leave registers for "
     r"n_consts; got 2"),
    ({"n_regs": 2, "n_inputs": 3}, r"n_inputs must be an int 0..n_regs \(2\); got 3"),
])
def test_random_programs_names_bad_arguments(kw, message):
    with pytest.raises(ValueError, match=message):
        random_programs(2, 3, **kw)


def test_from_arrays_names_a_bad_n_regs():
    with pytest.raises(ValueError, match=r"Programs: n_regs must be an int 1..4096; got 0"):
        Programs.from_arrays(np.zeros((1, 4), np.int64), n_regs=0)   # "outside 0..-1"


def test_random_programs_shape():
    p = random_programs(1000, 10, n_regs=5, seed=0)
    assert len(p) == 1000 and len(p.code) == 10_000
    assert set(np.unique(p.code[:, 0])) <= {Op.ADD, Op.SUB, Op.MUL, Op.DIV}
    assert p.code[:, 1:].max() < 5
