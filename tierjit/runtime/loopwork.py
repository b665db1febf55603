"""Loop work: how many iterations a call's `for` loop nests will run, read from the bytecode.

The watch rule (runtime.watch) predicts a cold call long when an argument is large
(`config.watch_size`): an int that large is likely a loop bound, an array with that many
elements is likely looped over. Nested loops multiply, which that rule cannot see:
`mul_av(u, out)` over 800 elements runs 640,000 iterations of its inner loop although no
argument comes near 65,536. So a function with two or more `for` loops has its bytecode read
once (runtime.shim.ColdDispatcher.long_nest says when) into a *model*: for each `for` loop,
the trip counts of it and of the loops around it, as terms over the arguments (`range(n)` with
`n = u.shape[0]` is the term "u.shape[0]"). A call's estimate is the largest product of known
trip counts; the call is predicted long when it reaches watch_size.

What is read: a `for` loop over `range(...)` or over an argument (or `enumerate` of those),
whose bounds are ints, arguments (`n`, `len(u)`, `u.shape[k]`, `u.size`), `+ - * //` of
those, and locals assigned once from such terms. Anything else is an unknown term, counted as
one iteration, so an unread nest is predicted no longer than the plain rule predicts it: the
inner loop of a sieve, `range(i * i, n, i)`, steps by a loop variable and counts 1. A `range`
that starts from an unknown term (`range(i + 1, n)`, a triangle) counts half its stop. `while`
loops are not read.

The estimate only chooses which tier runs a call, never what the call computes, so a wrong
estimate costs time, not correctness. Reading is a linear pass over the instructions with a
symbolic stack; an instruction it does not model empties the stack (whatever was on it becomes
unknown), so control flow inside an expression can only lose terms. CPython 3.11's bytecode
is decoded here directly (`dis` takes ~8 ms to import and ~7 µs per instruction); later
versions go through `dis`.
"""

import sys

from .shim import _is_ndarray

TYPE_CHECKING = False
if TYPE_CHECKING:                       # pragma: no cover - typing only
    from collections.abc import Iterator
    from typing import Any

# Terms: ("a", i) argument i; ("c", v) an int constant; ("len", i), ("size", i), ("dim", i, k)
# of argument i; (op, x, y) for op in + - * //; ("range", start, stop, step) a loop's trip.
_BINOPS = {"+": int.__add__, "-": int.__sub__, "*": int.__mul__}
_NULL = ("null",)        # the NULL a call's callable is paired with (not a term)
_OPS_311 = ("+", "&", "//", "<<", "@", "*", "%", "|", "**", ">>", "-", "/", "^")


class Model:
    """The trip-count products of a function's `for` loops (see the module docstring)."""

    __slots__ = ("products",)

    def __init__(self, products: "list[tuple]") -> None:
        self.products = products

    def estimate(self, args: tuple) -> int:
        """The most iterations any loop's body runs in a call given `args`, as far as known."""
        best = 0
        for product in self.products:
            n = 1
            for term in product:
                v = _value(term, args)
                if v is not None and v > 0:
                    n *= v
            if n > best:
                best = n
        return best


def model(code: "Any") -> "Model | None":
    """The code object's loop model, or None when no loop nest multiplies known trip counts
    (the plain argument-size rule already covers a single loop over `range(n)`)."""
    products: list[tuple] = []
    env: dict[str, tuple] = {}
    names = code.co_varnames
    nargs = code.co_argcount
    instrs = list(_instructions(code))
    stores: dict[str, int] = {}
    for _, op, arg in instrs:
        if op == "STORE_FAST" or op == "DELETE_FAST":
            for name in (arg if type(arg) is tuple else (arg,)):
                stores[name] = stores.get(name, 0) + 1
    for i in range(nargs):
        if names[i] not in stores:
            env[names[i]] = ("a", i)
    stack: list = []
    loops: list[tuple[int, tuple]] = []     # (end offset, trips of it and the loops around)
    for offset, op, arg in instrs:
        while loops and offset >= loops[-1][0]:
            loops.pop()
        if op == "LOAD_FAST":
            for name in (arg if type(arg) is tuple else (arg,)):
                stack.append(env.get(name))
        elif op == "LOAD_CONST":
            stack.append(("c", arg) if type(arg) is int else None)
        elif op == "LOAD_GLOBAL":           # arg: (name, pushes NULL)
            if arg[1]:
                stack.append(_NULL)
            stack.append(("g", arg[0]))
        elif op == "PUSH_NULL":
            stack.append(_NULL)
        elif op == "LOAD_ATTR":
            obj = _pop(stack)
            stack.append((arg, obj[1]) if arg in ("shape", "size") and obj and obj[0] == "a"
                         else None)
        elif op == "BINARY_SUBSCR":
            k, obj = _pop(stack), _pop(stack)
            stack.append(("dim", obj[1], k[1]) if obj and obj[0] == "shape" and k
                         and k[0] == "c" else None)
        elif op == "BINARY_OP":
            y, x = _pop(stack), _pop(stack)
            sym = arg.removesuffix("=")                       # `n += 1` as `n + 1`
            stack.append((sym, x, y) if x and y and sym in ("+", "-", "*", "//") else None)
        elif op == "CALL":
            callargs = [_pop(stack) for _ in range(arg)][::-1]
            a, b = _pop(stack), _pop(stack)
            fn = b if a is _NULL else a if b is _NULL else None
            stack.append(_call(fn, callargs))
        elif op == "GET_ITER":
            it = _pop(stack)
            if it and it[0] == "a":
                it = ("len", it[1])
            if it and it[0] == "range" and (it[2] is None or it[3] is None):
                it = None                   # no stop, or a step that is not read: unknown
            stack.append(("iter", it if it and it[0] in ("range", "len") else None))
        elif op == "FOR_ITER":              # arg: the offset the loop exits to
            it = stack[-1] if stack else None
            trip = it[1] if it and it[0] == "iter" else None
            outer = loops[-1][1] if loops else ()
            trips = outer + (trip,) if trip else outer
            loops.append((arg, trips))
            if trip:
                products.append(trips)
            stack.append(None)              # the item
        elif op == "STORE_FAST":
            if type(arg) is tuple:
                stack.clear()
            else:
                v = _pop(stack)
                if stores[arg] == 1 and v is not _NULL:
                    env[arg] = v
        elif op == "POP_TOP":
            _pop(stack)
        elif op != "NOP":
            stack.clear()
    if any(len(p) > 1 or p[0][0] != "len" and not _plain_range(p[0]) for p in products):
        return Model(products)
    return None


def _pop(stack: list) -> "Any":
    return stack.pop() if stack else None


def _plain_range(term: tuple) -> bool:
    """range(n), range(1, len(u)), range(u.shape[1]) ... of an argument, from and by
    constants: at most what the argument-size rule sees already (a dimension is at most the
    array's size)."""
    if term[0] != "range" or not (term[1] and term[1][0] == "c" and term[3]
                                  and term[3][0] == "c"):
        return False
    stop = term[2]
    return stop is not None and stop[0] in ("a", "len", "size", "dim")


def _call(fn: "tuple | None", args: list) -> "tuple | None":
    if fn is None or fn[0] != "g":
        return None
    if fn[1] == "len" and len(args) == 1 and args[0] and args[0][0] == "a":
        return ("len", args[0][1])
    if fn[1] == "enumerate" and args:
        return args[0]                  # as many items as its iterable
    if fn[1] == "range" and 1 <= len(args) <= 3:
        if len(args) == 1:
            return ("range", ("c", 0), args[0], ("c", 1))
        return ("range", args[0], args[1], args[2] if len(args) == 3 else ("c", 1))
    return None


def _value(term: "tuple | None", args: tuple) -> "int | None":
    """A term's value for these arguments, or None where it is unknown."""
    if term is None:
        return None
    kind = term[0]
    if kind == "c":
        return term[1]
    if kind in ("a", "len", "size", "dim"):
        if term[1] >= len(args):
            return None
        a = args[term[1]]
        t = type(a)
        if kind == "a":
            return a if t is int else None
        if t is list or t is tuple:
            return len(a) if kind == "len" else None
        shape = getattr(a, "shape", None) if _is_ndarray(t) else None
        if shape is None:
            return None
        if kind == "size":
            return a.size
        k = 0 if kind == "len" else term[2]
        return shape[k] if -len(shape) <= k < len(shape) else None
    if kind == "range":
        stop, step = _value(term[2], args), _value(term[3], args)
        if stop is None or not step:
            return None
        start = _value(term[1], args)
        if start is None:                   # from a loop variable: a triangle
            return max(stop // (2 * abs(step)), 0)
        try:
            return len(range(start, stop, step))
        except OverflowError:
            return sys.maxsize
    if kind in _BINOPS or kind == "//":
        x, y = _value(term[1], args), _value(term[2], args)
        if x is None or y is None:
            return None
        if kind == "//":
            return x // y if y else None
        return _BINOPS[kind](x, y)
    return None                             # a global, an iterator: not read


# -- instructions: (offset, name, argument) --------------------------------------------------
# The argument: a local's or attribute's name (a tuple of two for 3.13's paired loads and
# stores), LOAD_GLOBAL's (name, pushes NULL), a constant, a call's argument count, BINARY_OP's
# operator, FOR_ITER's exit offset. Names outside those the model reads are passed as they are.

def _instructions(code: "Any") -> "Iterator[tuple[int, str, Any]]":
    if sys.version_info[:2] == (3, 11):
        return _instructions_311(code)
    return _instructions_dis(code)


# CPython 3.11's opcodes the model reads (tests check them against opcode.opmap)
OPCODES_311 = {1: "POP_TOP", 2: "PUSH_NULL", 9: "NOP", 25: "BINARY_SUBSCR", 68: "GET_ITER",
               93: "FOR_ITER", 100: "LOAD_CONST", 106: "LOAD_ATTR", 116: "LOAD_GLOBAL",
               122: "BINARY_OP", 124: "LOAD_FAST", 125: "STORE_FAST", 126: "DELETE_FAST",
               151: "RESUME", 166: "PRECALL", 171: "CALL"}
_CACHE, _EXTENDED_ARG = 0, 144


def _instructions_311(code: "Any") -> "Iterator[tuple[int, str, Any]]":
    raw = code.co_code
    ext = 0
    for offset in range(0, len(raw), 2):
        op = raw[offset]
        if op == _CACHE:
            continue
        arg = raw[offset + 1] | ext
        if op == _EXTENDED_ARG:
            ext = arg << 8
            continue
        ext = 0
        name = OPCODES_311.get(op, "OTHER")
        if name in ("LOAD_FAST", "STORE_FAST", "DELETE_FAST"):
            arg = code._varname_from_oparg(arg)
        elif name == "LOAD_CONST":
            arg = code.co_consts[arg]
        elif name == "LOAD_GLOBAL":
            arg = (code.co_names[arg >> 1], arg & 1)
        elif name == "LOAD_ATTR":
            arg = code.co_names[arg]
        elif name == "BINARY_OP":
            arg = _OPS_311[arg] if arg < 13 else _OPS_311[arg - 13] + "="
        elif name == "FOR_ITER":
            arg = offset + 2 + 2 * arg
        elif name == "PRECALL" or name == "RESUME":
            name = "NOP"
        yield offset, name, arg


def _instructions_dis(code: "Any") -> "Iterator[tuple[int, str, Any]]":
    import dis
    for ins in dis.get_instructions(code):
        name, arg = ins.opname, ins.argval
        if name in ("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_BORROW", "LOAD_FAST_LOAD_FAST",
                    "LOAD_FAST_BORROW_LOAD_FAST_BORROW"):
            name = "LOAD_FAST"
        elif name in ("STORE_FAST", "STORE_FAST_STORE_FAST"):
            name = "STORE_FAST"
        elif name == "STORE_FAST_LOAD_FAST":
            name, arg = "STORE_FAST", tuple(arg)     # counted as a store, then unknown
        elif name == "LOAD_SMALL_INT":
            name = "LOAD_CONST"
        elif name == "LOAD_GLOBAL":
            arg = (arg, ins.argrepr.startswith("NULL"))
        elif name == "LOAD_ATTR" and "+" in ins.argrepr:   # a method load pushes two
            name = "OTHER"
        elif name == "BINARY_OP":
            arg = ins.argrepr
            if arg == "[]":                              # 3.14's subscript
                name = "BINARY_SUBSCR"
        elif name in ("PRECALL", "RESUME", "CACHE", "NOT_TAKEN"):
            name = "NOP"
        yield ins.offset, name, arg
