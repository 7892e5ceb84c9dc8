"""The runner's progress: per metric loading then scoring n of N items, an estimate once a piece is timed,
and a report that raises (the dashboard's Cancel) stopping the run."""
from __future__ import annotations

import re

import pytest

from muttlab.engine import runner
from muttlab.engine.progress import RunProgress
from muttlab.settings import Settings
from muttlab.sources import load_mutt_experiments

SCORING = re.compile(r"^scoring (\S+) \((\d) of 2 metrics\): ([\d,]+) of ([\d,]+) items")


class Cancelled(Exception):
    pass


@pytest.fixture
def suite(data_dir):
    return load_mutt_experiments(Settings(data_dir=data_dir)).select(["neg_subj", "det_sub"])


def test_runner_reports_loading_then_scoring_per_metric(suite, data_dir, tmp_path):
    log = []
    runner.run(suite, ["BLEU-4", "ROUGE-L"], [5], Settings(data_dir=data_dir, cache_dir=tmp_path, workers=1),
               progress=lambda step, total, message: log.append((step, total, message)))
    items = 2 * (336 + 65)  # data/README.md: neg_subj 336 trials, det_sub 65; originals and corruptions
    messages = [m for _, _, m in log]
    assert messages[:2] == ["loading BLEU-4 (1 of 2 metrics)", "loading ROUGE-L (2 of 2 metrics)"]
    scoring = [SCORING.match(m) for m in messages[2:-1]]
    assert all(scoring), messages
    assert [m.group(1) for m in scoring] == sorted(m.group(1) for m in scoring)  # BLEU-4 first, then ROUGE-L
    assert {int(m.group(4).replace(",", "")) for m in scoring} == {items}
    # Each metric ends with every item in; the bar counts items over the run.
    for name in ("BLEU-4", "ROUGE-L"):
        last = [m for m in scoring if m.group(1) == name][-1]
        assert last.group(3).replace(",", "") == str(items)
    assert log[-1] == (2 * items, 2 * items, "done")
    # Reports per piece, never per item: one job per metric here, so its start and its end.
    assert len(scoring) == 4
    steps = [step for step, _, _ in log]
    assert steps == sorted(steps)


def test_estimate_uses_the_timed_pieces():
    log, now = [], [0.0]
    progress = RunProgress(lambda *a: log.append(a[2]), ["A", "B"], 100, clock=lambda: now[0])
    progress.planned("A", cached=0)
    assert log[-1] == "scoring A (1 of 2 metrics): 0 of 100 items"  # nothing timed: no estimate yet
    now[0] = 10.0
    progress.scored(25)
    # 75 items of A at 0.4 s each, then B's 100 at the run's pace (0.4 s): 70 s.
    assert log[-1] == "scoring A (1 of 2 metrics): 25 of 100 items · about 1 min left"
    now[0] = 12.0
    progress.scored(75)
    progress.planned("B", cached=50)
    now[0] = 13.0
    progress.scored(10)
    # B: 40 items left at its own 0.1 s each.
    assert log[-1] == "scoring B (2 of 2 metrics): 60 of 100 items · about 4 s left"


def test_a_progress_report_that_raises_stops_the_run(suite, data_dir, tmp_path):
    # Cancel on the page reaches the run as an exception raised in its progress report (or queue poll): the
    # metrics after it are never scored.
    settings = Settings(data_dir=data_dir, cache_dir=tmp_path, workers=1)
    registry = runner.registry_for(settings)
    rouge = registry.get("ROUGE-L")
    scored = []
    real = rouge.score
    rouge.score = lambda c, r: scored.append(len(c)) or real(c, r)

    def progress(step, total, message):
        if message.startswith("scoring BLEU-4"):
            raise Cancelled

    with pytest.raises(Cancelled):
        runner.run(suite, ["BLEU-4", "ROUGE-L"], [5], settings, registry, progress=progress)
    assert scored == []
    runner.run(suite, ["ROUGE-L"], [5], settings, registry)
    assert sum(scored) > 0  # the counter sees ROUGE-L's scoring when it does happen
    registry.close()
