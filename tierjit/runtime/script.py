"""Running a script as `__main__` the way `python script.py` does, with the import hook on.

What CPython 3.11 does for `python script.py args...`, and what `run_script` repeats:
`sys.argv` is `[script, *args]` as given; `sys.path[0]` is the directory of the script (links
resolved); the script runs in a fresh `__main__` module whose `__file__` is the script's path made
absolute by prefixing the working directory (not normalised: `//tmp/x.py` from `/`), with
`__spec__`, `__package__` and `__cached__` None, a `SourceFileLoader` as `__loader__`, and its
globals in CPython's order. An uncaught exception is printed by `sys.excepthook` (tracebacks start
at the script's `<module>` frame; `tierjit.runtime.tracebacks` removes the JIT's call path) and
the exit status is 1; an uncaught KeyboardInterrupt ends the process by SIGINT once the exit
handlers have run, as CPython does; SystemExit is left to the interpreter. A script that cannot be
opened is reported like CPython reports it, with exit status 2.
"""

from __future__ import annotations

import builtins
import importlib.machinery
import importlib.util
import os
import sys
import types

from . import importhook, tracebacks

_sigint_on_exit = False


def absolute(script: str) -> str:
    """The script's path as CPython's `_Py_abspath` makes it: the working directory, a
    separator, then the path, unless it is absolute already."""
    return script if os.path.isabs(script) else os.getcwd() + os.sep + script


def run_script(script: str, args: list[str], selection: importhook.Selection) -> int:
    """Run `script` as __main__ with the import hook; the exit status when it returns."""
    path = absolute(script)
    try:
        with open(path, "rb") as f:
            source = f.read()
    except OSError as e:
        print(f"tierjit run: can't open file {path!r}: [Errno {e.errno}] {e.strerror}",
              file=sys.stderr)
        return 2
    if os.path.isdir(path):
        print(f"tierjit run: {path!r} is a directory, not a script", file=sys.stderr)
        return 2
    sys.argv[:] = [script, *args]
    root = os.path.dirname(os.path.realpath(path))
    sys.path[0] = root
    selection.roots.append(root)
    module = _main_module(path)
    sys.modules["__main__"] = module
    importhook.install(selection)
    tracebacks.install()
    register_exit()
    try:
        code = importhook.compile_jitted(source, path, "__main__", selection)
    except SyntaxError as e:
        # CPython prints a script's syntax error without a traceback (it never ran)
        _print_uncaught(e.with_traceback(None), None)
        return 1
    try:
        exec(code, module.__dict__)
    except SystemExit:
        raise
    except BaseException as e:          # noqa: BLE001 - printed as CPython prints it
        _print_uncaught(e, code)
        if isinstance(e, KeyboardInterrupt):
            global _sigint_on_exit
            _sigint_on_exit = True
        return 1
    return 0


def module_name(path: str) -> str:
    """The name `import_script` gives a script: its file's stem when that is an identifier."""
    stem = os.path.splitext(os.path.basename(path))[0]
    return stem if stem.isidentifier() else "__tierjit_script__"


def import_script(script: str, selection: importhook.Selection) -> int:
    """Import `script` as a module named after its file (its `if __name__ == "__main__":` block
    does not run), with the import hook on; the exit status of a failure, else 0."""
    path = absolute(script)
    root = os.path.dirname(os.path.realpath(path))
    sys.argv[:] = [script]
    sys.path[0] = root
    selection.roots.append(root)
    importhook.install(selection)
    tracebacks.install()
    name = module_name(path)
    loader = importhook.JitLoader(name, path, selection)
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        loader.exec_module(module)
    except SystemExit:
        raise
    except BaseException as e:          # noqa: BLE001 - printed as CPython prints it
        _print_uncaught(e, None)
        return 1
    return 0


def _main_module(path: str) -> types.ModuleType:
    module = types.ModuleType("__main__")    # __name__, __doc__, __package__, __loader__, __spec__
    d = module.__dict__
    d["__loader__"] = importlib.machinery.SourceFileLoader("__main__", path)
    d["__annotations__"] = {}
    d["__builtins__"] = builtins
    d["__file__"] = path
    d["__cached__"] = None
    return module


def _print_uncaught(e: BaseException, code: types.CodeType | None) -> None:
    tracebacks.strip(e, start=code)
    sys.last_type, sys.last_value, sys.last_traceback = type(e), e, e.__traceback__
    sys.excepthook(type(e), e, e.__traceback__)


def register_exit() -> None:
    """Register the SIGINT exit (once). Exit handlers run last-registered first, so whatever
    must run before it (tierjit run's report) registers after this."""
    global _exit_registered
    if not _exit_registered:
        import atexit
        atexit.register(_exit_by_sigint)
        _exit_registered = True


_exit_registered = False


def _exit_by_sigint() -> None:
    """After an uncaught KeyboardInterrupt CPython exits by SIGINT (status -2, 130 in a shell),
    after the exit handlers; this one is registered before the script runs, so it runs last."""
    if not _sigint_on_exit:
        return
    import signal
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:      # noqa: BLE001 - a closed stream: nothing to flush
            pass
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGINT)
