"""A study's progress on its page: the study's own step ("scoring METEOR-1.5 (2 of 3 metrics)", 2 of 4) with the
items its metric has scored within the step (the engine's item reports, tests/engine/test_progress.py), so the
bar moves within a step instead of sitting still for a metric's whole scoring."""
from __future__ import annotations

from muttlab.dashboard.services.core import _within


def test_a_step_with_its_items_fills_the_bar_within_the_step():
    step = (1, 4, "scoring METEOR-1.5 (1 of 3 metrics) on 600 sentences x 3 strengths")
    counted = (300, 1200, "300 of 1,200 items · about 20 s left")
    assert _within(step, counted) == (1 * 1200 + 300, 4 * 1200, "scoring METEOR-1.5 (1 of 3 metrics) on 600 "
                                      "sentences x 3 strengths · 2/4 · 300 of 1,200 items · about 20 s left")


def test_a_step_without_items_is_drawn_as_the_study_reports_it():
    step = (0, 4, "parsing and corrupting 600 sentences")
    assert _within(step, None) == step
    assert _within((0, 0, "nothing to do"), (1, 2, "1 of 2 items")) == (0, 0, "nothing to do")


def test_the_severity_page_draws_the_items_of_each_metric(app_env, monkeypatch):
    import re

    from streamlit.delta_generator import DeltaGenerator

    from tests.dashboard.conftest import open_link, press, shown_errors

    monkeypatch.delenv("MUTTLAB_DATA_DIR")  # the sample's scenes: a curve in seconds
    texts = []
    real = DeltaGenerator.progress
    monkeypatch.setattr(DeltaGenerator, "progress", lambda self, value, text=None, **k: texts.append(text)
                        or real(self, value, text=text, **k))
    at = press(open_link("severity", {"metrics": "EmbeddingCosine", "corruption": "typo", "strengths": "1,2",
                                      "refs": "5"}), "sev-link")
    assert not shown_errors(at)
    # The metric's step (2 of 2: parsing was the first) with the items of its three batches (originals,
    # strength 1, strength 2) as its encoding passes finish.
    within = [t for t in texts if t and t.startswith("scoring EmbeddingCosine (1 of 1 metrics)") and " · 2/2 · " in t]
    assert any(re.search(r" · 2/2 · [\d,]+ of [\d,]+ items", t) for t in within), texts
