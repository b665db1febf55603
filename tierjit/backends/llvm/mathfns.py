"""Native calls of `math` functions, bit-identical to CPython's math module.

CPython computes most of them by calling the C library (`math_1` in Modules/mathmodule.c)
and raises when the result is NaN from a non-NaN argument (domain error) or infinite from a
finite one (range error). Native code calls the same C functions (marked nobuiltin, so LLVM
cannot substitute its own) and deoptimises in exactly those cases, so tier 0 raises
CPython's exception. Functions CPython implements itself (hypot, gamma, fsum, ...) are
called through Python instead.
"""

from __future__ import annotations

import math

from ...types.lattice import Scalar
from .lltypes import Kind, kind
from .scalar import fconst

# functions computed as libm(x) with CPython's math_1 error rules
LIBM_1 = frozenset({
    "exp", "expm1", "log2", "log10", "log1p", "sin", "cos", "tan", "asin", "acos", "atan",
    "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "exp2", "cbrt",
})
INF = fconst(float("inf"))


# NumPy ufuncs done natively on a float64 (or Python float) argument: IEEE operations, so
# NumPy's own loops give the same bits on every machine (its exp, log, sin ... may not: it
# has SIMD versions of its own, so those are NumPy's calls); roundeven is NumPy's rint
UFUNC_1 = {"sqrt": "sqrt", "absolute": "fabs", "fabs": "fabs", "floor": "floor",
           "ceil": "ceil", "trunc": "trunc", "rint": "roundeven"}


class MathOps:
    """Mixed into FunctionCodegen."""

    def libm(self, name: str, args: list[str]) -> str:
        sig = ", ".join("double" for _ in args)
        self.declare(f"declare double @{name}({sig})")
        return self.emit(f"call double @{name}({', '.join('double ' + a for a in args)}) #0")

    def as_double(self, x: str, t: Scalar) -> str | None:
        k = kind(t)
        if k.cls not in ("int", "bool", "float"):
            return None
        return self.to_kind(x, k, Kind("float", 64))

    def finite(self, x: str) -> str:
        self.declare_intrinsics()
        ax = self.emit(f"call double @llvm.fabs.f64(double {x})")
        return self.emit(f"fcmp olt double {ax}, {INF}")

    def is_nan(self, x: str) -> str:
        return self.emit(f"fcmp uno double {x}, 0.0")

    def ufunc_call(self, name: str, a: list[str], ts: list, rt: Scalar) -> str | None:
        """np.NAME(x) for x a float64 (UFUNC_1, negative, positive, the float64 type itself)
        or None: NumPy's call. np.sqrt of a negative warns ("invalid value"): it
        deoptimises, so that tier 0 calls np.sqrt, which warns (or raises, as np.errstate
        says)."""
        if len(a) != 1:
            return None
        r, k = kind(rt), kind(ts[0])
        if (r.cls, r.bits, r.numpy) != ("float", 64, True) or (k.cls, k.bits) != ("float", 64):
            return None
        x = a[0]
        if name == "negative":
            return self.emit(f"fneg double {x}")
        if name in ("positive", "float64"):
            return x
        if name not in UFUNC_1:
            return None
        self.declare_intrinsics()
        if name == "sqrt":
            self.deopt_if(self.emit(f"fcmp olt double {x}, 0.0"))
        return self.emit(f"call double @llvm.{UFUNC_1[name]}.f64(double {x})")

    def math_call(self, name: str, a: list[str], ts: list, rt: Scalar) -> str | None:
        if name not in LIBM_1 | {"sqrt", "log", "fabs", "floor", "ceil", "trunc", "isnan",
                                 "isinf", "isfinite", "copysign", "atan2", "pow", "fmod",
                                 "degrees", "radians"}:
            return None
        xs = [self.as_double(x, t) for x, t in zip(a, ts)]
        if any(x is None for x in xs):
            return None
        self.declare_intrinsics()
        if name in LIBM_1 or (name == "log" and len(xs) == 1):
            if len(xs) != 1:
                return None
            x = xs[0]
            r = self.libm(name, [x])
            # domain error: NaN from non-NaN; range error: infinite from finite
            r_nan, x_nan = self.is_nan(r), self.is_nan(x)
            bad_nan = self.emit(f"and i1 {r_nan}, {self.emit(f'xor i1 {x_nan}, true')}")
            r_inf = self.emit(f"xor i1 {self.finite(r)}, true")
            bad_inf = self.emit(f"and i1 {r_inf}, {self.finite(x)}")
            self.deopt_if(self.emit(f"or i1 {bad_nan}, {bad_inf}"))
            return r
        if name == "sqrt":
            x = xs[0]
            self.deopt_if(self.emit(f"fcmp olt double {x}, 0.0"))   # ValueError in tier 0
            return self.emit(f"call double @llvm.sqrt.f64(double {x})")
        if name == "fabs":
            return self.emit(f"call double @llvm.fabs.f64(double {xs[0]})")
        if name in ("floor", "ceil", "trunc"):
            if kind(ts[0]).cls in ("int", "bool") and not kind(ts[0]).numpy:
                return self.to_int(a[0], ts[0])
            r = self.emit(f"call double @llvm.{name}.f64(double {xs[0]})")
            return self.to_int(r, Scalar(float))
        if name in ("isnan", "isinf", "isfinite"):
            x = xs[0]
            if name == "isnan":
                return self.is_nan(x)
            fin = self.finite(x)
            if name == "isfinite":
                return fin
            not_fin = self.emit(f"xor i1 {fin}, true")
            return self.emit(f"and i1 {not_fin}, {self.emit(f'fcmp ord double {x}, 0.0')}")
        if name == "copysign":
            return self.emit(f"call double @llvm.copysign.f64(double {xs[0]}, double {xs[1]})")
        if name in ("degrees", "radians"):
            c = 180.0 / math.pi if name == "degrees" else math.pi / 180.0
            return self.emit(f"fmul double {xs[0]}, {fconst(c)}")
        if name in ("atan2", "pow", "fmod"):
            both = self.emit(f"and i1 {self.finite(xs[0])}, {self.finite(xs[1])}")
            self.deopt_unless(both)             # CPython special-cases infinities and NaNs
            if name == "fmod":
                self.deopt_if(self.emit(f"fcmp oeq double {xs[1]}, 0.0"))
                return self.emit(f"frem double {xs[0]}, {xs[1]}")
            if name == "pow":
                x, y = xs
                x_zero = self.emit(f"fcmp oeq double {x}, 0.0")
                y_neg = self.emit(f"fcmp olt double {y}, 0.0")
                zero_neg = self.emit(f"and i1 {x_zero}, {y_neg}")
                fl = self.emit(f"call double @llvm.floor.f64(double {y})")
                x_neg = self.emit(f"fcmp olt double {x}, 0.0")
                frac = self.emit(f"fcmp une double {fl}, {y}")
                neg_frac = self.emit(f"and i1 {x_neg}, {frac}")
                self.deopt_if(self.emit(f"or i1 {zero_neg}, {neg_frac}"))
                r = self.libm("pow", [x, y])
                self.deopt_unless(self.finite(r))
                return r
            return self.libm("atan2", xs)
        return None


__all__ = ["MathOps"]
