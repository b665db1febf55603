"""Differential tests on Hypothesis-generated programs: CPython against every tier.

Each example is a freshly written program (see gen_programs.py) called on three argument
tuples in a row, so later calls also meet code specialised for the earlier ones. Examples are
derandomized: every CI run checks the same 550 programs.
"""

from hypothesis import HealthCheck, given, settings

from .gen_programs import FLOAT, INT, programs
from .harness import TIERS, run_sequence

SETTINGS = {
    "deadline": None,
    "derandomize": True,  # the same programs on every run: CI is reproducible
    "database": None,
    "print_blob": False,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large,
                              HealthCheck.large_base_example],
}


def check(prog) -> None:
    run_sequence(prog.source, prog.cases, TIERS, entry="f", name="generated")


@settings(max_examples=150, **SETTINGS)
@given(programs(loops=False))
def test_straight_line(prog):
    """Arithmetic, comparisons, conversions, math calls and branches over int/float/bool."""
    check(prog)


@settings(max_examples=120, **SETTINGS)
@given(programs(loops=True, budget=12))
def test_loops(prog):
    """The same with while/for loops, break/continue and loop-else: accumulations past 64 bits."""
    check(prog)


@settings(max_examples=130, **SETTINGS)
@given(programs(arrays=True, loops=True, budget=12))
def test_arrays(prog):
    """The same over a 1-D array argument of some dtype and layout, indices possibly out of
    bounds, with writes that must survive a later failure."""
    check(prog)


@settings(max_examples=50, **SETTINGS)
@given(programs(typed=INT, loops=True, budget=12))
def test_typed_int(prog):
    """Monomorphic int programs, which native tiers compile: overflow past 64 bits must deopt."""
    check(prog)


@settings(max_examples=50, **SETTINGS)
@given(programs(typed=FLOAT, loops=True, budget=12))
def test_typed_float(prog):
    """Monomorphic float programs: NaN, infinities, signed zeros and math errors, natively."""
    check(prog)


@settings(max_examples=50, **SETTINGS)
@given(programs(typed=INT, arrays=True, loops=True, budget=12))
def test_typed_int_array(prog):
    """Monomorphic int programs over an int64 array, with bounds checks and writes."""
    check(prog)
