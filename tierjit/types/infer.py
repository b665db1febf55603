"""Type inference: abstract interpretation of the IR over the type lattice.

Seeded by the argument types, it propagates types forward through instructions and along
edges to block parameters (joining at merges) until nothing changes. Calls to other jitted
functions ask `CallTyper` for the callee's return type; recursion (direct or mutual) is
solved by iterating from "returns nothing yet" (bottom) up to a fixpoint.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import Unsupported
from ..ir.clone import clone
from ..ir.nodes import Function
from ..ir.ops import Op
from ..ir.printer import format_instr
from ..ir.verifier import reverse_postorder
from .lattice import MAX_DEPTH, Type, depth, join
from .rules import result_type

# Op's members bound once (see ir/ops.py: `Op.X` is slow on Python 3.11)
_CALL_JIT, _RETURN, _SETITEM = Op.CALL_JIT, Op.RETURN, Op.SETITEM

MAX_ROUNDS = 50


@dataclass(eq=False, repr=False)
class Typed:
    """The result of inferring one function for one tuple of argument types."""

    fn: Function          # a typed copy of the untyped IR
    return_type: Type | None
    callees: set = field(default_factory=set)   # (dispatcher, arg types) it calls
    partial: bool = False  # depends on a recursive inference not finished yet: not final


class CallTyper:
    """Return types of calls between jitted functions, with recursion solved by fixpoint."""

    def __init__(self):
        self.in_progress: dict[tuple, Type | None] = {}
        self.used: set[tuple] = set()     # in-progress keys whose approximation was used

    def __call__(self, dispatcher, arg_types: tuple[Type, ...]) -> Type | None:
        key = (dispatcher, arg_types)
        if key in self.in_progress:
            self.used.add(key)
            return self.in_progress[key]
        return dispatcher.infer(arg_types, self).return_type


def infer(fn: Function, arg_types: tuple[Type, ...], key=None,
          typer: CallTyper | None = None) -> Typed:
    """Type a copy of `fn` for `arg_types`. Raises Unsupported naming the line."""
    typer = typer if typer is not None else CallTyper()
    if len(arg_types) != len(fn.arg_names):
        raise Unsupported(f"called with {len(arg_types)} arguments, takes "
                          f"{len(fn.arg_names)}", fn.first_line)
    key = key if key is not None else (id(fn), arg_types)
    outer = set(typer.in_progress)
    typer.in_progress[key] = None
    try:
        for _ in range(MAX_ROUNDS):
            typed = _infer_once(fn, arg_types, typer)
            # final when it equals the approximation it was computed with, or when nothing
            # asked for that approximation (no recursive call: one round is enough)
            if typed.return_type == typer.in_progress[key] or key not in typer.used:
                # mutual recursion: a callee inferred inside its caller's inference sees
                # the caller's approximation; the caller's own fixpoint finishes the job
                typed.partial = bool(typer.used & outer)
                if not typed.partial and any(v.type is None for v in typed.fn.values()):
                    raise Unsupported("code whose types could not be inferred (recursion "
                                      "without a base case?)", typed.fn.first_line)
                return typed
            typer.in_progress[key] = typed.return_type
        raise Unsupported("type inference did not converge (recursion)", fn.first_line)
    finally:
        del typer.in_progress[key]


def _infer_once(fn: Function, arg_types: tuple[Type, ...], typer: CallTyper) -> Typed:
    """Sweep the blocks in reverse postorder until no type changes (types only grow)."""
    t = clone(fn)
    for v in t.values():
        v.type = None
    for p, ty in zip(t.entry.params, arg_types):
        p.type = ty
    order = reverse_postorder(t)
    changed = True
    while changed:
        changed = False
        ret: Type | None = None
        callees = set()
        for b in order:
            for ins in b.instrs:
                if any(a.type is None for a in ins.args):
                    break        # depends on something not known yet (e.g. a recursive call)
                rt = _result(ins, typer)
                if ins.op is _CALL_JIT:
                    callees.add((ins.attr, tuple(a.type for a in ins.args)))
                if ins.result is not None:
                    if rt is None:
                        break
                    new = join(ins.result.type, rt)
                    if new != ins.result.type:
                        _check_depth(new, ins.line)
                        ins.result.type, changed = new, True
                if ins.op is _RETURN:
                    ret = join(ret, ins.args[0].type)
                for e in ins.targets:
                    for p, a in zip(e.block.params, e.args):
                        new = join(p.type, a.type)
                        if new != p.type:
                            _check_depth(new, ins.line)
                            p.type, changed = new, True
    return Typed(t, ret, callees)


def _result(ins, typer: CallTyper) -> Type | None:
    if not (ins.op.has_result or ins.op is _SETITEM):
        return None
    try:
        return result_type(ins.op, [a.type for a in ins.args], ins.attr, typer)
    except Unsupported as e:
        if ins.op is _CALL_JIT:
            # what keeps the callee out is on a line of its own (maybe in another file):
            # said as such, at the line of the call
            at = f" (its line {e.line})" if e.line else ""
            raise Unsupported(f"the call of jitted {ins.attr.__qualname__}{at}: {e.construct}",
                              ins.line, e.detail or format_instr(ins)) from None
        e.line = e.line or ins.line
        if not e.detail:
            e.detail = format_instr(ins)
        raise


def _check_depth(t: Type, line: int) -> None:
    if depth(t) > MAX_DEPTH:
        raise Unsupported("a tuple type that keeps growing", line)
