"""Native NumPy arrays: element access with Python's negative indices and a bounds guard,
stores with NumPy's casting rules, attributes, and the array constructors.

Element addresses use the strides of the array value; for C-contiguous arrays they are
computed from the shape instead, which lets LLVM see unit-stride loops and vectorise them.
"""

from __future__ import annotations

from ...errors import Unsupported
from ...types.lattice import ArrayT, Scalar, TupleT, Type
from .boxing import NPY_WRITEABLE
from .lltypes import Kind, kind, ll


class ArrayOps:
    """Mixed into FunctionCodegen."""

    def element_pointer(self, arr: str, t: ArrayT, idx: list[str], its: list[Type],
                        nonneg: list | None = None) -> str:
        """Address of a[idx...], Python's negative indices included; out of bounds, tier 0
        raises the IndexError. `nonneg[d]`: the index is never negative (True), or is proven
        in bounds by a GUARD_INBOUNDS before the loop ("inbounds": no check here). The check
        guards the access, so it is never deferred
        (loading from a dummy address instead and deferring the check measured slower:
        the select defeats LLVM's addressing and load scheduling)."""
        ty = ll(t)
        offset = None
        ok = "true"
        for d, (i, it) in enumerate(zip(idx, its)):
            i = self.index_i64(i, it)
            n = self.emit(f"extractvalue {ty} {arr}, 1, {d}")
            if nonneg and nonneg[d]:
                j = i                      # never negative (value ranges): no wrap-around
            else:
                neg = self.emit(f"icmp slt i64 {i}, 0")
                wrapped = self.emit(f"add i64 {i}, {n}")
                j = self.emit(f"select i1 {neg}, i64 {wrapped}, i64 {i}")
            if not nonneg or nonneg[d] != "inbounds":    # else checked before the loop
                ok = self.emit(f"and i1 {ok}, {self.emit(f'icmp ult i64 {j}, {n}')}")
            if t.layout == "C":
                offset = j if offset is None else \
                    self.emit(f"add nuw nsw i64 {self.emit(f'mul nuw nsw i64 {offset}, {n}')}, {j}")
            else:
                s = self.emit(f"extractvalue {ty} {arr}, 2, {d}")
                term = self.emit(f"mul i64 {j}, {s}")
                offset = term if offset is None else self.emit(f"add i64 {offset}, {term}")
        data = self.emit(f"extractvalue {ty} {arr}, 0")
        if t.layout == "C":
            p = self.emit(f"getelementptr inbounds {self.mem_type(t)}, ptr {data}, i64 {offset}")
        else:
            p = self.emit(f"getelementptr inbounds i8, ptr {data}, i64 {offset}")
        self.deopt_unless(ok, defer=False)
        return p

    def itemsize(self, t: ArrayT) -> int:
        import numpy as np
        return np.dtype(t.dtype).itemsize

    def mem_type(self, t: ArrayT) -> str:
        """How an element is stored in memory (bools as bytes)."""
        k = kind(t.scalar)
        return "i8" if k.cls == "bool" else k.ll

    def index_i64(self, i: str, it: Type) -> str:
        k = kind(it)
        if k.cls == "int" and not k.signed and k.bits == 64:
            self.deopt_if(self.emit(f"icmp slt i64 {i}, 0"))
            return i
        return self.to_kind(i, k, Kind("int", 64))

    def getitem(self, arr: str, t: Type, idx: list[str], its: list[Type],
                nonneg: list[bool] | None = None) -> str | None:
        if not isinstance(t, ArrayT) or len(idx) != t.ndim:
            return None
        p = self.element_pointer(arr, t, idx, its, nonneg)
        mt = self.mem_type(t)
        v = self.emit(f"load {mt}, ptr {p}, align {min(self.itemsize(t), 8)}")
        if kind(t.scalar).cls == "bool":
            return self.emit(f"icmp ne i8 {v}, 0")
        return v

    def setitem(self, arr: str, t: Type, idx: list[str], its: list[Type], v: str,
                vt: Type, nonneg: list[bool] | None = None) -> None:
        if not isinstance(t, ArrayT) or not isinstance(vt, Scalar):
            raise Unsupported(f"item assignment to {t} of {vt} in native code")
        x = self.store_value(v, kind(vt), kind(t.scalar), vt)
        p = self.element_pointer(arr, t, idx, its, nonneg)
        mt = self.mem_type(t)
        if kind(t.scalar).cls == "bool":
            x = self.emit(f"zext i1 {x} to i8")
        self.store_undoably(mt, x, p, min(self.itemsize(t), 8))

    def store_value(self, v: str, src: Kind, dst: Kind, vt: Scalar) -> str:
        """NumPy's conversion for `a[i] = v`, where it is exact and silent; otherwise
        (overflow, NaN into ints, complex into reals, ...) it deoptimises or is refused."""
        if src.cls == dst.cls == "bool":
            return v
        if dst.cls == "bool":
            return self.truth(v, vt) if src.cls in ("int", "float") else self._refuse(vt, dst)
        if src.cls == "complex" or (dst.cls == "complex" and src.cls == "complex"
                                    and src.bits != dst.bits):
            if src.cls == dst.cls == "complex" and src.bits == dst.bits:
                return v
            return self._refuse(vt, dst)
        if dst.cls == "int":
            if src.cls == "bool":
                return self.to_kind(v, src, dst)
            if src.cls == "int":
                if src.numpy and (src.bits > dst.bits or src.signed != dst.signed):
                    return self._refuse(vt, dst)
                return self.to_kind(v, src, dst)
            if src.cls != "float":  # None: NumPy raises TypeError, which tier 0 does
                return self._refuse(vt, dst)
            # float -> int: NumPy truncates; NaN, inf and out-of-range values go to tier 0
            x = self.fp_resize(v, src.bits, 64)
            lo, hi = (-(2.0 ** (dst.bits - 1)), 2.0 ** (dst.bits - 1)) if dst.signed \
                else (0.0, 2.0 ** dst.bits)
            from .scalar import fconst
            # truncation toward zero keeps values in (lo - 1, hi) inside [lo, hi)
            a = self.emit(f"fcmp ogt double {x}, {fconst(lo - 1.0)}") if dst.bits < 53 \
                else self.emit(f"fcmp oge double {x}, {fconst(lo)}")
            b = self.emit(f"fcmp olt double {x}, {fconst(hi)}")
            self.deopt_unless(self.emit(f"and i1 {a}, {b}"))
            # frozen: out of range it is poison, and the guard may be deferred (scalar.to_int)
            r = self.emit(f"{'fptosi' if dst.signed else 'fptoui'} double {x} to i{dst.bits}")
            return self.emit(f"freeze i{dst.bits} {r}")
        if dst.cls == "float":
            if src.cls == "float":
                if src.bits > dst.bits:
                    r = self.fp_resize(v, src.bits, dst.bits)
                    # an overflow to inf makes NumPy warn: let tier 0 do it
                    self.declare_intrinsics()
                    av = self.emit(f"call double @llvm.fabs.f64(double {v})")
                    ar = self.emit(f"call float @llvm.fabs.f32(float {r})")
                    fin_in = self.emit(f"fcmp olt double {av}, 0x7FF0000000000000")
                    inf_out = self.emit(f"fcmp oeq float {ar}, 0x7FF0000000000000")
                    self.deopt_if(self.emit(f"and i1 {fin_in}, {inf_out}"))
                    return r
                return self.fp_resize(v, src.bits, dst.bits)
            if src.cls == "bool" or (src.cls == "int" and dst.bits == 64):
                return self.to_kind(v, src, dst)
            return self._refuse(vt, dst)
        if dst.cls == "complex" and src.cls in ("int", "bool", "float") and dst.bits == 64:
            return self.to_kind(v, src, dst)
        return self._refuse(vt, dst)

    def _refuse(self, vt, dst):
        raise Unsupported(f"storing {vt} into an array of {dst.cls}{dst.bits} in native code")

    def require_writeable(self, v: str, t: Type) -> None:
        """Deoptimise unless every array in v is writeable (tier 0 raises NumPy's error)."""
        self.deopt_if(self.read_only(v, t))

    def read_only(self, v: str, t: Type) -> str:
        """An i1: some array in v is not writeable."""
        if isinstance(t, ArrayT):
            from ...runtime.capi import array_layout
            obj = self.emit(f"extractvalue {ll(t)} {v}, 3")
            flags = self.field(obj, array_layout().flags, "i32")
            w = self.emit(f"and i32 {flags}, {NPY_WRITEABLE}")
            return self.emit(f"icmp eq i32 {w}, 0")
        out = "false"
        if isinstance(t, TupleT):
            for i, it in enumerate(t.items):
                x = self.read_only(self.emit(f"extractvalue {ll(t)} {v}, {i}"), it)
                out = x if out == "false" else self.emit(f"or i1 {out}, {x}")
        return out

    def getattr(self, v: str, t: Type, name: str, rt: Type) -> str | None:
        if isinstance(t, ArrayT):
            ty = ll(t)
            if name == "ndim":
                return str(t.ndim)
            dims = [self.emit(f"extractvalue {ty} {v}, 1, {d}") for d in range(t.ndim)]
            if name == "shape":
                agg = "undef"
                for d, n in enumerate(dims):
                    agg = self.emit(f"insertvalue {ll(rt)} {agg}, i64 {n}, {d}")
                return agg
            if name == "size":
                size = dims[0]
                for n in dims[1:]:
                    size = self.emit(f"mul i64 {size}, {n}")
                return size
            return None
        if isinstance(t, Scalar):
            k = kind(t)
            if k.cls == "complex" and not k.numpy:
                return self.emit(f"extractvalue {k.ll} {v}, {0 if name == 'real' else 1}")
            if k.cls in ("int", "float") and not k.numpy:
                return v if name == "real" else ("0" if k.cls == "int" else "0.0")
        return None
