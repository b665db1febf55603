"""Python work done on a second thread while the compiling thread waits in LLVM.

llvmlite's calls release the GIL, so while LLVM optimises a module and generates its code (tens
to hundreds of milliseconds for a kernel) the interpreter has nothing to do. A compile hands
work that does not depend on LLVM's result (its tier-0 code, for one) to a short-lived thread
started just before LLVM's long calls and joined after them: on a second core that work is
free, on one core it costs what it did. Analogue: a build running independent steps in
parallel.
"""

from __future__ import annotations

import threading

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from types import TracebackType


class Alongside:
    """`with Alongside(work):` runs `work()` on its own thread during the block; leaving the
    block waits for it and raises what it raised (unless the block itself raised). Nothing
    happens for `work` None. `work` must not need a lock the block holds."""

    __slots__ = ("_error", "_thread", "_work")

    def __init__(self, work: Callable[[], object] | None) -> None:
        self._work = work
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None

    def __enter__(self) -> Alongside:
        if self._work is not None:
            thread = threading.Thread(target=self._run, name="tierjit-alongside", daemon=True)
            try:
                thread.start()
                self._thread = thread
            except RuntimeError:        # no thread to be had: the work is done first
                self._run()
        return self

    def _run(self) -> None:
        try:
            self._work()                                # type: ignore[misc]
        except BaseException as e:  # noqa: BLE001 - handed to the thread that waits for it
            self._error = e

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        error, self._error = self._error, None
        if error is not None and exc_type is None:
            raise error
