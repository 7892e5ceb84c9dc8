"""A bounded work queue that is fair between sessions: the dashboard's one door to the scoring engine.

Why not a lock: with one lock, a Playground request waits behind another visitor's whole grid. Here every
piece of scoring work is a *job* with a session and a cost (candidates x metrics). Big grids are cut into
chunks (one cell each: metric x corruption type x reference count) before they are queued, so a small job
interleaves between chunks. The dispatcher picks

1. small jobs (cost <= ``small``) before big ones, so a Playground request or one drill-down cell is
   answered in about one chunk's time while a full grid runs;
2. among jobs of the same class, sessions in turn (round-robin: the session served longest ago first),
   so two visitors' grids share the workers instead of one waiting for the other;
3. within a session, its cheapest job first, then first come first served;
4. a big job that cannot be cut (a severity curve, a study, a challenge set's scores) lets the small jobs
   waiting run at each of its progress reports (:func:`checkpoint`), in its own thread, for up to
   :data:`YIELD_S` seconds each time, and between pieces of about :data:`PIECE_S` seconds of its metric calls
   (:func:`muttlab.engine.progress.in_pieces`; a metric that scores each item on its own gives the same scores).

The queue is bounded (per session and in total): a client that floods it gets :class:`QueueFull`, a
:class:`~muttlab.errors.MuttlabError` that says to wait, instead of growing the server's memory. Work that
nobody waits for any more does not run: :func:`gather` waits in short steps, asks the waiting session whether
it is still there, and cancels the session's jobs not yet started when it is not (a closed tab). A job already
running is told too: :func:`checkpoint`, which a long job calls at each of its progress reports, raises
:class:`Cancelled` in it from then on, so a published-numbers recomputation or a severity curve stops at its
next report instead of running on for minutes after its tab closed. The same checkpoint is where a big job
still wanted lets the small jobs that arrived meanwhile run (4. below).

Jobs run on ``workers`` threads of this process (default 1: metric objects such as a METEOR pipe are shared
by all sessions and used by one job at a time). :func:`shared_queue` is the process-wide instance; it lives
in this module, not in a Streamlit cache, so no client action can clear it.

A grid run reaches the queue through :class:`QueuedScorer`, an executor of the runner's plan: the runner
plans (what to score, what the cache has), merges and judges once, as for a run in this process or on a
Dask cluster; the queue only decides when each piece of the scoring runs, one grid cell's worth at a time.
"""
from __future__ import annotations

import itertools
import threading
import time
from collections import defaultdict
from concurrent.futures import Future, wait
from dataclasses import dataclass, field
from functools import partial
from typing import Callable, Sequence

import numpy as np

from muttlab.engine.cache import ScoreCache
from muttlab.engine.progress import in_metric_call, in_pieces
from muttlab.engine.runner import Batch, _Scorer, _size
from muttlab.errors import MuttlabError
from muttlab.metrics.base import Metric
from muttlab.metrics.registry import Registry

# A job at or below this cost (candidates x metrics) counts as small: the Playground scores a handful of
# candidates with ~10 metrics; one drill-down cell of one metric is ~1,300 trials x 2 sides.
SMALL_COST = 3000
MAX_PER_SESSION = 256
MAX_PENDING = 2048
POLL_S = 0.25  # how often a waiting session is asked whether it still wants its answer
YIELD_S = 2.0  # the most a big job lets small ones run at one of its checkpoints before it goes on
# About how long a piece of a big job's metric call runs before the small jobs waiting may pass.
PIECE_S = 0.2


class QueueFull(MuttlabError):
    """Too much work is waiting; the request was not queued."""


class Cancelled(MuttlabError):
    """A running job was stopped at a :func:`checkpoint`: nobody waits for its answer any more."""


@dataclass(order=True)
class _Job:
    cost: int
    seq: int
    fn: Callable[[], object] = field(compare=False)
    future: Future = field(compare=False)
    session: str = field(compare=False, default="")
    # Set by gather when its waiter has gone: the job, if it runs, stops at its next checkpoint.
    abandoned: threading.Event = field(compare=False, default_factory=threading.Event)


_RUNNING = threading.local()  # the job a worker thread is running


def checkpoint() -> None:
    """Where a long job may stop, and lets others pass: raises :class:`Cancelled` in a job whose waiters have all
    gone (:func:`gather` abandoned it); in a big job still wanted, runs the small jobs waiting meanwhile
    (:meth:`FairQueue.serve_small`); does nothing outside the queue's threads."""
    job = getattr(_RUNNING, "job", None)
    if job is None:
        return
    if job.abandoned.is_set():
        raise Cancelled("stopped: nobody waits for this computation any more")
    queue = getattr(_RUNNING, "queue", None)
    # Inside a metric's call the metric objects are in use: other jobs wait for the call's end.
    if queue is not None and job.cost > queue.small and not in_metric_call():
        queue.serve_small()


class FairQueue:
    """Jobs from many sessions, run on a few threads, small first and sessions in turn (see module doc)."""

    def __init__(self, workers: int = 1, small: int = SMALL_COST, max_per_session: int = MAX_PER_SESSION,
                 max_pending: int = MAX_PENDING):
        self.small = small
        self.max_per_session = max_per_session
        self.max_pending = max_pending
        self._cond = threading.Condition()
        self._waiting: dict[str, list[_Job]] = defaultdict(list)
        self._last_served: dict[str, int] = {}
        self._serves = itertools.count()
        self._seq = itertools.count()
        self._closed = False
        self.running = 0
        self._threads = [threading.Thread(target=self._work, name=f"muttlab-queue-{i}", daemon=True)
                         for i in range(max(1, workers))]
        for thread in self._threads:
            thread.start()

    # ----------------------------------------------------------------- submitting

    def submit(self, session: str, fn: Callable[[], object], cost: int = 1) -> Future:
        """Queue ``fn()`` for ``session``; its Future carries the value or the exception.

        Raises:
          QueueFull: the session, or the whole server, has too much work waiting.
        """
        future: Future = Future()
        with self._cond:
            if self._closed:
                raise MuttlabError("the scoring queue is shut down (the server is stopping)")
            mine = len(self._waiting.get(session, ()))
            if mine >= self.max_per_session:
                raise QueueFull(f"this session already has {mine} scoring jobs waiting; wait for them to finish "
                                "before asking for more")
            if self.pending() >= self.max_pending:
                raise QueueFull("the server has too much scoring work waiting; try again in a minute")
            job = _Job(max(0, int(cost)), next(self._seq), fn, future, session)
            self._waiting[session].append(job)
            # How gather tells a job that nobody waits for it (a Future holds no such flag of its own).
            future.abandon = job.abandoned.set
            self._cond.notify()
        return future

    def run(self, session: str, fn: Callable[[], object], cost: int = 1):
        """Queue ``fn()`` and wait for its value (re-raising its exception)."""
        return self.submit(session, fn, cost).result()

    def pending(self) -> int:
        """Jobs waiting (not running)."""
        return sum(len(jobs) for jobs in self._waiting.values())

    # ----------------------------------------------------------------- dispatching

    def _next(self, small_only: bool = False) -> _Job | None:
        """The job to run next (with ``small_only``, the next small one), removed from the waiting lists (caller
        holds the lock)."""
        best, best_key = None, None
        for session, jobs in self._waiting.items():
            if not jobs:
                continue
            job = min(jobs)  # cheapest, then oldest
            if small_only and job.cost > self.small:
                continue
            key = (job.cost > self.small, self._last_served.get(session, -1), job.seq)
            if best_key is None or key < best_key:
                best, best_key = job, key
        if best is None:
            return None
        jobs = self._waiting[best.session]
        jobs.remove(best)
        if not jobs:
            del self._waiting[best.session]
        self._last_served[best.session] = next(self._serves)
        return best

    def _work(self) -> None:
        _RUNNING.queue = self
        while True:
            with self._cond:
                job = self._next()
                while job is None:
                    if self._closed:
                        return
                    self._cond.wait()
                    job = self._next()
                self.running += 1
            self._execute(job)

    def _execute(self, job: _Job) -> None:
        """Run ``job`` in this worker thread (unless it was cancelled), its value or exception into its Future;
        the caller counted it in ``running`` when it took it."""
        outer = getattr(_RUNNING, "job", None)
        try:
            if job.future.set_running_or_notify_cancel():
                _RUNNING.job = job
                # A big job's metric calls are cut so that small jobs run between the pieces (a small job run
                # there, in this thread, scores its own jobs whole).
                big = job.cost > self.small
                try:
                    with in_pieces(PIECE_S if big else None, checkpoint):
                        job.future.set_result(job.fn())
                except BaseException as exc:  # handed to the waiting session, which shows it
                    job.future.set_exception(exc)
        finally:
            _RUNNING.job = outer
            with self._cond:
                self.running -= 1

    def serve_small(self, seconds: float = YIELD_S) -> int:
        """In a worker thread, inside a big job at one of its checkpoints: run the small jobs waiting now, for at
        most ``seconds``, before the big job goes on. Returns how many ran.

        The big job is between two steps there (its progress report), using no metric object, so the small jobs
        use them alone, in this thread, as they would between two jobs: a Playground request waits for a big job's
        next report instead of its end."""
        deadline, ran = time.monotonic() + seconds, 0
        while time.monotonic() < deadline:
            with self._cond:
                job = self._next(small_only=True)
                if job is None:
                    break
                self.running += 1
            self._execute(job)
            ran += 1
        return ran

    def close(self, wait: bool = True) -> None:
        """Stop taking jobs; cancel the waiting ones; let running ones finish."""
        with self._cond:
            self._closed = True
            for jobs in self._waiting.values():
                for job in jobs:
                    job.future.cancel()
            self._waiting.clear()
            self._cond.notify_all()
        if wait:
            for thread in self._threads:
                thread.join()


def gather(futures: Sequence[Future], still_wanted: Callable[[], None],
           on_done: Callable[[int], None] | None = None, poll_s: float = POLL_S) -> list:
    """The futures' values, in order, waiting for each in steps of ``poll_s``.

    Between steps ``still_wanted()`` is called; it raises when nobody waits for the answer any more (the
    visitor closed the tab or asked for something else, or its share of the demo is used up). Then, and on any
    other failure, every job of ``futures`` not yet started is cancelled (the queue skips it) and every one
    already running is abandoned: a thread cannot be stopped from outside, so it stops at its next
    :func:`checkpoint`. ``on_done(i)`` is called once the ``i``-th value is in.
    """
    values = []
    try:
        for i, future in enumerate(futures):
            while not wait([future], timeout=poll_s).done:
                still_wanted()
            values.append(future.result())
            if on_done is not None:
                on_done(i)
    except BaseException:
        for future in futures:
            future.cancel()
            getattr(future, "abandon", lambda: None)()
        raise
    return values


_SHARED: FairQueue | None = None
_SHARED_LOCK = threading.Lock()


def shared_queue(workers: int = 1) -> FairQueue:
    """The process-wide queue (created on first use) that every dashboard session submits to."""
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None:
            _SHARED = FairQueue(workers=workers)
        return _SHARED



class QueuedScorer(_Scorer):
    """The runner's scorer with its scoring sent through a :class:`FairQueue` for one session, in pieces of
    at most one grid cell (a cell's two sides: originals and corruptions), so that other sessions' small
    requests are served between two cells of a grid.

    The runner's cache look-ups and stores happen in the caller's thread; only scoring (the use of the
    shared metric objects) runs on the queue. ``where`` scores each piece: in the queue's thread by default,
    or a :class:`~muttlab.engine.distributed.DaskScorer` that sends it to a cluster. ``still_wanted`` is
    :func:`gather`'s: it raises once nobody waits for the grid.
    """

    def __init__(self, cache: ScoreCache, registry: Registry, queue: FairQueue, session: str,
                 where: _Scorer | None = None, still_wanted: Callable[[], None] = lambda: None):
        super().__init__(cache, workers=1, registry=registry)
        self.queue = queue
        self.session = session
        self.still_wanted = still_wanted
        self.where = where or _Scorer(cache, 1, registry)
        self._piece = 1

    def score(self, metric: Metric, batches: Sequence[Batch]) -> list[np.ndarray]:
        # The runner's batches are the sides of the grid's cells.
        self._piece = max(1, 2 * max((len(c) for c, _ in batches), default=1))
        return super().score(metric, batches)

    def _parallel(self, metric: Metric, jobs: list[Batch]) -> list[np.ndarray]:
        pieces, owner = [], []
        for j, (cands, refs) in enumerate(jobs):
            # A corpus-dependent metric's batch is scored whole: its statistics are the batch's.
            step = len(cands) if metric.corpus_dependent else self._piece
            for s in range(0, len(cands), max(1, step)):
                pieces.append((cands[s:s + step], refs[s:s + step]))
                owner.append(j)
        # The fraction of each piece done, as its metric reports it from the queue's thread; drawn from this
        # thread at each poll (a Streamlit element cannot be updated from another thread).
        inside = [0.0] * len(pieces)
        futures = [self.queue.submit(self.session, self._job(metric, piece, inside, i), cost=len(piece[0]))
                   for i, piece in enumerate(pieces)]

        sizes = [_size([piece]) for piece in pieces]

        def poll() -> None:
            self.still_wanted()
            self._partial([(sizes[i], f) for i, f in enumerate(inside) if f])

        def done(i: int) -> None:
            inside[i] = 0.0
            self._scored([pieces[i]])

        # A grid nobody waits for any more (the tab closed) stops: gather cancels its pieces not yet started.
        scored = [value[0] for value in gather(futures, poll, on_done=done)]
        parts: list[list[np.ndarray]] = [[] for _ in jobs]
        for j, scores in zip(owner, scored):
            parts[j].append(scores)
        return [np.concatenate(p) if p else np.zeros(0) for p in parts]

    def scores_here(self, metric: Metric) -> bool:
        return self.where.scores_here(metric)

    def _job(self, metric: Metric, piece: Batch, inside: list[float], i: int) -> Callable[[], list[np.ndarray]]:
        """The queue's job for one piece. Scored in the queue's thread, a metric that reports within a call
        writes its count into ``inside[i]`` and, at each report, stops if nobody waits any more
        (:func:`checkpoint`); a cluster's scorer scores the piece as it scores any other."""
        if type(self.where) is not _Scorer or not getattr(metric, "reports_progress", False):
            return partial(self.where._parallel, metric, [piece])

        def report(fraction: float) -> None:
            checkpoint()
            inside[i] = fraction

        return partial(self.where._parallel, metric, [piece], on_partial=report)

    def close(self) -> None:
        self.where.close()
        super().close()
