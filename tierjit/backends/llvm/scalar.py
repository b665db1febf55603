"""Native lowering of scalar operations, with a guard wherever Python's result would differ.

Python ints are i64 here: add, sub, mul, neg, abs, shifts and powers check for overflow and
deoptimise, so tier 0 finishes the call with big ints. Division and modulo follow Python's
floor semantics and deoptimise on a zero divisor (tier 0 raises ZeroDivisionError). NumPy
scalars follow NumPy: operands are converted to the result dtype (NEP 50: Python scalars are
"weak"), and any result NumPy would warn about — integer overflow, a non-finite float — is
handed back to tier 0, which lets NumPy compute it and warn.

Methods return the LLVM operand of the result, or None when the combination is not lowered
natively (the caller then calls into Python for it, which is exact by construction).
"""

from __future__ import annotations

import operator

from ...ir.ops import Op
from ...types.lattice import BOOL, FLOAT, INT, Scalar
from .lltypes import Kind, kind

_ICMP_S = {Op.LT: "slt", Op.LE: "sle", Op.GT: "sgt", Op.GE: "sge", Op.EQ: "eq", Op.NE: "ne"}
_ICMP_U = {Op.LT: "ult", Op.LE: "ule", Op.GT: "ugt", Op.GE: "uge", Op.EQ: "eq", Op.NE: "ne"}
_FCMP = {Op.LT: "olt", Op.LE: "ole", Op.GT: "ogt", Op.GE: "oge", Op.EQ: "oeq", Op.NE: "une"}
_FARITH = {Op.ADD: "fadd", Op.SUB: "fsub", Op.MUL: "fmul", Op.TRUEDIV: "fdiv"}
_BITS = {Op.BITAND: "and", Op.BITOR: "or", Op.BITXOR: "xor"}
TWO53 = 2 ** 53


def _pow2(operand: str) -> bool:
    """Is this LLVM operand a constant positive power of two?"""
    try:
        v = int(operand)
    except ValueError:
        return False
    return v > 0 and v & (v - 1) == 0


def fconst(x: float, bits: int = 64) -> str:
    """An exact LLVM float constant (LLVM spells both widths as a double's bits)."""
    import struct
    if bits == 32:
        x = struct.unpack("<f", struct.pack("<f", x))[0]
    return "0x%016X" % struct.unpack("<Q", struct.pack("<d", x))[0]


class ScalarOps:
    """Mixed into FunctionCodegen: uses t(), emit(), deopt_unless(), declare()."""

    # -- conversions ----------------------------------------------------------------------
    def to_kind(self, x: str, src: Kind, dst: Kind) -> str:
        """Convert a value between representations (value-preserving where it matters;
        range guards for Python ints going into narrower NumPy ints)."""
        if src.ll == dst.ll and src.cls == dst.cls and src.signed == dst.signed:
            return x
        if dst.cls == "complex":
            part = self.to_kind(x, src, Kind("float", dst.bits, numpy=dst.numpy)) \
                if src.cls != "complex" else None
            f = "double" if dst.bits == 64 else "float"
            if part is None:
                re = self.emit(f"extractvalue {src.ll} {x}, 0")
                im = self.emit(f"extractvalue {src.ll} {x}, 1")
                re = self.fp_resize(re, src.bits, dst.bits)
                im = self.fp_resize(im, src.bits, dst.bits)
            else:
                re, im = part, "0.0"
            s = self.emit(f"insertvalue {dst.ll} undef, {f} {re}, 0")
            return self.emit(f"insertvalue {dst.ll} {s}, {f} {im}, 1")
        if dst.cls == "float":
            f = "double" if dst.bits == 64 else "float"
            if src.cls == "float":
                return self.fp_resize(x, src.bits, dst.bits)
            if src.cls == "bool":
                return self.emit(f"uitofp i1 {x} to {f}")
            op = "sitofp" if src.signed else "uitofp"
            return self.emit(f"{op} i{src.bits} {x} to {f}")
        if dst.cls == "int":
            if src.cls == "bool":
                return self.emit(f"zext i1 {x} to i{dst.bits}")
            if src.cls != "int":
                raise AssertionError(f"no conversion {src} -> {dst}")
            if not src.numpy and (dst.bits < 64 or not dst.signed):
                lo, hi = (-(2 ** (dst.bits - 1)), 2 ** (dst.bits - 1)) if dst.signed \
                    else (0, 2 ** dst.bits)
                self.deopt_unless(self.in_range(x, lo, hi))
            if dst.bits == src.bits:
                return x
            if dst.bits < src.bits:
                return self.emit(f"trunc i{src.bits} {x} to i{dst.bits}")
            ext = "sext" if src.signed else "zext"
            return self.emit(f"{ext} i{src.bits} {x} to i{dst.bits}")
        if dst.cls == "bool" and src.cls == "bool":
            return x
        raise AssertionError(f"no conversion {src} -> {dst}")

    def weak_to(self, x: str, k: Kind, to: Kind) -> str:
        """An operand of a NumPy operation converted to its dtype (NEP 50). A Python float
        that a float32 cannot hold (finite, made infinite) deoptimises: NumPy warns
        "overflow encountered in cast" (a sum's result would show it, a quotient or a
        comparison not). A Python int becomes a double first, as NumPy converts it (then
        a float32: two roundings, which `sitofp` to float would make one)."""
        if k.cls == "int" and not k.numpy and to.cls == "float" and to.bits == 32:
            return self.fp_resize(self.to_kind(x, k, Kind("float", 64)), 64, to.bits)
        r = self.to_kind(x, k, to)
        if k.cls == "float" and not k.numpy and to.cls == "float" and to.bits < k.bits:
            lost = self.emit(f"xor i1 {self.finite(self.fp_resize(r, to.bits, k.bits))}, true")
            self.deopt_if(self.emit(f"and i1 {self.finite(x)}, {lost}"))
        return r

    def fp_resize(self, x: str, sbits: int, dbits: int) -> str:
        if sbits == dbits:
            return x
        if sbits < dbits:
            return self.emit(f"fpext float {x} to double")
        return self.emit(f"fptrunc double {x} to float")

    def in_range(self, x: str, lo: int, hi: int) -> str:
        """i1: lo <= x < hi for an i64 x (a Python int)."""
        lo = max(lo, -2 ** 63)
        a = self.emit(f"icmp sge i64 {x}, {lo}")
        if hi >= 2 ** 63:
            return a
        b = self.emit(f"icmp slt i64 {x}, {hi}")
        return self.emit(f"and i1 {a}, {b}")

    def exact_double(self, x: str, k: Kind) -> str:
        """An int converted to double, deoptimising unless the conversion is exact
        (Python compares ints with floats exactly; |x| <= 2**53 is always exact)."""
        if k.cls == "bool":
            return self.emit(f"uitofp i1 {x} to double")
        if k.bits > 53:
            x64 = x if k.bits == 64 else self.emit(f"sext i{k.bits} {x} to i64")
            biased = self.emit(f"add i64 {x64}, {TWO53}")
            self.deopt_unless(self.emit(f"icmp ule i64 {biased}, {2 * TWO53}"))
        return self.to_kind(x, k, Kind("float", 64))

    def truth(self, x: str, t: Scalar) -> str:
        k = kind(t)
        if k.cls == "bool":
            return x
        if k.cls == "none":
            return "false"
        if k.cls == "int":
            return self.emit(f"icmp ne i{k.bits} {x}, 0")
        if k.cls == "float":
            return self.emit(f"fcmp une {k.ll} {x}, 0.0")
        f = "double" if k.bits == 64 else "float"
        re = self.emit(f"extractvalue {k.ll} {x}, 0")
        im = self.emit(f"extractvalue {k.ll} {x}, 1")
        a = self.emit(f"fcmp une {f} {re}, 0.0")
        b = self.emit(f"fcmp une {f} {im}, 0.0")
        return self.emit(f"or i1 {a}, {b}")

    def deopt_unless_finite(self, x: str, k: Kind, operands: tuple[str, ...] = ()) -> None:
        self.defer_non_finite(x, k.ll, operands)

    # -- binary operators -----------------------------------------------------------------
    def binary(self, op: Op, a: str, ta: Scalar, b: str, tb: Scalar, tr: Scalar) -> str | None:
        ka, kb, kr = kind(ta), kind(tb), kind(tr)
        if op in _ICMP_S:
            return self.compare(op, a, ka, b, kb, ta, tb)
        if kr.numpy or ka.numpy or kb.numpy:
            return self.numpy_binary(op, a, ka, b, kb, kr)
        if kr.cls == "bool" and op in _BITS:
            return self.emit(f"{_BITS[op]} i1 {a}, {b}")
        if kr.cls == "int":
            return self.int_binary(op, self.to_kind(a, ka, kr), self.to_kind(b, kb, kr))
        if kr.cls == "float":
            if op is Op.TRUEDIV and ka.cls in ("int", "bool") and kb.cls in ("int", "bool"):
                # int / int is correctly rounded in Python; so is double division of exact ints
                x, y = self.exact_double(a, ka), self.exact_double(b, kb)
            else:
                x, y = self.to_kind(a, ka, kr), self.to_kind(b, kb, kr)
            return self.float_binary(op, x, y, kr, python=True)
        if kr.cls == "complex" and op in (Op.ADD, Op.SUB, Op.MUL):
            return self.complex_binary(op, self.to_kind(a, ka, kr), self.to_kind(b, kb, kr))
        return None

    def int_binary(self, op: Op, a: str, b: str, bits: int = 64, signed: bool = True,
                   wraps: bool = False) -> str | None:
        it = f"i{bits}"
        s = "s" if signed else "u"
        if op in (Op.ADD, Op.SUB, Op.MUL):
            name = {Op.ADD: "add", Op.SUB: "sub", Op.MUL: "mul"}[op]
            pair = self.emit(f"call {{{it}, i1}} @llvm.{s}{name}.with.overflow.{it}"
                             f"({it} {a}, {it} {b})")
            self.deopt_if(self.emit(f"extractvalue {{{it}, i1}} {pair}, 1"))
            return self.emit(f"extractvalue {{{it}, i1}} {pair}, 0")
        if op in _BITS:
            return self.emit(f"{_BITS[op]} {it} {a}, {b}")
        if op in (Op.FLOORDIV, Op.MOD) and signed and _pow2(b) and int(b) < 2 ** (bits - 1):
            # floor division and modulo by 2**k are exactly an arithmetic shift and a mask,
            # for either sign of a (and let LLVM see the result's range)
            if op is Op.FLOORDIV:
                return self.emit(f"ashr {it} {a}, {int(b).bit_length() - 1}")
            return self.emit(f"and {it} {a}, {int(b) - 1}")
        if op in (Op.FLOORDIV, Op.MOD):
            self.deopt_if(self.emit(f"icmp eq {it} {b}, 0"), defer=False)   # guards the division
            if not signed:
                return self.emit(f"{'udiv' if op is Op.FLOORDIV else 'urem'} {it} {a}, {b}")
            minv = -(2 ** (bits - 1))
            m1 = self.emit(f"icmp eq {it} {b}, -1")
            if op is Op.FLOORDIV:
                ismin = self.emit(f"icmp eq {it} {a}, {minv}")
                self.deopt_if(self.emit(f"and i1 {ismin}, {m1}"), defer=False)
            safe_b = self.emit(f"select i1 {m1}, {it} 1, {it} {b}")
            q = self.emit(f"sdiv {it} {a}, {safe_b}")
            r = self.emit(f"srem {it} {a}, {safe_b}")
            q = self.emit(f"select i1 {m1}, {it} {self.neg_wrap(a, it)}, {it} {q}") \
                if op is Op.FLOORDIV else q
            nz = self.emit(f"icmp ne {it} {r}, 0")
            x = self.emit(f"xor {it} {r}, {b}")
            neg = self.emit(f"icmp slt {it} {x}, 0")
            adj = self.emit(f"and i1 {nz}, {neg}")
            if op is Op.FLOORDIV:
                return self.emit(f"sub {it} {q}, {self.emit(f'zext i1 {adj} to {it}')}")
            add = self.emit(f"select i1 {adj}, {it} {b}, {it} 0")
            return self.emit(f"add {it} {r}, {add}")
        if op is Op.POW:
            if bits != 64 or not signed:
                return None
            self.deopt_if(self.emit(f"icmp slt i64 {b}, 0"))
            pair = self.emit(f"call {{i64, i1}} @{self.helper('ipow')}(i64 {a}, i64 {b})")
            self.deopt_if(self.emit(f"extractvalue {{i64, i1}} {pair}, 1"))
            return self.emit(f"extractvalue {{i64, i1}} {pair}, 0")
        if op is Op.LSHIFT:
            if wraps:
                return self.np_shift("shl", a, b, it, bits)
            small = self.emit(f"icmp ult {it} {b}, {bits}")
            bb = self.emit(f"select i1 {small}, {it} {b}, {it} 0")
            r = self.emit(f"shl {it} {a}, {bb}")
            back = self.emit(f"ashr {it} {r}, {bb}")
            same = self.emit(f"icmp eq {it} {back}, {a}")
            ok = self.emit(f"and i1 {small}, {same}")
            zero = self.emit(f"icmp eq {it} {a}, 0")
            nonneg = self.emit(f"icmp sge {it} {b}, 0")
            zok = self.emit(f"and i1 {zero}, {nonneg}")
            self.deopt_unless(self.emit(f"or i1 {ok}, {zok}"))
            return self.emit(f"select i1 {small}, {it} {r}, {it} 0")
        if op is Op.RSHIFT:
            if wraps:
                return self.np_shift("ashr" if signed else "lshr", a, b, it, bits)
            self.deopt_if(self.emit(f"icmp slt {it} {b}, 0"))
            big = self.emit(f"icmp uge {it} {b}, {bits}")
            bb = self.emit(f"select i1 {big}, {it} {bits - 1}, {it} {b}")
            return self.emit(f"ashr {it} {a}, {bb}")
        return None

    def np_shift(self, shift: str, a: str, b: str, it: str, bits: int) -> str:
        """A NumPy integer shift by b in [0, bits); other amounts deoptimise (NumPy's own
        rules, in tier 0). The shift is by an amount clamped into range: the guard may be
        deferred past it, and LLVM's shift by `bits` or more is poison, which reaching the
        guard's branch would make undefined behaviour."""
        small = self.emit(f"icmp ult {it} {b}, {bits}")
        self.deopt_unless(small)
        return self.emit(f"{shift} {it} {a}, {self.emit(f'select i1 {small}, {it} {b}, {it} 0')}")

    def neg_wrap(self, a: str, it: str) -> str:
        return self.emit(f"sub {it} 0, {a}")

    def float_binary(self, op: Op, a: str, b: str, k: Kind, python: bool) -> str | None:
        f = k.ll
        if op in _FARITH:
            if op is Op.TRUEDIV and python:
                self.deopt_if(self.emit(f"fcmp oeq {f} {b}, 0.0"))
            r = self.emit(f"{_FARITH[op]} {f} {a}, {b}")
            # a finite sum, difference or product has finite operands, a finite quotient a
            # finite dividend (x / inf is 0.0)
            proves = (a,) if op is Op.TRUEDIV else (a, b)
            if python and self.strict_floats:
                # a float | numpy.float64 value: NumPy's rule (warn on a non-finite result)
                # is the stricter one; Python's inf and NaN results are recomputed in tier 0
                self.deopt_unless_finite(r, k, proves)
        elif op in (Op.FLOORDIV, Op.MOD):
            self.deopt_if(self.emit(f"fcmp oeq {f} {b}, 0.0"))
            name = ("floordiv" if op is Op.FLOORDIV else "fmod") + ("" if k.bits == 64 else "32")
            r = self.emit(f"call {f} @{self.helper(name)}({f} {a}, {f} {b})")
        elif op is Op.POW:
            if k.bits != 64:
                return None
            if python:
                pair = self.emit(f"call {{double, i1}} @{self.helper('fpow')}"
                                 f"(double {a}, double {b})")
                self.deopt_if(self.emit(f"extractvalue {{double, i1}} {pair}, 1"))
                return self.emit(f"extractvalue {{double, i1}} {pair}, 0")
            r = self.libm("pow", [a, b])
        else:
            return None
        if not python:
            self.deopt_unless_finite(r, k, proves if op in _FARITH else ())
        return r

    def complex_binary(self, op: Op, a: str, b: str) -> str:
        """CPython's _Py_c_sum/_diff/_prod, operation for operation."""
        t = "{double, double}"
        ar, ai = (self.emit(f"extractvalue {t} {a}, {i}") for i in (0, 1))
        br, bi = (self.emit(f"extractvalue {t} {b}, {i}") for i in (0, 1))
        if op is Op.MUL:
            rr = self.emit(f"fsub double {self.emit(f'fmul double {ar}, {br}')}, "
                           f"{self.emit(f'fmul double {ai}, {bi}')}")
            ri = self.emit(f"fadd double {self.emit(f'fmul double {ar}, {bi}')}, "
                           f"{self.emit(f'fmul double {ai}, {br}')}")
        else:
            ins = "fadd" if op is Op.ADD else "fsub"
            rr = self.emit(f"{ins} double {ar}, {br}")
            ri = self.emit(f"{ins} double {ai}, {bi}")
        s = self.emit(f"insertvalue {t} undef, double {rr}, 0")
        return self.emit(f"insertvalue {t} {s}, double {ri}, 1")

    def numpy_binary(self, op: Op, a: str, ka: Kind, b: str, kb: Kind, kr: Kind) -> str | None:
        if not kr.numpy:
            return None
        if kr.cls == "bool":
            if op in _BITS and ka.cls == kb.cls == "bool":
                return self.emit(f"{_BITS[op]} i1 {a}, {b}")
            return None
        if ka.cls == "complex" or kb.cls == "complex" or kr.cls == "complex":
            return None
        x, y = self.weak_to(a, ka, kr), self.weak_to(b, kb, kr)
        if kr.cls == "float":
            return self.float_binary(op, x, y, kr, python=False)
        if op is Op.TRUEDIV:
            return None
        return self.int_binary(op, x, y, kr.bits, kr.signed, wraps=True)

    # -- comparisons ----------------------------------------------------------------------
    def compare(self, op: Op, a: str, ka: Kind, b: str, kb: Kind, ta: Scalar,
                tb: Scalar) -> str | None:
        if ka.cls == "complex" or kb.cls == "complex" or ka.cls == "none" or kb.cls == "none":
            if op in (Op.EQ, Op.NE) and ka.cls == kb.cls == "complex" and \
                    not ka.numpy and not kb.numpy:
                re = self.compare(op, self.emit(f"extractvalue {ka.ll} {a}, 0"), Kind("float", 64),
                                  self.emit(f"extractvalue {kb.ll} {b}, 0"), Kind("float", 64),
                                  FLOAT, FLOAT)
                im = self.compare(op, self.emit(f"extractvalue {ka.ll} {a}, 1"), Kind("float", 64),
                                  self.emit(f"extractvalue {kb.ll} {b}, 1"), Kind("float", 64),
                                  FLOAT, FLOAT)
                return self.emit(f"{'and' if op is Op.EQ else 'or'} i1 {re}, {im}")
            return None
        if ka.numpy or kb.numpy:
            if ka.cls == kb.cls == "int" and ka.signed != kb.signed:
                # NumPy compares ints of mixed sign exactly (int64 and uint64 have float64
                # as their common type, which would round 2**63 - 1 to 2**63): both widened
                # to 128 bits, where every value of either fits
                x = self.emit(f"{'sext' if ka.signed else 'zext'} {ka.ll} {a} to i128")
                y = self.emit(f"{'sext' if kb.signed else 'zext'} {kb.ll} {b} to i128")
                return self.emit(f"icmp {_ICMP_S[op]} i128 {x}, {y}")
            from ...types.rules import _trial
            try:
                common = kind(_trial(operator.add, (ta, tb)))
            except Exception:   # noqa: BLE001 - no common type: not lowered natively
                return None
            if common.cls == "complex":
                return None
            if common.cls == "bool":
                return self.emit(f"icmp {_ICMP_U[op]} i1 {a}, {b}")
            x, y = self.weak_to(a, ka, common), self.weak_to(b, kb, common)
        elif ka.cls == "float" or kb.cls == "float":
            common = Kind("float", 64)
            x = a if ka.cls == "float" else self.exact_double(a, ka)
            y = b if kb.cls == "float" else self.exact_double(b, kb)
        elif ka.cls == kb.cls == "bool":
            return self.emit(f"icmp {_ICMP_U[op]} i1 {a}, {b}")
        else:
            common = Kind("int", 64)
            x, y = self.to_kind(a, ka, common), self.to_kind(b, kb, common)
        if common.cls == "float":
            return self.emit(f"fcmp {_FCMP[op]} {common.ll} {x}, {y}")
        table = _ICMP_S if common.signed else _ICMP_U
        return self.emit(f"icmp {table[op]} {common.ll} {x}, {y}")

    # -- unary operators ------------------------------------------------------------------
    def unary(self, op: Op, a: str, ta: Scalar, tr: Scalar) -> str | None:
        ka, kr = kind(ta), kind(tr)
        if op is Op.POS:
            return self.to_kind(a, ka, kr) if ka.cls in ("bool", "int", "float") else None
        if op is Op.NEG:
            if ka.cls == "float":
                return self.emit(f"fneg {ka.ll} {a}")
            if ka.cls == "complex" and not ka.numpy:
                re = self.emit(f"fneg double {self.emit(f'extractvalue {ka.ll} {a}, 0')}")
                im = self.emit(f"fneg double {self.emit(f'extractvalue {ka.ll} {a}, 1')}")
                s = self.emit(f"insertvalue {ka.ll} undef, double {re}, 0")
                return self.emit(f"insertvalue {ka.ll} {s}, double {im}, 1")
            if kr.cls == "int" and kr.signed:
                x = self.to_kind(a, ka, kr)
                return self.int_binary(Op.SUB, "0", x, kr.bits, True)
            return None
        if op is Op.INVERT:
            if ka.cls == "int":
                return self.emit(f"xor {ka.ll} {a}, -1")
            if ka.cls == "bool" and ka.numpy:
                return self.emit(f"xor i1 {a}, true")
            return None
        return None

    def absolute(self, a: str, ta: Scalar, tr: Scalar) -> str | None:
        ka = kind(ta)
        if ka.cls == "float":
            return self.emit(f"call {ka.ll} @llvm.fabs.{'f64' if ka.bits == 64 else 'f32'}"
                             f"({ka.ll} {a})")
        if ka.cls == "bool" and not ka.numpy:
            return self.to_kind(a, ka, Kind("int", 64))
        if ka.cls == "int" and ka.signed:
            it = ka.ll
            neg = self.emit(f"icmp slt {it} {a}, 0")
            n = self.int_binary(Op.SUB, "0", a, ka.bits, True)
            return self.emit(f"select i1 {neg}, {it} {n}, {it} {a}")
        if ka.cls == "int":
            return a
        return None

    def to_int(self, a: str, ta: Scalar) -> str | None:
        """int(x) for a real scalar: truncation, deoptimising for NaN, inf and big values."""
        ka = kind(ta)
        if ka.cls in ("int", "bool"):
            if ka.cls == "int" and ka.numpy and not ka.signed and ka.bits == 64:
                self.deopt_if(self.emit(f"icmp slt i64 {a}, 0"))
                return a
            return self.to_kind(a, ka, Kind("int", 64))
        if ka.cls == "float":
            x = self.fp_resize(a, ka.bits, 64)
            lo = self.emit(f"fcmp oge double {x}, {fconst(-2.0 ** 63)}")
            hi = self.emit(f"fcmp olt double {x}, {fconst(2.0 ** 63)}")
            self.deopt_unless(self.emit(f"and i1 {lo}, {hi}"))
            # frozen: NaN or a value out of range converts to poison, and the guard may be
            # deferred past uses whose conditions are or-ed into its branch (deopt.py)
            return self.emit(f"freeze i64 {self.emit(f'fptosi double {x} to i64')}")
        return None

    def to_float(self, a: str, ta: Scalar) -> str | None:
        ka = kind(ta)
        if ka.cls == "complex":
            return None
        return self.to_kind(a, ka, Kind("float", 64))


__all__ = ["ScalarOps", "fconst", "INT", "BOOL"]
