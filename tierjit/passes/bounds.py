"""Bounds-check hoisting: one check before a counted loop instead of one per iteration.

In `for i in range(start, stop, step)` with a constant step > 0 and start >= 0, an index
`a * i + c` (constants a > 0, c >= 0) into an array defined before the loop takes its largest
value at the loop's last iteration. So one GUARD_INBOUNDS in the block that enters the loop
checks `a * last + c < shape[d]` (or that the loop runs no iteration), and the access inside
the loop keeps no bounds check of its own for that dimension (`Instr.inbounds`). With a step
of 1, last is `stop - 1`: an inner loop `range(i + 1, n)` gets the same check for every i.

Python's semantics are kept because the guard deoptimises to the loop's entry: when some
iteration would index out of bounds, tier 0 runs the loop from its start and raises the
IndexError at the iteration CPython raises it, after the same side effects. A loop that
leaves early (`break`) before the bad index is reached deoptimises for nothing, and the
guard is a speculation: when it keeps failing, deoptimisation feedback compiles the loop
again without it (`avoid` holds ("inbounds", header block id)).

Analogue: loop predication / range-check elimination in HotSpot's C2.
"""

from __future__ import annotations

from ..ir.loops import natural_loops
from ..ir.nodes import Block, Function, Instr, Value
from ..ir.ops import Op
from ..ir.verifier import dominators, predecessors
from ..types.lattice import INT, ArrayT, Scalar
from .ranges import _iteration_count, compute_ranges

# Op's members bound once (see ir/ops.py: `Op.X` is slow on Python 3.11)
_ADD, _CONST, _GETITEM, _GUARD_INBOUNDS = Op.ADD, Op.CONST, Op.GETITEM, Op.GUARD_INBOUNDS
_JUMP, _MUL, _RANGE_ITEM, _SETITEM, _SUB = Op.JUMP, Op.MUL, Op.RANGE_ITEM, Op.SETITEM, Op.SUB
_RANGE_LEN = Op.RANGE_LEN


def hoist_bounds_checks(fn: Function, avoid: frozenset = frozenset()) -> Function:
    preds = predecessors(fn)
    dom = dominators(fn, preds=preds)
    defs = {ins.result: ins for b in fn.blocks for ins in b.instrs if ins.result is not None}
    home = {v: b for b in fn.blocks for v in b.params}
    home.update((ins.result, b) for b in fn.blocks for ins in b.instrs if ins.result is not None)
    hoisted = False
    for h, body in natural_loops(fn, dom, preds).items():
        if ("inbounds", h.id) in avoid:
            continue
        back = {b for b in preds[h] if h in dom.get(b, ())}
        k = _iteration_count(h, back, defs) if back else None
        entries = [b for b in preds[h] if b not in back]
        if k is None or len(entries) != 1 or entries[0].terminator.op is not _JUMP:
            continue
        n = h.instrs[0].args[1]
        if defs[n].op is not _RANGE_LEN:
            continue                             # over a sequence: indexed in bounds already
        start, stop, step = defs[n].args
        step_c = defs.get(step)
        if step_c is None or step_c.op is not _CONST or type(step_c.attr) is not int \
                or step_c.attr <= 0 or start.range is None or start.range[0] < 0:
            continue
        # in the function's block order, not the set's (by address): the same code every time
        blocks = [b for b in fn.blocks if b in body]
        ivs = {ins.result for b in blocks for ins in b.instrs if ins.op is _RANGE_ITEM
               and ins.args[:3] == [start, stop, step] and ins.args[3] is k}
        wanted: dict[tuple, list[tuple[Instr, int]]] = {}
        for b in blocks:
            for ins in b.instrs:
                if ins.op not in (_GETITEM, _SETITEM) or \
                        not isinstance(ins.args[0].type, ArrayT):
                    continue
                arr = ins.args[0]
                if home.get(arr) in body:
                    continue                     # not the same array every iteration
                idx = ins.args[1:-1] if ins.op is _SETITEM else ins.args[1:]
                if len(idx) != arr.type.ndim:
                    continue
                for d, x in enumerate(idx):
                    form = _affine(x, ivs, defs)
                    if form is not None:
                        wanted.setdefault((arr, d, *form), []).append((ins, d))
        if not wanted:
            continue
        pre = entries[0]
        _guard(fn, pre, wanted, start, stop, step_c.attr, step, n, h.instrs[0].line)
        hoisted = True
    return compute_ranges(fn) if hoisted else fn


def _affine(x: Value, ivs: set, defs) -> tuple[int, int] | None:
    """(a, c) when x = a * i + c for a loop variable i, constants a > 0 and c >= 0."""
    if not (isinstance(x.type, Scalar) and x.type.py is int):
        return None
    if x in ivs:
        return 1, 0
    ins = defs.get(x)
    if ins is None or ins.op not in (_ADD, _MUL):
        return None
    for inner, other in ((ins.args[0], ins.args[1]), (ins.args[1], ins.args[0])):
        c = defs.get(other)
        if c is None or c.op is not _CONST or type(c.attr) is not int:
            continue
        form = _affine(inner, ivs, defs)
        if form is None:
            continue
        a, c0 = form
        if ins.op is _ADD and c.attr >= 0:
            return a, c0 + c.attr
        if ins.op is _MUL and c.attr > 0:
            return a * c.attr, c0 * c.attr
    return None


def _guard(fn: Function, pre: Block, wanted: dict, start: Value, stop: Value, step_c: int,
           step: Value, n: Value, line: int) -> None:
    """In `pre`, before its jump into the loop: last = start + (n - 1) * step, then one
    GUARD_INBOUNDS per (array, dimension, a, c); marks the accesses it covers.

    With a step of 1, last is stop - 1 whenever the loop runs (n > 0, the only case a
    guard checks): `for j in range(i + 1, m)` nested in a loop over i then checks
    `3 * (m - 1) + 2 < shape[0]`, the same for every i, and LLVM computes it once, out
    of the outer loop; only whether the inner loop runs is left to test per i."""
    new: list[Instr] = []

    def emit(op: Op, args: list[Value], attr=None) -> Value:
        v = fn.new_value()
        v.type = INT
        new.append(Instr(op, args, v, attr, line))
        return v

    one = emit(_CONST, [], 1)
    if step_c == 1 and stop.range is not None and stop.range[0] >= 0:
        last = emit(_SUB, [stop, one])              # no larger than the other form
    else:
        last = emit(_ADD, [start, emit(_MUL, [emit(_SUB, [n, one]), step])])
    for (arr, d, a, c), uses in wanted.items():
        x = last if a == 1 else emit(_MUL, [last, emit(_CONST, [], a)])
        x = x if c == 0 else emit(_ADD, [x, emit(_CONST, [], c)])
        new.append(Instr(_GUARD_INBOUNDS, [arr, x, n], None, d, line))
        for ins, dim in uses:
            ins.inbounds = ins.inbounds | {dim}
    pre.instrs[-1:-1] = new
