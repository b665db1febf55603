"""The baseline tier's machinery: copy-and-patch, W^X code memory, and the code the stencils
make (the library and its cache: test_stencil_library.py)."""

from __future__ import annotations

import ctypes
import struct

import pytest

from tierjit.backends.stencils import codemem, emit, library

pytest.importorskip("llvmlite")


def _no_wx() -> None:
    for lo, hi, perms in codemem.mappings():
        assert not ("w" in perms and "x" in perms), f"{lo:#x}-{hi:#x} is {perms}"


def test_copy_and_patch_runs_and_is_never_writable_and_executable(monkeypatch):
    """A core of three pieces (store a 64-bit constant, copy it to the result, return),
    called through ctypes: 64-bit absolute, 32-bit absolute and PC-relative holes patched."""
    lib = library.load()
    seen = []
    real_write = codemem.Region.write

    def write(self, offset, data):
        _no_wx()
        real_write(self, offset, data)
        seen.append(self.address)
        _no_wx()
    monkeypatch.setattr(codemem.Region, "write", write)
    value = 0x1234_5678_9ABC_DEF0
    pieces, data, refs, ext = _core([("const", {"C": 48, "K": value}),
                                     ("ret_copy", {"A": 48, "E": 0}), ("ret", {})])
    out = emit.emit(lib, pieces, data, ext, refs)
    _no_wx()
    a = codemem.arena()
    assert seen and a.base <= out.starts[0] < a.base + codemem.ARENA_BYTES
    core = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p)(out.starts[0])
    result = (ctypes.c_int64 * 2)()
    args = (ctypes.c_int64 * 1)()
    assert core(ctypes.addressof(args), ctypes.addressof(result)) == 0
    assert result[0] == value
    assert out.region.sealed
    with pytest.raises(codemem.CodeMemoryError):
        out.region.write(0, b"\x90")


def _core(body):
    """A core (the shared prologue's thunk) running `body`, with its function descriptor."""
    from tierjit.runtime import entry as entry_mod
    lib = library.load()
    ext = emit.shared(lib, ctypes.addressof(codemem.arena().active), entry_mod.FALLBACK_OFFSET)
    fd = struct.pack("<9q", 64, 100 << 40, 0, 0, 0, 0, 0, 0, 0)
    refs = [(16, emit.Data(72)), (24, emit.Label(1)), (32, emit.Label(1)), (64, emit.Label(0))]
    return [("core", {"K": emit.Data(0)})] + body, fd + b"\0" * 8, refs, ext


def test_trampolines_reach_c_functions():
    """C functions are reached through trampolines (jmp *0(%rip); address) in the arena."""
    lib = library.load()
    _pieces, _data, _refs, ext = _core([])
    target = emit.c_address("Py_DecRef")
    tramp = ext["Py_DecRef"]
    assert ctypes.string_at(tramp, 14) == b"\xff\x25\x00\x00\x00\x00" + struct.pack("<Q", target)
    a = codemem.arena()
    assert a.base <= tramp < a.base + codemem.ARENA_BYTES
    # the shared prologue calls Py_DecRef: its call lands on the trampoline
    code = ctypes.string_at(ext["ENTER"], 4096)
    calls = [i for i in range(len(code) - 5) if code[i] == 0xE8 and
             ext["ENTER"] + i + 5 + struct.unpack_from("<i", code, i + 1)[0] == tramp]
    assert calls
    assert lib.stencils["enter"].holes


def _perms(address: int) -> str:
    """The permissions of the mapping holding `address` (/proc/self/maps)."""
    with open("/proc/self/maps") as f:
        for line in f:
            span, perms = line.split()[:2]
            lo, hi = (int(x, 16) for x in span.split("-"))
            if lo <= address < hi:
                return perms
    raise AssertionError(f"{address:#x} is not mapped")


def test_freed_regions_are_pooled_and_never_executable():
    a = codemem.Arena(size=16 * codemem.PAGE)
    r = a.allocate(100)
    r.write(0, b"\xc3")
    r.seal()
    assert _perms(r.address).startswith("r-x")
    a.free(r.address, r.size)
    assert a.in_use == 0
    assert _perms(r.address).startswith("rw-")      # waiting for the next function
    r2 = a.allocate(10)
    assert r2.address == r.address                      # reused from the pool
    a.active.value = 1                                  # baseline code running: wait
    a.free(r2.address, r2.size)
    assert a.in_use == 1
    a.active.value = 0
    a.allocate(10)
    assert a.in_use == 1


def _without_deadlock(body) -> None:
    import threading
    done: list = []
    t = threading.Thread(target=lambda: done.append(body()), daemon=True)
    t.start()
    t.join(30)
    assert done, "deadlock (or the body raised)"


def test_a_finalizer_freeing_a_region_inside_the_arena_is_not_a_deadlock(monkeypatch):
    # A collection may run at any allocation, and the finalizer of a dropped function's code
    # frees its region: here on the thread already inside the arena (at the first mprotect
    # of a collect), a finalizer frees a region and compiles (allocates) one.
    a = codemem.Arena(size=32 * codemem.PAGE)
    r = [a.allocate(10) for _ in range(4)]
    real = codemem._protect
    reentered: list = []

    def protect(address, size, prot):
        if not reentered:
            reentered.append(True)
            a.free(r[3].address, r[3].size)
            r.append(a.allocate(4000))
        real(address, size, prot)

    monkeypatch.setattr(codemem, "_protect", protect)

    def body():
        for x in r[:3]:
            a.free(x.address, x.size)
        return True

    _without_deadlock(body)
    assert reentered and r[4].address == r[3].address      # the finalizer's region reused
    # every free region pooled once, and handed out once
    pooled = sorted(x for xs in a.pool.values() for x in xs)
    assert pooled == sorted(x.address for x in r[:3])
    assert {a.allocate(10).address for _ in range(3)} == set(pooled)


def test_baseline_functions_guard_and_deopt():
    import numpy as np

    import tierjit

    @tierjit.jit(tier="baseline")
    def f(a, i, x):
        return a[i] * x + i * i

    a = np.arange(5.0)
    assert f(a, 2, 3.0) == a[2] * 3.0 + 4
    assert f(a, -1, 3.0) == a[-1] * 3.0 + 1
    with pytest.raises(IndexError) as e:
        f(a, 5, 1.0)
    with pytest.raises(IndexError) as ref:
        f.py_func(a, 5, 1.0)
    assert str(e.value) == str(ref.value)
    spec = tierjit.runtime.dispatch.dispatcher_of(f).latest()
    assert spec.tier == "baseline"

    @tierjit.jit(tier="baseline")
    def g(n, d):
        return n * n // d

    assert g(2**40, 3) == 2**80 // 3                   # overflow: tier 0 finishes
    with pytest.raises(ZeroDivisionError):
        g(3, 0)
    _no_wx()


def test_callee_overflow_hands_the_result_object_to_its_caller():
    import tierjit

    @tierjit.jit(tier="baseline")
    def fact(n):
        if n <= 1:
            return 1
        return n * fact(n - 1)

    assert [fact(k) for k in (0, 1, 20, 21, 30)] == [1, 1, 2432902008176640000,
                                                     51090942171709440000,
                                                     265252859812191058636308480000000]
    spec = tierjit.runtime.dispatch.dispatcher_of(fact).latest()
    assert spec.tier == "baseline"


SHAPES = '''
def swap(n):
    a, b = 0, 1
    for i in range(n):
        a, b = b, a + b
    return a, b

def outer_on_back_edge(n):
    x = n * 3
    s = 0
    i = 0
    while i < n:
        s = s + x
        x2 = x
        x = x2
        i += 1
    return s, x

def chain(n):
    s = 0.0
    k = 0
    while k < n:
        if k % 3 == 0:
            s = s + 1.5
        else:
            s = s - 0.25
        k = k + 1
    return s

def nested(n):
    t = 0
    for i in range(n):
        for j in range(i):
            t = t + i * j
    return t
'''


@pytest.mark.parametrize("name", ["swap", "outer_on_back_edge", "chain", "nested"])
def test_slot_sharing_keeps_loop_values_apart(tmp_path, name):
    """Edge arguments computed into their parameters' slots (select.Selection.coalesce)
    must never clobber a value still needed: compared with CPython."""
    import importlib.util

    import tierjit
    src = tmp_path / f"shapes_{name}.py"
    src.write_text(SHAPES)
    spec = importlib.util.spec_from_file_location(f"shapes_{name}", src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    py = getattr(mod, name)
    jf = tierjit.jit(py, tier="baseline")
    for n in (0, 1, 2, 7, 30, 100):
        assert jf(n) == py(n)
    assert tierjit.runtime.dispatch.dispatcher_of(jf).latest().tier == "baseline"


def test_dropped_code_returns_its_pages():
    import gc

    import tierjit
    from tierjit.backends.stencils.code import compile_baseline

    @tierjit.jit(tier="baseline")
    def h(x):
        return x * 2 + 1

    assert h(4) == 9
    d = tierjit.runtime.dispatch.dispatcher_of(h)
    spec = d.latest()
    a = codemem.arena()
    compile_baseline(d, spec)                  # a first one may take a fresh page
    gc.collect()
    before = a.in_use
    for _ in range(20):
        code = compile_baseline(d, spec)
        assert code.region is not None
        del code
    gc.collect()
    assert a.in_use == before


def test_power_of_two_divisors_are_shifts_and_masks_with_python_signs():
    import random

    import tierjit

    @tierjit.jit(tier="baseline")
    def f(a):
        return a // 8, a % 8, a // 1, a % 1, a // 2**40, a % 2**40

    rng = random.Random(5)
    values = [0, 1, -1, 7, -7, 8, -8, 2**62, -2**62, 2**63 - 1, -2**63]
    values += [rng.randint(-2**63, 2**63 - 1) for _ in range(500)]
    for a in values:
        assert f(a) == f.py_func(a), a
    pieces = [n.split(".")[0] for n, _ in tierjit.runtime.dispatch.dispatcher_of(f).latest().native.pieces]
    assert "floordiv_pow2" in pieces and "mod_pow2" in pieces and "mod_ii" not in pieces


def test_float_division_by_a_power_of_two_is_a_multiplication_bit_for_bit():
    import math
    import random

    import tierjit

    @tierjit.jit(tier="baseline")
    def f(x, k):
        # 2**1021 and 2**1022 (literals: constant folding leaves float powers alone)
        return (x / 8.0, x / 0.125, k / 2.0, x / 2.247116418577895e+307,
                x / 4.49423283715579e+307, x / 3.0)

    rng = random.Random(7)
    xs = [0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 1e308, -1e308,
          math.inf, -math.inf, math.nan, 1.0, -3.5]
    xs += [rng.uniform(-1e6, 1e6) for _ in range(300)]
    xs += [math.ldexp(rng.random(), rng.randint(-1074, 1023)) for _ in range(300)]
    for x in xs:
        k = rng.randint(-2**63, 2**63 - 1)
        got, want = f(x, k), f.py_func(x, k)
        assert [struct.pack("<d", v) for v in got] == [struct.pack("<d", v) for v in want], x
    pieces = [n.split(".")[0] for n, _ in
              tierjit.runtime.dispatch.dispatcher_of(f).latest().native.pieces]
    # 2**1022's reciprocal is subnormal, 3.0's inexact: those stay divisions
    assert pieces.count("mul_ffp") == 3 and pieces.count("mul_ifp") == 1
    assert pieces.count("truediv_ffp") == 2


def test_array_results_are_new_references(tmp_path):
    import sys

    import numpy as np

    import tierjit

    @tierjit.jit(tier="baseline")
    def ident(a):
        return a

    @tierjit.jit(tier="baseline")
    def pair(a, k):
        return k, a

    @tierjit.jit(tier="baseline")
    def fill(n):
        a = np.zeros(n)
        for i in range(n):
            a[i] = i * 0.5
        return a

    @tierjit.jit(tier="baseline")
    def last(n):
        b = fill(n)                       # an array from a baseline callee: through Python
        return b[n - 1]

    x = np.arange(3.0)
    before = sys.getrefcount(x)
    for _ in range(200):
        assert ident(x) is x
        assert pair(x, 3)[1] is x
    assert sys.getrefcount(x) == before
    a = fill(5)
    refs = sys.getrefcount(a)             # the name and getrefcount's argument
    assert refs == 2 and a.tolist() == [0.0, 0.5, 1.0, 1.5, 2.0]
    assert last(7) == 3.0
    for f in (ident, pair, fill, last):
        assert tierjit.runtime.dispatch.dispatcher_of(f).latest().tier == "baseline"


def test_fused_multiply_add_and_mixed_int_float_ops_match_python():
    """muladd/addmul (a product used only by the next addition) and float ops with an int
    operand converted in the stencil: overflow of either step deoptimises to before the
    product, the float sum keeps Python's operand order, big ints round as float(int)."""
    import math
    import random

    import numpy as np

    import tierjit

    # (products of other operands each time: one computed twice is computed once, passes/cse.py)
    def ints(a, b, c):
        return a * b + c, c + b * a, (a * c + 7) % 4096

    def floats(a, b, c):
        return a * b + c, c + b * a, a * 2 + c

    def mixed(i, x):
        return i / x, x / i, i + x, x - i, i * x

    def npfloats(a, b, c):
        return a * b + c, c + a * b

    def dot(a, b):
        s = 0.0
        for i in range(len(a)):
            s += a[i] * b[i]
        return s

    rng = random.Random(7)
    big = [2**62, -2**62, 2**63 - 1, -2**63, 2**53 + 1, -(2**53 + 1), 3037000499, 3037000500]
    ivals = big + [0, 1, -1, 5, -7] + [rng.randint(-2**40, 2**40) for _ in range(50)]
    fvals = [0.0, -0.0, 1.5, -2.25, 1e308, -1e308, math.inf, -math.inf, math.nan, 5e-324]
    fvals += [rng.uniform(-1e6, 1e6) for _ in range(30)]
    cases = {ints: [(rng.choice(ivals), rng.choice(ivals), rng.choice(ivals))
                    for _ in range(400)],
             floats: [(rng.choice(fvals), rng.choice(fvals), rng.choice(fvals))
                      for _ in range(400)],
             mixed: [(rng.choice(ivals), rng.choice(fvals)) for _ in range(400)]}
    cases[npfloats] = [tuple(np.float64(v) for v in c) for c in cases[floats][:200]]
    for py, argsets in cases.items():
        jf = tierjit.jit(py, tier="baseline")
        for args in argsets:
            with np.errstate(all="ignore"):
                want = repr(_outcome(py, args))
                got = repr(_outcome(jf, args))
            assert got == want, (py.__name__, args)
        pieces = [n.split(".")[0] for n, _ in tierjit.runtime.dispatch.dispatcher_of(jf).latest().native.pieces]
        assert "i2f" not in pieces, pieces
    assert {"muladd_ii", "addmul_ii"} <= _pieces_of(ints, (3, 4, 5))
    assert {"muladd_ffp", "addmul_ffp"} <= _pieces_of(floats, (3.0, 4.0, 5.0))
    a, b = np.arange(10.0), np.linspace(0.5, 3.0, 10)
    jd = tierjit.jit(dot, tier="baseline")
    assert jd(a, b) == dot(a, b) and type(jd(a, b)) is type(dot(a, b))
    # into a float | np.float64 sum, the elements read by the stencil itself
    assert "addmul_ffn_e1e1" in _pieces_of(dot, (a, b))


def test_numpy_multiply_add_checks_its_sum_and_warns_as_numpy():
    """muladd_ffn/addmul_ffn guard only the sum (a non-finite product makes a non-finite
    sum): every operand whose product or sum is not finite deoptimises, and tier 0 emits
    NumPy's warnings for both operations, as CPython does."""
    import warnings

    import numpy as np

    import tierjit

    def npf(a, b, c):
        return a * b + c, c + a * b

    cases = [(1.5, 2.0, 0.25), (1e308, 10.0, 1.0), (np.inf, 0.0, 1.0), (1e308, 10.0, -np.inf),
             (1e300, 1e10, -1e308), (2.0, 3.0, np.nan), (1e200, 1e200, np.inf),
             (-1e308, 1.0, -1e308), (0.0, np.nan, 1.0)]
    assert {"muladd_ffn", "addmul_ffn"} <= _pieces_of(npf, tuple(map(np.float64, cases[0])))
    jf = tierjit.jit(npf, tier="baseline")
    for args in cases:
        args = tuple(map(np.float64, args))
        seen = []
        for f in (npf, jf):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                r = f(*args)
            seen.append((repr(r), [(x.category, str(x.message)) for x in w]))
        assert seen[0] == seen[1], args


def test_float_pairs_are_one_stencil_and_match_python_and_numpy():
    """Two float + - * where the first's result is used only by the second, right after
    it, are one stencil ({first}_{r?}{second}_ff{p,n}, templates.PAIR_OPS; mul then add
    stays muladd/addmul): Python's flavour has no guard, NumPy's checks only the result (a
    non-finite intermediate makes it non-finite) and resumes before the first operation, so
    tier 0 warns as NumPy does."""
    import itertools
    import warnings

    import numpy as np

    import tierjit

    def pairs(x, y, z):
        return ((x + y) + z,
                z + (x + y),
                (x + y) - z,
                z - (x + y),
                (x + y) * z,
                z * (x + y),
                (x - y) + z,
                z + (x - y),
                (x - y) - z,
                z - (x - y),
                (x - y) * z,
                z * (x - y),
                (x * y) - z,
                z - (x * y),
                (x * y) * z,
                z * (x * y))

    names = {f"{first}_{rev}{second}"
             for first, second in itertools.product(("add", "sub", "mul"), repeat=2)
             for rev in ("", "r") if (first, second) != ("mul", "add")}
    jf = tierjit.jit(pairs, tier="baseline")
    vals = [0.0, -0.0, 1.5, -2.5, 1e308, -1e308, float("inf"), float("-inf"), float("nan"),
            5e-324, 3.0]
    with tierjit.config.override(max_deopts=10**9):     # every case in baseline code
        for x, y, z in itertools.product(vals[:6], vals[3:9], vals[::2]):
            for conv in (float, np.float64):
                args = (conv(x), conv(y), conv(z))
                seen = []
                for f in (pairs, jf):
                    with warnings.catch_warnings(record=True) as w:
                        warnings.simplefilter("always")
                        r = _outcome(f, args)
                    seen.append((repr(r), sorted({(x.category, str(x.message)) for x in w})))
                assert seen[0] == seen[1], args
        assert tierjit.runtime.dispatch.dispatcher_of(jf).latest().tier == "baseline"
    for flavour, conv in (("ffp", float), ("ffn", np.float64)):
        got = _pieces_of(pairs, (conv(1.5), conv(2.0), conv(3.0)))
        assert {f"{n}_{flavour}" for n in names} <= got, sorted(got)
        assert {f"muladd_{flavour}", f"addmul_{flavour}"} & got == set()


def test_element_operands_are_read_by_the_float_operation_and_match_numpy():
    """A float64 element of a C-contiguous array proven in bounds, used only by the float
    + - * / (or multiply-add) right after it, is read by that operation's stencil
    ({op}_ffn_{x source}{y source}: s a slot, e1/e2 an element of a 1-D/2-D array). Results,
    NumPy's warnings (a non-finite result or a zero divisor deoptimises, before the reads)
    and the elements a guard left unread are as CPython's; a read used twice, or by an
    operation after another instruction, stays a getitem of its own."""
    import warnings

    import numpy as np

    import tierjit

    def ops1(a, b, x):
        r = np.zeros(4 * len(a))
        for i in range(len(a)):
            r[4 * i] = a[i] + b[i]
            r[4 * i + 1] = x - a[i]
            r[4 * i + 2] = a[i] * x
            r[4 * i + 3] = b[i] / a[i]
        return r

    def ops2(m, v, x):
        r = np.zeros(4 * m.shape[0] * m.shape[1])
        k = 0
        for i in range(m.shape[0]):
            for j in range(m.shape[1]):
                r[k] = m[i, j] - v[j]
                r[k + 1] = x / m[i, j]
                r[k + 2] = m[i, j] * m[j, i]
                r[k + 3] = v[i] + m[i, j] * x
                k += 4
        return r

    def dots(m, n, v):
        s = 0.0
        t = 0.0
        for i in range(m.shape[0]):
            for k in range(m.shape[1]):
                s += m[i, k] * n[k, i]
                t = v[k] * m[i, k] + t
        return s, t

    def twice(a):
        s = 0.0
        for i in range(len(a)):
            x = a[i]
            s += x * x
        return s

    special = [0.0, -0.0, 1.5, -2.5, 1e308, -1e308, np.inf, -np.inf, np.nan, 5e-324, 3.0]
    rng = np.random.default_rng(3)
    cases = []
    for _ in range(40):
        a = rng.choice(special, 4)
        b = rng.choice(special, 4)
        x = float(rng.choice(special))
        cases.append((ops1, (a, b, x)))
        m = rng.choice(special, (3, 3))
        cases.append((ops2, (m, b[:3], x)))
        cases.append((dots, (m, np.ascontiguousarray(m.T), rng.choice(special, 3))))
    cases += [(dots, (np.arange(6.0).reshape(2, 3), np.ones((3, 2)), np.arange(3.0))),
              (twice, (np.array([1.0, 1e200, 2.0]),)), (twice, (np.arange(5.0),))]
    jitted = {}
    for py, args in cases:
        jf = jitted.setdefault(py, tierjit.jit(py, tier="baseline"))
        seen = []
        for f in (py, jf):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                r = _outcome(f, args)
            seen.append((repr(r), [(x.category, str(x.message)) for x in w]))
        assert seen[0] == seen[1], (py.__name__, args)
    a, m = np.arange(1.0, 5.0), np.arange(1.0, 17.0).reshape(4, 4)
    assert {"add_ffn_e1e1", "sub_ffn_se1", "mul_ffn_e1s", "truediv_ffn_e1e1"} \
        <= _pieces_of(ops1, (a, a, 2.0))
    assert {"sub_ffn_e2e1", "truediv_ffn_se2", "mul_ffn_e2e2", "addmul_ffn_e2s"} \
        <= _pieces_of(ops2, (m, a, 2.0))
    assert {"addmul_ffn_e2e2", "muladd_ffn_e1e2"} <= _pieces_of(dots, (m, m.T.copy(), a))
    pieces = _pieces_of(twice, (a,))
    assert "getitem1_f64_u_C" in pieces and not any("_ffn_" in p for p in pieces)
    for py in jitted.values():
        assert tierjit.runtime.dispatch.dispatcher_of(py).latest().tier == "baseline"


def test_join_parameters_live_in_the_loop_header_parameters_slots():
    """A join's parameter passed on only to the loop header's parameter (`if ...: k += 1`)
    shares the header parameter's slots when the two are never live at once: neither edge
    moves it. Where the header's value is still live after the join, or passed to another
    join parameter, they keep their own slots. Results (and deopts mid-loop: an int past 64
    bits) match CPython."""
    import tierjit

    def count(n, k, x):
        for i in range(n):
            if i % 3 == 0:
                k += 1
            x = x * 0.5 + i if i % 2 else x - 1.0
        return k, x

    def still_live(n, a):
        b = 0
        for i in range(n):
            if i % 3 == 0:
                c = a + 1
            else:
                c = a
            b += a                      # a is live after the join: c needs its own slots
            a = c
        return a, b

    def passed_on(n, a):
        d = 0
        for i in range(n):
            if i % 2:
                c, e = a + 1, a
            else:
                c, e = a, a + 2
            d += e
            a = c
        return a, d

    big = 2**63 - 3
    for f in (count, still_live, passed_on):
        jf = tierjit.jit(f, tier="baseline")
        for args in [(0, 5), (1, 5), (7, -3), (20, 0), (10, big), (10, -big - 2)]:
            if f is count:
                args = (*args, 2.5)
            assert repr(_outcome(jf, args)) == repr(_outcome(f, args)), (f.__name__, args)
    jc = tierjit.jit(count, tier="baseline")
    assert jc(9, 0, 1.0) == count(9, 0, 1.0)
    native = tierjit.runtime.dispatch.dispatcher_of(jc).latest().native
    # k + 1 and x's two values are computed into the header's own slots, and nothing moves
    # them back on the back edge: the only moves are the entry's and the return's
    assert sum(n.split(".")[0] == "add_ii" and h["A"] == h["C"] for n, h in native.pieces) == 2
    assert not any(n.split(".")[0] == "mov" and h["A"] > h["C"] for n, h in native.pieces), native.pieces


def test_loop_branches_fall_through_into_the_side_laid_out_next():
    """A branch stencil's final jump (to JT or JF, as LLVM laid it out) is dropped when its
    target follows: selection inverts the condition so that a loop's header falls through
    into its body, whichever hole the stencil ends with."""
    import numpy as np

    import tierjit

    def loops(a, n):
        s = 0.0
        for i in range(n):
            for j in range(i):
                s += a[j] * 2.0
        k = 0
        while k < n and k * 2 < n + 7:
            k += 1
        return s + k

    lib = library.load()
    jf = tierjit.jit(loops, tier="baseline")
    a = np.arange(6.0)
    assert jf(a, 6) == loops(a, 6)
    pieces = tierjit.runtime.dispatch.dispatcher_of(jf).latest().native.pieces
    branches = [(k, n, h) for k, (n, h) in enumerate(pieces) if n.startswith("br_")]
    assert len(branches) >= 3
    for k, name, holes in branches:
        assert holes[lib.stencils[name].tail_target] == k + 1, (name, holes)


def _outcome(f, args):
    try:
        return f(*args)
    except Exception as e:          # noqa: BLE001 - compared with CPython's
        return type(e)


def _pieces_of(py, args) -> set:
    import tierjit
    jf = tierjit.jit(py, tier="baseline")
    jf(*args)
    # the stencils, without the suffix of a register variant (regs.py)
    return {n.split(".")[0] for n, _ in tierjit.runtime.dispatch.dispatcher_of(jf).latest().native.pieces}


def test_hoisted_bounds_check_is_checked_once_before_the_loop():
    """GUARD_INBOUNDS (passes/bounds.py) deoptimises before the loop when some iteration
    would index out of bounds: tier 0 then runs the loop, with CPython's side effects and
    IndexError; the accesses it covers are copied without checks."""
    import numpy as np

    import tierjit

    def fill(a, n, k):
        for i in range(n):
            a[2 * i + 1] = i * 0.5
        return a[k]

    def until_negative(a, b, n):
        s = 0.0
        for i in range(n):
            if a[i] < 0:
                break
            for j in range(n):
                s += a[i] * b[j, i]
        return s

    jf = tierjit.jit(fill, tier="baseline")
    for size, n, k in [(9, 4, -2), (9, 5, 3), (9, 0, -9), (1, 1, 0), (8, 4, 7), (8, 5, 0)]:
        want_a, got_a = np.zeros(size), np.zeros(size)
        assert repr(_outcome(jf, (got_a, n, k))) == repr(_outcome(fill, (want_a, n, k)))
        assert got_a.tolist() == want_a.tolist(), (size, n, k)
    ju = tierjit.jit(until_negative, tier="baseline")
    a = np.array([1.0, 2.0, -1.0, 4.0])
    b = np.arange(16.0).reshape(4, 4)
    for n in (0, 2, 3, 4, 5):
        assert repr(_outcome(ju, (a, b, n))) == repr(_outcome(until_negative, (a, b, n)))
    assert "setitem1_f64_u_C" in _pieces_of(fill, (np.zeros(9), 4, 0))
    # a[i] and b[j, i] read by the multiply-add itself (test_element_operands_...)
    assert {"guard_inbounds", "addmul_ffn_e1e2"} <= _pieces_of(until_negative, (a, b, 2))


def test_contiguous_arrays_scale_the_last_index_by_the_item_size():
    """Accesses to a C-contiguous array (layout "C") use the item size as the last
    dimension's stride (`_C` stencils); any other array its strides: both compared with
    CPython on views, transposes, reversed and single-element dimensions of every dtype."""
    import numpy as np

    import tierjit

    def walk(a, out):
        for i in range(a.shape[0]):
            for j in range(a.shape[1]):
                out[i, j] = a[i, -1 - j] + a[i, j]

    def walk1(a, out, k):
        for i in range(a.shape[0]):
            out[i] = a[i] + a[k]

    def store(o, k):
        for i in range(o.shape[0]):
            for j in range(o.shape[1]):
                o[i, j] = (i * 3 + j + k) % 5
        return o[-1, k]

    def views(base):
        return [base, base[:, ::3], base.T, base[::-1], base[2:3, :], base[:, 4:5],
                np.ascontiguousarray(base[:, 4:5]), base[1:5, 2:8]]

    def check(jf, py, args, arrays):
        want = [np.copy(x) for x in arrays]
        got = [np.copy(x) for x in arrays]
        assert repr(_outcome(jf, (*got, *args))) == repr(_outcome(py, (*want, *args)))
        for g, w in zip(got, want):
            assert g.tolist() == w.tolist()

    jw, jw1, js = (tierjit.jit(f, tier="baseline") for f in (walk, walk1, store))
    for dtype in ("float64", "float32", "int64", "int32", "int16", "int8", "uint8", "uint16",
                  "uint32", "bool"):
        for a in views((np.arange(60) % 7).astype(dtype).reshape(6, 10)):
            for order in ("C", "F"):
                out = np.zeros(a.shape, order=order)
                want, got = np.copy(out), np.copy(out)
                walk(a, want)
                jw(a, got)
                assert got.tolist() == want.tolist(), (dtype, a.strides, order)
            for v in (a[:, 0], a[0], a.reshape(-1)[::-2], a[:1, 0]):
                for k in (0, -1, len(v)):
                    want, got = np.zeros(v.shape), np.zeros(v.shape)
                    assert repr(_outcome(jw1, (v, got, k))) == \
                        repr(_outcome(walk1, (v, want, k))), (dtype, v.strides, k)
                    assert got.tolist() == want.tolist(), (dtype, v.strides)
        if dtype not in ("float32", "bool"):
            for o in views(np.zeros((6, 10), dtype=dtype)):
                for k in (0, 1, -1, 9):
                    want, got = np.copy(o), np.copy(o)
                    assert repr(_outcome(js, (got, k))) == repr(_outcome(store, (want, k)))
                    assert got.tolist() == want.tolist(), (dtype, o.strides, k)
    for f, jf in ((walk, jw), (walk1, jw1), (store, js)):
        assert tierjit.runtime.dispatch.dispatcher_of(jf).latest().tier == "baseline", f
    a = np.arange(12.0).reshape(3, 4)
    assert {"add_ffn_se2", "setitem2_f64_u_C"} <= _pieces_of(walk, (a, np.zeros((3, 4))))
    strided = _pieces_of(walk, (a.T, np.zeros((4, 3), order="F")))
    assert {"getitem2_f64_u", "setitem2_f64_u"} <= strided
    assert not any(n.endswith("_C") for n in strided)
    assert "setitem2_i32_u_C" in _pieces_of(store, (np.zeros((2, 3), dtype="int32"), 1))
    frozen = np.zeros((2, 3))
    frozen.flags.writeable = False                      # the writeability guard deoptimises
    assert repr(_outcome(js, (frozen, 1))) == repr(_outcome(store, (frozen, 1)))


RANGE_ITEMS = '''
def last(n):
    k = -1
    for k in range(n):
        pass
    return k

def stop(n):
    k = -1
    for k in range(n):
        if k * k > 10:
            break
    return k

def twice(n):
    s = 0
    for k in range(n):
        s += k
        s += k * 2
    return s
'''


def test_range_item_is_the_counter_only_while_nothing_else_needs_it(tmp_path):
    """range(n)'s item lives in the loop counter's slot (no range_item stencil) unless it
    outlives the counter's increment: the loop variable read after the loop is the last
    item, not the counter."""
    import importlib.util

    import tierjit
    path = tmp_path / "range_items.py"
    path.write_text(RANGE_ITEMS)
    spec = importlib.util.spec_from_file_location("range_items", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for name, aliased in (("last", False), ("stop", False), ("twice", True)):
        py = getattr(mod, name)
        jf = tierjit.jit(py, tier="baseline")
        for n in (0, 1, 2, 5, 10):
            assert jf(n) == py(n), (name, n)
        pieces = [n.split(".")[0] for n, _ in tierjit.runtime.dispatch.dispatcher_of(jf).latest().native.pieces]
        assert ("range_item1" not in pieces) == aliased, (name, pieces)


def test_int_ops_proven_by_value_ranges_have_no_overflow_guard():
    """add/sub/mul whose operands' ranges (passes/ranges.py) bound the result within 64 bits
    are copied without the overflow guard (*_iu); the others keep it and still deoptimise
    into Python's big ints."""
    import tierjit

    def f(n, big):
        s = 0
        for i in range(n):
            a = i & 1023
            c = a * (a - 5)
            d = c - a
            s += d * big
        return s

    jf = tierjit.jit(f, tier="baseline")
    for n, big in [(0, 1), (10, 3), (2000, 7), (50, 2**60), (3, -2**63)]:
        assert jf(n, big) == f(n, big)
    assert {"mul_iu", "sub_iu", "add_ii"} <= _pieces_of(f, (10, 3))


def _np_pow(x, y):
    return x ** y


def _sq_dist(v, q):
    s = 0.0
    for i in range(v.shape[0]):
        s += (v[i] - q) ** 2
    return s


def test_numpy_float_power_is_libm_pow_with_numpy_s_warnings():
    """`**` with a NumPy float is libm's pow in baseline code (pow_ffn), negative bases
    included; a non-finite result deoptimises, so tier 0 gives NumPy's value and warning.
    pow(x, 2.0) is not x * x: they differ in the last bit for ~0.1% of doubles."""
    import warnings

    import numpy as np

    import tierjit

    def outcome(fn, x, y):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                r = fn(x, y)
            except Exception as e:      # noqa: BLE001 - compared with CPython's
                return type(e), str(e), [str(m.message) for m in w]
        return repr(r), type(r), [str(m.message) for m in w]

    f = tierjit.jit(_np_pow, tier="baseline")
    f64 = np.float64
    cases = [(f64(-1.5), 2), (f64(-1.5), 3), (f64(2.0), 0.5), (f64(-8.0), 1 / 3),
             (f64(0.0), -1), (f64(1e200), 2), (f64(-0.0), 3), (f64(-0.0), 2),
             (f64("nan"), 0), (f64(1.0), float("nan")), (1.5, f64(2.0)), (f64(1e-200), 2),
             (f64(-2.0), 1e300), (f64(-0.5), 1e300), (f64(3.0), -2)]
    for x, y in cases:
        assert outcome(f, x, y) == outcome(_np_pow, x, y), (x, y)
    # x ** 2 bit for bit, on doubles among which pow(x, 2.0) != x * x for some
    rng = np.random.default_rng(1)
    v = rng.standard_normal(20_000) * np.exp(rng.uniform(-300, 300, 20_000))
    v = v[np.isfinite(v * v)]
    assert any(float(x) ** 2 != float(x) * float(x) for x in v)
    assert all(repr(f(f64(x), 2)) == repr(_np_pow(f64(x), 2)) for x in v[:3000])
    g = tierjit.jit(_sq_dist, tier="baseline")
    assert g(v, 0.25) == _sq_dist(v, 0.25)
    assert "_sq_dist(array(float64, 1d, C), float): baseline" in tierjit.explain(g)
    from tierjit.runtime.dispatch import dispatcher_of
    spec, = dispatcher_of(g).specs.values()
    assert not spec.native.keepalive[0].pyops      # no call into Python in the loop
