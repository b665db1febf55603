"""Moving values between CPython objects and native representations.

`unbox` checks an object's *exact* type (and, for ints, that it fits in 64 bits; for arrays,
dtype, dimensions, alignment and layout) and branches to a failure label otherwise — the
same test `types.lattice.type_of_value` makes in Python, so the two never disagree.
`box` makes a new reference (or NULL with a Python exception set, e.g. MemoryError).
"""

from __future__ import annotations

from ...types.lattice import ArrayT, Scalar, TupleT, Type, UnionT
from .deopt import USUALLY
from .lltypes import kind, ll, union_members

PTR_SIZE = 8
NPY_C_CONTIGUOUS = 0x1
NPY_ALIGNED = 0x100
NPY_WRITEABLE = 0x400


def _numpy():
    import numpy
    return numpy


class Boxing:
    """Mixed into FunctionCodegen."""

    def addr(self, a: int) -> str:
        return self.emit(f"inttoptr i64 {a} to ptr")

    def field(self, obj: str, offset: int, ty: str) -> str:
        p = self.emit(f"getelementptr i8, ptr {obj}, i64 {offset}")
        return self.emit(f"load {ty}, ptr {p}")

    def ob_type(self, obj: str) -> str:
        return self.field(obj, 8, "ptr")

    def check(self, cond: str, fail: str) -> None:
        ok = self.new_label("ok")
        self.emit_void(f"br i1 {cond}, label %{ok}, label %{fail}{USUALLY}")
        self.start(ok)

    def is_type(self, obj: str, tp: type) -> str:
        return self.emit(f"icmp eq ptr {self.ob_type(obj)}, {self.addr(id(tp))}")

    # -- unboxing --------------------------------------------------------------------------
    def unbox(self, obj: str, t: Type, fail: str) -> str:
        if isinstance(t, Scalar):
            return self.unbox_scalar(obj, t, fail)
        if isinstance(t, TupleT):
            self.check(self.is_type(obj, tuple), fail)
            n = self.field(obj, 16, "i64")
            self.check(self.emit(f"icmp eq i64 {n}, {len(t.items)}"), fail)
            agg = "undef"
            for i, it in enumerate(t.items):
                item = self.field(obj, 24 + PTR_SIZE * i, "ptr")
                v = self.unbox_value(item, it, fail)     # an item may be a union
                agg = self.emit(f"insertvalue {ll(t)} {agg}, {ll(it)} {v}, {i}")
            return agg if t.items else "zeroinitializer"
        if isinstance(t, ArrayT):
            np = _numpy()
            from ...runtime.capi import array_layout
            lay = array_layout()
            self.check(self.is_type(obj, np.ndarray), fail)
            descr = self.field(obj, lay.descr, "ptr")
            self.check(self.emit(f"icmp eq ptr {descr}, {self.addr(id(np.dtype(t.dtype)))}"), fail)
            nd = self.field(obj, lay.nd, "i32")
            self.check(self.emit(f"icmp eq i32 {nd}, {t.ndim}"), fail)
            flags = self.field(obj, lay.flags, "i32")
            need = NPY_ALIGNED | (NPY_C_CONTIGUOUS if t.layout == "C" else 0)
            masked = self.emit(f"and i32 {flags}, {need}")
            self.check(self.emit(f"icmp eq i32 {masked}, {need}"), fail)
            return self.array_struct(obj, t)
        raise AssertionError(f"unbox {t}")

    def array_struct(self, obj: str, t: ArrayT) -> str:
        """The native array value for an ndarray object already known to be of type t."""
        from ...runtime.capi import array_layout
        lay = array_layout()
        ty = ll(t)
        data = self.field(obj, lay.data, "ptr")
        dims = self.field(obj, lay.dimensions, "ptr")
        strides = self.field(obj, lay.strides, "ptr")
        agg = self.emit(f"insertvalue {ty} undef, ptr {data}, 0")
        for d in range(t.ndim):
            for k, base in ((1, dims), (2, strides)):
                p = self.emit(f"getelementptr i64, ptr {base}, i64 {d}")
                x = self.emit(f"load i64, ptr {p}")
                agg = self.emit(f"insertvalue {ty} {agg}, i64 {x}, {k}, {d}")
        return self.emit(f"insertvalue {ty} {agg}, ptr {obj}, 3")

    def unbox_scalar(self, obj: str, t: Scalar, fail: str) -> str:
        k = kind(t)
        py = t.py
        if py is bool:
            is_t = self.emit(f"icmp eq ptr {obj}, {self.addr(id(True))}")
            is_f = self.emit(f"icmp eq ptr {obj}, {self.addr(id(False))}")
            self.check(self.emit(f"or i1 {is_t}, {is_f}"), fail)
            return is_t
        if py is type(None):
            self.check(self.emit(f"icmp eq ptr {obj}, {self.addr(id(None))}"), fail)
            return "0"
        self.check(self.is_type(obj, py), fail)
        if py is int:
            slot = self.alloca("i32")
            v = self.emit(f"call i64 @PyLong_AsLongLongAndOverflow(ptr {obj}, ptr {slot})")
            self.declare("declare i64 @PyLong_AsLongLongAndOverflow(ptr, ptr)")
            o = self.emit(f"load i32, ptr {slot}")
            self.check(self.emit(f"icmp eq i32 {o}, 0"), fail)
            return v
        # float, complex and every NumPy scalar keep their value right after the header
        if k.cls == "bool":
            b = self.field(obj, 16, "i8")
            return self.emit(f"icmp ne i8 {b}, 0")
        return self.field(obj, 16, k.ll)

    # -- boxing ----------------------------------------------------------------------------
    def box(self, v: str, t: Type) -> str:
        """A new reference to an object for native value v of type t, or NULL."""
        if isinstance(t, UnionT):
            return self.box_union(v, t)
        if isinstance(t, TupleT):
            self.declare("declare ptr @PyTuple_New(i64)")
            self.declare("declare i32 @PyTuple_SetItem(ptr, i64, ptr)")
            tup = self.emit(f"call ptr @PyTuple_New(i64 {len(t.items)})")
            # a NULL item leaves a NULL slot; the tuple is then released and NULL returned
            nulls = "false"
            for i, it in enumerate(t.items):
                item = self.box(self.emit(f"extractvalue {ll(t)} {v}, {i}"), it)
                nulls = self.emit(f"or i1 {nulls}, {self.emit(f'icmp eq ptr {item}, null')}")
                self.emit_void(f"call i32 @PyTuple_SetItem(ptr {tup}, i64 {i}, ptr {item})")
            self.decref_if(nulls, tup)
            return self.emit(f"select i1 {nulls}, ptr null, ptr {tup}")
        if isinstance(t, ArrayT):
            obj = self.emit(f"extractvalue {ll(t)} {v}, 3")
            self.incref(obj)
            return obj
        return self.box_scalar(v, t)

    def box_scalar(self, v: str, t: Scalar) -> str:
        k = kind(t)
        py = t.py
        if k.cls == "none":
            o = self.addr(id(None))
            self.incref(o)
            return o
        if py is bool:
            o = self.emit(f"select i1 {v}, ptr {self.addr(id(True))}, ptr {self.addr(id(False))}")
            self.incref(o)
            return o
        if py is int:
            self.declare("declare ptr @PyLong_FromLongLong(i64)")
            return self.emit(f"call ptr @PyLong_FromLongLong(i64 {v})")
        if py is float:
            self.declare("declare ptr @PyFloat_FromDouble(double)")
            return self.emit(f"call ptr @PyFloat_FromDouble(double {v})")
        if py is complex:
            self.declare("declare ptr @PyComplex_FromDoubles(double, double)")
            re = self.emit(f"extractvalue {k.ll} {v}, 0")
            im = self.emit(f"extractvalue {k.ll} {v}, 1")
            return self.emit(f"call ptr @PyComplex_FromDoubles(double {re}, double {im})")
        # a NumPy scalar: make the exact Python value, then call the NumPy type with it
        if k.cls == "bool":
            inner = self.box_scalar(v, Scalar(bool))
        elif k.cls == "int":
            x = self.emit(f"{'sext' if k.signed else 'zext'} i{k.bits} {v} to i64") \
                if k.bits < 64 else v
            if k.signed:
                inner = self.box_scalar(x, Scalar(int))
            else:
                self.declare("declare ptr @PyLong_FromUnsignedLongLong(i64)")
                inner = self.emit(f"call ptr @PyLong_FromUnsignedLongLong(i64 {x})")
        elif k.cls == "float":
            inner = self.box_scalar(self.fp_resize(v, k.bits, 64), Scalar(float))
        else:
            re = self.fp_resize(self.emit(f"extractvalue {k.ll} {v}, 0"), k.bits, 64)
            im = self.fp_resize(self.emit(f"extractvalue {k.ll} {v}, 1"), k.bits, 64)
            s = self.emit(f"insertvalue {{double, double}} undef, double {re}, 0")
            s = self.emit(f"insertvalue {{double, double}} {s}, double {im}, 1")
            inner = self.box_scalar(s, Scalar(complex))
        return self.call_object(id(py), [inner], steal=True)

    def box_union(self, v: str, t: UnionT) -> str:
        ms = union_members(t)
        ty = ll(t)
        payload = self.emit(f"extractvalue {ty} {v}, 0")
        tag = self.emit(f"extractvalue {ty} {v}, 1")
        done = self.new_label("boxed")
        labels = [self.new_label("boxm") for _ in ms]
        cases = " ".join(f"i8 {i}, label %{lab}" for i, lab in enumerate(labels[1:], 1))
        self.emit_void(f"switch i8 {tag}, label %{labels[0]} [{cases}]")
        incoming = []
        for m, lab in zip(ms, labels):
            self.start(lab)
            o = self.box(payload, m)
            incoming.append((o, self.cur_label))
            self.emit_void(f"br label %{done}")
        self.start(done)
        return self.emit("phi ptr " + ", ".join(f"[{o}, %{lab}]" for o, lab in incoming))

    # -- references and calls --------------------------------------------------------------
    def incref(self, obj: str) -> None:
        self.declare("declare void @Py_IncRef(ptr)")
        self.emit_void(f"call void @Py_IncRef(ptr {obj})")

    def decref(self, obj: str) -> None:
        self.declare("declare void @Py_DecRef(ptr)")
        self.emit_void(f"call void @Py_DecRef(ptr {obj})")

    def decref_if(self, cond: str, obj: str) -> None:
        o = self.emit(f"select i1 {cond}, ptr {obj}, ptr null")
        self.decref(o)

    def call_object(self, callable_addr: int, args: list[str], steal: bool) -> str:
        """callable(*args) through PyObject_Vectorcall; NULL args give NULL without a call.
        With steal, the argument references are released after the call."""
        self.declare("declare ptr @PyObject_Vectorcall(ptr, ptr, i64, ptr)")
        n = len(args)
        argv = self.alloca(f"[{max(n, 1)} x ptr]")
        nulls = "false"
        for i, a in enumerate(args):
            p = self.emit(f"getelementptr ptr, ptr {argv}, i64 {i}")
            self.emit_void(f"store ptr {a}, ptr {p}")
            nulls = self.emit(f"or i1 {nulls}, {self.emit(f'icmp eq ptr {a}, null')}")
        go, skip, join = (self.new_label(x) for x in ("call", "nocall", "called"))
        self.emit_void(f"br i1 {nulls}, label %{skip}, label %{go}")
        self.start(go)
        self.publish_nesting(1)
        r = self.emit(f"call ptr @PyObject_Vectorcall(ptr {self.addr(callable_addr)}, "
                      f"ptr {argv}, i64 {n}, ptr null)")
        self.publish_nesting(-1)
        go_end = self.cur_label
        self.emit_void(f"br label %{join}")
        self.start(skip)
        self.emit_void(f"br label %{join}")
        self.start(join)
        res = self.emit(f"phi ptr [{r}, %{go_end}], [null, %{skip}]")
        if steal:
            for a in args:
                self.decref(a)
        return res
