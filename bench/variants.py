"""Variants for evolutionary search (issue 5): tierjit side by side with CPython, NumPy, Numba.

    python bench/variants.py [--quick] [--no-numba] [--sections a,b,c,d]

(a) the 27,000-variant search: 3 plus-ops x 3 mul-ops x 100 values of myplus
    x 30 values of mymul, each variant called on -10.0, best result kept — CPython exec per
    variant, Numba per variant (sampled, extrapolated), tierjit templates, compile_source per
    variant, and tierjit.evaluate of all variants at once.
(b) 10 random set-ups x 100 random 3-10-statement algorithms = 1,000 variants, each on 10,000
    rows, best finite result per variant — NumPy op at a time, CPython per row (sampled),
    tierjit.evaluate from the array encoding and from source text, code generation included.
(c) 100,000 random 10-statement programs in the array encoding over 200 rows. One
    *evaluation* = one program over all 200 rows, giving one fitness value (its MSE against
    a target); row-evaluations (program x row) are shown too.
(d) calls and binds: a bound template variant against a fully specialised compile.

Times are the best of a few repeats in this process, after a warm-up that compiles tierjit's
native evaluator; that one-time cost (per process and dtype) is printed on its own line.
"""

from __future__ import annotations

import argparse
import ast
import math
import os
import sys
import time
import timeit
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import tierjit
from tierjit.variants import Op, Programs, random_programs

PLUS = ("v4 = v1 + v2", "v4 = v1 - v2", "v4 = v2 - v1")
MUL = ("v5 = v4 * v3", "v5 = v4 / v3", "v5 = v3 / v3")


def best_of(fn, repeat: int = 3) -> tuple[float, object]:
    best, out = math.inf, None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def table(title: str, rows: list[tuple[str, float, str]], base: float, unit: str = "s") -> None:
    print(f"\n{title}")
    width = max(len(r[0]) for r in rows)
    for name, secs, note in rows:
        ratio = f"{base / secs:8.1f}x" if secs and math.isfinite(secs) else "        "
        value = f"{secs:10.4f} s" if unit == "s" else f"{secs:10.1f} {unit}"
        print(f"  {name:<{width}}  {value}  {ratio}  {note}")


# -- (a) the 27,000-variant search ------------------------------------------------------------
def a_source(plusop: str, mulop: str, myplus: float, mymul: float) -> str:
    return (f"def calc(myinput):\n    v1 = myinput\n    v2 = {myplus!r}\n    v3 = {mymul!r}\n"
            f"    {plusop}\n    {mulop}\n    return v5\n")


A_TEMPLATE = ("def calc(myinput):\n    v1 = myinput\n    v2 = myplus\n    v3 = mymul\n"
              "    {plusop}\n    {mulop}\n    return v5\n")


def a_grid(quick: bool):
    plus_values = np.linspace(-100, 100, 100).tolist()
    mul_values = np.linspace(-5, 5, 30).tolist()
    if quick:
        plus_values, mul_values = plus_values[::5], mul_values[::3]
    return plus_values, mul_values


def a_cpython(plus_values, mul_values, stride: int = 1) -> float:
    best, k = -math.inf, 0
    for plusop in PLUS:
        for mulop in MUL:
            for myplus in plus_values:
                for mymul in mul_values:
                    k += 1
                    if k % stride:
                        continue
                    ns: dict = {}
                    exec(a_source(plusop, mulop, myplus, mymul), ns)  # noqa: S102
                    best = max(best, ns["calc"](-10.0))
    return best


def a_templates(plus_values, mul_values) -> float:
    best = -math.inf
    for plusop in PLUS:
        for mulop in MUL:
            t = tierjit.template(A_TEMPLATE.format(plusop=plusop, mulop=mulop),
                                 params=("myplus", "mymul"))
            for myplus in plus_values:
                for mymul in mul_values:
                    best = max(best, t.bind(myplus=myplus, mymul=mymul)(-10.0))
    return best


def a_compile_source(plus_values, mul_values) -> float:
    best = -math.inf
    for plusop in PLUS:
        for mulop in MUL:
            for myplus in plus_values:
                for mymul in mul_values:
                    f = tierjit.compile_source(a_source(plusop, mulop, myplus, mymul))
                    best = max(best, f(-10.0))
    return best


def a_evaluate_templates(plus_values, mul_values) -> float:
    variants = []
    for plusop in PLUS:
        for mulop in MUL:
            t = tierjit.template(A_TEMPLATE.format(plusop=plusop, mulop=mulop),
                                 params=("myplus", "mymul"))
            variants += t.bind_many([(p, m) for p in plus_values for m in mul_values])
    return float(tierjit.evaluate(variants, np.array([-10.0]), reduce="max").max())


def a_evaluate_sources(plus_values, mul_values) -> float:
    sources = [a_source(po, mo, p, m) for po in PLUS for mo in MUL for p in plus_values
               for m in mul_values]
    return float(tierjit.evaluate(sources, np.array([-10.0]), reduce="max").max())


def a_numba(samples: int) -> tuple[float, float, float]:
    """(import seconds, first compile seconds, seconds per later variant)."""
    t = time.perf_counter()
    import numba  # noqa: F401
    t_import = time.perf_counter() - t
    times = []
    for k in range(samples + 1):
        ns: dict = {}
        src = a_source(PLUS[k % 3], MUL[k // 3 % 3], 1.5 + k, 2.5)
        t = time.perf_counter()
        exec("import numba\n@numba.njit\n" + src, ns)  # noqa: S102
        ns["calc"](-10.0)
        times.append(time.perf_counter() - t)
    return t_import, times[0], sum(times[1:]) / samples


def section_a(quick: bool, use_numba: bool) -> None:
    plus_values, mul_values = a_grid(quick)
    n = len(PLUS) * len(MUL) * len(plus_values) * len(mul_values)
    t_py, best_py = best_of(lambda: a_cpython(plus_values, mul_values), 1)
    rows = [(f"CPython exec per variant ({n:,})", t_py, f"best {best_py:.6g}")]
    t, b = best_of(lambda: a_templates(plus_values, mul_values), 3)
    rows.append(("tierjit.template + bind + call", t, f"best {b:.6g} same={b == best_py}"))
    t, b = best_of(lambda: a_compile_source(plus_values, mul_values), 3)
    rows.append(("tierjit.compile_source per variant", t, f"best {b:.6g} same={b == best_py}"))
    t, b = best_of(lambda: a_evaluate_templates(plus_values, mul_values), 3)
    rows.append(("tierjit.evaluate(bound templates)", t, f"best {b:.6g} same={b == best_py}"))
    t, b = best_of(lambda: a_evaluate_sources(plus_values, mul_values), 3)
    rows.append(("tierjit.evaluate(source strings)", t, f"best {b:.6g} same={b == best_py}"))
    if use_numba:
        t_import, first, per = a_numba(2 if quick else 4)
        rows.append(("Numba njit per variant (sampled, extrapolated)",
                     t_import + first + per * (n - 1),
                     (f"import {t_import:.2f} s, first compile {first:.2f} s, then "
                     f"{per * 1e3:.1f} ms per variant")))
    table(f"(a) {n:,}-variant search, each variant called once on -10.0 (x = speed-up vs "
          "CPython exec)", rows, t_py)


# -- (b) 1,000 random algorithms x 10,000 rows ------------------------------------------------
def b_population(seed: int = 5):
    rng = np.random.default_rng(seed)
    setups = rng.random((10, 3))
    algos = []
    for _ in range(100):
        length = int(rng.integers(3, 11))
        algos.append([(int(rng.integers(1, 6)), int(rng.integers(1, 6)),
                       int(rng.integers(1, 6)), "+-*/"[int(rng.integers(0, 4))])
                      for _ in range(length)])
    return setups, algos


def b_source(setup, algo) -> str:
    lines = [f"    v{x} = v{y} {op} v{z}" for x, y, z, op in algo]
    return ("def calc(v1):\n    v2 = {!r}\n    v3 = {!r}\n    v4 = {!r}\n    v5 = 0.0\n"
            .format(*map(float, setup)) + "\n".join(lines) + "\n    return v5\n")


_OPCODE = {"+": Op.ADD, "-": Op.SUB, "*": Op.MUL, "/": Op.DIV}


def b_encode(setups, algos) -> Programs:
    """The population in the array encoding (vectorised per algorithm)."""
    head = np.array([[Op.CONST, r, 0, 0] for r in (1, 2, 3, 4)], np.int32)
    bodies = [np.array([[_OPCODE[op], x - 1, y - 1, z - 1] for x, y, z, op in a], np.int32)
              for a in algos]
    code, values, lengths = [], [], []
    for setup in setups:
        consts = np.array([*setup, 0.0])
        for body in bodies:
            code += (head, body)
            values += (consts, np.zeros(len(body)))
            lengths.append(4 + len(body))
    starts = np.concatenate([[0], np.cumsum(lengths)])
    return Programs.from_arrays(np.concatenate(code), np.concatenate(values), starts,
                                n_inputs=1, n_regs=5, output=4)


_UFUNC = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide}


def b_numpy(setups, algos, x) -> np.ndarray:
    n, dt = len(x), x.dtype
    out = []
    with np.errstate(all="ignore"):
        for setup in setups:
            for algo in algos:
                regs = [None, x, np.full(n, setup[0], dt), np.full(n, setup[1], dt),
                        np.full(n, setup[2], dt), np.zeros(n, dt)]
                for d, a, b, op in algo:
                    regs[d] = _UFUNC[op](regs[a], regs[b])
                r = regs[5]
                finite = r[np.isfinite(r)]
                out.append(finite.max() if finite.size else -np.inf)
    return np.array(out, dt)


def b_cpython(sources, x, stride: int) -> tuple[float, dict[int, float]]:
    rows = x.tolist()
    t = time.perf_counter()
    best: dict[int, float] = {}
    for k in range(0, len(sources), stride):
        ns: dict = {}
        exec(sources[k], ns)  # noqa: S102
        f, b = ns["calc"], -math.inf
        for v in rows:
            try:
                r = f(v)
            except ZeroDivisionError:
                continue
            if r > b and math.isfinite(r):
                b = r
        best[k] = b
    return (time.perf_counter() - t) * stride, best


def section_b(quick: bool) -> None:
    setups, algos = b_population()
    n_rows = 2_000 if quick else 10_000
    sources = [b_source(s, a) for s in setups for a in algos]
    for dtype in ("float64", "float32"):
        b_one(quick, setups, algos, sources, np.linspace(-10, 10, n_rows).astype(dtype))


def b_one(quick: bool, setups, algos, sources: list[str], x: np.ndarray) -> None:
    from tierjit.variants import structure
    t_np, ref = best_of(lambda: b_numpy(setups, algos, x), 1 if quick else 2)
    rows = [("NumPy op at a time", t_np, "")]
    if x.dtype == np.float64:
        stride = 50 if quick else 20
        t_py, cp = b_cpython(sources, x, stride)
        same = sum(cp[k] == ref[k] for k in cp)
        rows.append((f"CPython per row (1 in {stride} sampled)", t_py,
                     (f"{same}/{len(cp)} variants agree with NumPy (the rest raise "
                     "ZeroDivisionError on some rows)")))
    t, got = best_of(lambda: tierjit.evaluate(b_encode(setups, algos), x, reduce="max"), 5)
    rows.append(("tierjit.evaluate, array encoding (encoding included)", t,
                 f"identical to NumPy: {np.array_equal(got, ref)}"))
    t, got = best_of(lambda: tierjit.evaluate(b_encode(setups, algos), x, reduce="max",
                                              threads=1), 3)
    rows.append(("  the same on one thread", t, ""))
    structure.clear()
    t, got = best_of(lambda: tierjit.evaluate(sources, x, reduce="max"), 1)
    rows.append(("tierjit.evaluate, 1,000 source strings, 100 new structures", t,
                 f"identical to NumPy: {np.array_equal(got, ref)}"))
    t, got = best_of(lambda: tierjit.evaluate(sources, x, reduce="max"), 3)
    rows.append(("tierjit.evaluate, the same sources again (structures known)", t,
                 f"identical to NumPy: {np.array_equal(got, ref)}"))
    table(f"(b) 1,000 variants x {len(x):,} rows, best finite result each, {x.dtype} "
          f"(x = speed-up vs NumPy; NumPy was measured at 0.24 s here before)",
          rows, t_np)


# -- (c) 100,000 programs x 200 rows ----------------------------------------------------------
def interpreter_in_subset():
    """A register-machine interpreter in tierjit's Python subset (the alternative to writing
    LLVM IR): Python floats, IEEE division spelled out (CPython would raise)."""

    def interp(code, values, starts, outreg, x, y, regs, out):
        n_prog = starts.shape[0] - 1
        n_rows = x.shape[0]
        n_regs = regs.shape[0]
        for p in range(n_prog):
            total = 0.0
            for r in range(n_rows):
                for k in range(n_regs):
                    regs[k] = 0.0
                regs[0] = x[r]
                for s in range(int(starts[p]), int(starts[p + 1])):
                    op = int(code[s, 0])
                    d = int(code[s, 1])
                    a = float(regs[int(code[s, 2])])
                    b = float(regs[int(code[s, 3])])
                    if op == 0:
                        v = float(values[s])
                    elif op == 1:
                        v = a + b
                    elif op == 2:
                        v = a - b
                    elif op == 3:
                        v = a * b
                    elif b != 0.0:
                        v = a / b
                    elif math.isnan(a) or a == 0.0:
                        v = math.nan
                    else:
                        v = math.copysign(math.inf, a) * math.copysign(1.0, b)
                    regs[d] = v
                e = float(regs[int(outreg[p])]) - float(y[r])
                total += e * e
            out[p] = total / n_rows
    return tierjit.jit(interp, tier="opt")


def section_c(quick: bool) -> None:
    n_prog = 20_000 if quick else 100_000
    t_gen, progs = best_of(lambda: random_programs(n_prog, 10, seed=11), 1)
    print(f"\n(c) {n_prog:,} random 10-statement programs over 200 rows; one evaluation = one "
          "program over all 200 rows (its MSE against a target)")
    print(f"  generating the population (random_programs): {t_gen * 1e3:.1f} ms")
    rows = []
    for dtype in ("float32", "float64"):
        rows += c_one(quick, progs, dtype)
    width = max(len(r[0]) for r in rows)
    base = rows[0][1]
    for name, rate in rows:
        slower = f"  ({base / rate:6.1f}x slower than the first row)" if rate != base else ""
        print(f"  {name:<{width}}  {rate / 1e6:9.3f} M evaluations/s  "
              f"{rate * 200 / 1e6:9.1f} M row-evaluations/s{slower}")


def c_one(quick: bool, progs: Programs, dtype: str) -> list[tuple[str, float]]:
    from tierjit.variants import reference
    x = np.linspace(-1, 1, 200).astype(dtype)
    y = np.sin(3 * x)
    n_prog = len(progs)
    t2, mse = best_of(lambda: tierjit.evaluate(progs, x, reduce="mse", y=y), 5)
    t1, _ = best_of(lambda: tierjit.evaluate(progs, x, reduce="mse", y=y, threads=1), 3)
    rows = [(f"tierjit native evaluator, {dtype}, all cores", n_prog / t2),
            (f"tierjit native evaluator, {dtype}, one thread", n_prog / t1)]
    if dtype != "float64":
        return rows
    sample = progs.take(0, 500 if quick else 2_000)
    ts, ref = best_of(lambda: reference.run(sample, x[:, None], "mse", y), 1)
    same = np.allclose(mse[:len(sample)], ref, rtol=1e-12, equal_nan=True)
    rows.append((f"NumPy op at a time (sampled; MSEs agree: {same})", len(sample) / ts))
    interp = interpreter_in_subset()
    small = progs.take(0, 200 if quick else 1_000)
    scratch, out = np.zeros(progs.n_regs), np.zeros(len(small))
    args = (small.code, small.values, small.starts, small.output, x, y, scratch, out)
    t0 = time.perf_counter()
    interp(*args)
    t_first = time.perf_counter() - t0
    ti, _ = best_of(lambda: interp(*args), 2)
    same = np.allclose(out, mse[:len(small)], rtol=1e-12, equal_nan=True)
    rows.append(((f"interpreter in tierjit's subset, jitted (sampled; first call "
                 f"{t_first:.2f} s; agrees: {same})"), len(small) / ti))
    return rows


# -- (d) calls and binds ----------------------------------------------------------------------
def ns_per_call(fn, arg, number: int = 300_000) -> float:
    times = timeit.repeat("f(a)", globals={"f": fn, "a": arg}, number=number, repeat=5)
    return min(times) / number * 1e9


def section_d(quick: bool) -> None:
    number = 50_000 if quick else 300_000
    print("\n(d) calls and binds (ns per call; best of 5 timeit repeats, loop included)")

    def calc(myinput):
        return (myinput + myplus) * mymul  # noqa: F821

    def spec(myinput):
        return (myinput + 1.0) * 2.5

    def loop(xs):
        s = 0.0
        for i in range(xs.shape[0]):
            s += (xs[i] + myplus) * mymul  # noqa: F821
        return s

    def loop_spec(xs):
        s = 0.0
        for i in range(xs.shape[0]):
            s += (xs[i] + 1.0) * 2.5
        return s

    t = tierjit.template(calc, params=("myplus", "mymul")).compile()
    early = t.bind(myplus=1.0, mymul=2.5)       # bound before any native code exists
    sp = tierjit.jit(spec, tier="opt")
    sp(-10.0), early(-10.0)
    bound = t.bind(myplus=1.0, mymul=2.5)       # bound once the template has native code
    from tierjit.variants import template as template_module
    saved, template_module.PROMOTE_AFTER = template_module.PROMOTE_AFTER, 10**15
    cold = tierjit.template(calc, params=("myplus", "mymul")).bind(myplus=1.0, mymul=2.5)
    template_module.PROMOTE_AFTER = saved          # (read when the template is built)
    rows = [("fully specialised compile (constants in the code)", ns_per_call(sp, -10.0,
                                                                           number)),
            ("bound template variant (partial of the compiled template)",
             ns_per_call(bound, -10.0, number)),
            ("  the same, bound before the template's first call",
             ns_per_call(early, -10.0, number)),
            ("bound variant of a cold template (CPython behind a counter)",
             ns_per_call(cold, -10.0, number)),
            ("plain CPython function", ns_per_call(spec, -10.0, number))]
    tl = tierjit.template(loop, params=("myplus", "mymul")).compile()
    xs = np.linspace(-1, 1, 1000)
    tl.bind(myplus=1.0, mymul=2.5)(xs)
    lb, ls = tl.bind(myplus=1.0, mymul=2.5), tierjit.jit(loop_spec, tier="opt")
    lb(xs), ls(xs)
    rows += [("loop of 1,000 elements: fully specialised", ns_per_call(ls, xs, number // 50)),
             ("loop of 1,000 elements: bound template variant",
              ns_per_call(lb, xs, number // 50))]
    width = max(len(r[0]) for r in rows)
    for name, ns in rows:
        print(f"  {name:<{width}}  {ns:9.1f} ns")
    print(f"  bound / specialised: trivial body {rows[1][1] / rows[0][1]:.2f}, loop body "
          f"{rows[6][1] / rows[5][1]:.2f}")
    n = number // 3
    tb = tierjit.template(calc, params=("myplus", "mymul"))
    kw = min(timeit.repeat(lambda: tb.bind(myplus=1.0, mymul=2.5), number=n, repeat=5)) / n
    pos = min(timeit.repeat(lambda: tb.bind(1.0, 2.5), number=n, repeat=5)) / n
    rows_m = np.random.default_rng(0).random((10_000, 2))
    many = min(timeit.repeat(lambda: tb.bind_many(rows_m), number=3, repeat=3)) / 3 / 10_000
    src = a_source(PLUS[0], MUL[0], 1.25, -2.5)
    tierjit.compile_source(src)
    srcs = [a_source(PLUS[0], MUL[0], 1.25 + k, -2.5) for k in range(2000)]
    cs = min(timeit.repeat(lambda: [tierjit.compile_source(s) for s in srcs], number=1,
                           repeat=5)) / len(srcs)
    ex = min(timeit.repeat(lambda: [exec(s, {}) for s in srcs], number=1,  # noqa: S102
                           repeat=3)) / len(srcs)
    trees = [ast.parse(s) for s in srcs[:500]]
    ca = min(timeit.repeat(lambda: [tierjit.compile_ast(tr) for tr in trees], number=1,
                           repeat=5)) / len(trees)
    ea = min(timeit.repeat(lambda: [exec(compile(tr, "<ast>", "exec"), {})  # noqa: S102
                                    for tr in trees], number=1, repeat=3)) / len(trees)
    print(f"  bind by keyword {kw * 1e6:.2f} us, positional {pos * 1e6:.2f} us, bind_many "
          f"{many * 1e6:.2f} us per variant")
    print(f"  new variant of a known structure: compile_source {cs * 1e6:.1f} us vs CPython "
          f"exec of the source {ex * 1e6:.1f} us; compile_ast {ca * 1e6:.1f} us vs "
          f"compile+exec of the tree {ea * 1e6:.1f} us")


def warm_up() -> None:
    from tierjit.variants import vm
    for dtype in ("float64", "float32"):
        t = time.perf_counter()
        vm.native(dtype)
        print(f"one-time: native evaluator for {dtype} compiled in "
              f"{time.perf_counter() - t:.3f} s (LLVM engine start-up included the first time)")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats")
    ap.add_argument("--no-numba", action="store_true", help="skip the Numba column")
    ap.add_argument("--sections", default="a,b,c,d", help="comma-separated subset of a,b,c,d")
    args = ap.parse_args(argv)
    sections = set(args.sections.split(","))
    print(f"tierjit variants benchmark — {os.cpu_count()} cores, numpy {np.__version__}")
    warm_up()
    if "a" in sections:
        section_a(args.quick, not args.no_numba)
    if "b" in sections:
        section_b(args.quick)
    if "c" in sections:
        section_c(args.quick)
    if "d" in sections:
        section_d(args.quick)


if __name__ == "__main__":
    main()
