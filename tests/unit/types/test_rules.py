"""Per-op type rules: scalar results come from trying the operator on sample values, so the
answers are CPython's and NumPy's promotions (NEP 50 under NumPy 2); the rest are by hand."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from tierjit.errors import Unsupported
from tierjit.ir.ops import Op
from tierjit.types.lattice import BOOL, COMPLEX, FLOAT, INT, NONE, ArrayT, Scalar, TupleT, UnionT
from tierjit.types.rules import result_type, samples

F32, F64, NPBOOL = Scalar(np.float32), Scalar(np.float64), Scalar(np.bool_)
I8, U8, I64 = Scalar(np.int8), Scalar(np.uint8), Scalar(np.int64)
A2 = ArrayT("float64", 2, "C")


def u(*ts):
    return UnionT(frozenset(ts))


@pytest.mark.parametrize(("op", "args", "want"), [
    (Op.ADD, [BOOL, BOOL], INT),
    (Op.TRUEDIV, [INT, INT], FLOAT),
    (Op.FLOORDIV, [INT, INT], INT),
    (Op.FLOORDIV, [FLOAT, INT], FLOAT),
    (Op.MOD, [INT, BOOL], INT),
    (Op.POW, [INT, INT], INT),              # the common case; a negative exponent deoptimises
    (Op.POW, [FLOAT, INT], FLOAT),
    (Op.MUL, [COMPLEX, INT], COMPLEX),
    (Op.ADD, [F32, FLOAT], F32),           # NEP 50: a Python float adapts to float32
    (Op.ADD, [FLOAT, F32], F32),
    (Op.ADD, [F32, F64], F64),
    (Op.ADD, [I8, INT], I8),
    (Op.ADD, [I8, U8], Scalar(np.int16)),
    (Op.TRUEDIV, [I64, I64], F64),
    (Op.ADD, [F64, FLOAT], F64),
    (Op.BITAND, [BOOL, BOOL], BOOL),
    (Op.LSHIFT, [INT, INT], INT),
    (Op.NEG, [BOOL], INT),
    (Op.INVERT, [BOOL], INT),
    (Op.NEG, [F32], F32),
    (Op.LT, [INT, INT], BOOL),
    (Op.EQ, [FLOAT, INT], BOOL),
    (Op.LT, [F64, FLOAT], NPBOOL),         # NumPy comparisons give numpy.bool_
    (Op.GE, [I8, INT], NPBOOL),
    (Op.EQ, [NPBOOL, BOOL], NPBOOL),
    (Op.NE, [NONE, NONE], BOOL),
    (Op.IS, [NONE, INT], BOOL),
    (Op.NOT, [F64], BOOL),
    (Op.TRUTH, [A2], BOOL),
])
def test_scalar_rules_by_trial(op, args, want):
    assert result_type(op, args, None) == want


def test_unions_are_typed_member_by_member():
    assert result_type(Op.ADD, [u(INT, FLOAT), INT], None) == u(INT, FLOAT)
    assert result_type(Op.ADD, [u(INT, BOOL), u(INT, BOOL)], None) == INT
    assert result_type(Op.LT, [u(INT, F64), INT], None) == u(BOOL, NPBOOL)


@pytest.mark.parametrize(("op", "args", "words"), [
    (Op.LSHIFT, [FLOAT, INT], ["lshift on float, int", "TypeError"]),
    (Op.ADD, [NONE, INT], ["add on NoneType, int", "TypeError"]),
    (Op.ADD, [A2, NONE], ["add on array(float64, 2d, C), NoneType", "TypeError"]),
    (Op.ADD, [TupleT((INT,)), TupleT((INT,))], ["add on (int,), (int,)"]),
    (Op.INVERT, [FLOAT], ["invert on float"]),
])
def test_operators_python_rejects_are_unsupported(op, args, words):
    with pytest.raises(Unsupported) as info:
        result_type(op, args, None)
    for w in words:
        assert w in str(info.value)


def test_tuple_ops():
    t = TupleT((INT, FLOAT))
    assert result_type(Op.MAKE_TUPLE, [INT, FLOAT], None) == t
    assert result_type(Op.TUPLE_GET, [t], (1, 2)) == FLOAT
    assert result_type(Op.GETITEM, [t, INT], 0) == INT
    assert result_type(Op.GETITEM, [t, INT], -1) == FLOAT
    assert result_type(Op.GETITEM, [t, INT], None) == u(INT, FLOAT)
    assert result_type(Op.LEN, [t], None) == INT


@pytest.mark.parametrize(("t", "count"), [
    (TupleT((INT, INT, INT)), 2), (TupleT((INT,)), 2), (INT, 2), (u(TupleT((INT, INT)), INT), 2),
])
def test_unpack_length_mismatch_is_unsupported(t, count):
    with pytest.raises(Unsupported, match=rf"unpacking {re.escape(str(t))} "
                                          rf"into {count} names"):
        result_type(Op.TUPLE_GET, [t], (0, count))


def test_tuple_index_out_of_range_is_unsupported():
    with pytest.raises(Unsupported, match="tuple index out of range"):
        result_type(Op.GETITEM, [TupleT((INT,)), INT], 3)


def test_range_ops_take_ints_and_bools_only():
    assert result_type(Op.RANGE_LEN, [INT, INT, BOOL], None) == INT
    assert result_type(Op.RANGE_ITEM, [INT, INT, INT], None) == INT
    with pytest.raises(Unsupported, match=r"range\(\) of float"):
        result_type(Op.RANGE_LEN, [INT, FLOAT, INT], None)
    with pytest.raises(Unsupported, match=r"range\(\) of np.int64"):
        result_type(Op.RANGE_LEN, [INT, I64, INT], None)


def test_array_ops():
    a1 = ArrayT("int32", 1, "A")
    assert result_type(Op.GETITEM, [A2, INT, I64], None) == F64
    assert result_type(Op.GETITEM, [a1, U8], None) == Scalar(np.int32)
    assert result_type(Op.GETATTR, [A2], "shape") == TupleT((INT, INT))
    assert result_type(Op.GETATTR, [A2], "size") == INT
    assert result_type(Op.GETATTR, [A2], "ndim") == INT
    assert result_type(Op.LEN, [A2], None) == INT
    assert result_type(Op.SETITEM, [A2, INT, INT, FLOAT], None) is None
    assert result_type(Op.GETATTR, [COMPLEX], "imag") == FLOAT
    assert result_type(Op.GETATTR, [Scalar(np.complex64)], "real") == F32


@pytest.mark.parametrize(("op", "args", "attr", "words"), [
    (Op.GETITEM, [A2, INT], None, "partial indexing of a 2-d array (a view)"),
    (Op.GETITEM, [A2, INT, FLOAT], None, "array index that is not an int"),
    (Op.GETITEM, [A2, INT, BOOL], None, "array index that is not an int"),
    (Op.GETITEM, [INT, INT], None, "indexing of int"),
    (Op.SETITEM, [A2, INT, FLOAT], None, "assignment to a partial index of a 2-d array"),
    (Op.SETITEM, [TupleT((INT,)), INT, INT], None, "item assignment to (int,)"),
    (Op.SETITEM, [A2, INT, INT, TupleT((INT,))], None, "storing (int,) into an array"),
    (Op.LEN, [INT], None, "len() or iteration of int"),
    (Op.GETATTR, [A2], "real", "attribute .real of array(float64, 2d, C)"),
])
def test_array_misuse_is_unsupported(op, args, attr, words):
    with pytest.raises(Unsupported, match=re.escape(words)):
        result_type(op, args, attr)


def test_builtins():
    assert result_type(Op.CALL_BUILTIN, [INT, FLOAT], "min") == u(INT, FLOAT)
    assert result_type(Op.CALL_BUILTIN, [INT, INT, INT], "max") == INT
    assert result_type(Op.CALL_BUILTIN, [BOOL], "abs") == INT
    assert result_type(Op.CALL_BUILTIN, [FLOAT], "abs") == FLOAT
    assert result_type(Op.CALL_BUILTIN, [FLOAT], "round") == INT
    assert result_type(Op.CALL_BUILTIN, [FLOAT, INT], "round") == FLOAT
    assert result_type(Op.CALL_BUILTIN, [INT, INT], "divmod") == TupleT((INT, INT))
    assert result_type(Op.CALL_BUILTIN, [], "float") == FLOAT
    assert result_type(Op.CALL_BUILTIN, [F64], "int") == INT
    assert result_type(Op.CALL_BUILTIN, [A2], "len") == INT
    with pytest.raises(Unsupported, match=r"min\(\) of a single iterable"):
        result_type(Op.CALL_BUILTIN, [A2], "min")


def test_math_functions():
    assert result_type(Op.CALL_MATH, [INT], "sqrt") == FLOAT
    assert result_type(Op.CALL_MATH, [FLOAT], "floor") == INT
    assert result_type(Op.CALL_MATH, [F32], "sin") == FLOAT
    assert result_type(Op.CALL_MATH, [FLOAT, FLOAT], "atan2") == FLOAT
    with pytest.raises(Unsupported, match="sqrt on complex"):
        result_type(Op.CALL_MATH, [COMPLEX], "sqrt")


def test_numpy_constructors():
    i32 = np.dtype(np.int32)
    assert result_type(Op.CALL_NUMPY, [INT], ("zeros", None)) == ArrayT("float64", 1, "C")
    assert result_type(Op.CALL_NUMPY, [TupleT((INT, I64))], ("empty", i32)) == \
        ArrayT("int32", 2, "C")
    assert result_type(Op.CALL_NUMPY, [INT], ("arange", None)) == ArrayT("int64", 1, "C")
    assert result_type(Op.CALL_NUMPY, [INT, FLOAT], ("arange", None)) == \
        ArrayT("float64", 1, "C")
    assert result_type(Op.CALL_NUMPY, [INT], ("arange", np.dtype(np.uint8))) == \
        ArrayT("uint8", 1, "C")
    for shape in (TupleT((INT,) * 4), FLOAT, TupleT(())):
        with pytest.raises(Unsupported, match=r"np.ones\(\) with shape"):
            result_type(Op.CALL_NUMPY, [shape], ("ones", None))


def test_const_types():
    assert result_type(Op.CONST, [], 2.5) == FLOAT
    assert result_type(Op.CONST, [], None) == NONE
    assert result_type(Op.CONST, [], math.inf) == FLOAT


@pytest.mark.parametrize("t", [INT, FLOAT, BOOL, COMPLEX, NONE, F32, F64, NPBOOL, I8, U8,
                               Scalar(np.complex64), Scalar(np.float16)])
def test_samples_are_values_of_the_type_and_never_zero(t):
    xs = samples(t)
    assert xs and all(type(x) is t.py for x in xs)
    assert all(x for x in xs if x is not None)


def test_arithmetic_on_arrays_is_numpys_by_trial():
    A1I = ArrayT("int64", 1, "C")
    assert result_type(Op.ADD, [A2, INT], None) == A2
    assert result_type(Op.LT, [A1I, FLOAT], None) == ArrayT("bool", 1, "C")
    assert result_type(Op.NEG, [A1I], None) == A1I
    assert result_type(Op.TRUEDIV, [A1I, A1I], None) == ArrayT("float64", 1, "C")
    # x += y on an array: in place, so the array's own type; NumPy refuses to cast back
    assert result_type(Op.ADD, [A1I, INT], "inplace") == A1I
    with pytest.raises(Unsupported):
        result_type(Op.ADD, [A1I, FLOAT], "inplace")

