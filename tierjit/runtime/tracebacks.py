"""Tracebacks under `tierjit run` read as under plain `python`: the JIT's call path is left out.

A cold call of a jitted function runs the original function from `Shim.__call__` (and a call
its native code did not take, from the dispatcher's fallback), so an exception raised in it
passes through one more Python frame than under CPython. Analogue: CPython's own
`remove_importlib_frames`, which hides the import machinery from tracebacks. Two places print
tracebacks: the uncaught-exception path of `tierjit run` (`strip`, before `sys.excepthook`),
and the `traceback` module, whose frame walkers `install` wraps (`traceback.print_exc`,
`format_exc`, `logging`'s exception output, `traceback.print_stack`). Code that walks
`tb_next` or `inspect.stack()` itself still sees the extra frames.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import CodeType, TracebackType

_hidden: set = set()                    # code objects of the call path
# code objects whose caller's frame the call goes on from: OSR's poll, called by a loop of
# counting tier 0, finishes the call in native code, so that tier-0 frame is left out too
_handover: set = set()
_package_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _call_path_codes() -> set:
    """The code objects a call of a jitted function passes through before the function."""
    if not _hidden:
        from .dispatch import Dispatcher
        from .osr import OsrEntries
        from .shim import ColdDispatcher, Shim
        from .tierup import Climb
        _handover.add(OsrEntries.poll.__code__)
        for fn in (Shim.__call__, ColdDispatcher._call_auto, Dispatcher._call_auto,
                   Dispatcher._call_now, Dispatcher.call, OsrEntries.poll, Climb.__call__):
            _hidden.add(fn.__code__)
    return _hidden


def _left_out(codes: list) -> list[bool]:
    """For frames' codes from the outermost in: which are left out (the call path, and a
    frame that handed its call over)."""
    hidden = _call_path_codes()
    return [c in hidden or i + 1 < len(codes) and codes[i + 1] in _handover
            for i, c in enumerate(codes)]


def is_call_path(code: CodeType) -> bool:
    return code in _call_path_codes()


def is_tierjit_frame(code: CodeType) -> bool:
    """Code of the tierjit package itself (tier-0 code carries the user's file name)."""
    return code.co_filename.startswith(_package_dir + os.sep)


def strip(exc: BaseException, start: CodeType | None = None) -> None:
    """Remove call-path frames from exc's traceback and from every exception chained to it;
    with `start`, also every frame before the first one running `start` (the runner's)."""
    seen: set[int] = set()
    todo: list[tuple[BaseException, CodeType | None]] = [(exc, start)]
    while todo:
        e, first = todo.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        e.__traceback__ = _strip_tb(e.__traceback__, first)
        for other in (e.__cause__, e.__context__, *getattr(e, "exceptions", ())):
            if isinstance(other, BaseException):
                todo.append((other, None))


def _strip_tb(tb: TracebackType | None, start: CodeType | None) -> TracebackType | None:
    entries = []
    while tb is not None:
        entries.append(tb)
        tb = tb.tb_next
    if start is not None:
        for i, entry in enumerate(entries):
            if entry.tb_frame.f_code is start:
                entries = entries[i:]
                break
        else:
            # Not raised in the script (an error of the runner itself): keep only what is
            # not tierjit's, so the user sees their own frames.
            entries = [t for t in entries if not is_tierjit_frame(t.tb_frame.f_code)] or entries
    out = _left_out([t.tb_frame.f_code for t in entries])
    kept = [t for t, o in zip(entries, out) if not o]
    for a, b in zip(kept, kept[1:]):
        a.tb_next = b
    if kept:
        kept[-1].tb_next = None
    return kept[0] if kept else None


def install() -> None:
    """Make the traceback module's frame walkers skip the call path."""
    import traceback

    def wrap(walker, stack: bool):
        def walk(arg):
            if stack and arg is None:
                # walk_stack(None) starts four frames up from its own generator frame; this
                # generator takes that generator's place, so the same count is right here.
                arg = sys._getframe().f_back.f_back.f_back.f_back
            items = list(walker(arg))               # item: (frame, position)
            codes = [item[0].f_code for item in items]
            if stack:                                # innermost first
                out = _left_out(codes[::-1])[::-1]
            else:
                out = _left_out(codes)
            yield from (item for item, o in zip(items, out) if not o)
        walk.__name__, walk.__doc__ = walker.__name__, walker.__doc__
        walk.__wrapped__ = walker
        return walk

    _call_path_codes()
    for name in ("walk_tb", "_walk_tb_with_full_positions", "walk_stack"):
        walker = getattr(traceback, name, None)
        if walker is not None and not hasattr(walker, "__wrapped__"):
            setattr(traceback, name, wrap(walker, name == "walk_stack"))
