"""The LLVM engine: compile, resolve symbols, optimise, expose IR/asm, reject bad modules."""

from __future__ import annotations

import ctypes
import itertools
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tierjit.backends.llvm import engine

_ids = itertools.count()


def fresh(prefix: str) -> str:
    """A symbol name no other test (or test run in this process) has used."""
    return f"test_engine_{prefix}_{next(_ids)}"


def test_import_tierjit_does_not_import_llvmlite_or_numpy() -> None:
    code = (
        "import sys, tierjit, tierjit.runtime.entry, tierjit.runtime.capi\n"
        "print(sorted(m for m in ('llvmlite', 'numpy', 'ctypes') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout  # fmt: skip
    assert out.strip() == "[]"


def test_compile_and_call() -> None:
    name = fresh("add")
    module = engine.compile_ir(f"""
define i64 @{name}(i64 %a, i64 %b) {{
  %s = add i64 %a, %b
  ret i64 %s
}}""")
    add = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64, ctypes.c_int64)(module.address(name))
    assert add(40, 2) == 42
    assert module.symbols == (name,)
    with pytest.raises(KeyError):
        module.address("nope")


def test_c_api_symbols_are_resolved() -> None:
    name = fresh("box")
    module = engine.compile_ir(f"""
declare ptr @PyFloat_FromDouble(double)
define ptr @{name}(double %x) {{
  %y = fmul double %x, 2.0
  %r = call ptr @PyFloat_FromDouble(double %y)
  ret ptr %r
}}""")
    box = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_double)(module.address(name))
    assert box(1.25) == 2.5


def test_optimised_ir_is_vectorised_and_asm_is_lazy() -> None:
    name = fresh("saxpy")
    module = engine.compile_ir(f"""
define void @{name}(ptr noalias %y, ptr noalias %x, double %a, i64 %n) {{
entry:
  %empty = icmp sle i64 %n, 0
  br i1 %empty, label %exit, label %loop
loop:
  %i = phi i64 [0, %entry], [%i1, %loop]
  %px = getelementptr double, ptr %x, i64 %i
  %py = getelementptr double, ptr %y, i64 %i
  %vx = load double, ptr %px
  %vy = load double, ptr %py
  %m = fmul double %vx, %a
  %s = fadd double %m, %vy
  store double %s, ptr %py
  %i1 = add i64 %i, 1
  %c = icmp slt i64 %i1, %n
  br i1 %c, label %loop, label %exit
exit:
  ret void
}}""", opt=3)
    assert "x double>" in module.llvm_text  # the loop vectoriser ran
    assert module._asm is None
    assert f"{name}:" in module.asm
    n = 37
    xs, ys = (ctypes.c_double * n)(*range(n)), (ctypes.c_double * n)(*([1.0] * n))
    fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_double,
                          ctypes.c_int64)(module.address(name))  # fmt: skip
    fn(ctypes.addressof(ys), ctypes.addressof(xs), 2.0, n)
    assert list(ys) == [2.0 * i + 1.0 for i in range(n)]


@pytest.mark.parametrize("opt", [0, 1, 2, 3])
def test_every_opt_level_compiles(opt: int) -> None:
    name = fresh(f"o{opt}")
    module = engine.compile_ir(f"define double @{name}(double %x) {{ ret double %x }}", opt=opt)
    assert module.opt == opt
    assert ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double)(module.address(name))(1.5) == 1.5


def test_bad_opt_level() -> None:
    with pytest.raises(ValueError):
        engine.compile_ir("", opt=4)


def test_compiler_runtime_helpers_resolve() -> None:
    # i128 division and powi become calls to __udivti3 / __powidf2 during code generation;
    # an unresolved helper would crash the process inside MCJIT.
    div, powi = fresh("udiv128"), fresh("powi")
    module = engine.compile_ir(f"""
declare double @llvm.powi.f64.i32(double, i32)
define i64 @{div}(i64 %a, i64 %b) {{
  %wa = zext i64 %a to i128
  %wide = shl i128 %wa, 64
  %wb = zext i64 %b to i128
  %q = udiv i128 %wide, %wb
  %r = trunc i128 %q to i64
  ret i64 %r
}}
define double @{powi}(double %x, i32 %n) {{
  %r = call double @llvm.powi.f64.i32(double %x, i32 %n)
  ret double %r
}}""")
    udiv = ctypes.CFUNCTYPE(ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64)
    assert udiv(module.address(div))(1, 1 << 33) == (1 << 64) // (1 << 33)
    pw = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double, ctypes.c_int32)
    assert pw(module.address(powi))(2.0, 10) == 1024.0


def test_calls_across_modules_and_codegen_levels() -> None:
    callee = fresh("callee")
    helper = "define internal i64 @helper(i64 %x) { %y = mul i64 %x, 3  ret i64 %y }\n"
    engine.compile_ir(helper + f"""
define i64 @{callee}(i64 %x) {{
  %r = call i64 @helper(i64 %x)
  ret i64 %r
}}""", opt=3)  # the other MCJIT instance (codegen level 3) from the caller's (level 0)
    caller = fresh("caller")
    module = engine.compile_ir(helper + f"""
declare i64 @{callee}(i64)
define i64 @{caller}(i64 %x) {{
  %a = call i64 @{callee}(i64 %x)
  %b = call i64 @helper(i64 %a)
  ret i64 %b
}}""", opt=0)
    assert ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)(module.address(caller))(2) == 18


def test_bad_modules_raise_instead_of_crashing() -> None:
    name = fresh("dup")
    engine.compile_ir(f"define void @{name}() {{ ret void }}")
    with pytest.raises(ValueError, match="already defined"):
        engine.compile_ir("define double @sin(double %x) { ret double %x }")  # shadows libm
    with pytest.raises(ValueError, match="already defined"):
        engine.compile_ir(f"define void @{name}() {{ ret void }}")
    with pytest.raises(LookupError, match="no_such_symbol_anywhere"):
        engine.compile_ir(f"""
declare void @no_such_symbol_anywhere()
define void @{fresh("unresolved")}() {{
  call void @no_such_symbol_anywhere()
  ret void
}}""")
    with pytest.raises(RuntimeError):
        engine.compile_ir("define i32 @broken() { ret i64 0 }")


def _loop(name: str, factor: float = 2.0) -> str:
    """A function with a loop: work for the O3 pipeline (vectoriser included)."""
    return f"""
define double @{name}(ptr %a, i64 %n) {{
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%i1, %loop]
  %s = phi double [0.0, %entry], [%s1, %loop]
  %p = getelementptr double, ptr %a, i64 %i
  %x = load double, ptr %p
  %y = fmul double %x, {factor!r}
  %s1 = fadd double %s, %y
  %i1 = add i64 %i, 1
  %c = icmp slt i64 %i1, %n
  br i1 %c, label %loop, label %done
done:
  ret double %s1
}}"""


def test_a_modules_ir_goes_once_its_code_is_final() -> None:
    eng = engine.get_engine()

    def modules_held() -> int:
        return sum(len(ee._modules) for _, ee in eng._machines.values())

    held = modules_held()
    names = [fresh("ir_freed") for _ in range(3)]
    compiled = [engine.compile_ir(_loop(name, 1.0 + k)) for k, name in enumerate(names)]
    assert modules_held() == held               # MCJIT's instances hold no IR module
    values = (ctypes.c_double * 4)(1.0, 2.0, 3.0, 4.0)
    run = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_void_p, ctypes.c_int64)
    assert [run(m.address(n))(ctypes.addressof(values), 4) for m, n in zip(compiled, names)] \
        == [10.0, 20.0, 30.0]                   # the code stays
    assert f"@{names[0]}" in compiled[0].llvm_text and compiled[0].asm   # and its text
    caller = fresh("calls_freed")
    module = engine.compile_ir(f"""
declare double @{names[2]}(ptr, i64)
define double @{caller}(ptr %a) {{
  %r = call double @{names[2]}(ptr %a, i64 2)
  ret double %r
}}""")
    call = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_void_p)(module.address(caller))
    assert call(ctypes.addressof(values)) == 9.0


def test_each_compiled_module_keeps_little_of_the_process() -> None:
    """Memory per compiled module, measured after hundreds (RSS, in a fresh process): 125 KB
    with each module's IR kept for good, 82 KB without it, most of that llvmlite's pass
    builder, whose instrumentation callbacks are never freed."""
    code = (
        "import ctypes, sys\n"
        "from tierjit.backends.llvm import engine\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "from test_engine import _loop\n"
        "trim = getattr(ctypes.CDLL(None), 'malloc_trim', None)\n"
        "def rss():\n"
        "    if trim is not None:\n"
        "        trim(0)\n"
        "    with open('/proc/self/statm') as f:\n"
        "        return int(f.read().split()[1]) * 4096\n"
        "for k in range(50):\n"
        "    engine.compile_ir(_loop(f'warm_{k}'))\n"
        "start = rss()\n"
        "for k in range(300):\n"
        "    engine.compile_ir(_loop(f'many_{k}', float(k)))\n"
        "print((rss() - start) / 300 / 1024)\n"
    )
    here = str(Path(__file__).parent)
    out = subprocess.run([sys.executable, "-c", code, here], capture_output=True, text=True,
                         check=True).stdout  # fmt: skip
    assert float(out) < 105


def test_header_names_the_host_target() -> None:
    header = engine.ir_header()
    assert engine.target_triple() in header and engine.target_data_layout() in header
    name = fresh("with_header")
    module = engine.compile_ir(header + f"define void @{name}() {{ ret void }}")
    assert module.address(name)


def test_concurrent_compiles_from_threads() -> None:
    errors: list[BaseException] = []
    addresses: list[int] = []

    def work() -> None:
        try:
            for _ in range(4):
                name = fresh("threaded")
                module = engine.compile_ir(
                    f"define i64 @{name}(i64 %x) {{ %y = add i64 %x, 1  ret i64 %y }}", opt=1)
                addresses.append(module.address(name))
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(addresses) == 8
    inc = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)
    assert all(inc(a)(41) == 42 for a in addresses)
