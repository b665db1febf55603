"""The CPython C API as native code sees it: symbol addresses, type addresses, struct offsets.

Generated code reads object fields directly (`Py_TYPE(o) == &PyFloat_Type`, `o->ob_fval`), so
it needs the byte offsets of those fields.  They are part of CPython's (and numpy's) ABI but
not promised to stay put, so nothing here is trusted blindly: every offset is checked against a
live object the first time it is asked for (`object_layout()`, `array_layout()`), and a
mismatch raises `LayoutError` - the caller then stays in the Python tiers instead of reading
garbage.  Analogue: the `offsetof` table a C extension gets from the headers, re-derived at run
time because we have no compiler step.

Nothing here runs on the call path; ctypes is imported lazily so `import tierjit` stays cheap.
"""

from __future__ import annotations

import functools
import sys

MIN_PYTHON = (3, 11)

# `nargsf` flag bit in the vectorcall ABI: the callee may scribble on args[-1].  Generated
# entries must mask it off before reading the argument count (PyVectorcall_NARGS).
PY_VECTORCALL_ARGUMENTS_OFFSET = 1 << 63

# From 3.12 on, some objects (None, small ints, ...) are immortal: their ob_refcnt must not be
# changed by plain 64-bit add/sub in generated code.  Inline refcounting is only correct below
# 3.12; above it, call Py_IncRef/Py_DecRef or emit the immortality test.
IMMORTAL_OBJECTS = sys.version_info >= (3, 12)


class LayoutError(RuntimeError):
    """The running interpreter (or numpy) does not have the object layout we generate code for."""


def require_supported_python() -> None:
    """Raise LayoutError unless this is 64-bit CPython 3.11+ (the ABI our native code assumes)."""
    if sys.implementation.name != "cpython":
        raise LayoutError(f"native tiers need CPython, not {sys.implementation.name}")
    if sys.version_info < MIN_PYTHON:
        raise LayoutError(f"native tiers need Python >= 3.11, running {sys.version.split()[0]}")
    if sys.maxsize != 2**63 - 1:
        raise LayoutError("native tiers need a 64-bit interpreter (Py_ssize_t == i64)")
    # Free-threaded builds exist from 3.13 on (and sysconfig costs ~1 ms to load).
    if sys.version_info >= (3, 13):
        import sysconfig

        if sysconfig.get_config_var("Py_GIL_DISABLED"):
            # Different object header and refcounting; our slot stores also rely on the GIL.
            raise LayoutError("native tiers do not support the free-threaded build yet")


# --------------------------------------------------------------------------- symbols


@functools.lru_cache(maxsize=4096)
def symbol_address(name: str) -> int | None:
    """Address of a global symbol of the running process (C API function or data), or None.

    `ctypes.pythonapi` is dlopen(NULL) on POSIX, i.e. the global symbol namespace, so this
    finds libpython and everything it links (libc, libm) - functions and data alike.
    """
    import ctypes

    try:
        # Indexing, unlike attribute access, does not cache a function object on pythonapi.
        return ctypes.cast(ctypes.pythonapi[name], ctypes.c_void_p).value
    except AttributeError:
        return None


def c_api_address(name: str) -> int:
    """Address of a C API function or variable by name; LookupError if it does not exist."""
    address = symbol_address(name)
    if not address:
        raise LookupError(f"C API symbol {name!r} is not exported by this interpreter")
    return address


def type_address(tp: type) -> int:
    """Address of a type object: what `Py_TYPE(o) == &PyXxx_Type` compares against.

    In CPython `id()` is the object's address, and static type objects never move.
    """
    return id(tp)


def builtin_type_addresses() -> dict[str, int]:
    """Addresses of the scalar types generated code guards on, keyed by their C name."""
    return {
        "PyFloat_Type": id(float),
        "PyLong_Type": id(int),
        "PyBool_Type": id(bool),
        "PyComplex_Type": id(complex),
        "PyTuple_Type": id(tuple),
    }


def ndarray_type_address() -> int | None:
    """Address of numpy.ndarray if numpy is already imported, else None (we never import it)."""
    numpy = sys.modules.get("numpy")
    return id(numpy.ndarray) if numpy is not None else None


# --------------------------------------------------------------------------- CPython objects


class _Offsets:
    """A record of byte offsets, made once per process and never changed. A plain class with
    slots rather than a dataclass: compiling a dataclass's generated __init__ costs ~1M
    instructions at import, and every process that makes native code imports this module."""

    __slots__ = ()

    def __init__(self, **offsets: int) -> None:
        for name, value in offsets.items():
            setattr(self, name, value)          # a misspelt field is an AttributeError


class ObjectLayout(_Offsets):
    """Byte offsets into core CPython objects, analogous to `offsetof()` on the C structs."""

    __slots__ = (  # noqa: RUF023 - in the structs' order
        "head_size",        # sizeof(PyObject): where a subtype's own fields start
        "ob_refcnt",        # PyObject.ob_refcnt (Py_ssize_t)
        "ob_type",          # PyObject.ob_type (PyTypeObject *)
        "ob_size",          # PyVarObject.ob_size (Py_ssize_t)
        "float_ob_fval",    # PyFloatObject.ob_fval (double)
        "complex_cval",     # PyComplexObject.cval (Py_complex: double real, imag)
        "tuple_ob_item",    # PyTupleObject.ob_item[0] (PyObject *[])
        "type_tp_flags",    # PyTypeObject.tp_flags (unsigned long)
        "dict_version",     # PyDictObject.ma_version_tag (uint64): new at every change
        "cell_ref",         # PyCellObject.ob_ref (PyObject *, NULL when empty)
    )
    pointer_size = 8


@functools.cache
def object_layout() -> ObjectLayout:
    """The verified layout of this interpreter's objects (computed once, then cached)."""
    require_supported_python()
    head = object.__basicsize__  # 16, or 32 in a Py_TRACE_REFS build
    layout = ObjectLayout(
        head_size=head,
        ob_refcnt=head - 16,
        ob_type=head - 8,
        ob_size=head,
        float_ob_fval=head,
        complex_cval=head,
        tuple_ob_item=head + 8,
        # PyVarObject head, then tp_name, tp_basicsize, tp_itemsize, tp_dealloc,
        # tp_vectorcall_offset and 13 more pointer-sized slots before tp_flags.
        type_tp_flags=head + 8 + 5 * 8 + 13 * 8,
        dict_version=head + 8,          # after ma_used
        cell_ref=head,
    )
    _verify_object_layout(layout)
    return layout


def _verify_object_layout(lay: ObjectLayout) -> None:
    import ctypes

    def read(ctype, obj: object, offset: int):
        return ctype.from_address(id(obj) + offset).value

    probe = object()
    items = (probe, 2.5, "x")
    before = read(ctypes.c_ssize_t, probe, lay.ob_refcnt)
    extra = [probe]  # exactly one more reference
    after = read(ctypes.c_ssize_t, probe, lay.ob_refcnt)
    del extra
    checks = {
        "ob_refcnt": after - before == 1,
        "ob_type": read(ctypes.c_void_p, 2.5, lay.ob_type) == id(float),
        "ob_size": read(ctypes.c_ssize_t, items, lay.ob_size) == 3,
        "tuple_ob_item": all(
            read(ctypes.c_void_p, items, lay.tuple_ob_item + 8 * i) == id(item)
            for i, item in enumerate(items)
        ),
        "float_ob_fval": read(ctypes.c_double, 1.0625, lay.float_ob_fval) == 1.0625,
        "complex_cval": (
            read(ctypes.c_double, 1.5 - 2.25j, lay.complex_cval) == 1.5
            and read(ctypes.c_double, 1.5 - 2.25j, lay.complex_cval + 8) == -2.25
        ),
        "type_tp_flags": read(ctypes.c_ulong, float, lay.type_tp_flags) == float.__flags__
        and read(ctypes.c_ulong, tuple, lay.type_tp_flags) == tuple.__flags__,
    }
    d: dict = {}
    tags = [read(ctypes.c_uint64, d, lay.dict_version)]
    for value in (1, 2, 2):
        d["x"] = value
        tags.append(read(ctypes.c_uint64, d, lay.dict_version))
    # a new tag when a value changes, the same one when the same object is stored again
    checks["dict_version"] = (read(ctypes.c_ssize_t, d, lay.head_size) == 1
                              and tags[0] != tags[1] != tags[2] == tags[3] != 0)
    import types
    cell = types.CellType(probe)
    checks["cell_ref"] = read(ctypes.c_void_p, cell, lay.cell_ref) == id(probe)
    bad = [name for name, ok in checks.items() if not ok]
    if bad:
        raise LayoutError(f"unexpected CPython object layout for {', '.join(bad)}")


# --------------------------------------------------------------------------- numpy arrays


class ArrayLayout(_Offsets):
    """Byte offsets into numpy's PyArrayObject_fields and PyArray_Descr."""

    __slots__ = (  # noqa: RUF023 - in the structs' order
        "data",                 # char *data
        "nd",                   # int nd
        "dimensions",           # npy_intp *dimensions
        "strides",              # npy_intp *strides
        "base",                 # PyObject *base
        "descr",                # PyArray_Descr *descr
        "flags",                # int flags (NPY_ARRAY_C_CONTIGUOUS, ...)
        "descr_type_num",       # PyArray_Descr.type_num (int): NPY_DOUBLE == 12, ...
        "descr_elsize",         # PyArray_Descr.elsize: int in numpy 1.x, npy_intp in 2.x
        "descr_elsize_bytes",   # width of that elsize field: 4 or 8
    )


@functools.cache
def array_layout() -> ArrayLayout:
    """The verified layout of numpy arrays (imports numpy; call only when arrays are involved)."""
    import numpy

    head = object_layout().head_size
    numpy2 = int(numpy.__version__.split(".")[0]) >= 2
    layout = ArrayLayout(
        data=head,
        nd=head + 8,  # int, then 4 bytes of padding
        dimensions=head + 16,
        strides=head + 24,
        base=head + 32,
        descr=head + 40,
        flags=head + 48,
        # descr: PyObject_HEAD, typeobj, kind/type/byteorder/flags chars, int type_num, ...
        descr_type_num=head + 12,
        # numpy 2 widened the char flags to npy_uint64 and elsize to npy_intp.
        descr_elsize=head + 24 if numpy2 else head + 16,
        descr_elsize_bytes=8 if numpy2 else 4,
    )
    _verify_array_layout(layout, numpy)
    return layout


def _verify_array_layout(lay: ArrayLayout, numpy) -> None:
    import ctypes

    def read(ctype, address: int):
        return ctype.from_address(address).value

    # A strided 3-d view with a base, so every field has a distinctive value.
    arr = numpy.zeros((2, 3, 4))[:, 1:, ::2]
    at = id(arr)
    dims = read(ctypes.c_void_p, at + lay.dimensions)
    strides = read(ctypes.c_void_p, at + lay.strides)
    checks = {
        "data": read(ctypes.c_void_p, at + lay.data) == arr.__array_interface__["data"][0],
        "nd": read(ctypes.c_int, at + lay.nd) == arr.ndim,
        "dimensions": tuple((ctypes.c_ssize_t * 3).from_address(dims)) == arr.shape,
        "strides": tuple((ctypes.c_ssize_t * 3).from_address(strides)) == arr.strides,
        "base": read(ctypes.c_void_p, at + lay.base) == id(arr.base),
        "descr": read(ctypes.c_void_p, at + lay.descr) == id(arr.dtype),
        "flags": read(ctypes.c_int, at + lay.flags) == arr.flags.num,
    }
    elsize_type = ctypes.c_ssize_t if lay.descr_elsize_bytes == 8 else ctypes.c_int
    for code in ("f8", "i2", "c16", "u1"):
        dt = numpy.dtype(code)
        at = id(dt)
        checks[f"descr_type_num[{code}]"] = read(ctypes.c_int, at + lay.descr_type_num) == dt.num
        checks[f"descr_elsize[{code}]"] = read(elsize_type, at + lay.descr_elsize) == dt.itemsize
    bad = [name for name, ok in checks.items() if not ok]
    if bad:
        raise LayoutError(f"unexpected numpy {numpy.__version__} array layout for {', '.join(bad)}")
