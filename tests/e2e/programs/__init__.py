"""The differential corpus: every topic module's PROGRAMS, in one list."""

from . import (
    adversarial,
    arithmetic,
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
    loop_registers,
    math_funcs,
    ranges,
    tuples,
)

TOPICS = (arithmetic, int_overflow, division, compare_bool, control_flow, ranges, tuples, calls,
          math_funcs, builtins_, arrays, arrays_create, hot_loops, loop_registers, fallback,
          adversarial)

ALL_PROGRAMS = [p for topic in TOPICS for p in topic.PROGRAMS]

_names = [p.name for p in ALL_PROGRAMS]
assert len(_names) == len(set(_names)), "program names must be unique"
