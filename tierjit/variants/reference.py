"""NumPy op at a time: the executable definition of what evaluating a population means.

Analogue: tier 0 for the register machine — slow, obviously right, and the oracle that the
native evaluator is tested against. Every register is an array over all rows of X's dtype;
each instruction is one NumPy ufunc call; warnings are silenced (np.errstate(all="ignore")),
which is also the policy of `tierjit.evaluate`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .encoding import Op

if TYPE_CHECKING:  # pragma: no cover - typing only
    import numpy as np

    from .encoding import Programs


def run_program(progs: Programs, p: int, X: np.ndarray) -> np.ndarray:
    """Program p on every row of X (2-d): its output register, of X's dtype."""
    import numpy as np
    dt = X.dtype
    n = X.shape[0]
    regs = [X[:, r].copy() if r < progs.n_inputs else np.zeros(n, dt)
            for r in range(progs.n_regs)]
    ufuncs = {Op.ADD: np.add, Op.SUB: np.subtract, Op.MUL: np.multiply, Op.DIV: np.divide}
    with np.errstate(all="ignore"):
        for s in range(int(progs.starts[p]), int(progs.starts[p + 1])):
            op, d, a, b = (int(x) for x in progs.code[s])
            if op == Op.CONST:
                regs[d] = np.full(n, progs.values[s], dt)
            elif op == Op.COPY:
                regs[d] = regs[a].copy()
            elif op == Op.NEG:
                regs[d] = np.negative(regs[a])
            else:
                regs[d] = ufuncs[Op(op)](regs[a], regs[b])
    return regs[int(progs.output[p])]


def reduce_rows(r: np.ndarray, reduce: str | None, y: np.ndarray | None = None):
    """The reductions of `tierjit.evaluate` over the last axis, in NumPy."""
    import numpy as np
    if reduce is None:
        return r
    with np.errstate(all="ignore"):
        if reduce == "max":
            # the largest finite result; NumPy leaves the sign of a zero maximum to the order
            # of the rows, here +0.0 counts as larger than -0.0 (as in the native evaluator)
            finite = np.where(np.isfinite(r), r, -np.inf)
            best = finite.max(axis=-1, initial=-np.inf)
            plus_zero = ((finite == 0) & ~np.signbit(finite)).any(axis=-1)
            best = np.where(best == 0, np.where(plus_zero, 0.0, -0.0), best)
            return best.astype(r.dtype)
        if reduce == "sum":
            return _sum(r.astype(np.float64))
        d = (r - y.astype(r.dtype)).astype(np.float64)
        return _sum(d * d) / r.shape[-1] if r.shape[-1] else np.full(r.shape[:-1], np.nan)
    raise ValueError(reduce)


def _sum(r: np.ndarray) -> np.ndarray:
    """The sums over the last axis in the native evaluator's order (vm_ir.SUM_LANES): row k
    added to running sum k mod SUM_LANES, from +0.0; then the running sums in order, from -0.0."""
    import numpy as np

    from .vm_ir import SUM_LANES
    lanes = np.zeros(r.shape[:-1] + (SUM_LANES,))
    for k in range(0, r.shape[-1], SUM_LANES):
        part = r[..., k:k + SUM_LANES]
        lanes[..., :part.shape[-1]] += part
    total = np.full(r.shape[:-1], -0.0)
    for j in range(SUM_LANES):
        total += lanes[..., j]
    return total


def run(progs: Programs, X: np.ndarray, reduce: str | None = None,
        y: np.ndarray | None = None) -> np.ndarray:
    """Every program of progs over X, reduced like `tierjit.evaluate`."""
    import numpy as np
    rows = [run_program(progs, p, X) for p in range(len(progs))]
    r = np.stack(rows) if rows else np.zeros((0, X.shape[0]), X.dtype)
    return reduce_rows(r, reduce, y)
