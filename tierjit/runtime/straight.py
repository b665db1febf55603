"""Straight calls: the original function called from the entry's C slot, with no Python frame
in between, while the function has no native code to run.

A cold call of a tier="auto" function passes through the shim's `__call__` (runtime.shim),
and CPython counts a call of an object's `__call__` three times against the recursion limit
(the C call, the `__call__` frame, the function's frame) where a plain call counts once: a
recursion that CPython runs 990 levels deep raised RecursionError at about 330. So when a
function is found nested in its own cold calls (a recursion), its shim becomes
an entry (runtime.entry) whose slot is the *straight* slot (backends/stencils/shared_ir.py):
it calls the original function (`target`) by vectorcall, counting down the calls it may make
(`straight`), then calls the fallback, the dispatcher, once. The dispatcher counts the calls
made straight, does what the shim would have done with the call (the value profile's samples,
the hot call) and gives the slot the calls up to the next thing it has to see: a recursion
then costs CPython's depth but for a few levels, and the calls are counted as before, for
less than the shim costs (~25 ns a call more than a plain call, where the shim costs ~500).

Once the function is hot, the slot makes BYPASS_CALLS calls between two the dispatcher sees
(which may bring argument types to compile) until installed native code replaces the slot: a
function that cannot be compiled keeps CPython's depth for good.

A function with loops goes straight in sections (`enter`): its cold calls are timed and may
run counting tier 0 (runtime.watch, runtime.osr) or baseline code, which a straight call
would skip; so only the calls nested in one NESTED deep go straight, and the dispatcher
treats the others as the shim did.

Going straight needs the entry type (runtime.entry), whose start-up takes ~20 ms the first
time in a process. So the first recursion asks the compiler thread to make it and goes on
through the shim, going straight once it is there; only a recursion that gets DEEP before
then makes it (or waits for it) on its own thread, a pause recorded as one, and only from a
stencil library in the disk cache (building one takes LLVM seconds). A recursion on another
thread that gets DEEP through the shim meanwhile waits for the function to go straight too.

While a build of the function is in flight, every BYPASS_CALLS-th call that runs it as CPython
(made straight, or through the shim) first lets the compiler thread have the GIL
(time.sleep(0); CPython hands it back within the switch interval, 0.5 ms while the compiler
is busy). Otherwise the two take turns by the switch interval alone, and a recursion waits
for its native code the longer: fib(35)'s first call in a fresh process had its baseline
code 166-195 ms in (a build of 123-138 ms) and took 248-274 ms; with the yield 72-81 ms in
(38-47 ms) and 158-166 ms. Yielding at every nested call that waits for the entry type as
well got it sooner still, but then the program's thread waited up to 14 ms for the GIL while
the compiler thread's imports took it back at each of their system calls.
"""

import os as _os
from _thread import _local as threading_local
from _thread import allocate_lock
from time import perf_counter as _clock
from time import sleep as _sleep

from .config import config as _config

# Cold calls of one function nested in each other before it goes straight (each costs three
# levels of the recursion limit): a recursion, or as many threads in it at once. (Restated
# in runtime.shim, whose cold calls count them.)
NESTED = 8

# Nested cold calls before a recursion makes the entry type on its own thread rather than
# wait for the compiler thread to make it (it has cost CPython's recursion limit 2 * DEEP
# levels by then).
DEEP = 48

# Nested cold calls through the shim before a recursion builds the stencil library (or waits
# for the compiler thread building it) rather than go on without one: LLVM seconds, recorded
# as a pause, where the alternative is a C stack overflow (each nested call through the shim
# takes ~1 KB of C stack, which no check guards; reached only with sys.setrecursionlimit
# raised past 3 * SHIM_MAX). A power of two (the shim asks at powers of two).
SHIM_MAX = 1024

# Once the function is hot: straight calls between two the dispatcher sees.
BYPASS_CALLS = 1024

# Longest a recursion waits for another thread making its function straight (wait_straight).
WAIT_SECONDS = 0.5


def begin(d) -> None:
    """Make the shim of `d` (a dispatcher in its cold phase or bypass) call the original
    function straight (in sections, with loops); `d.straight` says whether it does (True),
    cannot (False) or is to be asked again at its next nested call (None: waiting for the entry
    type or the stencil library). Called by the shim at NESTED nested calls, then at powers
    of two and at DEEP."""
    from . import entry, shim
    if not (entry.AVAILABLE and shim.LAYOUT_OK):
        d.straight = False
        return
    if entry._runtime is None and d.nested < SHIM_MAX:
        waiting = _entry_type_in_background()
        if waiting and d.nested < DEEP or _clock() < _retry_at:
            return
    with _lock:                              # once per dispatcher
        if d.straight is not None:
            return
        # True from here: a call the straight slot passes on before it is given calls is
        # the dispatcher's to count as cold (target), not the hot call
        d.straight = True
    straight = False
    try:
        if entry._runtime is None and not _make_entry_type(d.nested >= SHIM_MAX):
            d.straight = None                # asked again, at a later nested call
            return
        whole = d.materialise()
        straight = entry.go_straight(whole.entry, whole.py_func)
        if straight:
            _give_calls(whole)
        else:                # native code in the slot (for other arguments): after a
            d.straight = None if entry.is_entry(whole.entry) else False     # give-up
    except BaseException as e:  # the shim still runs the function correctly
        from ..errors import the_programs
        # the program's (KeyboardInterrupt, a signal handler's exception), or too deep a stack
        # for now: asked again later
        programs = the_programs(e)
        if programs or _too_deep(e):
            if straight:
                _give_calls(whole)           # (went straight: its slot needs the calls)
            else:
                d.straight = None
            if programs:
                raise
            return
        d.straight = False
        from .dispatch import STRICT
        if STRICT:
            raise


def _give_calls(whole) -> None:
    """The straight slot of `whole` (just made straight) gets its first calls to make."""
    from . import entry
    if whole.straight_cell is None:
        whole.straight_cell = entry.straight_cell(whole.entry)
    # (a function with loops: in sections, opened by enter)
    arm(whole, 0 if whole.loops else
        _cold_calls(whole, whole.calls) if whole.cold else BYPASS_CALLS)


# C stack a level of recursion through the shim's Python frames may take (slot_tp_call, the
# shim's frame, the call of the function: 1.1-2 KB measured on 3.11), with room to spare
SHIM_LEVEL_BYTES = 3 << 10


def check_shim_depth() -> None:
    """RecursionError where this thread's recursion through the shim (the function not
    straight yet: its entry type on its way, or another thread making it straight) could run
    off the thread's stack: every level takes C stack that no C entry checks. Only on a stack
    smaller than 2 x cstack.MARGIN (a thread made after a small `threading.stack_size`),
    which such levels may take half of, SHIM_LEVEL_BYTES each (a 128 KB stack: 21 levels).
    Counts this thread's shim frames (a frame chain is its thread's own)."""
    from . import cstack
    size = _thread_stack_size()
    if not 0 < size < 2 * cstack.MARGIN:
        return                      # (most threads: a cached size and a compare)
    import sys

    from . import shim
    code = shim.Shim.__call__.__code__
    levels = 0
    f = sys._getframe(1)
    while f is not None:
        levels += f.f_code is code
        f = f.f_back
    if levels * SHIM_LEVEL_BYTES > size // 2:
        raise RecursionError(cstack.MESSAGE.decode())


def _thread_stack_size() -> int:
    """This thread's stack size (pthread_getattr_np), 0 where it is not known; once per
    thread. (threading.stack_size() would not do: it tells the size of threads to come, and
    called without an argument it sets that to the default.)"""
    size = getattr(_sizes, "size", None)
    if size is None:
        import ctypes
        size = 0
        try:
            libc = ctypes.CDLL(None)
            attr = ctypes.create_string_buffer(128)
            got = ctypes.c_size_t(0)
            libc.pthread_self.restype = ctypes.c_void_p
            if libc.pthread_getattr_np(ctypes.c_void_p(libc.pthread_self()), attr) == 0:
                if libc.pthread_attr_getstacksize(attr, ctypes.byref(got)) == 0:
                    size = got.value
                libc.pthread_attr_destroy(attr)
        except (OSError, AttributeError):
            pass
        _sizes.size = size
    return size


def _too_deep(e: BaseException) -> bool:
    """Did e come of the recursion limit (ctypes reports one raised while it converted an
    argument as an ArgumentError naming it)?"""
    return isinstance(e, RecursionError) or "RecursionError" in str(e) and \
        type(e).__name__ == "ArgumentError"


def wait_straight(d) -> None:
    """A recursion DEEP levels into the shim of `d` while another thread makes it straight
    (begin: `d.straight` True, the shim not switched yet): wait for that, making the entry
    type if no thread is, rather than recurse on at three levels a call (two threads' first
    recursion of a process: the second raised RecursionError at a third of CPython's
    depth). A pause, recorded as one; at most WAIT_SECONDS."""
    from . import entry
    from .events import note_pause
    if not entry.AVAILABLE:
        return
    start = _clock()
    if entry._runtime is None:
        try:
            _make_entry_type()
        except Exception as e:      # the shim still runs the function correctly
            from ..errors import from_signal_handler
            if from_signal_handler(e):
                raise
    while d.straight is True and not entry.is_straight(d.entry) \
            and _clock() - start < WAIT_SECONDS:
        _sleep(0.0002)
    note_pause(_clock() - start)


def _make_entry_type(build: bool = False) -> bool:
    """Make the entry type on this thread, or wait for the compiler thread making it (a few
    milliseconds: better than RecursionError), a pause recorded as one; False without a
    stencil library in the disk cache (LLVM would take seconds to build it, or is), unless
    `build` (SHIM_MAX deep: build it, or wait for it)."""
    global _retry_at
    from ..backends.stencils import library
    from . import entry
    from .events import note_pause
    start = _clock()
    if library.load(build=build) is None:
        _retry_at = _clock() + RETRY_SECONDS
        return False
    entry.entry_type()
    note_pause(_clock() - start)             # JIT work on the program's thread
    return True


def _entry_type_in_background() -> bool:
    """Is the compiler thread making the entry type (asked to now if it has not been)?"""
    global _asked
    if not _asked:
        from . import compiler
        c = compiler.get_compiler()
        _asked = _config.background and not c.is_compiler_thread() and c.submit(_EntryType())
    return _asked and _runtime_missing()


def _runtime_missing() -> bool:
    from . import entry
    return entry._runtime is None and not _EntryType.failed


class _EntryType:
    """A compiler-thread job: the native entry type (and the stencil library it is made
    from, built if it is not cached)."""

    __slots__ = ()
    uses_llvm = False
    failed = False

    def __call__(self) -> None:
        from . import dispatch, entry  # noqa: F401 - the dispatcher going straight needs it
        try:
            entry.entry_type()
        except BaseException:
            _EntryType.failed = True
            raise


_lock = allocate_lock()         # begin: once per dispatcher
_sizes = threading_local()      # _thread_stack_size's, per thread
_asked = False
_retry_at = 0.0          # no stencil library in the cache: when to look again
RETRY_SECONDS = 0.1


def _after_fork_in_child() -> None:
    global _asked, _lock
    _asked = False       # the job queued in the parent does not exist here
    _lock = allocate_lock()


if hasattr(_os, "register_at_fork"):
    _os.register_at_fork(after_in_child=_after_fork_in_child)


def after_give_up(d) -> None:
    """`d` has given up native code: with none left to run its calls, they run the original
    function straight (a recursion deoptimising at every level would otherwise go through
    the dispatcher's Python frames), in sections for a function with loops under tier
    "auto" (whose calls may run counting tier 0). A straight phase that native code ended
    (until now) may start again."""
    native = any(s.runs_native or s.value_spec is not None and s.value_spec.runs_native
                 for s in d.specs.values()) \
        or any(c is not None and not c.given_up
               for c in d.__dict__.get("_baseline_codes", {}).values())
    if native:
        return
    if d.loops is None:
        d.find_loops()
    if d.straight:              # straight until native code came, which is gone now
        settle(d)
        d.straight = None
    if d.straight is None:
        begin(d)


# arm and settle change the slot's count, `armed` and `calls` together with no Python call
# in between (attribute reads and writes of ints): no other thread runs, no garbage collection
# (whose __del__ may call the function: a lock here would deadlock) and no signal handler.

def arm(d, n: int) -> None:
    """Count the calls made straight since the slot was last given calls, and give it `n`
    (nothing to do before begin has the slot's cell: another thread's call the new straight
    slot passed on, which begin's own arm counts)."""
    cell = d.straight_cell
    if cell is None:
        return
    left = cell.value
    cell.value = n
    d.calls += d.armed - left
    d.armed = n


def settle(d) -> None:
    """Count the calls the slot has made straight since it was last given calls (for the
    numbers stats and explain show; the slot keeps the calls it has left)."""
    cell = d.straight_cell
    if cell is not None:
        left = cell.value
        d.calls += d.armed - left
        d.armed = left


def target(d, args: tuple, kwargs: dict):
    """What to call for a call that reached the dispatcher `d` (which counted it) while it
    goes straight, the calls made straight counted: the original function, with the slot
    given the calls up to the next one the dispatcher must see; or None when the
    dispatcher's usual path is to make the call (the hot call; a call once the function is
    neither cold nor waiting for a build, whose argument types may be new, the slot given
    BYPASS_CALLS for the calls after it; any call once native code has replaced the slot).
    (The caller makes the call: one Python frame fewer in a recursion.)"""
    from .entry import is_entry, is_straight
    if not is_straight(d.entry):
        if is_entry(d.entry):                    # native code replaced the slot (until a
            settle(d)                            # give-up: after_give_up)
            d.straight = None
        return None                              # (a shim: begin is under way)
    arm(d, 0)
    n = d.calls
    if d.cold:
        if n <= _config._calls_at and d.cold_seconds < _config._seconds_at:
            if (n > _config._observe_at or n >= 16 and not n & (n - 1)) \
                    and d.profile is not False and not kwargs:
                d.observe(args)                  # the shim's samples (runtime.shim)
            arm(d, _cold_calls(d, n))
            return d.py_func
        return None                              # the hot call
    arm(d, BYPASS_CALLS)
    if d._ir_error is not None or d.bypass and d.counting is False:
        if d._pending:
            _sleep(0)                            # its build gets the GIL (see above)
        return d.py_func                         # nothing compiles, or not yet
    return None


def enter(d, args: tuple, kwargs: dict):
    """A call of a function with loops (tier "auto") that reached the dispatcher `d` (which
    counted it) while it goes straight: (what the call runs, the token `leave` takes once it
    is over), or (None, None) when the dispatcher's usual path is to make the call (native
    code replaced the slot, or runs the call). It runs what the shim would have: the cold
    target (the original function, counting tier 0 or baseline code for a long call),
    timed and sampled as the shim does, or once the function is hot and has no native code
    for the call, its cold target again. Made NESTED deep in such calls (a recursion), the
    call opens a *section*: until it is over, the slot makes the calls nested in it straight
    (counted: they are given up to the hot call and at most BYPASS_CALLS, then one reaches
    here and gives the slot more). The first NESTED levels of a recursion keep every cold
    call's treatment; the deeper ones cost CPython's depth."""
    from .entry import is_entry, is_straight
    if not is_straight(d.entry):
        if is_entry(d.entry):                    # native code replaced the slot
            settle(d)
            d.straight = None
        return None, None
    if d.section:                                # the slot made calls: count them first
        settle(d)
    if d._ir_error is not None and not d.cold:
        arm(d, BYPASS_CALLS)                     # nothing compiles: every call, as target
        return d.py_func, None
    n = d.calls
    timed = False
    if d.cold:
        if n <= _config._calls_at and d.cold_seconds < _config._seconds_at:
            f = d.cold_target(args, kwargs)
            timed = n <= 8 or not n & 7
            if timed and d.profile is not False and not kwargs:
                d.observe(args)
        else:
            d.became_hot(None, None)             # the hot call (its build: below)
    if not d.cold:
        if d.bypass:
            f = d.py_func if d.counting is False else d.cold_target(args, kwargs)
        else:
            bound = d._positional(args, kwargs)
            if bound is not None and d._code_for(bound) is not None:
                return None, None
            f = d.cold_target(args, kwargs)
    k = d.nested
    d.nested = k + 1
    if d.section and k < NESTED:
        # a call not nested in the open section: of another thread, or the section was left
        # open by an exception raised inside leave (a signal handler's, KeyboardInterrupt),
        # which would leave every later call straight, untimed: closed
        d.section = False
        arm(d, 0)
    opened = k >= NESTED and not d.section
    if opened or d.section:
        # a section opens, or one open has given the slot's calls out: more (at most
        # BYPASS_CALLS, so that a section left open is seen closed as above)
        d.section = True
        at = _config._calls_at
        arm(d, min(BYPASS_CALLS, max(0, int(at) - d.calls)) if d.cold and at < _FAR else
            BYPASS_CALLS)
    return f, (opened, _clock() if timed else 0.0, n)


def leave(d, token: tuple, args: tuple, kwargs: dict) -> None:
    """The call `enter` gave `token` is over: its section closes, its time is counted."""
    if token is None:
        return
    opened, start, n = token
    d.nested -= 1
    if opened:
        d.section = False
        arm(d, 0)                                # (a native slot ignores the count)
    if start:
        d.cold_timed(_clock() - start, n, args, kwargs)


def _cold_calls(d, n: int) -> int:
    """How many calls after the n-th may go straight before the dispatcher must see one: the
    value profile's next sample (calls 16, 32, 64, ... and the last ones before hot_calls,
    as the shim takes them) or the hot call, whichever comes first."""
    at, observe = _config._calls_at, _config._observe_at
    nxt = int(at) + 1 if at < _FAR else _FAR
    if d.profile is not False:
        if n + 1 > observe:
            nxt = n + 1
        else:
            nxt = min(nxt, max(16, 1 << n.bit_length()))
            if observe < _FAR:
                nxt = min(nxt, int(observe) + 1)
    return max(0, nxt - n - 1)


_FAR = 2**62
