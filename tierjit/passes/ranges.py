"""Value ranges: interval analysis over the int values of typed IR.

Each int value gets `Value.range = (lo, hi)`, bounds it provably stays within when the code
runs natively (as an i64). The facts come from constants, loop variables of `range(...)`
(between start and stop), lengths and shapes of arrays (NumPy keeps an array under 2**63
bytes, so a dimension of float64 items is below 2**60), and interval arithmetic. Native code
uses them to drop overflow guards that cannot fail (`3 * i + 2` for an index `i` of an
array) and Python's negative-index handling where an index is never negative.

Loops are handled by iterating to a fixpoint, widening a block parameter's bound to the
i64 limit as soon as it grows a second time. Two kinds of loop variable are bounded instead:
the hidden iteration count k of a counted loop (`for i in range(...)`, `for x, y in zip(a,
b)`), which stays within its entry value and the length n it is tested against (`k < n`,
then `k + 1`); and a
*counter* of a counted loop, which each iteration either keeps or increases by a constant
(`inside += 1` under an `if`): it cannot pass its start plus that constant times the trip
count, and a trip count is below 2**63. A range's length is bounded by its operands:
`range(i + 1, n)` has at most n - 1 items.
"""

from __future__ import annotations

from ..ir.nodes import Function, Value
from ..ir.ops import Op
from ..ir.verifier import reverse_postorder
from ..types.lattice import ArrayT, Scalar, TupleT

# Op's members bound once (see ir/ops.py: `Op.X` is slow on Python 3.11)
_ADD, _SUB, _MUL, _MOD, _FLOORDIV = Op.ADD, Op.SUB, Op.MUL, Op.MOD, Op.FLOORDIV
_BITAND, _BRANCH, _CALL_BUILTIN, _CONST = Op.BITAND, Op.BRANCH, Op.CALL_BUILTIN, Op.CONST
_GETATTR, _GETITEM, _GUARD_INBOUNDS = Op.GETATTR, Op.GETITEM, Op.GUARD_INBOUNDS
_GUARD_RANGE, _LEN, _LT, _RANGE_ITEM = Op.GUARD_RANGE, Op.LEN, Op.LT, Op.RANGE_ITEM
_RANGE_LEN, _TUPLE_GET = Op.RANGE_LEN, Op.TUPLE_GET

I64 = (-2 ** 63, 2 ** 63 - 1)


def _is_int(v: Value) -> bool:
    return isinstance(v.type, Scalar) and v.type.py in (int, bool)


def max_dim(t: ArrayT) -> int:
    import numpy as np
    return (2 ** 63 - 1) // np.dtype(t.dtype).itemsize


def clamp(lo: int, hi: int) -> tuple[int, int]:
    return max(lo, I64[0]), min(hi, I64[1])


def arith(op: Op, a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int] | None:
    """Exact bounds of a op b (Python ints: may exceed i64), or None when unknown."""
    if op is _ADD:
        return a[0] + b[0], a[1] + b[1]
    if op is _SUB:
        return a[0] - b[1], a[1] - b[0]
    if op is _MUL:
        ps = (a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1])
        return min(ps), max(ps)
    if op is _MOD and b[0] > 0:
        return 0, b[1] - 1
    if op is _FLOORDIV and b[0] > 0 and a[0] >= 0:
        return 0, a[1] // b[0]
    if op is _BITAND and (a[0] >= 0 or b[0] >= 0):
        return 0, min(x[1] for x in (a, b) if x[0] >= 0)
    return None


def within_i64(r: tuple[int, int] | None) -> bool:
    return r is not None and I64[0] <= r[0] and r[1] <= I64[1]


def compute_ranges(fn: Function, entry: list | None = None) -> Function:
    """Ranges of fn's int values; `entry` gives its parameters' ranges where known (a
    callee generated inside its caller starts from the caller's arguments)."""
    shapes: dict[Value, list[tuple[int, int]]] = {}     # tuple values of array shapes
    grown: dict[Value, int] = {}
    for v in fn.values():
        v.range = None
    for i, p in enumerate(fn.entry.params):
        if _is_int(p):
            known = entry[i] if entry is not None else None
            p.range = known or (I64 if p.type.py is int else (0, 1))
    order = reverse_postorder(fn)
    counters, counts = _counters(fn)
    entering: dict[Value, tuple[int, int]] = {}    # a counter's range on entry to its loop
    changed = True
    while changed:
        changed = False
        for b in order:
            for ins in b.instrs:
                r = _transfer(ins, shapes)
                if ins.result is not None and r is not None and ins.result.range != r:
                    ins.result.range, changed = r, True
                for e in ins.targets:
                    for p, a in zip(e.block.params, e.args):
                        if not _is_int(p):
                            continue
                        if p in counts:
                            n, back = counts[p]
                            if b in back:
                                continue          # k + 1 <= n: the body ran because k < n
                            lo, hi = entering[p] = _join(entering.get(p), _rng(a))
                            new = (lo, max(hi, _rng(n)[1]))
                            if new != p.range:
                                p.range, changed = new, True
                            continue
                        if p in counters:
                            step, k, back = counters[p]
                            if b in back:
                                continue          # bounded by the entry and the trip count
                            lo, hi = entering[p] = _join(entering.get(p), _rng(a))
                            # k < n < 2**63 from k's first value on: the most trips
                            trips = I64[1] - min(0, _rng(k)[0])
                            new = clamp(lo, hi + step * (trips - 1))
                            if new != p.range:
                                p.range, changed = new, True
                            continue
                        new = _join(p.range, _rng(a))
                        if new != p.range:
                            grown[p] = grown.get(p, 0) + 1
                            if grown[p] > 2:          # widen: the bound keeps moving
                                # to the i64 limit, or a constant past it (2**63: joined
                                # again, it must not move the bound back and forth forever)
                                new = (min(I64[0], new[0]) if p.range and new[0] < p.range[0]
                                       else new[0],
                                       max(I64[1], new[1]) if p.range and new[1] > p.range[1]
                                       else new[1])
                            p.range, changed = new, True
    for v in fn.values():
        if v.range is None and _is_int(v):
            v.range = I64
    return fn


def speculate_loop_ranges(fn: Function, avoid: frozenset = frozenset()) -> Function:
    """Speculate that a loop variable stays in the range its loop gives it.

    When every back edge passes a loop parameter a value of a narrow range (`state` after
    `state = (a * state + c) % 2**32`) but the value entering the loop is wider (an
    argument), a GUARD_RANGE on the entry edge checks once, before the loop, that the
    entering value is in that range too (deoptimising otherwise); inside the loop the
    parameter then has the narrow range, and the guards that range makes unnecessary go.

    `avoid` holds ("loop-range", header block id, parameter index) of speculations that
    failed too often before (see `speculation_of`): those loops keep their guards inside."""
    from ..ir.nodes import Instr
    from ..ir.verifier import dominators
    dom = dominators(fn)
    guarded = False
    for h in fn.blocks:
        if not any(_is_int(p) for p in h.params):
            continue
        edges = [(b, e) for b in fn.blocks for e in b.terminator.targets if e.block is h]
        back = [(b, e) for b, e in edges if h in dom.get(b, ())]
        entry = [(b, e) for b, e in edges if h not in dom.get(b, ())]
        if not back or not entry:
            continue
        for i, p in enumerate(h.params):
            if not _is_int(p) or p.type.py is not int or ("loop-range", h.id, i) in avoid:
                continue
            narrow = None
            for _, e in back:
                narrow = _join(narrow, _rng(e.args[i]))
            # only where the entering value is what widens the parameter to all of i64
            if narrow is None or narrow == I64 or p.range != I64:
                continue
            for b, e in entry:
                r = _rng(e.args[i])
                if narrow[0] <= r[0] and r[1] <= narrow[1]:
                    continue
                g = fn.new_value(p.name)
                g.type = p.type
                b.instrs.insert(len(b.instrs) - 1, Instr(_GUARD_RANGE, [e.args[i]], g,
                                                         narrow, b.terminator.line))
                e.args[i] = g
                guarded = True
    return compute_ranges(fn) if guarded else fn


def _counters(fn: Function) -> tuple[dict[Value, tuple[int, Value, set]],
                                      dict[Value, tuple[Value, set]]]:
    """Counters of counted loops (see the module docstring): header parameter -> (largest
    step, the loop's iteration count k, the blocks whose edges into the header are back
    edges); and each loop's k -> (the length n it is tested against, those blocks). k
    stays within its entry value and n: it only grows, by one, while k < n."""
    from ..ir.loops import natural_loops
    from ..ir.verifier import dominators
    dom = dominators(fn)
    found: dict[Value, tuple[int, Value, set]] = {}
    counts: dict[Value, tuple[Value, set]] = {}
    defs = {ins.result: ins for b in fn.blocks for ins in b.instrs if ins.result is not None}
    for h in natural_loops(fn, dom):
        back = {b for b in fn.blocks if h in b.successors and h in dom.get(b, ())}
        k = _iteration_count(h, back, defs) if back else None
        if k is None:
            continue
        counts[k] = (h.instrs[0].args[1], back)
        for i, p in enumerate(h.params):
            if not _is_int(p) or p.type.py is not int:
                continue
            steps = [_step_from(e.args[i], p, defs, fn) for b in back
                     for e in b.terminator.targets if e.block is h]
            if p is not k and steps and all(s is not None for s in steps):
                found[p] = (max(steps), k, back)
    return found, counts


def _iteration_count(h, back: set, defs) -> Value | None:
    """The parameter k of a counted loop's header h: the header tests `k < n` first, n a
    range's length, a sequence's or the least of those (a for loop's, over a range, an array
    or a tuple, or zip of those), and every back edge passes k + 1."""
    t = h.terminator
    if t.op is not _BRANCH or len(h.instrs) != 2:
        return None
    test = h.instrs[0]
    if test.op is not _LT or t.args[0] is not test.result or test.args[0] not in h.params:
        return None
    n = defs.get(test.args[1])
    if n is None or not (n.op is _RANGE_LEN or n.op is _LEN or
                         n.op is _CALL_BUILTIN and n.attr == "min"):
        return None
    k = test.args[0]
    i = h.params.index(k)
    for b in back:
        for e in b.terminator.targets:
            if e.block is h:
                inc = defs.get(e.args[i])
                one = defs.get(inc.args[1]) if inc is not None and inc.op is _ADD else None
                if inc is None or inc.args[0] is not k or one is None \
                        or one.op is not _CONST or one.attr != 1:
                    return None
    return k


def _step_from(v: Value, p: Value, defs, fn: Function, seen=None) -> int | None:
    """The largest amount v adds to p in one iteration, when v is p, p + c (c a constant
    >= 0), or a block parameter all of whose incoming values are; None otherwise."""
    if v is p:
        return 0
    ins = defs.get(v)
    if ins is not None:
        if ins.op is _ADD and ins.args[0] is p:
            c = defs.get(ins.args[1])
            if c is not None and c.op is _CONST and type(c.attr) is int and c.attr >= 0:
                return c.attr
        return None
    seen = set() if seen is None else seen
    if v in seen:
        return 0
    seen.add(v)
    incoming = [e.args[b.params.index(v)] for blk in fn.blocks
                for e in blk.terminator.targets for b in (e.block,) if v in b.params]
    if not incoming:
        return None
    steps = [_step_from(a, p, defs, fn, seen) for a in incoming]
    return None if any(s is None for s in steps) else max(steps)


def _range_len_bound(start, stop, step) -> int:
    """The largest len(range(start, stop, step)) for operands in those ranges: the widest
    span from start to stop over the smallest step. A step whose sign is not known (or
    that may be 0, which raises) leaves only the bound of every length, 2**63 - 1."""
    if step[0] > 0:
        span, by = stop[1] - start[0], step[0]
    elif step[1] < 0:
        span, by = start[1] - stop[0], -step[1]
    else:
        return I64[1]
    return min(max(0, -(-span // by)), I64[1])


def _join(a, b):
    if a is None:
        return b
    return min(a[0], b[0]), max(a[1], b[1])


def _rng(v: Value) -> tuple[int, int]:
    if v.range is not None:
        return v.range
    return (0, 1) if isinstance(v.type, Scalar) and v.type.py is bool else I64


def _transfer(ins, shapes) -> tuple[int, int] | None:
    op, args = ins.op, ins.args
    res = ins.result
    if op is _GETATTR and isinstance(args[0].type, ArrayT):
        t = args[0].type
        if ins.attr == "shape":
            shapes[res] = [(0, max_dim(t))] * t.ndim
            return None
        if ins.attr == "size":
            return 0, max_dim(t)
        if ins.attr == "ndim":
            return t.ndim, t.ndim
    if res is None or not _is_int(res):
        return None
    if op is _CONST:
        return int(ins.attr), int(ins.attr)
    if op is _GUARD_RANGE:
        return ins.attr
    if op in (_TUPLE_GET, _GETITEM) and args[0] in shapes:
        i = ins.attr[0] if op is _TUPLE_GET else ins.attr
        if i is not None:
            return shapes[args[0]][i]
    if op is _LEN:
        t = args[0].type
        if isinstance(t, ArrayT):
            return 0, max_dim(t)
        if isinstance(t, TupleT):
            return len(t.items), len(t.items)
    if op is _CALL_BUILTIN and ins.attr == "len" and isinstance(args[0].type, ArrayT):
        return 0, max_dim(args[0].type)
    if op is _CALL_BUILTIN and ins.attr in ("min", "max") and args and \
            all(_is_int(a) for a in args):
        f = min if ins.attr == "min" else max
        return f(_rng(a)[0] for a in args), f(_rng(a)[1] for a in args)
    if op is _RANGE_LEN:
        return 0, _range_len_bound(*(_rng(a) for a in args))
    if op is _RANGE_ITEM:
        start, stop, step = (_rng(a) for a in args[:3])
        if step[0] > 0:
            return start[0], max(start[0], stop[1] - 1)
        if step[1] < 0:
            return min(start[1], stop[0] + 1), start[1]
        return I64
    if op in (_ADD, _SUB, _MUL, _MOD, _FLOORDIV, _BITAND) and \
            all(_is_int(a) for a in args):
        r = arith(op, _rng(args[0]), _rng(args[1]))
        return clamp(*r) if r is not None else I64
    return (0, 1) if res.type.py is bool else I64       # a compare's, a truth's


def speculations_at(fn: Function, block: int, index: int) -> frozenset:
    """The speculations a deopt resuming before fn.blocks[block].instrs[index] may have
    come from, as the speculative passes name them in `avoid`: the GUARD_RANGEs (of loop
    variables and of array dimensions) and GUARD_INBOUNDS from there to the end of the block (native code defers a pure region's
    guards to one deopt point)."""
    from .dims import is_dim
    b = fn.blocks[block]
    defs = {i.result: i for c in fn.blocks for i in c.instrs if i.result is not None}
    found = set()
    for ins in b.instrs[index:]:
        if ins.op is _GUARD_INBOUNDS:
            found.add(("inbounds", b.terminator.targets[0].block.id))
        if ins.op is _GUARD_RANGE:
            src = defs.get(ins.args[0])
            if src is not None and is_dim(src, defs):
                found.add(("dims", ins.args[0].id))
            for e in b.terminator.targets:
                if ins.result in e.args:
                    found.add(("loop-range", e.block.id, e.args.index(ins.result)))
    return frozenset(found)
