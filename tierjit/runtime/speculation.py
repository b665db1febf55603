"""Speculation on values, and feedback from failed speculation, for a Dispatcher.

Value specialisation (passes.values): the shim samples cold calls' arguments into a profile
(`observe`, runtime.shim.ColdDispatcher); arguments that were the same int, bool or float in
every sample, and the dimensions of arrays that had the same shape, are compiled in as
constants in a version of their own (`_build_values`), behind an exact entry guard. A call
with other values makes `_choose` build the generic version (the recompile event), used from
then on; native callers always call the generic code.

Deoptimisation feedback: a speculative guard (loop ranges, hoisted bounds checks) that keeps
failing makes `_respeculate` build a version without that speculation, which `_replace`
puts in the old one's place.

Mixed into runtime.dispatch.Dispatcher.
"""

from .config import config as _config
from .introspect import _fmt_types, _fmt_value
from .shim import VARIES, same_value

TYPE_CHECKING = False
if TYPE_CHECKING:                       # pragma: no cover - typing only
    from typing import Any

    from .dispatch import Specialisation

RESPECULATE_AFTER = 4     # deopts at one speculative guard before a version without it
STABLE_AFTER = 2          # sampled cold calls that must agree before a value is baked in


def _matches(args: tuple, values: "dict[int, Any]") -> bool:
    return all(same_value(args[i], v) for i, v in values.items())


class Speculating:
    """Value specialisation and speculation feedback of a Dispatcher."""

    def _build_values(self, vs: "Specialisation") -> None:
        """Build (synchronously) the value-specialised version vs (see passes.values)."""
        from ..passes.values import bake_values
        self.build_version(vs, self.untyped_ir, (self, "values", vs.arg_types,
                                                 tuple(vs.values.items())),
                           lambda fn: bake_values(fn, vs.values))
        if vs.native is not None:
            self._install(vs)

    def _respeculate(self, spec: "Specialisation", index: int) -> None:
        """A speculation keeps failing: build a version without it (the recompile event);
        it replaces spec when ready. Failing guards that are not speculations (an overflow
        past 64 bits, an index out of bounds) are left to give-up."""
        from ..passes.ranges import speculations_at
        from .dispatch import Specialisation, _Build, _describe_frame_state, native_fn
        from .events import record
        fs = spec.native.frame_states[index]
        what = speculations_at(native_fn(spec), fs.block, fs.index) - spec.avoid
        if not what:
            return
        spec.replaced = True
        new = Specialisation(spec.arg_types)
        new.avoid, new.requested = spec.avoid | what, True
        kinds = ", ".join(sorted({w[0] for w in what}))
        record("recompile", self.__qualname__, _fmt_types(spec.arg_types), spec.tier,
               reason=f"{kinds} speculation at {_describe_frame_state(spec, index)} failed "
                      f"{spec.deopts[index]} times")
        from . import compiler
        job = _Build(self, new)
        job.replaces = spec
        if _config.background and not compiler.get_compiler().is_compiler_thread():
            self._submit(job)
        else:
            self._replace(spec, new)

    def _replace(self, old: "Specialisation", new: "Specialisation") -> None:
        """Build `new` (the same types, fewer speculations) and put it in old's place."""
        with self._lock:
            self.specs[old.arg_types] = new
            try:
                self.specialise(new.arg_types)
            finally:
                if new.runs_native:
                    old.gave_up = "replaced by a version without a failing speculation"
                    old.installed = False
                else:                       # no better code: keep the old version
                    self.specs[old.arg_types] = old

    def _stable_values(self, args: tuple) -> "dict[int, Any] | None":
        """Arguments that were the same in every sampled cold call and are again now."""
        prof = self.profile
        if not prof or self.observed < STABLE_AFTER or not _config.specialise_values:
            return None
        values = {i: p for i, p in enumerate(prof) if p is not VARIES and same_value(args[i], p)}
        return values or None

    def _choose(self, spec: "Specialisation", args: tuple) -> "Specialisation | None":
        """What to build for a call of spec's types with `args`: a value-specialised version
        when the profile says some arguments are constant (and this call agrees), else the
        generic one; None when the value version already covers this call. Marks it
        requested. A call the value version does not cover is a failed speculation: from
        then on the generic version is built and used (the recompile event)."""
        from .dispatch import Specialisation
        vs = spec.value_spec
        if vs is None and self.tier == "auto":
            values = self._stable_values(args)
            if values is not None:
                vs = spec.value_spec = Specialisation(spec.arg_types)
                vs.values, vs.requested = values, True
                return vs
        elif vs is not None:
            if vs.reason is None and vs.gave_up is None and _matches(args, vs.values):
                return None
            from .events import record
            miss = [i for i, v in vs.values.items() if not same_value(args[i], v)]
            if miss:
                i = miss[0]
                name = self.py_func.__code__.co_varnames[i]
                now = args[i]
                if type(vs.values[i]) is tuple:      # an array of the version's type
                    now = now.shape
                why = f"argument {name} is {_fmt_value(now)}, compiled for " \
                      f"{_fmt_value(vs.values[i])}"
            else:
                why = f"the value version is not used: {vs.gave_up or vs.reason}"
            record("recompile", self.__qualname__, _fmt_types(spec.arg_types), "opt",
                   reason=why)
        spec.requested = True
        return spec
