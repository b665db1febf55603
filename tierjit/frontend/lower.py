"""Python AST → untyped SSA IR.

One `Lowering` per function. Statements and expressions are lowered in source order into
blocks built with `ir.builder.Builder`; variables become SSA values through `SSABuilder`.
`for` loops become counted loops: over `range(...)` through RANGE_LEN / RANGE_ITEM, over
arrays and tuples through LEN / GETITEM, over `enumerate(...)` and `zip(...)` of those
through their arguments' items, so every loop state is a plain SSA value — which is what
frame states, OSR and native code all want.

A construct outside the subset raises `Unsupported` naming it and its line; the function
then runs as plain CPython.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass

from ..errors import Unsupported
from ..ir.builder import Builder
from ..ir.nodes import Block, Function, Value
from ..ir.ops import INPLACE, Op
from .rebound import attribute_rebinding, rebinding_line
from .resolve import Resolved, resolve_attr, resolve_name
from .source import function_ast
from .ssa import SSABuilder, remove_trivial_params, remove_unreachable

TYPE_CHECKING = False
if TYPE_CHECKING:                       # pragma: no cover - typing only
    from collections.abc import Callable

_BINOPS = {
    ast.Add: Op.ADD, ast.Sub: Op.SUB, ast.Mult: Op.MUL, ast.Div: Op.TRUEDIV,
    ast.FloorDiv: Op.FLOORDIV, ast.Mod: Op.MOD, ast.Pow: Op.POW, ast.LShift: Op.LSHIFT,
    ast.RShift: Op.RSHIFT, ast.BitAnd: Op.BITAND, ast.BitOr: Op.BITOR, ast.BitXor: Op.BITXOR,
}
_UNOPS = {ast.USub: Op.NEG, ast.UAdd: Op.POS, ast.Invert: Op.INVERT, ast.Not: Op.NOT}
_CMPOPS = {
    ast.Lt: Op.LT, ast.LtE: Op.LE, ast.Gt: Op.GT, ast.GtE: Op.GE, ast.Eq: Op.EQ,
    ast.NotEq: Op.NE, ast.Is: Op.IS, ast.IsNot: Op.IS_NOT,
}
_CALLABLE = ("only @jit functions, math, numpy constructors, ufuncs and reductions, numeric "
             "builtins and some array methods can be called")
# Array methods that may be called: those that neither change an array's shape, data or
# flags (native code keeps them) nor make a view of it (native code knows which arrays may
# share memory): NumPy makes the result, from native code too
ARRAY_METHODS = frozenset({
    "sum", "prod", "min", "max", "mean", "std", "var", "argmin", "argmax", "any", "all",
    "cumsum", "cumprod", "copy", "flatten", "trace", "item", "fill", "dot", "clip", "round",
})
ARRAY_ATTRS = frozenset({"shape", "size", "ndim", "real", "imag"})


@dataclass(slots=True, eq=False, repr=False)
class _Loop:
    """The innermost enclosing loop: where `break` and `continue` jump to."""

    cont: Block        # where `continue` goes
    brk: Block         # where `break` goes


def lower(pyfunc, tree: ast.FunctionDef | None = None) -> Function:
    """Lower the Python function `pyfunc` (or its given AST) to untyped IR."""
    shallow = _depth() < sys.getrecursionlimit() // 2
    try:
        tree = tree if tree is not None else function_ast(pyfunc)
        return Lowering(pyfunc, tree).run()
    except RecursionError:
        # Lowering recurses over the expression tree: a long flat one (`x + 1 + 1 ...`,
        # hundreds of terms) is deeper than the recursion limit allows. Not when the
        # program's own stack is deep: then it is lowered again later.
        if not shallow:
            raise
        raise Unsupported("an expression nested too deeply to lower",
                          pyfunc.__code__.co_firstlineno) from None


def _depth() -> int:
    """Python frames on this thread's stack."""
    n, f = 0, sys._getframe(1)
    while f is not None:
        n, f = n + 1, f.f_back
    return n


class Lowering:
    def __init__(self, pyfunc, tree: ast.FunctionDef):
        self.pyfunc, self.tree = pyfunc, tree
        a = tree.args
        if isinstance(tree, ast.AsyncFunctionDef):
            raise Unsupported("async function", tree.lineno)
        if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs:
            raise Unsupported("*args, **kwargs or keyword-only parameters", tree.lineno)
        if tree.decorator_list and len(tree.decorator_list) > 1:
            raise Unsupported("more than one decorator", tree.lineno)
        names = [x.arg for x in a.args]
        self.fn = Function(tree.name, names, first_line=tree.lineno,
                           filename=pyfunc.__code__.co_filename,
                           module_globals=getattr(pyfunc, "__globals__", None))
        self.b = Builder(self.fn)
        self.ssa = SSABuilder(self.fn)
        self.locals = _assigned_names(tree) | set(names)
        self.loops: list[_Loop] = []

    # -- driver -------------------------------------------------------------------------
    def run(self) -> Function:
        entry = self.b.new_block(tuple(self.fn.arg_names))
        self.ssa.sealed.add(entry)
        self.b.at(entry)
        for name, p in zip(self.fn.arg_names, entry.params):
            self.ssa.write(entry, name, p)
        self.body(self.tree.body)
        if self.live:
            self.b.line = self.tree.body[-1].end_lineno or self.tree.lineno
            self.b.ret(self.b.const(None))
        remove_unreachable(self.fn)
        remove_trivial_params(self.fn)
        return self.fn

    @property
    def live(self) -> bool:
        """Is the builder's position reachable (not after a return/break/raise)?"""
        return self.b.block is not None and not self.b.terminated

    def new_block(self) -> Block:
        return self.b.new_block()

    def goto(self, target: Block) -> None:
        if self.live:
            src = self.b.block
            self.b.jump(target)
            self.ssa.add_edge(src, src.terminator.targets[0])

    def branch(self, cond: Value, then: Block, other: Block) -> None:
        src = self.b.block
        self.b.branch(cond, then, [], other, [])
        for e in src.terminator.targets:
            self.ssa.add_edge(src, e)

    def enter(self, block: Block, seal: bool = True) -> None:
        """Continue building in `block`; dead (None) when nothing jumps to it."""
        if seal:
            self.ssa.seal(block, self.b.line)
            if not self.ssa.preds.get(block):
                self.b.block = None
                return
        self.b.at(block)

    # -- statements ---------------------------------------------------------------------
    def body(self, stmts: list[ast.stmt]) -> None:
        for s in stmts:
            if not self.live:
                return                  # unreachable code after return/break/continue/raise
            self.b.line = s.lineno
            self.stmt(s)

    def stmt(self, s: ast.stmt) -> None:
        m = getattr(self, "stmt_" + type(s).__name__, None)
        if m is None:
            raise Unsupported(f"statement '{type(s).__name__}'", s.lineno)
        m(s)

    def stmt_Pass(self, s: ast.Pass) -> None:
        pass

    def stmt_Expr(self, s: ast.Expr) -> None:
        if isinstance(s.value, ast.Constant) and isinstance(s.value.value, str):
            return                      # docstring or bare string
        self.expr(s.value)

    def stmt_Return(self, s: ast.Return) -> None:
        v = self.expr(s.value) if s.value is not None else self.b.const(None)
        self.b.ret(v)

    def stmt_Assign(self, s: ast.Assign) -> None:
        v = self.expr(s.value)
        for t in s.targets:
            self.assign(t, v, s.value)

    def stmt_AnnAssign(self, s: ast.AnnAssign) -> None:
        if s.value is None:
            return
        self.assign(s.target, self.expr(s.value), s.value)

    def stmt_AugAssign(self, s: ast.AugAssign) -> None:
        op = _BINOPS.get(type(s.op))
        if op is None:
            raise Unsupported(f"operator '{type(s.op).__name__}'", s.lineno)
        t = s.target
        if isinstance(t, ast.Name):
            # "inplace": Python's `x += v` (an array is changed in place, and stays the
            # object the name and everything else refer to)
            cur = self.read_name(t.id, t.lineno)
            self.write_name(t.id, self.b.emit(op, [cur, self.expr(s.value)], INPLACE,
                                              name=t.id))
        elif isinstance(t, ast.Subscript):
            arr, idx = self.expr(t.value), self.indices(t.slice)
            cur = self.b.emit(Op.GETITEM, [arr, *idx])
            # in place too: `x[i] += v` is x[i] = x[i].__iadd__(v) (a list item, an array's row)
            new = self.b.emit(op, [cur, self.expr(s.value)], INPLACE)
            self.b.emit(Op.SETITEM, [arr, *idx, new])
        else:
            raise Unsupported("augmented assignment to this target", s.lineno)

    def assign(self, target: ast.expr, v: Value, source: ast.expr | None) -> None:
        if isinstance(target, ast.Name):
            if v.name == "":
                v.name = target.id
            self.write_name(target.id, v)
        elif isinstance(target, ast.Tuple):
            n = len(target.elts)
            for i, t in enumerate(target.elts):
                if isinstance(t, ast.Starred):
                    raise Unsupported("starred assignment", target.lineno)
                self.assign(t, self.b.emit(Op.TUPLE_GET, [v], (i, n)), None)
        elif isinstance(target, ast.Subscript):
            arr, idx = self.expr(target.value), self.indices(target.slice)
            self.b.emit(Op.SETITEM, [arr, *idx, v])
        else:
            raise Unsupported(f"assignment to '{type(target).__name__}'", target.lineno)

    def condition(self, test: ast.expr, yes: Block, no: Block) -> None:
        """Branch to yes or no on `test` as CPython's jumps do: `and`, `or`, `not` and chained
        comparisons by control flow, the truth of each operand asked for once (as a value,
        `a and b` is a or b: its truth would be a's asked again)."""
        if isinstance(test, ast.BoolOp):
            for operand in test.values[:-1]:
                nxt = self.new_block()
                if isinstance(test.op, ast.And):
                    self.condition(operand, nxt, no)
                else:
                    self.condition(operand, yes, nxt)
                self.enter(nxt)
            self.condition(test.values[-1], yes, no)
        elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            self.condition(test.operand, no, yes)
        elif isinstance(test, ast.Compare) and len(test.ops) > 1 and \
                all(type(op) in _CMPOPS for op in test.ops):
            left = self.expr(test.left)
            for i, (op, right) in enumerate(zip(test.ops, test.comparators)):
                r = self.expr(right)
                res = self.truth(self.b.emit(_CMPOPS[type(op)], [left, r]))
                if i == len(test.ops) - 1:
                    self.branch(res, yes, no)
                else:
                    nxt = self.new_block()
                    self.branch(res, nxt, no)
                    self.enter(nxt)
                left = r
        else:
            self.branch(self.truth(self.expr(test)), yes, no)

    def stmt_If(self, s: ast.If) -> None:
        then, other, join = self.new_block(), self.new_block(), self.new_block()
        self.condition(s.test, then, other)
        self.enter(then)
        self.body(s.body)
        self.goto(join)
        self.enter(other)
        self.body(s.orelse)
        self.goto(join)
        self.enter(join)

    def stmt_While(self, s: ast.While) -> None:
        header, body, orelse, exit_ = (self.new_block() for _ in range(4))
        self.goto(header)
        self.enter(header, seal=False)
        self.condition(s.test, body, orelse)
        self.loop_body(s, header, body, orelse, exit_)

    def loop_body(self, s, header: Block, body: Block, orelse: Block, exit_: Block,
                  latch: Block | None = None) -> None:
        """Shared tail of while/for: body, continue target, loop-else, exit."""
        cont = latch if latch is not None else header
        self.enter(body)
        self.loops.append(_Loop(cont, exit_))
        self.body(s.body)
        self.loops.pop()
        self.goto(cont)
        if latch is not None:
            self.enter(latch)
            if self.live:
                k = self.read_name(self._counter, s.lineno)
                self.write_name(self._counter, self.b.emit(Op.ADD, [k, self.b.const(1)]))
                self.goto(header)
        self.ssa.seal(header, s.lineno)
        self.enter(orelse)
        self.body(s.orelse)
        self.goto(exit_)
        self.enter(exit_)

    def stmt_For(self, s: ast.For) -> None:
        if s.type_comment is not None or not isinstance(s.target, (ast.Name, ast.Tuple)):
            raise Unsupported("for-loop target other than a name or tuple of names", s.lineno)
        count, item = self._iteration(s.iter)
        n = count()
        counter = f".k{s.lineno}.{s.col_offset}"
        self.locals.add(counter)
        self.write_name(counter, self.b.const(0))
        header, body, latch, orelse, exit_ = (self.new_block() for _ in range(5))
        self.goto(header)
        self.enter(header, seal=False)
        k = self.read_name(counter, s.lineno)
        self.branch(self.b.emit(Op.LT, [k, n]), body, orelse)
        # the element is computed at the top of the body, then the user's statements run
        self.enter(body)
        self._assign_item(s.target, item(self.read_name(counter, s.lineno)))
        prev, self._counter = getattr(self, "_counter", None), counter
        self.loop_body(s, header, body, orelse, exit_, latch=latch)
        self._counter = prev

    def _iteration(self, it: ast.expr) -> tuple[Callable[[], Value],
                                                 Callable[[Value], Value | list]]:
        """What a for loop over `it` runs through, `it` evaluated: (a function emitting how
        many items, which is where CPython makes the iterator; a function emitting item k,
        0 <= k < that many). range(...) computes its items (made with the range, as its
        bounds are read); enumerate(x[, start]) and zip(x, y, ...) are not made: their items
        are their arguments' items at the same k, as a list of parts (a tuple only where the
        target does not unpack it), the iterators made as CPython makes them (enumerate's of
        x when it is made; zip's of its arguments, in order, once all are evaluated);
        anything else is indexed. zip stops at its shortest argument, whose items are all
        that is read: an array's and a tuple's items have no side effects, so reading them
        in zip's order is all that is left of CPython's (untyped tier 0 iterates anything
        else: backends/pyemit/iteration.py)."""
        name = self._iterable_call(it)
        if name == "range":
            start, stop, step = self._range_args(it)
            n = self.b.emit(Op.RANGE_LEN, [start, stop, step])
            return (lambda: n), lambda k: self.b.emit(Op.RANGE_ITEM, [start, stop, step, k])
        if name == "enumerate":
            args, kw = list(it.args), {k.arg: k.value for k in it.keywords}
            if set(kw) - {"start"} or len(args) + len(kw) not in (1, 2) or \
                    len(args) == 2 and kw or not args:
                raise Unsupported("enumerate() other than enumerate(x) or enumerate(x, start)",
                                  it.lineno)
            count, part = self._iteration(args[0])
            first = _int_literal(args[1] if len(args) == 2 else kw.get("start"))
            if first is None:
                raise Unsupported("enumerate() with a start that is not an int literal",
                                  it.lineno)
            n = count()
            start = self.b.const(first)
            return (lambda: n), lambda k: [self.b.emit(Op.ADD, [start, k]), part(k)]
        if name == "zip":
            if it.keywords or not it.args or any(isinstance(a, ast.Starred) for a in it.args):
                raise Unsupported("zip() with keywords, *args or no argument", it.lineno)
            counts, parts = zip(*(self._iteration(a) for a in it.args))
            ns = [count() for count in counts]
            n = ns[0] if len(ns) == 1 else self.b.emit(Op.CALL_BUILTIN, ns, "min")
            return (lambda: n), lambda k: [part(k) for part in parts]
        seq = self.expr(it)

        def element(k: Value) -> Value:
            x = self.b.emit(Op.GETITEM, [seq, k])
            # k < len(seq), of the object the loop started with: in bounds (an array's
            # length does not change), not negative
            self.b.block.instrs[-1].inbounds = frozenset({0})
            return x
        return (lambda: self.b.emit(Op.LEN, [seq])), element

    def _assign_item(self, target: ast.expr, item: Value | list) -> None:
        """Assign a for loop's item, a list of parts unpacked into a tuple of as many targets
        without making the tuple."""
        if isinstance(item, list):
            if isinstance(target, ast.Tuple) and len(target.elts) == len(item) and \
                    not any(isinstance(t, ast.Starred) for t in target.elts):
                for t, part in zip(target.elts, item):
                    self._assign_item(t, part)
                return
            item = self.b.emit(Op.MAKE_TUPLE, [self._tuple_of(x) for x in item])
        self.assign(target, item, None)

    def _tuple_of(self, item: Value | list) -> Value:
        if isinstance(item, list):
            return self.b.emit(Op.MAKE_TUPLE, [self._tuple_of(x) for x in item])
        return item

    @staticmethod
    def _float_of(text: str, line: int) -> float:
        """float('inf'), float('nan') ...: a constant. (A string float() rejects raises
        ValueError when CPython runs the call, as the function then does.)"""
        try:
            return float(text)
        except ValueError:
            raise Unsupported(f"float({text!r}), which raises ValueError", line) from None

    def _iterable_call(self, it: ast.expr) -> str | None:
        """"range", "enumerate" or "zip" when `it` calls that builtin, else None."""
        if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name)) or \
                it.func.id in self.locals:
            return None
        r = resolve_name(self.pyfunc, it.func.id, self.fn.free)
        return r.name if r is not None and r.kind == "iterable" else None

    def _range_args(self, it: ast.Call) -> tuple[Value, Value, Value]:
        if it.keywords or not 1 <= len(it.args) <= 3:
            raise Unsupported("range() with keywords or more than three arguments", it.lineno)
        args = [self.expr(a) for a in it.args]
        if len(args) == 1:
            return self.b.const(0), args[0], self.b.const(1)
        if len(args) == 2:
            return args[0], args[1], self.b.const(1)
        return tuple(args)

    def stmt_Break(self, s: ast.Break) -> None:
        self.goto(self.loops[-1].brk)

    def stmt_Continue(self, s: ast.Continue) -> None:
        self.goto(self.loops[-1].cont)

    def stmt_Assert(self, s: ast.Assert) -> None:
        if sys.flags.optimize:
            return
        msg = () if s.msg is None else (self.const_value(s.msg, "assert message"),)
        ok, fail = self.new_block(), self.new_block()
        self.condition(s.test, ok, fail)
        self.enter(fail)
        self.b.raise_(AssertionError, msg)
        self.enter(ok)

    def stmt_Raise(self, s: ast.Raise) -> None:
        if s.cause is not None or s.exc is None:
            raise Unsupported("bare raise or raise ... from", s.lineno)
        exc, args = s.exc, ()
        if isinstance(exc, ast.Call):
            if exc.keywords:
                raise Unsupported("exception with keyword arguments", s.lineno)
            args = tuple(self.const_value(a, "exception argument") for a in exc.args)
            exc = exc.func
        r = self.resolve(exc)
        if r is None or r.kind != "exception":
            raise Unsupported("raise of something other than an exception class",
                              s.lineno)
        self.b.raise_(r.obj, args)

    def const_value(self, node: ast.expr, what: str):
        if isinstance(node, ast.Constant):
            return node.value
        raise Unsupported(f"{what} that is not a constant", node.lineno)

    # -- names --------------------------------------------------------------------------
    def read_name(self, name: str, line: int) -> Value:
        return self.ssa.read(self.b.block, name, line)

    def write_name(self, name: str, v: Value) -> None:
        self.ssa.write(self.b.block, name, v)

    def resolve(self, node: ast.expr) -> Resolved | None:
        """Resolve a global name or a module attribute chain at compile time."""
        if isinstance(node, ast.Name) and node.id not in self.locals:
            return resolve_name(self.pyfunc, node.id, self.fn.free)
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            if base is None:
                return None
            written = f"{node.value.id}.{node.attr}" if isinstance(node.value, ast.Name) \
                else f"{getattr(base.obj, '__name__', '?')}.{node.attr}"
            return resolve_attr(base, node.attr, self.fn.attrs, written)
        return None

    # -- expressions --------------------------------------------------------------------
    def expr(self, e: ast.expr) -> Value:
        m = getattr(self, "expr_" + type(e).__name__, None)
        if m is None:
            raise Unsupported(f"expression '{type(e).__name__}'", e.lineno)
        return m(e)

    def truth(self, v: Value) -> Value:
        return self.b.emit(Op.TRUTH, [v])

    def expr_Constant(self, e: ast.Constant) -> Value:
        if not isinstance(e.value, (int, float, complex, bool, type(None))):
            raise Unsupported(f"constant of type {type(e.value).__name__}", e.lineno)
        return self.b.const(e.value)

    def expr_Name(self, e: ast.Name) -> Value:
        if e.id in self.locals:
            return self.read_name(e.id, e.lineno)
        r = resolve_name(self.pyfunc, e.id, self.fn.free)
        if r is None:
            raise Unsupported(f"name '{e.id}' is not defined", e.lineno)
        if r.kind == "const":
            line = rebinding_line(self.pyfunc, e.id)
            if line is not None:
                what = "closure variable" if e.id in self.pyfunc.__code__.co_freevars \
                    else "global"
                raise Unsupported(f"{what} '{e.id}', which line {line} binds again and again "
                                  "(native code would be compiled anew at call after call)",
                                  e.lineno)
            return self.b.const(r.obj)
        raise Unsupported(f"use of '{e.id}' ({type(r.obj).__name__}) as a value", e.lineno)

    def expr_Attribute(self, e: ast.Attribute) -> Value:
        r = self.resolve(e)
        if r is not None:
            if r.kind == "const":
                base = self.resolve(e.value)
                dotted = ast.unparse(e)
                where = attribute_rebinding(self.pyfunc, base.obj, dotted, e.attr)
                if where is not None:
                    raise Unsupported(f"'{dotted}', which {where} binds again and again "
                                      "(native code would be compiled anew at call after "
                                      "call)", e.lineno)
                return self.b.const(r.obj)
            raise Unsupported(f"use of '{ast.unparse(e)}' as a value", e.lineno)
        if e.attr not in ARRAY_ATTRS:
            raise Unsupported(f"attribute '.{e.attr}'", e.lineno)
        return self.b.emit(Op.GETATTR, [self.expr(e.value)], e.attr)

    def expr_BinOp(self, e: ast.BinOp) -> Value:
        op = _BINOPS.get(type(e.op))
        if op is None:
            raise Unsupported(f"operator '{type(e.op).__name__}'", e.lineno)
        return self.b.emit(op, [self.expr(e.left), self.expr(e.right)])

    def expr_UnaryOp(self, e: ast.UnaryOp) -> Value:
        return self.b.emit(_UNOPS[type(e.op)], [self.expr(e.operand)])

    def expr_Compare(self, e: ast.Compare) -> Value:
        for op in e.ops:
            if type(op) not in _CMPOPS:
                raise Unsupported(f"comparison '{type(op).__name__}'", e.lineno)
        left = self.expr(e.left)
        if len(e.ops) == 1:
            return self.b.emit(_CMPOPS[type(e.ops[0])], [left, self.expr(e.comparators[0])])
        # a < b < c: b is evaluated once; the first false comparison is the result
        join = self.new_block()
        var = f".cmp{e.lineno}.{e.col_offset}"
        self.locals.add(var)
        for i, (op, right) in enumerate(zip(e.ops, e.comparators)):
            r = self.expr(right)
            res = self.b.emit(_CMPOPS[type(op)], [left, r])
            self.write_name(var, res)
            if i == len(e.ops) - 1:
                self.goto(join)
            else:
                nxt = self.new_block()
                self.branch(self.truth(res), nxt, join)
                self.enter(nxt)
            left = r
        self.enter(join)
        return self.read_name(var, e.lineno)

    def expr_BoolOp(self, e: ast.BoolOp) -> Value:
        # `a and b` is a if not a else b; `a or b` is a if a else b
        join = self.new_block()
        var = f".bool{e.lineno}.{e.col_offset}"
        self.locals.add(var)
        for i, operand in enumerate(e.values):
            v = self.expr(operand)
            self.write_name(var, v)
            if i == len(e.values) - 1:
                self.goto(join)
            else:
                nxt = self.new_block()
                if isinstance(e.op, ast.And):
                    self.branch(self.truth(v), nxt, join)
                else:
                    self.branch(self.truth(v), join, nxt)
                self.enter(nxt)
        self.enter(join)
        return self.read_name(var, e.lineno)

    def expr_IfExp(self, e: ast.IfExp) -> Value:
        var = f".ifexp{e.lineno}.{e.col_offset}"
        self.locals.add(var)
        then, other, join = self.new_block(), self.new_block(), self.new_block()
        self.condition(e.test, then, other)
        for blk, node in ((then, e.body), (other, e.orelse)):
            self.enter(blk)
            self.write_name(var, self.expr(node))
            self.goto(join)
        self.enter(join)
        return self.read_name(var, e.lineno)

    def expr_Tuple(self, e: ast.Tuple) -> Value:
        if any(isinstance(x, ast.Starred) for x in e.elts):
            raise Unsupported("starred expression in a tuple", e.lineno)
        return self.b.emit(Op.MAKE_TUPLE, [self.expr(x) for x in e.elts])

    def indices(self, node: ast.expr) -> list[Value]:
        if isinstance(node, ast.Slice) or (
                isinstance(node, ast.Tuple) and any(isinstance(x, ast.Slice) for x in node.elts)):
            raise Unsupported("slicing", node.lineno)
        if isinstance(node, ast.Tuple):
            return [self.expr(x) for x in node.elts]
        return [self.expr(node)]

    def expr_Subscript(self, e: ast.Subscript) -> Value:
        base = self.expr(e.value)
        idx = self.indices(e.slice)
        if len(idx) == 1 and isinstance(e.slice, ast.Constant) and \
                isinstance(e.slice.value, int) and not isinstance(e.slice.value, bool):
            return self.b.emit(Op.GETITEM, [base, idx[0]], e.slice.value)
        return self.b.emit(Op.GETITEM, [base, *idx])

    def method_call(self, e: ast.Call) -> Value:
        """`a.sum()`, `a.max()`, `out.fill(0.0)` ... (ARRAY_METHODS), positionally: the
        receiver, then the arguments, as CPython evaluates them (a method of anything else
        than an array is a type error of inference: CPython runs the function)."""
        if e.keywords or any(isinstance(a, ast.Starred) for a in e.args):
            raise Unsupported(f"call of '{ast.unparse(e.func)}' with keyword or * arguments",
                              e.lineno)
        obj = self.expr(e.func.value)
        return self.b.emit(Op.CALL_METHOD, [obj, *(self.expr(a) for a in e.args)], e.func.attr)

    def expr_Call(self, e: ast.Call) -> Value:
        r = self.resolve(e.func)
        if r is None and isinstance(e.func, ast.Attribute) and e.func.attr in ARRAY_METHODS \
                and self.resolve(e.func.value) is None:
            return self.method_call(e)
        if r is None:
            raise Unsupported(f"call of '{ast.unparse(e.func)}'", e.lineno, _CALLABLE)
        if any(isinstance(a, ast.Starred) for a in e.args):
            raise Unsupported("call with *args", e.lineno)
        kw = {k.arg: k.value for k in e.keywords}
        if r.kind == "numpy":
            dtype = None
            if "dtype" in kw:
                d = self.resolve(kw.pop("dtype"))
                if d is None or d.kind != "dtype":
                    raise Unsupported("dtype= that is not a NumPy scalar type", e.lineno)
                dtype = d.obj
            if kw:
                raise Unsupported(f"keyword arguments {sorted(kw)} to np.{r.name}", e.lineno)
            args = [self.expr(a) for a in e.args]
            return self.b.emit(Op.CALL_NUMPY, args, (r.name, dtype))
        if kw:
            raise Unsupported(f"call of '{r.name}' with keyword arguments", e.lineno)
        if r.kind == "dtype" and r.what is r.obj.type and len(e.args) <= 1 and \
                getattr(sys.modules["numpy"], r.what.__name__, None) is r.what:
            # np.float64(x), np.int32(x) ...: NumPy's conversion, as a ufunc is called
            r = Resolved("ufunc", r.what, r.what.__name__)
        elif r.kind == "ufunc" and len(e.args) != r.obj.nin:
            raise Unsupported(f"np.{r.name}() with {len(e.args)} arguments", e.lineno)
        if r.kind == "builtin" and r.name == "float" and len(e.args) == 1 and \
                isinstance(e.args[0], ast.Constant) and type(e.args[0].value) is str:
            return self.b.const(self._float_of(e.args[0].value, e.lineno))
        args = [self.expr(a) for a in e.args]
        if r.kind == "jit":
            return self.b.emit(Op.CALL_JIT, args, r.obj)
        if r.kind == "builtin":
            return self.b.emit(Op.CALL_BUILTIN, args, r.name)
        if r.kind == "math":
            return self.b.emit(Op.CALL_MATH, args, r.name)
        if r.kind in ("ufunc", "npfunc"):
            return self.b.emit(Op.CALL_UFUNC, args, r.name)
        raise Unsupported(f"call of '{ast.unparse(e.func)}'", e.lineno, _CALLABLE)


def _int_literal(node: ast.expr | None) -> int | None:
    """The int an int literal (or its negation) spells, 0 for no node; None otherwise."""
    if node is None:
        return 0
    neg = isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)
    if neg:
        node = node.operand
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return -node.value if neg else node.value
    return None


def _assigned_names(tree: ast.FunctionDef) -> set[str]:
    """Names Python treats as local: assigned anywhere in the body (not nested scopes)."""
    out: set[str] = set()

    def visit(node):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                                  ast.ClassDef)):
                raise Unsupported(f"nested {type(child).__name__}", child.lineno)
            if isinstance(child, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
                raise Unsupported(f"comprehension '{type(child).__name__}'", child.lineno)
            if isinstance(child, (ast.Global, ast.Nonlocal)):
                raise Unsupported(f"'{type(child).__name__.lower()}' statement", child.lineno)
            if isinstance(child, ast.Name) and isinstance(child.ctx, (ast.Store, ast.Del)):
                out.add(child.id)
            visit(child)

    visit(tree)
    return out
