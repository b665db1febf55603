"""Compare kernel results with CPython's: exact for ints, bit-identical or 1e-9 for floats."""

from __future__ import annotations

import math
import numbers
from typing import Any, Literal

Verdict = Literal["identical", "close", "mismatch"]
REL_TOL = 1e-9


def plain(value: Any) -> Any:
    """A JSON-ready copy of a result: numpy scalars become Python numbers, tuples lists."""
    if isinstance(value, (tuple, list)):
        return [plain(v) for v in value]
    if isinstance(value, (bool, int, float)):
        return value
    if hasattr(value, "item") and getattr(value, "ndim", 1) == 0:  # numpy scalar
        return value.item()
    if isinstance(value, numbers.Complex):
        return [complex(value).real, complex(value).imag]
    return repr(value)


def compare(got: Any, expected: Any) -> Verdict:
    """The worst verdict over all elements; both sides are `plain` values."""
    if isinstance(expected, list):
        if not isinstance(got, list) or len(got) != len(expected):
            return "mismatch"
        verdicts = [compare(g, e) for g, e in zip(got, expected, strict=True)]
        for worst in ("mismatch", "close"):
            if worst in verdicts:
                return worst
        return "identical"
    if type(got) is not type(expected):  # 5.0 for 5, or True for 1, is a wrong answer too
        return "mismatch"
    if isinstance(expected, int):
        return "identical" if got == expected else "mismatch"
    if isinstance(expected, float):
        if got == expected or (math.isnan(got) and math.isnan(expected)):
            return "identical"
        return "close" if math.isclose(got, expected, rel_tol=REL_TOL) else "mismatch"
    return "identical" if got == expected else "mismatch"
