"""Self-recursive cores: twins and the peel (backends/llvm/recursion.py), on core texts in the
shape the LLVM codegen writes them, and compiled by LLVM."""

import re

import pytest

from tierjit.backends.llvm.recursion import unroll_recursion

HEAD = "define {i32, i64} @f_core(i64 %v0, ptr %objout, i64 %depth) {"
ENTRY = """entry:
  %a0 = alloca ptr
  %t0 = trunc i64 %depth to i32
  %t1 = icmp uge i32 %t0, 2000
  br i1 %t1, label %deopt9, label %ok0
ok0:
  %depth.next = add i64 %depth, 1
  br label %b0
"""
CALLS = """b3:
  %t3 = call {i64, i1} @llvm.ssub.with.overflow.i64(i64 %v0, i64 1)
  %t4 = extractvalue {i64, i1} %t3, 1
  %t5 = extractvalue {i64, i1} %t3, 0
  br i1 %t4, label %deopt9, label %ok3
ok3:
  %t6 = call {i32, i64} @f_core(i64 %t5, ptr %a0, i64 %depth.next)
  %t7 = extractvalue {i32, i64} %t6, 1
  %t8 = add i64 %t7, %v0
  %t9 = insertvalue {i32, i64} {i32 0, i64 undef}, i64 %t8, 1
  ret {i32, i64} %t9
deopt9:
  store ptr null, ptr %objout
  ret {i32, i64} {i32 2, i64 undef}
}
; returns i64
"""
FIB = HEAD + "\n" + ENTRY + """b0:
  %t2 = icmp slt i64 %v0, 2
  br i1 %t2, label %b1, label %b3
b1:
  %t10 = insertvalue {i32, i64} {i32 0, i64 undef}, i64 %v0, 1
  ret {i32, i64} %t10
""" + CALLS


def functions(text: str) -> dict[str, str]:
    out = {}
    for part in text.split("\ndefine "):
        name = re.search(r"@(\w+)\(", part).group(1)
        out[name] = part
    return out


def test_twins_pass_the_depth_on_and_the_last_calls_the_peel():
    fns = functions(unroll_recursion(FIB, "f_core"))
    assert set(fns) == {"f_core", "f_core_twin1", "f_core_twin2", "f_core_peel"}
    assert "@f_core_twin1(i64 %t5, ptr %a0, i64 %depth)" in fns["f_core"]
    assert "@f_core_twin2(i64 %t5, ptr %a0, i64 %depth)" in fns["f_core_twin1"]
    # the call that leaves the native frame passes the next depth, through the peel
    assert "@f_core_peel(i64 %t5, ptr %a0, i64 %depth.next)" in fns["f_core_twin2"]
    assert "alwaysinline" in fns["f_core_peel"] and "internal" in fns["f_core_peel"]


def test_the_peel_is_the_pure_prefix_and_calls_the_core_past_it():
    peel = functions(unroll_recursion(FIB, "f_core"))["f_core_peel"]
    assert "ret {i32, i64} %t10" in peel                      # the base case, in place
    # every block that does more (a call, a deopt) became a call of the core with the
    # peel's own arguments, which recomputes the prefix
    stubs = re.findall(r"call \{i32, i64\} @f_core\((.*)\)", peel)
    assert stubs == ["i64 %v0, ptr %objout, i64 %depth"] * 2
    assert "alloca" not in peel and "@f_core_twin" not in peel and "store" not in peel


def test_a_peel_keeps_only_the_incoming_values_of_its_own_blocks():
    core = HEAD + "\n" + ENTRY + """b0:
  %t2 = icmp slt i64 %v0, 2
  br i1 %t2, label %b1, label %b2
b2:
  %t11 = icmp eq i64 %v0, 7
  br i1 %t11, label %b1, label %b3
b1:
  %t12 = phi i64 [%v0, %b0], [1, %b2], [%t8, %ok3]
  %t10 = insertvalue {i32, i64} {i32 0, i64 undef}, i64 %t12, 1
  ret {i32, i64} %t10
""" + CALLS
    peel = functions(unroll_recursion(core, "f_core"))["f_core_peel"]
    assert "%t12 = phi i64 [%v0, %b0], [1, %b2]\n" in peel


@pytest.mark.parametrize("prefix", [
    # no base case: the first block calls
    """b0:
  br label %b3
""",
    # a loop in the prefix
    """b0:
  %t2 = icmp slt i64 %v0, 2
  br i1 %t2, label %b1, label %b0
b1:
  ret {i32, i64} {i32 0, i64 0}
""",
    # a value made by the core's entry block
    """b0:
  %t2 = icmp slt i64 %depth.next, 2
  br i1 %t2, label %b1, label %b3
b1:
  ret {i32, i64} {i32 0, i64 0}
""",
    # a load is not pure
    """b0:
  %t2 = load i64, ptr %objout
  %t22 = icmp slt i64 %t2, 2
  br i1 %t22, label %b1, label %b3
b1:
  ret {i32, i64} {i32 0, i64 0}
""",
])
def test_no_peel_without_a_pure_base_case(prefix):
    fns = functions(unroll_recursion(HEAD + "\n" + ENTRY + prefix + CALLS, "f_core"))
    assert "f_core_peel" not in fns
    assert "@f_core(i64 %t5, ptr %a0, i64 %depth.next)" in fns["f_core_twin2"]


def test_the_module_compiles_and_runs_fib():
    import tierjit

    @tierjit.jit(tier="opt")
    def fib(n):
        if n < 2:
            return n
        return fib(n - 1) + fib(n - 2)

    assert [fib(n) for n in range(25)] == [0, 1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233,
                                           377, 610, 987, 1597, 2584, 4181, 6765, 10946,
                                           17711, 28657, 46368]
    assert fib(30) == 832040
    assert fib.inspect("opt")           # compiled, not left in tier 0
    assert "opt" in tierjit.explain(fib)
