"""The native evaluator against NumPy op at a time (reference.py), bit for bit."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from tierjit.variants import Op, Programs, random_programs, reference, vm, vm_ir

ROOT = Path(__file__).resolve().parents[3]


def same(a, b) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=True)


def same_bits(a, b) -> bool:
    """`same`, and -0.0 is not 0.0."""
    numbers = ~np.isnan(b)
    return same(a, b) and np.array_equal(np.signbit(a)[numbers], np.signbit(b)[numbers])


def data(n: int, dtype: str, cols: int = 1) -> np.ndarray:
    rng = np.random.default_rng(n)
    x = rng.uniform(-3, 3, size=(n, cols))
    x[::7] = 0.0                                  # division by zero, 0/0, ...
    x[3::11] = np.inf if n > 3 else x[3::11]
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("n_rows", [0, 1, 13, 257, 2500])
def test_rows_per_program_match_numpy(dtype, n_rows):
    ops = tuple(Op)
    progs = random_programs(40, 12, n_consts=3, n_regs=6, ops=ops, seed=n_rows)
    X = data(n_rows, dtype)
    assert same_bits(vm.run(progs, X), reference.run(progs, X))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_a_zero_maximum_is_plus_zero_when_any_row_gave_plus_zero(dtype):
    """+0.0 counts as larger than -0.0, in whichever row and vector lane it comes."""
    code = [[Op.CONST, 1, 0, 0], [Op.MUL, 2, 0, 1]]   # x * 0.0: -0.0 for x < 0, else +0.0
    progs = Programs.from_arrays(code, [0.0, 0.0], n_inputs=1, n_regs=3, output=2)
    for n in (1, 2, 5, 17, 64):
        xs = np.full((n, 1), -1.0, dtype)
        got = vm.run(progs, xs, "max")
        assert got[0] == 0.0 and np.signbit(got[0])        # only -0.0: -0.0
        assert same_bits(got, reference.run(progs, xs, "max"))
        for at in range(n):
            xs = np.full((n, 1), -1.0, dtype)
            xs[at] = 1.0
            got = vm.run(progs, xs, "max")
            assert got[0] == 0.0 and not np.signbit(got[0]), (n, at)
            assert same_bits(got, reference.run(progs, xs, "max")), (n, at)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_reductions(dtype):
    progs = random_programs(60, 9, n_consts=2, seed=4)
    X = data(1003, dtype)
    y = np.linspace(-2, 2, len(X))
    assert same_bits(vm.run(progs, X, "max"), reference.run(progs, X, "max"))
    for reduce, yy in (("sum", None), ("mse", y)):
        got, want = vm.run(progs, X, reduce, yy), reference.run(progs, X, reduce, yy)
        assert got.dtype == np.float64
        assert same_bits(got, want)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_sums_do_not_depend_on_the_vector_width(dtype, monkeypatch):
    """The machines of a cluster have vector units of different widths (AVX2, AVX-512): "sum"
    and "mse" add the rows in the same order on each, to the same bits."""
    from tierjit.backends.llvm import engine
    progs = random_programs(50, 9, n_consts=2, seed=5)
    X = data(1003, dtype)
    y = np.linspace(-2, 2, len(X))
    results, modules = [], []
    for w in (4, 8, 16):
        name = f"test_vector_width_{dtype}_x{w}"     # the evaluator's own may be loaded
        modules.append(engine.compile_ir(
            vm_ir.module_ir(dtype, w).replace(vm_ir.symbol(dtype, w), name)))
        fn = ctypes.CFUNCTYPE(None, *vm._ARGTYPES)(modules[-1].address(name))
        monkeypatch.setattr(vm, "native", lambda _dtype, fn=fn, w=w: (fn, w))
        results.append([vm.run(progs, X, "sum"), vm.run(progs, X, "mse", y)])
    for other in results[1:]:
        assert all(same_bits(a, b) for a, b in zip(results[0], other))
    assert same_bits(results[0][1], reference.run(progs, X, "mse", y))


def test_max_skips_nan_and_inf_and_gives_minus_inf_when_nothing_is_finite():
    code = [[Op.DIV, 1, 0, 0],                   # v2 = v1 / v1: nan at 0, 1 elsewhere
            [Op.CONST, 2, 0, 0], [Op.DIV, 3, 2, 2]]  # v4 = 0/0 = nan everywhere
    progs = Programs.from_arrays(code, [0, 0, 0], [0, 1, 3], n_inputs=1, n_regs=4,
                                 output=[1, 3])
    X = np.array([0.0, np.inf, 2.0])[:, None]
    assert vm.run(progs, X, "max").tolist() == [1.0, -np.inf]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_constant_minus_zero_keeps_its_sign(dtype):
    """A CONST -0.0 is -0.0 (the float64 evaluator made it 0.0: 1.0 / (x * -0.0) was +inf)."""
    code = [[Op.CONST, 1, 0, 0], [Op.MUL, 2, 0, 1], [Op.CONST, 1, 0, 0], [Op.DIV, 2, 1, 2]]
    progs = Programs.from_arrays(code, [-0.0, 0, 1.0, 0], n_inputs=1, n_regs=3, output=2)
    X = np.array([[1.0], [-2.0]], dtype)
    got = vm.run(progs, X)
    assert same_bits(got, reference.run(progs, X))
    assert got.tolist() == [[-np.inf, np.inf]]


def test_many_inputs_and_output_is_an_input():
    X = data(100, "float64", cols=3)
    code = [[Op.SUB, 3, 2, 0], [Op.MUL, 0, 3, 1]]   # v4 = v3 - v1; v1 = v4 * v2
    progs = Programs.from_arrays(code, None, [0, 2, 2], n_inputs=3, n_regs=4, output=[0, 2])
    got = vm.run(progs, X)
    assert same(got, reference.run(progs, X))
    assert np.array_equal(got[1], X[:, 2])        # the empty program returns its input


def test_unwritten_registers_read_as_zero():
    progs = Programs.from_arrays([[Op.ADD, 2, 0, 1]], n_inputs=1, n_regs=3, output=2)
    X = np.array([[1.5], [-2.0]])
    assert vm.run(progs, X).tolist() == [[1.5, -2.0]]


def test_dead_code_elimination_keeps_results():
    # more than 64 registers: no liveness pass; 64 or fewer: dead code is skipped
    for n_regs in (5, 64, 65, 200):
        progs = random_programs(30, 20, n_regs=n_regs, n_consts=4, seed=n_regs)
        X = data(300, "float64")
        assert same(vm.run(progs, X), reference.run(progs, X)), n_regs


def test_threads_give_identical_results():
    progs = random_programs(3000, 10, n_consts=2, seed=9)
    X = data(400, "float32")
    one = vm.run(progs, X, "sum", threads=1)
    two = vm.run(progs, X, "sum", threads=2)
    assert np.array_equal(one, two, equal_nan=True)


def test_empty_population():
    progs = Programs.from_arrays(np.zeros((0, 4), np.int32), None, [0], n_regs=2)
    assert vm.run(progs, data(10, "float64")).shape == (0, 10)
    assert vm.run(progs, data(10, "float64"), "max").shape == (0,)


def run_python(code: str, tmp_path: Path) -> subprocess.CompletedProcess:
    """Run code in a process of its own: what it tests may crash the interpreter."""
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(code))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, str(script)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def test_what_was_checked_is_what_runs(tmp_path):
    """The arrays changed right after the check (as another thread may, while the native
    code runs without the GIL) do not reach the native code: it read register 2**30 of 4
    and crashed the process (SIGSEGV)."""
    done = run_python("""
        import numpy as np
        from tierjit.variants import Programs, random_programs, reference, vm

        P = random_programs(300, 10, n_regs=4, seed=3)
        X = np.linspace(-1.0, 1.0, 50)[:, None]
        expected = reference.run(P, X)
        check = Programs.check

        def check_then_change(self):
            check(self)
            P.code[:, 2] = 2**30       # the caller's arrays, after whatever was checked

        Programs.check = check_then_change
        got = vm.run(P, X)
        print(np.array_equal(got, expected, equal_nan=True))
    """, tmp_path)
    assert (done.returncode, done.stdout) == (0, "True\n"), done.stderr[-2000:]


def test_a_population_changed_by_another_thread_during_evaluate(tmp_path):
    """Another thread writing an out-of-range register into the code and the right one back,
    over and over, while evaluate runs: each evaluation runs the population as it was at
    one moment, so it raises the check's ValueError or gives the population's results, and
    never crashes (it did within a second: SIGSEGV)."""
    done = run_python("""
        import threading
        import time

        import numpy as np
        import tierjit
        from tierjit.variants import random_programs, reference

        P = random_programs(20000, 20, n_regs=4, seed=0)
        X = np.linspace(-1.0, 1.0, 2000)
        expected = reference.run(P, X[:, None], "max")
        right = P.code[:, 2].copy()
        stop = threading.Event()

        def mutate():
            while not stop.is_set():
                P.code[:, 2] = 3_000_000
                P.code[:, 2] = right

        m = threading.Thread(target=mutate)
        m.start()
        outcomes = set()
        end = time.monotonic() + 3.0
        while time.monotonic() < end:
            try:
                got = tierjit.evaluate(P, X, reduce="max", threads=2)
                outcomes.add(np.array_equal(got, expected, equal_nan=True))
            except ValueError as e:
                outcomes.add("a = 3000000" in str(e))
        stop.set()
        m.join()
        print(sorted(outcomes))
    """, tmp_path)
    assert (done.returncode, done.stdout) == (0, "[True]\n"), done.stderr[-2000:]
