"""A free name bound to another object after its function was compiled: every tier's calls
see the new object, as CPython's do, and the function starts anew (runtime/names.py,
Dispatcher.rebound)."""

from __future__ import annotations

import linecache
import textwrap
import types

import pytest

import tierjit
from tierjit.runtime.dispatch import dispatcher_of

TIERS = ["auto", "interp", "baseline", "opt"]
_count = [0]


def module(source: str, tier: str, **names) -> dict:
    """Execute `source` as a module (its lines known to linecache), its functions decorated
    with `@jit(tier=TIER)`; returns its globals."""
    _count[0] += 1
    source = textwrap.dedent(source).replace("TIER", repr(tier))
    filename = f"<tierjit-test-names {_count[0]}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    ns: dict = {"__name__": f"names_test_{_count[0]}", "tierjit": tierjit, **names}
    exec(compile(source, filename, "exec"), ns)  # noqa: S102
    return ns


def native(f) -> bool:
    """Does some native code of f run its calls?"""
    d = dispatcher_of(f)
    return any(s.runs_native for s in d.specs.values()) or any(
        c is not None and not c.given_up for c in d.__dict__.get("_baseline_codes", {}).values())


@pytest.fixture
def hot():
    with tierjit.config.override(hot_calls=2, hot_seconds=None, background=False):
        yield


def _warm(f, *args, times=40):
    for _ in range(times):
        f(*args)


@pytest.mark.parametrize("tier", TIERS)
def test_a_callee_bound_again(tier, hot):
    ns = module("""
        @tierjit.jit(tier=TIER)
        def one(x):
            return x + 1

        @tierjit.jit(tier=TIER)
        def thousand(x):
            return x + 1000

        g = one

        @tierjit.jit(tier=TIER)
        def f(n):
            s = 0
            for i in range(n):
                s += g(i)
            return s
        """, tier)
    f = ns["f"]
    _warm(f, 10)
    assert f(10) == 55
    if tier != "interp":
        assert native(f)
    ns["g"] = ns["thousand"]
    assert f(10) == 10045
    assert not native(f)
    text = tierjit.explain(f)
    assert "started anew: line 16: 'g' was bound to another object after the function was " \
           "compiled" in text
    _warm(f, 10)                        # compiled again, calling the new g
    assert f(10) == 10045
    if tier != "interp":
        assert native(f)
    ns["g"] = ns["one"]
    assert f(10) == 55
    del ns["g"]
    with pytest.raises(NameError, match="'g' is not defined"):
        f(10)


@pytest.mark.parametrize("tier", TIERS)
def test_a_builtin_the_module_shadows_later(tier, hot):
    ns = module("""
        @tierjit.jit(tier=TIER)
        def f(x):
            return abs(x) + 1
        """, tier)
    f = ns["f"]
    _warm(f, -3)
    assert f(-3) == 4
    ns["abs"] = lambda x: -x
    assert f(-3) == 4 and f(3) == -2


@pytest.mark.parametrize("tier", TIERS)
def test_a_module_attribute_set_from_elsewhere(tier, hot):
    """`cfg.N = 5` from a third module, which the rebinding scan of the sources cannot see."""
    cfg = types.ModuleType("names_test_cfg")
    cfg.N = 3
    ns = module("""
        @tierjit.jit(tier=TIER)
        def f(x):
            return x * cfg.N
        """, tier, cfg=cfg)
    f = ns["f"]
    _warm(f, 2)
    assert f(2) == 6
    cfg.N = 5
    assert f(2) == 10
    assert "line 4: 'cfg.N' was bound to another object" in tierjit.explain(f)


@pytest.mark.parametrize("tier", ["auto", "baseline", "opt"])
def test_a_callee_whose_own_names_change_reaches_its_callers(tier, hot):
    """g is embedded in f's code (LLVM inlines it): a number g reads, changed from outside
    both modules, must reach f's calls too."""
    lib = module("""
        SCALE = 2

        @tierjit.jit(tier=TIER)
        def g(x):
            return x * SCALE
        """, tier)
    ns = module("""
        @tierjit.jit(tier=TIER)
        def f(n):
            s = 0
            for i in range(n):
                s += g(i)
            return s
        """, tier, g=lib["g"])
    f = ns["f"]
    _warm(f, 10)
    assert f(10) == 90
    lib["SCALE"] = 3
    assert f(10) == 135 and lib["g"](5) == 15
    assert "line 6: it calls g, in which 'SCALE' was bound" in tierjit.explain(f)


@pytest.mark.parametrize("tier", TIERS)
def test_a_callee_lowered_before_a_name_changed_inlined_into_a_caller_lowered_after(tier, hot):
    """g is lowered with cfg.N == 1; cfg.N = 2; f, reading cfg.N itself, is lowered with 2
    and embeds g's code: both read one name, and the check must see g's 1 as stale."""
    cfg = types.ModuleType("cfg_inlined")
    cfg.N = 1
    ns = module("""
        @tierjit.jit(tier=TIER)
        def g(x):
            return x * cfg.N

        @tierjit.jit(tier=TIER)
        def f(x):
            if x > 0:
                return g(x) + cfg.N * 100
            return x + cfg.N * 100
        """, tier, cfg=cfg)
    _warm(ns["g"], 2, times=4)
    cfg.N = 2
    for v in (-1, -2, -3, -4):              # f gets hot without calling g through its entry
        assert ns["f"](v) == v + 200
    assert [ns["f"](2) for _ in range(3)] == [204] * 3


@pytest.mark.parametrize("tier", TIERS)
def test_closures_sharing_a_cell_lowered_on_either_side_of_its_binding(tier, hot):
    ns = module("""
        def make():
            n = 1

            @tierjit.jit(tier=TIER)
            def inner(x):
                return x * n

            @tierjit.jit(tier=TIER)
            def outer(x):
                return inner(x) + n * 100

            for _ in range(4):
                inner(2)
            n = 2
            return [outer(2) for _ in range(6)]
        """, tier)
    assert ns["make"]() == [204] * 6


def test_a_call_predicted_long_while_another_thread_starts_the_function_anew(monkeypatch):
    """Another thread's restart between the long call's baseline build and its use of the
    IR (a race found by fuzzing): the call runs, it does not raise the restart's reason."""
    from tierjit.runtime import baseline
    ns = module("""
        N = 2

        @tierjit.jit
        def f(x):
            s = 0
            for i in range(x):
                s += N
            return s
        """, "auto")
    f = ns["f"]
    real = baseline.for_long_call

    def racing(d, args):
        code = real(d, args)
        d.rebound("'N' was bound to another object after the function was compiled", 7)
        return code

    monkeypatch.setattr(baseline, "for_long_call", racing)
    with tierjit.config.override(watch_size=1000, hot_calls=None, hot_seconds=None):
        assert f(3000) == 6000
    assert f(3000) == 6000


@pytest.mark.parametrize("tier", ["interp", "baseline", "opt"])
def test_a_name_bound_again_while_its_function_is_lowered(tier):
    """Every read of a name in one lowering sees one object (here a side effect of resolving
    `w` binds G between two reads; another thread's binding would do the same): the code
    used to hold G == 1 at one read and 2 at the other, while the check expected 2 only."""
    ns = module("""
        G = 1

        @tierjit.jit(tier=TIER)
        def inc(x):
            return x + 1

        class Wrapper:
            def __init__(self, f):
                self._f = f

            def __call__(self, *a):
                return self._f(*a)

            @property
            def __tierjit_dispatcher__(self):
                globals()["G"] = 2
                return self._f.__tierjit_dispatcher__

        w = Wrapper(inc)

        @tierjit.jit(tier=TIER)
        def f(x):
            a = x * G
            b = w(x)
            return a + b * G
        """, tier)
    f = ns["f"]
    f(10)
    ns["G"] = 2
    assert [f(10) for _ in range(3)] == [42] * 3


def test_an_equal_number_does_not_hide_another_functions_stale_one():
    """b and c share a cell, lowered on either side of its binding; a embeds both. The cell
    bound again to a number equal to b's (another object) must not make the check take b's
    as current and pass over c's stale one."""
    from tierjit.runtime import compiler
    ns = module("""
        def make():
            n = 5

            @tierjit.jit(tier=TIER)
            def b(x):
                return x * n

            @tierjit.jit(tier=TIER)
            def c(x):
                return x * n

            @tierjit.jit(tier=TIER)
            def a(x):
                if x > 0:
                    return b(x) + c(x)
                return x

            for _ in range(3):
                c(1)
            wait_idle(60)
            n = int("1000")
            for _ in range(3):
                b(1)
            wait_idle(60)
            for v in (-1, -2, -3):
                a(v)
            wait_idle(60)
            n = int("1000")
            return [a(1) for _ in range(4)]
        """, "auto", wait_idle=compiler.wait_idle)
    with tierjit.config.override(hot_calls=2, hot_seconds=None):
        assert ns["make"]() == [2000] * 4


def test_explain_a_function_with_an_expression_too_deep_to_lower():
    ns = module("@tierjit.jit(tier=TIER)\ndef f(x):\n    return x" + " + 1" * 500 + "\n", "opt")
    f = ns["f"]
    assert f(0) == 500
    assert "an expression nested too deeply to lower" in tierjit.explain(f)


@pytest.mark.parametrize("tier", TIERS)
def test_lowering_runs_none_of_the_programs_code(tier, hot):
    """Lowering asks what a free name holds whether it is a jitted function: of anything
    but tierjit's own callables it must not read the attribute, which could run the
    program's __getattr__ (a lazy module's import, a mock's record) or a property."""
    asked = []

    class Proxy:
        def __getattr__(self, name):
            asked.append(name)
            raise AttributeError(name)

    ns = module("""
        K = 3

        @tierjit.jit(tier=TIER)
        def f(x):
            return x * K if x > 0 else P
        """, tier, P=Proxy())
    _warm(ns["f"], 2, times=4)
    assert ns["f"](2) == 6 and asked == []


def test_events_hold_the_function_they_are_about_weakly(hot):
    """explain matches events to their dispatcher: a dispatcher made where a dropped one was
    must not take over its events (as it did when they held its id())."""
    import gc

    from tierjit.runtime import events
    f = tierjit.jit(lambda x: x + 1, tier="opt")
    d = dispatcher_of(f)
    ev = events.record("give-up", "f", "(int)", "opt", owner=d, reason="a test")
    assert ev.owner() is d
    del f, d
    gc.collect()
    assert ev.owner() is None


@pytest.mark.parametrize("tier", ["auto", "baseline", "opt"])
def test_binding_other_globals_keeps_native_code(tier, hot):
    """A program binding its own globals between calls (a module-level loop) changes the
    globals' version at every call: the code stays, and so does an equal number bound again."""
    ns = module("""
        LIMIT = 10 ** 6
        FLAG = None

        @tierjit.jit(tier=TIER)
        def f(x):
            if FLAG is None:
                return min(x, LIMIT)
            return 0
        """, tier)
    f = ns["f"]
    _warm(f, 7)
    assert native(f)
    for i in range(200):
        ns["i"] = i
        assert f(i) == i
    ns["LIMIT"] = int("1000000")            # another object, equal: nothing changes
    assert f(2 * 10 ** 6) == 10 ** 6
    assert native(f)
    ns["LIMIT"] = 5
    assert f(7) == 5 and not native(f)
    _warm(f, 7)
    assert f(7) == 5 and native(f)


@pytest.mark.parametrize("tier", ["auto", "opt"])
def test_a_name_bound_again_before_every_call_ends_in_cpython(tier, hot):
    """Each rebinding starts the function anew, REBINDS times in a row; then it stays
    CPython's rather than compile again at every call."""
    from tierjit.runtime.restart import REBINDS

    ns = module("""
        K = 1

        @tierjit.jit(tier=TIER)
        def f(x):
            return x * K
        """, tier)
    f = ns["f"]
    for k in range(2, REBINDS + 4):
        _warm(f, 3, times=5)
        ns["K"] = k
        assert f(3) == 3 * k
    assert not native(f)
    assert f"({REBINDS} times in a row)" in tierjit.explain(f)


@pytest.mark.parametrize("tier", TIERS)
def test_a_patched_math_function_or_builtin_is_not_the_real_one(tier, hot, monkeypatch):
    """`math.sqrt` or `builtins.abs` patched before the function is compiled (a test's
    `mock.patch`): the patched object is called, as by CPython, not the real one."""
    import builtins
    import math

    monkeypatch.setattr(math, "sqrt", lambda x: 42.0)
    monkeypatch.setattr(builtins, "abs", lambda x: 7)
    ns = module("""
        import math

        @tierjit.jit(tier=TIER)
        def f(x):
            return math.sqrt(x) + abs(x)
        """, tier)
    f = ns["f"]
    _warm(f, -4.0)
    assert f(-4.0) == 49.0


@pytest.mark.parametrize("tier", TIERS)
def test_numbers_bound_again_are_compared_bit_for_bit(tier, hot):
    """0j and complex(-0.0, 0.0) are equal, but not the same constant."""
    ns = module("""
        import math
        Z = 0j

        @tierjit.jit(tier=TIER)
        def f(x):
            return math.copysign(1.0, Z.real) + x
        """, tier)
    f = ns["f"]
    _warm(f, 1.0)
    ns["Z"] = complex(-0.0, 0.0)
    assert f(1.0) == 0.0


@pytest.mark.parametrize("tier", TIERS)
def test_two_modules_of_one_name(tier, hot):
    a, b = types.ModuleType("names_test_plugin"), types.ModuleType("names_test_plugin")
    a.N, b.N = 10, 20
    ns = module("""
        @tierjit.jit(tier=TIER)
        def f(x):
            return a.N * x + b.N
        """, tier, a=a, b=b)
    f = ns["f"]
    _warm(f, 1)
    a.N = 100
    assert f(1) == 120
    assert "line 4: 'a.N' was bound to another object" in tierjit.explain(f)


@pytest.mark.parametrize("tier", ["baseline", "opt"])
def test_tier_0_of_a_specialisation_native_code_refused(tier, hot):
    """`s` an int, then a float: a union native code does not take, so the calls run tier 0,
    which checks the names too."""
    ns = module("""
        N = 10

        @tierjit.jit(tier=TIER)
        def f(x):
            s = 0
            for i in range(3):
                s += x * N
            return s
        """, tier)
    f = ns["f"]
    _warm(f, 1.5)
    ns["N"] = 20
    assert f(1.5) == 90.0


def test_an_osr_entry_checks_its_callees_names():
    """A cold call moving into native code mid-loop: the call's start checked only the
    function's own names, the transfer checks those of the callee its code embedded."""
    ns = module("""
        K = 1.0

        @tierjit.jit
        def h(x):
            return x * K

        @tierjit.jit
        def f(n):
            s = 0.0
            for i in range(n):
                s += h(1.0)
            return s
        """, "auto")
    f = ns["f"]
    with tierjit.config.override(hot_calls=10**6, hot_seconds=None, background=False,
                                 osr_backedges=100):
        for _ in range(4):
            f(5000)
        ns["K"] = 2.0
        assert f(5000) == 10000.0


@pytest.mark.parametrize("tier", TIERS)
def test_a_closure_variable_bound_again_by_its_function(tier, hot):
    """The enclosing function defines the callee again after the inner function was
    compiled (the rebinding scan only keeps numbers out of closures)."""
    def outer():
        @tierjit.jit(tier=tier)
        def h(x):
            return x * 2

        @tierjit.jit(tier=tier)
        def f(x):
            return h(x) + 1

        _warm(f, 1)

        @tierjit.jit(tier=tier)
        def h(x):           # noqa: F811 - bound again, as a factory would
            return x * 3

        return f

    f = outer()
    assert f(1) == 4


@pytest.mark.parametrize("tier", ["auto", "baseline", "opt"])
def test_restarts_keep_cpythons_recursion_depth(tier, hot):
    """Calls of the object the program holds reach the newest successor in one step, in C:
    a recursion after restarts goes as deep as under CPython (each restart added Python
    frames to every call)."""
    ns = module("""
        K = 1

        @tierjit.jit(tier=TIER)
        def rec(n):
            if n == 0:
                return 0
            return rec(n - 1) + K
        """, tier)
    rec = ns["rec"]
    for k in range(2, 6):               # 3 restarts, then CPython's
        _warm(rec, 3, times=5)
        ns["K"] = k
        assert rec(3) == 3 * k
    assert rec(400) == 400 * 5


def test_restarts_now_and_then_do_not_pile_up(hot, monkeypatch):
    """Restarts far apart (a notebook's cells): each makes a successor, and the ones before
    are let go (only the function's first dispatcher stays, held by the program)."""
    import gc

    from tierjit.runtime import dispatch, restart

    monkeypatch.setattr(restart, "REBIND_SECONDS", 0.0)
    ns = module("""
        K = 1

        @tierjit.jit(tier=TIER)
        def f(n):
            return n + K
        """, "opt")
    f = ns["f"]
    for k in range(200):
        ns["K"] = k % 2 + 1
        assert f(1) == 1 + ns["K"]
    gc.collect()
    assert len([d for d in dispatch.registered() if d.__qualname__ == "f"
                and d.py_func is f.py_func]) <= 3
    names = [name for name in tierjit.stats()["functions"] if name.split("#")[0] == "f"]
    assert len(names) == 1


def test_restarts_of_baseline_code_keep_nothing_for_good(hot, monkeypatch):
    """Every restart compiles the function again: the types of its values, made anew, used to
    stay in the stencil selector's caches (keyed by the objects' ids), ~3.5 KB a compile."""
    import gc

    from tierjit.runtime import events, restart

    monkeypatch.setattr(restart, "REBIND_SECONDS", 0.0)
    monkeypatch.setattr(events, "_log", events.deque(maxlen=10))   # (bounded, not the leak)
    ns = module("""
        K = 1

        @tierjit.jit(tier=TIER)
        def f(n, x):
            return (n + K) * x - 0.5
        """, "baseline")
    f = ns["f"]

    def restarts(times):
        for k in range(times):
            ns["K"] = k % 2 + 1
            assert f(1, 2.0) == (1 + ns["K"]) * 2.0 - 0.5
            assert f(1, 2.0) == (1 + ns["K"]) * 2.0 - 0.5
        assert native(f)
        gc.collect()
        return len(gc.get_objects())

    restarts(100)
    before = restarts(100)
    assert restarts(300) - before < 100          # 4 objects a restart before the fix


@pytest.mark.parametrize("tier", TIERS)
def test_explain_names_the_call_of_a_callee_that_started_anew(tier, hot):
    lib = module("""
        K = 1

        @tierjit.jit(tier=TIER)
        def g(x):
            return x + K
        """, tier)
    ns = module("""
        @tierjit.jit(tier=TIER)
        def f(x):
            y = x * 2
            return g(y)
        """, tier, g=lib["g"])
    g, f = lib["g"], ns["f"]
    _warm(g, 1)
    lib["K"] = 2
    _warm(g, 1)                         # g started anew
    _warm(f, 1)                         # f compiled, calling g's successor
    lib["K"] = 3
    assert f(1) == 5
    assert "started anew: line 5: it calls g, in which 'K' was bound" in tierjit.explain(f)


def test_an_osr_entry_built_before_its_callee_started_anew():
    """The OSR entry's names check is made with its code, while the callee's IR is there:
    made at the first transfer, after the callee had started anew, it held none of the
    callee's names and the transfers ran the old K."""
    ns = module("""
        K = 1

        @tierjit.jit
        def g(x):
            return x + K

        @tierjit.jit
        def f(n):
            s = 0
            for i in range(n):
                s += g(i)
            return s
        """, "auto")
    g, f = ns["g"], ns["f"]
    from tierjit.runtime import compiler
    with tierjit.config.override(hot_calls=None, hot_seconds=None, watch_seconds=0,
                                 watch_size=None, osr_backedges=1000, background=True,
                                 tierup_seconds=None):
        with tierjit.config.override(hot_calls=2, background=False):
            _warm(g, 1, times=5)
        f(1500)
        compiler.wait_idle(5)
        ns["K"] = 2
        g(1)                            # g starts anew
        for n in (5000, 100000):
            assert f(n) == f.py_func(n)


@pytest.mark.parametrize("tier", ["baseline", "opt"])
def test_a_call_running_while_its_function_restarts(tier, hot):
    """A thread runs the first successor's code while two more restarts and a collection
    happen: the code's objects (its deopt's resume) must stay alive for the call, whose
    deopt at the end (`s * K + big` passes 64 bits) then used freed memory. (K is read
    after the loop, and is 2 again by then, as the running code has it.)"""
    import gc
    import threading
    import time

    ns = module("""
        K = 1

        @tierjit.jit(tier=TIER)
        def f(n, big):
            s = 0
            for i in range(n):
                s += i
            return s * K + big
        """, tier)
    f = ns["f"]

    def rebind(k):
        ns["K"] = k
        f(10, 1)                        # starts f anew
        f(10, 1)                        # compiles the successor

    f(10, 1)
    rebind(2)
    n, big = 150_000_000, 2**63 - 100
    out = []
    t = threading.Thread(target=lambda: out.append(f(n, big)))
    t.start()
    time.sleep(0.05)
    rebind(3)
    rebind(4)
    ns["K"] = 2
    gc.collect()
    t.join()
    assert out == [n * (n - 1) // 2 * 2 + big]
