"""Function calls computed in a forked copy of this process, while this process goes on with other work.

Forking costs a few milliseconds where a spawned worker costs a fresh interpreter, its imports and a rebuild of
whatever the process has already computed: that is what makes a second core pay off for a grid that takes one
or two seconds. The copy sees the process's memory as it was at the fork, so the calls must not touch what a
copy cannot share (an open SQLite connection, a JVM, a model on a GPU); only their return values come back,
pickled, each as soon as it is computed.
"""
from __future__ import annotations

import multiprocessing
import sys
from typing import Callable, Iterator, Sequence

# Forking a process that holds threads or native libraries is only dependable on Linux (macOS's system
# frameworks are not fork-safe, and Windows has no fork).
AVAILABLE = sys.platform.startswith("linux")


def _child(send, calls: Sequence[Callable[[], object]]) -> None:
    for call in calls:
        try:
            outcome = (True, call())
        except BaseException as exc:  # handed back to the parent, which raises it there
            outcome = (False, exc)
        try:
            send.send(outcome)
        except Exception:  # an exception that cannot be pickled: the parent sees a child that said nothing
            return
        if not outcome[0]:
            return


class ForkedCalls:
    """``calls``, one after the other, in a forked child started at once; :meth:`results` yields their values
    in order as the child hands each over (and raises the exception of a call that raised).

    When the child ends without an answer (killed, out of memory, an unpicklable exception), the calls it did
    not answer are made here: a lost child costs time, never a result.
    """

    def __init__(self, calls: Sequence[Callable[[], object]]):
        self._calls = list(calls)
        context = multiprocessing.get_context("fork")
        self._receive, send = context.Pipe(duplex=False)
        # multiprocessing flushes stdout and stderr before forking, so nothing buffered is written twice.
        self._process = context.Process(target=_child, args=(send, self._calls), daemon=True)
        self._process.start()
        send.close()

    def results(self) -> Iterator[object]:
        for i, call in enumerate(self._calls):
            try:
                ok, value = self._receive.recv()
            except (EOFError, OSError):
                self.close()
                yield from (c() for c in self._calls[i:])
                return
            if not ok:
                self.close()
                raise value
            yield value
        self._release()

    def close(self) -> None:
        """Stop the child if it is still running (its answers are no longer wanted); safe to call twice."""
        if self._process is not None and self._process.is_alive():
            self._process.terminate()
        self._release()

    def _release(self) -> None:
        if self._process is not None:
            self._process.join()
            self._receive.close()
            self._process = None
