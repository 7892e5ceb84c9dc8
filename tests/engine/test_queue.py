"""The dashboard's fair work queue: small jobs first, sessions in turn, bounded."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from muttlab.engine.queue import FairQueue, Joinable, QueueFull
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


class _Together:
    """A ``run_all`` that records each call's items and answers each item doubled (or fails on ``"bad"``)."""

    def __init__(self):
        self.calls: list[list] = []

    def __call__(self, items: list) -> list:
        self.calls.append(list(items))
        if "bad" in items:
            raise ValueError("bad item")
        return [item * 2 for item in items]


def test_joinable_jobs_waiting_together_run_in_one_call_each_with_its_answer(queue):
    release = _blocked(queue)
    together, other = _Together(), _Together()
    futures = [queue.submit(session, Joinable("score", item, together), cost=2)
               for session, item in (("a", "x"), ("b", "y"), ("a", "z"))]
    apart = queue.submit("c", Joinable("another kind", "w", other), cost=2)
    release.set()
    assert [f.result(10) for f in futures] == ["xx", "yy", "zz"]
    assert apart.result(10) == "ww"
    assert together.calls == [["x", "y", "z"]] and other.calls == [["w"]]


def test_jobs_join_only_while_their_costs_together_stay_small(queue):
    release = _blocked(queue)
    together = _Together()
    futures = [queue.submit(s, Joinable("score", s, together), cost=4) for s in "abc"]  # small is 10
    release.set()
    assert [f.result(10) for f in futures] == ["aa", "bb", "cc"]
    assert together.calls == [["a", "b"], ["c"]]


def test_a_failing_joined_call_answers_each_job_alone(queue):
    """One visitor's input that breaks the joined call costs the others nothing."""
    release = _blocked(queue)
    together = _Together()
    futures = [queue.submit(s, Joinable("score", item, together), cost=1)
               for s, item in (("a", "x"), ("b", "bad"), ("c", "y"))]
    release.set()
    assert futures[0].result(10) == "xx" and futures[2].result(10) == "yy"
    with pytest.raises(ValueError, match="bad item"):
        futures[1].result(10)
    assert together.calls == [["x", "bad", "y"], ["x"], ["bad"], ["y"]]


def test_a_cancelled_job_is_left_out_of_the_joined_call(queue):
    release = _blocked(queue)
    together = _Together()
    futures = [queue.submit(s, Joinable("score", s, together), cost=1) for s in "abc"]
    assert futures[1].cancel()
    release.set()
    assert futures[0].result(10) == "aa" and futures[2].result(10) == "cc"
    assert together.calls == [["a", "c"]]


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


def _scoring(metric: Metric, tmp_path, order: list[str], label: str):
    """A job that scores three pieces' worth of candidates (and some) with ``metric`` through the cache, then
    writes ``label`` to ``order``; and its candidates."""
    settings, candidates, references = _batch(tmp_path, 3 * FIRST_PIECE_ITEMS + 7)

    def job():
        scores = score_batches(metric, [(candidates, references)], settings, registry=Registry())[0]
        order.append(label)
        return scores

    return job, candidates


@pytest.mark.parametrize("metric_class", [_Gated, _GatedCorpus])
def test_a_small_job_passes_between_the_pieces_of_a_big_jobs_metric_call(queue, tmp_path, metric_class):
    """A study scores one batch of a few thousand pairs in one metric call; a Playground answer that needs the same
    metric waited for the whole call (6.8 s at p95 under benchmarks/bench_load.py's attacks). A metric that scores
    each item on its own is now called in pieces (the first of FIRST_PIECE_ITEMS, the next sized by its pace), and
    the small job runs between two of them, with the same scores; a corpus-dependent one is still called once, on
    the whole batch."""
    metric = metric_class()
    order: list[str] = []
    study, candidates = _scoring(metric, tmp_path, order, "study")
    n = len(candidates)
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


def test_a_quick_job_passes_between_the_pieces_of_a_small_job_and_a_small_one_does_not(tmp_path):
    """Under a burst of visitors, a view's 657 SICK pairs (a small job) took 0.74 s and every Playground answer
    waited for it whole (benchmarks/bench_load.py --mode demo). A small job is now cut into pieces too, and a quick
    job waiting runs between two of them; another small job waits for its end, as before."""
    queue = FairQueue(workers=1, small=100, quick=10)
    try:
        metric = _Gated()
        order: list[str] = []
        view, candidates = _scoring(metric, tmp_path, order, "view")
        n = len(candidates)  # 55: small
        running = queue.submit("reader", view, cost=n)
        assert metric.inside.wait(10), running.exception(0)
        other = queue.submit("another reader", _recorder(order, "another view"), cost=50)
        quick = queue.submit("visitor", _recorder(order, "playground"), cost=5)
        metric.go.set()
        assert quick.result(30) == "playground" and other.result(30) == "another view"
        assert np.array_equal(running.result(30), [float(len(c)) for c in candidates])
        assert order == ["playground", "view", "another view"]
        assert metric.sizes[0] == FIRST_PIECE_ITEMS and sum(metric.sizes) == n
    finally:
        queue.close()


def test_quick_jobs_run_before_small_ones_and_small_before_big():
    queue = FairQueue(workers=1, small=100, quick=10)
    try:
        release = _blocked(queue)
        order: list[str] = []
        futures = [queue.submit(s, _recorder(order, label), cost=cost)
                   for s, label, cost in (("a", "big", 500), ("b", "small", 50), ("c", "quick", 5))]
        release.set()
        for future in futures:
            future.result(10)
        assert order == ["quick", "small", "big"]
    finally:
        queue.close()


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

