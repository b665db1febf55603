"""Lowering Python functions to untyped SSA IR: what the frontend produces for the subset.

The golden tests in tests/ir pin the whole text of typical functions; these tests pin single
properties: the ops a construct becomes, the order of operands, the names and lines carried,
and the SSA shape (block parameters only where values merge).
"""

from __future__ import annotations

import ast
import inspect
import linecache
import math
import textwrap
from math import sqrt

import numpy as np

import tierjit
from tierjit.frontend import function_ast, lower
from tierjit.ir.nodes import Function
from tierjit.ir.ops import Op
from tierjit.ir.verifier import predecessors, verify
from tierjit.runtime.dispatch import dispatcher_of

LIMIT = 7


def _ops(fn: Function) -> list:
    return [ins for b in fn.blocks for ins in b.instrs]


def _first(fn: Function, op: Op):
    return next(ins for ins in _ops(fn) if ins.op is op)


def documented(x):
    """A docstring is not code."""
    return x


def implicit_none(x):
    y = x + 1  # noqa: F841


def dead_after_return(x):
    return x
    y = x + 1  # never lowered
    return y


def test_function_header():
    fn = lower(documented)
    assert fn.name == "documented" and fn.arg_names == ["x"]
    assert fn.first_line == documented.__code__.co_firstlineno
    assert fn.filename == __file__
    assert [p.name for p in fn.entry.params] == ["x"]


def test_docstring_and_pass_produce_nothing():
    fn = lower(documented)
    assert [(i.op, i.args) for i in _ops(fn)] == [(Op.RETURN, [fn.entry.params[0]])]


def test_falling_off_the_end_returns_none_on_the_last_line():
    fn = lower(implicit_none)
    *_, const, ret = _ops(fn)
    assert const.op is Op.CONST and const.attr is None
    assert ret.op is Op.RETURN and ret.args == [const.result]
    assert ret.line == implicit_none.__code__.co_firstlineno + 1


def test_code_after_return_is_not_lowered():
    fn = lower(dead_after_return)
    assert len(fn.blocks) == 1
    assert [i.op for i in _ops(fn)] == [Op.RETURN]


def test_lower_takes_a_given_tree():
    tree = ast.parse(textwrap.dedent(inspect.getsource(documented))).body[0]
    tree.body = [ast.Return(ast.Constant(5, lineno=2, col_offset=11), lineno=2,
                            col_offset=4)]
    fn = lower(documented, tree)
    assert [(i.op, i.attr) for i in _ops(fn)] == [(Op.CONST, 5), (Op.RETURN, None)]


def test_function_ast_lines_are_file_lines():
    tree = function_ast(range_three)
    assert tree.lineno == range_three.__code__.co_firstlineno
    assert tree.body[1].lineno == tree.lineno + 2


def range_three(a, b, c):
    s = 0
    for i in range(a, b, c):
        s += i
    return s


def range_one(n):
    s = 0
    for i in range(n):
        s += i
    return s


def over_array(a):
    s = 0.0
    for x in a:
        s += x
    return s


def test_range_with_three_arguments():
    fn = lower(range_three)
    a, b, c = fn.entry.params
    rlen, item = _first(fn, Op.RANGE_LEN), _first(fn, Op.RANGE_ITEM)
    assert rlen.args == [a, b, c]
    assert item.args[:3] == [a, b, c]           # start, stop, step, then the counter
    header = next(blk for blk in fn.blocks if item.args[3] in blk.params)
    assert header.params[0].name.startswith(".k")
    assert {p.name for p in header.params[1:]} == {"s"}


def test_range_with_one_argument_starts_at_zero_with_step_one():
    fn = lower(range_one)
    rlen = _first(fn, Op.RANGE_LEN)
    start, stop, step = rlen.args
    consts = {i.result: i.attr for i in _ops(fn) if i.op is Op.CONST}
    assert (consts[start], stop, consts[step]) == (0, fn.entry.params[0], 1)


def test_for_over_an_array_counts_with_len_and_getitem():
    fn = lower(over_array)
    a = fn.entry.params[0]
    assert _first(fn, Op.LEN).args == [a]
    item = _first(fn, Op.GETITEM)
    assert item.args[0] is a and item.result.name == "x"
    # the counter stays below len(a), of the array the loop started with: no bounds check
    assert item.inbounds == {0}
    assert not any(i.op in (Op.RANGE_LEN, Op.RANGE_ITEM) for i in _ops(fn))


def enumerate_zip(a, b, n):
    s = 0.0
    for i, (x, y, k) in enumerate(zip(a, b, range(n)), 1):
        s += i * x * y * k
    return s


def zip_not_unpacked(a, b):
    p = None
    for p in zip(a, b):
        pass
    return p


def test_enumerate_and_zip_are_not_made_their_items_are_their_arguments_items():
    fn = lower(enumerate_zip)
    a, b, n = fn.entry.params
    lens = [i for i in _ops(fn) if i.op in (Op.LEN, Op.RANGE_LEN)]
    # in CPython's order: range(n) is made as zip's arguments are evaluated, then zip makes
    # the iterators of a and b
    assert [i.args[0] if i.op is Op.LEN else i.args[1] for i in lens] == [n, a, b]
    # zip runs as long as its shortest argument
    least = _first(fn, Op.CALL_BUILTIN)
    assert least.attr == "min" and least.args == [i.result for i in lens[1:] + lens[:1]]
    header = next(blk for blk in fn.blocks if blk.terminator.op is Op.BRANCH)
    assert header.instrs[0].op is Op.LT and header.instrs[0].args[1] is least.result
    gets = [i for i in _ops(fn) if i.op is Op.GETITEM]
    assert [(g.args[0], g.result.name, g.inbounds) for g in gets] == \
        [(a, "x", {0}), (b, "y", {0})]
    assert _first(fn, Op.RANGE_ITEM).result.name == "k"
    # enumerate's count: its start plus the loop's counter
    count = next(i for i in _ops(fn) if i.op is Op.ADD and i.result.name == "i")
    consts = {i.result: i.attr for i in _ops(fn) if i.op is Op.CONST}
    assert consts[count.args[0]] == 1 and count.args[1].name.startswith(".k")
    # unpacked into as many names: no tuple is made
    assert not any(i.op in (Op.MAKE_TUPLE, Op.TUPLE_GET) for i in _ops(fn))


def test_a_zip_item_not_unpacked_is_a_tuple():
    fn = lower(zip_not_unpacked)
    a, b = fn.entry.params
    tup = _first(fn, Op.MAKE_TUPLE)
    assert [_ops(fn)[[i.result for i in _ops(fn)].index(x)].args[0] for x in tup.args] == [a, b]
    assert tup.result.name == "p"


def methods(a, k):
    out = a.copy()
    out.fill(k)
    return a.sum(k) + out.max()


def test_array_methods_are_calls_of_their_receiver_and_arguments():
    fn = lower(methods)
    a, k = fn.entry.params
    calls = [(i.attr, i.args) for i in _ops(fn) if i.op is Op.CALL_METHOD]
    out = calls[0] and _first(fn, Op.CALL_METHOD).result
    assert calls == [("copy", [a]), ("fill", [out, k]), ("sum", [a, k]), ("max", [out])]


def float_constants():
    return float("inf"), float(" -1e3 "), float("nan")


def test_float_of_a_string_literal_is_a_constant():
    fn = lower(float_constants)
    values = [i.attr for i in _ops(fn) if i.op is Op.CONST]
    assert values[:2] == [math.inf, -1000.0] and math.isnan(values[2])
    assert not any(i.op is Op.CALL_BUILTIN for i in _ops(fn))


def calls(a, n, x):
    r = abs(x) + math.sqrt(x) + sqrt(x) + math.pi + LIMIT
    z = np.zeros((n, 2), dtype=np.int32)
    return r, z, a.shape, len(a)


def test_calls_and_constants_resolve_at_compile_time():
    fn = lower(calls)
    got = [(i.op, i.attr) for i in _ops(fn) if i.op in (
        Op.CALL_BUILTIN, Op.CALL_MATH, Op.CALL_NUMPY, Op.GETATTR)]
    assert got == [(Op.CALL_BUILTIN, "abs"), (Op.CALL_MATH, "sqrt"), (Op.CALL_MATH, "sqrt"),
                   (Op.CALL_NUMPY, ("zeros", np.dtype(np.int32))), (Op.GETATTR, "shape"),
                   (Op.CALL_BUILTIN, "len")]
    consts = [i.attr for i in _ops(fn) if i.op is Op.CONST]
    assert math.pi in consts and LIMIT in consts


def closure_constant():
    k = 3

    def use(x):
        return x * k

    return use


def test_closure_cell_constants_are_constants():
    use = closure_constant()
    fn = lower(use)
    assert any(i.op is Op.CONST and i.attr == 3 for i in _ops(fn))


@tierjit.jit
def callee(x):
    return x + 1


def caller(x):
    return callee(x) * 2


def test_call_of_a_jitted_function():
    ins = _first(lower(caller), Op.CALL_JIT)
    assert ins.attr is dispatcher_of(callee)


def constant_tuple_index(t, i):
    return t[1] + t[i]


def test_constant_subscript_is_kept_in_attr():
    first, second = [i for i in _ops(lower(constant_tuple_index)) if i.op is Op.GETITEM]
    assert first.attr == 1 and second.attr is None


def chained_targets(x):
    a = b = x + 1
    a += 1
    return a * b


def test_chained_assignment_shares_one_value():
    fn = lower(chained_targets)
    add1, add2, mul = [i for i in _ops(fn) if i.op in (Op.ADD, Op.MUL)]
    assert add1.result.name == "a"
    assert mul.args == [add2.result, add1.result]


def item_assignments(a, i, v):
    a[i] = v
    a[i, 0] += v


def test_item_assignment_and_augmented_item_assignment():
    fn = lower(item_assignments)
    a, i, v = fn.entry.params
    set1, set2 = [x for x in _ops(fn) if x.op is Op.SETITEM]
    assert set1.args == [a, i, v]
    get = _first(fn, Op.GETITEM)
    assert get.args[:2] == [a, i] and len(get.args) == 3
    add = _first(fn, Op.ADD)
    assert add.args == [get.result, v]
    assert set2.args == [a, i, get.args[2], add.result]      # the index evaluated once


def loops_and_branches(n, m):
    s = 0
    i = 0
    while i < n:
        j = 0
        while j < m:
            if (i + j) % 2:
                s += 1
            elif j > i:
                break
            else:
                j += 2
                continue
            j += 1
        i += 1
    return s


def test_ssa_shape_of_nested_loops():
    fn = lower(loops_and_branches)
    verify(fn)
    assert [b.id for b in fn.blocks] == list(range(len(fn.blocks)))
    preds = predecessors(fn)
    assert all(preds[b] for b in fn.blocks[1:])               # no block is unreachable
    # no trivial block parameter: each merges at least two different values
    incoming = {b: [e for p in fn.blocks for e in p.terminator.targets if e.block is b]
                for b in fn.blocks}
    for b in fn.blocks[1:]:
        for k, p in enumerate(b.params):
            assert len({e.args[k] for e in incoming[b]} - {p}) >= 2, (b, p)
    params = sorted(p.name for b in fn.blocks[1:] for p in b.params)
    assert set(params) == {"i", "j", "s"}


def test_every_instruction_carries_a_line_of_the_function():
    fn = lower(loops_and_branches)
    lines, first = inspect.getsourcelines(loops_and_branches)
    assert {i.line for i in _ops(fn)} <= set(range(first + 1, first + len(lines)))


def test_module_getattr_is_not_run_by_the_compiler():
    """An attribute a module's __getattr__ (PEP 562) computes is computed when the line runs:
    lowering must not ask for it (a warning, an import, a value later reads would not give),
    nor ask the module for a dispatcher; the function stays CPython's."""
    import types

    import tierjit
    asked = []
    lazy = types.ModuleType("lazy_cfg")
    lazy.__getattr__ = lambda name: asked.append(name) or 7
    ns = {"lazy_cfg": lazy}
    source = ("def f(x, legacy):\n"
              "    if legacy:\n"
              "        return x * lazy_cfg.OLD_SCALE\n"
              "    return x * 2\n")
    linecache.cache["<lazy getattr test>"] = (len(source), None, source.splitlines(True),
                                              "<lazy getattr test>")
    exec(compile(source, "<lazy getattr test>", "exec"), ns)    # noqa: S102
    f = tierjit.jit(ns["f"], tier="opt")
    assert f(3, False) == 6 and asked == []
    assert "line 3: attribute '.OLD_SCALE'" in tierjit.explain(f)
    assert f(3, True) == 21 and asked == ["OLD_SCALE"]
