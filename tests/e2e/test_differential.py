"""Differential tests: every corpus program, every argument case, every tier, against CPython."""

import pytest

from .harness import DEFAULT, TIERS, run_sequence
from .programs import ALL_PROGRAMS

CASES = [pytest.param(p, i, id=f"{p.name}-{i}") for p in ALL_PROGRAMS for i in range(len(p.cases))]


@pytest.mark.parametrize("tier", TIERS)
@pytest.mark.parametrize(("prog", "index"), CASES)
def test_case(prog, index, tier):
    """One argument case, on a fresh build of the program."""
    run_sequence(prog.source, [prog.cases[index]], [tier], prog.entry, prog.name)


@pytest.mark.parametrize("tier", TIERS)
@pytest.mark.parametrize("prog", ALL_PROGRAMS, ids=[p.name for p in ALL_PROGRAMS])
def test_sequence(prog, tier):
    """Every case through one build, twice over: later calls meet code specialised (and maybe
    deoptimised) for the argument types and values of earlier ones."""
    run_sequence(prog.source, prog.cases, [tier], prog.entry, prog.name, repeat=2)


@pytest.mark.parametrize("prog", ALL_PROGRAMS, ids=[p.name for p in ALL_PROGRAMS])
def test_default_tier_warming_up(prog):
    """Plain ``@tierjit.jit``: every case, three times over, so the program gets warm and may
    change tiers (or compile in the background) between calls -- all of which must be exact."""
    run_sequence(prog.source, prog.cases, [DEFAULT], prog.entry, prog.name, repeat=3)
