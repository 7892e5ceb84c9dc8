"""A bounded work queue that is fair between sessions: the dashboard's one door to the scoring engine.

Why not a lock: with one lock, a Playground request waits behind another visitor's whole grid. Here every
piece of scoring work is a *job* with a session and a cost (candidates x metrics). Big grids are cut into
chunks (one cell each: metric x corruption type x reference count) before they are queued, so a small job
interleaves between chunks. Jobs come in three classes by cost: *quick* (cost <= ``quick``: a Playground
answer), *small* (cost <= ``small``: one drill-down cell, a view's few hundred pairs) and *big* (a grid's chunk,
a study). The dispatcher picks

1. quick jobs before small ones and small ones before big ones, so a Playground request is answered in about one
   piece's time while a view's pairs or a full grid are scored;
2. among jobs of the same class, sessions in turn (round-robin: the session served longest ago first),
   so two visitors' grids share the workers instead of one waiting for the other;
3. within a session, its cheapest job first, then first come first served;
4. a small or big job lets the jobs of the classes above it that are waiting run at each of its progress
   reports (:func:`checkpoint`), in its own thread, for up to :data:`YIELD_S` seconds each time, and between
   pieces of about :data:`PIECE_S` seconds of its metric calls (:func:`muttlab.engine.progress.in_pieces`; a
   metric that scores each item on its own gives the same scores): a job that cannot be cut (a severity curve,
   a study, a challenge set's scores) holds nobody for longer than a piece.

Quick or small jobs that do the same kind of work (a :class:`Joinable`: the Playground's scores of one set of
metrics) and wait at the same time run as one, whichever sessions they come from: one call for all of them
answers each. When a dozen visitors press Score at once, each metric's fixed costs (a JVM round trip, a cache
transaction) are paid once for all of them instead of once per request, one request after another.

The queue is bounded (per session and in total): a client that floods it gets :class:`QueueFull`, a
:class:`~muttlab.errors.MuttlabError` that says to wait, instead of growing the server's memory. Work that
nobody waits for any more does not run: :func:`gather` waits in short steps, asks the waiting session whether
it is still there, and cancels the session's jobs not yet started when it is not (a closed tab). A job already
running is told too: :func:`checkpoint`, which a long job calls at each of its progress reports, raises
:class:`Cancelled` in it from then on, so a published-numbers recomputation or a severity curve stops at its
next report instead of running on for minutes after its tab closed. The same checkpoint is where a job still
wanted lets those of the classes above it that arrived meanwhile run (4. above).

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
from typing import Callable, Hashable, Sequence

import numpy as np

from muttlab.engine.cache import ScoreCache
from muttlab.engine.progress import in_metric_call, in_pieces
from muttlab.engine.runner import Batch, _Scorer, _size
from muttlab.errors import MuttlabError
from muttlab.metrics.base import Metric
from muttlab.metrics.registry import Registry

# A job at or below this cost (candidates x metrics) is quick: the Playground scores a sentence and its ~15
# corruptions with up to ~30 metrics.
QUICK_COST = 500
# A job at or below this cost is small: one drill-down cell of one metric is ~1,300 trials x 2 sides. Under a
# burst of visitors, a view's 657 SICK pairs took 0.74 s and held every Playground answer that long.
SMALL_COST = 3000
MAX_PER_SESSION = 256
MAX_PENDING = 2048
POLL_S = 0.25  # how often a waiting session is asked whether it still wants its answer
YIELD_S = 2.0  # the most a job lets those of the classes above it run at one of its checkpoints before it goes on
# About how long a piece of a small or big job's metric call runs before the jobs of the classes above it may pass.
PIECE_S = 0.2


class QueueFull(MuttlabError):
    """Too much work is waiting; the request was not queued."""


class Cancelled(MuttlabError):
    """A running job was stopped at a :func:`checkpoint`: nobody waits for its answer any more."""


@dataclass(frozen=True)
class Joinable:
    """What a quick or small job does, in a form that lets the queue run it together with others of its ``kind``:
    ``run_all(items)`` gives one value per item, in order, each the value ``run_all([item])`` would give."""

    kind: Hashable
    item: object
    run_all: Callable[[list], list]

    def alone(self):
        return self.run_all([self.item])[0]


@dataclass(order=True)
class _Job:
    cost: int
    seq: int
    fn: Callable[[], object] = field(compare=False)
    future: Future = field(compare=False)
    session: str = field(compare=False, default="")
    # Set by gather when its waiter has gone: the job, if it runs, stops at its next checkpoint.
    abandoned: threading.Event = field(compare=False, default_factory=threading.Event)
    joinable: Joinable | None = field(compare=False, default=None)
    # The waiting jobs of the same kind taken with this one, to run in the same call (:meth:`FairQueue._joined`).
    joined: list[_Job] = field(compare=False, default_factory=list)


_RUNNING = threading.local()  # the job a worker thread is running


def checkpoint() -> None:
    """Where a long job may stop, and lets others pass: raises :class:`Cancelled` in a job whose waiters have all
    gone (:func:`gather` abandoned it); in a small or big job still wanted, runs the jobs of the classes above it
    waiting meanwhile (:meth:`FairQueue.serve_waiting`); does nothing outside the queue's threads."""
    job = getattr(_RUNNING, "job", None)
    if job is None:
        return
    if job.abandoned.is_set():
        raise Cancelled("stopped: nobody waits for this computation any more")
    queue = getattr(_RUNNING, "queue", None)
    # Inside a metric's call the metric objects are in use: other jobs wait for the call's end.
    if queue is not None and queue.level(job.cost) and not in_metric_call():
        queue.serve_waiting(queue.level(job.cost))


class FairQueue:
    """Jobs from many sessions, run on a few threads, quick first and sessions in turn (see module doc)."""

    def __init__(self, workers: int = 1, small: int = SMALL_COST, max_per_session: int = MAX_PER_SESSION,
                 max_pending: int = MAX_PENDING, quick: int = QUICK_COST):
        self.quick = min(quick, small)
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

    def submit(self, session: str, fn: Callable[[], object] | Joinable, cost: int = 1) -> Future:
        """Queue ``fn()`` for ``session``; its Future carries the value or the exception. A :class:`Joinable`
        runs together with the others of its kind waiting when its turn comes.

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
            joinable = fn if isinstance(fn, Joinable) else None
            job = _Job(max(0, int(cost)), next(self._seq), joinable.alone if joinable else fn, future, session,
                       joinable=joinable)
            self._waiting[session].append(job)
            # How gather tells a job that nobody waits for it (a Future holds no such flag of its own).
            future.abandon = job.abandoned.set
            self._cond.notify()
        return future

    def run(self, session: str, fn: Callable[[], object] | Joinable, cost: int = 1):
        """Queue ``fn()`` and wait for its value (re-raising its exception)."""
        return self.submit(session, fn, cost).result()

    def pending(self) -> int:
        """Jobs waiting (not running)."""
        return sum(len(jobs) for jobs in self._waiting.values())

    def level(self, cost: int) -> int:
        """A job's class by its cost: 0 quick, 1 small, 2 big."""
        return 0 if cost <= self.quick else 1 if cost <= self.small else 2

    # ----------------------------------------------------------------- dispatching

    def _next(self, below: int = 3) -> _Job | None:
        """The job to run next among the classes under ``below`` (:meth:`level`), removed from the waiting lists
        (caller holds the lock)."""
        best, best_key = None, None
        for session, jobs in self._waiting.items():
            if not jobs:
                continue
            job = min(jobs)  # cheapest, then oldest
            if self.level(job.cost) >= below:
                continue
            key = (self.level(job.cost), self._last_served.get(session, -1), job.seq)
            if best_key is None or key < best_key:
                best, best_key = job, key
        if best is None:
            return None
        self._take(best)
        if best.joinable is not None and self.level(best.cost) < 2:
            best.joined = self._joined(best)
        return best

    def _take(self, job: _Job) -> None:
        """``job`` out of the waiting lists, its session served now (caller holds the lock)."""
        jobs = self._waiting[job.session]
        jobs.remove(job)
        if not jobs:
            del self._waiting[job.session]
        self._last_served[job.session] = next(self._serves)

    def _joined(self, first: _Job) -> list[_Job]:
        """The jobs waiting of ``first``'s kind, oldest first, taken to run with it while their costs together stay
        within ``first``'s class: a joined call is not cut into pieces (caller holds the lock)."""
        limit = self.quick if self.level(first.cost) == 0 else self.small
        same = [job for jobs in self._waiting.values() for job in jobs
                if job.joinable is not None and job.joinable.kind == first.joinable.kind]
        taken, cost = [], first.cost
        for job in sorted(same, key=lambda j: j.seq):
            if cost + job.cost > limit:
                break
            self._take(job)
            taken.append(job)
            cost += job.cost
        return taken

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
                self.running += 1 + len(job.joined)
            self._execute(job)

    def _execute(self, job: _Job) -> None:
        """Run ``job`` (and the jobs joined to it) in this worker thread unless cancelled, each value or exception
        into its Future; the caller counted them in ``running`` when it took them."""
        outer = getattr(_RUNNING, "job", None)
        try:
            if job.joined:
                self._run_joined(job)
            elif job.future.set_running_or_notify_cancel():
                _RUNNING.job = job
                # A small or big job's metric calls are cut so that the jobs above its class run between the
                # pieces (a quick job run there, in this thread, scores its own jobs whole).
                with in_pieces(PIECE_S if self.level(job.cost) else None, checkpoint):
                    self._answer(job, job.fn)
        finally:
            _RUNNING.job = outer
            with self._cond:
                self.running -= 1 + len(job.joined)

    @staticmethod
    def _answer(job: _Job, call: Callable[[], object]) -> None:
        try:
            job.future.set_result(call())
        except BaseException as exc:  # handed to the waiting session, which shows it
            job.future.set_exception(exc)

    def _run_joined(self, first: _Job) -> None:
        """``first`` and the jobs joined to it in one ``run_all`` call. When the call fails, each job is run alone,
        so that one job's input never costs another its answer."""
        jobs = [job for job in (first, *first.joined) if job.future.set_running_or_notify_cancel()]
        if not jobs:
            return
        _RUNNING.job = None  # no one waiter may stop a call that answers several (checkpoint does nothing in it)
        try:
            values = jobs[0].joinable.run_all([job.joinable.item for job in jobs])
        except BaseException:  # noqa: BLE001 (each job is run alone below, and gets its own exception)
            values = None
        for i, job in enumerate(jobs):
            if values is not None:
                job.future.set_result(values[i])
            else:
                _RUNNING.job = job
                self._answer(job, job.fn)

    def serve_waiting(self, level: int, seconds: float = YIELD_S) -> int:
        """In a worker thread, inside a job of class ``level`` at one of its checkpoints: run the jobs of the
        classes above it waiting now, for at most ``seconds``, before that job goes on. Returns how many ran.

        The job is between two steps there (its progress report, or two pieces of a metric call), using no metric
        object, so the others use them alone, in this thread, as they would between two jobs: a Playground request
        waits for a study's next report or piece instead of its end."""
        deadline, ran = time.monotonic() + seconds, 0
        while time.monotonic() < deadline:
            with self._cond:
                job = self._next(below=level)
                if job is None:
                    break
                self.running += 1 + len(job.joined)
            self._execute(job)
            ran += 1 + len(job.joined)
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
