"""The dashboard's fair work queue: small jobs first, sessions in turn, bounded."""
from __future__ import annotations

import threading

import pytest

from muttlab.engine.queue import FairQueue, QueueFull


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
