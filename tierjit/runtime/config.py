"""tierjit.config: the tiering policy's knobs, typed, with TIERJIT_* environment defaults.

    import tierjit
    tierjit.config.hot_calls = 50            # compile after 50 calls instead of 1000
    with tierjit.config.override(hot_calls=0, background=False):
        ...                                  # compile on the first call, in the calling thread

Environment variables (read once, when this module is first imported; a bad value is reported
with a warning and the default is kept):

    TIERJIT_HOT_CALLS=N|never     calls after which a function is hot (default 1000)
    TIERJIT_HOT_MS=T|never        milliseconds spent in a function with loops' cold calls
                                  after which it is hot (default 5)
    TIERJIT_BACKGROUND=1|0        compile on the compiler thread (default) or in the caller
    TIERJIT_MAX_DEOPTS=K          deopts after which a specialisation's native code is dropped
                                  (default 100)
    TIERJIT_MAX_SPECIALISATIONS=N type specialisations per function (default 8)
    TIERJIT_WATCH_MS=T|never      a function with loops one of whose cold calls took this many
                                  milliseconds runs its cold calls in counting tier 0 (default 1)
    TIERJIT_WATCH_SIZE=N|never    ... and a cold call given an int of at least this magnitude or
                                  an array of at least this many elements, or whose `for` nests
                                  multiply out to this many iterations, runs native code from
                                  its start: baseline code built by that call, else counting
                                  tier 0 (default 65536)
    TIERJIT_OSR_BACKEDGES=N|never loop iterations after which a call running a loop in tier 0
                                  moves into native code (OSR; default 1000)
    TIERJIT_SPECIALISE_VALUES=1|0 compile constant arguments in (default 1)
    TIERJIT_LOG=1                 print one line per event (compile, tier-up, deopt, give-up)
                                  to stderr as it happens
    TIERJIT_PERF=1                append every native code region to /tmp/perf-<pid>.map for
                                  Linux perf (runtime.perfmap)

Only `tier="auto"` functions (the default) use the thresholds; "interp" and "opt" build their
tier on the first call of each argument-type signature.
"""

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from contextlib import AbstractContextManager

# Only os (loaded by every interpreter) at import: `import tierjit` must stay ~1 ms.

_INF = float("inf")
_OBSERVED = 8     # the last cold calls of a function without loops sampled by the value
                  # profile (besides calls 16, 32, 64, ...)

_FIELDS = ("hot_calls", "hot_seconds", "background", "max_deopts", "max_specialisations", "log",
           "osr_backedges", "watch_seconds", "watch_size", "tierup_seconds", "perf",
           "specialise_values")


class Config:
    """The tiering knobs. Assignment checks the type, so a typo fails where it is made.

    hot_calls: int | None       a tier="auto" function is hot once it has been called this
                                many times (None: never by count). 0 compiles on the first call.
    hot_seconds: float | None   ... or, for a function with loops, once its cold calls have
                                taken this long in total (None: never by time; a function
                                without loops is not timed, but 0 makes it hot at once).
                                Together they are the ski-rental rule: run as CPython until
                                waiting has cost about what compiling would.
    background: bool            hot code is compiled on the compiler thread while the program
                                runs on (True), or by the call that found it hot (False).
    max_deopts: int             after this many deopts a specialisation's native code is no
                                longer used (the give-up event; `explain` says why).
    max_specialisations: int    argument-type signatures compiled per function; calls with
                                further signatures run as CPython.
    log: bool                   print every event to stderr as it happens.
    perf: bool                  write /tmp/perf-<pid>.map for Linux perf (runtime.perfmap).
    watch_seconds: float | None a tier="auto" function with loops one of whose cold calls has taken
                                this long runs its further cold calls in counting tier 0,
                                lowered on the compiler thread (0: from its first call, lowered
                                by that call; None: never) ...
    watch_size: int | None      ... and a cold call of it one of whose arguments is an int of at
                                least this magnitude (a loop bound) or a NumPy array of at
                                least this many elements, or whose `for` loop nests' trip
                                counts (read from the bytecode: runtime.loopwork) multiply out
                                to this many, is likely long: it runs baseline code
                                for its argument types from its start, built by that call, or
                                where the baseline tier cannot take it counting tier 0, lowered
                                by that call, whose loops can move into native code at once
                                (None: never by size) ...
    osr_backedges: int | None   ... which counts loop iterations: after this many, a long call moves
                                into native code compiled for the rest of its loop (OSR), and
                                asks again every as many iterations while that code is being
                                built. None: never (cold calls run as CPython, large arguments
                                or not).
    tierup_seconds: float | None a call running baseline code from its start (a call predicted
                                long, an OSR transfer) that has run this long has LLVM's code
                                built for the rest of its loops, and moves into it at a loop's
                                next signal poll (runtime.tierup). None: never.
    specialise_values: bool     arguments that were the same int, bool or float in every
                                sampled cold call are compiled in as constants, behind an entry
                                guard; another value switches the function to a generic version.
    """

    __slots__ = _FIELDS + ("_calls_at", "_observe_at", "_seconds_at")

    hot_calls: int | None
    hot_seconds: float | None
    background: bool
    max_deopts: int
    max_specialisations: int
    log: bool
    perf: bool
    osr_backedges: int | None
    watch_seconds: float | None
    watch_size: int | None
    tierup_seconds: float | None
    specialise_values: bool

    def __init__(self, env: "Mapping[str, str] | None" = None) -> None:
        # The defaults, past __setattr__'s checks (they pass them: ~50k instructions saved on
        # every start); _calls_at and _seconds_at are what it derives from the first two.
        set_ = object.__setattr__
        set_(self, "hot_calls", 1000)
        set_(self, "_calls_at", 1000.0)
        set_(self, "_observe_at", 992.0)
        set_(self, "hot_seconds", 0.005)
        set_(self, "_seconds_at", 0.005)
        set_(self, "background", True)
        set_(self, "max_deopts", 100)
        set_(self, "max_specialisations", 8)
        set_(self, "log", False)
        set_(self, "perf", False)
        set_(self, "osr_backedges", 1000)
        set_(self, "watch_seconds", 0.001)
        set_(self, "watch_size", 65536)
        set_(self, "tierup_seconds", 0.25)
        set_(self, "specialise_values", True)
        if env is not None:
            self._read_env(env)

    def __setattr__(self, name: str, value: object) -> None:
        if name not in _FIELDS:
            raise AttributeError(f"tierjit.config has no setting {name!r}; "
                                 f"the settings are {', '.join(_FIELDS)}")
        if name in ("background", "log", "perf", "specialise_values"):
            if not isinstance(value, bool):
                raise TypeError(f"tierjit.config.{name} must be a bool, got {value!r}")
        elif name in ("hot_calls", "max_deopts", "max_specialisations", "osr_backedges",
                      "watch_size"):
            never = name in ("hot_calls", "osr_backedges", "watch_size")
            if value is None and never:
                pass
            elif (isinstance(value, bool) or not isinstance(value, int) or value < 0
                  or name == "osr_backedges" and value == 0):
                low = 1 if name == "osr_backedges" else 0
                extra = " or None (never)" if never else ""
                raise TypeError(f"tierjit.config.{name} must be an int >= {low}{extra}, "
                                f"got {value!r}")
        elif name in ("hot_seconds", "watch_seconds", "tierup_seconds"):
            if value is not None and (isinstance(value, bool) or
                                      not isinstance(value, int | float) or value < 0):
                raise TypeError(f"tierjit.config.{name} must be a number >= 0 or None "
                                f"(never), got {value!r}")
            value = None if value is None else float(value)
        object.__setattr__(self, name, value)
        # The dispatcher's cold path compares against these, one attribute read per call.
        if name == "hot_calls":
            object.__setattr__(self, "_calls_at", _INF if value is None else float(value))
            object.__setattr__(self, "_observe_at", self._calls_at - _OBSERVED)
        elif name == "hot_seconds":
            object.__setattr__(self, "_seconds_at", _INF if value is None else value)

    def as_dict(self) -> dict[str, object]:
        return {name: getattr(self, name) for name in _FIELDS}

    def override(self, **settings: object) -> "AbstractContextManager[Config]":
        """Change some settings for the duration of a `with` block (tests, benchmarks)."""
        from contextlib import contextmanager  # here, not at `import tierjit`

        @contextmanager
        def changed() -> "Iterator[Config]":
            saved = self.as_dict()
            try:
                for name, value in settings.items():
                    setattr(self, name, value)
                yield self
            finally:
                for name, value in saved.items():
                    setattr(self, name, value)
        return changed()

    def __repr__(self) -> str:
        return "tierjit.config(" + ", ".join(f"{k}={v!r}" for k, v in self.as_dict().items()) + ")"

    # -- environment ------------------------------------------------------------------------
    def _read_env(self, env: "Mapping[str, str]") -> None:
        parsers = {
            "TIERJIT_HOT_CALLS": ("hot_calls", _int_or_never),
            "TIERJIT_HOT_MS": ("hot_seconds", _ms_or_never),
            "TIERJIT_BACKGROUND": ("background", _flag),
            "TIERJIT_MAX_DEOPTS": ("max_deopts", int),
            "TIERJIT_MAX_SPECIALISATIONS": ("max_specialisations", int),
            "TIERJIT_LOG": ("log", _flag),
            "TIERJIT_PERF": ("perf", _flag),
            "TIERJIT_OSR_BACKEDGES": ("osr_backedges", _int_or_never),
            "TIERJIT_WATCH_MS": ("watch_seconds", _ms_or_never),
            "TIERJIT_WATCH_SIZE": ("watch_size", _int_or_never),
            "TIERJIT_TIERUP_MS": ("tierup_seconds", _ms_or_never),
            "TIERJIT_SPECIALISE_VALUES": ("specialise_values", _flag),
        }
        for var, (name, parse) in parsers.items():
            text = env.get(var)
            if text is None or text == "":
                continue
            try:
                setattr(self, name, parse(text.strip()))
            except (TypeError, ValueError) as e:
                import warnings
                warnings.warn(f"{var}={text!r} ignored ({e}); keeping {name}="
                              f"{getattr(self, name)!r}", RuntimeWarning, stacklevel=2)


def _int_or_never(text: str) -> int | None:
    return None if text.lower() == "never" else int(text)


def _ms_or_never(text: str) -> float | None:
    return None if text.lower() == "never" else float(text) / 1000.0


def _flag(text: str) -> bool:
    if text.lower() in ("1", "true", "yes", "on"):
        return True
    if text.lower() in ("0", "false", "no", "off"):
        return False
    raise ValueError("expected 1 or 0")


config = Config(os.environ)     # read through: copying it is ~40 us
