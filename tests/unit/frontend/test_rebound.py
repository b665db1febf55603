"""Globals compiled in as constants that the source binds over and over (in a loop, from a
function declaring them global) keep the function in CPython: rebinding_line. A second
binding is left to the names check at each call (runtime/names.py)."""

from __future__ import annotations

import linecache
import sys
import textwrap

import pytest

import tierjit
from tierjit.frontend.rebound import attribute_rebinding, rebinding_line


def module(source: str, name: str = "m") -> dict:
    """Execute `source` as a module whose lines linecache knows, and return its globals."""
    source = textwrap.dedent(source)
    filename = f"<tierjit-test-rebound {name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    ns: dict = {"__name__": name}
    exec(compile(source, filename, "exec"), ns)  # noqa: S102
    return ns


def test_bound_once_is_a_constant():
    ns = module("""
        N = 10

        def f(x, N2=3):
            M = N
            return x * N + M + g(N, x)

        def g(a, b):
            return a
        """, "once")
    assert rebinding_line(ns["f"], "N") is None


def test_rebound_in_a_module_level_loop():
    ns = module("""
        SCALE = 1

        def f(x):
            return x * SCALE

        for i in range(3):
            SCALE = i
        """, "loop")
    assert rebinding_line(ns["f"], "SCALE") == 8


def test_bound_a_second_time_is_left_to_the_names_check():
    ns = module("""
        K, J = 2, 3

        def f(x):
            return x * K

        K += 1
        if J == 3: J = 4
        """, "twice")
    assert rebinding_line(ns["f"], "K") is None
    assert rebinding_line(ns["f"], "J") is None


def test_bound_again_in_a_loop_after_a_colon_or_a_semicolon():
    for rebinding in ("if N == 3: N = 4", "x = 2; N = 3"):
        ns = module(f"""
            N = 1

            def f(x):
                return x * N

            while False:
                {rebinding}
            """, "one-line")
        assert rebinding_line(ns["f"], "N") == 8, rebinding


def test_bound_again_in_a_loop_by_other_statements():
    """Binding forms a line-by-line pattern missed: the second target of a chain, a tuple
    after `as`, a continued line, a def or class, a match capture."""
    for second, line in (("J = A = 10", 7),
                         ("with contextlib.nullcontext((1, 2)) as (q, A):\n    pass", 7),
                         ("A \\\n    = 12", 7), ("def A():\n    pass", 7),
                         ("class A:\n    pass", 7),
                         ("match 5:\n    case A:\n        pass", 8)):
        body = "".join("    " + text + "\n" for text in second.split("\n"))
        source = "import contextlib\nA = 1\n\ndef f(x):\n    return x * A\nwhile False:\n" + body
        ns = module(source, f"forms-{line}-{len(second)}")
        assert rebinding_line(ns["f"], "A") == line, second


def test_closure_variable_bound_again_two_scopes_out():
    ns = module("""
        def outer():
            k = 1

            def mid():
                def f(x):
                    return x * k
                return f
            f = mid()
            while k < 5:
                k = 5
            return f
        """, "grandparent")
    assert rebinding_line(ns["outer"](), "k") == 11


def test_a_module_level_for_target():
    ns = module("""
        I = 0

        def f(x):
            return x + I

        for I in range(3):
            pass
        """, "for")
    assert rebinding_line(ns["f"], "I") == 7


def test_rebound_by_a_function_declaring_it_global():
    ns = module("""
        LIMIT = 5

        def f(x):
            return x < LIMIT

        def set_limit(v):
            global LIMIT
            LIMIT = v
        """, "global")
    assert rebinding_line(ns["f"], "LIMIT") == 8     # its `global` declaration


def test_same_name_elsewhere_is_not_a_rebinding():
    """A local, a parameter, a keyword argument and a subscript of the same name bind the
    name of another scope (or none): the module's tree says so."""
    ns = module("""
        W = 4

        def f(x):
            return x * W

        def g(W):
            W = W + 1
            d = dict(W=2)
            d[W] = 1
            return W

        class C:
            W = 7
        """, "elsewhere")
    assert rebinding_line(ns["f"], "W") is None


@pytest.mark.parametrize("tier", ["auto", "baseline", "opt"])
def test_jitted_function_reading_a_global_bound_twice_compiles_with_its_value(tier):
    # `N = int(sys.argv[1])` after `N = 1000`: compiled with the value N holds when lowered,
    # and started anew when the module binds it again later
    from tierjit.runtime.dispatch import dispatcher_of
    ns = module(f"""
        import tierjit

        N = 1000
        N = 3

        @tierjit.jit(tier={tier!r})
        def f(x):
            return x * N + 1
        """, f"twice-jitted-{tier}")
    f = ns["f"]
    with tierjit.config.override(hot_calls=2, hot_seconds=None, background=False):
        for i in range(6):
            assert f(i) == 3 * i + 1
        d = dispatcher_of(f)
        assert any(s.runs_native for s in d.specs.values()) or any(
            c is not None and not c.given_up for c in d.__dict__.get("_baseline_codes", {}).values())
        assert "binds again" not in tierjit.explain(f)
        ns["N"] = 4
        for i in range(6):
            assert f(i) == 4 * i + 1
        assert "started anew: line 9: 'N' was bound" in tierjit.explain(f)


def test_jitted_function_reading_a_rebound_global_runs_as_cpython():
    ns = module("""
        import tierjit

        SCALE = 1

        @tierjit.jit(tier="opt")
        def bump(x):
            return x * SCALE + 1

        def drive(n):
            global SCALE
            total = 0
            for i in range(n):
                SCALE = i % 3
                total += bump(i)
            return total
        """, "jitted")
    assert ns["drive"](30) == sum(i * (i % 3) + 1 for i in range(30))
    why = tierjit.explain(ns["bump"])
    assert "line 8: global 'SCALE', which line 11 binds again and again" in why


def test_closure_variable_bound_once_is_a_constant():
    ns = module("""
        def make(k):
            def f(x):
                return x * k
            return f

        def make2():
            k = 2

            def f(x):
                return x * k
            return f
        """, "closure-once")
    assert rebinding_line(ns["make"](3), "k") is None
    assert rebinding_line(ns["make2"](), "k") is None


def test_closure_variable_bound_again_by_its_function():
    ns = module("""
        def param(k):
            def f(x):
                return x * k
            k += 1
            return f

        def loop():
            for k in range(3):
                def f(x):
                    return x * k
            return f

        def nonlocal_():
            k = 1

            def f(x):
                return x * k

            def set_k(v):
                nonlocal k
                k = v
            return f
        """, "closure-again")
    assert rebinding_line(ns["param"](1), "k") is None      # left to the names check
    assert rebinding_line(ns["loop"](), "k") == 9
    assert rebinding_line(ns["nonlocal_"](), "k") == 21     # its `nonlocal` declaration


def fake_module(name: str, source: str):
    """A module made from `source`, its file a name linecache knows (in no installed place)."""
    import types
    source = textwrap.dedent(source)
    path = f"/nonexistent/tierjit-test/{name}.py"
    linecache.cache[path] = (len(source), None, source.splitlines(True), path)
    mod = types.ModuleType(name)
    mod.__file__ = path
    exec(compile(source, path, "exec"), mod.__dict__)  # noqa: S102
    return mod


def test_module_attribute_assigned_by_the_reading_module():
    cfg = fake_module("cfg_assigned", "N = 1\n")
    ns = module("""
        def f(x):
            return x * cfg.N

        def set_n(v):
            cfg.N = v
        """, "attr-assigned")
    ns["cfg"] = cfg
    assert attribute_rebinding(ns["f"], cfg, "cfg.N", "N") == "line 6"
    ns = module("""
        def f(x):
            return x * cfg.N

        def set_n(v):
            c.N = v
        """, "attr-alias")
    ns["cfg"] = ns["c"] = cfg                              # import cfg; import cfg as c
    assert attribute_rebinding(ns["f"], cfg, "cfg.N", "N") == "line 6"


def test_module_attribute_bound_in_a_loop_by_its_module():
    cfg = fake_module("cfg_loop", "N = 1\nfor i in range(2):\n    N = 2\n")
    ns = module("""
        def f(x):
            return x * cfg.N
        """, "attr-loop")
    assert attribute_rebinding(ns["f"], cfg, "cfg.N", "N") == "line 3 of cfg_loop.py"
    for source in ("N = 1\nM = N + 1\n", "N = 1\nif True:\n    N = 2\n"):
        other = fake_module("cfg_once", source)
        assert attribute_rebinding(ns["f"], other, "cfg.N", "N") is None, source


def test_module_attribute_assigned_once_at_the_reading_modules_level(monkeypatch):
    cfg = fake_module("cfg_level", "N = 1\n")
    monkeypatch.setitem(sys.modules, "cfg_level", cfg)
    ns = module("""
        import cfg_level as cfg

        def f(x):
            return x * cfg.N

        cfg.N = 5
        """, "attr-level")
    assert attribute_rebinding(ns["f"], cfg, "cfg.N", "N") is None


def test_jitted_function_reading_a_module_attribute_set_by_the_caller():
    cfg = fake_module("cfg_jitted", "SCALE = 1\n")
    ns = module("""
        import tierjit

        @tierjit.jit(tier="opt")
        def bump(x):
            return x * cfg.SCALE + 1

        def drive(n):
            total = 0
            for i in range(n):
                cfg.SCALE = i % 3
                total += bump(i)
            return total
        """, "attr-jitted")
    ns["cfg"] = cfg
    assert ns["drive"](30) == sum(i * (i % 3) + 1 for i in range(30))
    why = tierjit.explain(ns["bump"])
    assert "line 6: 'cfg.SCALE', which line 11 binds again and again" in why
