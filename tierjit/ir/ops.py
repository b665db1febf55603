"""The operations of tierjit's IR: one enum member per operation, one comment per member.

Every operation has Python's meaning for the types it is applied to; the tier-0 emitter
(`backends/pyemit`) is the executable definition. Native backends implement an operation
for the types they support and *deoptimise* (hand the frame state back to tier 0) wherever
their fast path would differ from Python: overflow past 64 bits, a zero divisor, an index
out of bounds, a math domain error, a NumPy warning.

On Python 3.11 `Op.X` is slow: EnumType defines `__getattr__`, so every attribute read of the
class goes through a Python-level hook (~0.1 us, where a module global takes a few ns; 3.12
dropped it). The compiler's hot loops test an instruction's op against a dozen members, so
the modules they are in bind the members they use once, as `_X = Op.X`: that took a sixth
of the instructions of typing, optimising and copy-and-patching the kernels' functions.
"""

from __future__ import annotations

import enum


class Op(enum.Enum):
    # -- values ------------------------------------------------------------------------
    CONST = "const"            # attr: the Python constant (int, float, bool, complex, None)
    MAKE_TUPLE = "tuple"       # (x0, x1, ...)
    TUPLE_GET = "tuple_get"    # item attr[0] of a tuple unpacked into attr[1] targets
    # -- arithmetic: Python's binary operators ------------------------------------------
    ADD = "add"                # a + b
    SUB = "sub"                # a - b
    MUL = "mul"                # a * b
    TRUEDIV = "truediv"        # a / b
    FLOORDIV = "floordiv"      # a // b
    MOD = "mod"                # a % b
    POW = "pow"                # a ** b
    LSHIFT = "lshift"          # a << b
    RSHIFT = "rshift"          # a >> b
    BITAND = "bitand"          # a & b
    BITOR = "bitor"            # a | b
    BITXOR = "bitxor"          # a ^ b
    # -- unary operators ------------------------------------------------------------------
    NEG = "neg"                # -a
    POS = "pos"                # +a
    INVERT = "invert"          # ~a
    NOT = "not"                # not a  (always a bool)
    TRUTH = "truth"            # bool(a): what `if a:` tests
    # -- comparisons (a chained comparison is lowered to several of these) ----------------
    LT = "lt"                  # a < b
    LE = "le"                  # a <= b
    GT = "gt"                  # a > b
    GE = "ge"                  # a >= b
    EQ = "eq"                  # a == b
    NE = "ne"                  # a != b
    IS = "is"                  # a is b   (only against None in the subset)
    IS_NOT = "is_not"          # a is not b
    # -- calls: the callee is resolved at compile time and kept in attr -------------------
    CALL_BUILTIN = "call_builtin"  # attr: name of a builtin (abs, min, max, len, int, ...)
    CALL_MATH = "call_math"        # attr: name of a function of the math module
    CALL_NUMPY = "call_numpy"      # attr: (name, dtype or None) of np.empty/zeros/ones/arange
    CALL_UFUNC = "call_ufunc"      # attr: name of a NumPy ufunc, scalar type or function
                                   # of arrays (np.sqrt, np.float64, np.sum ...)
    CALL_JIT = "call_jit"          # attr: the callee's Dispatcher; calls through its slot
    CALL_METHOD = "call_method"    # attr: name of an array method (ARRAY_METHODS); args
                                   # (array, arguments ...)
    # -- arrays and sequences ----------------------------------------------------------------
    GETATTR = "getattr"        # a.attr for attr in shape, size, ndim, real, imag
    GETITEM = "getitem"        # a[i] / a[i, j, ...]: args = (a, i, j, ...)
    SETITEM = "setitem"        # a[i, ...] = v: args = (a, i, ..., v); no result
    LEN = "len"                # len(a), as used by `for x in a`
    RANGE_LEN = "range_len"    # len(range(start, stop, step)) without the ssize_t limit
    RANGE_ITEM = "range_item"  # args (start, stop, step, k): start + k * step, 0 <= k < len
    # -- speculation: no-ops in tier 0, guards that deoptimise in native code --------------
    GUARD_RANGE = "guard_range"  # args[0], speculated to lie within attr = (lo, hi)
    GUARD_INBOUNDS = "guard_inbounds"  # args (a, x, n): n <= 0 or x < a.shape[attr]; no result

    # -- terminators: the last instruction of every block, and only there -----------------
    JUMP = "jump"              # goto targets[0] with its arguments
    BRANCH = "branch"          # if args[0] (a bool) goto targets[0] else targets[1]
    RETURN = "return"          # return args[0]
    RAISE = "raise"            # raise attr = (exception class, constant args)

    # A member is its own only instance, so identity is its equality and its hash: Enum's
    # own __hash__ (of the name) is a Python-level call, paid by every `op in SOME_OPS`
    # and every dict keyed by ops in the compiler's loops.
    __hash__ = object.__hash__

    # by value: these run for every instruction of every compile
    @property
    def is_terminator(self) -> bool:
        return self._value_ in _TERMINATOR_VALUES

    @property
    def has_result(self) -> bool:
        return self._value_ not in _NO_RESULT_VALUES


BINARY_OPS = frozenset({
    Op.ADD, Op.SUB, Op.MUL, Op.TRUEDIV, Op.FLOORDIV, Op.MOD, Op.POW,
    Op.LSHIFT, Op.RSHIFT, Op.BITAND, Op.BITOR, Op.BITXOR,
})
UNARY_OPS = frozenset({Op.NEG, Op.POS, Op.INVERT})
COMPARE_OPS = frozenset({Op.LT, Op.LE, Op.GT, Op.GE, Op.EQ, Op.NE})
IDENTITY_OPS = frozenset({Op.IS, Op.IS_NOT})
_TERMINATOR_VALUES = frozenset(op.value for op in (Op.JUMP, Op.BRANCH, Op.RETURN, Op.RAISE))
_NO_RESULT_VALUES = _TERMINATOR_VALUES | {Op.SETITEM.value, Op.GUARD_INBOUNDS.value}

# Python's spelling of each operator, shared by the printer, the tier-0 emitter and the
# type rules (which evaluate the operator on sample values).
# the attr of a binary op made by an augmented assignment to a name (`x += y`): Python's
# in-place operator (an array changes in place, the object every reference sees)
INPLACE = "inplace"

PY_BINARY = {
    Op.ADD: "+", Op.SUB: "-", Op.MUL: "*", Op.TRUEDIV: "/", Op.FLOORDIV: "//",
    Op.MOD: "%", Op.POW: "**", Op.LSHIFT: "<<", Op.RSHIFT: ">>", Op.BITAND: "&",
    Op.BITOR: "|", Op.BITXOR: "^",
    Op.LT: "<", Op.LE: "<=", Op.GT: ">", Op.GE: ">=", Op.EQ: "==", Op.NE: "!=",
    Op.IS: "is", Op.IS_NOT: "is not",
}
PY_UNARY = {Op.NEG: "-", Op.POS: "+", Op.INVERT: "~", Op.NOT: "not "}
