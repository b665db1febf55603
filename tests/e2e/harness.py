"""Differential harness: run a program under CPython and under every tier, compare exactly.

A *program* is the source text of a small Python module that uses the free name ``jit`` as its
decorator. The harness executes that source once per tier into a fresh namespace in which ``jit``
is bound to ``tierjit.jit(tier=T)`` (or to the identity for the CPython reference), so a jitted
function's jitted callees are of the same tier. Every call gets its own layout-preserving copy of
the arguments, and the outcome -- return value or exception, plus the arguments as the call left
them -- must match CPython's exactly (see ``assert_same``).

Analogue: the "oracle" half of Csmith-style differential testing, with CPython as the oracle.
"""

from __future__ import annotations

import ctypes
import hashlib
import linecache
import math
import struct
import textwrap
import traceback
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

# The tiers every differential test runs, besides the CPython reference. A new tier (such as
# "baseline" for copy-and-patch) is a one-line addition here.
TIERS: tuple[str, ...] = ("interp", "baseline", "opt")

CPYTHON = "cpython"  # the reference "tier": the identity decorator
DEFAULT = "default"  # plain ``@tierjit.jit``: tier "auto", moving up as the program gets hot


@dataclass(frozen=True)
class Call:
    """An argument case with keyword arguments: the call ``f(*args, **kwargs)``."""

    args: tuple = ()
    kwargs: dict = field(default_factory=dict)


ArgCase = tuple | Call | Callable[[], tuple | Call]  # arguments, or a factory of fresh ones


@dataclass(frozen=True)
class Program:
    """One corpus entry: module source, the entry function's name and argument cases to try."""

    name: str
    source: str
    cases: tuple[ArgCase, ...]
    entry: str = "f"


def program(name: str, source: str, cases: Iterable[ArgCase], entry: str = "f") -> Program:
    """Build a Program, dedenting the source and checking every case is an argument tuple, a
    Call or a factory of either."""
    cases = tuple(cases)
    for case in cases:
        assert isinstance(case, tuple | Call) or callable(case), f"{name}: bad case {case!r}"
    assert cases, f"{name}: no cases"
    return Program(name, textwrap.dedent(source).strip() + "\n", cases, entry)


# ---------------------------------------------------------------------------------------------
# Building a program per tier


def _decorator(tier: str) -> Callable[[Callable], Callable]:
    if tier == CPYTHON:
        return lambda fn: fn
    import tierjit  # imported lazily: a broken compiler fails tests, not collection

    if tier == DEFAULT:
        return lambda fn: tierjit.jit(fn)
    return lambda fn: tierjit.jit(tier=tier)(fn)


def _register_source(name: str, source: str) -> str:
    """Give the source a filename linecache knows, so inspect.getsource works on its functions."""
    digest = hashlib.sha1(source.encode()).hexdigest()[:12]
    filename = f"<tierjit-e2e {name} {digest}>"
    # mtime None: linecache.checkcache never evicts the entry.
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    return filename


def build(source: str, tier: str, name: str = "program",
          base: dict[str, Any] | None = None) -> dict[str, Any]:
    """Execute the program's source into a fresh namespace with ``jit`` bound for ``tier``
    (a copy of ``base`` if given, e.g. the globals of the module a function came from)."""
    filename = _register_source(name, source)
    namespace: dict[str, Any] = dict(base or {})
    namespace.update(__name__=f"e2e_{tier}", jit=_decorator(tier))
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - running programs is the point
    return namespace


# ---------------------------------------------------------------------------------------------
# Copying arguments without losing their memory layout


def _root(a: np.ndarray) -> np.ndarray:
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _extent(a: np.ndarray) -> tuple[int, int]:
    """Byte range [lo, hi) that ``a`` touches, relative to its data pointer."""
    lo = sum(min(0, s * (n - 1)) for n, s in zip(a.shape, a.strides))
    hi = sum(max(0, s * (n - 1)) for n, s in zip(a.shape, a.strides)) + a.itemsize
    return lo, hi


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


class _Cloner:
    """Deep copy that keeps every array's dtype, shape, strides, offset and aliasing.

    ``copy.deepcopy(a[::2])`` returns a contiguous array, which would silently stop testing
    strided access. Here every array is rebuilt over a fresh copy of the memory of its root
    array, with the same strides and offset; arrays that shared a root still share one.
    """

    def __init__(self) -> None:
        self.buffers: dict[int, tuple[np.ndarray, int]] = {}  # id(root) -> (bytes, lo address)
        self.roots: list[np.ndarray] = []  # the copied roots, in first-seen order

    def clone(self, obj: Any) -> Any:
        if isinstance(obj, np.ndarray):
            return self._array(obj)
        if isinstance(obj, tuple):
            return tuple(self.clone(x) for x in obj)
        if isinstance(obj, list):
            return [self.clone(x) for x in obj]
        if isinstance(obj, dict):
            return {k: self.clone(v) for k, v in obj.items()}
        return obj  # numbers, numpy scalars, None: immutable

    def _array(self, a: np.ndarray) -> np.ndarray:
        if a.size == 0:
            return a.copy(order="K")
        root = _root(a)
        if id(root) not in self.buffers:
            lo, hi = _extent(root)
            buf = np.zeros(hi - lo, dtype=np.uint8)
            ctypes.memmove(_address(buf), _address(root) + lo, hi - lo)
            self.buffers[id(root)] = (buf, _address(root) + lo)
            self.roots.append(self._view(root, buf, _address(root) + lo))
        buf, base_address = self.buffers[id(root)]
        return self._view(a, buf, base_address)

    @staticmethod
    def _view(a: np.ndarray, buf: np.ndarray, base_address: int) -> np.ndarray:
        copy = np.ndarray(a.shape, a.dtype, buffer=buf, offset=_address(a) - base_address,
                          strides=a.strides)
        copy.flags.writeable = a.flags.writeable
        return copy


def clone_args(case: ArgCase) -> tuple[tuple, dict, list[np.ndarray]]:
    """Fresh positional and keyword arguments for one call, and the root arrays behind them
    (to compare afterwards)."""
    case = case() if callable(case) else case
    args, kwargs = (case.args, case.kwargs) if isinstance(case, Call) else (case, {})
    cloner = _Cloner()
    return cloner.clone(args), cloner.clone(kwargs), cloner.roots


# ---------------------------------------------------------------------------------------------
# Running a call and recording what it did


@dataclass
class Outcome:
    """What one call did: its result or exception, and the state of its arguments afterwards."""

    tier: str
    value: Any = None
    exc: BaseException | None = None
    tb: str = ""
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    roots: list[np.ndarray] = field(default_factory=list)
    result_is_arg: int | None = None  # index of the argument the result *is*, if any

    def describe(self) -> str:
        if self.exc is not None:
            return f"raised {type(self.exc).__name__}: {self.exc}"
        return f"returned {self.value!r} ({type(self.value).__name__})"


def call(fn: Callable, case: ArgCase, tier: str) -> Outcome:
    """Call ``fn`` on a fresh copy of the case's arguments and record the outcome."""
    args, kwargs, roots = clone_args(case)
    out = Outcome(tier, args=args, kwargs=kwargs, roots=roots)
    with warnings.catch_warnings():
        # NumPy scalar arithmetic warns (overflow, divide by zero); warnings are not part of the
        # contract, and a filter turning them into errors would change the outcome.
        warnings.simplefilter("ignore")
        try:
            out.value = fn(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - every exception is part of the outcome
            out.exc = exc
            out.tb = traceback.format_exc()
    if out.exc is None:
        out.result_is_arg = next((i for i, a in enumerate(args) if a is out.value
                                  and isinstance(a, np.ndarray)), None)
    return out


def compare_outcomes(expected: Outcome, got: Outcome, context: str = "") -> None:
    """Assert that ``got`` (a tier) did exactly what ``expected`` (CPython) did."""
    __tracebackhide__ = True
    head = f"{context}\n[{got.tier}] differs from CPython:\n  CPython {expected.describe()}\n" \
           f"  {got.tier} {got.describe()}\n"
    if expected.exc is not None or got.exc is not None:
        if expected.exc is None or got.exc is None:
            raise AssertionError(head + _tb(got) + _tb(expected))
        try:
            assert_same(expected.exc, got.exc, "exception")
        except AssertionError as err:
            raise AssertionError(head + str(err) + "\n" + _tb(got)) from None
    else:
        try:
            assert_same(expected.value, got.value, "result")
            if got.result_is_arg != expected.result_is_arg:
                raise AssertionError(f"result: CPython returned {_which(expected.result_is_arg)},"
                                     f" {got.tier} returned {_which(got.result_is_arg)}")
        except AssertionError as err:
            raise AssertionError(head + str(err)) from None
    try:
        assert_same(expected.args, got.args, "arguments after the call")
        assert_same(expected.kwargs, got.kwargs, "keyword arguments after the call")
        assert_same(expected.roots, got.roots, "memory behind the array arguments")
    except AssertionError as err:
        raise AssertionError(head + str(err) + "\n" + _tb(got)) from None


def _which(index: int | None) -> str:
    return "a new object" if index is None else f"argument {index} itself"


def _tb(out: Outcome) -> str:
    return f"--- {out.tier} traceback ---\n{out.tb}" if out.tb else ""


def run_sequence(source: str, cases: Sequence[ArgCase], tiers: Iterable[str] = TIERS,
                 entry: str = "f", name: str = "program", repeat: int = 1,
                 base: dict[str, Any] | None = None) -> None:
    """Build the program once per tier and call it on every case in order (``repeat`` times).

    Later calls see whatever the earlier ones left behind -- profiles, speculation, deopt
    counts -- which is how guards get exercised with argument types they were not built for.
    """
    __tracebackhide__ = True
    ref = build(source, CPYTHON, name, base)[entry]
    expected = [call(ref, case, CPYTHON) for _ in range(repeat) for case in cases]
    for tier in tiers:
        fn = build(source, tier, name, base)[entry]
        for i, case in enumerate(c for _ in range(repeat) for c in cases):
            got = call(fn, case, tier)
            compare_outcomes(expected[i], got, _context(name, source, case, i))


def run_all_tiers(program_or_source: Program | str | Callable, cases: Sequence[ArgCase] = (),
                  tiers: Iterable[str] = TIERS, entry: str = "f") -> None:
    """Check every case on every tier against CPython, with a fresh build per case and tier.

    Accepts a Program, a module source using ``@jit``, or a plain function: its source is taken
    with inspect (it must be defined at module level; callees are looked up in a copy of its
    module's globals and are *not* rebuilt per tier).
    """
    __tracebackhide__ = True
    base = None
    if isinstance(program_or_source, Program):
        prog = program_or_source
        cases = cases or prog.cases
        source, entry, name = prog.source, prog.entry, prog.name
    elif isinstance(program_or_source, str):
        source, name = textwrap.dedent(program_or_source), "source"
    else:
        source, entry, name = _function_source(program_or_source)
        base = program_or_source.__globals__
    for case in cases:
        run_sequence(source, [case], tiers, entry, name, base=base)


def _function_source(fn: Callable) -> tuple[str, str, str]:
    import inspect

    src = textwrap.dedent(inspect.getsource(fn))
    lines = [ln for ln in src.splitlines() if not ln.lstrip().startswith("@")]
    return "\n".join(["@jit", *lines]) + "\n", fn.__name__, fn.__name__


def _context(name: str, source: str, case: ArgCase, index: int) -> str:
    args = case() if callable(case) else case
    return f"program {name}, call #{index}, arguments {_short(args)}\n--- source ---\n{source}"


def _short(x: Any, limit: int = 400) -> str:
    r = repr(x)
    return r if len(r) <= limit else r[:limit] + "..."


# ---------------------------------------------------------------------------------------------
# Exact comparison


def _float_bits(x: float) -> str:
    return struct.pack("<d", x).hex()


def _same_float(a: float, b: float) -> bool:
    """Bit-identical, except that any NaN matches any NaN (sign and payload are not portable)."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return struct.pack("<d", a) == struct.pack("<d", b)


def _same_np_float(a: np.floating, b: np.floating) -> bool:
    if np.isnan(a) or np.isnan(b):
        return bool(np.isnan(a) and np.isnan(b))
    return a.tobytes() == b.tobytes()


def _fail(path: str, expected: Any, got: Any, why: str) -> None:
    raise AssertionError(f"at {path}: {why}\n    expected {_short(expected)} "
                         f"({type(expected).__module__}.{type(expected).__qualname__})\n"
                         f"    got      {_short(got)} "
                         f"({type(got).__module__}.{type(got).__qualname__})")


def assert_same(expected: Any, got: Any, path: str = "value") -> None:
    """Assert ``got`` is exactly ``expected``: same type, same bits, same exception and message.

    Types must be identical (bool is not int, numpy.float64 is not float). Floats compare bit
    for bit (so -0.0 != 0.0), NaN matching NaN; complex numbers part by part. Tuples and lists
    compare element-wise; arrays by type, dtype, shape and values (NaN equal to NaN, zeros by
    sign). Exceptions compare by exact type and ``str``.
    """
    if type(expected) is not type(got):
        _fail(path, expected, got, "type differs")
    if isinstance(expected, BaseException):
        if str(expected) != str(got):
            _fail(path, expected, got, f"message differs: {str(expected)!r} != {str(got)!r}")
    elif isinstance(expected, float):
        if not _same_float(expected, got):
            _fail(path, expected, got,
                  f"float bits differ: {_float_bits(expected)} != {_float_bits(got)}")
    elif isinstance(expected, complex):
        for part in ("real", "imag"):
            if not _same_float(getattr(expected, part), getattr(got, part)):
                _fail(f"{path}.{part}", expected, got, "complex part differs")
    elif isinstance(expected, (np.floating, np.complexfloating)):
        for part in ("real", "imag"):
            if not _same_np_float(getattr(expected, part), getattr(got, part)):
                _fail(f"{path}.{part}", expected, got,
                      f"bits differ: {getattr(expected, part).tobytes().hex()} != "
                      f"{getattr(got, part).tobytes().hex()}")
    elif isinstance(expected, (tuple, list)):
        if len(expected) != len(got):
            _fail(path, expected, got, f"length {len(expected)} != {len(got)}")
        for i, (e, g) in enumerate(zip(expected, got)):
            assert_same(e, g, f"{path}[{i}]")
    elif isinstance(expected, dict):
        if list(expected) != list(got):
            _fail(path, expected, got, "keys differ")
        for k in expected:
            assert_same(expected[k], got[k], f"{path}[{k!r}]")
    elif isinstance(expected, np.ndarray):
        _assert_same_array(expected, got, path)
    elif expected is None:
        pass
    elif expected != got:  # int, bool, numpy integer and bool scalars, str, ...
        _fail(path, expected, got, "value differs")


def _assert_same_array(expected: np.ndarray, got: np.ndarray, path: str) -> None:
    if expected.dtype != got.dtype:
        _fail(path, expected, got, f"dtype {expected.dtype} != {got.dtype}")
    if expected.shape != got.shape:
        _fail(path, expected, got, f"shape {expected.shape} != {got.shape}")
    if expected.dtype.kind in "fc":
        same = np.ones(expected.shape, dtype=bool)
        for part in (np.real, np.imag) if expected.dtype.kind == "c" else (np.asarray,):
            e, g = part(expected), part(got)
            both_nan = np.isnan(e) & np.isnan(g)
            same &= both_nan | ((e == g) & (np.signbit(e) == np.signbit(g)))
    else:
        same = np.asarray(expected == got)
    if not same.all():
        bad = np.argwhere(~same)
        first = tuple(int(i) for i in bad[0])
        _fail(path, expected, got, f"{len(bad)} element(s) differ, first at index {first}: "
                                   f"{expected[first]!r} != {got[first]!r}")
