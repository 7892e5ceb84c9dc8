"""Calls in a forked child: their values, an exception, and a child that dies without answering."""
from __future__ import annotations

import os
import time

import numpy as np
import pytest

from muttlab.engine import forked
from muttlab.engine.forked import ForkedCalls

pytestmark = pytest.mark.skipif(not forked.AVAILABLE, reason="forking is used on Linux only")


def test_values_come_back_from_the_child_in_order():
    parent = os.getpid()
    calls = ForkedCalls([os.getpid, lambda: np.arange(5) * 2])
    pid, value = calls.results()
    assert pid != parent
    assert value.tolist() == [0, 2, 4, 6, 8]


def test_exception_in_the_child_is_raised_in_the_parent():
    results = ForkedCalls([lambda: "first", lambda: 1 / 0, lambda: "never"]).results()
    assert next(results) == "first"
    with pytest.raises(ZeroDivisionError):
        next(results)


def test_calls_a_dead_child_did_not_answer_are_made_in_the_parent():
    parent = os.getpid()
    calls = [os.getpid, lambda: os._exit(3) if os.getpid() != parent else "made here", os.getpid]
    first, second, third = ForkedCalls(calls).results()
    assert first != parent and second == "made here" and third == parent


def test_closing_stops_a_child_whose_answers_are_not_wanted():
    calls = ForkedCalls([lambda: time.sleep(60)])
    process = calls._process
    calls.close()
    assert not process.is_alive()
    calls.close()  # twice is fine


# --------------------------------------------------------------------------- computed_apart


def test_a_computation_apart_runs_in_a_niced_child_and_its_reports_reach_this_thread():
    parent, reports = os.getpid(), []

    def fn(report):
        report(1, 2, "half")
        report(2, 2, "done")
        return os.getpid(), os.nice(0)

    pid, niceness = forked.computed_apart(fn, lambda *args: reports.append(args), niceness=5)
    assert pid != parent and niceness == min(19, os.nice(0) + 5)
    assert reports == [(1, 2, "half"), (2, 2, "done")]


def test_the_childs_errors_come_back_whole_with_where_they_were_raised():
    from muttlab.errors import DataError, UnknownCorruption, UnknownMetric

    def bad_file(report):
        raise DataError("upload.tsv", "no tab", line=7, fix="separate the fields with tabs")

    with pytest.raises(DataError) as raised:
        forked.computed_apart(bad_file)
    assert (raised.value.path, raised.value.line, str(raised.value)) == (
        "upload.tsv", 7, "upload.tsv, line 7: no tab (separate the fields with tabs)")
    assert "raised in the computation's process" in "".join(raised.value.__notes__)
    with pytest.raises(UnknownMetric, match="unknown metric 'nope'; known: a, b"):
        forked.computed_apart(lambda report: (_ for _ in ()).throw(UnknownMetric("nope", ["b", "a"])))
    # The known names given as a generator: read once, kept for the message and the pickle.
    unknown = UnknownCorruption("x", (name for name in ("neg", "swap")))
    with pytest.raises(UnknownCorruption, match="unknown corruption type 'x'; known: neg, swap$"):
        forked.computed_apart(lambda report: (_ for _ in ()).throw(unknown))

    class Odd(Exception):  # its arguments are not its constructor's: a pickle cannot bring it back
        def __init__(self, a, b):
            super().__init__(f"{a}-{b}")

    with pytest.raises(RuntimeError, match="Odd: x-y"):
        forked.computed_apart(lambda report: (_ for _ in ()).throw(Odd("x", "y")))


def test_a_computation_nobody_wants_any_more_is_stopped(tmp_path):
    pid_file = tmp_path / "pid"

    def forever(report):
        pid_file.write_text(str(os.getpid()))
        while True:
            time.sleep(0.01)

    def still_wanted():
        if pid_file.exists():
            raise KeyboardInterrupt("the tab closed")

    with pytest.raises(KeyboardInterrupt):
        forked.computed_apart(forever, still_wanted=still_wanted, poll_s=0.05)
    with pytest.raises(ProcessLookupError):  # the child is gone, and reaped
        os.kill(int(pid_file.read_text()), 0)


def test_a_report_that_raises_here_stops_the_child(tmp_path):
    pid_file = tmp_path / "pid"

    def fn(report):
        pid_file.write_text(str(os.getpid()))
        report(1, 1, "step")
        time.sleep(600)

    def progress(*args):
        raise RuntimeError("share used up")

    with pytest.raises(RuntimeError, match="share used up"):
        forked.computed_apart(fn, progress)
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)


def test_a_child_that_dies_is_an_error_that_says_so():
    from muttlab.errors import MuttlabError

    with pytest.raises(MuttlabError, match=r"ended without an answer \(exit code 9\)"):
        forked.computed_apart(lambda report: os._exit(9))
