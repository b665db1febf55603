"""On-stack replacement entries: a function's code from one loop header on, as a function.

OSR moves a call that is running a hot loop in tier 0 into native code without restarting
it. The native code for that is ordinary: `osr_function(fn, header)` derives a new function
whose entry jumps straight into the loop header, whose parameters are the values live there
(the header's own parameters first, then the values defined before the loop and still needed),
and whose blocks are those reachable from the header. It is typed with the types of the live
values tier 0 hands over, optimised and compiled like any function; its result is the result
of the whole call. Analogue: V8's and HotSpot's OSR entries, which compile the function with
an extra entry at the loop header; here the extra entry is a function of its own, so every
backend, and deoptimisation back into tier 0 (generated from the derived function), works on
it unchanged.

Live values defined by a constant are not passed: the constant is re-materialised in the new
entry, so constant folding still sees it.
"""

from __future__ import annotations

from dataclasses import dataclass

from .clone import clone
from .liveness import FrameStates
from .loops import natural_loops
from .nodes import Block, Edge, Function, Instr, Value
from .ops import Op


@dataclass(frozen=True, slots=True)
class OsrPoint:
    """A loop header of the untyped IR where tier 0 may transfer, and what it passes."""

    header: int                     # block id in the untyped IR
    live: tuple[Value, ...]         # values tier 0 passes, in this order
    line: int                       # source line of the loop, for events and messages


def osr_points(fn: Function) -> list[OsrPoint]:
    """Every loop header of `fn`, with the values an OSR entry there takes."""
    loops = natural_loops(fn)
    if not loops:
        return []
    consts = _constants(fn)
    states = FrameStates(fn)
    points = []
    for h in sorted(loops, key=lambda b: b.id):
        live = states.states[states.at(h, 0)].live
        params = list(h.params)
        rest = [v for v in live if v not in params and v not in consts]
        points.append(OsrPoint(h.id, tuple(params + rest), h.instrs[0].line))
    return points


def osr_function(fn: Function, point: OsrPoint) -> Function:
    """A copy of `fn` that starts at `point.header` with `point.live` as its arguments (see
    the module docstring). `fn` itself is not modified. The untyped IR's, or a typed and
    optimised function's (runtime/tierup.py): the values the entry makes take the types of
    those they stand for."""
    from ..frontend.ssa import remove_trivial_params, remove_unreachable
    f = clone(fn)
    f.osr = True
    by_id = {v.id: v for v in f.values()}
    header = next(b for b in f.blocks if b.id == point.header)
    states = FrameStates(f)
    at_header = states.states[states.at(header, 0)].live
    consts = _constants(f)
    entry = Block(max(b.id for b in f.blocks) + 1)
    copies: dict[Value, Value] = {}           # value live at the header -> its entry copy
    for v in point.live:
        p = f.new_value(v.name)
        p.type = v.type
        entry.params.append(p)
        copies[by_id[v.id]] = p
    # a header parameter nothing reads is not live there, so a point made from a frame state
    # (runtime/tierup.py) leaves it out: any value of its type does
    for p in header.params:
        if p not in copies:
            zero = _ZEROS.get(getattr(p.type, "py", None))
            if zero is None:
                from ..errors import Unsupported
                raise Unsupported(f"an OSR entry without a value of type {p.type}", point.line)
            c = f.new_value(p.name)
            c.type = p.type
            entry.instrs.append(Instr(Op.CONST, [], c, zero, point.line))
            copies[p] = c
    # constants defined before the header and used after it: made again in the entry
    for v in at_header:
        if v not in copies:
            c = f.new_value(v.name)
            c.type, c.range = v.type, v.range
            entry.instrs.append(Instr(Op.CONST, [], c, consts[v].attr, point.line))
            copies[v] = c
    entry.instrs.append(Instr(Op.JUMP, [], None, None, point.line,
                              [Edge(header, [copies[p] for p in header.params])]))
    f.blocks.insert(0, entry)
    remove_unreachable(f)
    _repair_ssa(f, {v: c for v, c in copies.items() if v not in header.params})
    remove_trivial_params(f)
    f.arg_names = [p.name or f"v{p.id}" for p in entry.params]
    f.name = f"{fn.name}@{point.line}"
    return f


_ZEROS = {int: 0, float: 0.0, bool: False}


def _repair_ssa(f: Function, copies: dict[Value, Value]) -> None:
    """Each value in `copies` now has two definitions: its entry copy, reaching the code the
    OSR entry runs first, and its own, reached when the code that defines it runs again (a
    value of an outer loop, seen from an inner loop's entry). Every use outside the defining
    block reads the one that reaches it, through new block parameters where both can (the
    SSA updater of Braun et al., with every block sealed)."""
    from ..frontend.ssa import SSABuilder
    ssa = SSABuilder(f)
    for b in f.blocks:
        ssa.sealed.add(b)
        for e in b.terminator.targets:
            ssa.preds.setdefault(e.block, []).append((b, e))
    home: dict[Value, Block] = {}
    for b in f.blocks:
        for v in b.params:
            home[v] = b
        for ins in b.instrs:
            if ins.result is not None:
                home[ins.result] = b
    names = {v: f"%{v.id}" for v in copies}
    types = {names[v]: v.type for v in copies}
    for v, c in copies.items():
        ssa.write(f.entry, names[v], c)
        if v in home:
            ssa.write(home[v], names[v], v)
    by_name = {names[v]: v.name for v in copies}

    def read(a: Value, b: Block, line: int) -> Value:
        if a not in copies or home.get(a) is b:
            return a
        return ssa.read(b, names[a], line)

    for b in f.blocks[1:]:
        for ins in b.instrs:
            ins.args = [read(a, b, ins.line) for a in ins.args]
            for e in ins.targets:
                e.args = [read(a, b, ins.line) for a in e.args]
    for p, var in ssa.param_var.items():      # new parameters take their variable's name
        p.name, p.type = by_name[var], types[var]


def _constants(fn: Function) -> dict[Value, Instr]:
    return {ins.result: ins for b in fn.blocks for ins in b.instrs
            if ins.op is Op.CONST and ins.result is not None}
