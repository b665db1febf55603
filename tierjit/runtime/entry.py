"""Native entry objects: the callable a user holds, whose vectorcall pointer is the dispatch slot.

A jitted function must cost no more to call than a builtin, so the object users call is an
instance of a heap type built at run time with `PyType_FromSpec` and
`Py_TPFLAGS_HAVE_VECTORCALL`.  CPython calls through a function pointer stored *in the
instance*; that pointer is the dispatch slot (analogue: an LLVM ORC lazy stub, or a GOT
entry).  Switching tiers is one aligned pointer store, atomic under the GIL; callers holding
the object never notice.  All of the type's C slots (dealloc, GC, constructor, descriptor, the
generic forwarder) are a few lines of LLVM IR compiled once per process; ctypes is used only to
build the type and to write the slot, never on the call path.

Instance layout (64-bit; H = sizeof(PyObject) = 16 in release builds)::

    struct TierjitEntry {
        PyObject_HEAD                 //  0  ob_refcnt, 8 ob_type
        vectorcallfunc slot;          //  H + 0   SLOT_OFFSET: what CPython calls
        PyObject *dispatcher;         //  H + 8   DISPATCHER_OFFSET: strong ref
        PyObject *fallback;           //  H + 16  FALLBACK_OFFSET: strong ref, any callable
        PyObject *target;             //  H + 24  TARGET_OFFSET: strong ref or NULL
        Py_ssize_t straight;          //  H + 32  STRAIGHT_OFFSET: calls left for target
        PyObject *weakreflist;        //  H + 40  WEAKLIST_OFFSET: owned by CPython's weakrefs
    };                                //  H + 48  BASICSIZE

`target` and `straight` serve the straight slot (runtime/straight.py), which calls `target`
while `straight` is positive, counting down, and then the fallback; `target` also serves the
relay slot (`forward_to`), which calls it always, holding a reference for the call.

Invariants native code may rely on:
- `dispatcher` and `fallback` are never NULL once the object exists and never change while it
  is alive, except that the GC's tp_clear (only for unreachable objects) swaps both for None
  and resets the slot; calling None then raises TypeError instead of crashing.
- A slot function has the vectorcall ABI
  `PyObject *(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)` with
  `self` the entry; when its argument checks fail it must return
  `PyObject_Vectorcall(self->fallback, args, nargsf, kwnames)` (a tail call), exactly what
  the forwarder does.  A slot address must stay valid for the life of the process (the LLVM
  engine never unloads code).

Entries hold strong references to dispatcher and fallback, and the dispatcher will usually
hold its entry, so the type supports cyclic GC (tp_traverse/tp_clear).  Attribute reads,
writes and deletes not served by the type go to the dispatcher, so `__name__`, `__doc__`,
`__module__`, `__wrapped__`, `inspect`, ... look like the dispatcher's.  Stored on a class, an
entry binds like a Python function (tp_descr_get, plus Py_TPFLAGS_METHOD_DESCRIPTOR so
`obj.method(x)` skips the bound-method allocation).  Entries pickle and copy by reference
(`module.qualname`), like functions.
"""

from __future__ import annotations

import sys
from _thread import allocate_lock

from .gcpause import gc_paused

TYPE_CHECKING = False
if TYPE_CHECKING:                       # pragma: no cover - typing only
    from typing import Any

# Cheap static check for callers choosing between entries and a plain Python wrapper
# (64-bit CPython 3.11+).  make_entry can still fail on first use (no llvmlite, or a
# capi.LayoutError when offsets do not verify); callers should fall back on any exception.
AVAILABLE = (
    sys.implementation.name == "cpython" and sys.version_info >= (3, 11) and sys.maxsize > 2**32
)

_HEAD = object.__basicsize__  # sizeof(PyObject); checked against capi.object_layout()
SLOT_OFFSET = _HEAD
DISPATCHER_OFFSET = _HEAD + 8
FALLBACK_OFFSET = _HEAD + 16
TARGET_OFFSET = _HEAD + 24
STRAIGHT_OFFSET = _HEAD + 32
WEAKLIST_OFFSET = _HEAD + 40
BASICSIZE = _HEAD + 48

TYPE_NAME = "tierjit.Function"

# Include/typeslots.h, Include/structmember.h and Include/object.h (stable ABI values).
_PY_TP_CALL, _PY_TP_CLEAR, _PY_TP_DEALLOC, _PY_TP_DESCR_GET = 50, 51, 52, 54
_PY_TP_DOC, _PY_TP_NEW, _PY_TP_TRAVERSE, _PY_TP_MEMBERS = 56, 65, 71, 72
_T_OBJECT, _T_PYSSIZET, _READONLY = 6, 19, 1
_TPFLAGS_IMMUTABLETYPE = 1 << 8
_TPFLAGS_HAVE_VECTORCALL = 1 << 11
_TPFLAGS_HAVE_GC = 1 << 14
_TPFLAGS_METHOD_DESCRIPTOR = 1 << 17
_TPFLAGS_DEFAULT = 1 << 18  # Py_TPFLAGS_HAVE_VERSION_TAG

class _Runtime:
    """The entry type plus the addresses of its compiled slot functions (one per process)."""

    __slots__ = ("clear", "forward", "names", "relay", "stack", "straight", "type", "upgrade")

    def __init__(self, tp: type, forward: int, straight: int, clear: int, upgrade: int,
                 stack: int, names: int, relay: int) -> None:
        self.type = tp
        self.forward = forward
        self.straight = straight
        self.stack = stack  # runtime/cstack.py: the C stack check, for the LLVM tier's entries
        self.clear = clear  # exposed for tests that exercise tp_clear directly
        self.upgrade = upgrade  # runtime/shim.py: a shim becomes an entry in place
        self.names = names      # runtime/names.py: do free names still name the same objects?
        self.relay = relay      # forward_to: every call to the target, holding a reference


_runtime: _Runtime | None = None
_runtime_lock = allocate_lock()


def _get_runtime() -> _Runtime:
    global _runtime
    if _runtime is None:
        # the collector paused in these locks: a finalizer it ran there could call a jitted
        # function that takes the same lock on this thread
        with gc_paused, _runtime_lock:
            if _runtime is None:
                _runtime = _build_runtime()
    return _runtime


def _build_runtime() -> _Runtime:
    import ctypes

    from tierjit.backends.stencils import emit, library
    from tierjit.runtime import capi

    lay = capi.object_layout()
    if lay.head_size != _HEAD:
        raise capi.LayoutError("sizeof(PyObject) changed after import")
    address = emit.entry_type_slots(library.load(), {
        "A": SLOT_OFFSET, "B": DISPATCHER_OFFSET, "C": FALLBACK_OFFSET, "D": WEAKLIST_OFFSET,
        "E": lay.ob_type, "F": TARGET_OFFSET, "G": STRAIGHT_OFFSET, "TA": lay.ob_size,
        "TB": lay.tuple_ob_item, "TC": lay.tuple_ob_item + lay.pointer_size,
        "DV": lay.dict_version, "CR": lay.cell_ref})

    class PyTypeSlot(ctypes.Structure):
        _fields_ = [("slot", ctypes.c_int), ("pfunc", ctypes.c_void_p)]

    class PyMemberDef(ctypes.Structure):
        _fields_ = [("name", ctypes.c_char_p), ("type", ctypes.c_int),
                    ("offset", ctypes.c_ssize_t), ("flags", ctypes.c_int),
                    ("doc", ctypes.c_char_p)]  # fmt: skip

    class PyTypeSpec(ctypes.Structure):
        _fields_ = [("name", ctypes.c_char_p), ("basicsize", ctypes.c_int),
                    ("itemsize", ctypes.c_int), ("flags", ctypes.c_uint),
                    ("slots", ctypes.POINTER(PyTypeSlot))]  # fmt: skip

    members = (PyMemberDef * 5)(
        PyMemberDef(b"__vectorcalloffset__", _T_PYSSIZET, SLOT_OFFSET, _READONLY, None),
        PyMemberDef(b"__weaklistoffset__", _T_PYSSIZET, WEAKLIST_OFFSET, _READONLY, None),
        PyMemberDef(b"__tierjit_dispatcher__", _T_OBJECT, DISPATCHER_OFFSET, _READONLY,
                    b"the dispatcher this entry belongs to"),
        PyMemberDef(b"__tierjit_fallback__", _T_OBJECT, FALLBACK_OFFSET, _READONLY,
                    b"callable used when no native slot accepts the arguments"),
        PyMemberDef(),  # sentinel
    )  # fmt: skip
    doc = ctypes.create_string_buffer(b"A tierjit-compiled function (see tierjit.runtime.entry).")
    slots = (PyTypeSlot * 9)(
        PyTypeSlot(_PY_TP_NEW, address["new"]),
        PyTypeSlot(_PY_TP_DEALLOC, address["dealloc"]),
        PyTypeSlot(_PY_TP_TRAVERSE, address["traverse"]),
        PyTypeSlot(_PY_TP_CLEAR, address["clear"]),
        PyTypeSlot(_PY_TP_DESCR_GET, address["descr_get"]),
        # tp_call serves calls that arrive with a kwargs dict; it re-enters the vectorcall slot.
        PyTypeSlot(_PY_TP_CALL, capi.c_api_address("PyVectorcall_Call")),
        PyTypeSlot(_PY_TP_MEMBERS, ctypes.addressof(members)),
        PyTypeSlot(_PY_TP_DOC, ctypes.addressof(doc)),
        PyTypeSlot(0, None),  # sentinel
    )
    flags = _TPFLAGS_DEFAULT | _TPFLAGS_HAVE_GC | _TPFLAGS_HAVE_VECTORCALL
    flags |= _TPFLAGS_METHOD_DESCRIPTOR
    spec = PyTypeSpec(TYPE_NAME.encode(), BASICSIZE, 0, flags, slots)

    # Python 3.11 keeps pointers to spec.name and the member names instead of copying them,
    # so everything handed to PyType_FromSpec is leaked on purpose (a few hundred bytes once
    # per process): the type and its instances may outlive this module at shutdown.
    keepalive = (spec, slots, members, doc)
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(keepalive))

    from_spec = ctypes.pythonapi.PyType_FromSpec
    from_spec.argtypes = [ctypes.POINTER(PyTypeSpec)]
    from_spec.restype = ctypes.py_object  # steals the new reference
    tp = from_spec(ctypes.byref(spec))
    _install_python_level(tp)
    _freeze(tp)
    return _Runtime(tp, address["forward"], address["straight"], address["clear"],
                    address["upgrade"], address["stack"], address["names"], address["relay"])


def _install_python_level(tp: type) -> None:
    """Attribute forwarding and repr; none of it is on the call path."""
    from .shim import forward_attributes
    forward_attributes(tp, tp.__doc__)


def _freeze(tp: type) -> None:
    """Set Py_TPFLAGS_IMMUTABLETYPE after the Python-level attributes are in place.

    A mutable type would let `type(f).__call__ = ...` desynchronise tp_call from the
    vectorcall slot (3.11 keeps the vectorcall flag), and let anyone replace our slots.
    The tp_flags offset is verified against `__flags__` before writing.
    """
    import ctypes

    from tierjit.runtime import capi

    cell = ctypes.c_ulong.from_address(id(tp) + capi.object_layout().type_tp_flags)
    if cell.value != tp.__flags__:
        raise capi.LayoutError("tp_flags offset mismatch")
    cell.value = tp.__flags__ | _TPFLAGS_IMMUTABLETYPE
    ctypes.pythonapi.PyType_Modified(ctypes.py_object(tp))


# --------------------------------------------------------------------------- public API


def entry_type() -> type:
    """The entry type, built (its slot functions copied from the stencil library) on first use."""
    return _get_runtime().type


def make_entry(dispatcher: object, fallback: Any) -> Any:
    """A new entry that calls `fallback(*args, **kwargs)` until a native slot is installed."""
    if not callable(fallback):
        raise TypeError(f"fallback must be callable, got {type(fallback).__name__}")
    return _get_runtime().type(dispatcher, fallback)


def is_entry(obj: object) -> bool:
    return _runtime is not None and type(obj) is _runtime.type


def upgrade_address() -> int:
    """Address of `void upgrade(PyObject *shim, PyTypeObject *entry_type, void *slot)`:
    stores the slot, then switches the object's type (runtime/shim.py)."""
    return _get_runtime().upgrade


def stack_check_address() -> int:
    """Address of `int64_t stack(void)`: the bytes of C stack the native calls nested below
    another call of a jitted function may take (runtime/cstack.py); 0 with RecursionError set
    when there is none left for the call."""
    return _get_runtime().stack


def names_check_address() -> int:
    """Address of `int32_t names(uint64_t *table)`: 1 when the free names in the table still
    name the objects native code baked in (runtime/names.py), else 0."""
    return _get_runtime().names


def forwarder_address() -> int:
    """Address of the generic slot that forwards every call to `self->fallback`."""
    return _get_runtime().forward


def set_slot(obj: object, address: int) -> None:
    """Install a native vectorcall function: one aligned 8-byte store, atomic under the GIL.

    `address` must point at code with the vectorcall ABI that stays loaded for the rest of
    the process (see the module docstring for what it may assume about `self`).
    """
    import ctypes

    runtime = _get_runtime()
    if type(obj) is not runtime.type:
        raise TypeError(f"set_slot needs a {TYPE_NAME} object, got {type(obj).__name__}")
    if not isinstance(address, int) or not 0 < address < 2**64:
        raise ValueError(f"not a code address: {address!r}")
    ctypes.c_void_p.from_address(id(obj) + SLOT_OFFSET).value = address


def reset_slot(obj: object) -> None:
    """Go back to the generic forwarder (every call reaches the fallback)."""
    set_slot(obj, _get_runtime().forward)


def get_slot(obj: object) -> int:
    """The function address currently installed in `obj`'s slot."""
    import ctypes

    if not is_entry(obj):
        raise TypeError(f"get_slot needs a {TYPE_NAME} object, got {type(obj).__name__}")
    return ctypes.c_void_p.from_address(id(obj) + SLOT_OFFSET).value or 0


# --------------------------------------------------------------------------- shims become entries
# A runtime.shim Shim has this type's layout; the first native code installed for it switches
# its type in place (see runtime/shim.py's module docstring).

_upgrade_fn: Any = None
_upgrade_lock = allocate_lock()
_install_lock = allocate_lock()   # one upgrade or slot store at a time


def _upgrader() -> Any:
    """The upgrade function (made with the entry type, backends/stencils/shared_ir.py)."""
    global _upgrade_fn
    if _upgrade_fn is None:
        with gc_paused, _upgrade_lock:
            if _upgrade_fn is None:
                import ctypes

                # PYFUNCTYPE: the GIL stays held for the whole call (CFUNCTYPE would drop it).
                proto = ctypes.PYFUNCTYPE(None, ctypes.py_object, ctypes.py_object,
                                          ctypes.c_void_p)
                fn = proto(upgrade_address())
                _check_live_layout()
                _upgrade_fn = fn
    return _upgrade_fn


def _check_live_layout() -> None:
    """The field offsets of a live shim are the entry's (raises capi.LayoutError if not)."""
    import ctypes

    from . import capi, shim
    if not shim.LAYOUT_OK or (shim.SLOT_OFFSET, shim.DISPATCHER_OFFSET, shim.FALLBACK_OFFSET,
                              shim.TARGET_OFFSET, shim.STRAIGHT_OFFSET, shim.WEAKLIST_OFFSET,
                              shim.BASICSIZE) != (
            SLOT_OFFSET, DISPATCHER_OFFSET, FALLBACK_OFFSET, TARGET_OFFSET, STRAIGHT_OFFSET,
            WEAKLIST_OFFSET, BASICSIZE):
        raise capi.LayoutError("the Shim class does not have the entry's layout")
    d, f = object(), object()
    s = shim.make_shim(d, f)

    def read(offset: int) -> int:
        return ctypes.c_void_p.from_address(id(s) + offset).value or 0

    if (read(SLOT_OFFSET), read(DISPATCHER_OFFSET), read(FALLBACK_OFFSET)) != (0, id(d), id(f)):
        raise capi.LayoutError("Shim fields are not at the entry's offsets")


def install(obj: Any, address: int) -> bool:
    """Make `obj` (a shim or an entry) call native code at `address` from now on.

    A shim is upgraded to an entry in place; an entry gets its slot stored. Returns False for
    anything else (a Python wrapper cannot take native code)."""
    if not isinstance(address, int) or not 0 < address < 2**64:
        raise ValueError(f"not a code address: {address!r}")
    from .shim import Shim
    if type(obj) is Shim:
        fn = _upgrader()                  # may compile: done before taking the lock
        tp = entry_type()
        with gc_paused, _install_lock:
            if type(obj) is Shim:
                fn(obj, tp, address)
                return True
    with gc_paused, _install_lock:
        if is_entry(obj):
            set_slot(obj, address)
            return True
    return False


def go_straight(obj: Any, target: Any) -> bool:
    """Make the slot of `obj` the straight slot, calling `target` (runtime/straight.py)
    while calls are left: none yet (set_straight gives them). A shim becomes an entry; an
    entry must have the generic slot (or this one). False when `obj` has native code or
    another target."""
    import ctypes

    from .shim import Shim, set_target
    runtime = _get_runtime()
    fn = _upgrader() if type(obj) is Shim else None    # may compile: before taking the lock
    with gc_paused, _install_lock:
        # The target first (a strong reference, dropped by the entry's dealloc and tp_clear;
        # set once): another thread may call through the slot as soon as it is there.
        if type(obj) is Shim and fn is not None:
            set_target(obj, target)                    # a shim's field: its own descriptor
            fn(obj, runtime.type, runtime.straight)    # no calls left: the fallback's
            return True
        cell = ctypes.c_void_p.from_address(id(obj) + TARGET_OFFSET)
        if not is_entry(obj) or get_slot(obj) not in (runtime.forward, runtime.straight) \
                or cell.value not in (None, id(target)):
            return False
        if cell.value is None:
            ctypes.pythonapi.Py_IncRef(ctypes.py_object(target))
            cell.value = id(target)
        set_slot(obj, runtime.straight)
    return True


def forward_to(obj: Any, target: Any) -> bool:
    """Send every call of `obj` (an entry, or a shim, which becomes one) to `target`, for
    good: the relay slot, which holds a reference to its target while a call runs, so that
    the target may be swapped for another (a function starting anew again:
    runtime/restart.py) and the old one dropped. False when `obj` cannot be an entry (its
    calls then reach its fallback)."""
    import ctypes

    from .shim import Shim
    runtime = _get_runtime()
    if type(obj) is Shim and not go_straight(obj, target):   # (a shim becomes an entry)
        return False
    if not is_entry(obj):
        return False
    with gc_paused, _install_lock:
        cell = ctypes.c_void_p.from_address(id(obj) + TARGET_OFFSET)
        old = cell.value
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(target))
        cell.value = id(target)
        set_slot(obj, runtime.relay)
        set_straight(obj, 0)
    if old and old != id(target):
        ctypes.pythonapi.Py_DecRef(ctypes.c_void_p(old))     # (a running call holds its own)
    elif old:
        ctypes.pythonapi.Py_DecRef(ctypes.py_object(target))
    return True


def is_straight(obj: Any) -> bool:
    """Is the straight slot installed in `obj`?"""
    return is_entry(obj) and get_slot(obj) == _get_runtime().straight


def set_straight(obj: Any, n: int) -> None:
    """Let the straight slot of `obj` make the next n calls (an entry with a target)."""
    import ctypes
    if not is_entry(obj):
        raise TypeError(f"set_straight needs a {TYPE_NAME} object, got {type(obj).__name__}")
    if n > 0 and not ctypes.c_void_p.from_address(id(obj) + TARGET_OFFSET).value:
        raise ValueError("set_straight: the entry has no target (see go_straight)")
    ctypes.c_ssize_t.from_address(id(obj) + STRAIGHT_OFFSET).value = n


def straight_left(obj: Any) -> int:
    """The calls the straight slot of `obj` (an entry) has left."""
    import ctypes
    return ctypes.c_ssize_t.from_address(id(obj) + STRAIGHT_OFFSET).value


def straight_cell(obj: Any) -> Any:
    """The straight slot's count of `obj` (an entry with a target) as a ctypes cell, whose
    `value` reads and writes make no Python call (runtime/straight.py: arm)."""
    import ctypes
    if not is_entry(obj) or not ctypes.c_void_p.from_address(id(obj) + TARGET_OFFSET).value:
        raise ValueError("straight_cell needs an entry with a target (see go_straight)")
    return ctypes.c_ssize_t.from_address(id(obj) + STRAIGHT_OFFSET)


def uninstall(obj: Any) -> None:
    """Send every call of `obj` to its fallback again (no-op for a shim)."""
    with gc_paused, _install_lock:
        if is_entry(obj):
            reset_slot(obj)
