"""The runner's progress: per metric loading then scoring n of N items, an estimate once a piece is timed,
and a report that raises (the dashboard's Cancel) stopping the run."""
from __future__ import annotations

import re
import time

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


def test_estimate_uses_the_recent_pace_measured_after_the_first_report():
    log, now = [], [0.0]
    progress = RunProgress(lambda *a: log.append(a[2]), ["A", "B"], 100, clock=lambda: now[0])
    progress.planned("A", cached=0)
    assert log[-1] == "scoring A (1 of 2 metrics): 0 of 100 items"  # nothing timed: no estimate yet
    now[0] = 30.0  # the first piece carries the start-up (a JVM, a model): not a measure of the pace
    progress.scored(10)
    assert log[-1] == "scoring A (1 of 2 metrics): 10 of 100 items"
    now[0] = 34.0
    progress.scored(20)
    # 70 items left at (34 - 30) s / 20 items = 0.2 s each: 14 s; B's pace is unknown, so the time is A's.
    assert log[-1] == "scoring A (1 of 2 metrics): 30 of 100 items · about 14 s left for this metric"
    now[0] = 40.0
    # The faster of the pace since the first report (10 s for 30 items) and the later half's (from the report at
    # 34 s: 6 s for 10 items): 60 items left at 1/3 s, 20 s. A stall of the latest seconds does not make it jump.
    progress.partial(10)
    assert log[-1] == "scoring A (1 of 2 metrics): 40 of 100 items · about 20 s left for this metric"
    now[0] = 44.0
    progress.partial(10)  # nothing new: the estimate counts down from the last measure
    assert log[-1] == "scoring A (1 of 2 metrics): 40 of 100 items · about 16 s left for this metric"
    progress.planned("B", cached=50)
    now[0] = 45.0
    progress.scored(10)
    now[0] = 48.0
    progress.scored(30)
    # The last metric: the estimate is the run's. 10 items left at 3 s / 30 items.
    assert log[-1] == "scoring B (2 of 2 metrics): 90 of 100 items · about 1 s left"


def test_a_metric_that_speeds_up_is_estimated_at_its_later_pace():
    log, now = [], [0.0]
    progress = RunProgress(lambda *a: log.append(a[2]), ["A"], 100, clock=lambda: now[0])
    progress.planned("A", cached=0)
    for t, n in ((10, 10), (14, 4), (18, 4), (20, 22), (22, 20)):
        now[0] = t
        progress.scored(n)
    # Since 14 s (the later half of 12 s measured): 46 items in 8 s; 40 items left take 7 s (all 12 s: 9.6 s).
    assert log[-1] == "scoring A (1 of 1 metrics): 60 of 100 items · about 7 s left"


def test_the_pace_is_per_reference_pair_and_the_count_per_item():
    log, now = [], [0.0]
    progress = RunProgress(lambda *a: log.append(a[2]), ["A"], 100, clock=lambda: now[0])
    progress.planned("A", cached=0, work=1000, cached_work=0)  # 50 items of 5 references, 50 of 15
    now[0] = 1.0
    progress.scored(50, work=250)
    now[0] = 6.0
    progress.partial(25, work=375)  # half the 15-reference items: 375 pairs in 5 s
    # 375 pairs left at 5 s / 375 pairs: 5 s, where counting items (25 in 5 s) would say 5 s too but for the
    # wrong reason; counted in items the first 5-reference half would have said 2.5 s for 25 items.
    assert log[-1] == "scoring A (1 of 1 metrics): 75 of 100 items · about 5 s left"


def test_a_measured_span_under_two_seconds_gives_no_estimate():
    log, now = [], [0.0]
    progress = RunProgress(lambda *a: log.append(a[2]), ["A"], 100, clock=lambda: now[0])
    progress.planned("A", cached=0)
    for t, n in ((0.5, 10), (1.0, 10), (1.9, 10)):
        now[0] = t
        progress.scored(n)
    assert "left" not in log[-1]
    now[0] = 2.5
    progress.scored(10)
    assert log[-1].endswith("40 of 100 items · about 4 s left")  # 60 items at 2 s / 30 items


def test_parts_are_drawn_at_most_every_half_second_and_counted_once():
    steps, now = [], [0.0]
    progress = RunProgress(lambda step, total, message: steps.append(step), ["A", "B"], 100,
                           clock=lambda: now[0])
    progress.planned("B", cached=0)
    now[0] = 0.6
    progress.partial(5)
    now[0] = 0.7
    progress.partial(9)  # within half a second of the last drawing: counted, not drawn
    now[0] = 1.2
    progress.partial(9)
    progress.scored(20)  # the piece's own end: its parts are not counted again
    assert steps == [100, 105, 109, 120]


def test_the_count_never_steps_back_when_a_piece_is_collected_while_the_next_one_reports():
    """The queue runs the next piece while the waiting thread collects the last: a poll counts the finished piece
    (fraction 1) and the next one's part; collecting the finished piece must not drop the next one's part. It
    did, until the next poll: the count stepped back (6,223 -> 5,521 of 13,302 in a cold METEOR grid) and the pace
    saw a stall (the estimate jumped from 11 s to 44 s)."""
    now = [0.0]
    counts, texts = [], []

    def report(step, total, message):
        counts.append(step)
        texts.append(message)

    progress = RunProgress(report, ["A"], 10_000, clock=lambda: now[0])
    progress.planned("A", cached=0)
    for second in range(1, 9):  # pieces of 1,000 items; piece k finishes while piece k+1 is 70 % done
        now[0] = second - 0.5
        progress.partial(1_000 + 700)  # the finished piece, not yet collected, and the next one's part
        now[0] = second
        progress.scored(1_000)
        progress.partial(700)  # the next poll
    assert counts == sorted(counts)
    shown = [int(t.split("about ")[1].split(" s")[0]) for t in texts if "about" in t and " s left" in t]
    # It counts down; a new measurement may move it by a second, never by a stall's worth.
    assert shown and all(later <= earlier + 1 for earlier, later in zip(shown, shown[1:])), shown


def test_steps_of_their_own_sizes_count_items_over_the_study():
    log = []
    progress = RunProgress(lambda *a: log.append(a), ["M on expert", "M on crowdflower"], [30, 70], unit="steps")
    progress.begin(1)
    progress.planned("M", cached=20)
    assert log[-1] == (50, 100, "scoring M on crowdflower (2 of 2 steps): 20 of 70 items")


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


def _counts(log, name):
    """The item counts reported while ``name`` was scored, in order."""
    return [int(m.group(3).replace(",", "")) for m in map(SCORING_ANY.match, (x for _, _, x in log))
            if m and m.group(1) == name]


SCORING_ANY = re.compile(r"^scoring (\S+) \(\d of \d metrics\): ([\d,]+ of )?([\d,]+) of [\d,]+ items")


@pytest.fixture
def det_sub(data_dir):
    return load_mutt_experiments(Settings(data_dir=data_dir)).select(["det_sub"])


def test_a_neural_metric_reports_its_encoding_passes_within_one_piece(det_sub, data_dir, tmp_path):
    # One piece (the whole metric's batch, scored in this process): the count moves before the piece ends.
    log = []
    runner.run(det_sub, ["EmbeddingCosine"], [5], Settings(data_dir=data_dir, cache_dir=tmp_path, workers=1),
               progress=lambda *a: log.append(a))
    counts = _counts(log, "EmbeddingCosine")
    items = 2 * 65  # data/README.md: det_sub has 65 trials; originals and corruptions
    assert counts[0] == 0 and counts[-1] == items
    assert any(0 < c < items for c in counts), counts
    assert counts == sorted(counts)


def test_parts_scored_on_the_queue_reach_the_waiting_thread(det_sub, data_dir, tmp_path, monkeypatch):
    # The dashboard's path: the piece runs in the queue's thread, its parts are drawn at the caller's polls.
    from muttlab.engine import progress as progress_module
    from muttlab.engine import queue as work_queue
    from muttlab.metrics import meteor

    monkeypatch.setattr(progress_module, "EVERY_S", 0.0)  # every count a poll finds is drawn

    settings = Settings(data_dir=data_dir, cache_dir=tmp_path, workers=1)
    registry = runner.registry_for(settings)
    queue = work_queue.FairQueue(workers=1)
    meteor.clear_memo()  # every pair aligned again, so the JVM answers in many chunks
    # 20 references, 10 pairs a chunk: each side's 1,300 pairs in 130 answers, so the caller's polls (every
    # 0.25 s) find parts under way on a fast machine too; 5 references in chunks of 40 could all be answered
    # between two polls.
    old_chunk, meteor.CHUNK = meteor.CHUNK, 10
    # A warm JVM with short sentences can answer a side's 130 chunks between two polls (the fresh clone's run of
    # 2026-11-29 saw only 0, 65 and 130): each answer is held 5 ms, so a side takes at least 0.65 s, and what is
    # tested is what reaches the caller, not how fast the JVM is.
    request = meteor.process()._request
    monkeypatch.setattr(meteor.process(), "_request", lambda *a: (request(*a), time.sleep(0.005))[0])
    log = []
    try:
        scorer = work_queue.QueuedScorer(runner.cache_for(settings), registry, queue, "visitor")
        runner.run(det_sub, ["METEOR-1.5"], [20], settings, registry, progress=lambda *a: log.append(a),
                   scorer=scorer)
    finally:
        meteor.CHUNK = old_chunk
        queue.close()
        registry.close()
    counts = _counts(log, "METEOR-1.5")
    # Pieces are grid cells (65 originals, then 65 corruptions); parts are the JVM's answers within them.
    assert set(counts) - {0, 65, 130}, counts
    assert counts == sorted(counts) and counts[-1] == 130


def test_a_study_scoring_through_score_batches_reports_its_items_to_the_enclosing_report(det_sub, data_dir,
                                                                                         tmp_path):
    # A study (severity curve, Flickr8K, SICK) scores each metric with score_batches and reports its own steps;
    # the items within a step reach whoever asked for them, with no callback passed down through the study.
    from muttlab.engine.progress import items_reported_to

    settings = Settings(data_dir=data_dir, cache_dir=tmp_path, workers=1)
    registry = runner.registry_for(settings)
    trials = det_sub.trials
    batches = [([t.original for t in trials], [list(t.refs(5)) for t in trials]),
               ([t.corrupted for t in trials], [list(t.refs(5)) for t in trials])]
    log = []
    with items_reported_to(lambda *a: log.append(a)):
        runner.score_batches(registry.get("EmbeddingCosine"), batches, settings, registry)
    runner.score_batches(registry.get("BLEU-4"), batches, settings, registry)  # outside: nobody is told
    registry.close()
    # The model is read under "loading" (only because something is to be scored), then the items count.
    assert log[:2] == [(0, 130, "loading EmbeddingCosine"), (0, 130, "0 of 130 items")]
    assert log[-1][:2] == (130, 130)
    assert any(0 < done < 130 for done, _, _ in log), log  # the encoder's passes, within the one piece


@pytest.mark.parametrize("seconds, text", [(0.2, "about 1 s"), (59.4, "about 59 s"), (94, "about 90 s"),
                                           (176, "about 180 s"), (200, "about 3 min")])
def test_an_estimate_is_written_at_the_precision_it_has(seconds, text):
    from muttlab.engine.progress import duration_text

    assert duration_text(seconds) == text


def test_a_jobs_reports_within_a_call_do_not_count_the_whole_job_again(monkeypatch):
    # A big job of one metric call reports after each of its parts (METEOR: each JVM answer), thousands in a
    # study or an uploaded set: each report must cost the same whatever the job's size. The job's size was
    # counted again at every report, a pass over all its references each time.
    import numpy as np

    from muttlab.metrics.base import Metric

    class Reporting(Metric):
        name = "reporting"
        reports_progress = True

        def _score(self, candidates, references, progress=None):
            for done in range(1, len(candidates) + 1):
                progress(done, len(candidates))
            return np.zeros(len(candidates))

    counted = []
    size = runner._size
    monkeypatch.setattr(runner, "_size", lambda batches: counted.append(len(batches)) or size(batches))
    scorer = runner._Scorer(runner.ScoreCache(None), 1, registry=None)
    items = 2_000
    log = []
    scorer.progress = RunProgress(lambda *a: log.append(a), ["reporting"], items, clock=iter(range(10 ** 6)).__next__)
    scorer._parallel(Reporting(), [(["a b"] * items, [["a", "b c"]] * items)])
    assert len(counted) <= 2, f"the job was counted {len(counted)} times for {items} reports"
    assert log and log[-1][0] == items
