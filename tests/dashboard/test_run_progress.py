"""Progress of a Run from its first second: the runner's phases (loading a metric, scoring n of N items, time
left), the page's progress bar drawn before anything is loaded, and Cancel."""
from __future__ import annotations

import re

import pytest
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from muttlab.engine import runner
from muttlab.engine.progress import RunProgress
from muttlab.settings import Settings
from muttlab.sources import load_mutt_experiments
from tests.dashboard.conftest import grid_cells, open_page, shown_errors

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


def test_page_draws_progress_with_metric_and_n_of_n_before_the_grid(app_env, monkeypatch):
    drawn = []
    real_progress, real_html, real_button = DeltaGenerator.progress, st.html, DeltaGenerator.button
    monkeypatch.setattr(DeltaGenerator, "progress",
                        lambda self, value, text=None, **k: drawn.append(("progress", text))
                        or real_progress(self, value, text=text, **k))
    # The grid is drawn with ``st.html`` (a function bound when Streamlit is imported).
    monkeypatch.setattr(st, "html", lambda body, **k: drawn.append(("html", body)) or real_html(body, **k))
    monkeypatch.setattr(DeltaGenerator, "button", lambda self, label, *a, **k: drawn.append(("button", label))
                        or real_button(self, label, *a, **k))
    at = open_page("run")
    drawn.clear()
    at.multiselect(key="run-metrics").set_value(["BLEU-4", "ROUGE-L"])
    at.multiselect(key="run-corruptions").set_value(["neg_subj", "det_sub"])
    at.multiselect(key="run-refs").set_value(["5"])
    at.get("form_submit_button")[0].click().run()
    assert not shown_errors(at)
    # The precomputed grid is drawn first (and replaced once Run is seen); the run's grid is the last one.
    live_grid = max(i for i, (kind, body) in enumerate(drawn) if kind == "html" and "BLEU-4 · " in body)
    before = drawn[:live_grid]
    texts = [text for kind, text in before if kind == "progress"]
    # Drawn before anything is loaded, with Cancel beside it.
    assert texts[0].startswith("preparing the run") and ("button", "Cancel") in before
    assert "loading BLEU-4 (1 of 2 metrics)" in texts
    assert any(SCORING.match(t) and t.startswith("scoring BLEU-4") for t in texts)
    assert len(grid_cells(at)) == 4


def test_after_cancel_the_page_does_not_start_the_run_again(app_env, monkeypatch):
    calls = []
    monkeypatch.setattr(runner, "run", lambda *a, **k: calls.append(1))
    # What Cancel's click leaves for the rerun it starts (dashboard/views/run.py ``_cancel``).
    at = open_page("run", state={"run_live": False, "run_cancelled": True})
    assert not shown_errors(at)
    assert any("Run cancelled" in i.value for i in at.info)
    assert calls == []
    assert any(s.value == "Accuracy (precomputed)" for s in at.subheader)
