"""The optimisation pipeline over typed IR, listed in one place.

Each pass takes a typed Function and returns one (mutating its argument is allowed: the
dispatcher hands it its own copy). With `VERIFY` true — set by the test suite — the IR
verifier runs after every pass.

Speculative passes also take `avoid`: the speculations that failed too often in an earlier
version of the same code (deoptimisation feedback, runtime.dispatch), which they leave out.
"""

from __future__ import annotations

import os

from ..ir.nodes import Function
from ..ir.verifier import verify
from .bounds import hoist_bounds_checks
from .cse import eliminate_common_subexpressions
from .dce import eliminate_dead_code
from .dims import speculate_small_dims
from .fold import fold_constants
from .ifconvert import if_convert_increments
from .inline_self import inline_self_calls
from .sink import sink_edge_floats
from .ranges import compute_ranges, speculate_loop_ranges
from .thread import thread_jumps

VERIFY = os.environ.get("TIERJIT_VERIFY", "") not in ("", "0")

PIPELINE = (
    fold_constants,        # evaluate ops over constants at compile time, exactly as Python
    eliminate_dead_code,   # drop instructions whose results are unused and cannot fail
    speculate_small_dims,  # array dimensions stay below 2**30 (one guard where read)
    compute_ranges,        # bounds of int values: guards native code can leave out
    speculate_loop_ranges,  # a loop variable stays in its loop's range (one guard at entry)
    hoist_bounds_checks,   # a counted loop's affine indices checked once, before the loop
)


SPECULATIVE = frozenset({speculate_small_dims, speculate_loop_ranges, hoist_bounds_checks})

# Then, for copy-and-patch only: baseline code keeps every value in memory and has no LLVM to
# merge what is computed twice, so a recomputation costs loads and stores of its own.
BASELINE_PIPELINE = (
    thread_jumps,                     # jump over short-circuit joins: the condition's values
                                      # are reused after them
    eliminate_common_subexpressions,  # a pure operation on Python numbers done once
    if_convert_increments,            # `if c: n += 1` on an int as `n = n + c`: no branch
                                      # for the CPU to mispredict
    sink_edge_floats,                 # a recurrence's new float made after the old one's
                                      # last read: straight into its slot, no move
    inline_self_calls,                # a small recursion's self-calls, two levels (a call
                                      # costs ~50 instructions); last, so that the copies
                                      # are of the optimised body
)


def optimise(fn: Function, avoid: frozenset = frozenset()) -> Function:
    if VERIFY:
        verify(fn, typed=True)
    for p in PIPELINE:
        fn = p(fn, avoid) if p in SPECULATIVE else p(fn)
        if VERIFY:
            verify(fn, typed=True)
    return fn


def optimise_for_baseline(fn: Function, me: tuple | None = None) -> Function:
    """BASELINE_PIPELINE over an optimised function (the baseline tier's own copy); `me`:
    (dispatcher, argument types) when the code is its dispatcher's own specialisation, whose
    self-calls may be inlined. Not over one block: it has no join to thread and no loop, so it
    runs once per call, where what merging a recomputation saves (a nanosecond or two) is far
    less than the passes cost (~8 us, a tenth of the whole copy-and-patch compile of a
    10-operation function); nor does such a function recurse."""
    if len(fn.blocks) == 1:
        return fn
    for p in BASELINE_PIPELINE:
        if p is inline_self_calls:
            if me is None:
                continue
            fn = p(fn, *me)
        else:
            fn = p(fn)
        if VERIFY:
            verify(fn, typed=True)
    return fn
