"""Hypothesis strategies that write random programs of the tierjit subset, as source text.

The grammar covers straight-line arithmetic over int, float and bool variables, if/elif/else,
bounded while and for loops (over range, arrays and tuples) with break and continue, array reads
and writes whose indices may be out of bounds, and accumulations that leave 64 bits.

Every generated program terminates quickly under CPython, by construction:
- loops run a literal or ``% 7``-bounded number of times, at most two deep;
- the writer tracks an upper bound on the bit length of every int and never builds an
  expression whose bound passes ``LIMIT_BITS`` (it keeps the left operand instead);
- a loop body starts by clamping every int it may have grown (``if v > 2**130 or ...: v %= M``),
  so growth per iteration cannot compound. Ints past 2**64 still happen everywhere.

The writer also tracks a *kind* per variable (int-like, float-like, or either) so that bitwise
operators and shifts only see int-like values: generated programs raise the arithmetic
exceptions of the subset (ZeroDivisionError, OverflowError, ValueError, IndexError, ...) but
rarely a TypeError. Analogue: Csmith's safe-math wrappers, done by construction instead.

Such programs are full of union types (``x if c else 1.5``, comparisons used as numbers, NumPy
scalars next to Python ints), which native tiers may leave to tier 0; ``TypedWriter`` writes
monomorphic int-only or float-only programs as well, so that native code gets tested too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

INT, FLOAT, NUM = "int", "float", "num"  # NUM: int-like or float-like, not known which
LIMIT_BITS = 4096
CLAMP = 2**130
CLAMP_BITS = 131
PARAM_BITS = 67  # int arguments (also those passed for float parameters) are within +-2**66

INT_LITERALS = (0, 1, 2, 3, -1, -2, 5, 7, 10, 100, 255, 256, -128, 2**31 - 1, 2**32, 2**62,
                2**63 - 1, -(2**63), 2**63, 2**64 + 1, -(2**65))
FLOAT_LITERALS = ("0.0", "-0.0", "0.5", "1.5", "-2.25", "3.0", "1e-10", "1e308", "-1e308",
                  "5e-324", "2.5e15", "math.inf", "-math.inf", "math.nan")
ARRAY_DTYPES = (np.int64, np.float64, np.int32, np.float32, np.uint8, np.int8, np.uint64,
                np.int16)


@dataclass(frozen=True)
class Expr:
    """A generated expression: its text, its kind and a bound on its bit length if an int."""

    text: str
    kind: str
    bits: int


@dataclass(frozen=True)
class Var:
    kind: str
    bits: int
    readonly: bool = False  # loop counters and loop variables


@dataclass(frozen=True)
class GenProgram:
    """A generated program: module source with an ``@jit def f`` and argument cases for it."""

    source: str
    cases: tuple

    def __repr__(self) -> str:  # what Hypothesis prints for a falsifying example
        return f"GenProgram(cases={self.cases!r}, source=\n{self.source})"


def arith_kind(a: str, b: str) -> str:
    if FLOAT in (a, b):
        return FLOAT
    return NUM if NUM in (a, b) else INT


def union_kind(a: str, b: str) -> str:
    return a if a == b else NUM


class ProgramWriter:
    """Writes one function body, drawing every choice from Hypothesis (so examples shrink)."""

    def __init__(self, draw, *, arrays: bool, loops: bool, budget: int) -> None:
        self.draw = draw
        self.arrays = arrays
        self.loops = loops
        self.budget = budget  # statements left to write
        self.lines: list[str] = []
        self.indent = 1
        self.env: dict[str, Var] = {}
        self.loop_depth = 0
        self.names = 0
        self.array_kind = INT
        self.seen: dict[str, Var] = {}  # every kind and the largest bound a name ever had
        self.clamps, self.clamp, self.clamp_bits = True, CLAMP, CLAMP_BITS

    # -- drawing helpers ----------------------------------------------------------------------
    def n(self, lo: int, hi: int) -> int:
        return self.draw(st.integers(lo, hi))

    def pick(self, seq):
        return self.draw(st.sampled_from(seq))

    def fresh(self, prefix: str = "v") -> str:
        self.names += 1
        return f"{prefix}{self.names}"

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.indent + line)

    # -- hooks the typed writer overrides -----------------------------------------------------
    def cond(self, depth: int) -> str:
        """A condition: here any expression (its truth value is what counts)."""
        return self.expr(depth).text

    def return_value(self) -> str:
        return self.expr(2).text

    def element_kind(self) -> str:
        return self.array_kind

    # -- expressions --------------------------------------------------------------------------
    def int_literal(self) -> Expr:
        v = self.pick(INT_LITERALS)
        return Expr(f"({v})" if v < 0 else str(v), INT, v.bit_length() + 1)

    def leaf(self) -> Expr:
        c = self.n(0, 9)
        if c <= 4 and self.env:
            name = self.pick(sorted(self.env))
            return Expr(name, self.env[name].kind, self.env[name].bits)
        if c <= 6:
            return self.int_literal()
        if c == 7:
            text = self.pick(FLOAT_LITERALS)
            return Expr(f"({text})" if text.startswith("-") else text, FLOAT, 0)
        if self.arrays and c >= 8:
            return Expr(f"a[{self.index()}]", self.array_kind, 65)
        if c == 8:
            return Expr(self.pick(("True", "False")), INT, 1)
        return self.int_literal()

    def int_leaf(self) -> Expr:
        names = sorted(k for k, v in self.env.items() if v.kind == INT)
        if names and self.n(0, 2):
            name = self.pick(names)
            return Expr(name, INT, self.env[name].bits)
        return self.int_literal()

    def int_expr(self, depth: int) -> Expr:
        e = self.expr(depth)
        return e if e.kind == INT else self.int_leaf()

    def index(self) -> str:
        c = self.n(0, 5)
        if c == 0:
            v = self.n(-3, 4)
            return f"({v})" if v < 0 else str(v)
        counters = sorted(k for k, v in self.env.items() if v.readonly and v.kind == INT
                          and v.bits <= 8)
        if c == 1 and counters:
            return self.pick(counters)
        e = self.int_expr(1)
        if self.n(0, 1):
            return f"{e.text} % (len(a) + 1)"
        return f"{e.text} % (2 * len(a) + 1) - len(a)"

    def expr(self, depth: int) -> Expr:
        if depth <= 0 or self.n(0, 3) == 0:
            return self.leaf()
        c = self.n(0, 13)
        if c <= 3:
            a, b = self.expr(depth - 1), self.expr(depth - 1)
            op = self.pick(("+", "-", "*", "+", "-", "*", "//", "%", "/"))
            if op in ("//", "%", "/") and self.n(0, 2):
                # mostly a divisor that is never zero, so programs get further
                b = Expr(f"({b.text} or {self.pick((3, 7, -2))})", b.kind, max(b.bits, 4))
            if op == "/":
                return Expr(f"({a.text} / {b.text})", FLOAT, 0)
            bits = {"+": max(a.bits, b.bits) + 1, "-": max(a.bits, b.bits) + 1,
                    "*": a.bits + b.bits, "//": a.bits + 1, "%": b.bits}[op]
            return self.bounded(Expr(f"({a.text} {op} {b.text})", arith_kind(a.kind, b.kind),
                                     bits), a)
        if c == 4:
            a = self.expr(depth - 1)
            k = self.pick((0, 1, 2, 3, -1, -2))
            if k < 0:
                return Expr(f"({a.text} ** ({k}))", FLOAT if a.kind == INT else a.kind, 0)
            return self.bounded(Expr(f"({a.text} ** {k})", a.kind, max(1, a.bits * k)), a)
        if c == 5:
            a, b = self.int_expr(depth - 1), self.int_expr(depth - 1)
            op = self.pick(("&", "|", "^", "<<", ">>", ">>"))
            if op == "<<":
                shift = str(self.n(0, 69)) if self.n(0, 1) else f"({b.text} % 70)"
                return self.bounded(Expr(f"({a.text} << {shift})", INT, a.bits + 70), a)
            bits = a.bits if op == ">>" else max(a.bits, b.bits) + 1
            return Expr(f"({a.text} {op} {b.text})", INT, bits)
        if c == 6:
            a = self.expr(depth - 1)
            op = self.pick(("-", "+", "not ", "~", "abs"))
            if op == "~":
                a = self.int_expr(depth - 1)
                return Expr(f"(~{a.text})", INT, a.bits + 1)
            if op == "not ":
                return Expr(f"(not {a.text})", INT, 1)
            if op == "abs":
                return Expr(f"abs({a.text})", a.kind, a.bits + 1)
            return Expr(f"({op}{a.text})", a.kind, a.bits + 1)
        if c == 7:
            a, b = self.expr(depth - 1), self.expr(depth - 1)
            ops = self.pick(("<", "<=", "==", "!=", ">", ">="))
            if self.n(0, 3) == 0:
                c3 = self.expr(depth - 1)
                op2 = self.pick(("<", "<=", "==", "!="))
                return Expr(f"({a.text} {ops} {b.text} {op2} {c3.text})", INT, 1)
            return Expr(f"({a.text} {ops} {b.text})", INT, 1)
        if c == 8:
            a, b = self.expr(depth - 1), self.expr(depth - 1)
            if self.n(0, 2) == 0:
                t = self.expr(depth - 1)
                return Expr(f"({a.text} if {t.text} else {b.text})", union_kind(a.kind, b.kind),
                            max(a.bits, b.bits))
            op = self.pick(("and", "or"))
            return Expr(f"({a.text} {op} {b.text})", union_kind(a.kind, b.kind),
                        max(a.bits, b.bits))
        if c == 9:
            a, b = self.expr(depth - 1), self.expr(depth - 1)
            fn = self.pick(("min", "max"))
            return Expr(f"{fn}({a.text}, {b.text})", union_kind(a.kind, b.kind),
                        max(a.bits, b.bits))
        if c == 10:
            a = self.expr(depth - 1)
            fn = self.pick(("int", "float", "round", "bool"))
            if fn == "float":
                return Expr(f"float({a.text})", FLOAT, 0)
            if fn == "bool":
                return Expr(f"bool({a.text})", INT, 1)
            return Expr(f"{fn}({a.text})", INT, a.bits if a.kind == INT else max(a.bits, 1025))
        if c == 11:
            a = self.expr(depth - 1)
            fn = self.pick(("sqrt", "floor", "exp", "log", "fabs", "sin", "ceil", "atan2"))
            if fn in ("floor", "ceil"):
                return Expr(f"math.{fn}({a.text})", INT, max(a.bits, 1025))
            if fn == "atan2":
                return Expr(f"math.atan2({a.text}, {self.leaf().text})", FLOAT, 0)
            return Expr(f"math.{fn}({a.text})", FLOAT, 0)
        if c == 12 and self.arrays:
            return Expr("len(a)", INT, 4)
        return self.leaf()

    @staticmethod
    def bounded(e: Expr, fallback: Expr) -> Expr:
        """Keep ints small enough to compute quickly: past the limit, use the left operand."""
        return e if e.bits <= LIMIT_BITS else fallback

    # -- statements ---------------------------------------------------------------------------
    def assignable(self) -> list[str]:
        return sorted(k for k, v in self.env.items() if not v.readonly)

    def target_for(self, e: Expr) -> str:
        """An existing variable or a fresh name. Inside loops an int-like variable only takes
        int-like values, so the kind assumed at the top of the body holds on every iteration."""
        names = [k for k in self.assignable()
                 if self.loop_depth == 0 or self.env[k].kind != INT or e.kind == INT]
        if names and self.n(0, 2):
            return self.pick(names)
        return self.fresh()

    def set(self, name: str, var: Var) -> None:
        self.env[name] = var
        old = self.seen.get(name, var)
        self.seen[name] = Var(union_kind(old.kind, var.kind), max(old.bits, var.bits))

    def assign(self, name: str, e: Expr) -> None:
        self.set(name, Var(e.kind, e.bits))

    def block(self, min_stmts: int = 1) -> None:
        self.indent += 1
        count = self.n(min_stmts, 3)
        for _ in range(count):
            self.statement()
        if count == 0:
            self.emit("pass")
        self.indent -= 1

    def statement(self) -> None:
        if self.budget <= 0:
            self.simple_assign()
            return
        self.budget -= 1
        options = ["assign"] * 4 + ["aug"] * 2 + ["multi", "return", "assert"]
        if self.indent <= 3:
            options += ["if"] * 2
        if self.loops and self.loop_depth < 2:
            options += ["loop"] * 3
        if self.arrays:
            options += ["array"] * 3
        if self.loop_depth > 0:
            options += ["break"]
        choice = self.pick(options)
        if choice == "aug":
            self.aug_assign()
        elif choice == "multi":
            self.multi_assign()
        elif choice == "return":
            self.emit(f"if {self.cond(2)}:")
            self.indent += 1
            self.emit(f"return {self.return_value()}")
            self.indent -= 1
        elif choice == "assert" and self.n(0, 2) == 0:
            self.emit(f"assert {self.cond(2)}, \"assertion {self.names}\"")
        elif choice == "if":
            self.if_stmt()
        elif choice == "loop":
            self.loop()
        elif choice == "array":
            self.array_write()
        elif choice == "break":
            self.emit(f"if {self.cond(2)}:")
            self.indent += 1
            self.emit(self.pick(("break", "continue")))
            self.indent -= 1
        else:
            self.simple_assign()

    def simple_assign(self) -> None:
        e = self.expr(3)
        name = self.target_for(e)
        self.emit(f"{name} = {e.text}")
        self.assign(name, e)

    def aug_assign(self) -> None:
        names = self.assignable()
        if not names:
            self.simple_assign()
            return
        name = self.pick(names)
        var = self.env[name]
        e = self.expr(2)
        ops = ["+", "-", "*", "//", "%"] + (["&", "|", "^"] if var.kind == INT == e.kind else [])
        op = self.pick(ops)
        kind = INT if op in "&|^" else arith_kind(var.kind, e.kind)
        bits = {"+": max(var.bits, e.bits) + 1, "-": max(var.bits, e.bits) + 1,
                "*": var.bits + e.bits, "//": var.bits + 1, "%": e.bits}.get(
                    op, max(var.bits, e.bits) + 1)
        if bits > LIMIT_BITS or (self.loop_depth and var.kind == INT and kind != INT):
            op, kind, bits = "-", arith_kind(var.kind, INT), var.bits + 1
            e = Expr("1", INT, 1)
        self.emit(f"{name} {op}= {e.text}")
        self.set(name, Var(kind, bits))

    def multi_assign(self) -> None:
        if self.n(0, 1):
            a, b = self.expr(2), self.expr(2)
            kind = arith_kind(a.kind, b.kind)
            q, r = self.target_for(Expr("", kind, 0)), self.fresh()
            self.emit(f"{q}, {r} = divmod({a.text}, {b.text})")
            self.set(q, Var(kind, a.bits + 1))
            self.set(r, Var(kind, b.bits))
            return
        names = self.assignable()
        if len(names) < 2:
            self.simple_assign()
            return
        x, y = self.pick(names), self.pick(names)
        vx, vy = self.env[x], self.env[y]
        if x == y or (self.loop_depth and vx.kind != vy.kind):
            self.simple_assign()
            return
        self.emit(f"{x}, {y} = {y}, {x}")
        self.set(x, vy)
        self.set(y, vx)

    def array_write(self) -> None:
        e = self.expr(2)
        if self.n(0, 3) == 0:
            self.emit(f"a[{self.index()}] += {e.text}")
        else:
            self.emit(f"a[{self.index()}] = {e.text}")

    def if_stmt(self) -> None:
        before = dict(self.env)
        self.emit(f"if {self.cond(2)}:")
        self.block()
        branches = [self.env]
        while self.n(0, 3) == 0:
            self.env = dict(before)
            self.emit(f"elif {self.cond(2)}:")
            self.block()
            branches.append(self.env)
        self.env = dict(before)
        if self.n(0, 1):
            self.emit("else:")
            self.block()
        branches.append(self.env)
        self.env = merge(branches)

    def loop(self) -> None:
        before = dict(self.env)
        header_env = {k: Var(v.kind, max(v.bits, self.clamp_bits), v.readonly)
                      for k, v in before.items()}
        c = self.n(0, 3)
        if c == 0:
            counter = self.fresh("k")
            limit = self.n(0, 7)
            # bracketed: `k < 2 and a or b` would not bound the loop
            cond = f" and ({self.cond(1)})" if self.n(0, 2) == 0 else ""
            self.emit(f"{counter} = 0")
            self.emit(f"while {counter} < {limit}{cond}:")
            self.indent += 1
            self.emit(f"{counter} += 1")
            self.indent -= 1
            header_env[counter] = Var(INT, 4, readonly=True)
        elif c == 1 and self.arrays:
            counter = self.fresh("x")
            self.emit(f"for {counter} in a:")
            header_env[counter] = Var(self.element_kind(), 65, readonly=True)
        elif c == 2:
            counter = self.fresh("t")
            items = [self.expr(1) for _ in range(self.n(1, 3))]
            kind = items[0].kind
            for it in items[1:]:
                kind = union_kind(kind, it.kind)
            self.emit(f"for {counter} in ({', '.join(i.text for i in items)},):")
            header_env[counter] = Var(kind, max(i.bits for i in items), readonly=True)
        else:
            counter = self.fresh("i")
            self.emit(f"for {counter} in {self.range_call()}:")
            header_env[counter] = Var(INT, 8, readonly=True)
        clamp_at = len(self.lines)
        self.env = header_env
        self.loop_depth += 1
        self.block()
        self.loop_depth -= 1
        # Clamp, at the top of the body, every variable the body assigns. (Float-like ones too:
        # a parameter used as a float may be passed an int.)
        grown = [k for k, v in sorted(before.items())
                 if self.clamps and not v.readonly and self.assigned_in(k, clamp_at)]
        pad = "    " * (self.indent + 1)
        self.lines[clamp_at:clamp_at] = [line for k in grown for line in (
            f"{pad}if {k} > {self.clamp} or {k} < -{self.clamp}:", f"{pad}    {k} = {k} % 1000003")]
        post = self.after_loop(before, clamp_at)
        if self.n(0, 4) == 0:
            self.env = dict(post)
            self.emit("else:")
            self.block()
            post = merge([self.env, post])
        self.env = post

    def assigned_in(self, name: str, start: int) -> bool:
        """Whether a line from ``start`` on assigns ``name`` (plainly, augmented or unpacked)."""
        return any(ln.strip().startswith((f"{name} ", f"{name},")) or f", {name} =" in ln
                   for ln in self.lines[start:])

    def after_loop(self, before: dict[str, Var], body_start: int) -> dict[str, Var]:
        """Kinds and bounds after a loop, whether it ran to the end or left by ``break``:
        a variable the body assigns holds its value from before the loop or any value it was
        ever given (``seen``); the others keep theirs."""
        out = {}
        for k, v in before.items():
            if not v.readonly and self.assigned_in(k, body_start):
                s = self.seen[k]
                v = Var(union_kind(v.kind, s.kind), max(v.bits, s.bits, self.clamp_bits))
            out[k] = v
        return out

    def range_call(self) -> str:
        c = self.n(0, 4)
        if c == 0:
            return f"range({self.n(0, 7)})"
        if c == 1:
            return f"range({self.n(-4, 6)}, {self.n(-4, 6)})"
        if c == 2:
            step = self.pick((-3, -2, -1, 1, 2, 3))
            return f"range({self.n(-6, 6)}, {self.n(-6, 6)}, {step})"
        if c == 3 and self.arrays:
            return "range(len(a))"
        return f"range({self.int_expr(1).text} % 7)"


class TypedWriter(ProgramWriter):
    """Monomorphic programs: every value a Python int, or every value a float.

    These are the programs native tiers compile rather than leave to tier 0 (which is where
    union types go): comparisons appear only as conditions, array elements and foreign loop
    variables only through ``int()``/``float()``, constants stay within 64 bits, and every
    return is a tuple of the same length. Ints still leave 64 bits, through arithmetic and
    through arguments, so overflow guards and deoptimisation get exercised.
    """

    INT_LITERALS = (0, 1, 2, 3, -1, -2, 5, 7, 10, 100, 255, -128, 2**31 - 1, 2**32, 2**62,
                    2**63 - 1, -(2**63), 3037000500)
    FLOAT_LITERALS = ("0.0", "-0.0", "0.5", "1.5", "-2.25", "3.0", "1e-10", "1e308", "-1e308",
                      "5e-324", "2.5e15", "math.inf", "math.nan", "0.1")

    def __init__(self, draw, *, typed: str, **kwargs) -> None:
        super().__init__(draw, **kwargs)
        self.typed = typed
        self.arity = self.n(1, 3)
        # 2**62 keeps the clamp's constant inside 64 bits; floats never need clamping.
        self.clamps, self.clamp, self.clamp_bits = typed == INT, 2**62, 63
        self.array_kind = typed

    def int_literal(self) -> Expr:
        v = self.pick(self.INT_LITERALS)
        return Expr(f"({v})" if v < 0 else str(v), INT, v.bit_length() + 1)

    def convert(self, text: str) -> str:
        return f"{'int' if self.typed == INT else 'float'}({text})"

    def literal(self) -> Expr:
        if self.typed == INT:
            return self.int_literal()
        text = self.pick(self.FLOAT_LITERALS)
        return Expr(f"({text})" if text.startswith("-") else text, FLOAT, 0)

    def leaf(self) -> Expr:
        c = self.n(0, 9)
        if c <= 5 and self.env:
            name = self.pick(sorted(self.env))
            var = self.env[name]
            text = name if var.kind == self.typed else self.convert(name)
            return Expr(text, self.typed, var.bits)
        if self.arrays and c >= 8:
            return Expr(self.convert(f"a[{self.index()}]"), self.typed, 65)
        return self.literal()

    def int_leaf(self) -> Expr:
        return self.leaf() if self.typed == INT else super().int_leaf()

    def int_expr(self, depth: int) -> Expr:
        return self.expr(depth) if self.typed == INT else super().int_leaf()

    def element_kind(self) -> str:
        return "numpy scalar"  # never the typed kind: read through int()/float()

    def cond(self, depth: int) -> str:
        a, b = self.expr(depth - 1), self.expr(depth - 1)
        text = f"{a.text} {self.pick(('<', '<=', '==', '!=', '>', '>='))} {b.text}"
        c = self.n(0, 5)
        if c == 0:
            return f"not ({text})"
        if c == 1:
            return f"({text}) {self.pick(('and', 'or'))} ({self.cond(depth - 1)})"
        return text

    def return_value(self) -> str:
        return f"({', '.join(self.expr(2).text for _ in range(self.arity))},)"

    def final_return(self) -> str:
        names = sorted(k for k, v in self.env.items() if v.kind == self.typed)
        return f"({', '.join(self.pick(names) for _ in range(self.arity))},)"

    def expr(self, depth: int) -> Expr:
        if depth <= 0 or self.n(0, 3) == 0:
            return self.leaf()
        c = self.n(0, 6)
        t = self.typed
        if c <= 2:
            a, b = self.expr(depth - 1), self.expr(depth - 1)
            op = self.pick(("+", "-", "*", "//", "%") + (("/",) if t == FLOAT else ()))
            if op in ("//", "%", "/") and self.n(0, 2):
                b = Expr(f"({b.text} or {self.literal().text})", t, max(b.bits, 65))
            bits = {"+": max(a.bits, b.bits) + 1, "-": max(a.bits, b.bits) + 1,
                    "*": a.bits + b.bits, "//": a.bits + 1, "%": b.bits, "/": 0}[op]
            return self.bounded(Expr(f"({a.text} {op} {b.text})", t, bits), a)
        if c == 3:
            a = self.expr(depth - 1)
            k = self.pick((0, 1, 2, 3) + ((-1, -2) if t == FLOAT else ()))
            return self.bounded(Expr(f"({a.text} ** {k})" if k >= 0 else f"({a.text} ** ({k}))",
                                     t, max(1, a.bits * k)), a)
        if c == 4 and t == INT:
            a, b = self.expr(depth - 1), self.expr(depth - 1)
            op = self.pick(("&", "|", "^", "<<", ">>"))
            if op == "<<":
                shift = str(self.n(0, 66)) if self.n(0, 1) else f"({b.text} % 66)"
                return self.bounded(Expr(f"({a.text} << {shift})", INT, a.bits + 66), a)
            bits = a.bits if op == ">>" else max(a.bits, b.bits) + 1
            return Expr(f"({a.text} {op} {b.text})", INT, bits)
        if c == 4:
            a = self.expr(depth - 1)
            fn = self.pick(("sqrt", "exp", "log", "sin", "fabs", "atan2", "floor"))
            if fn == "atan2":
                return Expr(f"math.atan2({a.text}, {self.leaf().text})", FLOAT, 0)
            if fn == "floor":
                return Expr(f"float(math.floor({a.text}))", FLOAT, 0)
            return Expr(f"math.{fn}({a.text})", FLOAT, 0)
        if c == 5:
            a = self.expr(depth - 1)
            op = self.pick(("-", "abs") + (("~",) if t == INT else ()))
            return Expr(f"abs({a.text})" if op == "abs" else f"({op}{a.text})", t, a.bits + 1)
        a, b = self.expr(depth - 1), self.expr(depth - 1)
        if self.n(0, 1):
            return Expr(f"{self.pick(('min', 'max'))}({a.text}, {b.text})", t,
                        max(a.bits, b.bits))
        return Expr(f"({a.text} if {self.cond(depth - 1)} else {b.text})", t,
                    max(a.bits, b.bits))


def merge(branches: list[dict[str, Var]]) -> dict[str, Var]:
    """Variables assigned on every branch, with joined kinds and the largest bound."""
    common = set(branches[0]).intersection(*branches[1:])
    out = {}
    for k in sorted(common):
        vs = [b[k] for b in branches]
        kind = vs[0].kind
        for v in vs[1:]:
            kind = union_kind(kind, v.kind)
        out[k] = Var(kind, max(v.bits for v in vs), vs[0].readonly)
    return out


# ---------------------------------------------------------------------------------------------
# Arguments

EDGE_INTS = (0, 1, -1, 2, -7, 7, 2**63 - 1, -(2**63), 2**63 - 2, -(2**63) + 1, 2**63,
             -(2**63) - 1, 2**64, -(2**64), 2**31, 3037000500, 2**32 - 1)
EDGE_FLOATS = (0.0, -0.0, 1.0, -1.0, 0.5, -2.5, float("nan"), float("inf"), float("-inf"),
               5e-324, -5e-324, 1e308, -1e308, 2.2250738585072014e-308, 9007199254740993.0)


def int_values():
    return st.one_of(st.sampled_from(EDGE_INTS), st.integers(-20, 20),
                     st.integers(-(2**66), 2**66))


def float_values():
    return st.one_of(st.sampled_from(EDGE_FLOATS), st.floats(-100, 100), st.floats())


def param_value(kind: str):
    """A value for a parameter of this kind -- sometimes of another type of the same kind, so
    code specialised on the first call meets a new type on a later one."""
    if kind == "bool":
        return st.one_of(st.booleans(), st.sampled_from((0, 1, np.True_)))
    if kind == INT:
        return st.one_of(int_values(), int_values(), st.booleans(),
                         st.integers(-(2**63), 2**63 - 1).map(np.int64))
    return st.one_of(float_values(), float_values(), st.integers(-(2**53), 2**53),
                     float_values().map(np.float64), st.floats(width=32).map(np.float32))


def typed_value(kind: str):
    """A Python int (some past 64 bits) or a Python float, nothing else."""
    return int_values() if kind == INT else float_values()


def array_values(dtype):
    """A 1-D array of this dtype: contiguous, every other element, or reversed."""
    if np.dtype(dtype).kind == "f":
        elements = st.floats(width=np.dtype(dtype).itemsize * 8)
    else:
        info = np.iinfo(dtype)
        elements = st.one_of(st.integers(int(info.min), int(info.max)),
                             st.sampled_from((0, 1, int(info.min), int(info.max))))
    layout = st.sampled_from(("contiguous", "strided", "reversed"))
    sizes = st.one_of(st.integers(1, 7), st.integers(1, 7), st.just(0))
    values = sizes.flatmap(lambda n: st.lists(elements, min_size=n, max_size=n))
    return st.tuples(values, layout).map(
        lambda t: _layout(np.array(t[0], dtype=dtype), t[1]))


def _layout(a: np.ndarray, layout: str) -> np.ndarray:
    if layout == "strided":
        doubled = np.zeros(2 * len(a), dtype=a.dtype)
        doubled[::2] = a
        return doubled[::2]
    return a[::-1] if layout == "reversed" else a


@st.composite
def programs(draw, *, arrays: bool = False, loops: bool = True, budget: int = 10,
             typed: str | None = None):
    """A GenProgram: source text of ``@jit def f(...)`` and three argument cases.

    ``typed`` (INT or FLOAT) writes monomorphic programs with a TypedWriter instead."""
    if typed:
        w = TypedWriter(draw, typed=typed, arrays=arrays, loops=loops, budget=budget)
        kinds = [typed] * draw(st.integers(1, 4))
    else:
        w = ProgramWriter(draw, arrays=arrays, loops=loops, budget=budget)
        kinds = [draw(st.sampled_from((INT, INT, FLOAT, "bool"))) for _ in range(draw(
            st.integers(1, 4)))]
    params = [f"p{i}" for i in range(len(kinds))]
    for name, kind in zip(params, kinds):
        w.set(name, Var(FLOAT if kind == FLOAT else INT, 1 if kind == "bool" else PARAM_BITS))
    dtype = None
    if arrays:
        dtype = draw(st.sampled_from(ARRAY_DTYPES)) if not typed else (
            np.int64 if typed == INT else np.float64)
        w.array_kind = FLOAT if np.dtype(dtype).kind == "f" else INT
    for _ in range(draw(st.integers(2, 8))):
        w.statement()
    if typed:
        w.emit(f"return {w.final_return()}")
    else:
        results = draw(st.lists(st.sampled_from(sorted(w.env)), min_size=1, max_size=4))
        w.emit(f"return ({', '.join(results)},)")
    signature = ", ".join((["a"] if arrays else []) + params)
    source = "\n".join(["import math", "", "", "@jit", f"def f({signature}):", *w.lines, ""])
    compile(source, "<generated>", "exec")  # a generator bug should fail loudly, here
    cases = []
    for _ in range(3):
        args = [draw(typed_value(k) if typed else param_value(k)) for k in kinds]
        if arrays:
            args.insert(0, draw(array_values(dtype)))
        cases.append(tuple(args))
    return GenProgram(source, tuple(cases))
