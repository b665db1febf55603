"""Straight-line arithmetic functions as register-machine code, with constants as slots.

Analogue: instruction selection for the register machine of encoding.py. A template whose body
is straight-line arithmetic over its inputs, its params and numeric literals —

    assignments to names (also `a = b = e`, `x op= e`, annotated), `return e` last,
    `+ - * /` on two operands, unary `-` and `+`, names, int/float literals, and free names
    bound to int/float constants in the template's globals

— becomes `RegisterCode`: instructions over registers (inputs first, then params, locals and
temporaries) in which each param is one CONST whose value is a *slot*, and a part made of
literals only is one CONST, computed by Python as when the program is called. `instantiate`
fills the slots for many variants at once with NumPy, so a population of 10,000 variants of
one structure costs a few array operations, not 10,000 Python-level translations.

Anything else (branches, loops, calls, `**`, reading a local before assigning it) is reported
as a reason string; such programs are evaluated by calling them (see population.py).
"""

from __future__ import annotations

import ast
import operator
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .encoding import MAX_REGS, Op, Programs

if TYPE_CHECKING:  # pragma: no cover - typing only
    import numpy as np

    from .template import Template

_BINOPS = {ast.Add: Op.ADD, ast.Sub: Op.SUB, ast.Mult: Op.MUL, ast.Div: Op.DIV}


@dataclass(frozen=True, eq=False)
class RegisterCode:
    """One structure in the array encoding; CONST rows listed in `slot_rows` take the value
    of param `slot_params[i]` of each variant."""

    code: np.ndarray          # int32 (m, 4)
    values: np.ndarray        # float64 (m,): literal constants; 0 in slot rows
    slot_rows: np.ndarray     # int64: rows whose value is a param
    slot_params: np.ndarray   # int64: which param
    output: int
    n_inputs: int
    n_regs: int
    free: tuple = ()          # (name, value) of each free name whose value is in the code


class _NotStraight(Exception):
    pass


class _Lowering:
    def __init__(self, t: Template):
        self.t = t
        self.regs: dict[str, int] = {n: i for i, n in enumerate(t.inputs)}
        self.n = len(t.inputs)
        self.rows: list[tuple[int, int, int, int]] = []
        self.values: list[float] = []
        self.slots: list[tuple[int, int]] = []     # (row, param index)
        self.params = {p: k for k, p in enumerate(t.params)}
        self.locals = set(_assigned(t.fdef)) - set(t.inputs)
        self.known: dict[str, Any] = {}     # names holding a literal part's value (`literal`)
        self.free: dict[str, Any] = {}      # free names read from the namespace, and values

    def fail(self, node: ast.AST, what: str) -> None:
        raise _NotStraight(f"line {getattr(node, 'lineno', '?')}: {what}")

    def new_reg(self) -> int:
        self.n += 1
        if self.n > MAX_REGS:
            raise _NotStraight(f"more than {MAX_REGS} registers")
        return self.n - 1

    def emit(self, op: Op, d: int, a: int = 0, b: int = 0, value: float = 0.0) -> int:
        self.rows.append((int(op), d, a, b))
        self.values.append(value)
        return d

    def run(self) -> RegisterCode:
        import numpy as np
        body = self.t.fdef.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]                                  # docstring
        out = None
        for k, s in enumerate(body):
            if isinstance(s, ast.Return):
                if k != len(body) - 1:
                    self.fail(s, "return before the end")
                if s.value is None:
                    self.fail(s, "return without a value")
                out = self.expr(s.value)
            elif isinstance(s, ast.Assign):
                self.assign([self.target(t) for t in s.targets], s.value)
            elif isinstance(s, ast.AnnAssign) and s.value is not None and s.simple:
                self.assign([self.target(s.target)], s.value)
            elif isinstance(s, ast.AugAssign):
                n = self.target(s.target)
                op = _BINOPS.get(type(s.op))
                if op is None:
                    self.fail(s, f"augmented assignment with {type(s.op).__name__}")
                if n not in self.regs:
                    self.fail(s, f"{n!r} read before it is assigned")
                a = self.regs[n]
                value = ast.BinOp(ast.Name(n, ast.Load()), s.op, s.value, lineno=s.lineno)
                if self.literal(value) is not _MISSING:
                    self.assign([n], value)         # the name keeps a literal's value
                    continue
                self.known.pop(n, None)
                b = self.expr(s.value)
                self.emit(op, a, a, b)
            elif isinstance(s, ast.Pass):
                continue
            else:
                self.fail(s, f"statement {type(s).__name__}")
        if out is None:
            raise _NotStraight("no return statement at the end")
        rows = np.asarray(self.rows, np.int32).reshape(-1, 4)
        slots = np.asarray(self.slots, np.int64).reshape(-1, 2)
        return RegisterCode(rows, np.asarray(self.values, np.float64), slots[:, 0].copy(),
                            slots[:, 1].copy(), out, len(self.t.inputs), max(self.n, 1),
                            tuple(self.free.items()))

    def target(self, t: ast.expr) -> str:
        if not isinstance(t, ast.Name):
            self.fail(t, f"assignment to {type(t).__name__}")
        return t.id

    def assign(self, names: list[str], value: ast.expr) -> None:
        """names = value. A name that has a register gets the result written straight into
        it; a new name adopts the register of a temporary (never another name's: a later
        write to one must not change the other). A name assigned a part made of literals
        holds what Python computed (`known`), as it holds a Python int when called."""
        v = self.literal(value)
        self.lower_assign(names, value)
        for name in names:
            if v is _MISSING:
                self.known.pop(name, None)
            else:
                self.known[name] = v

    def lower_assign(self, names: list[str], value: ast.expr) -> None:
        if len(names) == 1 and names[0] in self.regs:
            self.expr(value, self.regs[names[0]])
            return
        r = self.expr(value)
        for name in names:
            d = self.regs.get(name)
            if d is None:
                if r not in self.regs.values():
                    self.regs[name] = r
                    continue
                d = self.regs[name] = self.new_reg()
            if d != r:
                self.emit(Op.COPY, d, r)

    def expr(self, e: ast.expr, dest: int | None = None) -> int:
        """Lower e; the result lands in `dest` when given (else a register of its own, or the
        register of a name)."""
        if isinstance(e, (ast.BinOp, ast.UnaryOp)):
            v = self.literal(e)
            if v is not _MISSING:
                try:
                    value = float(v)
                except OverflowError:
                    self.fail(e, f"constant {v!r} out of float range")
                return self.emit(Op.CONST, self.new_reg() if dest is None else dest,
                                 value=value)
        if isinstance(e, ast.BinOp):
            op = _BINOPS.get(type(e.op))
            if op is None:
                self.fail(e, f"operator {type(e.op).__name__}")
            a = self.expr(e.left)
            b = self.expr(e.right)
            return self.emit(op, self.new_reg() if dest is None else dest, a, b)
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.UAdd)):
            a = self.expr(e.operand)
            op = Op.NEG if isinstance(e.op, ast.USub) else Op.COPY
            return self.emit(op, self.new_reg() if dest is None else dest, a)
        if isinstance(e, ast.Constant):
            v = e.value
            if type(v) not in (int, float):
                self.fail(e, f"constant {v!r}")
            try:
                value = float(v)
            except OverflowError:
                self.fail(e, f"constant {v!r} out of float range")
            return self.emit(Op.CONST, self.new_reg() if dest is None else dest, value=value)
        if isinstance(e, ast.Name):
            if e.id in self.regs and (e.id not in self.params):
                r = self.regs[e.id]
            elif e.id in self.locals:
                self.fail(e, f"{e.id!r} read before it is assigned")
            elif e.id in self.params:
                r = self.new_reg()
                self.slots.append((len(self.rows), self.params[e.id]))
                self.emit(Op.CONST, r)
            else:
                v = self.global_value(e.id)
                if type(v) not in (int, float):
                    self.fail(e, f"free name {e.id!r} that is not a numeric constant")
                r = self.emit(Op.CONST, self.new_reg(), value=float(v))
            if dest is not None and dest != r:
                return self.emit(Op.COPY, dest, r)
            return r
        self.fail(e, f"expression {type(e).__name__}")
        raise AssertionError  # pragma: no cover

    def global_value(self, name: str) -> Any:
        self.free[name] = v = self.t.namespace.get(name, _MISSING)
        return v

    def literal(self, e: ast.expr) -> Any:
        """The value of e as one constant when it is made of literals (and free names bound
        to numbers) only, else _MISSING. Called, the program has Python compute such a part
        before NumPy sees it, so it is computed so here too: `-0` is 0 (an int has no -0.0),
        `16777217 * 3` is exact before it is rounded, and `3 / 0` raises (the program is
        then called, and gives nan)."""
        if isinstance(e, ast.Constant) and type(e.value) in (int, float):
            return e.value
        if isinstance(e, ast.Name):
            if e.id in self.known:
                return self.known[e.id]
            if e.id in self.regs or e.id in self.locals or e.id in self.params:
                return _MISSING
            v = self.global_value(e.id)
            return v if type(v) in (int, float) else _MISSING
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.UAdd)):
            a = self.literal(e.operand)
            return a if a is _MISSING else -a if isinstance(e.op, ast.USub) else +a
        if isinstance(e, ast.BinOp) and type(e.op) in _PY_BINOPS:
            a, b = self.literal(e.left), self.literal(e.right)
            if a is _MISSING or b is _MISSING:
                return _MISSING
            try:
                return _PY_BINOPS[type(e.op)](a, b)
            except ArithmeticError as err:          # 3 / 0; an int too big for a float
                self.fail(e, f"constant expression raising {type(err).__name__}")
        return _MISSING


_MISSING = object()
_PY_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
              ast.Div: operator.truediv}


def _assigned(fdef: ast.FunctionDef) -> list[str]:
    """Names assigned by the body's top-level statements (a compound statement, which may
    assign more, makes the lowering fail anyway)."""
    out = []
    for s in fdef.body:
        if isinstance(s, ast.Assign):
            out += [t.id for t in s.targets if isinstance(t, ast.Name)]
        elif isinstance(s, (ast.AugAssign, ast.AnnAssign)) and isinstance(s.target, ast.Name):
            out.append(s.target.id)
    return out


def lower(t: Template) -> RegisterCode | str:
    """The template as RegisterCode, or why it cannot be."""
    try:
        return _Lowering(t).run()
    except _NotStraight as e:
        return str(e)


_current: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()   # Template -> latest lowering


def current(t: Template) -> RegisterCode | str:
    """`t.register_code()`, lowered again when a free name it read has been rebound since.
    The lowering writes the values of free names into the code, and a program called reads
    them at each call: a module global rebound after the first evaluate was ignored by every
    later one. Checking costs a lookup per free name; lowering again happens once per
    rebinding."""
    rc = _current.get(t) or t.register_code()
    ns = t.namespace
    if isinstance(rc, RegisterCode) and not all(
            _same(ns.get(name, _MISSING), v) for name, v in rc.free):
        rc = _current[t] = lower(t)
    return rc


def _same(a: Any, b: Any) -> bool:
    """a and b give the same code: the same object, or numbers of one type and the same
    value, sign of zero included (repr tells -0.0 from 0.0 and matches nan to itself)."""
    return a is b or (type(a) is type(b) and type(a) in (int, float) and repr(a) == repr(b))


def instantiate(rc: RegisterCode, consts: Any) -> Programs:
    """Programs for V variants of one structure: consts is (V, n_params), row v = the values
    of variant v's params (anything NumPy converts to float64)."""
    import numpy as np
    consts = np.asarray(consts, np.float64)
    n_var = consts.shape[0]
    m = len(rc.code)
    values = np.broadcast_to(rc.values, (n_var, m)).copy()
    if len(rc.slot_rows):
        values[:, rc.slot_rows] = consts[:, rc.slot_params]
    code = np.broadcast_to(rc.code, (n_var, m, 4)).reshape(-1, 4)
    starts = np.arange(n_var + 1, dtype=np.int64) * m
    return Programs(np.ascontiguousarray(code), values.reshape(-1), starts,
                    np.full(n_var, rc.output, np.int32), rc.n_inputs, rc.n_regs)
