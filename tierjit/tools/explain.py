"""`tierjit explain script.py:function`, and the detail lines `tierjit.explain(f)` ends with.

`details(d)` adds to the dispatcher's own explanation (why a function runs where it runs, one
line per specialisation) what a user tuning a function wants next: for each specialisation with
native code, the places it can deoptimise (its guards: every check native code makes on a
speculation, by the source line and operation where tier 0 resumes when the check fails), then
its deopt history, most frequent first, and the OSR entries and give-ups of the function.

`tierjit explain` runs the script the way `tierjit run` does (the history needs a run), then
prints the explanation on stdout after the script's own output. With `--no-run` the script is
only imported, as a module named after its file, so its `if __name__ == "__main__":` block does
not run: that shows what the frontend thinks of the function (the line that keeps it in
CPython) without running anything hot.
"""

from __future__ import annotations

import os
import sys
from collections import Counter

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..runtime.dispatch import Dispatcher
    from ..runtime.importhook import Selection

MAX_GUARD_LINES = 8


def details(d: Dispatcher) -> list[str]:
    """Guards, deopt history, OSR entries and give-ups of d's specialisations, indented."""
    from ..runtime import events
    from ..runtime.dispatch import _fmt_types, _frame_state_detail
    lines: list[str] = []
    for spec in list(d.specs.values()):
        if not spec.requested or spec.native is None:
            continue
        head = f"  {d.__name__}{_fmt_types(spec.arg_types)}"
        states = list(getattr(spec.native, "frame_states", ()) or ())
        places = Counter()
        for index in range(len(states)):
            detail = _frame_state_detail(spec, index)
            places[_where(detail, index)] += 1
        if places:
            shown = ", ".join(f"{w}" + (f" x{n}" if n > 1 else "")
                              for w, n in sorted(places.items(), key=_line_order)
                              [:MAX_GUARD_LINES])
            more = len(places) - MAX_GUARD_LINES
            lines.append(f"{head} guards: {len(states)} deopt points, resuming in tier 0 at "
                         f"{shown}" + (f", and {more} more places" if more > 0 else ""))
        else:
            lines.append(f"{head} guards: none (native code never deoptimises)")
        history = sorted(list(spec.deopts.items()), key=lambda kv: -kv[1])
        if history:
            text = "; ".join(f"{_where(_frame_state_detail(spec, i), i)}: {n}"
                             for i, n in history)
            lines.append(f"{head} deopts: {spec.deopt_count} in all — {text}")
    osr = [e for e in events.events("osr") if e.owner is not None and e.owner() is d]
    up = sum(e.detail.get("from_tier") == "baseline" for e in osr)
    if len(osr) > up:
        lines.append(f"  OSR entries: {len(osr) - up} (calls that moved from tier 0 into "
                     f"native code inside a loop)")
    if up:
        lines.append(f"  tier-up: {up} (calls that moved from baseline code into LLVM's "
                     f"inside a loop)")
    for e in events.events("give-up"):
        if e.owner is not None and e.owner() is d:
            lines.append(f"  gave up {d.__name__}{e.types} at +{e.time:.3f}s: "
                         f"{e.detail.get('reason', '')}")
    return lines


def _where(detail: dict, index: int) -> str:
    if "line" in detail:
        return f"line {detail['line']} ({detail['op']})"
    return f"frame state {index}"


def _line_order(item: tuple[str, int]) -> tuple[int, str]:
    where = item[0]
    if where.startswith("line "):
        return int(where.split()[1]), where
    return 1 << 30, where


def explain_text(d: Dispatcher) -> str:
    return "\n".join([d.explain(), *details(d)])


# -- tierjit explain script.py:function ---------------------------------------------------------

def explain_in_script(script: str, qualname: str, args: list[str], run: bool,
                      selection: Selection) -> int:
    """Run (or import) the script, then print the explanation of `qualname`; exit status."""
    from ..runtime import script as scripts
    path = scripts.absolute(script)
    if not os.path.isfile(path):
        print(f"tierjit explain: can't open file {path!r}: no such file", file=sys.stderr)
        return 2
    status = 0
    try:
        if run:
            status = scripts.run_script(script, args, selection)
        else:
            scripts.import_script(script, selection)
    except SystemExit as e:          # the script's sys.exit(): explain all the same
        status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    module = sys.modules["__main__"] if run else sys.modules.get(scripts.module_name(path))
    obj = _lookup(module, qualname)
    from ..runtime.dispatch import dispatcher_of
    d = dispatcher_of(obj) if obj is not None else None
    if d is None:
        jitted = sorted(k for k, v in vars(module).items() if dispatcher_of(v) is not None) \
            if module is not None else []
        what = "no function" if obj is None else "no jitted function"
        print(f"tierjit explain: {script} has {what} {qualname!r}"
              + ("" if obj is None else " (tierjit run leaves decorated functions, methods, "
                 "generators and async functions alone)")
              + (f"; its jitted functions are: {', '.join(jitted)}" if jitted
                 else "; it has no jitted functions"), file=sys.stderr)
        return 2
    sys.stdout.flush()
    print(explain_text(d))
    return status if isinstance(status, int) else 1


def _lookup(module, qualname: str):
    obj = module
    for part in qualname.split("."):
        if obj is None:
            return None
        obj = getattr(obj, part, None)
    return obj
