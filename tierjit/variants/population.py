"""`tierjit.evaluate`: many programs over the rows of X, as one native job where possible.

Analogue: a query planner. Programs arrive in any of four forms and are planned into pieces:

    Programs (the array encoding)            -> one Encoded piece, no per-program Python work
    source text / ast tree / bound template  -> grouped by structure (Template); a group whose
    / plain function                            template is straight-line arithmetic becomes an
                                                Encoded piece by filling constant slots with
                                                NumPy (straightline.instantiate); any other
                                                group stays a Called piece

All Encoded pieces run as one population through the native evaluator (vm.py); Called pieces
are called row by row on NumPy scalars of X's dtype, so a row's result depends on that row
alone.

Semantics (the same for every path): every variable, input and constant is a value of X's
dtype; arithmetic is NumPy's for that dtype, so division by zero, overflow and invalid
operations give ±inf and nan per row instead of raising; no RuntimeWarning is issued (the
policy of `np.errstate(all="ignore")`: a population search produces such rows by design). A
Called program that raises on a row, or whose result on it is complex, gives nan for that
row, and one bound to a value that does not convert to X's dtype (an int beyond its range)
gives nan for every row.
"""

from __future__ import annotations

import ast
import functools
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .encoding import Programs
from .template import Template, template_of

if TYPE_CHECKING:  # pragma: no cover - typing only
    import numpy as np

REDUCTIONS = (None, "max", "sum", "mse")


@dataclass
class Encoded:
    """Programs in the array encoding and the result rows they fill (None: all, in order)."""

    progs: Programs
    positions: Any = None


@dataclass
class Grouped:
    """Variants of one structure: the template, each variant's constants and result row."""

    template: Template
    consts: list = field(default_factory=list)
    positions: list = field(default_factory=list)


@dataclass
class Plan:
    n_programs: int
    pieces: list


def check_data(X: Any, reduce: str | None, y: Any) -> tuple[np.ndarray, np.ndarray | None]:
    """X as a 2-d float32/float64 array (a 1-d X is one variable), y as X's dtype."""
    import numpy as np
    if reduce not in REDUCTIONS:
        raise ValueError(f"evaluate: reduce must be one of None, 'max', 'sum', 'mse'; got "
                         f"{reduce!r}")
    X = np.asarray(X)
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2:
        raise ValueError(f"evaluate: X must be 2-d (rows x variables); got shape {X.shape}")
    if X.dtype not in (np.float32, np.float64):
        raise TypeError(f"evaluate: X must be float32 or float64; got {X.dtype} (convert with "
                        "X.astype(np.float64))")
    if (reduce == "mse") != (y is not None):
        raise ValueError("evaluate: y is needed with reduce='mse' and only then")
    if y is not None:
        try:
            y = np.asarray(y, X.dtype)
        except (TypeError, ValueError) as e:
            raise type(e)(f"evaluate: y must be numbers, one per row of X ({e})") from None
        if y.ndim == 2 and y.shape[1] == 1:
            y = y[:, 0]                  # a column
        if y.ndim != 1 or len(y) != len(X):
            raise ValueError(f"evaluate: y must be 1-d, one value per row of X ({len(X)}); "
                             f"got shape {y.shape}")
    return X, y


_function_templates: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _function_template(fn: Any, i: int) -> Template:
    t = _function_templates.get(fn)
    if t is None:
        from .source import function_tree
        fdef, namespace = function_tree(fn, f"evaluate: program {i}")
        t = _function_templates[fn] = Template(fdef, (), namespace, what="evaluate")
    return t


def _structure_of(p: Any, i: int) -> tuple:
    """(template, constants) of program i, source text or a tree; its errors name it."""
    from .source import too_deep
    from .structure import _from_tree, split_source
    try:
        return split_source(p) if isinstance(p, str) else \
            _from_tree(p, None, None, False, "evaluate")
    except RecursionError:
        raise too_deep(f"evaluate: program {i}") from None
    except (SyntaxError, ValueError, TypeError) as e:
        raise type(e)(f"evaluate: program {i}: {e}") from None


def plan(programs: Any) -> Plan:
    """Sort programs into pieces (see the module docstring)."""
    if isinstance(programs, Programs):
        return Plan(len(programs), [Encoded(programs)])
    if isinstance(programs, (str, ast.AST)) or callable(programs):
        raise TypeError("evaluate: programs must be a sequence of programs or a Programs "
                        "population; wrap a single program in a list")
    if not hasattr(programs, "__iter__"):
        raise TypeError("evaluate: programs must be a sequence of programs or a Programs "
                        f"population; got {type(programs).__name__}")
    groups: dict[Template, Grouped] = {}
    n = 0
    last_func, g = None, None
    partial = functools.partial
    for i, p in enumerate(programs):
        n += 1
        if type(p) is partial and p.func is last_func and not p.keywords:
            g.consts.append(p.args)             # a run of variants of one template: the
            g.positions.append(i)               # common case, kept cheap
            continue
        tc = template_of(p)
        last_func = p.func if tc is not None else None
        if tc is None:
            if isinstance(p, (str, ast.AST)):
                tc = _structure_of(p, i)
            elif isinstance(p, Template):
                if p.params:
                    raise TypeError(f"evaluate: program {i} is a Template with params "
                                    f"{', '.join(p.params)}; bind it first")
                tc = (p, ())
            elif hasattr(getattr(p, "py_func", p), "__code__"):
                tc = (_function_template(getattr(p, "py_func", p), i), ())
            else:
                raise TypeError(f"evaluate: program {i} is a {type(p).__name__}; expected "
                                "source text, an ast tree, a bound template or a function")
        t, consts = tc
        g = groups.get(t)
        if g is None:
            g = groups[t] = Grouped(t)
        g.consts.append(consts)
        g.positions.append(i)
    return Plan(n, list(groups.values()))


def lower_groups(pieces: list, n_inputs: int) -> list:
    """Grouped pieces of straight-line templates -> Encoded; the rest unchanged."""
    import numpy as np

    from .straightline import RegisterCode, current, instantiate
    out = []
    for piece in pieces:
        if isinstance(piece, Grouped):
            t = piece.template
            if len(t.inputs) != n_inputs:
                raise ValueError(f"evaluate: program {piece.positions[0]} ({t.name}) takes "
                                 f"{len(t.inputs)} inputs, but X has {n_inputs} columns")
            rc = current(t)
            if isinstance(rc, RegisterCode):
                try:
                    consts = np.asarray(piece.consts)
                except ValueError:                      # ragged: not all numbers
                    consts = np.asarray([object()])
                if consts.dtype.kind in "biuf" and consts.shape == (len(piece.consts),
                                                                    len(t.params)):
                    out.append(Encoded(instantiate(rc, consts), np.asarray(piece.positions)))
                    continue
        elif piece.progs.n_inputs != n_inputs:
            raise ValueError(f"evaluate: the programs have n_inputs={piece.progs.n_inputs}, "
                             f"but X has {n_inputs} columns")
        out.append(piece)
    return out


def result_array(n: int, X: np.ndarray, reduce: str | None) -> np.ndarray:
    import numpy as np
    if reduce is None:
        return np.empty((n, X.shape[0]), X.dtype)
    return np.empty(n, X.dtype if reduce == "max" else np.float64)


def run_plan(p: Plan, X: np.ndarray, reduce: str | None, y: np.ndarray | None,
             threads: int | None = None) -> np.ndarray:
    """Evaluate a plan locally: one native job for the encoded pieces, calls for the rest."""
    import numpy as np

    from . import vm
    pieces = lower_groups(p.pieces, X.shape[1])
    encoded = [q for q in pieces if isinstance(q, Encoded)]
    if len(encoded) == 1 and encoded[0].positions is None:
        return vm.run(encoded[0].progs, X, reduce, y, threads)      # the caller's population
    out = result_array(p.n_programs, X, reduce)
    if encoded:
        res = vm.run(Programs.concat([q.progs for q in encoded]), X, reduce, y, threads,
                     private=True)
        out[np.concatenate([q.positions for q in encoded])] = res
    for q in pieces:
        if isinstance(q, Grouped):
            out[q.positions] = call_group(q, X, reduce, y)
    return out


def call_group(g: Grouped, X: np.ndarray, reduce: str | None,
               y: np.ndarray | None) -> np.ndarray:
    """Evaluate variants that are not straight-line by calling them (see the docstring)."""
    import numpy as np

    from .reference import reduce_rows
    t = g.template
    rows = np.empty((len(g.consts), X.shape[0]), X.dtype)
    scalar = X.dtype.type
    # never on whole columns, even for a program that takes arrays: NumPy's array loops are
    # not its scalar ones (`x ** 3` differed in the last bit, `x ** 0.5` of -inf was nan, not
    # inf), and a reduction (`x - np.mean(x)`) mixed in the other rows
    points = list(zip(*(list(X[:, j]) for j in range(X.shape[1])))) or [()] * len(X)
    # NumPy's error state, not the warnings filters: those are the process's, not this
    # thread's (another thread of the program may be warning meanwhile)
    with np.errstate(all="ignore"):
        for k, consts in enumerate(g.consts):
            try:
                cs = [scalar(c) if type(c) in (int, float) else c for c in consts]
            except OverflowError:   # an int beyond X's dtype (10**400): called, the program
                rows[k] = np.nan    # raises on every row, so every row is nan (not an error
                continue            # for the whole population)
            _call_rows(t.target, cs, points, rows[k])
    return reduce_rows(rows, reduce, y)


def _call_rows(fn: Any, consts: list, points: list, out: np.ndarray) -> None:
    import numpy as np
    nan = float("nan")
    complex_types = (complex, np.complexfloating)
    for i, row in enumerate(points):
        try:
            r = fn(*consts, *row)
            # a complex result has no value in X's dtype: a Python complex raised here (nan),
            # a NumPy one was stored as its real part, with a ComplexWarning
            out[i] = nan if isinstance(r, complex_types) else r
        except Exception:  # noqa: BLE001 - NumPy's rules: a row never raises
            out[i] = nan


def evaluate(programs: Any, X: Any, reduce: str | None = None, y: Any = None,
             executor: Any = None, *, threads: int | None = None) -> np.ndarray:
    """See tierjit.evaluate."""
    if threads is not None and (type(threads) is not int or threads < 1):
        raise ValueError(f"evaluate: threads must be an int >= 1 or None (one per core); "
                         f"got {threads!r}")
    X, y = check_data(X, reduce, y)
    if executor is not None:
        from .executors import evaluate_on
        return evaluate_on(executor, programs, X, reduce, y)
    return run_plan(plan(programs), X, reduce, y, threads)
