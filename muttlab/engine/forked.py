"""One function call computed in a forked copy of this process, while this process goes on with other work.

Forking costs a few milliseconds where a spawned worker costs a fresh interpreter, its imports and a rebuild of
whatever the process has already computed (the runner's n-gram tables): that is what makes a second core pay
off for a grid that takes one or two seconds. The copy sees the process's memory as it was at the fork, so
the call must not touch what a copy cannot share (an open SQLite connection, a JVM, a model on a GPU); only
its return value comes back, pickled.
"""
from __future__ import annotations

import multiprocessing
import sys
from typing import Callable

# Forking a process that holds threads or native libraries is only dependable on Linux (macOS's system
# frameworks are not fork-safe, and Windows has no fork).
AVAILABLE = sys.platform.startswith("linux")


def _child(send, call: Callable[[], object]) -> None:
    try:
        outcome = (True, call())
    except BaseException as exc:  # handed back to the parent, which raises it there
        outcome = (False, exc)
    try:
        send.send(outcome)
    except Exception:  # an exception that cannot be pickled: the parent sees a child that said nothing
        pass


class ForkedCall:
    """``call()`` in a forked child, started at once; :meth:`result` waits for its value (or its exception).

    ``result`` returns ``fallback()`` when the child ended without an answer (killed, out of memory, an
    unpicklable exception), so a lost child costs time, never a result.
    """

    def __init__(self, call: Callable[[], object], fallback: Callable[[], object]):
        self._fallback = fallback
        context = multiprocessing.get_context("fork")
        self._receive, send = context.Pipe(duplex=False)
        # multiprocessing flushes stdout and stderr before forking, so nothing buffered is written twice.
        self._process = context.Process(target=_child, args=(send, call), daemon=True)
        self._process.start()
        send.close()

    def result(self):
        try:
            ok, value = self._receive.recv()
        except (EOFError, OSError):
            self.close()
            return self._fallback()
        self._release()
        if not ok:
            raise value
        return value

    def close(self) -> None:
        """Stop the child if it is still running (its answer is no longer wanted); safe to call twice."""
        if self._process is not None and self._process.is_alive():
            self._process.terminate()
        self._release()

    def _release(self) -> None:
        if self._process is not None:
            self._process.join()
            self._receive.close()
            self._process = None
