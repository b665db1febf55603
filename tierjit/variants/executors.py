"""`evaluate(..., executor=...)`: a population spread over an Executor or a Dask cluster.

Analogue: shipping a query plan to workers. Programs travel as *descriptions*, never as code
objects or compiled functions: a structure is its source with the float literals abstracted
plus what its free names need (`TemplateDesc`), and its variants are rows of constants; a
population in the array encoding is its arrays. Each worker process rebuilds a structure once
(`_remote_templates`), compiles the native evaluator once per dtype, and reuses both for every
later task. The same planner and evaluator run locally and remotely, so the results are
identical to local evaluation, bit for bit.

Works with any `concurrent.futures.Executor` (threads or processes) and with a
`distributed.Client` (X and y are scattered to every worker once per call).
"""

from __future__ import annotations

import ast
import builtins
import hashlib
import pickle
import threading
import types
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .population import Encoded, Grouped, Plan, plan, result_array, run_plan
from .template import Template

if TYPE_CHECKING:  # pragma: no cover - typing only
    import numpy as np

TASKS_PER_WORKER = 2


@dataclass(frozen=True, eq=False)
class TemplateDesc:
    """A structure as it travels: source of its definition (params free), the imports before
    it, its params, and the values of the free names it reads — modules by name."""

    source: str
    name: str
    params: tuple[str, ...]
    env: tuple[tuple[str, str, Any], ...]   # (name, "module" | "value", module name | value)
    digest: str                             # of all the above: the workers' cache key


def describe(t: Template) -> TemplateDesc:
    from .source import arg_names, assigned_names, read_names
    free = read_names(t.fdef) - set(arg_names(t.fdef)) - set(assigned_names(t.fdef)) - \
        set(t.params)
    # the prelude travels as source and runs on the worker: what it defines (helper
    # functions, imports) is rebuilt there, and shipping a helper as a value failed (a
    # function of a generated source does not pickle); what its helpers read must travel
    defined = set()
    for s in t._prelude:
        if isinstance(s, ast.FunctionDef):
            defined.add(s.name)
            free |= read_names(s) - set(arg_names(s)) - set(assigned_names(s))
        else:
            defined |= {(a.asname or a.name).split(".")[0] for a in s.names}
    free -= defined
    env = []
    for name in sorted(free):
        if name not in t.namespace:
            continue                                   # a builtin (or undefined, as here)
        v = t.namespace[name]
        if isinstance(v, types.ModuleType):
            env.append((name, "module", v.__name__))
        else:
            env.append((name, "value", v))
    source = "".join(ast.unparse(s) + "\n" for s in t._prelude) + ast.unparse(t.fdef) + "\n"
    parts = (source, t.name, t.params, tuple(env))
    digest = hashlib.sha1(pickle.dumps(parts)).hexdigest()
    return TemplateDesc(*parts, digest)


_remote_templates: dict[str, Template] = {}
_remote_lock = threading.Lock()


def template_from(desc: TemplateDesc) -> Template:
    """The worker's Template for a description, built once per process."""
    t = _remote_templates.get(desc.digest)
    if t is None:
        with _remote_lock:
            t = _remote_templates.get(desc.digest)
            if t is None:
                import importlib

                from .source import parse_function
                ns: dict[str, Any] = {"__builtins__": builtins}
                for name, kind, v in desc.env:
                    ns[name] = importlib.import_module(v) if kind == "module" else v
                prelude, fdef = parse_function(desc.source, desc.name, "evaluate")
                t = _remote_templates[desc.digest] = Template(fdef, desc.params, ns,
                                                       own_namespace=True, prelude=prelude)
    return t


@dataclass
class Task:
    """Part of a population for one worker call; positions are rows of the final result."""

    groups: list      # (TemplateDesc, consts list, positions list)
    encoded: list     # (Programs, positions array)
    size: int = 0


def run_task(task: Task, X: np.ndarray, reduce: str | None,
             y: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Worker side: evaluate one task; return (result rows' positions, results)."""
    import numpy as np
    pieces: list = []
    positions: list = []
    k = 0
    for desc, consts, pos in task.groups:
        pieces.append(Grouped(template_from(desc), consts, list(range(k, k + len(consts)))))
        positions.append(np.asarray(pos, np.int64))
        k += len(consts)
    for progs, pos in task.encoded:
        pieces.append(Encoded(progs, np.arange(k, k + len(progs))))
        positions.append(np.asarray(pos, np.int64))
        k += len(progs)
    res = run_plan(Plan(k, pieces), X, reduce, y, threads=1)
    return np.concatenate(positions) if positions else np.zeros(0, np.int64), res


def split(p: Plan, n_tasks: int) -> list[Task]:
    """Cut a plan into about n_tasks tasks of similar numbers of programs."""
    import numpy as np
    per = max(1, -(-p.n_programs // max(n_tasks, 1)))
    tasks = [Task([], [])]
    descs: dict[Template, TemplateDesc] = {}

    def room() -> int:
        if tasks[-1].size >= per:
            tasks.append(Task([], []))
        return per - tasks[-1].size

    for piece in p.pieces:
        if isinstance(piece, Grouped):
            desc = descs.get(piece.template) or descs.setdefault(piece.template,
                                                                  describe(piece.template))
            lo = 0
            while lo < len(piece.consts):
                hi = min(len(piece.consts), lo + room())
                tasks[-1].groups.append((desc, piece.consts[lo:hi], piece.positions[lo:hi]))
                tasks[-1].size += hi - lo
                lo = hi
        else:
            progs = piece.progs
            pos = np.arange(len(progs)) if piece.positions is None else piece.positions
            lo = 0
            while lo < len(progs):
                hi = min(len(progs), lo + room())
                tasks[-1].encoded.append((progs.take(lo, hi), pos[lo:hi]))
                tasks[-1].size += hi - lo
                lo = hi
    return [t for t in tasks if t.size]


def _is_dask_client(ex: Any) -> bool:
    return type(ex).__module__.startswith("distributed") and hasattr(ex, "scatter")


def evaluate_on(executor: Any, programs: Any, X: np.ndarray, reduce: str | None,
                y: np.ndarray | None) -> np.ndarray:
    """evaluate() with the work spread over `executor` (see the module docstring)."""
    p = plan(programs)
    if _is_dask_client(executor):
        workers = max(1, sum(executor.nthreads().values()))
        tasks = split(p, workers * TASKS_PER_WORKER)
        # hash=False: a fresh key per call. With the default content hash, scattering the
        # same X again can race with the release of the previous call's copy, and the
        # scheduler then cancels the new tasks for "lost dependencies".
        Xf = executor.scatter(X, broadcast=True, hash=False)
        yf = executor.scatter(y, broadcast=True, hash=False) if y is not None else None
        futures = [executor.submit(run_task, t, Xf, reduce, yf, pure=False) for t in tasks]
        results = executor.gather(futures)
    elif hasattr(executor, "submit"):
        from .vm import cores
        workers = getattr(executor, "_max_workers", None) or cores()
        tasks = split(p, workers * TASKS_PER_WORKER)
        futures = [executor.submit(run_task, t, X, reduce, y) for t in tasks]
        results = [f.result() for f in futures]
    else:
        raise TypeError(f"evaluate: executor must be a concurrent.futures.Executor or a "
                        f"distributed.Client; got {type(executor).__name__}")
    out = result_array(p.n_programs, X, reduce)
    for pos, res in results:
        out[pos] = res
    return out

