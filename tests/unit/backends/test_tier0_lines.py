"""Tier 0's code names the user's lines (backends/pyemit/lines.py): the location table of the
compiled generated source is written anew, line by line, without columns."""

from __future__ import annotations

import traceback

import numpy as np
import pytest

import tierjit
from tierjit.backends.pyemit.lines import relined

SOURCE = """\
def g(a, b):
    x = a + 1
    y = [i * b
         for i in range(x)]
    if x > 3:
        return sum(y) // b
    return (lambda t: t - 1)(x)
"""


def _compiled(mapping: list[int]):
    ns: dict = {}
    exec(compile(SOURCE, "<gen>", "exec"), ns)
    return ns["g"], relined(ns["g"].__code__, mapping)


def _code_lines(code) -> list:
    """Every instruction's line, this code object's and its nested ones'."""
    out = [p[0] for p in code.co_positions()]
    for c in code.co_consts:
        if hasattr(c, "co_positions"):
            out += _code_lines(c)
    return out


# far apart and out of order: negative deltas, and deltas that take several varint chunks
MAPPINGS = [[10, 11, 12, 12, 13, 14, 15], [900, 5, 70000, 70001, 3, 2**20, 1]]


@pytest.mark.parametrize("mapping", MAPPINGS)
def test_every_instruction_takes_its_lines_mapped_line(mapping):
    fn, code = _compiled(mapping)
    before, after = _code_lines(fn.__code__), _code_lines(code)
    assert len(before) == len(after)
    assert after == [None if line is None else mapping[line - 1] for line in before]
    assert code.co_firstlineno == mapping[0]
    assert all(p[2] is None and p[3] is None for p in code.co_positions())   # no columns


@pytest.mark.parametrize("mapping", MAPPINGS)
def test_a_traceback_names_the_mapped_line(mapping):
    fn, code = _compiled(mapping)
    fn.__code__ = code
    with pytest.raises(ZeroDivisionError) as info:
        fn(5, 0)
    # `sum(y) // b`, generated line 6 (pytest counts lines from 0)
    assert info.traceback[-1].lineno + 1 == mapping[6 - 1]
    assert f"line {mapping[6 - 1]}, in g" in "".join(traceback.format_exception(info.value))


def tier0_divides(a, b):
    s = 0
    for i in range(a):
        s += i
    return s // b


def test_tier0_tracebacks_name_the_users_line():
    f = tierjit.jit(tier="interp")(tier0_divides)
    with pytest.raises(ZeroDivisionError) as info:
        f(4, 0)
    line = tier0_divides.__code__.co_firstlineno + 4
    assert traceback.extract_tb(info.value.__traceback__)[-1].lineno == line
    assert f(4, np.int64(2)) == 3
