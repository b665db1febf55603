"""The object `@jit` returns before any native code exists: a Python stand-in for the entry.

A native entry (runtime.entry) needs its type's slot functions in code memory (copied from the
stencil library, which may first have to be built with LLVM), a cost a program that never gets
hot must not pay. So `@jit` returns a `Shim`, an instance of an
ordinary Python class whose memory layout *is* the entry's — same basic size, the same three
pointer fields at the same offsets, the weakref list in the same place, both garbage-collected —
and whose `__call__` forwards to the fallback, like the entry's generic slot does.

When a function's first native code is installed, its shim becomes an entry in place: one small
C function (made with the entry type's slots, backends/stencils/shared_ir.py) stores the
native address into the slot field and switches `ob_type` to the entry type, under the GIL and
with no Python code in between. The object users hold keeps its identity, its weakrefs and
every reference to it (tier-0 code and native callers call it by address), and from then on
CPython calls straight through its vectorcall slot. Analogue: a PLT entry that starts out
pointing at the lazy binder and is patched in place once the symbol is resolved.

Invariants: the slot field of a shim is always NULL (the class never sets it), so the shim's
GC traversal and deallocation, which treat every field as an object, never see a code address;
after the switch the entry type's own traverse/dealloc know the slot is not an object.
"""

from _thread import allocate_lock
from time import perf_counter as _clock

from .config import config as _config
from .forwarding import forward_attributes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# runtime.entry's layout, restated so that decorating does not import it (nor threading);
# `_check_live_layout` compares the two before the first upgrade.
_HEAD = object.__basicsize__
SLOT_OFFSET, DISPATCHER_OFFSET, FALLBACK_OFFSET = _HEAD, _HEAD + 8, _HEAD + 16
WEAKLIST_OFFSET, BASICSIZE = _HEAD + 24, _HEAD + 32


class Shim:
    """A jitted function that has no native code yet (see the module docstring).

    Its dispatcher (runtime.dispatch.Dispatcher, tier "auto") provides the cold-phase
    protocol: `cold` (calls run `py_func`, counted in `calls` and timed in `cold_seconds`
    until config.hot_calls / hot_seconds say the function is hot, then `became_hot(args,
    kwargs)`), and `bypass` (calls run `py_func`: a build is on its way, or there is nothing to
    compile). Every other call goes to the fallback, the dispatcher's slow path.
    """

    # Sorted by CPython (type_new sorts __slots__), so the field order is the entry's:
    # slot at SLOT_OFFSET, then dispatcher, then fallback; __weakref__ comes after them.
    __slots__ = ("__tierjit_aslot__", "__tierjit_dispatcher__", "__tierjit_fallback__",
                 "__weakref__")

    def __call__(self, /, *args: "Any", **kwargs: "Any") -> "Any":
        # The cold phase, inlined here so that a cold call costs one Python frame besides the
        # function's own (recursion depth!) and a few hundred nanoseconds.
        d = self.__tierjit_dispatcher__
        if d.cold:
            n = d.calls = d.calls + 1
            if n <= _config._calls_at and d.cold_seconds < _config._seconds_at:
                # a function with loops runs counting tier 0 (runtime.osr), decided before the
                # clock starts: lowering it is not a cost of the call
                f = d.py_func if d.counting is False else d.cold_target(args, kwargs)
                if n > 8 and n & 7:            # after 8 timed calls, time one call in 8
                    return f(*args, **kwargs)
                if d.profile is not False and not kwargs:
                    d.observe(args)            # the value profile samples the timed calls
                start = _clock()
                try:
                    return f(*args, **kwargs)
                finally:
                    t = _clock() - start
                    d.cold_seconds += t * (1 if n <= 8 else 8)
                    if t > d.longest_cold:
                        d.longest_cold = t     # a long call is what OSR is for
                    if d.cold_seconds >= _config._seconds_at:
                        d.became_hot(args, kwargs)
            d.calls = n - 1                    # the fallback counts this call again
        elif d.bypass:
            d.calls += 1
            f = d.py_func if d.counting is False else d.cold_target(args, kwargs)
            return f(*args, **kwargs)
        return self.__tierjit_fallback__(*args, **kwargs)

    def __get__(self, obj: object, objtype: type | None = None) -> "Any":
        return self if obj is None else MethodType(self, obj)



forward_attributes(Shim, "A tierjit-compiled function that has no native code yet.")


class _Bound:
    def method(self) -> None:
        pass


MethodType = type(_Bound().method)      # types.MethodType, without importing types
_set_dispatcher = Shim.__dict__["__tierjit_dispatcher__"].__set__
_set_fallback = Shim.__dict__["__tierjit_fallback__"].__set__
_TPFLAGS_MANAGED_DICT = 1 << 4
_TPFLAGS_HAVE_GC = 1 << 14

# Checked without ctypes (cheap): the rest is checked on a live object before the first upgrade.
LAYOUT_OK = (Shim.__basicsize__ == BASICSIZE and Shim.__itemsize__ == 0
             and Shim.__weakrefoffset__ == WEAKLIST_OFFSET and Shim.__dictoffset__ == 0
             and not Shim.__flags__ & _TPFLAGS_MANAGED_DICT
             and Shim.__flags__ & _TPFLAGS_HAVE_GC)


def make_shim(dispatcher: object, fallback: "Any") -> "Shim":
    """A shim that calls `fallback(*args, **kwargs)`; cheap: no LLVM, no ctypes."""
    s = object.__new__(Shim)
    _set_dispatcher(s, dispatcher)
    _set_fallback(s, fallback)
    return s


def is_shim(obj: object) -> bool:
    return type(obj) is Shim


# --------------------------------------------------------------------------- the upgrade

_upgrade_fn: "Any" = None
_upgrade_lock = allocate_lock()
_install_lock = allocate_lock()   # one upgrade or slot store at a time


def _upgrader() -> "Any":
    """The upgrade function (made with the entry type, backends/stencils/shared_ir.py)."""
    global _upgrade_fn
    if _upgrade_fn is None:
        with _upgrade_lock:
            if _upgrade_fn is None:
                import ctypes

                from . import entry as _entry
                # PYFUNCTYPE: the GIL stays held for the whole call (CFUNCTYPE would drop it).
                proto = ctypes.PYFUNCTYPE(None, ctypes.py_object, ctypes.py_object,
                                          ctypes.c_void_p)
                fn = proto(_entry.upgrade_address())
                _check_live_layout()
                _upgrade_fn = fn
    return _upgrade_fn


def _check_live_layout() -> None:
    """The field offsets of a live shim are the entry's (raises capi.LayoutError if not)."""
    import ctypes

    from . import capi
    from . import entry as _entry
    if not LAYOUT_OK or (SLOT_OFFSET, DISPATCHER_OFFSET, FALLBACK_OFFSET, WEAKLIST_OFFSET,
                         BASICSIZE) != (_entry.SLOT_OFFSET, _entry.DISPATCHER_OFFSET,
                                        _entry.FALLBACK_OFFSET, _entry.WEAKLIST_OFFSET,
                                        _entry.BASICSIZE):
        raise capi.LayoutError("the Shim class does not have the entry's layout")
    d, f = object(), object()
    s = make_shim(d, f)

    def read(offset: int) -> int:
        return ctypes.c_void_p.from_address(id(s) + offset).value or 0

    if (read(SLOT_OFFSET), read(DISPATCHER_OFFSET), read(FALLBACK_OFFSET)) != (0, id(d), id(f)):
        raise capi.LayoutError("Shim fields are not at the entry's offsets")


def install(obj: "Any", address: int) -> bool:
    """Make `obj` (a shim or an entry) call native code at `address` from now on.

    A shim is upgraded to an entry in place; an entry gets its slot stored. Returns False for
    anything else (a Python wrapper cannot take native code)."""
    if not isinstance(address, int) or not 0 < address < 2**64:
        raise ValueError(f"not a code address: {address!r}")
    from . import entry as _entry
    if type(obj) is Shim:
        fn = _upgrader()                  # may compile: done before taking the lock
        tp = _entry.entry_type()
        with _install_lock:
            if type(obj) is Shim:
                fn(obj, tp, address)
                return True
    with _install_lock:
        if _entry.is_entry(obj):
            _entry.set_slot(obj, address)
            return True
    return False


def uninstall(obj: "Any") -> None:
    """Send every call of `obj` to its fallback again (no-op for a shim)."""
    from . import entry as _entry
    with _install_lock:
        if _entry.is_entry(obj):
            _entry.reset_slot(obj)
