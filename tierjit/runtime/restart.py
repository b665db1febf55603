"""A function whose free names were bound again starts anew (runtime/names.py finds them).

Its dispatcher drops none of what it compiled but runs none of it again: a successor, a new
dispatcher of the same function, lowers and compiles it again with what the names name now
when it gets hot, and every live predecessor's entry (the program holds the first; callers'
code may hold others) passes its calls to the newest through the relay slot
(runtime/entry.py: forward_to). A predecessor's code goes with the predecessor, once nothing
holds it: a running call holds its entry, and the entry its dispatcher. REBINDS restarts in a
row, each within REBIND_SECONDS of the one before, then the function runs as CPython.
"""

from __future__ import annotations

from _weakref import ref as _weakref
from time import perf_counter as _clock

# A program rebinding a name before every call would otherwise pay a compile each time,
# where a notebook's cell run again now and then should not.
REBINDS = 3
REBIND_SECONDS = 10.0


class Restarting:
    """The Dispatcher's part in a restart (see the module docstring)."""

    def rebound(self, why: str, line: int = 0) -> None:
        """`why` (at `line`): a free name no longer names what the compiled code baked in.
        None of that code runs again, and the function starts anew. Not under the build
        lock (a build may hold it for milliseconds): a build finishing later is not installed
        (`_install`), and its code's own names check would refuse it anyway."""
        from ..errors import Unsupported
        from . import entry as _entry
        from .events import record
        if self.rebound_why is not None:
            return
        self._ir_error = Unsupported(why, line)
        said = self.rebound_why = self._ir_error.describe()
        self.counting = False
        for spec in list(self.specs.values()):
            for s in (spec, spec.value_spec):
                if s is not None:
                    self.give_up(s, said)
                    s.tier, s.tier0 = "python", None
        for code in list(self.__dict__.get("_baseline_codes", {}).values()):
            if code is not None:
                code.given_up = True
        if _entry.is_entry(self.entry):
            _entry.uninstall(self.entry)
        n = self.rebinds + 1 if _clock() - self.born < REBIND_SECONDS else 1
        if n > REBINDS:
            self._ir_error = Unsupported(f"{why} ({REBINDS} times in a row)", line)
            from .straight import after_give_up
            after_give_up(self)
            return
        nxt = type(self)(self.py_func, self.tier)
        nxt.rebinds, nxt.rebound_from = n, said
        nxt.predecessors = [r for r in (*self.predecessors, _weakref(self)) if r()]
        for ref in nxt.predecessors:
            p = ref()
            if p is not None:           # (else its fallback's `_successor`: one Python hop)
                p.successor = nxt
                _entry.forward_to(p.entry, nxt.entry)
        record("recompile", self.__qualname__, "", self.tier, owner=self,
               reason=f"{said}: lowered again when it gets hot")

    def _successor(self, args: tuple, kwargs: dict):
        """A call of a function that started anew (see rebound) that reached this old
        dispatcher: its successor's."""
        return self.successor.entry(*args, **kwargs)
