"""What a Dispatcher tells about itself: `inspect`, `explain`, versions and counters.

Mixed into runtime.dispatch.Dispatcher. `explain` names, line by line, why a function runs
where it runs: the heat rule, watched loops, each specialisation's tier (value-specialised
versions and OSR entries included) and why it is not higher.
"""

from .config import config as _config

TYPE_CHECKING = False
if TYPE_CHECKING:                       # pragma: no cover - typing only
    from typing import Any

    from .dispatch import Specialisation


# runtime.straight, as explain shows it
_STRAIGHT = ("its calls run the function straight from the entry's C slot (no native code to "
             "run them: CPython's speed and recursion depth)")
_SECTIONS = "; those nested 8 deep in its own calls (it has loops)"    # (straight.NESTED)


class Introspection:
    """inspect / explain / versions / counters of a Dispatcher."""

    def latest(self) -> "Specialisation | None":
        return next(reversed(self.specs.values()), None)

    def inspect(self, stage: str = "ir") -> str:
        """Text of one compiler stage for the latest specialisation:
        "ir", "typed", "opt", "py", "llvm" or "asm"."""
        from ..errors import Unsupported
        from ..ir.printer import format_function
        stages = ("ir", "typed", "opt", "py", "llvm", "asm")
        if stage not in stages:
            raise ValueError(f"inspect: stage must be one of {', '.join(stages)}; got {stage!r}")
        if stage == "ir":
            try:
                return format_function(self.untyped_ir())
            except Unsupported as e:
                raise ValueError(f"inspect('ir'): {self.__name__} has no IR: "
                                 f"{e.describe()}") from None
        spec = self.latest()
        if spec is None:
            raise ValueError(f"inspect({stage!r}): {self.__name__} has not been called yet, "
                             "so it has no specialisation")
        if spec.typed is None:
            why = spec.reason if spec.reason is not None else \
                "it has not been compiled yet (still cold, or queued)"
            raise ValueError(f"inspect({stage!r}): no typed IR for {self.__name__}"
                             f"{_fmt_types(spec.arg_types)}: {why}")
        if stage == "typed":
            from ..types.infer import infer
            return format_function(infer(self.untyped_ir(), spec.arg_types).fn)
        if stage == "opt":
            return format_function(spec.typed.fn)
        if stage == "py":
            return spec.tier0.__tierjit_source__
        if spec.native is None:
            raise ValueError(f"inspect({stage!r}): {self.__name__}{_fmt_types(spec.arg_types)}"
                             f" has no native code" + (f": {spec.reason}" if spec.reason else ""))
        return spec.native.llvm_text if stage == "llvm" else spec.native.asm

    def explain(self) -> str:
        from ..errors import Unsupported
        lines = [f"{self.__qualname__} (tier={self.tier}):"]
        if self.rebound_from is not None:
            lines.append(f"  started anew: {self.rebound_from}")
        if self.straight:
            from .entry import is_straight
            sections = self.loops and self.tier == "auto" and self._ir_error is None
            straight = ["  " + _STRAIGHT + _SECTIONS * bool(sections)] \
                if is_straight(self.entry) else []
        else:
            straight = []
        try:
            self.untyped_ir()
        except Unsupported as e:
            lines.append(f"  runs as plain CPython: {e.describe()}")
            return "\n".join(lines + straight)
        if self.tier == "auto":
            lines.append("  " + self._explain_heat())
            watch = self._explain_watch()
            if watch:
                lines.append("  " + watch)
        elif not self.specs:
            lines.append("  compiles on its first call (no specialisation yet)")
        lines += straight
        for spec in list(self.specs.values()):
            if not spec.requested and spec.value_spec is None:
                continue                # typed for a caller only
            if spec.value_spec is not None:
                lines.append(self._explain_spec(spec.value_spec, " (value-specialised: used "
                                                "while the calls pass these values)"))
            if spec.requested:
                lines.append(self._explain_spec(spec))
        for (header, _), spec in list(getattr(self.counting, "entries", {}).items()):
            # until LLVM's code is there, calls move into the entry's baseline code, if any
            tier = "baseline" if not spec.built and \
                (header, spec.arg_types) in self.counting.baseline else spec.tier
            lines.append(self._explain_spec(spec, f" (OSR entry at the loop on line "
                                                  f"{self.counting.points[header].line})", tier))
        if self.cold:                   # built for calls predicted long (runtime.watch)
            for key, code in list(self.__dict__.get("_baseline_codes", {}).items()):
                if code is not None:
                    climb = code.climb           # runtime.tierup: its loops' LLVM entries
                    up = "" if climb is None or not climb.ready else (
                        f"; LLVM's entries at {len(climb.ready)} of its loops, taken by "
                        f"{sum(ex.taken for ex in climb.ready)} calls")
                    lines.append(f"  {self.__name__}{_fmt_types(key)}: baseline (calls "
                                 f"predicted long run it from their start{up})")
        if self.tier == "auto" and not self.cold and \
                len(self.specs) >= _config.max_specialisations:   # (only tier="auto" has one)
            lines.append(f"  further argument types run as CPython: max_specialisations="
                         f"{_config.max_specialisations} reached")
        return "\n".join(lines)

    def _explain_spec(self, spec: "Specialisation", what: str = "",
                      tier: "str | None" = None) -> str:
        if tier is None and self.tier == "auto" and spec.tier == "interp" \
                and not spec.runs_native and self.loops is False:
            tier = "python"     # such calls run the original function (with loops: counting
                                # tier 0, runtime.osr)
        head = (f"  {self.__name__}{_fmt_types(spec.arg_types, spec.values)}: "
                f"{tier or spec.tier}{what}")
        if spec.gave_up is not None:
            head += f" — native code dropped after {spec.gave_up}"
        elif spec.reason is not None:
            head += f" — not in a higher tier because {spec.reason.describe()}"
        elif not spec.built:
            head += " — compiling in the background"
        elif spec.deopt_count:
            head += f" ({spec.deopt_count} deopts)"
        if spec.avoid:
            head += (" — compiled without " + ", ".join(sorted({a[0] for a in spec.avoid}))
                     + " speculation, which failed in an earlier version")
        return head

    def _explain_watch(self) -> str:
        c = self.counting
        if c == "watching" and self.cold:
            if _config.osr_backedges is None or \
                    _config.watch_seconds is None and _config.watch_size is None:
                return ("has loops: not watched (config.osr_backedges, or watch_seconds and "
                        "watch_size, None)")
            rules = []
            if _config.watch_seconds is not None:
                rules.append(f"watched (cold calls in counting tier 0, OSR) once its cold calls "
                             f"have taken {_config.watch_seconds * 1e3:g} ms")
            if _config.watch_size is not None:
                rules.append(f"a call given an int of {_config.watch_size} or more (in "
                             f"magnitude) or an array of as many elements, or whose `for` "
                             f"nests multiply out to as many iterations, runs baseline code "
                             f"from its start (counting tier 0 where baseline cannot take it)")
            return "has loops: " + "; ".join(rules)
        if hasattr(c, "points"):
            where = ", ".join(str(p.line) for p in c.points.values())
            if c.hopeless:
                return (f"watched, but no OSR entry of its loops (line {where}) could be "
                        f"built for {len(c.hopeless)} argument signature(s): their cold "
                        f"calls run as CPython; the others' run counting tier 0 "
                        f"({c.transfers} OSR transfers so far)")
            return (f"watched: cold calls run counting tier 0; its loops (line {where}) move "
                    f"into native code by OSR ({c.transfers} so far)")
        return ""

    def _explain_heat(self) -> str:
        self.settle()
        if self.loops is False:          # its cold calls are counted, not timed (runtime.shim)
            rule = _hot_rule(timed=False)
            if not self.cold:
                return f"hot after {self.hot_after} calls ({rule})"
            return f"cold: {self.calls} calls; compiles when hot ({rule})"
        rule = _hot_rule()
        if not self.cold:
            return (f"hot after {self.hot_after} calls and {self.cold_seconds * 1e3:.2f} ms "
                    f"in cold calls ({rule})")
        if not self.calls:
            return f"not called yet: its first calls run as CPython until it is hot ({rule})"
        return (f"cold: {self.calls} calls, {self.cold_seconds * 1e3:.2f} ms in all; "
                f"compiles when hot ({rule})")

    def versions(self) -> "list[Specialisation]":
        """Every version of the function asked for: the type specialisations, their
        value-specialised versions and the OSR entries of its loops."""
        out = []
        for s in list(self.specs.values()):
            if s.value_spec is not None:
                out.append(s.value_spec)
            if s.requested:
                out.append(s)
        out += list(getattr(self.counting, "entries", {}).values())
        return out

    def counters(self) -> "dict[str, Any]":
        """Per-function counters, as `tierjit.stats()` reports them."""
        specs = self.versions()
        self.settle()
        return {
            "tier": self.tier,
            "calls": self.calls,
            "cold_seconds": self.cold_seconds,
            "hot": not self.cold,
            "compiles": self.compiles,
            "compile_seconds": self.compile_seconds,
            "deopts": sum(s.deopt_count for s in specs),
            "specialisations": {_fmt_types(s.arg_types, s.values): {
                "tier": s.tier, "deopts": s.deopt_count, "installed": s.installed,
                "gave_up": s.gave_up,
                "reason": None if s.reason is None else s.reason.describe()} for s in specs},
        }


def _hot_rule(timed: bool = True) -> str:
    """The hot rule as explain states it; `timed`: for a function whose cold calls are timed
    (one with loops), else by count alone."""
    parts = []
    if _config.hot_calls is not None:
        parts.append(f"{_config.hot_calls} calls")
    if _config.hot_seconds is not None and (timed or _config.hot_seconds == 0):
        parts.append(f"{_config.hot_seconds * 1e3:g} ms")
    rule = "hot at " + " or ".join(parts) if parts else "never hot: config says never"
    return rule if timed else rule + "; no loops, so its calls are counted, not timed"


def _fmt_types(types, values: "dict[int, Any] | None" = None) -> str:
    values = values or {}
    return "(" + ", ".join(("?" if t is None else str(t)) + (f"={_fmt_value(values[i])}"
                                                             if i in values else "")
                           for i, t in enumerate(types)) + ")"


def _fmt_value(value: "Any") -> str:
    """A profiled value as explain shows it: an array's shape (a tuple) as `shape (2, 3)`."""
    return f"shape {value!r}" if type(value) is tuple else repr(value)
