"""The type lattice: join (least upper bound), unions, printing, and the types of run-time
values for every NumPy dtype and array layout."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tierjit.types.lattice import (
    BOOL,
    COMPLEX,
    FLOAT,
    INT,
    NONE,
    ArrayT,
    Scalar,
    TupleT,
    UnionT,
    depth,
    join,
    members,
    type_of_value,
)

F32 = Scalar(np.float32)
A1 = ArrayT("float64", 1, "C")
SAMPLE_TYPES = [None, INT, FLOAT, BOOL, NONE, F32, A1, ArrayT("float64", 1, "A"),
                ArrayT("int32", 2, "C"), TupleT((INT, FLOAT)), TupleT((BOOL, FLOAT)),
                TupleT((INT,)), UnionT(frozenset({INT, FLOAT}))]


def test_bottom_is_the_identity():
    for t in SAMPLE_TYPES:
        assert join(None, t) == t and join(t, None) == t


def test_join_of_equal_types_is_the_type():
    assert join(INT, INT) == INT
    assert join(TupleT((INT,)), TupleT((INT,))) == TupleT((INT,))


def test_scalars_of_different_types_make_a_union():
    u = join(INT, FLOAT)
    assert u == UnionT(frozenset({INT, FLOAT}))
    assert members(u) == {INT, FLOAT} and members(INT) == {INT}
    assert join(u, BOOL) == UnionT(frozenset({INT, FLOAT, BOOL}))
    assert join(u, UnionT(frozenset({F32, INT}))) == UnionT(frozenset({INT, FLOAT, F32}))
    assert join(u, INT) == u


def test_arrays_of_one_dtype_and_rank_join_to_any_layout():
    assert join(A1, ArrayT("float64", 1, "A")) == ArrayT("float64", 1, "A")
    assert join(A1, A1) == A1
    assert isinstance(join(A1, ArrayT("float32", 1, "C")), UnionT)
    assert isinstance(join(A1, ArrayT("float64", 2, "C")), UnionT)


def test_tuples_join_item_by_item_when_lengths_match():
    assert join(TupleT((INT, FLOAT)), TupleT((BOOL, FLOAT))) == \
        TupleT((UnionT(frozenset({INT, BOOL})), FLOAT))
    assert join(TupleT((INT,)), TupleT((INT, INT))) == \
        UnionT(frozenset({TupleT((INT,)), TupleT((INT, INT))}))


def test_join_is_commutative_and_idempotent():
    for a, b in itertools.product(SAMPLE_TYPES, SAMPLE_TYPES):
        assert join(a, b) == join(b, a), (a, b)
        assert join(a, a) == a


def test_join_is_associative_on_scalars_and_unions_of_scalars():
    ts = [None, INT, FLOAT, BOOL, NONE, F32, UnionT(frozenset({INT, FLOAT}))]
    for a, b, c in itertools.product(ts, ts, ts):
        assert join(join(a, b), c) == join(a, join(b, c)), (a, b, c)


@pytest.mark.parametrize(("a", "b"), [
    (A1, ArrayT("float64", 1, "A")),
    (TupleT((INT,)), TupleT((FLOAT,))),
], ids=["arrays", "tuples"])
def test_join_is_associative_through_a_union(a, b):
    assert join(join(INT, a), b) == join(INT, join(a, b))


def test_join_is_an_upper_bound():
    for a, b in itertools.product(SAMPLE_TYPES[1:], SAMPLE_TYPES[1:]):
        assert join(join(a, b), a) == join(a, b)


def test_depth_counts_tuple_nesting():
    assert depth(INT) == 0 and depth(A1) == 0
    assert depth(TupleT(())) == 1
    assert depth(TupleT((INT, TupleT((INT,))))) == 2
    assert depth(UnionT(frozenset({INT, TupleT((TupleT((INT,)),))}))) == 2


def test_printing():
    assert [str(t) for t in (INT, FLOAT, BOOL, COMPLEX, NONE, F32, Scalar(np.bool_))] == \
        ["int", "float", "bool", "complex", "NoneType", "np.float32", "np.bool"]
    assert str(TupleT((INT,))) == "(int,)"
    assert str(TupleT((INT, F32))) == "(int, np.float32)"
    assert str(TupleT(())) == "()"
    assert str(ArrayT("int8", 3, "A")) == "array(int8, 3d, A)"
    assert str(UnionT(frozenset({INT, FLOAT, F32}))) == "float | int | np.float32"


def test_types_compare_by_value_and_hash():
    assert Scalar(int) == INT and hash(Scalar(int)) == hash(INT)
    assert ArrayT("float64", 1) == ArrayT("float64", 1, "A")
    assert len({INT, Scalar(int), FLOAT}) == 2
    with pytest.raises(AttributeError):
        INT.py = float


def test_array_scalar_type():
    assert A1.scalar == Scalar(np.float64)
    assert ArrayT("bool", 1).scalar == Scalar(np.bool_)


# -- type_of_value ----------------------------------------------------------------------------

NUMERIC_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                  "uint64", "float16", "float32", "float64", "longdouble", "complex64",
                  "complex128", "clongdouble"]


def test_python_scalars():
    assert [type_of_value(x) for x in (1, 2.5, True, 1j, None)] == \
        [INT, FLOAT, BOOL, COMPLEX, NONE]
    assert type_of_value(2**100) == INT          # speculated to fit; guarded in native code


@pytest.mark.parametrize("dtype", NUMERIC_DTYPES)
def test_numpy_scalars_and_arrays_of_every_numeric_dtype(dtype):
    dt = np.dtype(dtype)
    assert type_of_value(dt.type(1)) == Scalar(dt.type)
    assert type_of_value(np.zeros(3, dt)) == ArrayT(dt.name, 1, "C")
    assert type_of_value(np.zeros((2, 3), dt)) == ArrayT(dt.name, 2, "C")
    assert type_of_value(np.zeros((2, 3, 4), dt)) == ArrayT(dt.name, 3, "C")


def test_numpy_scalars_are_not_python_scalars():
    assert type_of_value(np.float64(1.0)) == Scalar(np.float64) != FLOAT
    assert type_of_value(np.bool_(True)) == Scalar(np.bool_) != BOOL
    assert type_of_value(np.int64(1)) != INT


@pytest.mark.parametrize(("make", "layout"), [
    (lambda: np.zeros((3, 4)), "C"),
    (lambda: np.zeros(0), "C"),
    (lambda: np.zeros((3, 4), order="F"), "A"),
    (lambda: np.zeros((3, 1), order="F"), "C"),     # also C-contiguous
    (lambda: np.arange(10.0)[::2], "A"),
    (lambda: np.zeros((4, 4))[:, 1], "A"),
    (lambda: np.zeros((4, 4))[1], "C"),
    (lambda: np.zeros((4, 4)).T, "A"),
    (lambda: np.broadcast_to(np.zeros(1), (5,)), "A"),
], ids=["c", "empty", "fortran", "fortran-column", "strided", "column", "row", "transpose",
        "broadcast"])
def test_array_layouts(make, layout):
    a = make()
    assert type_of_value(a) == ArrayT("float64", a.ndim, layout)


@pytest.mark.parametrize("value", [
    np.zeros(()), np.zeros((1, 1, 1, 1)), np.zeros(3, object), np.zeros(3, ">f8"),
    np.zeros(3, "U3"), np.zeros(3, "S3"), np.zeros(3, "M8[s]"), np.zeros(3, "m8[s]"),
    np.zeros(3, "i4,f8"), np.ma.zeros(3), np.zeros(3).view(np.recarray),
    np.datetime64("2020-01-01"), np.timedelta64(1, "s"), np.str_("a"), np.bytes_(b"a"),
    "text", b"bytes", [1.0], {1: 2}, range(3), object(), (1, "x"), ((1, 2), [3]),
], ids=lambda v: type(v).__name__)
def test_values_no_native_type_describes(value):
    assert type_of_value(value) is None


def test_structured_scalar_has_no_type():
    rec = np.zeros(2, dtype="i4,f8")[0]
    assert type_of_value(rec) is None


def test_tuples():
    assert type_of_value((1, 2.5)) == TupleT((INT, FLOAT))
    assert type_of_value(()) == TupleT(())
    assert type_of_value((1, (np.float32(1), np.zeros(2)))) == \
        TupleT((INT, TupleT((F32, A1))))


def test_a_tuple_of_more_than_max_items_has_no_native_type():
    from tierjit.types.lattice import MAX_TUPLE_ITEMS
    assert type_of_value(tuple(range(MAX_TUPLE_ITEMS))) == TupleT((INT,) * MAX_TUPLE_ITEMS)
    assert type_of_value(tuple(range(MAX_TUPLE_ITEMS + 1))) is None
    assert type_of_value((1, tuple(range(300_000)))) is None


def test_types_are_interned_one_object_per_value():
    import copy
    import pickle
    from dataclasses import FrozenInstanceError
    assert Scalar(int) is INT and Scalar(np.float32) is F32
    assert ArrayT("float64", 1, "C") is A1 and ArrayT("float64", 2) is ArrayT("float64", 2, "A")
    assert TupleT([INT, FLOAT]) is TupleT((INT, FLOAT))
    assert UnionT({INT, FLOAT}) is UnionT(frozenset({FLOAT, INT})) is join(INT, FLOAT)
    assert type_of_value((1, np.zeros(3))) is TupleT((INT, A1))
    for t in SAMPLE_TYPES[1:]:
        assert copy.copy(t) is t and copy.deepcopy(t) is t and pickle.loads(pickle.dumps(t)) is t
        assert hash(t) == object.__hash__(t)             # by identity, in C
    assert Scalar(int) != Scalar(float) and INT != TupleT((INT,)) and INT != int
    with pytest.raises(FrozenInstanceError):
        INT.py = float
    assert repr(A1) == "ArrayT(dtype='float64', ndim=1, layout='C')"


def test_interning_from_threads_at_once_makes_one_object():
    import threading
    made, start = [], threading.Barrier(4)

    def make():
        start.wait()
        made.extend(TupleT((INT,) * k + (A1,)) for k in range(200, 400))

    threads = [threading.Thread(target=make) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(t) for t in made}) == 200


def test_a_tuple_nesting_deeper_than_max_depth_has_no_native_type():
    from tierjit.types.lattice import MAX_DEPTH
    t = (1,)
    for _ in range(MAX_DEPTH - 1):
        t = (t, 2.5)
    assert type_of_value(t) is not None
    assert type_of_value((t, 2.5)) is None
    for _ in range(2000):                   # no recursion through it either
        t = (t, 2.5)
    assert type_of_value(t) is None


@pytest.mark.parametrize("tier", ["auto", "interp", "baseline", "opt"])
def test_a_call_given_a_deeply_nested_tuple_runs(tier):
    import tierjit
    t = (1,)
    for _ in range(2000):
        t = (t, 2)
    f = tierjit.jit(lambda x: x[0], tier=tier)
    with tierjit.config.override(hot_calls=2, hot_seconds=None, background=False):
        for _ in range(5):
            assert f(t) is t[0]


def test_tuple_types_live_while_used():
    """Types are made for every call's arguments, and a program may pass tuples of ever new
    shapes: a tuple's type goes once nothing uses it (one object per value while it lives)."""
    import gc

    from tierjit.types import lattice
    shape = (INT,) * 60 + (FLOAT, BOOL)
    t = TupleT(shape)
    assert TupleT(list(shape)) is t
    r = lattice._TUPLES[shape]
    del t
    gc.collect()
    assert r() is None
    assert TupleT(shape).items == shape
    for k in range(5000):                   # ever new shapes: the table does not keep them
        TupleT(tuple(INT if k >> b & 1 else FLOAT for b in range(13)))
    assert len(lattice._TUPLES) < 3000
