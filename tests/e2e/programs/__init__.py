"""The differential corpus: every topic module's PROGRAMS, in one list."""

from . import (
    adversarial,
    arithmetic,
    array_arith,
    array_methods,
    arrays,
    arrays_create,
    builtins_,
    calls,
    compare_bool,
    control_flow,
    division,
    fallback,
    hot_loops,
    int_overflow,
    iterables,
    loop_registers,
    math_funcs,
    numpy_funcs,
    ranges,
    tuples,
)

TOPICS = (arithmetic, int_overflow, division, compare_bool, control_flow, ranges, iterables, tuples,
          calls, math_funcs, numpy_funcs, builtins_, arrays, array_methods, array_arith,
          arrays_create, hot_loops, loop_registers, fallback, adversarial)

ALL_PROGRAMS = [p for topic in TOPICS for p in topic.PROGRAMS]

_names = [p.name for p in ALL_PROGRAMS]
assert len(_names) == len(set(_names)), "program names must be unique"
