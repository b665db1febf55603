"""Tier 0: IR → Python source with CPython's exact semantics.

Every op is emitted as the Python expression it stands for (`a + b`, `a[i, j]`,
`math.sqrt(x)`), so whatever the operand values turn out to be — big ints after an
overflow, NaNs, NumPy scalars — the result, its type, any warning and any exception are
CPython's. This is the executable specification of the IR and the target of deoptimisation.

Control flow: a block with exactly one predecessor is emitted inline where that predecessor
jumps to it; the other blocks (loop headers, merge points) become cases of a dispatch loop
`while True: if _b == K: ...`. Block parameters are assigned on the edge, in parallel. A small
merge point that only leads on to loop headers (the end of a loop body after an `if`) is
emitted inline at each of its predecessors instead (tail duplication), so an iteration of
such a loop dispatches once, at its header.

An *entry* is where the generated function starts: the function's own entry (block 0, its
arguments) or a frame state (block B before instruction i, with its live values) for
resuming a call that native code handed back.

With OSR points (ir.osr) the code counts back edges: every loop header has a countdown, and
when it runs out the header calls `_osr(header, *live)`, which either finishes the call in
native code (its result is returned) or answers `NOT_READY` (the loop goes on in Python and
asks again `_osr_every` iterations later).
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field

from ...ir.nodes import Block, Edge, FrameState, Function, Instr, Value
from ...ir.ops import COMPARE_OPS, INPLACE, PY_BINARY, PY_UNARY, Op
from ...ir.verifier import predecessors
from ...types.lattice import Scalar
from ...types.rules import has_arrays, py_function
from . import iteration
from .lines import relined

TYPE_CHECKING = False
if TYPE_CHECKING:                       # pragma: no cover - typing only
    from typing import Any


def range_len(start, stop, step) -> int:
    """len(range(start, stop, step)), also for lengths past sys.maxsize."""
    # TypeError / ValueError exactly as range() raises
    return range_count(range(start, stop, step))


def range_count(r: range) -> int:
    """len(r), also for lengths past sys.maxsize."""
    try:
        return len(r)
    except OverflowError:
        start, stop, step = r.start, r.stop, r.step
        if step > 0:
            return max(0, (stop - start + step - 1) // step)
        return max(0, (start - stop - step - 1) // -step)


def _plain_ints(args) -> bool:
    """Typed, and Python ints (or bools) only."""
    return all(isinstance(a.type, Scalar) and a.type.py in (int, bool) for a in args)


def _plain_numbers(args) -> bool:
    """Typed, and never an array: `x += y` is `x = x + y`."""
    return all(a.type is not None for a in args) and not has_arrays([a.type for a in args])


def _v(v: Value) -> str:
    return f"_v{v.id}"


@dataclass(eq=False, repr=False)
class _Emitter:
    """The state of emitting one function: its lines, the namespace they refer to and how
    blocks are laid out."""

    fn: Function
    ns: dict[str, Any] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)
    source_lines: list[int] = field(default_factory=list)   # source line of each line
    cases: set[Block] = field(default_factory=set)
    line: int = 0                      # source line of what is being emitted
    osr: dict[int, Any] = field(default_factory=dict)   # header id -> ir.osr.OsrPoint
    # A function with one loop (one case) is emitted as straight code, then `while True:`
    # with the loop header's code: an edge to it is `continue` inside the loop and falls
    # through into the loop from the code before it (None: the dispatch loop)
    loop: Block | None = None
    in_loop: bool = False
    # TRUTHs and comparisons used only by their block's branch: written in its `if`
    # (`if x:` tests x as bool(x) would)
    conditions: dict[Value, Instr] = field(default_factory=dict)
    # untyped for loops (see iteration.py): their counts of items (LEN and zip's min) and
    # items -> the count of the sequence they are of
    iter_counts: set[Instr] = field(default_factory=set)
    iter_items: dict[Instr, Value] = field(default_factory=dict)
    # and untyped range loops: the range made once (CPython reads the bounds once, by
    # __index__), its items computed from its own start and step
    ranges: dict[Instr, Value] = field(default_factory=dict)       # RANGE_ITEM -> RANGE_LEN

    def out(self, text: str) -> None:
        self.lines.append(text)
        self.source_lines.append(self.line)

    def name_for(self, obj: Any, hint: str) -> str:
        """A namespace name bound to `obj` (constants the source cannot spell, callees); the
        hint made an identifier (a callee's __name__ may be any string)."""
        if not hint.isidentifier():
            hint = "".join(c if c.isalnum() or c == "_" else "_" for c in hint)
        for k, v in self.ns.items():
            if v is obj and k.startswith("_" + hint):
                return k
        k = f"_{hint}{len(self.ns)}"
        self.ns[k] = obj
        return k

    def const(self, c: Any) -> str:
        # exactly these types: a subclass's repr (`np.float64(0.1)`, `Mode.FAST`) names what
        # the namespace does not have, and spelling its value would change its type
        t = type(c)
        if t is bool or c is None:
            return repr(c)
        if t is int:
            return repr(c) if c >= 0 else f"({c!r})"
        if t is float and math.isfinite(c):
            return repr(c) if math.copysign(1.0, c) > 0 else f"({c!r})"
        return self.name_for(c, "k")

    def expr(self, ins: Instr) -> str:
        a = [_v(x) for x in ins.args]
        op = ins.op
        if op in PY_BINARY:
            if ins.attr == INPLACE and not _plain_numbers(ins.args):
                # `x op= y` of what may be an array (or, untyped, anything): Python's own,
                # in place
                f = py_function(op, INPLACE)
                return f"{self.name_for(f, 'i' + op.value)}({a[0]}, {a[1]})"
            return f"{a[0]} {PY_BINARY[op]} {a[1]}"
        if op in PY_UNARY:
            return f"{PY_UNARY[op]}{a[0]}"
        if op is Op.CONST:
            return self.const(ins.attr)
        if op is Op.TRUTH:
            return f"bool({a[0]})"
        if op is Op.MAKE_TUPLE:
            return "(" + "".join(x + ", " for x in a) + ")"
        if op is Op.TUPLE_GET:
            return f"{a[0]}[{ins.attr[0]}]"
        if ins in self.iter_counts:
            f = iteration.iter_len if op is Op.LEN else iteration.zip_bound
            return f"{self.name_for(f, f.__name__)}({', '.join(a)})"
        if ins in self.iter_items:
            n = self.iter_items[ins]
            return f"{a[0]}[{a[1]}] if _s{n.id} else {_v(n)}.item"
        if op is Op.CALL_BUILTIN:
            return f"{self.name_for(_builtin(ins.attr), 'b_' + ins.attr)}({', '.join(a)})"
        if op is Op.CALL_MATH:
            return f"{self.name_for(getattr(math, ins.attr), 'm_' + ins.attr)}({', '.join(a)})"
        if op is Op.CALL_NUMPY:
            import numpy as np
            name, dtype = ins.attr
            f = self.name_for(getattr(np, name), "np_" + name)
            dt = "" if dtype is None else f", dtype={self.name_for(dtype, 'dt')}"
            return f"{f}({', '.join(a)}{dt})"
        if op is Op.CALL_UFUNC:
            import numpy as np
            return f"{self.name_for(getattr(np, ins.attr), 'np_' + ins.attr)}({', '.join(a)})"
        if op is Op.CALL_JIT:
            return f"{self.name_for(ins.attr.entry, 'f_' + ins.attr.__name__)}({', '.join(a)})"
        if op is Op.CALL_METHOD:
            return f"{a[0]}.{ins.attr}({', '.join(a[1:])})"
        if op is Op.GETATTR:
            return f"{a[0]}.{ins.attr}"
        if op is Op.GETITEM:
            return f"{a[0]}[{', '.join(a[1:])}]"
        if op is Op.LEN:
            return f"len({a[0]})"
        if op is Op.RANGE_LEN:
            return f"{self.name_for(range_len, 'range_len')}({', '.join(a)})"
        if op is Op.GUARD_RANGE:
            return a[0]                   # a speculation of native code: nothing to check
        if op is Op.RANGE_ITEM and ins in self.ranges:
            r = f"_rg{self.ranges[ins].id}"
            return f"{r}.start + {a[3]} * {r}.step"
        if op is Op.RANGE_ITEM:
            if not _plain_ints(ins.args[:3]):
                # range() takes its bounds by __index__ and yields Python ints: a NumPy
                # int bound (untyped, anything) must not make NumPy arithmetic of the items
                ix = self.name_for(operator.index, "index")
                return f"{ix}({a[0]}) + {a[3]} * {ix}({a[2]})"
            return f"{a[0]} + {a[3]} * {a[2]}"
        raise AssertionError(f"pyemit: no expression for {op}")

    # -- statements -------------------------------------------------------------------
    def osr_poll(self, b: Block, ind: str) -> None:
        point = self.osr[b.id]
        self.line = point.line
        live = "".join(", " + _v(v) for v in point.live)
        self.out(f"{ind}_o{b.id} -= 1")
        self.out(f"{ind}if not _o{b.id}:")
        self.out(f"{ind}    _r = _osr({b.id}{live})")
        self.out(f"{ind}    if _r is not _NR:")
        self.out(f"{ind}        return _r")
        self.out(f"{ind}    _o{b.id} = _osr_every")

    def instrs(self, b: Block, start: int, ind: str) -> None:
        if start == 0 and b.id in self.osr:
            self.osr_poll(b, ind)
        for ins in b.instrs[start:-1]:
            self.line = ins.line or self.line
            if ins.op is Op.GUARD_INBOUNDS or ins.result in self.conditions:
                continue                      # a speculation of native code / in the `if`
            if ins.op is Op.SETITEM:
                a = [_v(x) for x in ins.args]
                self.out(f"{ind}{a[0]}[{', '.join(a[1:-1])}] = {a[-1]}")
            elif ins.op is Op.TUPLE_GET and ins.args[0].type is None:
                # Untyped, the value may be anything: Python's own unpacking at the first
                # item (CPython's errors, one pass over an iterator), then the items it made.
                # (Typed, it is a tuple of as many items: indexed.)
                t, (k, n) = ins.args[0], ins.attr
                if k == 0:
                    self.out(f"{ind}{''.join(f'_u{t.id}_{j}, ' for j in range(n))}= {_v(t)}")
                self.out(f"{ind}{_v(ins.result)} = _u{t.id}_{k}")
            elif ins.attr == INPLACE and ins.op in PY_BINARY and _plain_numbers(ins.args):
                # `x op= y` on numbers: Python's augmented assignment (after a deopt the
                # values may not be of their types: its TypeError names `op=`)
                r = _v(ins.result)
                self.out(f"{ind}{r} = {_v(ins.args[0])}")
                self.out(f"{ind}{r} {PY_BINARY[ins.op]}= {_v(ins.args[1])}")
            elif ins.op is Op.RANGE_LEN and ins.result in self.ranges.values():
                r = f"_rg{ins.result.id}"
                self.out(f"{ind}{r} = range({', '.join(_v(x) for x in ins.args)})")
                self.out(f"{ind}{_v(ins.result)} = {self.name_for(range_count, 'range_count')}"
                         f"({r})")
            else:
                self.out(f"{ind}{_v(ins.result)} = {self.expr(ins)}")
                if ins in self.iter_counts and ins.op is Op.LEN:
                    # whether the loop indexes its sequence (else its count iterates)
                    self.out(f"{ind}_s{ins.result.id} = {_v(ins.result)}.__class__ is int")
        self.terminator(b.terminator, ind)

    def terminator(self, t: Instr, ind: str) -> None:
        self.line = t.line or self.line
        if t.op is Op.RETURN:
            self.out(f"{ind}return {_v(t.args[0])}")
        elif t.op is Op.RAISE:
            exc, args = t.attr
            self.out(f"{ind}raise {self.name_for(exc, 'e')}"
                              f"(*{self.name_for(args, 'a')})")
        elif t.op is Op.JUMP:
            self.edge(t.targets[0], ind)
        else:
            cond = self.conditions.get(t.args[0])
            if cond is not None and cond.op is Op.TRUTH:
                cond = self.conditions.get(cond.args[0], cond)
            test = _v(t.args[0]) if cond is None else \
                _v(cond.args[0]) if cond.op is Op.TRUTH else self.expr(cond)
            self.out(f"{ind}if {test}:")
            self.edge(t.targets[0], ind + "    ")
            self.out(f"{ind}else:")
            self.edge(t.targets[1], ind + "    ")

    def edge(self, e: Edge, ind: str) -> None:
        if e.args:
            lhs = ", ".join(_v(p) for p in e.block.params)
            rhs = ", ".join(_v(a) for a in e.args)
            if lhs != rhs:
                self.out(f"{ind}{lhs} = {rhs}")
        if e.block is self.loop:
            if self.in_loop:
                self.out(f"{ind}continue")
            elif not e.args or lhs == rhs:
                self.out(f"{ind}pass")       # falls through into the loop
        elif e.block in self.cases:
            self.out(f"{ind}_b = {e.block.id}")
            self.out(f"{ind}continue")
        else:
            self.instrs(e.block, 0, ind)


def emit(fn: Function, entry: FrameState | None = None) -> tuple[str, dict[str, Any]]:
    """Python source defining `_tier0` (and the namespace it needs).

    With `entry` None, `_tier0` takes the function's arguments; with a frame state it takes
    the frame state's live values and starts before instruction `entry.index` of its block."""
    em = _emit(fn, entry)
    return "\n".join(em.lines) + "\n", em.ns


def _emit(fn: Function, entry: FrameState | None, osr: "OsrHook | None" = None) -> _Emitter:
    em = _Emitter(fn, line=fn.first_line)
    if osr is not None and entry is None:
        em.osr = {p.header: p for p in osr.points}
        em.ns.update(_osr=osr.poll, _NR=NOT_READY, _osr_every=osr.every)
    preds = predecessors(fn)
    npreds = {b: len(ps) for b, ps in preds.items()}
    start = fn.entry if entry is None else fn.blocks[entry.block]
    # An entry in the middle of a block reaches that block's successors a second way.
    if entry is not None and entry.index > 0:
        for s in start.successors:
            npreds[s] += 1
    elif entry is not None:
        npreds[start] += 1
    em.cases = {b for b in fn.blocks if npreds[b] > 1} - _duplicated(fn, preds, npreds)
    em.conditions = _branch_conditions(fn, entry)
    if entry is None:
        em.iter_counts, em.iter_items, em.ranges = _untyped_iterations(fn)
    params = fn.entry.params if entry is None else list(entry.live)
    em.out(f"def _tier0({', '.join(_v(p) for p in params)}):")
    for h in em.osr:
        em.out(f"    _o{h} = _osr_every")
    index = 0 if entry is None else entry.index
    if not em.cases:
        em.instrs(start, index, "    ")
        return em
    # The start runs once, as the last case of the dispatch loop; the first `_b` test of
    # every later dispatch is then a real block.
    prefix = not (index == 0 and start in em.cases)
    if len(em.cases) == 1 and prefix:
        em.loop = next(iter(em.cases))
        em.instrs(start, index, "    ")
        em.out("    while True:")
        em.in_loop = True
        em.instrs(em.loop, 0, " " * 8)
        return em
    em.out(f"    _b = {-1 if prefix else start.id}")
    em.out("    while True:")
    first = True
    for b in fn.blocks:
        if b in em.cases:
            em.out(f"        {'if' if first else 'elif'} _b == {b.id}:")
            em.instrs(b, 0, " " * 12)
            first = False
    if prefix:
        em.out("        else:")
        em.instrs(start, index, " " * 12)
    return em


def _untyped_iterations(fn: Function) -> tuple[set[Instr], dict[Instr, Value],
                                                dict[Instr, Value]]:
    """The for loops over untyped sequences (iteration.py): a loop header's test `k < n`,
    n the LEN (a for loop's count: the op has no other use) of a sequence or zip's min of
    such (and of ranges'); the items GETITEM(seq, k) (`inbounds`) of the loop, each paired
    with its sequence's LEN in order (zip(a, a) reads a twice); and the loop's RANGE_ITEMs
    of ranges whose bounds may not be ints, each with its RANGE_LEN."""
    defs = {ins.result: ins for b in fn.blocks for ins in b.instrs if ins.result is not None}
    counts: set[Instr] = set()
    items: dict[Instr, Value] = {}
    ranges: dict[Instr, Value] = {}
    made: list[Instr] = []                     # the RANGE_LENs of untyped bounds

    def lens(n: Value) -> list[Instr] | None:
        d = defs.get(n)
        if d is not None and d.op is Op.LEN and d.args[0].type is None:
            return [d]
        if d is not None and d.op is Op.RANGE_LEN:
            if not _plain_ints(d.args):
                made.append(d)
            return []                   # range(...)'s items are computed: its count, an int
        if d is not None and d.op is Op.CALL_BUILTIN and d.attr == "min":
            parts = [lens(x) for x in d.args]
            if all(p is not None for p in parts):
                counts.add(d)
                return [x for p in parts for x in p]
        return None

    for h in fn.blocks:
        t = h.terminator
        test = defs.get(t.args[0]) if t.op is Op.BRANCH else None
        # (k: the loop's counter, a header parameter; or its first value, 0, when the body
        # never loops back)
        if test is None or test.op is not Op.LT:
            continue
        made.clear()
        found = lens(test.args[1])
        k = test.args[0]
        for b in fn.blocks if made else ():
            for ins in b.instrs:
                if ins.op is Op.RANGE_ITEM and ins.args[3] is k:
                    for d in made:
                        if all(x is y for x, y in zip(ins.args, d.args)):
                            ranges[ins] = d.result
        if not found:
            continue
        counts.update(found)
        waiting = {}                    # sequence -> its LENs not yet paired, in order
        for d in found:
            waiting.setdefault(d.args[0], []).append(d.result)
        for b in fn.blocks:
            for ins in b.instrs:
                if ins.op is Op.GETITEM and ins.inbounds == frozenset({0}) and \
                        len(ins.args) == 2 and ins.args[1] is k and waiting.get(ins.args[0]):
                    items[ins] = waiting[ins.args[0]].pop(0)
    return counts, items, ranges


def _branch_conditions(fn: Function, entry: FrameState | None) -> dict[Value, Instr]:
    """TRUTHs and comparisons, last before their block's BRANCH, whose result only that
    branch uses (and that are not live values of the frame state tier 0 starts from)."""
    uses: dict[Value, int] = {}
    for b in fn.blocks:
        for ins in b.instrs:
            for a in ins.args:
                uses[a] = uses.get(a, 0) + 1
            for e in ins.targets:
                for a in e.args:
                    uses[a] = uses.get(a, 0) + 1
    live = set(entry.live) if entry is not None else set()
    out = {}
    for b in fn.blocks:
        t = b.terminator
        if t.op is Op.BRANCH and len(b.instrs) >= 2:
            ins = b.instrs[-2]
            if (ins.op is Op.TRUTH or ins.op in COMPARE_OPS) and t.args[0] is ins.result \
                    and uses[ins.result] == 1 and ins.result not in live:
                out[ins.result] = ins
                # `if a < b:` for bool(a < b) too
                prev = b.instrs[-3] if ins.op is Op.TRUTH and len(b.instrs) >= 3 else None
                if prev is not None and prev.op in COMPARE_OPS and prev.result is \
                        ins.args[0] and uses[prev.result] == 1 and prev.result not in live:
                    out[prev.result] = prev
    return out


TAIL_INSTRS = 8       # instructions a merge point (and what only it leads to) may have to be copied


def _duplicated(fn: Function, preds: dict[Block, list[Block]],
                npreds: dict[Block, int]) -> set[Block]:
    """Merge points to emit inline at each predecessor: not loop headers, and with what only
    they lead to at most TAIL_INSTRS instructions that end in jumps to loop headers, returns
    or raises (so no copy contains another)."""
    from ...ir.loops import natural_loops
    headers = set(natural_loops(fn, preds=preds))
    out = set()
    for b in fn.blocks:
        if npreds[b] <= 1 or b in headers:
            continue
        size, stack, seen, ok = 0, [b], {b}, True
        while stack and ok:
            x = stack.pop()
            size += len(x.instrs)
            for s in x.successors:
                if s in headers:
                    continue
                if npreds[s] > 1 or s in seen:
                    ok = False
                    break
                seen.add(s)
                stack.append(s)
            ok = ok and size <= TAIL_INSTRS
        if ok:
            out.add(b)
    return out


def _builtin(name: str):
    import builtins
    return getattr(builtins, name)


@dataclass(eq=False, repr=False)
class OsrHook:
    """What tier 0 needs to offer its loops for OSR: the points, the callable asked at each
    (`poll(header, *live)` returns the call's result or NOT_READY) and the countdown."""

    points: list
    poll: Any
    every: int


NOT_READY = type("NotReady", (), {"__repr__": lambda self: "NOT_READY"})()


def compile_tier0(fn: Function, entry: FrameState | None = None, name: str | None = None,
                  osr: OsrHook | None = None):
    """The Python function `_tier0` for `fn` (and entry), compiled with exec."""
    em = _emit(fn, entry, osr)
    src, ns = "\n".join(em.lines) + "\n", em.ns
    g = fn.module_globals
    if g is not None:
        # A warning raised in tier 0 (NumPy's overflow warnings, a deprecation) is the
        # module's, as under CPython: filters by `module=` match its name, and its registry
        # shows a "default" or "module" warning once for the module, not once per tier-0
        # function. (CPython creates the registry at the module's first warning; here it is
        # made when tier 0 is, a key the module has early.)
        if "__name__" in g:          # (without one, warnings name "<string>", as for g)
            ns["__name__"] = g["__name__"]
        ns["__warningregistry__"] = g.setdefault("__warningregistry__", {})
    code = compile(src, fn.filename, "exec")
    exec(code, ns)
    f = ns["_tier0"]
    f.__name__ = f.__qualname__ = name or fn.name
    # Tracebacks and warnings from tier 0 name the user's file and line, as CPython does:
    # every generated line takes the source line of the instruction it comes from.
    f.__code__ = relined(f.__code__, em.source_lines).replace(co_name=f.__name__,
                                                             co_qualname=f.__name__)
    f.__tierjit_source__ = src
    return f
