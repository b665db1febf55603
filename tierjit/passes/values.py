"""Value specialisation: arguments seen constant become constants of the compiled code.

When the profile says an argument has always been the same int, bool or float ("this argument
is always 100"), the dispatcher compiles a version in which that argument's uses read a
constant instead, behind an entry guard (backends.llvm.entry_wrapper: a call with another
value takes the generic path). Constant folding, range analysis and LLVM then get known trip
counts, folded branches and unrolled loops. The argument stays a parameter, so the version
has the function's signature; only its uses change. Which values qualify (exact int within 64
bits, bool, float other than NaN) is decided by the dispatcher's profile
(runtime.shim.profiled), which must not import the IR on a cold call.

An array that always had the same shape (its shape, a tuple, in `values`) stays an argument
here: the LLVM tier compiles its dimensions in, and its entry checks them
(backends/llvm/codegen.py, entry_wrapper.py).

Analogue: the value profiling and constant specialisation of HotSpot's and V8's optimising
compilers.
"""

from __future__ import annotations

from ..ir.nodes import Function, Instr
from ..ir.ops import Op

TYPE_CHECKING = False
if TYPE_CHECKING:                       # pragma: no cover - typing only
    from typing import Any


def bake_values(fn: Function, values: dict[int, Any]) -> Function:
    """Replace every use of argument i by the constant values[i] (a typed CONST in the entry
    block, typed as the argument was)."""
    entry = fn.entry
    subst = {}
    consts = []
    for i, c in sorted(values.items()):
        if type(c) is tuple:               # an array's shape
            continue
        p = entry.params[i]
        v = fn.new_value(p.name)
        v.type = p.type
        consts.append(Instr(Op.CONST, [], v, c, fn.first_line))
        subst[p] = v
    for b in fn.blocks:
        for ins in b.instrs:
            ins.args = [subst.get(a, a) for a in ins.args]
            for e in ins.targets:
                e.args = [subst.get(a, a) for a in e.args]
    entry.instrs[0:0] = consts
    return fn
