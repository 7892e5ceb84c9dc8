"""The METEOR JVMs of one process form one bounded pool (METEOR and ML-METEOR's parameter sets share it)."""
from __future__ import annotations

import pytest

from muttlab.metrics import meteor
from muttlab.metrics.meteor import Meteor


@pytest.mark.java
@pytest.mark.slow
def test_a_new_parameter_set_stops_the_least_recently_used_jvm(monkeypatch):
    monkeypatch.setattr(meteor, "MAX_RUNNING", 1)
    default, tuned = Meteor(), Meteor(alpha=0.8, beta=2.0, gamma=0.4, delta=0.7)
    try:
        first = default.score(["a man rides a horse"], [["a man is riding a horse"]])
        tuned.score(["a man rides a horse"], [["a man is riding a horse"]])
        assert tuned.process.running and not default.process.running
        # The stopped one restarts on demand and gives the same number as before.
        again = default.score(["a man rides a horse on the beach"], [["a man is riding a horse"]])
        assert default.process.running and not tuned.process.running
        assert default.score(["a man rides a horse"], [["a man is riding a horse"]]) == pytest.approx(first, abs=0)
        assert 0 < again[0] < 1
    finally:
        default.close()
        tuned.close()
