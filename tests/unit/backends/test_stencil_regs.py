"""Loop values cached in registers (backends/stencils/regs.py): the variants are used where
they should be, and every way a register could go stale (a stencil without a variant
writing its slot, a call into Python, a deopt in the loop, nested loops) still gives
CPython's values, types and exceptions."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tierjit
from tierjit.backends.stencils import library
from tierjit.runtime.dispatch import dispatcher_of


def _pieces(jf) -> list[tuple[str, dict]]:
    return dispatcher_of(jf).latest().native.pieces


def _outcome(f, args):
    try:
        r = f(*args)
    except Exception as e:      # noqa: BLE001 - compared with CPython's
        return ("raised", type(e).__name__, str(e))
    return repr(r), type(r).__name__


def _same(f, cases):
    """f in baseline code gives CPython's outcome for every case; the first case runs to its
    end in baseline code."""
    jf = tierjit.jit(f, tier="baseline")
    for k, args in enumerate(cases):
        assert _outcome(jf, args) == _outcome(f, args), (f.__name__, args)
        if k == 0:
            spec = dispatcher_of(jf).latest()
            assert spec.tier == "baseline" and not spec.deopts, tierjit.explain(jf)
    return jf


def dot(a, b):
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i] * b[i]
    return s


def matmul(a, b, c):
    total = 0.0
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            s = 0.0
            for k in range(a.shape[1]):
                s += a[i, k] * b[k, j]
            c[i, j] = s
            total += s
    return total


def test_a_loop_counter_and_sum_live_in_registers():
    """The counter and the sum of an innermost loop are loaded into registers once, on the
    way into the loop, and every stencil of the loop computing them is a register variant
    (which also stores the slot)."""
    a, b = np.arange(7.0), np.linspace(0.5, 2.0, 7)
    jd = _same(dot, [(a, b), (a[:0], b[:0]), (np.array([np.inf, 1.0]), np.array([2.0, 1.0]))])
    names = [n for n, _ in _pieces(jd)]
    assert names.count("load_rd") == 1
    assert "add_iu.Ar.Cr" in names                                  # the counter
    assert any(n.startswith("addmul_ffn_e1e1.") and ".Cd.Dd" in n for n in names)  # the sum
    x, y, c = np.random.default_rng(3).random((3, 6, 6))
    jm = tierjit.jit(matmul, tier="baseline")
    c2 = c.copy()
    assert repr(jm(x, y, c2)) == repr(matmul(x, y, c)) and (c2 == c).all()
    names = [n for n, _ in _pieces(jm)]
    # only the innermost loop: loaded once per run of it
    assert names.count("load_rd") == 1 and "addmul_ffn_e2e2.Cd.Dd.TBr.TCr" in names


def test_library_says_what_stencils_write_and_which_pass_no_registers_on():
    lib = library.load()
    st = lib.stencils
    assert st["add_ii"].writes == ("C",) and st["br_lt_ii"].writes == ()
    assert st["setitem1_f64_u_C"].writes == ()          # C is the value stored, read
    assert all(st[n].clobbers for n in ("pyop", "call_jit", "call_self"))
    assert not st["add_ii"].clobbers
    cached = library.deserialise(library.serialise(lib), lib.key)
    assert all(cached.stencils[n] == st[n] for n in ("add_ii", "pyop", "add_iu.Ar.Cr"))


def power(t, limit):
    # t ** 2 has no register variant: it writes t's slot, and t's register is loaded again
    while t < limit:
        t = t ** 2
    return t


def sines(n, s):
    # math.sin's result moves into the sum's slot by a move without a double variant
    for _ in range(n):
        s = math.sin(s)
    return s


def test_a_cached_slot_written_without_its_register_is_loaded_again():
    _same(power, [(2, 1000), (-3, 5), (3, 10**12), (2, 2**62), (5, 2), (1, 0)])
    names = [n for n, _ in _pieces(_same(power, [(2, 1000)]))]
    k = names.index("pow_ii")
    assert names[k + 1] == "load_r", names
    _same(sines, [(10, 1.0), (0, 0.5), (50, -2.0), (3, float("inf"))])


def python_call(n):
    t, s = 0, 0.0
    for i in range(n):
        z = np.zeros(2)          # a call into Python: no register survives it
        z[0] = i
        t += i
        s += z[0]
    return t, s


def test_a_call_into_python_in_the_loop_reloads_the_registers():
    jf = _same(python_call, [(0,), (1,), (17,)])
    names = [n for n, _ in _pieces(jf)]
    k = names.index("pyop")
    assert names[k + 1].startswith("load_")


def grow(n, k, x):
    t, s = 1, 0.0
    for _ in range(n):
        t = t * k                # past 64 bits: deoptimises in the middle of the loop
        s += x
    return t, s


def falls(n, x):
    s = 0.0
    for i in range(n):
        s += x / (n - i - 3)     # a zero divisor: deoptimises, then raises in tier 0
    return s


def test_a_deopt_in_the_loop_resumes_with_the_values_of_the_frame():
    """Slots are written through, so the frame state a guard resumes from holds the loop's
    current values."""
    _same(grow, [(10, 3, 0.5), (70, 3, 0.25), (200, -7, 1.5), (1, 2**62, 2.0),
                 (5, 2**32, np.float64(1.0))])
    _same(falls, [(2, 1.0), (6, 2.0), (10, 0.5)])


def nested(n, m):
    total, count = 0.0, 0
    for i in range(n):
        s = 0.0
        j = 0
        while j < m:             # inner loop: its own cached values
            s += i * 0.5 + j
            j += 1
        for k in range(i):       # a second inner loop, entered after the first
            count += k
        total += s
    return total, count


@pytest.mark.parametrize("args", [(0, 3), (1, 0), (4, 5), (9, 2)])
def test_nested_and_sibling_loops_each_load_their_own(args):
    jf = _same(nested, [args])
    assert sum(n.startswith("load_") for n, _ in _pieces(jf)) >= 2


def lcg(n, state):
    # state's chain: each result is the next stencil's operand, passed in %s (and, divided,
    # in %e): only the loop's test and the sum go through their slots
    inside = 0
    for _ in range(n):
        state = (1664525 * state + 1013904223) % 4294967296
        x = state / 4294967296.0
        state = (1103515245 * state + state // 3) % 2147483648
        if x * x + (state / 2147483648.0) ** 0.5 <= 1.0:
            inside += 1
    return inside, state


def chain(n, k):
    # a result that a later stencil overwrites without the register (t ** 2 into u's slot
    # via a move) must not be read from the register after that
    t = 0
    for i in range(n):
        u = i * k + 1
        u = u ** 2
        t = t + u * 3 - i
    return t


def test_a_result_is_passed_to_the_next_stencil_in_a_register():
    _same(lcg, [(50, 12345), (0, 1), (3, 2**40), (7, -5)])
    names = [n for n, _ in _pieces(_same(lcg, [(20, 7)]))]
    assert any(n.endswith(".As.Cs") for n in names), names           # int to int
    assert any(".As" in n and n.endswith(".Ce") for n in names), names   # int to float
    _same(chain, [(10, 3), (0, 1), (6, 2**20), (40, 2**31), (5, -7)])


class _Block:
    """A block of a made-up selection: regs.apply only asks where its pieces start."""


def _applied(pieces: list[tuple[str, dict]]) -> list[str]:
    from types import SimpleNamespace

    from tierjit.backends.stencils import regs
    b = _Block()
    sel = SimpleNamespace(cache={}, in_loops={b}, stencils=library.load().stencils,
                          block_label={b: 0}, pieces=pieces)
    regs.apply(sel, [b])
    return [n for n, _ in sel.pieces]


def test_a_register_is_forgotten_when_its_slot_is_written_without_it():
    """%s holds the slot the last `.Cs` stencil wrote, until a stencil writes that slot
    without it (no variant), a call clobbers it or control can arrive from elsewhere."""
    from tierjit.backends.stencils.emit import Label
    add = ("add_iu", {"A": 40, "B": 48, "C": 56})
    use = ("add_iu", {"A": 56, "B": 48, "C": 80})
    assert _applied([add, use]) == ["add_iu.Cs", "add_iu.As.Cs"]
    over = ("pow_ii", {"A": 64, "B": 72, "C": 56, "DEOPT": 0})
    assert _applied([add, over, use])[2] == "add_iu.Cs"
    call = ("pyop", {"DEOPT": 0, "K": 0, "K2": 0})
    assert _applied([add, call, use])[2] == "add_iu.Cs"
    jump = ("jump", {"NEXT": Label(1)})          # the piece after `add` is a jump target
    assert _applied([add, use, jump])[1] == "add_iu.Cs"
