"""Type inference: forward propagation to a fixpoint, unions at merges, and recursion through
jitted callees solved by iterating the return type up from bottom."""

from __future__ import annotations

import numpy as np
import pytest

import tierjit
from tierjit.errors import Unsupported
from tierjit.frontend import lower
from tierjit.ir.verifier import verify
from tierjit.runtime.dispatch import dispatcher_of
from tierjit.types.infer import infer
from tierjit.types.lattice import (
    BOOL,
    FLOAT,
    INT,
    NONE,
    ArrayT,
    Scalar,
    TupleT,
    UnionT,
    type_of_value,
)

F64 = Scalar(np.float64)


def u(*ts):
    return UnionT(frozenset(ts))


def _infer(pyfunc, *arg_types):
    fn = lower(dispatcher_of(pyfunc).py_func if dispatcher_of(pyfunc) else pyfunc)
    typed = infer(fn, tuple(arg_types))
    verify(typed.fn, typed=True)
    return typed


def _param_types(typed, name):
    return {p.type for b in typed.fn.blocks[1:] for p in b.params if p.name == name}


def pick(c, a, b):
    if c:
        r = a
    else:
        r = b
    return r


def accumulate(a):
    s = 0
    for x in a:
        s += x
    return s


def mixed_loop(n):
    x = 0
    for i in range(n):
        if i % 2:
            x = x + 0.5
        else:
            x = i
    return x


def test_a_merge_of_two_types_is_a_union():
    typed = _infer(pick, BOOL, INT, FLOAT)
    assert typed.return_type == u(INT, FLOAT)
    assert _param_types(typed, "r") == {u(INT, FLOAT)}


def test_same_types_merge_to_the_type():
    assert _infer(pick, BOOL, INT, INT).return_type == INT


def test_loop_carried_type_grows_to_a_fixpoint():
    typed = _infer(accumulate, ArrayT("float64", 1, "C"))
    assert typed.return_type == u(INT, F64)
    assert _param_types(typed, "s") == {u(INT, F64)}
    typed = _infer(mixed_loop, INT)
    assert typed.return_type == u(INT, FLOAT)


def test_inference_types_a_copy_and_every_value():
    fn = lower(pick)
    typed = infer(fn, (BOOL, INT, FLOAT))
    assert typed.fn is not fn
    assert all(v.type is None for v in fn.values())
    assert all(v.type is not None for v in typed.fn.values())


def test_argument_count_mismatch():
    with pytest.raises(Unsupported, match="called with 2 arguments, takes 3"):
        infer(lower(pick), (INT, INT))


def adds_one(x):
    y = x + 1
    return y


def unpack_two(t):
    a, b = t  # noqa: RUF059
    return a


def test_an_op_python_rejects_names_its_line_and_instruction():
    with pytest.raises(Unsupported) as info:
        _infer(adds_one, NONE)
    e = info.value
    assert e.line == adds_one.__code__.co_firstlineno + 1
    assert "add on NoneType, int" in e.construct
    assert "add %0" in e.detail or "TypeError" in e.detail


def test_unpack_length_mismatch_names_its_line():
    with pytest.raises(Unsupported) as info:
        _infer(unpack_two, TupleT((INT, INT, INT)))
    assert info.value.construct == "unpacking (int, int, int) into 2 names"
    assert info.value.line == unpack_two.__code__.co_firstlineno + 1
    assert _infer(unpack_two, TupleT((FLOAT, INT))).return_type == FLOAT


def grow(n):
    t = ()
    for i in range(n):
        t = (t,)
    return t


def test_a_tuple_type_that_keeps_growing_is_unsupported():
    with pytest.raises(Unsupported, match="a tuple type that keeps growing") as info:
        _infer(grow, INT)
    assert info.value.line == grow.__code__.co_firstlineno + 3


# -- recursion --------------------------------------------------------------------------------
# Jitted with tierjit.jit(...) after the definition, so the recursive calls resolve to
# dispatchers (CALL_JIT) and the line numbers of the source stay the file's.

def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


def is_even(n):
    if n == 0:
        return True
    return is_odd(n - 1)


def is_odd(n):
    if n == 0:
        return False
    return is_even(n - 1)


def halves(n):
    if n <= 0:
        return 0
    return halves(n - 1) + 0.5


def no_base_case(n):
    return no_base_case(n - 1)


fib = tierjit.jit(fib)
is_even = tierjit.jit(is_even)
is_odd = tierjit.jit(is_odd)
halves = tierjit.jit(halves)
no_base_case = tierjit.jit(no_base_case)


def test_direct_recursion():
    typed = _infer(fib, INT)
    assert typed.return_type == INT
    assert typed.callees == {(dispatcher_of(fib), (INT,))}
    assert _infer(fib, FLOAT).return_type == FLOAT


def test_recursion_whose_return_type_is_a_union():
    assert _infer(halves, INT).return_type == u(INT, FLOAT)




def test_mutual_recursion_through_two_jitted_functions():
    typed = _infer(is_even, INT)
    assert typed.return_type == BOOL
    assert typed.callees == {(dispatcher_of(is_odd), (INT,))}
    assert _infer(is_odd, INT).return_type == BOOL


def test_mutually_recursive_functions_give_cpython_answers():
    assert is_even(7) is False and is_odd(7) is True


def test_mutual_recursion_through_the_dispatchers():
    assert dispatcher_of(is_odd).infer((INT,)).return_type == BOOL


def test_recursion_without_a_base_case_is_unsupported():
    with pytest.raises(Unsupported, match="could not be inferred"):
        _infer(no_base_case, INT)


def test_argument_types_of_real_values_seed_inference():
    a = np.arange(6.0).reshape(2, 3)[:, ::2]
    typed = _infer(accumulate, type_of_value(a[0]))
    assert typed.fn.entry.params[0].type == ArrayT("float64", 1, "A")
