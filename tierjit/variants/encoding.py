"""The compact array encoding of register-machine programs (as in linear genetic programming).

A population of P programs is five arrays and two numbers, with no Python object per program:

    code    int32   (N, 4)   one row per instruction: (op, dst, a, b)
    values  float64 (N,)     the constant of a CONST instruction (ignored by other ops)
    starts  int64   (P + 1,) program p is instructions starts[p] : starts[p + 1]
    output  int32   (P,)     the register holding program p's result
    n_inputs, n_regs         registers 0 .. n_inputs-1 start as the columns of X (one row at a
                             time), registers n_inputs .. n_regs-1 start as 0.0

Instructions (`Op`): ``d = values[s]`` (CONST), ``d = a + b`` / ``-`` / ``*`` / ``/``, ``d = a``
(COPY), ``d = -a`` (NEG). Unused operand fields should be 0. Every register is a value of X's
dtype: a constant is rounded to it once, by CONST, and every operation is NumPy's for that dtype
(so the program `v1 = v1 / v2` with v2 = 0 gives inf or nan, never an exception).

In the Python notation of `to_source`, register r is named v{r+1}: programs written
as `v4 = v1 + v2; v5 = v4 * v3` with input v1 and result v5 are n_inputs=1, n_regs=5, output=4.
"""

from __future__ import annotations

import enum
import numbers
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover - typing only
    import numpy as np

MAX_REGS = 4096   # the evaluator keeps n_regs blocks of rows per thread in cache


class Op(enum.IntEnum):
    """Opcodes of the register machine (the `op` column of `code`)."""

    CONST = 0   # d = values[s]
    ADD = 1     # d = a + b
    SUB = 2     # d = a - b
    MUL = 3     # d = a * b
    DIV = 4     # d = a / b   (IEEE: x/0 is ±inf, 0/0 is nan)
    COPY = 5    # d = a
    NEG = 6     # d = -a


BINARY = {Op.ADD: "+", Op.SUB: "-", Op.MUL: "*", Op.DIV: "/"}


@dataclass(frozen=True, eq=False)
class Programs:
    """A population in the array encoding; analogous to a linear-GP genome matrix.

    Build one with `Programs.from_arrays` (which converts and checks); the constructor takes
    arrays that are already of the right dtypes and shapes."""

    code: np.ndarray
    values: np.ndarray
    starts: np.ndarray
    output: np.ndarray
    n_inputs: int
    n_regs: int

    # -- building --------------------------------------------------------------------------
    @classmethod
    def from_arrays(cls, code: Any, values: Any = None, starts: Any = None, *,
                    n_inputs: int = 1, n_regs: int | None = None,
                    output: Any = None) -> Programs:
        """Programs from array-likes. `code` is (N, 4) with `starts` (P + 1 offsets), or
        (P, L, 4) for P programs of L instructions each (then `values` may be (P, L)).
        `n_regs` defaults to one more than the largest register named; `output` (an int or
        one per program) to the last register."""
        import numpy as np
        code = np.asarray(code)
        if code.ndim == 3 and code.shape[2] == 4:
            if starts is not None:
                raise ValueError("Programs: starts must not be given with (P, L, 4) code")
            n_prog, length = code.shape[:2]
            starts = np.arange(n_prog + 1, dtype=np.int64) * length
            code = code.reshape(-1, 4) if code.size else np.zeros((0, 4), np.int32)
        elif starts is None:
            starts = [0, len(code)]
        if code.ndim != 2 or code.shape[1] != 4:
            raise ValueError(f"Programs: code must have shape (N, 4) or (P, L, 4); got "
                             f"{code.shape}")
        code = _integers(code, "code")
        starts = np.ascontiguousarray(_integers(starts, "starts"), dtype=np.int64)
        n_inputs = _count(n_inputs, "n_inputs")
        if n_regs is not None and not 1 <= _count(n_regs, "n_regs") <= MAX_REGS:
            raise ValueError(f"Programs: n_regs must be an int 1..{MAX_REGS}; got {n_regs!r}")
        _check_starts(starts, len(code))
        # every range is checked before the cast to int32, which wraps: register 2**32 + 1
        # became register 1, and the program evaluated as another one
        if code.dtype != np.int32:
            _check_code(code, starts, MAX_REGS if n_regs is None else _count(n_regs, "n_regs"))
        code = np.ascontiguousarray(code, dtype=np.int32)
        values = np.zeros(len(code)) if values is None else np.asarray(values, np.float64)
        values = np.ascontiguousarray(values.reshape(-1))
        if n_regs is None:
            n_regs = max(int(code[:, 1:].max()) + 1 if len(code) else 1, n_inputs)
        n_regs = _count(n_regs, "n_regs")
        n_prog = len(starts) - 1
        out = _integers(n_regs - 1 if output is None else output, "output")
        if out.shape not in ((), (n_prog,)):
            raise ValueError(f"Programs: output must be one register or one per program "
                             f"({n_prog}); got shape {out.shape}")
        out = np.broadcast_to(out, (max(n_prog, 0),))
        _check_output(out, n_regs)
        out = np.ascontiguousarray(out, dtype=np.int32)
        progs = cls(code, values, starts, out, n_inputs, n_regs)
        progs.check()
        return progs

    @classmethod
    def concat(cls, parts: list[Programs]) -> Programs:
        """One population holding the programs of every part, in order (same n_inputs)."""
        import numpy as np
        if not parts:
            raise ValueError("Programs.concat: nothing to concatenate")
        n_inputs = parts[0].n_inputs
        if any(p.n_inputs != n_inputs for p in parts):
            raise ValueError("Programs.concat: the parts have different n_inputs")
        offsets = np.cumsum([0] + [len(p.code) for p in parts])
        starts = np.concatenate([parts[0].starts[:1]] + [
            p.starts[1:] - p.starts[0] + off for p, off in zip(parts, offsets)])
        return cls(np.concatenate([p.code for p in parts]),
                   np.concatenate([p.values for p in parts]),
                   starts.astype(np.int64) - starts[0],
                   np.concatenate([p.output for p in parts]),
                   n_inputs, max(p.n_regs for p in parts))

    # -- reading ---------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.starts) - 1

    def take(self, lo: int, hi: int) -> Programs:
        """Programs lo .. hi-1 as a population of their own (arrays are copied, so a part
        pickles small)."""
        a, b = int(self.starts[lo]), int(self.starts[hi])
        return Programs(self.code[a:b].copy(), self.values[a:b].copy(),
                        self.starts[lo:hi + 1] - a, self.output[lo:hi].copy(),
                        self.n_inputs, self.n_regs)

    def to_source(self, p: int, name: str = "program") -> str:
        """Program p as a Python function of its inputs (registers named v1, v2, ...)."""
        args = ", ".join(f"v{r + 1}" for r in range(self.n_inputs))
        lines = [f"def {name}({args}):"]
        others = [f"v{r + 1}" for r in range(self.n_inputs, self.n_regs)]
        if others:
            lines.append(f"    {' = '.join(others)} = 0.0")
        for s in range(int(self.starts[p]), int(self.starts[p + 1])):
            op, d, a, b = (int(x) for x in self.code[s])
            op = Op(op)
            if op is Op.CONST:
                rhs = repr(float(self.values[s]))
            elif op is Op.COPY:
                rhs = f"v{a + 1}"
            elif op is Op.NEG:
                rhs = f"-v{a + 1}"
            else:
                rhs = f"v{a + 1} {BINARY[op]} v{b + 1}"
            lines.append(f"    v{d + 1} = {rhs}")
        lines.append(f"    return v{int(self.output[p]) + 1}")
        return "\n".join(lines) + "\n"

    # -- checking --------------------------------------------------------------------------
    def check(self) -> None:
        """Raise ValueError/TypeError naming the first thing the evaluator could not run.

        Cheap enough to run before every native evaluation (vm.run does): a few vectorised
        passes over the arrays, a fraction of the cost of evaluating them on even a few rows;
        the search for *which* instruction is wrong runs only when something is."""
        import numpy as np
        c, n = self.code, len(self.code)
        if c.dtype != np.int32 or c.ndim != 2 or c.shape[1] != 4 or not c.flags.c_contiguous:
            raise TypeError("Programs.code must be a C-contiguous int32 array of shape (N, 4)")
        if self.values.dtype != np.float64 or self.values.shape != (n,) or \
                not self.values.flags.c_contiguous:
            raise TypeError(f"Programs.values must be a C-contiguous float64 array of shape "
                            f"({n},); got {self.values.dtype} {self.values.shape}")
        s = self.starts
        if s.dtype != np.int64 or s.ndim != 1 or len(s) < 1 or not s.flags.c_contiguous:
            raise TypeError("Programs.starts must be a C-contiguous 1-d int64 array of P + 1 "
                            "offsets")
        _check_starts(s, n)
        if self.output.dtype != np.int32 or self.output.shape != (len(s) - 1,) or \
                not self.output.flags.c_contiguous:
            raise TypeError(f"Programs.output must be a C-contiguous int32 array of shape "
                            f"({len(s) - 1},)")
        if not isinstance(self.n_regs, numbers.Integral) or not 1 <= self.n_regs <= MAX_REGS:
            raise ValueError(f"Programs.n_regs must be an int 1..{MAX_REGS}; got "
                             f"{self.n_regs!r}")
        if not isinstance(self.n_inputs, numbers.Integral) or \
                not 0 <= self.n_inputs <= self.n_regs:
            raise ValueError(f"Programs.n_inputs must be an int 0..n_regs ({self.n_regs}); got "
                             f"{self.n_inputs!r}")
        if n:
            # as uint32 a negative field is >= 2**31: one upper bound checks both ends. One
            # flat pass over all the fields usually settles the registers (a 2-d reduction
            # over columns 1..3 costs ten times more; single columns are read only when the
            # opcodes alone reach n_regs)
            u = c.view(np.uint32)
            top = u.max()
            if top >= self.n_regs:
                top = max(u[:, 1].max(), u[:, 2].max(), u[:, 3].max())
            if top >= self.n_regs or u[:, 0].max() > max(Op):
                _check_code(c, s, self.n_regs)
        if len(s) > 1 and self.output.view(np.uint32).max() >= self.n_regs:
            _check_output(self.output, self.n_regs)


FIELDS = ("op", "dst", "a", "b")     # the columns of `code`


def _integers(x: Any, field: str) -> np.ndarray:
    """x as an array of integers (of its own dtype: casting is the caller's, after checking
    the range), or TypeError naming the field."""
    import numpy as np
    a = np.asarray(x)
    if a.size and not np.issubdtype(a.dtype, np.integer):
        raise TypeError(f"Programs: {field} must be integers; got {a.dtype}")
    return a


def _count(x: Any, field: str) -> int:
    if not isinstance(x, numbers.Integral):
        raise TypeError(f"Programs: {field} must be an int; got {x!r}")
    return int(x)


def _check_starts(s: np.ndarray, n: int) -> None:
    if len(s) < 1 or s[0] != 0 or s[-1] != n or (s[1:] < s[:-1]).any():
        raise ValueError(f"Programs.starts must rise from 0 to the number of instructions "
                         f"({n}); got {s[:4]}{'...' if len(s) > 4 else ''}")


def _check_code(c: np.ndarray, starts: np.ndarray, n_regs: int) -> None:
    """Raise ValueError naming the first instruction of `c` ((N, 4), any integer dtype) with
    an unknown opcode or a register outside 0..n_regs-1: its program, field and value."""
    import numpy as np
    bad_op = (c[:, 0] < 0) | (c[:, 0] > max(Op))
    bad_reg = (c[:, 1:] < 0) | (c[:, 1:] >= n_regs)
    for what, bad in ((f"an unknown opcode (0..{int(max(Op))})", bad_op),
                      (f"a register outside 0..{n_regs - 1}", bad_reg.any(axis=1))):
        if bad.any():
            i = int(np.argmax(bad))
            p = int(np.searchsorted(starts, i, side="right")) - 1
            f = 0 if bad is bad_op else 1 + int(np.argmax(bad_reg[i]))
            raise ValueError(f"Programs: instruction {i} (program {p}) has {FIELDS[f]} = "
                             f"{int(c[i, f])}, {what}: {tuple(int(x) for x in c[i])}")


def _check_output(output: np.ndarray, n_regs: int) -> None:
    """Raise ValueError naming the first program whose output register is out of range."""
    import numpy as np
    bad_out = (output < 0) | (output >= n_regs)
    if bad_out.any():
        p = int(np.argmax(bad_out))
        raise ValueError(f"Programs: program {p} has output register {int(output[p])}, "
                         f"outside 0..{n_regs - 1}")

def random_programs(n: int, length: int, *, n_regs: int = 5, n_inputs: int = 1,
                    ops: tuple[Op, ...] = (Op.ADD, Op.SUB, Op.MUL, Op.DIV),
                    n_consts: int = 0, const_range: tuple[float, float] = (-1.0, 1.0),
                    output: int | None = None, seed: Any = None) -> Programs:
    """n random programs: `n_consts` CONST instructions into registers n_inputs.. (a
    "set-up"), then `length` instructions `vX = vY op vZ` with op drawn from `ops`.
    Vectorised: 100,000 programs take milliseconds."""
    import numpy as np
    for name, v in (("n", n), ("length", length), ("n_consts", n_consts)):
        if not isinstance(v, numbers.Integral) or v < 0:
            raise ValueError(f"random_programs: {name} must be an int >= 0; got {v!r}")
    if not isinstance(n_regs, numbers.Integral) or not 1 <= n_regs <= MAX_REGS:
        raise ValueError(f"random_programs: n_regs must be an int 1..{MAX_REGS}; got "
                         f"{n_regs!r}")
    if not isinstance(n_inputs, numbers.Integral) or not 0 <= n_inputs <= n_regs or \
            n_consts and n_inputs == n_regs:
        room = ", less than n_regs to leave registers for n_consts" if n_consts else ""
        raise ValueError(f"random_programs: n_inputs must be an int 0..n_regs ({n_regs})"
                         f"{room}; got {n_inputs!r}")
    ops = tuple(ops)
    if not ops or not set(ops) <= set(Op):
        raise ValueError(f"random_programs: ops must be one or more opcodes (Op, "
                         f"0..{int(max(Op))}); got {ops!r}")
    rng = np.random.default_rng(seed)
    total = n_consts + length
    code = np.zeros((n, total, 4), np.int32)
    values = np.zeros((n, total))
    if n_consts:
        code[:, :n_consts, 1] = n_inputs + np.arange(n_consts) % max(n_regs - n_inputs, 1)
        values[:, :n_consts] = rng.uniform(*const_range, size=(n, n_consts))
    code[:, n_consts:, 0] = rng.choice(np.asarray(ops, np.int32), size=(n, length))
    code[:, n_consts:, 1:] = rng.integers(0, n_regs, size=(n, length, 3), dtype=np.int32)
    return Programs.from_arrays(code, values.reshape(-1), n_inputs=n_inputs, n_regs=n_regs,
                                output=n_regs - 1 if output is None else output)
