"""Attack: the report download as a door around the demo's share.

"Download this view as a report" is made when pressed, in a thread of Streamlit's own: no page run, no fair queue,
no progress, no cancellation. Before this test, the file was :func:`muttlab.dashboard.report.build_report` of the
link's view, which computes what the view names: a visitor of the read-only demo opening a link with ``run=1``
(the page only fills its form: "press Run") and pressing the report button ran that grid, METEOR and 20
references included, outside the visitor's share and the server's cap, once per press. The report is now built
from the scores the server has (``dashboard/report_download.py``, the button's callable): a view it has not computed
gives a document saying what to press, and nothing is scored. Run as the anonymous visitor of a read-only demo
on the real data (and, for the first, of a writable server), calling what the button calls.
"""
from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from muttlab import api
from muttlab.dashboard.report_download import report_file
from muttlab.dashboard.services import budget
from muttlab.settings import load_settings
from tests.dashboard.conftest import app_env  # noqa: F401 (fixture)

VISITOR = "ip:203.0.113.9"
# A link the Run page only fills its form from ("press Run"): the whole MUTT grid of METEOR at 5, 10 and 20 refs.
GRID_LINK = "page=run&metrics=METEOR-1.5&corruptions=all&refs=5,10,20&run=1"
CELL_LINK = "page=drilldown&metric=BLEU-4&corruption=neg_subj&refs=5"


def _scores_stored(cache: Path) -> int:
    """Scores in the server's score cache and in a read-only server's own cache."""
    total = 0
    for path in (cache / "scores.sqlite", cache.parent / "demo-cache" / "private-scores.sqlite"):
        if path.is_file():
            with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
                total += db.execute("SELECT COUNT(*) FROM scores").fetchone()[0]
    return total


@pytest.mark.parametrize("read_only", [True, False], ids=["demo", "writable"])
def test_a_report_of_an_uncomputed_view_scores_nothing_and_says_what_to_press(app_env, monkeypatch, read_only):
    if read_only:
        monkeypatch.setenv("MUTTLAB_READ_ONLY", "1")
    settings = load_settings()
    report = report_file(settings, GRID_LINK, VISITOR).decode("utf-8")
    assert report.startswith("<!DOCTYPE html>") and "No report of this view" in report
    assert "of METEOR-1.5 that this view needs are not computed on this server" in report
    assert "press its Run" in report
    assert _scores_stored(app_env) == 0
    assert budget.demo_budget(settings).running() == 0  # the visitor's lease was given back


def test_a_report_of_a_computed_view_is_the_views_report(app_env, monkeypatch):
    """What the page computed (here through the API with the server's settings, as the page's door does) is in
    the score cache: the report of that view is built, and scores nothing more."""
    monkeypatch.setenv("MUTTLAB_READ_ONLY", "1")
    settings = load_settings()
    before = report_file(settings, CELL_LINK, VISITOR).decode("utf-8")
    assert "No report of this view" in before and _scores_stored(app_env) == 0
    api.run_grid(settings, ["BLEU-4"], ["neg_subj"], [5])
    stored = _scores_stored(app_env)
    assert stored > 0
    report = report_file(settings, CELL_LINK, VISITOR).decode("utf-8")
    assert "No report of this view" not in report and "BLEU-4" in report and "Negated Subject" in report
    assert _scores_stored(app_env) == stored


def test_a_report_waits_its_turn_behind_the_visitors_other_computation(app_env, monkeypatch):
    """On the demo a report runs under the visitor's lease: while another tab of the same address computes, the
    report is refused with the demo's message (a document saying so), not run beside it."""
    monkeypatch.setenv("MUTTLAB_READ_ONLY", "1")
    settings = load_settings()
    share = budget.demo_budget(settings)
    lease = share.take(VISITOR, "a grid")
    try:
        report = report_file(settings, "page=published", VISITOR).decode("utf-8")
    finally:
        share.give_back(lease)
    assert "No report of this view" in report and "Your other tab" in report
    assert "No report of this view" not in report_file(settings, "page=published", VISITOR).decode()
