"""Loop values in registers (backends/stencils/regs.py): the register variants and loads are
where they should be. That every way a register could go stale still gives CPython's
values, types, exceptions and in-place writes is checked on every tier by the differential
corpus (tests/e2e/programs/loop_registers.py, whose programs these tests compile)."""

from __future__ import annotations

from types import SimpleNamespace

from e2e.harness import build
from e2e.programs.loop_registers import PROGRAMS

from tierjit.backends.stencils import library, regs
from tierjit.backends.stencils.emit import Label
from tierjit.runtime.dispatch import dispatcher_of

_PROGRAMS = {p.name: p for p in PROGRAMS}


def _pieces(name: str) -> list[str]:
    """The stencils of corpus program `name`, compiled in baseline at its first case, which
    runs to its end there."""
    prog = _PROGRAMS[name]
    f = build(prog.source, "baseline", name)["f"]
    f(*prog.cases[0])
    spec = dispatcher_of(f).latest()
    assert spec.tier == "baseline" and not spec.deopts
    return [n for n, _ in spec.native.pieces]


def test_a_loop_counter_and_sum_live_in_registers():
    """The counter and the sum of an innermost loop are loaded into registers once, on the
    way into the loop, and every stencil of the loop computing them is a register variant
    (which also stores the slot)."""
    names = _pieces("regs_dot")
    assert names.count("load_rd") == 1
    assert "add_iu.Ar.Cr" in names                                  # the counter
    assert any(n.startswith("addmul_ffn_e1e1.") and ".Cd.Dd" in n for n in names)  # the sum
    names = _pieces("regs_matmul")
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


def test_a_cached_slot_written_without_its_register_is_loaded_again():
    names = _pieces("regs_power")
    k = names.index("pow_ii")
    assert names[k + 1] == "load_r", names


def test_a_call_into_python_in_the_loop_reloads_the_registers():
    names = _pieces("regs_python_call")
    assert names[names.index("pyop") + 1].startswith("load_")


def test_nested_and_sibling_loops_each_load_their_own():
    assert sum(n.startswith("load_") for n in _pieces("regs_nested")) >= 2


def test_a_result_is_passed_to_the_next_stencil_in_a_register():
    names = _pieces("regs_passed_results")
    assert any(n.endswith(".As.Cs") for n in names), names           # int to int
    assert any(".As" in n and n.endswith(".Ce") for n in names), names   # int to float


def test_array_elements_are_read_and_written_through_registers():
    """An index the stencil before computed, or the loop's counter, is read from its register;
    an element read is passed on in one, and so is the value an element is set to."""
    names = _pieces("regs_element_index")
    assert "range_item1.Br.Cs" in names and "sub_ffn_e1s.Ce.TAs" in names, names
    names = _pieces("regs_element_update")
    assert "getitem1_f64_u_C.Bs.Ce" in names and "setitem1_f64_u_C.Bs.Ce" in names, names
    assert "mul_ffn_se1.Ce.TCs" in names, names
    names = _pieces("regs_element_ints")
    assert "getitem1_i64_u_C.Bs.Cs" in names and "getitem1_i64_u_C.Br.Cs" in names, names
    assert "setitem1_i64_u_C.Cs" in names, names
    st = library.load().stencils
    assert st["setitem1_i64_u_C.Cs"].writes == ()          # C read from %ks, not written


class _Block:
    """A block of a made-up selection: regs.apply only asks where its pieces start."""


def _applied(pieces: list[tuple[str, dict]]) -> list[str]:
    b = _Block()
    sel = SimpleNamespace(cache={}, in_loops={b}, stencils=library.load().stencils,
                          block_label={b: 0}, pieces=pieces)
    regs.apply(sel, [b])
    return [n for n, _ in sel.pieces]


def test_a_register_is_forgotten_when_its_slot_is_written_without_it():
    """%ks holds the slot the last `.Cs` stencil wrote, until a stencil writes that slot
    without it (no variant), a call clobbers it or control can arrive from elsewhere."""
    add = ("add_iu", {"A": 40, "B": 48, "C": 56})
    use = ("add_iu", {"A": 56, "B": 48, "C": 80})
    assert _applied([add, use]) == ["add_iu.Cs", "add_iu.As.Cs"]
    over = ("pow_ii", {"A": 64, "B": 72, "C": 56, "DEOPT": 0})
    assert _applied([add, over, use])[2] == "add_iu.Cs"
    call = ("pyop", {"DEOPT": 0, "K": 0, "K2": 0})
    assert _applied([add, call, use])[2] == "add_iu.Cs"
    jump = ("jump", {"NEXT": Label(1)})          # the piece after `add` is a jump target
    assert _applied([add, use, jump])[1] == "add_iu.Cs"
    # a value an element is set to, and an element's index, likewise
    store = ("setitem1_i64_u_C", {"A": 88, "B": 96, "C": 56, "DEOPT": 0})
    assert _applied([add, store]) == ["add_iu.Cs", "setitem1_i64_u_C.Cs"]
    assert _applied([add, over, store])[2] == "setitem1_i64_u_C"
    index = ("getitem1_f64_u_C", {"A": 88, "B": 56, "C": 104})
    assert _applied([add, index]) == ["add_iu.Cs", "getitem1_f64_u_C.Bs.Ce"]
    assert _applied([add, call, index])[2] == "getitem1_f64_u_C.Ce"
