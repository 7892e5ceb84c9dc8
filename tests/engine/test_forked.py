"""A call in a forked child: its value, its exception, and a child that dies without answering."""
from __future__ import annotations

import os

import numpy as np
import pytest

from muttlab.engine import forked
from muttlab.engine.forked import ForkedCall

pytestmark = pytest.mark.skipif(not forked.AVAILABLE, reason="forking is used on Linux only")


def test_value_comes_back_from_the_child():
    parent = os.getpid()
    call = ForkedCall(lambda: (os.getpid(), np.arange(5) * 2), fallback=lambda: None)
    pid, value = call.result()
    assert pid != parent
    assert value.tolist() == [0, 2, 4, 6, 8]


def test_exception_in_the_child_is_raised_in_the_parent():
    with pytest.raises(ZeroDivisionError):
        ForkedCall(lambda: 1 / 0, fallback=lambda: "not used").result()


def test_child_that_dies_without_answering_falls_back_to_the_parent():
    assert ForkedCall(lambda: os._exit(3), fallback=lambda: "computed here").result() == "computed here"


def test_closing_stops_a_child_whose_answer_is_not_wanted():
    import time
    call = ForkedCall(lambda: time.sleep(60), fallback=lambda: None)
    process = call._process
    call.close()
    assert not process.is_alive()
    call.close()  # twice is fine
