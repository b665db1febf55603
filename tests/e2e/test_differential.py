"""Differential tests: every corpus program, every argument case, every tier, against CPython.

``test_first_calls`` gives each group of cases of one argument signature (types, dtypes, ranks,
whether ints fit 64 bits) a fresh build, so the first call is specialised on that signature and
the rest of the group runs the code built for it. ``test_sequence`` runs all cases through one
build, so code specialised for earlier signatures meets later ones. ``test_default_tier_warming_up``
does the same through plain ``@tierjit.jit``, repeated until the program is warm.
"""

import numpy as np
import pytest

from .harness import DEFAULT, TIERS, Call, run_sequence
from .programs import ALL_PROGRAMS


def signature(value) -> object:
    """What a tier specialises on: types, dtypes, layouts, and whether an int fits 64 bits."""
    if callable(value) and not isinstance(value, type):
        return signature(value())
    if isinstance(value, Call):
        return ("call", signature(value.args), tuple(sorted(value.kwargs)))
    if isinstance(value, np.ndarray):
        return ("array", value.dtype.str, value.ndim, value.flags.c_contiguous)
    if isinstance(value, tuple | list):
        return (type(value).__name__, *map(signature, value))
    if type(value) is int:
        return ("int", -(2**63) <= value < 2**63)
    return type(value).__name__


def signature_groups(prog) -> list[list[int]]:
    groups: dict[object, list[int]] = {}
    for i, case in enumerate(prog.cases):
        groups.setdefault(repr(signature(case)), []).append(i)
    return list(groups.values())


GROUPS = [pytest.param(p, idx, id=f"{p.name}-{'.'.join(map(str, idx[:4]))}")
          for p in ALL_PROGRAMS for idx in signature_groups(p)]
NAMES = [p.name for p in ALL_PROGRAMS]


@pytest.mark.parametrize("tier", TIERS)
@pytest.mark.parametrize(("prog", "indices"), GROUPS)
def test_first_calls(prog, indices, tier):
    """The cases of one signature, in order, on a fresh build of the program."""
    run_sequence(prog.source, [prog.cases[i] for i in indices], [tier], prog.entry, prog.name)


@pytest.mark.parametrize("tier", TIERS)
@pytest.mark.parametrize("prog", ALL_PROGRAMS, ids=NAMES)
def test_sequence(prog, tier):
    """Every case through one build, twice over: later calls meet code specialised (and maybe
    deoptimised) for the argument types and values of earlier ones."""
    run_sequence(prog.source, prog.cases, [tier], prog.entry, prog.name, repeat=2)


@pytest.mark.parametrize("prog", ALL_PROGRAMS, ids=NAMES)
def test_default_tier_warming_up(prog):
    """Plain ``@tierjit.jit``: every case, three times over, so the program gets warm and may
    change tiers (or compile in the background) between calls -- all of which must be exact."""
    run_sequence(prog.source, prog.cases, [DEFAULT], prog.entry, prog.name, repeat=3)
