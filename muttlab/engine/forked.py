"""Function calls computed in a forked copy of this process, while this process goes on with other work.

Forking costs a few milliseconds where a spawned worker costs a fresh interpreter, its imports and a rebuild of
whatever the process has already computed: that is what makes a second core pay off for a grid that takes one
or two seconds. The copy sees the process's memory as it was at the fork, so the calls must not touch what a
copy cannot share (an open SQLite connection, a JVM, a model on a GPU); only their return values come back,
pickled, each as soon as it is computed.

:class:`ForkedCalls` shares a grid's scoring with a child; :func:`computed_apart` hands a server's long computation
over data (a study with a small answer) to a child at a lower priority, so that the server's own threads keep the
interpreter and the CPU for its visitors.
"""
from __future__ import annotations

import multiprocessing
import os
import pickle
import sys
import traceback
from typing import Callable, Iterator, Sequence

from muttlab.errors import MuttlabError

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


def _apart(send, fn: Callable[[Callable[..., None]], object], niceness: int) -> None:
    if niceness:
        os.nice(niceness)

    def report(*args) -> None:
        send.send(("progress", args))

    try:
        outcome = ("value", fn(report))
    except BaseException as exc:  # handed to the parent, which raises it there
        exc.add_note("raised in the computation's process:\n" + traceback.format_exc())
        outcome = ("error", _portable(exc))
    try:
        send.send(outcome)
    except Exception:  # a value that cannot be pickled: said in words
        send.send(("error", MuttlabError(f"the computation's answer could not be handed back: {outcome[1]!r:.200}")))


def _portable(exc: BaseException) -> BaseException:
    """``exc``, or one in its words where a pickle would not bring it back whole (an exception whose arguments
    are not its constructor's)."""
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:
        kind = MuttlabError if isinstance(exc, MuttlabError) else RuntimeError
        return kind(str(exc) if kind is MuttlabError else f"{type(exc).__name__}: {exc}")


def computed_apart(fn: Callable[[Callable[..., None]], object], progress: Callable[..., None] | None = None,
                   still_wanted: Callable[[], None] = lambda: None, niceness: int = 0, poll_s: float = 0.25):
    """``fn(report)`` computed in a forked child at ``niceness`` (added to this process's), while this process
    goes on: a long pure-Python computation then neither holds this process's interpreter lock nor takes the
    CPU from its other threads (a server's visitors). Each ``report(*args)`` of the child is made here as
    ``progress(*args)``, in the calling thread; ``still_wanted()`` is called here between reports, every
    ``poll_s`` seconds. When either raises, the child is stopped and the exception goes on; the child's own
    exception is raised here. ``fn`` must not use what a copy cannot share (an open SQLite connection, a JVM's
    pipe): this is for computations over data, not for the server's metric objects.

    Where forking is not dependable (:data:`AVAILABLE`), ``fn`` runs here.

    Raises:
      MuttlabError: the child ended without an answer (killed, out of memory).
    """
    if not AVAILABLE:
        return fn(progress or (lambda *args: None))
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    process = context.Process(target=_apart, args=(send, fn, niceness), daemon=True)
    process.start()
    send.close()
    try:
        while True:
            if not receive.poll(poll_s):
                still_wanted()
                continue
            try:
                kind, value = receive.recv()
            except (EOFError, OSError):
                process.join()
                raise MuttlabError(f"the computation's process ended without an answer (exit code "
                                   f"{process.exitcode}); try again, or with less data") from None
            if kind == "progress":
                if progress is not None:
                    progress(*value)
            elif kind == "error":
                raise value
            else:
                return value
    finally:
        if process.is_alive():
            process.terminate()
        process.join()
        receive.close()
