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
