"""The stencil templates: LLVM IR text for every operation the baseline tier copies and patches.

A stencil is one function `i32 @st_NAME(ptr %f, i64 %p, i64 %r, double %d)` that reads its
operands from slots of the frame `%f`, computes, stores its result in a slot and continues
with a `musttail` call of the next stencil with the same arguments — so the chain never grows
the stack, and the fall-through jump to the stencil laid out next is dropped by the emitter.
`%p` is the signal-poll counter; `%r` and `%d` cache one int and one double slot of a loop
in registers (regs.py): a register variant `NAME.HOLES` (`add_iu.Ar.Cr`) reads those holes
from them and writes them through (to the slot and the register). Everything that differs
between two uses of a stencil is a *hole*, an external `dso_local` symbol whose address the
emitter patches in (CPython's Tools/jit does the same; Xu & Kjolstad, "Copy-and-patch
compilation", OOPSLA 2021):

    A B C D E TA TB TC   byte offsets of frame slots (32-bit absolute: small code model)
    K K2                 64-bit constants (code_model "large": movabs)
    NEXT JT JF           continuations: the next stencil, a branch's two targets (JT: the
                         body that call_self calls)
    DEOPT DEOPT2         deoptimisation stubs (a frame state each)
    DEOPTALL ENTER ENTRY the routines shared by every function (deopt, prologue, entry,
    SIGNALS              the signal check: preserve_allcc, so a poll keeps its registers)
    CORE                 the function's own core thunk (call_self's way through the prologue)

A chain returns a status to the function that called it (the core prologue `st_enter`):
0 done (result copied to the out area), 1 a Python exception is set, 2 deoptimised (the
result object is in out[0]). Frame layout (slots of 8 bytes): 0 the out pointer, 1 the
signal-poll counter, 2 the list that owns objects made by calls into Python, 3 the function's
descriptor, 4 the frame state of a deopt in progress, then the arguments, the constants and
every other value (see frame.py). The function descriptor (8-byte words): frame bytes; counts
(arguments | constants << 20 | max bytes of C stack << 40); constant table; first body stencil; the
deopt stub of frame state 0; the deopt callable; argument descriptor; result descriptor;
core.

Guards are those of the LLVM tier: an int result beyond 64 bits, a zero divisor, an index out
of bounds, a math domain or range error, a NumPy scalar result that would warn — each
deoptimises instead of computing something Python would not.
"""

from __future__ import annotations

import itertools

from ..gil import OFFER_IR as _GIL_OFFER
from ..float_pow import float_pow_ir
from .shared_ir import (ENTRY, ENTRY_TYPE, K_ARRAY, K_BOOL, K_FLOAT, K_INT, K_NONE, K_NPFLOAT,  # noqa: F401
                        K_NPINT, K_TUPLE, K_UNION, POLL_EVERY, PROLOGUE, STACK_OK)

SMALL_HOLES = ("A", "B", "C", "D", "E", "F", "G", "TA", "TB", "TC", "DV", "CR")
LARGE_HOLES = ("K", "K2")
JUMP_HOLES = ("NEXT", "JT", "JF", "DEOPT", "DEOPT2", "DEOPTALL")
# C functions stencils call; the emitter resolves them in the running process.
C_FUNCTIONS = {
    "PyErr_CheckSignals": "declare i32 @PyErr_CheckSignals()",
    "PyEval_SaveThread": "declare ptr @PyEval_SaveThread()",
    "PyEval_RestoreThread": "declare void @PyEval_RestoreThread(ptr)",
    "clock_gettime": "declare i32 @clock_gettime(i32, ptr)",
    "PyLong_FromVoidPtr": "declare ptr @PyLong_FromVoidPtr(ptr)",
    "PyLong_FromLongLong": "declare ptr @PyLong_FromLongLong(i64)",
    "PyLong_AsLongLongAndOverflow": "declare i64 @PyLong_AsLongLongAndOverflow(ptr, ptr)",
    "PyFloat_FromDouble": "declare ptr @PyFloat_FromDouble(double)",
    "PyObject_CallFunctionObjArgs": "declare ptr @PyObject_CallFunctionObjArgs(ptr, ...)",
    "PyObject_CallOneArg": "declare ptr @PyObject_CallOneArg(ptr, ptr)",
    "PyObject_Call": "declare ptr @PyObject_Call(ptr, ptr, ptr)",
    "PyTuple_GetItem": "declare ptr @PyTuple_GetItem(ptr, i64)",
    "PyObject_Vectorcall": "declare ptr @PyObject_Vectorcall(ptr, ptr, i64, ptr)",
    "PyTuple_New": "declare ptr @PyTuple_New(i64)",
    "Py_IncRef": "declare void @Py_IncRef(ptr)",
    "Py_DecRef": "declare void @Py_DecRef(ptr)",
    # the entry type's slots (shared_ir.ENTRY_TYPE)
    "PyType_GenericAlloc": "declare ptr @PyType_GenericAlloc(ptr, i64)",
    "PyObject_GC_UnTrack": "declare void @PyObject_GC_UnTrack(ptr)",
    "PyObject_GC_Del": "declare void @PyObject_GC_Del(ptr)",
    "PyObject_ClearWeakRefs": "declare void @PyObject_ClearWeakRefs(ptr)",
    "PyDict_Size": "declare i64 @PyDict_Size(ptr)",
    "PyDict_GetItem": "declare ptr @PyDict_GetItem(ptr, ptr)",
    "PyErr_SetString": "declare void @PyErr_SetString(ptr, ptr)",
    "PyMethod_New": "declare ptr @PyMethod_New(ptr, ptr)",
    # stack_ok (shared_ir.STACK_OK)
    "pthread_getspecific": "declare ptr @pthread_getspecific(i32)",
    "pthread_setspecific": "declare i32 @pthread_setspecific(i32, ptr)",
    "pthread_self": "declare i64 @pthread_self()",
    "pthread_getattr_np": "declare i32 @pthread_getattr_np(i64, ptr)",
    "pthread_attr_getstack": "declare i32 @pthread_attr_getstack(ptr, ptr, ptr)",
    "pthread_attr_destroy": "declare i32 @pthread_attr_destroy(ptr)",
}
LIBM_1 = ("exp", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "asin", "acos",
          "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "cbrt")
LIBM_2 = ("atan2", "fmod", "pow")
LIBM = LIBM_1 + LIBM_2

INT_CMP = {"lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge", "eq": "eq", "ne": "ne"}
FLOAT_CMP = {"lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge", "eq": "oeq", "ne": "une"}
FLOAT_NOT = {"lt": "uge", "le": "ugt", "gt": "ule", "ge": "ult", "eq": "une", "ne": "oeq"}
INT_NOT = {"lt": "ge", "le": "gt", "gt": "le", "ge": "lt", "eq": "ne", "ne": "eq"}
# array element kinds: name -> (LLVM memory type, how it widens to a slot)
ELEMS = {"f64": ("double", None), "f32": ("float", "fpext"), "i64": ("i64", None),
         "i32": ("i32", "sext"), "i16": ("i16", "sext"), "i8": ("i8", "sext"),
         "u32": ("i32", "zext"), "u16": ("i16", "zext"), "u8": ("i8", "zext"),
         "b1": ("i8", "zext")}
# what a chain passes from stencil to stencil (see the module docstring)
CHAIN = "ptr %f, i64 %p, i64 %r, double %d, i64 %ks, double %ke"
REG_TYPES = {"r": "i64", "d": "double", "s": "i64", "e": "double"}
_UNDEF = "i64 undef, double undef, i64 undef, double undef"    # no cached value passed on
_REGS: dict[str, str] = {}      # hole -> register, while register variants are generated
_ITEM_SIZE = {"double": 8, "float": 4, "i64": 8, "i32": 4, "i16": 2, "i8": 1}
EXACT_LIMIT = 2 ** 53      # ints beyond this do not convert to double exactly
MIN_I64 = -(2 ** 63)


class _Body:
    """Builds the body of one stencil: numbered temporaries, labels, holes."""

    def __init__(self):
        self.lines: list[str] = []
        self.cold: list[str] = []       # the guards' exits, after the body (see guard)
        self.n = itertools.count()
        self.regs = _REGS               # hole -> register (a register variant)
        self.now = {"p": "%p", "r": "%r", "d": "%d", "s": "%ks", "e": "%ke"}  # their values
        self.through: set[str] = set()  # the holes read or written through their register
        self.raw: set[str] = set()      # the holes whose address is taken (slot())
        self.written: set[str] = set()  # the holes stored to
        # a stencil that calls other code passes no cached values on (the selection reloads
        # them after it), so that they need not be kept across the call
        self.clobbers = False

    def __call__(self, text: str) -> str:
        t = f"%t{next(self.n)}"
        self.lines.append(f"  {t} = {text}")
        return t

    def do(self, text: str) -> None:
        self.lines.append(f"  {text}")

    def label(self, name: str) -> None:
        self.lines.append(f"{name}:")

    def slot(self, hole: str, extra: int = 0) -> str:
        self.raw.add(hole)
        return self._address(hole, extra)

    def _address(self, hole: str, extra: int) -> str:
        off = f"ptrtoint (ptr @{hole} to i64)"
        if extra:
            off = f"add (i64 {off}, i64 {extra})"
        return self(f"getelementptr i8, ptr %f, i64 {off}")

    def _reg(self, ty: str, hole: str, extra: int) -> str | None:
        reg = self.regs.get(hole)
        if reg is not None and not extra and REG_TYPES[reg] == ty:
            self.through.add(hole)
            return reg
        return None

    def load(self, ty: str, hole: str, extra: int = 0) -> str:
        reg = self._reg(ty, hole, extra)
        if reg is not None:
            return self.now[reg]
        return self(f"load {ty}, ptr {self._address(hole, extra)}, align 8")

    def store(self, ty: str, v: str, hole: str, extra: int = 0) -> None:
        # written through: the slot always holds the value (frame states read slots)
        self.written.add(hole)
        self.do(f"store {ty} {v}, ptr {self._address(hole, extra)}, align 8")
        reg = self._reg(ty, hole, extra)
        if reg is not None:
            self.now[reg] = v

    def chain_args(self, p: str | None = None) -> str:
        now = self.now
        if self.clobbers:
            return f"ptr %f, i64 {p or now['p']}, {_UNDEF}"
        return (f"ptr %f, i64 {p or now['p']}, i64 {now['r']}, double {now['d']}, "
                f"i64 {now['s']}, double {now['e']}")

    def const(self, hole: str) -> str:
        # inline asm keeps the 64-bit movabs: LLVM would fold a plain `ptrtoint` stored to
        # memory into a sign-extended 32-bit immediate despite the large code model
        return self(f'call i64 asm "movabsq $${hole}, $0", "=r"()')

    def imm(self, hole: str) -> str:
        """A small hole's value as a 32-bit immediate, opaque to LLVM: `ptrtoint` of a global
        would be assumed non-zero (a copy loop of that many words would run at least once)."""
        return self(f'call i64 asm "movq $${hole}, $0", "=r"()')

    def jump(self, target: str) -> None:
        r = f"%j{next(self.n)}"
        self.lines.append(f"  {r} = musttail call i32 @{target}({self.chain_args()})")
        self.lines.append(f"  ret i32 {r}")

    def guard(self, bad: str, target: str = "DEOPT") -> None:
        """Continue only when `bad` is false; else continue at target (a deopt stub). The
        weights put the failing side out of line, so that it becomes a conditional jump to
        the stub (`jo DEOPT`) and the common path falls through, with no taken branch."""
        ok, no = f"ok{next(self.n)}", f"no{next(self.n)}"
        self.do(f"br i1 {bad}, label %{no}, label %{ok}")
        self.label(ok)
        r = f"%j{next(self.n)}"
        # a deopt reads the frame, never the registers
        call = f"musttail call i32 @{target}(ptr %f, i64 undef, {_UNDEF})"
        self.cold += [f"{no}:", f"  {r} = {call}", f"  ret i32 {r}"]

    def finite(self, x: str) -> str:
        # x - x is 0 for a finite x, NaN for an infinity or NaN: a subtraction and an
        # ordered compare, where |x| < inf takes a 64-bit mask and an integer compare
        return self(f"fcmp ord double {self(f'fsub double {x}, {x}')}, 0.0")


_STENCILS: dict[str, str] = {}


# stencils that pass no cached values on (_Body.clobbers): the selection reloads them
CLOBBERS: set[str] = set()
# stencil -> the holes of the slots it may write: stored to, or whose address it takes
WRITES: dict[str, frozenset[str]] = {}
_WANTED: frozenset[str] = frozenset()      # the stencils of the variant being generated


def _stencil(name: str, body: _Body, attrs: str = "#0") -> None:
    if body.regs:
        # a register variant: only when every mapped hole went through its register
        if body.through != set(body.regs) or body.raw & set(body.regs) \
                or name not in _WANTED:
            return
        name = f"{name}.{variant_suffix(body.regs)}"
    elif body.clobbers:
        CLOBBERS.add(name)
    WRITES[name] = frozenset(body.written | body.raw)
    _STENCILS[name] = (f"define i32 @st_{name}({CHAIN}) {attrs} {{\n"
                       + "\n".join(body.lines + body.cold) + "\n}\n")


def variant_suffix(regs: dict[str, str]) -> str:
    """The name suffix of a register variant: its holes and their registers, `TBr.TCr.Cd.Dd`
    in SMALL_HOLES order."""
    return ".".join(f"{h}{regs[h]}" for h in SMALL_HOLES if h in regs)


def _binary(name: str, a_ty: str, b_ty: str, compute) -> None:
    b = _Body()
    x, y = b.load(a_ty, "A"), b.load(b_ty, "B")
    r_ty, r = compute(b, x, y)
    b.store(r_ty, r, "C")
    b.jump("NEXT")
    _stencil(name, b)


def _unary(name: str, a_ty: str, compute) -> None:
    b = _Body()
    x = b.load(a_ty, "A")
    r_ty, r = compute(b, x)
    b.store(r_ty, r, "C")
    b.jump("NEXT")
    _stencil(name, b)


# -- Python int (i64, guarded) ----------------------------------------------------------------

def _ovf(op):
    def compute(b, x, y):
        p = b(f"call {{i64, i1}} @llvm.{op}.with.overflow.i64(i64 {x}, i64 {y})")
        b.guard(b(f"extractvalue {{i64, i1}} {p}, 1"))
        return "i64", b(f"extractvalue {{i64, i1}} {p}, 0")
    return compute


def _divisor_ok(b, x, y):
    b.guard(b(f"icmp eq i64 {y}, 0"))
    b.guard(b(f"and i1 {b(f'icmp eq i64 {x}, {MIN_I64}')}, {b(f'icmp eq i64 {y}, -1')}"))


def _floordiv(b, x, y):
    _divisor_ok(b, x, y)
    q, r = b(f"sdiv i64 {x}, {y}"), b(f"srem i64 {x}, {y}")
    # floor: one less when the remainder is non-zero and its sign differs from the divisor's
    rx = b(f"xor i64 {r}, {y}")
    adj = b(f"and i1 {b(f'icmp ne i64 {r}, 0')}, {b(f'icmp slt i64 {rx}, 0')}")
    return "i64", b(f"sub i64 {q}, {b(f'zext i1 {adj} to i64')}")


def _mod(b, x, y):
    _divisor_ok(b, x, y)
    r = b(f"srem i64 {x}, {y}")
    rx = b(f"xor i64 {r}, {y}")
    adj = b(f"and i1 {b(f'icmp ne i64 {r}, 0')}, {b(f'icmp slt i64 {rx}, 0')}")
    return "i64", b(f"select i1 {adj}, i64 {b(f'add i64 {r}, {y}')}, i64 {r}")


def _exact_double(b, x):
    """x as a double, deoptimising when it is beyond 2**53 (not exactly representable)."""
    big = b(f"icmp ugt i64 {b(f'add i64 {x}, {EXACT_LIMIT}')}, {2 * EXACT_LIMIT}")
    b.guard(big)
    return b(f"sitofp i64 {x} to double")


def _int_truediv(b, x, y):
    b.guard(b(f"icmp eq i64 {y}, 0"))
    return "double", b(f"fdiv double {_exact_double(b, x)}, {_exact_double(b, y)}")


def _lshift(b, x, y):
    b.guard(b(f"icmp uge i64 {y}, 64"))        # negative counts too: ValueError or big
    r = b(f"shl i64 {x}, {y}")
    b.guard(b(f"icmp ne i64 {b(f'ashr i64 {r}, {y}')}, {x}"))
    return "i64", r


def _rshift(b, x, y):
    b.guard(b(f"icmp slt i64 {y}, 0"))
    s = b(f"select i1 {b(f'icmp ugt i64 {y}, 63')}, i64 63, i64 {y}")
    return "i64", b(f"ashr i64 {x}, {s}")


def _int_pow(b, x, y):
    """Exponentiation by squaring with every product overflow-checked (y >= 0)."""
    b.guard(b(f"icmp slt i64 {y}, 0"))                   # a float result: tier 0
    b.do("br label %pre")
    b.label("pre")
    b.do("br label %loop")
    b.label("loop")
    b.do("%acc = phi i64 [1, %pre], [%acc2, %next]")
    b.do(f"%base = phi i64 [{x}, %pre], [%base2, %next]")
    b.do(f"%e = phi i64 [{y}, %pre], [%e2, %next]")
    b.do("%done = icmp eq i64 %e, 0")
    b.do("br i1 %done, label %out, label %step")
    b.label("step")
    b.do("%odd = trunc i64 %e to i1")
    b.do("%m = call {i64, i1} @llvm.smul.with.overflow.i64(i64 %acc, i64 %base)")
    b.do("%mo = extractvalue {i64, i1} %m, 1")
    b.do("%mv = extractvalue {i64, i1} %m, 0")
    b.do("%o1 = and i1 %odd, %mo")
    b.do("%acc2 = select i1 %odd, i64 %mv, i64 %acc")
    b.do("%e2 = lshr i64 %e, 1")
    b.do("%last = icmp eq i64 %e2, 0")
    b.do("%sq = call {i64, i1} @llvm.smul.with.overflow.i64(i64 %base, i64 %base)")
    b.do("%so = extractvalue {i64, i1} %sq, 1")
    b.do("%base2 = extractvalue {i64, i1} %sq, 0")
    b.do("%so2 = select i1 %last, i1 false, i1 %so")
    b.do("%bad = or i1 %o1, %so2")
    b.do("br i1 %bad, label %ovf, label %next")
    b.label("ovf")
    b.jump("DEOPT")
    b.label("next")
    b.do("br label %loop")
    b.label("out")
    return "i64", "%acc"


def _mul_add(flavour: str, ty: str, mul, add) -> None:
    """A fused pair: a product used only by the addition right after it (`a * b + c`, and
    `c + a * b` with the operands in Python's order) is not stored. Both operations' guards
    deoptimise to the frame state before the multiplication, which has had no effect."""
    for name, order in (("muladd", lambda t, z: (t, z)), ("addmul", lambda t, z: (z, t))):
        b = _Body()
        x, y, z = b.load(ty, "A"), b.load(ty, "B"), b.load(ty, "D")
        _t_ty, t = mul(b, x, y)
        r_ty, r = add(b, *order(t, z))
        b.store(r_ty, r, "C")
        b.jump("NEXT")
        _stencil(f"{name}_{flavour}", b)


# the float operations fused in pairs (the first's result used only by the second, right
# after it): `{first}_{second}_ff{flavour}` computes (A first B) second D,
# `{first}_r{second}_ff{flavour}` D second (A first B); mul then add is muladd/addmul
PAIR_OPS = ("add", "sub", "mul")


def _float_pairs(flavour: str, simple: dict) -> None:
    """A pair of float + - * as one stencil, the intermediate never stored. In NumPy's
    flavour only the result is checked: a non-finite operand of + - * makes a non-finite
    result (inf - inf and inf * 0 are NaN), and every guard resumes before the first
    operation, which has had no effect, so the one check deoptimises exactly when the two
    would. Python's flavour has no guard."""
    ll = {"add": "fadd", "sub": "fsub", "mul": "fmul"}
    for first, second in itertools.product(PAIR_OPS, repeat=2):
        for rev in ("", "r"):
            if first == "mul" and second == "add":
                continue
            b = _Body()
            x, y, z = b.load("double", "A"), b.load("double", "B"), b.load("double", "D")
            t = b(f"{ll[first]} double {x}, {y}")
            r_ty, r = simple[second](b, *((z, t) if rev else (t, z)))
            b.store(r_ty, r, "C")
            b.jump("NEXT")
            _stencil(f"{first}_{rev}{second}_ff{flavour}", b)


def _int_stencils() -> None:
    for op in ("add", "sub", "mul"):
        _binary(f"{op}_ii", "i64", "i64", _ovf({"add": "sadd", "sub": "ssub", "mul": "smul"}[op]))
    # the same without the overflow guard, where value ranges prove the result fits
    for op in ("add", "sub", "mul"):
        _binary(f"{op}_iu", "i64", "i64", lambda b, x, y, op=op: ("i64", b(f"{op} i64 {x}, {y}")))
    _mul_add(flavour="ii", ty="i64", mul=_ovf("smul"), add=_ovf("sadd"))
    _binary("floordiv_ii", "i64", "i64", _floordiv)
    _binary("mod_ii", "i64", "i64", _mod)
    _binary("truediv_ii", "i64", "i64", _int_truediv)
    _binary("lshift_ii", "i64", "i64", _lshift)
    _binary("rshift_ii", "i64", "i64", _rshift)
    for op, ll in (("bitand", "and"), ("bitor", "or"), ("bitxor", "xor")):
        _binary(f"{op}_ii", "i64", "i64", lambda b, x, y, ll=ll: ("i64", b(f"{ll} i64 {x}, {y}")))
    for op, pred in INT_CMP.items():
        _binary(f"{op}_ii", "i64", "i64",
                lambda b, x, y, p=pred: ("i64", b(f"zext i1 {b(f'icmp {p} i64 {x}, {y}')} to i64")))
        b = _Body()
        c = b(f"icmp {pred} i64 {b.load('i64', 'A')}, {b.load('i64', 'B')}")
        _branch(b, c)
        _stencil(f"br_{op}_ii", b)
    _binary("min_ii", "i64", "i64", lambda b, x, y: ("i64", b(
        f"select i1 {b(f'icmp slt i64 {y}, {x}')}, i64 {y}, i64 {x}")))
    _binary("max_ii", "i64", "i64", lambda b, x, y: ("i64", b(
        f"select i1 {b(f'icmp sgt i64 {y}, {x}')}, i64 {y}, i64 {x}")))

    def neg(b, x):
        b.guard(b(f"icmp eq i64 {x}, {MIN_I64}"))
        return "i64", b(f"sub i64 0, {x}")

    def absolute(b, x):
        b.guard(b(f"icmp eq i64 {x}, {MIN_I64}"))
        return "i64", b(f"select i1 {b(f'icmp slt i64 {x}, 0')}, i64 {b(f'sub i64 0, {x}')}, "
                        f"i64 {x}")
    _unary("neg_i", "i64", neg)
    _unary("abs_i", "i64", absolute)
    _unary("invert_i", "i64", lambda b, x: ("i64", b(f"xor i64 {x}, -1")))
    _unary("truth_i", "i64", lambda b, x: ("i64", b(f"zext i1 {b(f'icmp ne i64 {x}, 0')} to i64")))
    _unary("not_i", "i64", lambda b, x: ("i64", b(f"zext i1 {b(f'icmp eq i64 {x}, 0')} to i64")))
    _unary("i2f", "i64", lambda b, x: ("double", b(f"sitofp i64 {x} to double")))
    _unary("i2f_exact", "i64", lambda b, x: ("double", _exact_double(b, x)))
    _binary("pow_ii", "i64", "i64", _int_pow)
    # a constant positive power-of-two divisor 2**k: Python's floor division is an arithmetic
    # shift by k and its modulo a mask with 2**k - 1, for every sign of a (no guard needed)
    _unary("floordiv_pow2", "i64", lambda b, x: ("i64", b(f"ashr i64 {x}, {b.const('K')}")))
    _unary("mod_pow2", "i64", lambda b, x: ("i64", b(f"and i64 {x}, {b.const('K')}")))


# -- float (double): Python's flavour "p", NumPy's "n" (deopt where NumPy would warn) --------------

def _float_divmod(b, x, y):
    """CPython's float floor division and modulo (Objects/floatobject.c, _float_div_mod)."""
    b.guard(b(f"fcmp oeq double {y}, 0.0"))
    mod0 = b(f"frem double {x}, {y}")
    div0 = b(f"fdiv double {b(f'fsub double {x}, {mod0}')}, {y}")
    nz = b(f"fcmp une double {mod0}, 0.0")
    sign_differs = b(f"xor i1 {b(f'fcmp olt double {y}, 0.0')}, {b(f'fcmp olt double {mod0}, 0.0')}")
    adj = b(f"and i1 {nz}, {sign_differs}")
    mod1 = b(f"select i1 {adj}, double {b(f'fadd double {mod0}, {y}')}, double {mod0}")
    div1 = b(f"select i1 {adj}, double {b(f'fsub double {div0}, 1.0')}, double {div0}")
    zero_mod = b(f"call double @llvm.copysign.f64(double 0.0, double {y})")
    mod = b(f"select i1 {nz}, double {mod1}, double {zero_mod}")
    fl = b(f"call double @llvm.floor.f64(double {div1})")
    up = b(f"fcmp ogt double {b(f'fsub double {div1}, {fl}')}, 0.5")
    fl2 = b(f"select i1 {up}, double {b(f'fadd double {fl}, 1.0')}, double {fl}")
    q = b(f"fdiv double {x}, {y}")
    zero_div = b(f"call double @llvm.copysign.f64(double 0.0, double {q})")
    div = b(f"select i1 {b(f'fcmp une double {div1}, 0.0')}, double {fl2}, double {zero_div}")
    return div, mod


def _float_pow(b, x, y):
    """x ** y as CPython's float_pow: the LLVM tier's helper (backends/llvm/helpers.py),
    inlined; tier 0 raises where CPython would (0.0 ** negative, negative ** fraction, an
    overflow). NaNs and infinities, negative bases, are computed here (before, anything but a
    positive finite base and a finite result deoptimised)."""
    pair = b(f"call {{double, i1}} @tj_fpow(double {x}, double {y})")
    b.guard(b(f"extractvalue {{double, i1}} {pair}, 1"))
    return b(f"extractvalue {{double, i1}} {pair}, 0")


def _float_stencils() -> None:
    for flavour in ("p", "n"):
        def strict(b, r, flavour=flavour):
            if flavour == "n":
                b.guard(b(f"xor i1 {b.finite(r)}, true"))
            return "double", r
        def div(b, x, y, s=strict):
            b.guard(b(f"fcmp oeq double {y}, 0.0"))
            return s(b, b(f"fdiv double {x}, {y}"))
        simple = {op: lambda b, x, y, ll=ll, s=strict: s(b, b(f"{ll} double {x}, {y}"))
                  for op, ll in (("add", "fadd"), ("sub", "fsub"), ("mul", "fmul"))}
        simple["truediv"] = div
        for op, compute in simple.items():
            _binary(f"{op}_ff{flavour}", "double", "double", compute)
            # an int operand converted in the stencil (sitofp, as the i2f stencil: Python's
            # int -> float, correctly rounded), not by an i2f stencil through a scratch slot
            _binary(f"{op}_if{flavour}", "i64", "double",
                    lambda b, x, y, c=compute: c(b, b(f"sitofp i64 {x} to double"), y))
            _binary(f"{op}_fi{flavour}", "double", "i64",
                    lambda b, x, y, c=compute: c(b, x, b(f"sitofp i64 {y} to double")))
        # NumPy's flavour checks only the sum: a non-finite product makes a non-finite sum
        # (inf + x is inf or NaN, NaN + x is NaN), and either guard resumes before the
        # multiplication, so the one guard deoptimises exactly when the two would
        _mul_add(flavour=f"ff{flavour}", ty="double", add=simple["add"],
                 mul=lambda b, x, y: ("double", b(f"fmul double {x}, {y}")))
        _float_pairs(flavour, simple)
        _binary(f"floordiv_ff{flavour}", "double", "double",
                lambda b, x, y, s=strict: s(b, _float_divmod(b, x, y)[0]))
        _binary(f"mod_ff{flavour}", "double", "double",
                lambda b, x, y, s=strict: s(b, _float_divmod(b, x, y)[1]))
        if flavour == "p":
            _binary("pow_ffp", "double", "double", lambda b, x, y: ("double", _float_pow(b, x, y)))
        else:
            # NumPy's scalar power is libm's pow, whatever the base's sign (as the LLVM tier
            # computes it); what it would warn about has a non-finite result
            _binary("pow_ffn", "double", "double", lambda b, x, y, s=strict: s(
                b, b(f"call double @pow(double {x}, double {y}) #1")))
    for op, pred in FLOAT_CMP.items():
        _binary(f"{op}_ff", "double", "double", lambda b, x, y, p=pred: (
            "i64", b(f"zext i1 {b(f'fcmp {p} double {x}, {y}')} to i64")))
        b = _Body()
        c = b(f"fcmp {pred} double {b.load('double', 'A')}, {b.load('double', 'B')}")
        _branch(b, c)
        _stencil(f"br_{op}_ff", b)
        # the negation (NaN compares unordered): for a branch whose true side falls through
        b = _Body()
        c = b(f"fcmp {FLOAT_NOT[op]} double {b.load('double', 'A')}, {b.load('double', 'B')}")
        _branch(b, c)
        _stencil(f"br_not_{op}_ff", b)
    _binary("min_ff", "double", "double", lambda b, x, y: ("double", b(
        f"select i1 {b(f'fcmp olt double {y}, {x}')}, double {y}, double {x}")))
    _binary("max_ff", "double", "double", lambda b, x, y: ("double", b(
        f"select i1 {b(f'fcmp ogt double {y}, {x}')}, double {y}, double {x}")))
    _unary("neg_f", "double", lambda b, x: ("double", b(f"fneg double {x}")))
    _unary("abs_f", "double", lambda b, x: ("double", b(f"call double @llvm.fabs.f64(double {x})")))
    _unary("truth_f", "double", lambda b, x: ("i64", b(f"zext i1 {b(f'fcmp une double {x}, 0.0')} to i64")))
    _unary("not_f", "double", lambda b, x: ("i64", b(f"zext i1 {b(f'fcmp oeq double {x}, 0.0')} to i64")))
    _unary("f32_to_f64", "double", lambda b, x: ("double", x))

    def to_int(rounding):
        def compute(b, x):
            if rounding:
                x = b(f"call double @llvm.{rounding}.f64(double {x})")
            # within [-2**63, 2**63): NaN and infinities fail both tests
            ok = b(f"and i1 {b(f'fcmp oge double {x}, -9.223372036854775808e18')}, "
                   f"{b(f'fcmp olt double {x}, 9.223372036854775808e18')}")
            b.guard(b(f"xor i1 {ok}, true"))
            return "i64", b(f"fptosi double {x} to i64")
        return compute
    _unary("f2i", "double", to_int("trunc"))
    _unary("floor_f2i", "double", to_int("floor"))
    _unary("ceil_f2i", "double", to_int("ceil"))
    _unary("isnan_f", "double", lambda b, x: ("i64", b(f"zext i1 {b(f'fcmp uno double {x}, 0.0')} to i64")))
    _unary("isfinite_f", "double", lambda b, x: ("i64", b(f"zext i1 {b.finite(x)} to i64")))
    def isinf(b, x):
        ax = b(f"call double @llvm.fabs.f64(double {x})")
        return "i64", b(f"zext i1 {b(f'fcmp oeq double {ax}, 0x7FF0000000000000')} to i64")
    _unary("isinf_f", "double", isinf)

    def sqrt(b, x):
        b.guard(b(f"fcmp olt double {x}, 0.0"))       # -0.0 and NaN pass, as in CPython
        return "double", b(f"call double @llvm.sqrt.f64(double {x})")
    _unary("sqrt_f", "double", sqrt)
    _unary("fabs_f", "double", lambda b, x: ("double", b(f"call double @llvm.fabs.f64(double {x})")))
    for name in LIBM_1:
        def libm1(b, x, name=name):
            r = b(f"call double @{name}(double {x}) #1")
            _math_errors(b, r, [x])
            return "double", r
        _unary(f"m_{name}", "double", libm1)
    for name in ("atan2", "fmod"):
        def libm2(b, x, y, name=name):
            if name == "atan2":
                # CPython's m_atan2 answers infinities and NaNs itself (a NaN argument gives
                # its canonical NaN, where the C library's returns that argument): tier 0 does
                b.guard(b(f"xor i1 {b(f'and i1 {b.finite(x)}, {b.finite(y)}')}, true"))
            r = b(f"call double @{name}(double {x}, double {y}) #1")
            _math_errors(b, r, [x, y])
            return "double", r
        _binary(f"m_{name}", "double", "double", libm2)


def _math_errors(b, r, xs) -> None:
    """CPython's math_1/math_2 rules: NaN from non-NaN arguments is a domain error, an
    infinity from finite ones a range error; either way tier 0 raises it."""
    any_nan = "false"
    all_finite = "true"
    for x in xs:
        any_nan = b(f"or i1 {any_nan}, {b(f'fcmp uno double {x}, 0.0')}")
        all_finite = b(f"and i1 {all_finite}, {b.finite(x)}")
    r_nan = b(f"fcmp uno double {r}, 0.0")
    r_inf = b(f"fcmp oeq double {b(f'call double @llvm.fabs.f64(double {r})')}, 0x7FF0000000000000")
    not_nan = b(f"xor i1 {any_nan}, true")
    bad = b(f"or i1 {b(f'and i1 {r_nan}, {not_nan}')}, {b(f'and i1 {r_inf}, {all_finite}')}")
    b.guard(bad)


def _branch(b: _Body, c: str) -> None:
    b.do(f"br i1 {c}, label %yes, label %no")
    b.label("yes")
    b.jump("JT")
    b.label("no")
    b.jump("JF")


# -- moves, control flow, ranges ----------------------------------------------------------------

def _control_stencils() -> None:
    b = _Body()
    b.store("i64", b.load("i64", "A"), "C")
    b.jump("NEXT")
    _stencil("mov", b)
    # the registers of a loop's cached slots, loaded from them (regs.py)
    for name, holes in (("load_r", {"r": "A"}), ("load_d", {"d": "A"}),
                        ("load_rd", {"r": "A", "d": "B"})):
        b = _Body()
        for reg, hole in holes.items():
            b.now[reg] = b.load(REG_TYPES[reg], hole)
        b.jump("NEXT")
        _stencil(name, b)
    b = _Body()
    b.store("i64", b(f"or i64 {b.load('i64', 'TA')}, {b.load('i64', 'TB')}"), "TC")
    b.jump("NEXT")
    _stencil("tag_or", b)
    b = _Body()
    b.jump("NEXT")
    _stencil("jump", b)
    b = _Body()
    _branch(b, b(f"icmp ne i64 {b.load('i64', 'A')}, 0"))
    _stencil("br_b", b)
    b = _Body()
    _branch(b, b(f"icmp eq i64 {b.load('i64', 'A')}, 0"))
    _stencil("br_not_b", b)
    # signal poll on loop back edges: PyErr_CheckSignals every 1024 of them (as the LLVM
    # tier). The counter (%p) counts down from POLL_EVERY (set by the prologue) in a
    # register, so the common path is a decrement and a branch, and no loop carries a
    # store-to-load round trip through it. A due poll also reads its loop's exit word (hole
    # K3): once LLVM's code for the rest of the call is ready (runtime/tierup.py) the word
    # holds the running calls' count (hole K4: codemem.Arena.active) that the call's frame
    # runs at, and that frame leaves through the deopt stub of the loop header's frame state.
    b = _Body()
    n = b("sub i64 %p, 1")
    due = b(f"icmp eq i64 {n}, 0")
    b.do(f"br i1 {due}, label %poll, label %go, !prof !0")
    b.label("poll")
    _signals_then_exit(b, "K3", "reset", depth="K4")
    b.label("reset")
    r = f"%j{next(b.n)}"
    b.do(f"{r} = musttail call i32 @NEXT({b.chain_args(str(POLL_EVERY))})")
    b.do(f"ret i32 {r}")
    b.label("go")
    b.now["p"] = n
    b.jump("NEXT")
    _stencil("poll", b)
    # PyErr_CheckSignals for the poll, which then needs to save no register of its own; and
    # the GIL offered once the time of the next offer (hole K3: backends/gil.py) has come
    _STENCILS["signals"] = f"""define preserve_allcc i32 @st_signals() #0 {{
  %state = inttoptr i64 ptrtoint (ptr @K3 to i64) to ptr
{_GIL_OFFER}
  %r = call i32 @PyErr_CheckSignals()
  ret i32 %r
}}
"""

    def range_len(b, start, stop):
        step = b.load("i64", "D")
        b.guard(b(f"icmp eq i64 {step}, 0"))           # ValueError in tier 0
        up = b(f"icmp sgt i64 {step}, 0")
        lo = b(f"select i1 {up}, i64 {start}, i64 {stop}")
        hi = b(f"select i1 {up}, i64 {stop}, i64 {start}")
        mag = b(f"select i1 {up}, i64 {step}, i64 {b(f'sub i64 0, {step}')}")
        span = b(f"sub i64 {hi}, {lo}")                 # as unsigned: never overflows
        span1 = b(f"sub i64 {span}, 1")
        n = b(f"add i64 {b(f'udiv i64 {span1}, {mag}')}, 1")
        nonempty = b(f"icmp slt i64 {lo}, {hi}")
        # more than 2**63 - 1 items (range(-2**63, 0)): tier 0 iterates it, as CPython does
        b.guard(b(f"and i1 {nonempty}, {b(f'icmp slt i64 {n}, 0')}"))
        return "i64", b(f"select i1 {nonempty}, i64 {n}, i64 0")
    _binary("range_len", "i64", "i64", range_len)
    def range_item(b, start, k):
        step = b.load("i64", "D")
        return "i64", b(f"add i64 {start}, {b(f'mul i64 {k}, {step}')}")
    _binary("range_item", "i64", "i64", range_item)
    _binary("range_item1", "i64", "i64",           # a step of 1: no multiply, no step slot
            lambda b, start, k: ("i64", b(f"add i64 {start}, {k}")))

    def guard_range(b, x):
        lo, hi = b.const("K"), b.const("K2")
        b.guard(b(f"or i1 {b(f'icmp slt i64 {x}, {lo}')}, {b(f'icmp sgt i64 {x}, {hi}')}"))
        return "i64", x
    _unary("guard_range", "i64", guard_range)
    b = _Body()
    b.store("i64", b.const("K"), "C")
    b.jump("NEXT")
    _stencil("const", b)
    # return: copy one slot to out[E], then status 0
    b = _Body()
    out = b("load ptr, ptr %f, align 8")
    dst = b(f"getelementptr i8, ptr {out}, i64 ptrtoint (ptr @E to i64)")
    b.do(f"store i64 {b.load('i64', 'A')}, ptr {dst}, align 8")
    b.jump("NEXT")
    _stencil("ret_copy", b)
    # the same for an array's object slot: the caller gets a new reference
    b = _Body()
    out = b("load ptr, ptr %f, align 8")
    dst = b(f"getelementptr i8, ptr {out}, i64 ptrtoint (ptr @E to i64)")
    obj = b.load("ptr", "A")
    b.do(f"call void @Py_IncRef(ptr {obj})")
    b.do(f"store ptr {obj}, ptr {dst}, align 8")
    b.jump("NEXT")
    _stencil("ret_copy_ref", b)
    b = _Body()
    b.do("ret i32 0")
    _stencil("ret", b)
    b = _Body()
    b.do(f"store i64 {b.load('i64', 'A')}, ptr {b('load ptr, ptr %f, align 8')}, align 8")
    b.do("ret i32 0")
    _stencil("ret1", b)


# -- deoptimisation, calls ----------------------------------------------------------------------

def _call_stencils() -> None:
    # deopt stub: the deopt callable K(frame address, frame state) answers (the resume
    # function, its arguments), called here (no Python frame of the callable's stays under
    # tier 0's: a recursion deoptimising at every level keeps CPython's depth), or (None,
    # the result); -> the call's result object (status 2) or NULL (status 1). K2: None.
    b = _Body()
    fd = b("load ptr, ptr " + b("getelementptr i8, ptr %f, i64 24") + ", align 8")
    fn = b(f"load ptr, ptr {b(f'getelementptr i64, ptr {fd}, i64 5')}, align 8")
    idx = b("load i64, ptr " + b("getelementptr i8, ptr %f, i64 32") + ", align 8")
    a0 = b("call ptr @PyLong_FromVoidPtr(ptr %f)")
    a1 = b(f"call ptr @PyLong_FromLongLong(i64 {idx})")
    pair = b(f"call ptr (ptr, ...) @PyObject_CallFunctionObjArgs(ptr {fn}, ptr {a0}, ptr {a1}, "
             "ptr null)")
    b.do(f"call void @Py_DecRef(ptr {a0})")
    b.do(f"call void @Py_DecRef(ptr {a1})")
    b.do(f"br i1 {b(f'icmp eq ptr {pair}, null')}, label %err, label %unpack")
    b.label("unpack")
    callee = b(f"call ptr @PyTuple_GetItem(ptr {pair}, i64 0)")
    x = b(f"call ptr @PyTuple_GetItem(ptr {pair}, i64 1)")
    none = b(f"inttoptr i64 {b.const('K2')} to ptr")
    b.do(f"br i1 {b(f'icmp eq ptr {callee}, {none}')}, label %given, label %call")
    b.label("call")
    r1 = b(f"call ptr @PyObject_Call(ptr {callee}, ptr {x}, ptr null)")
    b.do("br label %join")
    b.label("given")
    b.do(f"call void @Py_IncRef(ptr {x})")
    b.do("br label %join")
    b.label("join")
    r = b(f"phi ptr [{r1}, %call], [{x}, %given]")
    b.do(f"call void @Py_DecRef(ptr {pair})")
    b.do(f"br i1 {b(f'icmp eq ptr {r}, null')}, label %err, label %ok")
    b.label("err")
    b.do("ret i32 1")
    b.label("ok")
    b.do(f"store ptr {r}, ptr {b('load ptr, ptr %f, align 8')}, align 8")
    b.do("ret i32 2")
    _stencil("deopt", b)
    # a call into Python for an operation without a stencil: K(frame address) is True when
    # it stored the result in the frame, False when tier 0 should do the operation instead
    b = _Body()
    b.clobbers = True
    fn = b("inttoptr i64 ptrtoint (ptr @K to i64) to ptr")
    a0 = b("call ptr @PyLong_FromVoidPtr(ptr %f)")
    r = b(f"call ptr @PyObject_CallOneArg(ptr {fn}, ptr {a0})")
    b.do(f"call void @Py_DecRef(ptr {a0})")
    b.do(f"br i1 {b(f'icmp eq ptr {r}, null')}, label %err, label %done")
    b.label("err")
    b.do("ret i32 1")
    b.label("done")
    b.do(f"call void @Py_DecRef(ptr {r})")
    true = b("inttoptr i64 ptrtoint (ptr @K2 to i64) to ptr")
    b.do(f"br i1 {b(f'icmp eq ptr {r}, {true}')}, label %ok, label %no")
    b.label("no")
    b.jump("DEOPT")
    b.label("ok")
    b.jump("NEXT")
    _stencil("pyop", b)
    # a call of another baseline function's core through its cell (K): arguments at slot A
    # onwards, result at slot C onwards
    b = _Body()
    b.clobbers = True
    cell = b("inttoptr i64 ptrtoint (ptr @K to i64) to ptr")
    fp = b(f"load ptr, ptr {cell}, align 8")
    b.guard(b(f"icmp eq ptr {fp}, null"))
    st = b(f"call i32 {fp}(ptr {b.slot('A')}, ptr {b.slot('C')})")
    b.do(f"br i1 {b(f'icmp eq i32 {st}, 0')}, label %ok, label %other")
    b.label("other")
    b.do(f"br i1 {b(f'icmp eq i32 {st}, 1')}, label %err, label %deopted")
    b.label("err")
    b.do("ret i32 1")
    b.label("deopted")
    b.jump("DEOPT2")
    b.label("ok")
    b.jump("NEXT")
    _stencil("call_jit", b)
    _call_self(None, None)
    for words in itertools.product(range(SELF_CALL_WORDS + 1), repeat=2):
        _call_self(*words)


# call_self_A_C copies A argument and C constant words in straight-line code (call_self, any
# number, in loops): enough for most recursive functions
SELF_CALL_WORDS = 3


def _signals_then_exit(b: _Body, word: str, go: str, depth: str | None = None) -> None:
    """A due poll's work: the `signals` routine (an exception set: status 1), then the exit
    word at hole `word` — open, the call leaves through the deopt stub DEOPT (the frame is
    read there, no register) — else on to label `go`. Open: non-zero, or with `depth` (the
    hole of the running calls' count) equal to that count, so that only the frame of one
    call, not one nested in it, leaves."""
    err = b(f"icmp ne i32 {b('call preserve_allcc i32 @SIGNALS()')}, 0")
    b.do(f"br i1 {err}, label %raise, label %polled")
    b.label("raise")
    b.do("ret i32 1")
    b.label("polled")
    w = b(f"load i64, ptr inttoptr (i64 ptrtoint (ptr @{word} to i64) to ptr), align 8")
    if depth is None:
        is_open = b(f"icmp ne i64 {w}, 0")
    else:
        now = b(f"load i64, ptr inttoptr (i64 ptrtoint (ptr @{depth} to i64) to ptr), align 8")
        is_open = b(f"icmp eq i64 {w}, {now}")
    b.do(f"br i1 {is_open}, label %leave, label %{go}")
    b.label("leave")
    left = f"%j{next(b.n)}"
    b.do(f"{left} = musttail call i32 @DEOPT(ptr %f, i64 undef, {_UNDEF})")
    b.do(f"ret i32 {left}")


def _call_self(nargs: int | None, nconsts: int | None) -> None:
    """A call of the function's own specialisation (recursion): the callee's frame is made
    here, as the core prologue would make it, but with its sizes as immediates (B argument
    words from slot A on, D constant words from the descriptor's table, or the counts in the
    stencil's name; E frame bytes, TA the most bytes of C stack) and the body (JT) called
    directly. When the running calls' frames would pass TA, the call goes through the core
    thunk (CORE) instead, whose prologue deoptimises at entry. The result lands at slot C on,
    as for call_jit. The poll counter waits in the frame's slot 1 (not in a register kept
    across the call); no cached value is passed on.

    A recursion need not loop, so there may be no back edge to poll at: every POLL_EVERY
    self-calls (a countdown in the word after the running calls' count, K3 + 8) the call
    checks for signals and offers the GIL (the `signals` routine) before it is made; and once
    the code's exit word (K4) is set — LLVM's code has replaced it in the dispatch slot — the
    call leaves through the deopt stub before it (DEOPT): tier 0 makes it, through the slot."""
    b = _Body()
    b.clobbers = True
    active = b("inttoptr i64 ptrtoint (ptr @K3 to i64) to ptr")
    countdown = b(f"getelementptr i8, ptr {active}, i64 8")
    left = b(f"sub i64 {b(f'load i64, ptr {countdown}, align 8')}, 1")
    b.do(f"store i64 {left}, ptr {countdown}, align 8")
    b.do(f"br i1 {b(f'icmp slt i64 {left}, 1')}, label %poll, label %go, !prof !0")
    b.label("poll")
    b.do(f"store i64 {POLL_EVERY}, ptr {countdown}, align 8")
    _signals_then_exit(b, "K4", "go")
    b.label("go")
    b.do(f"store i64 %p, ptr {b('getelementptr i8, ptr %f, i64 8')}, align 8")
    weight = b("add i64 ptrtoint (ptr @E to i64), 256")
    depth = b(f"add i64 {b(f'load i64, ptr {active}, align 8')}, {weight}")
    args, out = b.slot("A"), b.slot("C")
    b.do(f"br i1 {b(f'icmp ugt i64 {depth}, ptrtoint (ptr @TA to i64)')}, label %deep, "
         "label %frame, !prof !0")
    b.label("deep")
    b.do(f"%st.deep = call i32 @CORE(ptr {args}, ptr {out})")
    b.do("br label %status")
    b.label("frame")
    b.do(f"store i64 {depth}, ptr {active}, align 8")
    g = b("alloca i8, i64 ptrtoint (ptr @E to i64), align 16")
    b.do(f"store ptr {out}, ptr {g}, align 8")
    own = b(f"getelementptr i8, ptr {g}, i64 16")
    b.do(f"store ptr null, ptr {own}, align 8")
    fd = b("load ptr, ptr " + b("getelementptr i8, ptr %f, i64 24") + ", align 8")
    b.do(f"store ptr {fd}, ptr {b(f'getelementptr i8, ptr {g}, i64 24')}, align 8")
    slots = b(f"getelementptr i8, ptr {g}, i64 40")
    table = b(f"load ptr, ptr {b(f'getelementptr i64, ptr {fd}, i64 2')}, align 8")
    if nargs is None:
        count = b.imm("B")
        _copy_words(b, "args", args, slots, count)
        cslots = b(f"getelementptr i64, ptr {slots}, i64 {count}")
        _copy_words(b, "consts", table, cslots, b.imm("D"))
    else:
        for k in range(nargs):
            v = b(f"load i64, ptr {b(f'getelementptr i64, ptr {args}, i64 {k}')}, align 8")
            b.do(f"store i64 {v}, ptr {b(f'getelementptr i64, ptr {slots}, i64 {k}')}, align 8")
        for k in range(nconsts):
            v = b(f"load i64, ptr {b(f'getelementptr i64, ptr {table}, i64 {k}')}, align 8")
            b.do(f"store i64 {v}, ptr "
                 f"{b(f'getelementptr i64, ptr {slots}, i64 {nargs + k}')}, align 8")
    b.do("br label %call")
    b.label("call")
    b.do(f"%st.body = call i32 @JT(ptr {g}, i64 {POLL_EVERY}, {_UNDEF})")
    # Values kept across the call live in callee-saved registers, each pushed and popped on
    # every call: so the counter's address is loaded again (an immediate), the callee's
    # frame is found again as the stack pointer (where the alloca left it), and the status
    # is kept in that frame's deopt slot while its owner list is released.
    active2 = b("inttoptr i64 " + b.const("K3") + " to ptr")
    now = b(f"load i64, ptr {active2}, align 8")
    b.do(f"store i64 {b(f'sub i64 {now}, {weight}')}, ptr {active2}, align 8")
    g2 = b("call ptr @llvm.stacksave.p0()")
    owner = b(f"load ptr, ptr {b(f'getelementptr i8, ptr {g2}, i64 16')}, align 8")
    b.do(f"br i1 {b(f'icmp ne ptr {owner}, null')}, label %release, label %status")
    b.label("release")
    b.do(f"store i32 %st.body, ptr {b(f'getelementptr i8, ptr {g2}, i64 32')}, align 8")
    b.do(f"call void @Py_DecRef(ptr {owner})")
    kept = b("getelementptr i8, ptr " + b("call ptr @llvm.stacksave.p0()") + ", i64 32")
    b.do(f"%st.kept = load i32, ptr {kept}, align 8")
    b.do("br label %status")
    b.label("status")
    b.do("%st = phi i32 [%st.deep, %deep], [%st.body, %call], [%st.kept, %release]")
    b.do("br i1 " + b("icmp eq i32 %st, 0") + ", label %ok, label %other")
    b.label("other")
    b.do("br i1 " + b("icmp eq i32 %st, 1") + ", label %err, label %deopted")
    b.label("err")
    b.do("ret i32 1")
    b.label("deopted")
    b.jump("DEOPT2")
    b.label("ok")
    b.now["p"] = b(f"load i64, ptr {b('getelementptr i8, ptr %f, i64 8')}, align 8")
    b.jump("NEXT")
    name = "call_self" if nargs is None else f"call_self_{nargs}_{nconsts}"
    _stencil(name, b, attrs="#2")               # its copy loops: no memcpy call


def _copy_words(b: _Body, name: str, src: str, dst: str, count: str) -> None:
    """Copy `count` 8-byte words from src to dst (a loop LLVM neither vectorises nor unrolls:
    a few words)."""
    pre = f"{name}.pre"
    b.do(f"br label %{pre}")
    b.label(pre)
    b.do(f"br label %{name}.loop")
    b.label(f"{name}.loop")
    b.do(f"%{name}.i = phi i64 [0, %{pre}], [%{name}.i2, %{name}.body]")
    b.do(f"br i1 {b(f'icmp ult i64 %{name}.i, {count}')}, label %{name}.body, "
         f"label %{name}.done")
    b.label(f"{name}.body")
    v = b(f"load i64, ptr {b(f'getelementptr i64, ptr {src}, i64 %{name}.i')}, align 8")
    b.do(f"store i64 {v}, ptr {b(f'getelementptr i64, ptr {dst}, i64 %{name}.i')}, align 8")
    b.do(f"%{name}.i2 = add i64 %{name}.i, 1")
    b.do(f"br label %{name}.loop, !llvm.loop !1")
    b.label(f"{name}.done")


# -- arrays: slots obj, data, shape[3], strides[3] ------------------------------------------------

ARRAY_SLOTS = 8
NPY_WRITEABLE = 0x0400


# How an element access treats its indices: "" Python's negative indices and a bounds guard
# per index; "_nn" every index is known non-negative (value ranges): the guard only; "_u"
# every index is proven in bounds by a GUARD_INBOUNDS before the loop: no check at all.
INDEX_MODES = ("", "_nn", "_u")


# How an access finds its element: "" by every dimension's stride; "_C" in a C-contiguous
# array (layout "C"), whose last dimension's stride is the item size (when that dimension
# has more than one element; with one, its only index is 0): a scaled index, no stride load.
LAYOUTS = ("", "_C")


def _element(b: _Body, ndim: int, mode: str = "", layout: str = "", size: int = 8) -> str:
    """Address of a[i, j, k] (indices in slots B, D, E), checked as `mode` says, of items of
    `size` bytes laid out as `layout` says."""
    offset = "0"
    for d, hole in enumerate(("B", "D", "E")[:ndim]):
        j = b.load("i64", hole)
        if mode != "_u":
            n = b.load("i64", "A", 16 + 8 * d)
            if mode == "":
                wrapped = b(f"add i64 {j}, {n}")
                j = b(f"select i1 {b(f'icmp slt i64 {j}, 0')}, i64 {wrapped}, i64 {j}")
            b.guard(b(f"icmp uge i64 {j}, {n}"))
        if layout == "_C" and d == ndim - 1:
            stride = str(size)
        else:
            stride = b.load("i64", "A", 40 + 8 * d)
        offset = b(f"add i64 {offset}, {b(f'mul i64 {j}, {stride}')}")
    return b(f"getelementptr i8, ptr {b.load('ptr', 'A', 8)}, i64 {offset}")


# A float operation may read an operand straight from a float64 array (1-D or 2-D,
# C-contiguous, every index proven in bounds: what getitemN_f64_u_C reads) instead of from a
# slot the getitem stored it in: `pos[3 * i] - pos[3 * j]`, matmul's `s += a[i, k] * b[k, j]`.
# An operand's source: "s" its slot (A for x, B for y); "e1" element [TA] of the array at A
# (x) or [TC] of the array at B (y); "e2" element [TA, TB] at A (x) or [TC, E] at B (y).
# The addend of muladd/addmul is slot D, the result slot C.
OPERAND_SOURCES = ("s", "e1", "e2")
ELEMENT_OPS = ("add", "sub", "mul", "truediv", "muladd", "addmul")


def _operand(b: _Body, source: str, holes: tuple[str, ...]) -> str:
    """An operand's double, from its slot or its array element (see OPERAND_SOURCES)."""
    if source == "s":
        return b.load("double", holes[0])
    arr, idx = holes[0], holes[1:1 + int(source[1])]
    offset = b(f"shl i64 {b.load('i64', idx[-1])}, 3")
    if source == "e2":
        row = b(f"mul i64 {b.load('i64', idx[0])}, {b.load('i64', arr, 40)}")
        offset = b(f"add i64 {row}, {offset}")
    addr = b(f"getelementptr i8, ptr {b.load('ptr', arr, 8)}, i64 {offset}")
    return b(f"load double, ptr {addr}, align 1")


def _element_operand_stencils() -> None:
    """NumPy's flavour of + - * / and the fused multiply-adds with one or both operands read
    from array elements: `{op}_ffn_{x source}{y source}`, e.g. addmul_ffn_e2e2."""
    for op in ELEMENT_OPS:
        for sx, sy in itertools.product(OPERAND_SOURCES, repeat=2):
            if sx == sy == "s":
                continue
            b = _Body()
            x = _operand(b, sx, ("A", "TA", "TB"))
            y = _operand(b, sy, ("B", "TC", "E"))
            if op in ("muladd", "addmul"):
                t, z = b(f"fmul double {x}, {y}"), b.load("double", "D")
                r = b(f"fadd double {t}, {z}" if op == "muladd" else f"fadd double {z}, {t}")
            elif op == "truediv":
                b.guard(b(f"fcmp oeq double {y}, 0.0"))
                r = b(f"fdiv double {x}, {y}")
            else:
                r = b(f"{dict(add='fadd', sub='fsub', mul='fmul')[op]} double {x}, {y}")
            # NumPy's flavour: a non-finite result deoptimises (see _float_stencils)
            b.guard(b(f"xor i1 {b.finite(r)}, true"))
            b.store("double", r, "C")
            b.jump("NEXT")
            _stencil(f"{op}_ffn_{sx}{sy}", b)


def _array_stencils() -> None:
    _element_operand_stencils()
    _element_access_stencils()
    # GUARD_INBOUNDS (passes/bounds.py): a loop's accesses are in bounds for every
    # iteration when its last index A is below the dimension B, or it runs no iteration
    # (count D): checked once before the loop
    b = _Body()
    x, n, count = b.load("i64", "A"), b.load("i64", "B"), b.load("i64", "D")
    b.guard(b(f"and i1 {b(f'icmp sgt i64 {count}, 0')}, {b(f'icmp sge i64 {x}, {n}')}"))
    b.jump("NEXT")
    _stencil("guard_inbounds", b)


def _element_access_stencils() -> None:
    """getitemN_* and setitemN_*: an element of an array at A, indices in B, D, E, read into
    C or written from C."""
    for ndim, mode, layout in itertools.product((1, 2, 3), INDEX_MODES, LAYOUTS):
        for name, (mem, widen) in ELEMS.items():
            size = _ITEM_SIZE[mem]
            b = _Body()
            v = b(f"load {mem}, ptr {_element(b, ndim, mode, layout, size)}, align 1")
            if name == "b1":
                v = b(f"zext i1 {b(f'icmp ne i8 {v}, 0')} to i64")
                ty = "i64"
            elif widen:
                ty = "double" if widen == "fpext" else "i64"
                v = b(f"{widen} {mem} {v} to {ty}")
            else:
                ty = mem
            b.store(ty, v, "C")
            b.jump("NEXT")
            _stencil(f"getitem{ndim}_{name}{mode}{layout}", b)
        # stores: a double into f64, an i64 (range-checked) into ints, a bool into b1
        for name, (mem, _widen) in ELEMS.items():
            if name == "f32":
                continue
            b = _Body()
            obj = b.load("ptr", "A")
            flags = b(f"load i32, ptr {b(f'getelementptr i8, ptr {obj}, i64 64')}, align 4")
            b.guard(b(f"icmp eq i32 {b(f'and i32 {flags}, {NPY_WRITEABLE}')}, 0"))
            if name == "f64":
                v = b.load("double", "C")
            else:
                v = b.load("i64", "C")
                if mem != "i64":
                    bits = int(mem[1:])
                    lo, hi = ((0, 2 ** bits - 1) if name[0] in "ub"
                              else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1))
                    b.guard(b(f"or i1 {b(f'icmp slt i64 {v}, {lo}')}, {b(f'icmp sgt i64 {v}, {hi}')}"))
                    v = b(f"trunc i64 {v} to {mem}")
            addr = _element(b, ndim, mode, layout, _ITEM_SIZE[mem])
            b.do(f"store {mem} {v}, ptr {addr}, align 1")
            b.jump("NEXT")
            _stencil(f"setitem{ndim}_{name}{mode}{layout}", b)
        # an int (exactly representable) into a float64 array
        b = _Body()
        obj = b.load("ptr", "A")
        flags = b(f"load i32, ptr {b(f'getelementptr i8, ptr {obj}, i64 64')}, align 4")
        b.guard(b(f"icmp eq i32 {b(f'and i32 {flags}, {NPY_WRITEABLE}')}, 0"))
        v = b(f"sitofp i64 {b.load('i64', 'C')} to double")
        b.do(f"store double {v}, ptr {_element(b, ndim, mode, layout)}, align 1")
        b.jump("NEXT")
        _stencil(f"setitem{ndim}_f64_from_int{mode}{layout}", b)


# -- the core prologue and the vectorcall entry (shared_ir.py) -----------------------------------

def _prologue() -> None:
    _STENCILS["enter"] = PROLOGUE.lstrip("\n")


def _entry() -> None:
    _STENCILS["entry"] = ENTRY.lstrip("\n")
    _STENCILS["type"] = STACK_OK + ENTRY_TYPE


def _thunks() -> None:
    """Per function, only these are copied: they pass its descriptor (K) to the shared
    entry and prologue; deopt sites store their frame state in slot 4 and jump to the
    shared deopt routine."""
    _STENCILS["core"] = """define i32 @st_core(ptr %args, ptr %out) #0 {
  %fd = call ptr asm "movabsq $$K, $0", "=r"()
  %r = tail call i32 @ENTER(ptr %args, ptr %out, ptr %fd)
  ret i32 %r
}
"""
    _STENCILS["entry_thunk"] = """define ptr @st_entry_thunk(ptr %self, ptr %args, i64 %n, ptr %kw) #0 {
  %fd = call ptr asm "movabsq $$K, $0", "=r"()
  %r = tail call ptr @ENTRY(ptr %self, ptr %args, i64 %n, ptr %kw, ptr %fd)
  ret ptr %r
}
"""
    # the same, first asking the names check (runtime/names.py: table KT) whether the free
    # names still name what the code baked in; when not, handler KH takes the call
    _STENCILS["entry_thunk_guarded"] = """define ptr @st_entry_thunk_guarded(ptr %self, \
ptr %args, i64 %n, ptr %kw) #0 {
  %t = call ptr asm "movabsq $$KT, $0", "=r"()
  %ok = call i32 @NAMES(ptr %t)
  %changed = icmp eq i32 %ok, 0
  br i1 %changed, label %rebound, label %go, !prof !0
go:
  %fd = call ptr asm "movabsq $$K, $0", "=r"()
  %r = tail call ptr @ENTRY(ptr %self, ptr %args, i64 %n, ptr %kw, ptr %fd)
  ret ptr %r
rebound:
  %h = call ptr asm "movabsq $$KH, $0", "=r"()
  %r2 = tail call ptr @PyObject_Vectorcall(ptr %h, ptr %args, i64 %n, ptr %kw)
  ret ptr %r2
}
"""
    b = _Body()
    b.do(f"store i64 {b.const('K2')}, ptr {b('getelementptr i8, ptr %f, i64 32')}, align 8")
    b.jump("DEOPTALL")
    _stencil("deopt_site", b)


def register_variants() -> list[tuple[dict[str, str], frozenset[str]]]:
    """The register variants the library has: (holes -> register, the stencils that may get
    that variant; those that do not read or write every such hole through it get none).

    What a register must not lose is a value carried around the loop, and such a value is
    computed from itself: so the variants are those that write a cached slot (C), reading
    it as one operand (A, B, or a multiply-add's addend D) or as none. A stencil that only
    reads a cached slot may read it from the slot, which is current (its load is not on the
    loop's critical path); readers get variants only where they are in most loops: the
    loop's test, and the float operations and 1-d element accesses indexed by the loop
    counter."""
    ints = [f"{op}_{t}" for op in ("add", "sub", "mul") for t in ("ii", "iu")]
    ints += ["floordiv_ii", "mod_ii", "floordiv_pow2", "mod_pow2", "bitand_ii", "bitor_ii",
             "bitxor_ii", "lshift_ii", "rshift_ii", "min_ii", "max_ii", "neg_i", "abs_i",
             "muladd_ii", "addmul_ii", "mov", "f2i", "floor_f2i", "ceil_f2i", "range_item",
             "range_item1", "truth_i"]
    floats = [f"{op}_{t}{f}" for op in ("add", "sub", "mul", "truediv")
              for t in ("ff", "fi", "if") for f in ("p", "n")]
    floats += [f"{op}_ff{f}" for op in ("floordiv", "mod", "pow", "muladd", "addmul")
               for f in ("p", "n")]
    floats += [f"{a}_{r}{b}_ff{f}" for a, b in itertools.product(PAIR_OPS, repeat=2)
               for r in ("", "r") for f in ("p", "n") if (a, b) != ("mul", "add")]
    floats += [f"{op}_ffn_{x}{y}" for op in ELEMENT_OPS
               for x, y in itertools.product(OPERAND_SOURCES, repeat=2) if x != y or x != "s"]
    floats += ["neg_f", "abs_f", "fabs_f", "sqrt_f", "min_ff", "max_ff", "i2f", "i2f_exact"]
    out = []
    for holes in (("A", "C"), ("B", "C"), ("D", "C"), ("C",), ("A", "B", "C")):
        out.append(({h: "r" for h in holes}, frozenset(ints)))
        out.append(({h: "d" for h in holes}, frozenset(floats)))
    # a value passed from one stencil to the next in a loop (regs.py): a result in %s or
    # %e, an operand read from it
    for reg, names in (("s", ints), ("e", floats)):
        for holes in (("C",), ("A", "C"), ("B", "C"), ("D", "C"), ("A", "B", "C"), ("A",),
                      ("B",), ("D",)):
            out.append(({h: reg for h in holes}, frozenset(names)))
    # the loop's counter as one operand, the result passed on in %s (spectral_norm's
    # `i + j`, closest's `k + 1`)
    out += [({"A": "r", "C": "s"}, frozenset(ints)), ({"B": "r", "C": "s"}, frozenset(ints))]
    to_float = frozenset(n for n in floats if "_if" in n or n.startswith("i2f"))
    out += [({"A": "s", "C": "e"}, to_float), ({"A": "s"}, to_float)]
    to_float = frozenset(n for n in floats if "_fi" in n)
    out += [({"B": "s", "C": "e"}, to_float), ({"B": "s"}, to_float)]
    to_int = frozenset(("f2i", "floor_f2i", "ceil_f2i"))
    out += [({"A": "e", "C": "s"}, to_int), ({"A": "e"}, to_int)]
    # the readers
    brs = frozenset([f"br_{c}_ii" for c in INT_CMP] + ["br_b", "br_not_b"])
    out += [({"A": "r"}, brs), ({"B": "r"}, brs), ({"A": "s"}, brs), ({"B": "s"}, brs)]
    brs = frozenset(f"br_{n}{c}_ff" for c in FLOAT_CMP for n in ("", "not_"))
    out += [({"A": "d"}, brs), ({"B": "d"}, brs), ({"A": "e"}, brs), ({"B": "e"}, brs)]
    # a 1-d array's element read or written at the loop's counter (%r) or at an index the
    # stencil before computed (%s): the element read into %s or %e, the value written
    # from them (nbody's `v[3 * i + 1]` read, updated and written back)
    access = frozenset(f"{op}1_{name}{mode}{layout}" for op in ("getitem", "setitem")
                       for name in ELEMS for mode in INDEX_MODES for layout in LAYOUTS)
    for index in ({}, {"B": "r"}, {"B": "s"}):
        for value in ({}, {"C": "s"}, {"C": "e"}):
            if index or value:
                out.append((index | value, access))
    index = {"s": (None,), "e1": (None, "TA"), "e2": (None, "TA", "TB")}
    index_y = {"s": (None,), "e1": (None, "TC"), "e2": (None, "TC", "E")}
    for sx, sy in itertools.product(OPERAND_SOURCES, repeat=2):
        for hx, hy in itertools.product(index[sx], index_y[sy]):
            if hx is None and hy is None:
                continue
            r = {h: "r" for h in (hx, hy) if h is not None}
            for op in ELEMENT_OPS:
                name = frozenset({f"{op}_ffn_{sx}{sy}"})
                out.append((r, name))
                if op in ("muladd", "addmul"):
                    out.append((dict(r, D="d", C="d"), name))
                    if "s" in (sx, sy):         # the other operand passed on in %e
                        out.append((dict(r, D="d", C="d", **{"A" if sx == "s" else "B": "e"}),
                                    name))
                elif op in ("add", "sub") and "s" in (sx, sy):
                    out.append((dict(r, **{"A" if sx == "s" else "B": "d"}, C="d"), name))
    # an element's index computed by the stencil before (closest's `v[i] - q`, i = k + 1)
    for sx, sy in (("e1", "s"), ("s", "e1")):
        index_hole, other = ("TA", "B") if sx == "e1" else ("TC", "A")
        for op in ELEMENT_OPS:
            name = frozenset({f"{op}_ffn_{sx}{sy}"})
            for more in ({}, {"C": "e"}, {other: "e", "C": "e"}):
                out.append(({index_hole: "s"} | more, name))
    return out


def module_text(triple: str, data_layout: str) -> str:
    """The whole library as one LLVM module."""
    global _REGS, _WANTED
    if not _STENCILS:
        _int_stencils()
        _float_stencils()
        _control_stencils()
        _call_stencils()
        _array_stencils()
        merged: dict[tuple, set[str]] = {}
        for regs, names in register_variants():
            merged.setdefault(tuple(sorted(regs.items())), set()).update(names)
        for regs, names in merged.items():
            _REGS, _WANTED = dict(regs), frozenset(names)
            try:
                for group in (_int_stencils, _float_stencils, _control_stencils,
                              _element_operand_stencils, _element_access_stencils):
                    group()
            finally:
                _REGS, _WANTED = {}, frozenset()
        _prologue()
        _entry()
        _thunks()
    parts = [f'target triple = "{triple}"', f'target datalayout = "{data_layout}"']
    parts += [f"@{h} = external dso_local global i8" for h in SMALL_HOLES]
    parts += [f'@{h} = external dso_local global i8, code_model "large"'
              for h in LARGE_HOLES + ("K3", "K4", "KS", "KT", "KH")]
    parts += [f"declare dso_local i32 @{h}(ptr, i64, i64, double, i64, double)"
              for h in JUMP_HOLES]
    parts.append("declare dso_local i32 @ENTER(ptr, ptr, ptr)")
    parts.append("declare dso_local preserve_allcc i32 @SIGNALS()")
    parts.append("declare dso_local ptr @ENTRY(ptr, ptr, i64, ptr, ptr)")
    parts.append("declare dso_local i32 @CORE(ptr, ptr)")
    parts.append("declare dso_local i32 @NAMES(ptr)")
    parts += [f"declare dso_local {d.split(' ', 1)[1]}" for d in C_FUNCTIONS.values()]
    parts += [f"declare dso_local double @{n}(double)" for n in LIBM_1]
    parts += [f"declare dso_local double @{n}(double, double)" for n in LIBM_2]
    for t in ("sadd", "ssub", "smul"):
        parts.append(f"declare {{i64, i1}} @llvm.{t}.with.overflow.i64(i64, i64)")
    for f in ("fabs", "floor", "ceil", "trunc", "sqrt"):
        parts.append(f"declare double @llvm.{f}.f64(double)")
    parts.append("declare double @llvm.copysign.f64(double, double)")
    parts.append("declare ptr @llvm.stacksave.p0()")
    parts.append(float_pow_ir("#1", " alwaysinline"))  # _float_pow's (nobuiltin: #1)
    parts += list(_STENCILS.values())
    parts.append('attributes #0 = { nounwind "no-jump-tables"="true" "frame-pointer"="none" }')
    parts.append("attributes #1 = { nobuiltin }")
    # the prologue's copy loops are a few words: no memcpy call, no vector loop
    parts.append('attributes #2 = { nounwind "no-builtins" "no-jump-tables"="true" '
                 '"frame-pointer"="none" }')
    parts.append('!1 = distinct !{!1, !2, !3}')
    parts.append('!2 = !{!"llvm.loop.vectorize.enable", i1 false}')
    parts.append('!3 = !{!"llvm.loop.unroll.disable"}')
    parts.append('!0 = !{!"branch_weights", i32 1, i32 2000}')
    return "\n".join(parts) + "\n"


def stencil_names() -> list[str]:
    if not _STENCILS:
        module_text("", "")
    return sorted(_STENCILS)
