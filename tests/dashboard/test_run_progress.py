"""Progress of a Run from its first second: the page's progress bar drawn before anything is loaded, fed by the
runner's phases (tests/engine/test_progress.py), with Cancel."""
from __future__ import annotations

import re

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from muttlab.engine import runner
from tests.dashboard.conftest import grid_cells, open_page, shown_errors

SCORING = re.compile(r"^scoring (\S+) \((\d) of 2 metrics\): ([\d,]+) of ([\d,]+) items")


def _record(monkeypatch) -> list[tuple[str, object]]:
    """What the page draws, in order: progress texts, HTML bodies (the grids), button labels, placeholders
    emptied."""
    drawn = []
    real_progress, real_html = DeltaGenerator.progress, st.html
    real_button, real_empty = DeltaGenerator.button, DeltaGenerator.empty
    monkeypatch.setattr(DeltaGenerator, "progress",
                        lambda self, value, text=None, **k: drawn.append(("progress", text))
                        or real_progress(self, value, text=text, **k))
    # The grid is drawn with ``st.html`` (a function bound when Streamlit is imported).
    monkeypatch.setattr(st, "html", lambda body, **k: drawn.append(("html", body)) or real_html(body, **k))
    monkeypatch.setattr(DeltaGenerator, "button", lambda self, label, *a, **k: drawn.append(("button", label))
                        or real_button(self, label, *a, **k))
    monkeypatch.setattr(DeltaGenerator, "empty", lambda self: drawn.append(("empty", None)) or real_empty(self))
    return drawn


def test_page_draws_progress_with_metric_and_n_of_n_before_the_grid(app_env, monkeypatch):
    drawn = _record(monkeypatch)
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


def test_the_precomputed_grid_stays_until_the_run_replaces_it(app_env, monkeypatch):
    drawn = _record(monkeypatch)
    at = open_page("run")
    drawn.clear()
    at.multiselect(key="run-metrics").set_value(["BLEU-4"])
    at.multiselect(key="run-corruptions").set_value(["det_sub"])
    at.multiselect(key="run-refs").set_value(["5"])
    at.get("form_submit_button")[0].click().run()
    assert not shown_errors(at)
    shipped = min(i for i, (kind, body) in enumerate(drawn) if kind == "html")
    last_report = max(i for i, (kind, _) in enumerate(drawn) if kind == "progress")
    # Nothing is emptied between the precomputed grid and the run's last report: it was on the page throughout.
    assert ("empty", None) not in drawn[shipped:last_report]
    assert drawn[last_report][1] == "done"
    assert len(grid_cells(at)) == 1 and not any(s.value == "Accuracy (precomputed)" for s in at.subheader)
