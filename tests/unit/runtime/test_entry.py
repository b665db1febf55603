"""Entry objects: forwarding, native slots, attribute forwarding, refcounts, GC and threads."""

from __future__ import annotations

import ctypes
import gc
import inspect
import itertools
import pickle
import sys
import threading
import weakref

import pytest

import tierjit
from tierjit.runtime import entry
from tierjit.runtime.entry import get_slot, make_entry, reset_slot, set_slot

_names = itertools.count()

# A METH-style vectorcall for `(x + 1.0) * 2.5`: exact float check, unbox ob_fval, box with
# PyFloat_FromDouble; wrong arity, keywords or types tail-call self->fallback.
KERNEL_IR = """
@PyFloat_Type = external global i8
declare ptr @PyFloat_FromDouble(double)
declare ptr @PyObject_Vectorcall(ptr, ptr, i64, ptr)

define ptr @{name}(ptr %self, ptr %args, i64 %nargsf, ptr %kwnames) {{
entry:
  %n = and i64 %nargsf, 9223372036854775807
  %one = icmp eq i64 %n, 1
  %nokw = icmp eq ptr %kwnames, null
  %shape = and i1 %one, %nokw
  br i1 %shape, label %check, label %fallback
check:
  %a = load ptr, ptr %args, align 8
  %pt = getelementptr inbounds i8, ptr %a, i64 8
  %t = load ptr, ptr %pt, align 8
  %isfloat = icmp eq ptr %t, @PyFloat_Type
  br i1 %isfloat, label %fast, label %fallback
fast:
  %pv = getelementptr inbounds i8, ptr %a, i64 16
  %x = load double, ptr %pv, align 8
  %s = fadd double %x, 1.0
  %r = fmul double %s, 2.5
  %box = tail call ptr @PyFloat_FromDouble(double %r)
  ret ptr %box
fallback:
  %pf = getelementptr inbounds i8, ptr %self, i64 {fallback}
  %f = load ptr, ptr %pf, align 8
  %res = tail call ptr @PyObject_Vectorcall(ptr %f, ptr %args, i64 %nargsf, ptr %kwnames)
  ret ptr %res
}}
"""


@pytest.fixture(scope="module")
def kernel() -> int:
    from tierjit.backends.llvm.engine import compile_ir

    name = f"test_entry_kernel_{next(_names)}"
    module = compile_ir(KERNEL_IR.format(name=name, fallback=entry.FALLBACK_OFFSET))
    return module.address(name)


class Dispatcher:
    """Stands in for runtime.dispatch.Dispatcher: counts slow-path calls."""

    def __init__(self, name: str = "kern") -> None:
        self.__name__ = self.__qualname__ = name
        self.__doc__ = f"{name} doc"
        self.__module__ = "some.module"
        self.calls = 0

    def call(self, *args, **kwargs):
        self.calls += 1
        return ("slow", args, kwargs)


def test_layout_constants() -> None:
    from tierjit.runtime import capi

    head = capi.object_layout().head_size
    assert entry.SLOT_OFFSET == head
    assert (entry.DISPATCHER_OFFSET, entry.FALLBACK_OFFSET) == (head + 8, head + 16)
    assert (entry.TARGET_OFFSET, entry.STRAIGHT_OFFSET) == (head + 24, head + 32)
    tp = entry.entry_type()
    assert tp.__basicsize__ == entry.BASICSIZE
    assert tp.__weakrefoffset__ == entry.WEAKLIST_OFFSET
    assert tp.__flags__ & (1 << 11)  # Py_TPFLAGS_HAVE_VECTORCALL


def test_forwards_everything_to_fallback_until_a_slot_is_set() -> None:
    d = Dispatcher()
    f = make_entry(d, d.call)
    assert get_slot(f) == entry.forwarder_address()
    assert f(1.0) == ("slow", (1.0,), {})
    assert f(1, b=2) == ("slow", (1,), {"b": 2})
    assert f(*[1, 2], **{"c": 3}) == ("slow", (1, 2), {"c": 3})  # noqa: PIE804 - tp_call path
    assert d.calls == 3


def test_fallback_exceptions_propagate() -> None:
    def boom(x):
        raise ValueError(f"boom {x}")

    f = make_entry(Dispatcher(), boom)
    with pytest.raises(ValueError, match="boom 3"):
        f(3)


def test_native_slot_fast_path_and_fallbacks(kernel: int) -> None:
    d = Dispatcher()
    f = make_entry(d, d.call)
    set_slot(f, kernel)
    assert get_slot(f) == kernel
    assert f(1.0) == 5.0 and f(-1.0) == 0.0 and f(2.5) == 8.75
    assert d.calls == 0
    assert f(1) == ("slow", (1,), {})  # int: type mismatch
    assert f(True) == ("slow", (True,), {})
    assert f(1.0, 2.0) == ("slow", (1.0, 2.0), {})  # arity
    assert f() == ("slow", (), {})
    assert f(x=1.0) == ("slow", (), {"x": 1.0})  # kwnames
    assert f(*(1.0,), **{}) == 5.0  # noqa: PIE804 - through tp_call

    class MyFloat(float):
        pass

    assert f(MyFloat(1.0))[0] == "slow"  # exact type check, subclasses take the slow path
    assert d.calls == 6
    reset_slot(f)
    assert f(1.0) == ("slow", (1.0,), {})


def test_refcounts_stay_balanced(kernel: int) -> None:
    d = Dispatcher()
    fallback = d.call
    x, y = 1.5, 7
    tp = entry.entry_type()
    before = [sys.getrefcount(o) for o in (d, fallback, x, y, tp)]
    for _ in range(3):
        f = make_entry(d, fallback)
        for _ in range(1000):
            f(x)
            f(y)
        set_slot(f, kernel)
        for _ in range(1000):
            f(x)
            f(y)
        del f
    assert [sys.getrefcount(o) for o in (d, fallback, x, y, tp)] == before


def test_many_create_destroy_cycles() -> None:
    from tierjit.runtime import compiler
    tp = entry.entry_type()
    # entries of earlier tests must not be freed mid-count: the compiler thread's jobs for
    # them done (a job holds its function), then their garbage collected
    compiler.wait_idle(60)
    gc.collect()
    before = sys.getrefcount(tp)
    for i in range(20000):
        d = Dispatcher()
        d.entry = make_entry(d, d.call)  # a cycle, as the real dispatcher makes
        if i % 5000 == 0:
            gc.collect()
    del d
    gc.collect()
    # 20,000 entries made and freed leak no reference to their type (an entry of an earlier
    # test a timed job still held may have been freed meanwhile: fewer, never more)
    assert sys.getrefcount(tp) <= before


def test_cycle_through_dispatcher_is_collected() -> None:
    d = Dispatcher()
    d.entry = make_entry(d, d.call)
    alive = weakref.ref(d)
    del d
    gc.collect()
    assert alive() is None


def test_weakrefs_are_cleared_on_dealloc() -> None:
    fired = []
    f = make_entry(Dispatcher(), print)
    ref = weakref.ref(f, fired.append)
    assert ref() is f
    del f
    assert ref() is None and len(fired) == 1


def test_tp_clear_leaves_a_safe_object(kernel: int) -> None:
    # The GC's tp_clear swaps both references for None and resets the slot: any later call
    # must raise, never crash.  Call it directly to simulate a finaliser seeing the object.
    d = Dispatcher()
    f = make_entry(d, d.call)
    set_slot(f, kernel)
    tp_clear = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object)(entry._get_runtime().clear)
    assert tp_clear(f) == 0
    assert get_slot(f) == entry.forwarder_address()
    assert f.__tierjit_dispatcher__ is None and f.__tierjit_fallback__ is None
    with pytest.raises(TypeError):
        f(1.0)
    with pytest.raises(AttributeError):
        f.no_such_attribute  # noqa: B018
    assert "tierjit function" in repr(f)


def test_attributes_come_from_the_dispatcher() -> None:
    def kern(a, b=2):
        """kernel doc"""

    d = Dispatcher("kern")
    d.py_func = d.__wrapped__ = kern
    f = make_entry(d, d.call)
    assert f.__tierjit_dispatcher__ is d and f.__tierjit_fallback__ == d.call
    assert (f.__name__, f.__qualname__, f.__doc__, f.__module__) == (
        "kern", "kern", "kern doc", "some.module")
    assert f.py_func is kern and f.__wrapped__ is kern
    assert str(inspect.signature(f)) == "(a, b=2)"
    assert repr(f) == "<tierjit function kern>"
    # the program's own attributes are the original function's, as a function's would be,
    # never the dispatcher's fields (`calls`, `profile`, ...)
    f.tag = 42
    assert kern.tag == 42 and f.tag == 42 and f.__dict__ == {"tag": 42}
    assert not hasattr(d, "tag") and "tag" in dir(f)
    del f.tag
    assert not hasattr(kern, "tag")
    f.__doc__ = "new doc"
    assert d.__doc__ == "new doc" == f.__doc__
    with pytest.raises(AttributeError, match="cannot assign __code__"):
        f.__code__ = kern.__code__
    f.__defaults__ = (3,)
    assert kern.__defaults__ == (3,) == f.__defaults__
    assert "py_func" in dir(f)
    with pytest.raises(AttributeError):
        f.missing  # noqa: B018
    tp = type(f)
    assert tp.__module__ == "tierjit" and isinstance(tp.__doc__, str)
    with pytest.raises(TypeError):
        tp.__call__ = None  # the type is immutable


def test_binds_as_a_method(kernel: int) -> None:
    d = Dispatcher()
    f = make_entry(d, d.call)

    class C:
        m = f
        s = staticmethod(f)

    c = C()
    assert C.m is f
    assert c.m(1)[1] == (c, 1)  # LOAD_METHOD path (Py_TPFLAGS_METHOD_DESCRIPTOR)
    bound = c.m
    assert bound.__self__ is c and bound(2)[1] == (c, 2)
    assert c.s(3)[1] == (3,)
    set_slot(f, kernel)
    assert c.s(1.0) == 5.0


def test_pickles_by_reference() -> None:
    d = Dispatcher("picklable_entry")
    d.__module__ = __name__
    f = make_entry(d, d.call)
    globals()["picklable_entry"] = f
    try:
        assert pickle.loads(pickle.dumps(f)) is f
    finally:
        del globals()["picklable_entry"]


def test_constructor_and_slot_validation() -> None:
    tp = entry.entry_type()
    with pytest.raises(TypeError, match="exactly 2"):
        tp(1)
    with pytest.raises(TypeError, match="exactly 2"):
        tp(1, print, extra=3)
    with pytest.raises(TypeError, match="callable"):
        make_entry(Dispatcher(), 42)
    f = make_entry(Dispatcher(), print)
    with pytest.raises(TypeError):
        set_slot(object(), entry.forwarder_address())
    with pytest.raises(ValueError):
        set_slot(f, 0)
    assert entry.is_entry(f) and not entry.is_entry(print)


# -- the straight slot (runtime/straight.py) -----------------------------------------------------

def test_straight_slot_calls_the_target_while_calls_are_left() -> None:
    d = Dispatcher()
    f = make_entry(d, d.call)
    made = []

    def target(*args, **kwargs):
        made.append((args, kwargs))
        return "target"

    assert entry.go_straight(f, target) and entry.is_straight(f)
    assert f(1) == ("slow", (1,), {})                # no calls given yet: the fallback
    entry.set_straight(f, 3)
    assert [f(1), f(2, k=3), f(*[4], **{"k": 5})] == ["target"] * 3   # noqa: PIE804 - tp_call
    assert made == [((1,), {}), ((2,), {"k": 3}), ((4,), {"k": 5})]
    assert entry.straight_left(f) == 0
    assert f(6) == ("slow", (6,), {}) and d.calls == 2
    entry.set_straight(f, 5)
    f(7)
    cell = entry.straight_cell(f)
    assert cell.value == 4
    cell.value = 0
    assert entry.straight_left(f) == 0
    # once set, the target is the entry's for good: another, or native code, is refused
    assert entry.go_straight(f, target) and not entry.go_straight(f, print)


def test_straight_slot_refuses_native_code_and_needs_a_target(kernel: int) -> None:
    f = make_entry(Dispatcher(), lambda x: -1.0)
    with pytest.raises(ValueError, match="no target"):
        entry.set_straight(f, 1)
    set_slot(f, kernel)
    assert not entry.go_straight(f, print) and get_slot(f) == kernel
    with pytest.raises(TypeError):
        entry.set_straight(print, 1)


def test_straight_target_reference_is_dropped() -> None:
    def target(x):
        return x

    before = sys.getrefcount(target)
    d = Dispatcher()
    f = make_entry(d, d.call)
    assert entry.go_straight(f, target)
    assert sys.getrefcount(target) == before + 1
    del f
    assert sys.getrefcount(target) == before
    # tp_clear drops it and takes the calls away: a later call reaches the (None) fallback
    f = make_entry(d, d.call)
    entry.go_straight(f, target)
    entry.set_straight(f, 10)
    tp_clear = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object)(entry._get_runtime().clear)
    assert tp_clear(f) == 0
    assert sys.getrefcount(target) == before and entry.straight_left(f) == 0
    with pytest.raises(TypeError):
        f(1)


def test_threads_calling_while_the_slot_is_swapped(kernel: int) -> None:
    f = make_entry(Dispatcher(), lambda x: -1.0)
    stop = threading.Event()
    bad: list[object] = []
    counts = [0, 0]

    def caller() -> None:
        while not stop.is_set():
            for _ in range(200):
                r = f(1.0)
                if r == 5.0:
                    counts[0] += 1
                elif r == -1.0:
                    counts[1] += 1
                else:
                    bad.append(r)

    def swapper() -> None:
        while not stop.is_set():
            set_slot(f, kernel)
            reset_slot(f)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        threads = [threading.Thread(target=caller) for _ in range(3)]
        threads.append(threading.Thread(target=swapper))
        for t in threads:
            t.start()
        stop.wait(0.4)
        stop.set()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert not bad
    assert counts[0] > 0 and counts[1] > 0


def _horner3(x):
    y = 0.0
    for k in range(4):
        y = y * x + k
    return y


@pytest.mark.parametrize("tier", ["auto", "interp", "baseline", "opt"])
def test_new_defaults_apply_to_the_calls_that_follow(tier):
    def scaled(x, k=2):
        return x * k

    f = tierjit.jit(scaled, tier=tier)
    assert f(5) == 10
    f.py_func.__defaults__ = (100,)
    assert f(5) == 500
    f.__defaults__ = (7,)
    assert f(5) == 35 and scaled.__defaults__ == (7,)


@pytest.mark.parametrize("tier", ["auto", "interp", "baseline", "opt"])
def test_function_attributes_are_the_programs_own(tier):
    """`f.calls = []` on a jitted function is the program's attribute, as on a function: it
    used to replace the dispatcher's field of that name, and every later call raised."""
    with tierjit.config.override(hot_calls=5):
        f = tierjit.jit(_horner3, tier=tier)
        f.calls, f.profile, f.tier, f.cold, f.counting = [], "fast", "gold", 1, "x"
        for _ in range(20):
            f.calls.append(f(2.0))
        assert f.calls == [_horner3(2.0)] * 20 and (f.profile, f.tier, f.cold) == ("fast", "gold", 1)
        assert _horner3.calls is f.calls
        for name in ("calls", "profile", "tier", "cold", "counting"):
            delattr(f, name)
        assert not hasattr(_horner3, "calls") and f.__dict__ == {}


@pytest.mark.parametrize("tier", ["auto", "interp", "baseline", "opt"])
def test_the_original_functions_code_closure_and_globals_read_through(tier):
    """`f.__code__`, `f.__closure__`, `f.__globals__`, `f.__annotations__` read the original
    function's (as inspect and debuggers do); they raised AttributeError."""
    def outer():
        k = 3

        def scaled(x: float) -> float:
            return x * k
        return scaled

    g = outer()
    with tierjit.config.override(hot_calls=5):
        f = tierjit.jit(g, tier=tier)
        for _ in range(2):
            assert f.__code__ is g.__code__ and f.__closure__ is g.__closure__
            assert f.__globals__ is g.__globals__ and f.__annotations__ == g.__annotations__
            assert inspect.getclosurevars(f.py_func).nonlocals == {"k": 3}
            for _ in range(20):
                assert f(2.0) == 6.0
