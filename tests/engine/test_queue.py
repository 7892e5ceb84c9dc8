"""The dashboard's fair work queue: small jobs first, sessions in turn, bounded."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from muttlab.engine.queue import FairQueue, QueueFull
from muttlab.engine.cache import ScoreCache
from muttlab.engine.runner import FIRST_PIECE_ITEMS, STORE_PIECE_ROWS, score_batches
from muttlab.metrics.base import Metric
from muttlab.metrics.registry import Registry
from muttlab.settings import Settings


@pytest.fixture
def queue():
    q = FairQueue(workers=1, small=10)
    yield q
    q.close()


def _blocked(queue: FairQueue) -> threading.Event:
    """Occupy the one worker until the returned event is set, so the next jobs queue up."""
    release, started = threading.Event(), threading.Event()
    queue.submit("blocker", lambda: (started.set(), release.wait(10)), cost=10_000)
    assert started.wait(10)
    return release


def _recorder(order: list, label: str):
    return lambda: order.append(label) or label


def test_a_small_job_submitted_after_long_ones_finishes_first(queue):
    release = _blocked(queue)
    order: list[str] = []
    big = [queue.submit("grid", _recorder(order, f"chunk{i}"), cost=5000) for i in range(3)]
    small = queue.submit("playground", _recorder(order, "small"), cost=3)
    release.set()
    assert small.result(10) == "small"
    for future in big:
        future.result(10)
    assert order == ["small", "chunk0", "chunk1", "chunk2"]


def test_sessions_take_turns(queue):
    release = _blocked(queue)
    order: list[str] = []
    futures = [queue.submit(session, _recorder(order, f"{session}{i}"), cost=100)
               for session in "abc" for i in range(3)]
    release.set()
    for future in futures:
        future.result(10)
    assert order == ["a0", "b0", "c0", "a1", "b1", "c1", "a2", "b2", "c2"]


def test_within_a_session_cheapest_first_then_in_order(queue):
    release = _blocked(queue)
    order: list[str] = []
    futures = [queue.submit("s", _recorder(order, label), cost=cost)
               for label, cost in (("x", 500), ("y", 200), ("z", 500), ("w", 200))]
    release.set()
    for future in futures:
        future.result(10)
    assert order == ["y", "w", "x", "z"]


def test_errors_reach_the_caller_and_the_queue_goes_on(queue):
    def fail():
        raise ValueError("bad input")

    with pytest.raises(ValueError, match="bad input"):
        queue.run("s", fail)
    assert queue.run("s", lambda: 42) == 42


def test_bounded_per_session_and_in_total():
    q = FairQueue(workers=1, max_per_session=2, max_pending=3)
    try:
        release = _blocked(q)
        q.submit("a", lambda: 1)
        q.submit("a", lambda: 2)
        with pytest.raises(QueueFull, match="this session"):
            q.submit("a", lambda: 3)
        q.submit("b", lambda: 4)
        with pytest.raises(QueueFull, match="server"):
            q.submit("c", lambda: 5)
        release.set()
    finally:
        q.close()


def _batch(tmp_path, n: int) -> tuple[Settings, list[str], list[list[str]]]:
    """Settings with a cache of their own, and ``n`` distinct candidates with one reference each."""
    settings = Settings(data_dir=None, cache_dir=tmp_path / "cache", workers=1)
    return settings, [f"candidate number {i}" for i in range(n)], [["a reference"]] * n


class _Gated(Metric):
    """Scores each candidate by its length; its first call waits for ``go`` (a small job has been queued)."""

    name = "gated-length"

    def __init__(self):
        self.sizes: list[int] = []
        self.inside, self.go = threading.Event(), threading.Event()

    def _score(self, candidates, references):
        self.sizes.append(len(candidates))
        self.inside.set()
        assert self.go.wait(10)
        return np.array([float(len(c)) for c in candidates])


class _GatedCorpus(_Gated):
    name = "gated-corpus"
    corpus_dependent = True


@pytest.mark.parametrize("metric_class", [_Gated, _GatedCorpus])
def test_a_small_job_passes_between_the_pieces_of_a_big_jobs_metric_call(queue, tmp_path, metric_class):
    """A study scores one batch of a few thousand pairs in one metric call; a Playground answer that needs the same
    metric waited for the whole call (6.8 s at p95 under benchmarks/bench_load.py's attacks). A metric that scores
    each item on its own is now called in pieces (the first of FIRST_PIECE_ITEMS, the next sized by its pace), and
    the small job runs between two of them, with the same scores; a corpus-dependent one is still called once, on
    the whole batch."""
    metric = metric_class()
    n = 3 * FIRST_PIECE_ITEMS + 7
    settings, candidates, references = _batch(tmp_path, n)
    order: list[str] = []

    def study():
        scores = score_batches(metric, [(candidates, references)], settings, registry=Registry())[0]
        order.append("study")
        return scores

    big = queue.submit("researcher", study, cost=n)
    assert metric.inside.wait(10), big.exception(0)
    small = queue.submit("visitor", _recorder(order, "playground"), cost=1)
    metric.go.set()
    assert small.result(30) == "playground"
    scores = big.result(30)
    assert np.array_equal(scores, [float(len(c)) for c in candidates])
    if metric.corpus_dependent:
        assert metric.sizes == [n] and order == ["study", "playground"]
    else:
        assert metric.sizes[0] == FIRST_PIECE_ITEMS and sum(metric.sizes) == n and order == ["playground", "study"]


class _Length(Metric):
    name = "length"
    corpus_dependent = True  # scored in one call: only the writing of its scores is cut

    def _score(self, candidates, references):
        return np.array([float(len(c)) for c in candidates])


def test_a_small_job_passes_between_the_pieces_of_a_big_jobs_cache_writes(queue, tmp_path, monkeypatch):
    """A severity curve writes thousands of scores to the cache at the end of each metric's call; each row gives up
    the interpreter's lock, so under load the write took 1.6 s and more, while the Playground requests waited.
    In a big job of the queue they are now written in pieces of STORE_PIECE_ROWS, and a small job queued during
    the first piece runs before the last (on f25a925: after the one write of all 2,007); every score is in the
    cache."""
    n = 2 * STORE_PIECE_ROWS + 7
    settings, candidates, references = _batch(tmp_path, n)
    order: list[str] = []
    written = ScoreCache.put_many

    def put_many(cache, items, shared=True):
        if not order:  # the first piece: a visitor's request arrives meanwhile
            queue.submit("visitor", _recorder(order, "playground"), cost=1)
        order.append(f"write {len(items)}")
        return written(cache, items, shared)

    monkeypatch.setattr(ScoreCache, "put_many", put_many)
    big = queue.submit("researcher", lambda: score_batches(_Length(), [(candidates, references)], settings,
                                                           registry=Registry())[0], cost=n)
    assert np.array_equal(big.result(30), [float(len(c)) for c in candidates])
    assert order == [f"write {STORE_PIECE_ROWS}", "playground", f"write {STORE_PIECE_ROWS}", "write 7"]
    monkeypatch.undo()
    monkeypatch.setattr(_Length, "_score", lambda *_: pytest.fail("a score was not written to the cache"))
    cached = score_batches(_Length(), [(candidates, references)], settings, registry=Registry())[0]
    assert np.array_equal(cached, big.result())

