"""Ops on unions of flavours of one representation, such as float | numpy.float64
(mixed into FunctionCodegen).

The op is generated for every combination of members; when the native code is the same for
all of them (tried first as Python's rules, then with NumPy's stricter float checks for all),
it is emitted once, and the result's member is computed from the operands' members.
"""

from __future__ import annotations

import itertools

from ...errors import Unsupported
from ...ir.nodes import Instr
from ...types.lattice import Scalar, Type, UnionT
from .lltypes import ll, union_members

# what generating an op may change, and a dry run must put back
_EMISSION_STATE = ("lines", "tmp", "labels", "cur_label", "deopt_sites", "pending",
                   "nan_terms", "pending_fs", "undo", "undo_blocks")


def _no_callee(*_):
    raise Unsupported("call in a union operation")


class UnionOps:
    """Mixed into FunctionCodegen."""

    def union_op(self, ins: Instr, a: list[str], ts: list[Type],
                 rt: Type | None) -> tuple[bool, str | None]:
        """An op on flavours of one representation (float | numpy.float64): generate the op
        for every combination of members, and when the native code is the same for all of
        them, emit it once and compute the result's member from the operands' members.
        Returns (done, result)."""
        combos = list(itertools.product(*(union_members(t) if isinstance(t, UnionT) else [t]
                                          for t in ts)))
        if len(combos) > 16:
            return False, None
        payloads, tags = [], []
        for x, t in zip(a, ts):
            if isinstance(t, UnionT):
                payloads.append(self.emit(f"extractvalue {ll(t)} {x}, 0"))
                tags.append(self.emit(f"extractvalue {ll(t)} {x}, 1"))
            else:
                payloads.append(x)
                tags.append(None)
        for strict in (False, True):
            self.strict_floats = strict
            try:
                done, r, results = self._union_try(ins, payloads, combos)
            finally:
                self.strict_floats = False
            if done:
                break
        else:
            return False, None
        self.strict_floats = strict
        r = self.lower_one(ins, payloads, list(combos[0]), results[0])
        self.strict_floats = False
        if not isinstance(rt, UnionT):
            return True, r
        rms = union_members(rt)
        tag = "0"
        for combo, crt in zip(combos, results):
            match = "true"
            for tg, t, m in zip(tags, ts, combo):
                if tg is not None:
                    eq = self.emit(f"icmp eq i8 {tg}, {union_members(t).index(m)}")
                    match = self.emit(f"and i1 {match}, {eq}")
            tag = self.emit(f"select i1 {match}, i8 {rms.index(crt)}, i8 {tag}")
        s = self.emit(f"insertvalue {ll(rt)} undef, {ll(results[0])} {r}, 0")
        return True, self.emit(f"insertvalue {ll(rt)} {s}, i8 {tag}, 1")

    def _union_try(self, ins: Instr, payloads: list[str], combos: list) -> tuple:
        """Dry-run the op for every member combination; (same code for all?, _, types)."""
        from ...types.rules import result_type
        texts, results = set(), []
        saved = {name: getattr(self, name) for name in _EMISSION_STATE}
        try:
            for combo in combos:
                crt = result_type(ins.op, list(combo), ins.attr, _no_callee)
                if crt is not None and not isinstance(crt, Scalar):
                    return False, None, None
                self.lines, self.tmp, self.labels = [], itertools.count(), itertools.count()
                self.deopt_sites = {k: list(v) for k, v in saved["deopt_sites"].items()}
                self.pending, self.nan_terms, self.pending_fs = None, {}, None
                self.undo, self.undo_blocks = list(saved["undo"]), list(saved["undo_blocks"])
                r = self.lower_one(ins, payloads, list(combo), crt)
                if r is None:
                    return False, None, None
                # (with the deferred finiteness checks, which are not in `lines` yet: NumPy
                # warns where a Python float is silently inf; deopt.defer_non_finite)
                texts.add(("\n".join(self.lines), r, crt and ll(crt),
                           tuple(self.nan_terms.items()), self.pending, self.pending_fs))
                results.append(crt)
        except Unsupported:
            return False, None, None
        finally:
            for name, value in saved.items():
                setattr(self, name, value)
        return len(texts) == 1, None, results
