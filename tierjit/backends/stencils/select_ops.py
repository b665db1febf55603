"""Stencil selection for single instructions (mixed into select.Selection): arithmetic,
comparisons, conversions, array elements, math functions, builtins, calls of jitted
functions, and the call into Python for everything else."""

from __future__ import annotations

from ...errors import Unsupported
from ...ir.nodes import Block, Instr, Value
from ...ir.ops import Op
from ...passes.ranges import arith, within_i64
from ...types.lattice import BOOL, FLOAT, INT, ArrayT, TupleT, Type
from ..nesting import NATIVE_STACK
from . import frame as fr
from .emit import Label
from .kinds import (_ARITH_V, _CMP, _CMP_V, _FLOAT_OPS, _FLOATK, _INTK, _NUMK, _is_float,
                    _is_int, kind, width)
from .templates import LIBM_1, SELF_CALL_WORDS

# Op's members bound once (see ir/ops.py: `Op.X` is slow on Python 3.11)
_CALL_BUILTIN, _CALL_JIT, _CALL_MATH, _CONST = Op.CALL_BUILTIN, Op.CALL_JIT, Op.CALL_MATH, Op.CONST
_CALL_UFUNC = Op.CALL_UFUNC
_GETATTR, _GETITEM, _GUARD_INBOUNDS = Op.GETATTR, Op.GETITEM, Op.GUARD_INBOUNDS
_GUARD_RANGE, _INVERT, _LEN, _MAKE_TUPLE = Op.GUARD_RANGE, Op.INVERT, Op.LEN, Op.MAKE_TUPLE
_NEG, _NOT, _POS, _RANGE_ITEM, _RANGE_LEN = Op.NEG, Op.NOT, Op.POS, Op.RANGE_ITEM, Op.RANGE_LEN
_SETITEM, _TRUTH, _TUPLE_GET = Op.SETITEM, Op.TRUTH, Op.TUPLE_GET


# (op value, each operand's type, the result's type) -> (stencil, guarded, the
# stencil without its overflow guard or None, whether it is a float + or - that may begin a
# fused pair: fuse.mul_add): the binary ops whose stencil and holes
# (A, B -> C) follow from their types alone (and their operands' ranges), remembered the
# first time instr() selects one, so that the next is selected without it
SIMPLE: dict[tuple[str, Type, Type, Type], tuple[str, bool, str | None, bool]] = {}
_MIXED = frozenset({"add", "sub", "mul", "truediv"})    # float ops with _if/_fi stencils
# int ops whose overflow guard value ranges can make unnecessary: the stencil without it
_UNCHECKED = {"add_ii": "add_iu", "sub_ii": "sub_iu", "mul_ii": "mul_iu"}
_PAIR_KINDS = frozenset({"float", "npf64"})     # float + - that may begin a fused pair


def _is_f64(t) -> bool:
    return fr.is_np_float(t) and t.py.__name__ == "float64"


class OpSelection:
    """The per-instruction half of Selection (select.py has the driver and the slots)."""

    def instr(self, b: Block, i: int, ins: Instr) -> None:
        op = ins.op
        r = ins.result
        args = ins.args
        ts = [a.type for a in args]
        o = self.offset
        if op is _CONST:
            return
        if op is _GUARD_INBOUNDS:
            # checked here, once before the loop: the accesses it covers check nothing
            arr, x, n = args
            h = self.add("guard_inbounds", A=o[x], B=o[arr] + 16 + 8 * ins.attr, D=o[n])
            self.deopt(h, b, i)
            return
        v = op._value_
        base = _ARITH_V.get(v)
        if base is not None and len(args) == 2:
            x, y = args
            kr = kind(r.type)
            name = self.arith(base, kind(x.type), kind(y.type), kr)
            if name in ("floordiv_ii", "mod_ii"):
                k = self.pow2.get(y)
                if k is not None:              # by a constant 2**k: a shift or a mask
                    if name == "floordiv_ii":
                        self.add("floordiv_pow2", A=o[x], C=o[r], K=k)
                    else:
                        self.add("mod_pow2", A=o[x], C=o[r], K=(1 << k) - 1)
                    return
            if name is not None:
                converts = name[-1] in "pn" and name[-3:-1] == "ff" and (
                    _is_int(x.type) or _is_int(y.type))
                if converts and _is_int(x.type) != _is_int(y.type) and base in _MIXED:
                    # one int operand: converted inside the stencil
                    name = f"{base}_{'if' if _is_int(x.type) else 'fi'}{name[-1]}"
                    converts = False
                if converts:
                    a, c = self.as_double(x, b, i), self.as_double(y, b, i)
                else:
                    a, c = o[x], o[y]
                times = base == "truediv" and self.recip.get(y)
                if times and "mul" + name[7:] in self.stencils:
                    # by a power of two: times its reciprocal (Selection.recip); its own
                    # stencil, not the one SIMPLE remembers for these types
                    h = self.add("mul" + name[7:], A=a, B=times, C=o[r])
                    self.deopt(h, b, i)
                    if kr == "union":
                        self.add("tag_or", TA=self.tag(x), TB=self.tag(y), TC=o[r] + 8)
                    return
                unchecked = _UNCHECKED.get(name)
                if unchecked and x.range and y.range \
                        and within_i64(arith(op, x.range, y.range)):
                    self.add(unchecked, A=a, B=c, C=o[r])
                    SIMPLE[v, x.type, y.type, r.type] = (name, True, unchecked, False)
                    return
                h = self.add(name, A=a, B=c, C=o[r])
                self.deopt(h, b, i)
                if kr == "union":
                    self.add("tag_or", TA=self.tag(x), TB=self.tag(y), TC=o[r] + 8)
                elif not converts and name not in ("floordiv_ii", "mod_ii"):
                    SIMPLE[v, x.type, y.type, r.type] = (
                        name, "DEOPT" in self.stencils[name].hole_names, _UNCHECKED.get(name),
                        base in ("add", "sub") and kr in _PAIR_KINDS)
                return
        elif v in _CMP_V:
            x, y = args
            if _is_int(x.type) and _is_int(y.type) and _is_int(r.type):
                self.add(f"{_CMP[op]}_ii", A=o[x], B=o[y], C=o[r])
                return
            if (_is_float(x.type) or _is_int(x.type)) and (_is_float(y.type) or _is_int(y.type)) \
                    and (r.type == BOOL or fr.is_np_int(r.type)):
                a, c = self.exact_double(x, b, i), self.exact_double(y, b, i)
                self.add(f"{_CMP[op]}_ff", A=a, B=c, C=o[r])
                return
        elif op in (_NEG, _POS, _INVERT, _NOT, _TRUTH):
            (x,) = args
            t = x.type
            if op is _POS and t == r.type:
                self.mov(o[x], o[r], width(t))
                return
            if _is_int(t) or fr.is_np_int(t) and op in (_NOT, _TRUTH):
                name = {_NEG: "neg_i", _INVERT: "invert_i", _NOT: "not_i",
                        _TRUTH: "truth_i"}.get(op)
                if name and (op in (_NOT, _TRUTH) or t == INT and r.type == INT):
                    h = self.add(name, A=o[x], C=o[r])
                    self.deopt(h, b, i)
                    return
            if t == FLOAT or fr.is_np_float(t) and op in (_NOT, _TRUTH) \
                    or fr.float_union(t) and op in (_NOT, _TRUTH):
                name = {_NEG: "neg_f", _NOT: "not_f", _TRUTH: "truth_f"}.get(op)
                if name:
                    self.add(name, A=o[x], C=o[r])
                    return
        elif op is _RANGE_LEN:
            if all(t == INT for t in ts):
                h = self.add("range_len", A=o[args[0]], B=o[args[1]], D=o[args[2]], C=o[r])
                self.deopt(h, b, i)
                return
        elif op is _RANGE_ITEM:
            if all(_is_int(t) for t in ts):
                if o[r] == o[args[3]]:
                    return                              # range(n): the counter itself
                if args[2].range == (1, 1):             # range(a, b): start + k
                    self.add("range_item1", A=o[args[0]], B=o[args[3]], C=o[r])
                else:
                    self.add("range_item", A=o[args[0]], D=o[args[2]], B=o[args[3]], C=o[r])
                return
        elif op is _GUARD_RANGE:
            lo, hi = ins.attr
            if _is_int(ts[0]):
                h = self.add("guard_range", A=o[args[0]], C=o[r], K=lo, K2=hi)
                self.deopt(h, b, i)
                return
        elif op is _GETITEM:
            if self.getitem(b, i, ins):
                return
        elif op is _SETITEM:
            if self.setitem(b, i, ins):
                return
        elif op is _LEN and isinstance(ts[0], ArrayT):
            self.add("mov", A=o[args[0]] + 16, C=o[r])
            return
        elif op is _GETATTR and isinstance(ts[0], ArrayT) and ins.attr == "shape":
            self.mov(o[args[0]] + 16, o[r], ts[0].ndim)
            return
        elif op is _MAKE_TUPLE:
            at = o[r]
            for a, it in zip(args, r.type.items):
                if a.type != it:
                    break
                self.mov(o[a], at, width(it))
                at += 8 * width(it)
            else:
                return
        elif op is _TUPLE_GET:
            k = ins.attr[0]
            items = ts[0].items
            if r.type == items[k]:
                at = o[args[0]] + 8 * sum(width(t) for t in items[:k])
                self.mov(at, o[r], width(r.type))
                return
        elif op is _CALL_MATH:
            if self.math(b, i, ins):
                return
        elif op is _CALL_UFUNC:
            if self.ufunc(b, i, ins):
                return
        elif op is _CALL_BUILTIN:
            if self.builtin(b, i, ins):
                return
        elif op is _CALL_JIT:
            if ins in self.inlined:
                self.inline(b, i, ins)
                return
            if self.call_jit(b, i, ins):
                return
        self.pyop(b, i, ins)

    def tag(self, v: Value) -> int:
        if fr.float_union(v.type):
            return self.offset[v] + 8
        return self.one if fr.is_np_float(v.type) else self.zero

    def arith(self, base: str, ka: str, kb: str, kr: str) -> str | None:
        """The stencil of a binary arithmetic op for operand and result kinds, or None."""
        if ka in _INTK and kb in _INTK:
            if kr == "int" or base == "truediv" and kr == "float":
                return f"{base}_ii"
            return None
        if base in _FLOAT_OPS and ka in _NUMK and kb in _NUMK and kr in _FLOATK:
            numpy = "npf64" in (ka, kb, kr) or "union" in (ka, kb, kr)
            if kr == "union" and ka != "union" and kb != "union":
                return None
            return f"{base}_ff{'n' if numpy else 'p'}"
        return None

    def as_double(self, v: Value, b: Block, i: int) -> int:
        """Slot of v as a double: ints converted (exactly as Python's int -> float)."""
        if _is_int(v.type):
            return self.convert(v, "i2f")
        return self.offset[v]

    def exact_double(self, v: Value, b: Block, i: int) -> int:
        """For comparisons Python compares int and float exactly: deopt beyond 2**53."""
        if _is_int(v.type) or fr.is_np_int(v.type):
            at = self.scratch + 8 * self.max_scratch
            self.max_scratch += 1
            h = self.add("i2f_exact", A=self.offset[v], C=at)
            self.deopt(h, b, i)
            return at
        return self.offset[v]

    def convert(self, v: Value, name: str) -> int:
        at = self.scratch + 8 * self.max_scratch
        self.max_scratch += 1
        self.add(name, A=self.offset[v], C=at)
        return at

    def element(self, ins: Instr):
        arr, idx = ins.args[0], ins.args[1:]
        t = arr.type
        if not isinstance(t, ArrayT) or t.dtype not in fr.ELEM_KINDS:
            return None
        if ins.op is _SETITEM:
            idx = idx[:-1]
        if len(idx) != t.ndim or not all(_is_int(x.type) or fr.is_np_int(x.type)
                                         and x.type.py.__name__ != "uint64" for x in idx):
            return None
        holes = {"A": self.offset[arr]}
        for hole, x in zip(("B", "D", "E"), idx):
            holes[hole] = self.offset[x]
        # the checks every index needs: none when a GUARD_INBOUNDS proved them all in
        # bounds, no wrap-around when none can be negative (see templates.INDEX_MODES)
        if len(ins.inbounds) == len(idx):
            mode = "_u"
        elif all(d in ins.inbounds or x.range is not None and x.range[0] >= 0
                 for d, x in enumerate(idx)):
            mode = "_nn"
        else:
            mode = ""
        if t.layout == "C":
            mode += "_C"                # the last index scaled by the item size
        return t, fr.ELEM_KINDS[t.dtype], mode, holes

    def getitem(self, b: Block, i: int, ins: Instr) -> bool:
        if isinstance(ins.args[0].type, TupleT) and isinstance(ins.attr, int):
            items = ins.args[0].type.items
            k = ins.attr if ins.attr >= 0 else ins.attr + len(items)
            if 0 <= k < len(items) and items[k] == ins.result.type:
                at = self.offset[ins.args[0]] + 8 * sum(width(t) for t in items[:k])
                self.mov(at, self.offset[ins.result], width(items[k]))
                return True
            return False
        e = self.element(ins)
        if e is None:
            return False
        t, kind, mode, holes = e
        h = self.add(f"getitem{t.ndim}_{kind}{mode}", C=self.offset[ins.result], **holes)
        self.deopt(h, b, i)
        return True

    def setitem(self, b: Block, i: int, ins: Instr) -> bool:
        e = self.element(ins)
        if e is None:
            return False
        t, kind, mode, holes = e
        v = ins.args[-1]
        vt = v.type
        if kind == "f64" and (vt == FLOAT or fr.float_union(vt) or _is_f64(vt)):
            name = "f64"
        elif kind == "f64" and _is_int(vt):
            name = "f64_from_int"
        elif kind not in ("f64", "f32", "b1") and vt == INT:
            name = kind
        elif kind == "b1" and vt == BOOL:
            name = kind
        else:
            return False
        h = self.add(f"setitem{t.ndim}_{name}{mode}", C=self.offset[v], **holes)
        self.deopt(h, b, i)
        return True

    def math(self, b: Block, i: int, ins: Instr) -> bool:
        name, args, r = ins.attr, ins.args, ins.result
        if not all(_is_float(a.type) and not fr.float_union(a.type) or _is_int(a.type)
                   for a in args):
            if not (len(args) == 1 and fr.float_union(args[0].type)):
                return False
        xs = [self.as_double(a, b, i) for a in args]
        table1 = {"sqrt": "sqrt_f", "fabs": "fabs_f", "floor": "floor_f2i", "ceil": "ceil_f2i",
                  "trunc": "f2i", "isnan": "isnan_f", "isinf": "isinf_f",
                  "isfinite": "isfinite_f", **{n: f"m_{n}" for n in LIBM_1}}
        if len(xs) == 1 and name in table1:
            st = table1[name]
            if st.endswith("f2i") and r.type != INT or st.startswith("is") and r.type != BOOL:
                return False
            if name in ("floor", "ceil", "trunc") and _is_int(args[0].type):
                self.mov(self.offset[args[0]], self.offset[r], 1)
                return True
            h = self.add(st, A=xs[0], C=self.offset[r])
            self.deopt(h, b, i)
            return True
        if len(xs) == 2 and name in ("atan2", "fmod") and r.type == FLOAT:
            h = self.add(f"m_{name}", A=xs[0], B=xs[1], C=self.offset[r])
            self.deopt(h, b, i)
            return True
        return False

    def ufunc(self, b: Block, i: int, ins: Instr) -> bool:
        """np.sqrt, np.absolute, np.fabs, np.negative, np.positive and np.float64 of a float64
        (see backends/llvm/mathfns.py, UFUNC_1): a negative's sqrt deoptimises (NumPy
        warns)."""
        args, r = ins.args, ins.result
        if len(args) != 1 or not _is_f64(r.type) or not (args[0].type == FLOAT or
                                                         _is_f64(args[0].type)):
            return False
        x, c = self.offset[args[0]], self.offset[r]
        if ins.attr in ("positive", "float64"):
            self.mov(x, c, 1)
            return True
        st = {"sqrt": "sqrt_f", "absolute": "fabs_f", "fabs": "fabs_f",
              "negative": "neg_f"}.get(ins.attr)
        if st is None:
            return False
        h = self.add(st, A=x, C=c)
        if st == "sqrt_f":
            self.deopt(h, b, i)
        return True

    def builtin(self, b: Block, i: int, ins: Instr) -> bool:
        name, args, r = ins.attr, ins.args, ins.result
        ts = [a.type for a in args]
        o = self.offset
        if name == "abs" and len(args) == 1:
            if ts[0] == INT and r.type == INT:
                h = self.add("abs_i", A=o[args[0]], C=o[r])
                self.deopt(h, b, i)
                return True
            if ts[0] == r.type and (ts[0] == FLOAT or _is_f64(ts[0])):
                self.add("abs_f", A=o[args[0]], C=o[r])
                return True
        if name in ("min", "max") and len(args) == 2 and ts[0] == ts[1] == r.type:
            if ts[0] == INT:
                self.add(f"{name}_ii", A=o[args[0]], B=o[args[1]], C=o[r])
                return True
            if ts[0] == FLOAT:
                self.add(f"{name}_ff", A=o[args[0]], B=o[args[1]], C=o[r])
                return True
        if name == "float" and len(args) == 1 and r.type == FLOAT:
            if _is_int(ts[0]):
                self.add("i2f", A=o[args[0]], C=o[r])
                return True
            if ts[0] == FLOAT:
                self.mov(o[args[0]], o[r], 1)
                return True
        if name == "int" and len(args) == 1 and r.type == INT:
            if _is_int(ts[0]) or fr.is_np_int(ts[0]):
                self.mov(o[args[0]], o[r], 1)
                return True
            if ts[0] == FLOAT or fr.is_np_float(ts[0]):
                h = self.add("f2i", A=o[args[0]], C=o[r])
                self.deopt(h, b, i)
                return True
        if name == "len" and len(args) == 1 and isinstance(ts[0], ArrayT):
            self.add("mov", A=o[args[0]] + 16, C=o[r])
            return True
        return False

    def inline(self, b: Block, i: int, ins: Instr) -> None:
        """The callee's body in place of CALL_JIT ins (Selection.inlined): its parameters are
        the arguments' slots, and each of its guards deoptimises to the frame state before the
        call, so tier 0 makes the real call (its own exceptions, warnings and traceback)."""
        block = self.inlined[ins].blocks[0]
        for p, a in zip(block.params, ins.args):
            self.offset[p] = self.offset[a]
        for cins in block.instrs[:-1]:
            self.instr(b, i, cins)
        v = block.instrs[-1].args[0]
        self.mov(self.offset[v], self.offset[ins.result], width(ins.result.type))

    def call_jit(self, b: Block, i: int, ins: Instr) -> bool:
        """A call of another jitted function's baseline core through its cell (of this
        code itself: call_self): the arguments are read from one slot after the other (the
        scratch area, unless they are so already), the callee's out area is the result's
        slots (or, for no result, a scratch slot: it also receives the object a callee that
        deoptimised returns). A callee returning arrays returns new references: that call
        goes through Python (pyop), which keeps them for the length of this call."""
        if "o" in fr.slots(ins.result.type):
            return False
        key = tuple(a.type for a in ins.args)
        at = self.scratch
        o = self.offset
        first = o[ins.args[0]] if ins.args else at
        words = 0
        for a in ins.args:
            if o[a] != first + 8 * words:
                break
            words += width(a.type)
        else:
            at = first                      # already one after the other
        if at != first:
            for a in ins.args:
                self.mov(o[a], at, width(a.type))
                at += 8 * width(a.type)
            first, words = self.scratch, (at - self.scratch) // 8
        nres = width(ins.result.type)
        out = o[ins.result] if nres else self.scratch + 8 * words
        self.max_scratch = max(self.max_scratch, words + 1)
        self.calls.append((ins, key))
        if self.me == (ins.attr, key):
            # the callee is this code: its frame made in place, its body called directly
            if max(words, self.nconsts) <= SELF_CALL_WORDS:
                h = self.add(f"call_self_{words}_{self.nconsts}", A=first, C=out)
            else:
                h = self.add("call_self", A=first, C=out, B=words, D=self.nconsts)
            h.update(TA=NATIVE_STACK, JT=Label(2), CORE=Label(1))
            self.self_calls.append((h, self.deopt(h, b, i)))
        else:
            h = self.add("call_jit", A=first, C=out)
            self.call_cells.append((h, ins.attr, key))
            self.deopt(h, b, i)
        # its own stub even when a guard shares the frame state: this one also hands over
        # the callee's result object (numbered from 1 in the stub's high bits)
        n = self.fs.at(b, i + 1)
        self.overrides.append((ins.result, out))
        h["DEOPT2"] = self.stub(n | len(self.overrides) << 32)
        return True

    def pyop(self, b: Block, i: int, ins: Instr) -> None:
        from ..pyops import python_function
        if python_function(ins) is None:
            raise Unsupported(f"the operation {ins.op.value} (line {ins.line}) for "
                              f"{', '.join(str(a.type) for a in ins.args)}")
        for v in ins.args:
            fr.slots(v.type)
        h = self.add("pyop")
        if ins.op is _CALL_JIT or ins.result is not None:
            # Tier 0 must not make the operation again (a jitted callee's effects, a
            # warning): a result native code cannot take is handed to it after the operation
            # (the hook leaves it in a scratch slot, as a callee's core does for call_jit).
            self.max_scratch = max(self.max_scratch, 1)
            self.overrides.append((ins.result, self.scratch))
            n = self.fs.at(b, i + 1) | len(self.overrides) << 32
            h["DEOPT"] = self.stub(n)
        else:
            n = self.deopt(h, b, i)
        self.pyops.append((ins, n, h))
