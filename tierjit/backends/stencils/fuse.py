"""Fused selection for the baseline tier (mixed into select.Selection): two float or int
operations as one stencil (`a * b + c`, `zr * zr - zi * zi + cr`), and array elements read by
the float operation that uses them instead of stored to a slot first (`pos[3 * i] - pos[3 * j]`,
`s += a[i, k] * b[k, j]`). Each fused stencil makes its guards resume before its first
instruction, which has had no effect yet, so the frame states stay those of that one."""

from __future__ import annotations

from ...ir.nodes import Block, Instr, Value
from ...ir.ops import Op
from .kinds import _FLOAT_KINDS, kind

_ADD, _SUB, _MUL, _CONST, _GETITEM = Op.ADD, Op.SUB, Op.MUL, Op.CONST, Op.GETITEM
# (fused pair, the types of x, y, x op y, c, the result) -> the fused stencil or None:
# a function of the types alone, remembered like select_ops.SIMPLE
_MUL_ADD: dict[tuple, str | None] = {}
_DOUBLE_OPERANDS = _FLOAT_KINDS | {"union"}
# the float ops an operand read from an array element can be fused into (templates.ELEMENT_OPS)
_ELEMENT_OPS = {Op.ADD: "add", Op.SUB: "sub", Op.MUL: "mul", Op.TRUEDIV: "truediv"}


class FusedSelection:
    """The fusing half of Selection (select.py's select() asks it at each candidate)."""

    def mul_add(self, b: Block, i: int, mul: Instr, add: Instr) -> bool:
        """`a * b + c` (or `c + a * b`) as one stencil when the product (used once: select()
        checks) is used only by the addition right after it (constants aside), both on ints
        or both on floats of one flavour, with no conversion and no union result; and so
        any other pair of float + - * (templates.PAIR_OPS: `zr * zr - zi * zi + cr`,
        `v - dx * mj`)."""
        r = mul.result
        op2 = add.op
        # (identity tests: hashing an Op is a Python-level call, see _ADD)
        second = "add" if op2 is _ADD else "sub" if op2 is _SUB else "mul" if op2 is _MUL \
            else None
        if second is None:
            return False
        use = _one_use(r, add)
        if use is None:
            return False
        rev, other = use
        op1 = mul.op
        first = "mul" if op1 is _MUL else "add" if op1 is _ADD else "sub"
        if first == "mul" and second == "add":
            fused = "addmul" if rev else "muladd"
        else:
            fused = f"{first}_{rev}{second}"
        x, y = mul.args
        s = add.result
        key = (fused, x.type, y.type, r.type, other.type, s.type)
        name = _MUL_ADD.get(key, "")
        if name == "":
            kinds = (kind(x.type), kind(y.type), kind(r.type), kind(other.type), kind(s.type))
            name = _MUL_ADD[key] = self.mul_add_stencil(fused, first, second, kinds)
        if name is None:
            return False
        o = self.offset
        h = self.add(name, A=o[x], B=o[y], D=o[other], C=o[s])
        self.deopt(h, b, i)
        return True

    def mul_add_stencil(self, fused: str, first: str, second: str,
                        kinds: tuple[str, ...]) -> str | None:
        """The stencil of a fused pair for the kinds of x, y, x op y, c and the result, or
        None."""
        m = self.arith(first, kinds[0], kinds[1], kinds[2])
        a = self.arith(second, kinds[2], kinds[3], kinds[4])
        # operands may be float | np.float64 (the stencil reads their double: a loop's
        # `s += a[i] * b[i]`), results not (they would need a tag)
        if m is None or a is None:
            return None
        flavour = m[m.index("_"):]                  # _ii, _ffp or _ffn
        if a[a.index("_"):] != flavour or "union" in (kinds[2], kinds[4]) \
                or m[-1] in "pn" and not _DOUBLE_OPERANDS.issuperset(kinds) \
                or flavour == "_ii" and fused not in ("muladd", "addmul"):
            return None                             # int pairs: only the multiply-adds
        return fused + flavour

    def element_operands(self, b: Block, i: int, instrs: list[Instr]) -> tuple[int, ...]:
        """A float64 element read by a float + - * / (or a fused multiply-add) right after
        it (constants and one more such read aside), read inside that operation's stencil
        (templates.OPERAND_SOURCES) instead of stored to a slot: `pos[3 * i] - pos[3 * j]`,
        `s += a[i, k] * b[k, j]`. Only reads without checks (proven in bounds) of C-contiguous
        arrays, each used by that operation alone. The stencil's guards resume before the
        first read, which, like the second, has no effect. Returns the indices of the
        instructions fused into the one at i (none: nothing fused)."""
        uses = self.uses
        first = self.element_source(instrs[i])
        if first is None:
            return ()
        sources = {instrs[i].result: first}
        at = {instrs[i].result: i}
        j = after_consts(instrs, i)
        c = instrs[j]
        if c.op is _GETITEM and uses.get(c.result) == 1:
            second = self.element_source(c)
            if second is not None:
                sources[c.result], at[c.result] = second, j
                j = after_consts(instrs, j)
                c = instrs[j]
        if c.result is None or len(c.args) != 2:
            return ()
        x, y = c.args
        if x is y or (x not in sources and y not in sources):
            return ()
        r, o = c.result, self.offset
        name = None
        if c.op is _MUL and uses.get(r) == 1:
            k = after_consts(instrs, j)
            add = instrs[k]
            use = _one_use(r, add) if add.op is _ADD else None
            if use is not None and use[1] not in sources:
                fused, other = ("addmul" if use[0] else "muladd"), use[1]
                kinds = (kind(x.type), kind(y.type), kind(r.type), kind(other.type),
                         kind(add.result.type))
                if self.mul_add_stencil(fused, "mul", "add", kinds) == f"{fused}_ffn":
                    name, holes, skip = fused, {"D": o[other], "C": o[add.result]}, (j, k)
        if name is None:
            base = _ELEMENT_OPS.get(c.op)
            if base is None or kind(r.type) == "union" or not (
                    kind(x.type) in _DOUBLE_OPERANDS and kind(y.type) in _DOUBLE_OPERANDS
                    and self.arith(base, kind(x.type), kind(y.type), kind(r.type))
                    == f"{base}_ffn"):
                return ()
            name, holes, skip = base, {"C": o[r]}, (j,)
        if len(sources) > sum(v in sources for v in (x, y)):
            return ()                       # a read the operation does not use: not moved
        sx, sy = "s", "s"
        if x in sources:
            sx, (arr, *idx) = sources[x]
            holes.update(zip(("A", "TA", "TB"), (arr, *idx)))
        else:
            holes["A"] = o[x]
        if y in sources:
            sy, (arr, *idx) = sources[y]
            holes.update(zip(("B", "TC", "E"), (arr, *idx)))
        else:
            holes["B"] = o[y]
        h = self.add(f"{name}_ffn_{sx}{sy}", **holes)
        self.deopt(h, b, i)
        return tuple(v for v in at.values() if v != i) + skip

    def element_source(self, ins: Instr) -> tuple[str, tuple[int, ...]] | None:
        """(source, (array slot, index slots)) of a getitem an operation can read itself:
        a float64 element of a 1-D or 2-D C-contiguous array, every index in bounds."""
        e = self.element(ins)
        if e is None:
            return None
        t, elem, mode, holes = e
        if elem != "f64" or mode != "_u_C" or t.ndim > 2:
            return None
        return f"e{t.ndim}", tuple(holes[h] for h in ("A", "B", "D")[:t.ndim + 1])


def after_consts(instrs: list[Instr], i: int) -> int:
    """The index of the first instruction after i that is not a constant (constants emit
    no code). A block ends with a terminator, so there is one."""
    j = i + 1
    while instrs[j].op is _CONST:
        j += 1
    return j


def _one_use(r: Value, ins: Instr) -> tuple[str, Value] | None:
    """How the binary ins uses r once: ("", the other operand) when r is its first operand,
    ("r", the other) when its second; None when it uses r twice or not at all."""
    p, q = ins.args
    if p is r and q is not r:
        return "", q
    if q is r and p is not r:
        return "r", p
    return None
