"""The `tierjit` command: run a script with the JIT applied, and explain what it did.

    tierjit run [--report] [--trace FILE.json] [--plot FILE.png] [--perf]
                [--include PKG] [--exclude PATTERN] script.py [args...]
    tierjit explain [--no-run] script.py:function [args...]

Also `python -m tierjit ...`. Everything heavy (the compiler, rich, matplotlib) is imported
only when a subcommand needs it. Documented in docs/cli.md.
"""

from __future__ import annotations

import argparse
import os
import sys

EPILOG = "See docs/cli.md. Exit status: the script's, or 2 for a bad command line."


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tierjit", description="Run Python scripts with the tierjit JIT, and show what "
        "it did.", epilog=EPILOG)
    sub = parser.add_subparsers(dest="command", metavar="{run,explain}")
    sub.required = True

    run = sub.add_parser(
        "run", help="run a script with every function of it (and of the modules beside it) "
        "jitted", description="Run script.py as `python script.py` would, with tierjit.jit "
        "applied to its functions and to those of the modules in its directory.")
    run.add_argument("--report", action="store_true",
                     help="at exit, print a table per function to stderr: calls, tier, "
                          "sampled time per tier, compile time, deopts, specialisations")
    run.add_argument("--trace", metavar="FILE.json",
                     help="at exit, write a Chrome trace-event file (Perfetto, "
                          "chrome://tracing) of compiles, tier-ups, OSR entries and deopts")
    run.add_argument("--plot", metavar="FILE.png",
                     help="at exit, draw each hot function's tier over time (needs "
                          "matplotlib: pip install 'tierjit[plot]')")
    run.add_argument("--perf", action="store_true",
                     help="write /tmp/perf-<pid>.map so that `perf report` names JIT code "
                          "(same as TIERJIT_PERF=1)")
    _selection_options(run)
    run.add_argument("script", nargs="?", help="the script to run")
    run.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")

    explain = sub.add_parser(
        "explain", help="run a script, then explain what the JIT did with one function",
        description="Run script.py like `tierjit run`, then print tierjit.explain of one of "
                    "its functions: the line that keeps it in CPython, or its "
                    "specialisations, guards and deopt history.")
    explain.add_argument("--no-run", action="store_true",
                         help="only import the script (as a module named after its file, so "
                              "its `if __name__ == \"__main__\"` block does not run)")
    _selection_options(explain)
    explain.add_argument("target", metavar="script.py:function",
                         help="the script and the function's qualified name in it")
    explain.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")
    return parser


def _selection_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--include", metavar="PKG", action="append", default=[],
                   help="also jit the functions of package PKG and its submodules "
                        "(repeatable)")
    p.add_argument("--exclude", metavar="PATTERN", action="append", default=[],
                   help="do not jit modules or module.function names matching this "
                        "fnmatch pattern (repeatable)")


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    opts = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if opts.command == "run":
        return _run(opts, parser)
    return _explain(opts, parser)


def _run(opts: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from .runtime.importhook import Selection
    from .runtime.script import absolute, run_script

    if opts.script is None:
        parser.error("run: which script? usage: tierjit run [options] script.py [args...]")

    for flag, name in (("--trace", opts.trace), ("--plot", opts.plot)):
        if name is not None and not os.path.isdir(os.path.dirname(os.path.abspath(name))):
            parser.error(f"{flag} {name}: the directory {os.path.dirname(name)!r} "
                         "does not exist")
    if opts.plot is not None:
        from .tools.plot import check_available
        problem = check_available()
        if problem:
            parser.error(f"--plot: {problem}")
    if not os.path.isfile(absolute(opts.script)):
        # Checked here too, so the outputs below are not set up for nothing.
        return run_script(opts.script, opts.args, Selection([], [], []))
    if opts.perf:
        from . import config
        config.perf = True
    from .runtime.script import register_exit
    from .tools.session import Session
    register_exit()                 # before the session's: the report comes before a SIGINT exit
    Session(report=opts.report, trace=opts.trace, plot=opts.plot).start()
    return run_script(opts.script, opts.args, Selection([], opts.include, opts.exclude))


def _explain(opts: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from .runtime.importhook import Selection
    from .tools.explain import explain_in_script

    if opts.command == "explain" and opts.no_run and opts.args:
        parser.error("explain --no-run: the script does not run, so it takes no arguments")
    script, sep, qualname = opts.target.rpartition(":")
    if not sep or not script or not qualname:
        parser.error(f"expected script.py:function, got {opts.target!r}")
    return explain_in_script(script, qualname, opts.args, run=not opts.no_run,
                             selection=Selection([], opts.include, opts.exclude))


if __name__ == "__main__":      # pragma: no cover - python -m tierjit.cli
    sys.exit(main())
