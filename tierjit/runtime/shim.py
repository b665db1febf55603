"""What `@jit` returns before any native code exists: a Python stand-in for the entry, and
one for its dispatcher.

A native entry (runtime.entry) needs its type's slot functions in code memory (copied from the
stencil library, which may first have to be built with LLVM), a cost a program that never gets
hot must not pay. So `@jit` returns a `Shim`, an instance of an ordinary Python class whose
memory layout *is* the entry's — same basic size, the same fields at the same offsets, the
weakref list in the same place, both garbage-collected — and whose `__call__` runs the cold
phase and otherwise forwards to the fallback, like the entry's generic slot does.

When a function's first native code is installed (runtime.entry.install), its shim becomes an
entry in place: one small C function (made with the entry type's slots,
backends/stencils/shared_ir.py) stores the native address into the slot field and switches
`ob_type` to the entry type, under the GIL and with no Python code in between. The object users
hold keeps its identity, its weakrefs and every reference to it (tier-0 code and native
callers call it by address), and from then on CPython calls straight through its vectorcall
slot. Analogue: a PLT entry that starts out pointing at the lazy binder and is patched in place
once the symbol is resolved.

The shim's dispatcher starts out lazy the same way: a `ColdDispatcher` holds the cold phase's
state and nothing else, so that neither decorating nor a cold call imports
runtime.dispatch and its mixins (~1 ms of a short script's start). Whatever needs more — the
function getting hot, a watched loop, explain, inspect, stats, an attribute only a Dispatcher
has — makes it a Dispatcher in place (`materialise` switches its class), so the shim's
dispatcher field and every reference already taken stay valid.

Invariants: the slot field of a shim is always NULL (the class never sets it), so the shim's
GC traversal and deallocation, which treat every field as an object, never see a code address;
after the switch the entry type's own traverse/dealloc know the slot is not an object. A shim's
fallback is replaced once, when its ColdDispatcher is materialised, which is before anything
can install native code (only a Dispatcher compiles), so an entry's fallback never changes.
"""

import os as _os
import sys
from _thread import allocate_lock, get_ident as _get_ident
from _weakref import ref as _weakref
from time import perf_counter as _clock
from time import sleep as _sleep

from .config import config as _config

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .dispatch import Dispatcher

# runtime.entry's layout, restated so that decorating does not import it (nor threading);
# runtime.entry._check_live_layout compares the two before the first upgrade.
_HEAD = object.__basicsize__
SLOT_OFFSET, DISPATCHER_OFFSET, FALLBACK_OFFSET = _HEAD, _HEAD + 8, _HEAD + 16
TARGET_OFFSET, STRAIGHT_OFFSET = _HEAD + 24, _HEAD + 32
WEAKLIST_OFFSET, BASICSIZE = _HEAD + 40, _HEAD + 48


class Shim:
    """A jitted function that has no native code yet (see the module docstring).

    Its dispatcher (a ColdDispatcher, or the runtime.dispatch.Dispatcher made of it, tier
    "auto") provides the cold-phase protocol: `cold` (calls run `py_func`, counted in `calls`
    and timed in `cold_seconds` until config.hot_calls / hot_seconds say the function is hot,
    then `became_hot(args, kwargs)`), and `bypass` (calls run `py_func`: a build is on its way,
    or there is nothing to compile). Every other call goes to the fallback, the dispatcher's
    slow path.
    """

    # Sorted by CPython (type_new sorts __slots__), so the field order is the entry's:
    # slot at SLOT_OFFSET, then dispatcher, fallback, target and the straight count (NULL in
    # a shim: only an entry sets them); __weakref__ comes after them.
    __slots__ = ("__tierjit_aslot__", "__tierjit_dispatcher__", "__tierjit_fallback__",
                 "__tierjit_target__", "__tierjit_tstraight__", "__weakref__")

    def __call__(self, /, *args: "Any", **kwargs: "Any") -> "Any":
        # The cold phase, inlined here so that a cold call costs one Python frame besides the
        # function's own (recursion depth!) and about a microsecond at most (docs/tiering.md).
        d = self.__tierjit_dispatcher__
        if _get_ident() == compiler_ident:
            return d.py_func(*args, **kwargs)
        timed = False
        if d.cold:
            n = d.calls = d.calls + 1
            if n > _config._calls_at or d.cold_seconds >= _config._seconds_at:
                d.calls = n - 1                # the fallback counts this call again
                return self.__tierjit_fallback__(*args, **kwargs)
            if d.loops is None:
                d.find_loops()
            if d.loops:
                # a function with loops runs counting tier 0 (runtime.osr), decided before
                # the clock starts: lowering it is not a cost of the call; after 8 timed
                # calls, one call in 8 is timed
                f = d.cold_target(args, kwargs)
                timed = n <= 8 or not n & 7
                if timed and d.profile is not False and not kwargs:
                    d.observe(args)            # the value profile samples the timed calls
            else:
                # No loops: hot by count alone, so no clock (see ColdDispatcher.loops), and
                # the value profile samples calls 16, 32, 64, ... and the last ones before
                # that count: an argument that changes only every few hundred calls (the
                # outer index of a loop nest calling the function) is seen to change. (Not
                # the first calls: a function called a few times pays nothing.)
                f = d.py_func
                if (n > _config._observe_at or n >= 16 and not n & (n - 1)) \
                        and d.profile is not False and not kwargs:
                    d.observe(args)
        elif d.bypass:
            n = d.calls = d.calls + 1
            if not n & 1023:
                if d.straight is None:
                    d.straight_if_python_only()
                if d._pending:
                    _sleep(0)             # its build gets the GIL (runtime.straight)
            f = d.py_func if d.counting is False else d.cold_target(args, kwargs)
        else:
            return self.__tierjit_fallback__(*args, **kwargs)
        # Nested in its own cold calls (a recursion), the function goes straight
        # (runtime.straight): deeper calls skip this frame, which costs CPython's recursion
        # limit two levels.
        if d.nested >= _NESTED:
            d.nested_deep()          # (may let other threads run: nested is read again)
        d.nested += 1
        if not timed:
            try:
                return f(*args, **kwargs)
            finally:
                d.nested -= 1
        start = _clock()
        try:
            return f(*args, **kwargs)
        finally:
            d.nested -= 1
            d.cold_timed(_clock() - start, n, args, kwargs)

    def __get__(self, obj: object, objtype: "type | None" = None) -> "Any":
        return self if obj is None else MethodType(self, obj)


# --------------------------------------------------------------------------- attribute forwarding
# Shared by Shim and runtime.entry's native entry type: everything not on the type is the
# dispatcher's, but for the program's own attributes (`f.calls = []`), which live in the
# original function's __dict__, as a function's would: written to the dispatcher, they took
# the place of its fields of the same names (`calls`, `profile`, `tier`, ...). `__doc__` and
# `__module__` live in the type dict, so they would shadow the dispatcher's; they are str
# subclasses that read as a plain string on the type itself (`type.__module__` returns the
# dict entry unchanged) and, as descriptors, forward on instances.

# The function's metadata, the dispatcher's own copies (its repr, pickling by qualified name).
_METADATA = frozenset(("__name__", "__qualname__", "__doc__", "__module__", "__wrapped__"))
# What the compiled code was made from: assigning it would leave that code behind.
_FIXED = frozenset(("__code__", "__closure__", "__globals__", "py_func"))
# The original's, read and written there: calls are bound with them (dispatch._positional).
_DEFAULTS = frozenset(("__defaults__", "__kwdefaults__"))
# The original's, read there (as `inspect.getclosurevars(f)` and debuggers read them).
_READ = _DEFAULTS | {"__code__", "__closure__", "__globals__", "__builtins__",
                     "__annotations__"}


class Forwarded(str):
    """A type-dict string that reads as the dispatcher's attribute `attribute` on instances."""

    attribute: str       # set by _forwarded (one class for both: a class costs ~20 us to make)

    def __get__(self, obj: object, objtype: "type | None" = None) -> object:
        if obj is None:
            return str(self)
        return getattr(obj.__tierjit_dispatcher__, self.attribute)  # type: ignore[attr-defined]


def _forwarded(text: str, attribute: str) -> Forwarded:
    s = Forwarded(text)
    s.attribute = attribute
    return s


def _getattr(self, name: str) -> object:
    d = self.__tierjit_dispatcher__
    own = d.py_func.__dict__
    if name in own:
        return own[name]
    if name == "__dict__":
        return own
    if name in _READ:
        return getattr(d.py_func, name)
    try:
        return getattr(d, name)
    except AttributeError:
        if type(d) is not ColdDispatcher:
            raise
    return getattr(d.materialise(), name)     # what a ColdDispatcher lacks is a Dispatcher's


# dir() acts on the whole Dispatcher.

def _whole(d: object) -> object:
    return d.materialise() if type(d) is ColdDispatcher else d


def _setattr(self, name: str, value: object) -> None:
    d = self.__tierjit_dispatcher__
    if name in _METADATA:
        setattr(_whole(d), name, value)
    elif name in _FIXED:
        raise AttributeError(
            f"cannot assign {name} of tierjit function {d.__qualname__}: its code was made "
            f"from the original's; assign it on the original function (f.py_func) before "
            f"decorating it")
    else:
        setattr(d.py_func, name, value)


def _delattr(self, name: str) -> None:
    d = self.__tierjit_dispatcher__
    if name in _METADATA:
        delattr(_whole(d), name)
    else:
        delattr(d.py_func, name)


def _dir(self) -> "list[str]":
    d = self.__tierjit_dispatcher__
    return sorted(set(object.__dir__(self)) | set(dir(_whole(d))) | set(d.py_func.__dict__))


def _reduce(self) -> str:
    # Pickle (and copy) by reference, like a module-level function: pickle checks that
    # `module.qualname` is this very object.
    return self.__tierjit_dispatcher__.__qualname__


def _repr(self) -> str:
    d = self.__tierjit_dispatcher__
    name = getattr(d, "__qualname__", None) or getattr(d, "__name__", "?")
    return f"<tierjit function {name}>"


def forward_attributes(tp: type, doc: str) -> None:
    """Make instances of tp show their dispatcher's attributes, doc and module."""
    # (module-level functions called __getattr__ would be this module's own hook)
    for fn in (_getattr, _setattr, _delattr, _dir, _reduce, _repr):
        setattr(tp, f"_{fn.__name__}__", fn)
    tp.__doc__ = _forwarded(doc, "__doc__")
    tp.__module__ = _forwarded("tierjit", "__module__")


forward_attributes(Shim, "A tierjit-compiled function that has no native code yet.")


MethodType = type(_config.as_dict)      # types.MethodType, without importing types (or a class)
_set_dispatcher = Shim.__dict__["__tierjit_dispatcher__"].__set__
_set_fallback = Shim.__dict__["__tierjit_fallback__"].__set__
set_target = Shim.__dict__["__tierjit_target__"].__set__      # (runtime.entry.go_straight)
_TPFLAGS_MANAGED_DICT = 1 << 4
_TPFLAGS_HAVE_GC = 1 << 14

# Checked without ctypes (cheap): the rest is checked on a live object before the first upgrade.
# Shims work where native entries can exist (64-bit CPython).
LAYOUT_OK = (sys.implementation.name == "cpython" and sys.maxsize > 2**32
             and Shim.__basicsize__ == BASICSIZE and Shim.__itemsize__ == 0
             and Shim.__weakrefoffset__ == WEAKLIST_OFFSET and Shim.__dictoffset__ == 0
             and not Shim.__flags__ & _TPFLAGS_MANAGED_DICT
             and bool(Shim.__flags__ & _TPFLAGS_HAVE_GC))


def make_shim(dispatcher: object, fallback: "Any") -> "Shim":
    """A shim that calls `fallback(*args, **kwargs)`; cheap: no LLVM, no ctypes."""
    s = object.__new__(Shim)
    _set_dispatcher(s, dispatcher)
    _set_fallback(s, fallback)
    return s


def is_shim(obj: object) -> bool:
    return type(obj) is Shim


# --------------------------------------------------------------------------- the cold phase

class ColdDispatcher:
    """A tier="auto" function's dispatcher while only its cold phase has been needed (see the
    module docstring): what Shim.__call__ reads and writes — the function, the cold phase's
    counters, what a cold call runs (`cold_target`, the watch policy of runtime.watch) and the
    value profile (`observe`, for runtime.speculation). `materialise` makes it a
    runtime.dispatch.Dispatcher in place. Also Dispatcher's base, which the Dispatcher
    completes: one made directly (tiers other than "auto") is whole from the start.
    Analogue: a lazily initialised object whose class pointer is its state."""

    def __init__(self, py_func: "Callable") -> None:
        self._begin(py_func, "auto")
        self.entry = make_shim(self, self)   # calls ColdDispatcher.__call__ (no bound method)
        register(self)

    def _begin(self, py_func: "Callable", tier: str) -> None:
        self.py_func = py_func
        self.tier = tier
        self.__name__ = py_func.__name__
        self.__qualname__ = getattr(py_func, "__qualname__", py_func.__name__)
        self.__doc__ = py_func.__doc__
        self.__module__ = py_func.__module__
        self.__wrapped__ = py_func
        self._nparams = py_func.__code__.co_argcount
        # counters (calls that reached the dispatcher: native calls are not counted)
        self.calls = 0
        self.cold_seconds = 0.0
        self.longest_cold = 0.0              # the longest timed cold call (see cold_timed)
        self.timed_top = 0.0                 # ... as measured
        # The cold-phase protocol Shim.__call__ follows (see there): while `cold`, calls run
        # py_func, counted and timed; while `bypass`, they run py_func without typing the
        # arguments (a build is on its way, or nothing can be compiled).
        self.cold = tier == "auto"
        self.bypass = False
        # Does the function jump backwards (has_loops, found at its first cold call)? One
        # without loops is hot by count alone: its own code cannot run long but by calling
        # (recursion is counted call by call), so its cold calls are not timed.
        self.loops: bool | None = None
        # Its `for` loop nests' trip counts as terms over the arguments (runtime.loopwork):
        # True while they are still to be read (two or more `for` loops), then a Model, or
        # False (also with fewer loops: one loop's bound is an argument the size rule sees).
        self.work: Any = False
        # Counting tier 0 with OSR (runtime.osr) for the cold calls of a function with loops:
        # None until the first cold call, "watching" while none of a function with loops'
        # cold calls has taken config.watch_seconds, "building" while the compiler thread
        # lowers it, then an OsrEntries, or False.
        self.counting: Any = None if tier == "auto" else False
        # Value profile of the cold calls: per argument its value while it has been the same
        # in every sampled call, else VARIES; False once nothing is constant.
        self.profile: Any = None if tier == "auto" else False
        self.observed = 0
        # Straight calls (runtime.straight): cold or bypassed calls of the function running
        # now (Shim.__call__, runtime.straight.enter), nested in each other; whether the
        # entry's slot calls py_func straight (None: not tried yet); the calls the slot was
        # last given.
        self.nested = 0
        self.straight: bool | None = None
        self.armed = 0
        self.straight_cell: Any = None       # the slot's count (runtime.entry.straight_cell)
        # A function with loops goes straight in sections: the calls nested in one running
        # NESTED deep (runtime.straight.enter).
        self.section = False

    def cold_timed(self, t: float, n: int, args: tuple, kwargs: dict) -> None:
        """The n-th cold call, one of those timed (the first 8, then one in 8), took t.

        After the first, a call counts as no longer than the longest timed before it: on a
        busy machine the OS stops a thread for milliseconds while another process runs, and
        a 4 us call measured at 5 ms would alone (counted for the 7 calls not timed since
        the last one) make the function hot, or look long enough to be watched — a compile
        for nothing, whose work on the compiler thread then slows the program down. A
        function whose calls do grow longer counts them from the second such call."""
        top = self.timed_top
        if t > top:
            self.timed_top = t
            if n > 1:
                t = top
        self.cold_seconds += t if n <= 8 else t * 8
        if t > self.longest_cold:
            self.longest_cold = t              # a long call is what OSR is for
        if self.cold_seconds >= _config._seconds_at:
            self.became_hot(args, kwargs)

    def nested_deep(self) -> None:
        """NESTED or more of its calls that run no native code are nested in each other (a
        recursion): go straight, tried at NESTED, then at powers of two and DEEP (it may
        have to wait for the entry type)."""
        k = self.nested
        if self.straight is None and (not k & (k - 1) or k == _DEEP):
            self.go_straight()
        if not k & 3:
            from .straight import check_shim_depth, wait_straight
            if self.straight and k >= _DEEP:  # another thread is making it straight
                wait_straight(self)
            check_shim_depth()

    def go_straight(self) -> None:
        """Call py_func from the entry's C slot from now on (runtime.straight)."""
        from .straight import begin
        begin(self)

    def settle(self) -> None:
        """Count in `calls` the calls made straight so far (runtime.straight)."""
        if self.straight:
            from .straight import settle
            settle(self)

    def materialise(self) -> "Dispatcher":
        """The whole Dispatcher: this very object, made one first if it is not yet."""
        if type(self) is not ColdDispatcher:
            return self  # type: ignore[return-value]
        # imported outside the lock: an import takes locks of its own
        from .dispatch import Dispatcher
        from .gcpause import gc_paused
        # the collector paused: a finalizer it ran here could call a function that must be
        # made whole too, under this lock (and this object is half made)
        with gc_paused, _materialise_lock:
            if type(self) is ColdDispatcher:
                Dispatcher._complete(self)    # type: ignore[arg-type]
                # The fallback before the class: once this is a Dispatcher, another thread
                # may install native code, and an entry's fallback never changes.
                _set_fallback(self.entry, MethodType(Dispatcher._call_auto, self))
                self.__class__ = Dispatcher   # type: ignore[assignment]
        return self  # type: ignore[return-value]

    # No __getattr__ to make it whole on demand: a class with one gets no specialised attribute
    # reads (Shim.__call__ makes ~10 per call). What reaches past the cold phase asks for
    # `materialise` itself: became_hot, _call_auto, cold_target, dispatcher_of, forwarding.

    def became_hot(self, args: "tuple | None", kwargs: "dict | None") -> None:
        self.materialise().became_hot(args, kwargs)     # (Dispatcher has its own)

    def _call_auto(self, *args: "Any", **kwargs: "Any") -> "Any":
        # The shim's fallback (as __call__) until materialise puts the Dispatcher's own in its
        # place. Making the Dispatcher (importing runtime.dispatch, ~2 ms the first time) is
        # JIT work on the calling thread: a pause.
        if _get_ident() == compiler_ident:
            return self.py_func(*args, **kwargs)
        start = _clock()
        d = self.materialise()
        from .events import note_pause
        note_pause(_clock() - start)
        return d._call_auto(*args, **kwargs)

    __call__ = _call_auto

    def cold_target(self, args: tuple, kwargs: dict) -> "Callable":
        """What a cold call runs: baseline code when the function has loops and an argument
        predicts a long call, counting tier 0 (runtime.osr) when it has loops and the call
        binds plainly, else the original function (see runtime.watch)."""
        if self.loops is None:
            self.find_loops()
        c = self.counting
        size = _config.watch_size
        if c is not False and (predicts_long(args, size) or self.work is not False
                               and self.long_nest(args, size)):
            # native code from the call's start, else counting tier 0 (runtime.watch)
            f = self.materialise()._long_call(args, kwargs)
            if f is not None:
                return f
            c = self.counting
        elif c == "watching":
            watch = _config.watch_seconds
            if watch is not None and self.longest_cold >= watch:
                c = self.materialise()._start_counting()
            else:
                return self.py_func
        if (c is False or c == "building" or kwargs or len(args) != self._nparams
                or not _unchanged(self.py_func, c.ir)):
            return self.py_func
        from .osr import signature
        sig = c.current = signature(args)
        if sig in c.hopeless:
            return self.py_func
        return c.tier0

    def find_loops(self) -> None:
        """At the first cold call: a function with loops is watched (runtime.watch), and one
        with nested `for` loops has them read (runtime.loopwork)."""
        code = self.py_func.__code__
        self.loops = has_loops(code)
        self.counting = "watching" if self.loops else False
        self.work = self.loops and for_loops(code) > 1

    def long_nest(self, args: tuple, size: "int | None") -> bool:
        """Do the function's `for` nests run `size` iterations given these arguments? Read
        at the first cold call with an argument of at least size's fourth root (an int, an
        array's elements, a list's or tuple's length): below that no nest of up to four
        loops can reach size, and a program whose loops stay small reads nothing."""
        if size is None:
            return False
        work = self.work
        if work is True:
            if not _reaches(args, max(1, int(size ** 0.25))):
                return False
            from . import loopwork
            from .events import note_pause
            start = _clock()
            work = self.work = loopwork.model(self.py_func.__code__) or False
            note_pause(_clock() - start)          # JIT work on the program's thread
            if work is False:
                return False
        return work.estimate(args) >= size

    def observe(self, args: tuple) -> None:
        """Add a cold call's arguments to the value profile (sampled by the shim)."""
        prof = self.profile
        # the caller's `profile is not False` was read before this: another thread's call may
        # have given the profile up since
        if prof is False or len(args) != self._nparams:
            return
        if prof is None:
            self.profile = [profiled(a) for a in args]
        else:
            constant = False
            for i, a in enumerate(args):
                p = prof[i]
                if p is not VARIES:
                    if same_value(a, p):
                        constant = True
                    else:
                        prof[i] = VARIES
            if not constant:
                self.profile = False
        self.observed += 1

    def __repr__(self) -> str:
        return f"<tierjit dispatcher {self.__qualname__}>"


_materialise_lock = allocate_lock()
# The compiler thread's id (runtime.compiler sets it). A jitted function called there was
# called by a finalizer that a collection ran in the middle of a job, maybe of an import of
# a module the call's own bookkeeping would import (half made: ImportError): the call runs
# the function itself, as CPython would, and nothing of tierjit's.
compiler_ident: "int | None" = None
# runtime.straight's NESTED and DEEP, restated: the cold phase does not import it
_NESTED, _DEEP = 8, 48


def _unchanged(fn: "Callable", ir: "Any") -> bool:
    from ..frontend.resolve import unchanged
    return unchanged(fn, ir)


def predicts_long(args: tuple, size: "int | None") -> bool:
    """Does an argument say that a call of a function with loops will be long: an int of at
    least `size` in magnitude (a loop bound, most likely) or a NumPy array of at least `size`
    elements (config.watch_size; None: never)? Loop nests: ColdDispatcher.long_nest."""
    return size is not None and _reaches(args, size, False)


def _reaches(args: tuple, n: int, sequences: bool = True) -> bool:
    """Is an argument an int of at least n in magnitude or an array of at least n elements
    (or, with `sequences`, a list or tuple of at least n items)?"""
    for a in args:
        t = type(a)
        if t is int:
            if a >= n or -a >= n:
                return True
        elif t is list or t is tuple:
            if sequences and len(a) >= n:
                return True
        elif t is not float and _is_ndarray(t) and a.size >= n:
            return True
    return False


def has_loops(code: "Any") -> bool:
    """Does the code object jump backwards (a loop)? Nested code objects are not looked at:
    the frontend does not lower functions that define them."""
    # co_code is (opcode, oparg) byte pairs: keep the opcodes, map each backward jump to 1 and
    # every other opcode to 0, and look for a 1 — three C calls, no Python loop.
    return 1 in code.co_code[::2].translate(_MARKS or _marks())


def for_loops(code: "Any") -> int:
    """How many `for` loops the code object has (FOR_ITER instructions): one C call."""
    return code.co_code[::2].count(_FOR_ITER or _for_iter())


def _for_iter() -> bytes:
    global _FOR_ITER
    if sys.version_info[:2] == (3, 11):
        _FOR_ITER = b"\x5d"            # 93: no import of opcode (~1 ms)
    else:
        import opcode
        _FOR_ITER = bytes((opcode.opmap["FOR_ITER"],))
    return _FOR_ITER


_FOR_ITER: "bytes | None" = None


def _marks() -> bytes:
    global _MARKS
    table = bytearray(256)
    for op in _backward_opcodes():
        table[op] = 1
    _MARKS = bytes(table)
    return _MARKS


_MARKS: "bytes | None" = None


def _backward_opcodes() -> frozenset:
    if sys.version_info[:2] == (3, 11):
        # JUMP_BACKWARD(_NO_INTERRUPT) and POP_JUMP_BACKWARD_IF_(NOT_NONE|NONE|FALSE|TRUE),
        # which ends a `while` loop by testing its condition again: no import (~1 ms)
        return frozenset((134, 140, 173, 174, 175, 176))
    import opcode
    return frozenset(backward_jumps(opcode.opmap))


def backward_jumps(opmap: "dict[str, int]") -> "list[int]":
    """The opcodes that jump backwards, from the opcode table."""
    return [op for name, op in opmap.items()
            if name.startswith(("JUMP_BACKWARD", "POP_JUMP_BACKWARD"))]



# -- the value profile's values (runtime.speculation builds on them) ----------------------------

VARIES = object()     # the profile of an argument that varied (no argument is this object)


def _is_ndarray(t: type) -> bool:
    return t.__name__ == "ndarray" and t.__module__ == "numpy"   # without importing NumPy


def profiled(value: "Any") -> "Any":
    """What the value profile keeps of an argument: the value itself where value
    specialisation (passes.values) can compile it in — an exact int within 64 bits, a bool, a
    float other than NaN (which never equals itself) —, the shape of a NumPy array with
    dimensions (a tuple: no other profiled value is one), else VARIES."""
    t = type(value)
    if t is int:
        return value if -2**63 <= value < 2**63 else VARIES
    if t is bool or t is float and value == value:
        return value
    if _is_ndarray(t) and value.ndim:
        return value.shape
    return VARIES


def same_value(a: "Any", b: "Any") -> bool:
    """Does argument `a` have the profiled value `b`, as the entry guard checks it: the same
    exact type, equal, and floats bit for bit; or an array of the shape `b` (a tuple)."""
    if type(b) is tuple:
        return _is_ndarray(type(a)) and a.shape == b
    if type(a) is not type(b) or a != b:
        return False
    return type(a) is not float or (a != 0.0 or str(a) == str(b))


# -- every dispatcher, cold or whole, for tierjit.stats() ----------------------------------------

# Keyed by weak reference (a weakref hashes as its referent did, and a dead one still finds its
# entry): one callback for all, no closure per function.
_registry: "dict[Any, None]" = {}


def register(d: ColdDispatcher) -> None:
    _registry[_weakref(d, _forget)] = None


def _forget(ref: "Any") -> None:
    _registry.pop(ref, None)


def registered() -> "list[ColdDispatcher]":
    """The live dispatchers, oldest first, as they are (cold or whole)."""
    return [d for d in (r() for r in list(_registry)) if d is not None]


def _after_fork_in_child() -> None:
    # A thread that held the lock at fork() does not exist in the child.
    global _materialise_lock
    _materialise_lock = allocate_lock()


if hasattr(_os, "register_at_fork"):
    _os.register_at_fork(after_in_child=_after_fork_in_child)
