"""The Drill-down opens a slow metric's cell, and its comparison with another metric, at once when the score
cache already has every score it needs (someone scored it before: nothing is left to compute); on a cold cache
a link to it waits for a click. On the bundled sample, with BADGER-like (a slow metric: outside
``services.is_quick``)."""
from __future__ import annotations

from muttlab import api
from muttlab.settings import load_settings
from tests.dashboard.conftest import open_link, shown_errors

CELL = {"corruption": "neg_subj", "refs": "5"}


def _buttons(at) -> set[str]:
    return {b.key for b in at.button if b.key in ("dd-score", "dd-vs-score")}


def _score_badger(settings) -> None:
    """BADGER-like on the cell, as a run through the API (not the page) fills the server's cache."""
    api.run_grid(settings, ["BADGER-like"], ["neg_subj"], [5], suite="default")


def test_a_comparison_whose_scores_are_cached_opens_without_a_click(app_env, monkeypatch):
    monkeypatch.delenv("MUTTLAB_DATA_DIR")
    settings = load_settings()
    link = {"metric": "BLEU-4", **CELL, "vs": "BADGER-like"}
    at = open_link("drilldown", link)
    assert not shown_errors(at)
    assert _buttons(at) == {"dd-vs-score"}  # a cold cache: the comparison waits
    assert not any(m.label.startswith("only BLEU-4 right") for m in at.metric)
    _score_badger(settings)
    at = open_link("drilldown", link)  # another visitor's session
    assert not shown_errors(at)
    assert _buttons(at) == set()
    shown = {m.label: m.value for m in at.metric}
    assert "only BLEU-4 right / only BADGER-like right" in shown, shown


def test_a_slow_metrics_cell_whose_scores_are_cached_opens_without_a_click(app_env, monkeypatch):
    monkeypatch.delenv("MUTTLAB_DATA_DIR")
    settings = load_settings()
    link = {"metric": "BADGER-like", **CELL}
    at = open_link("drilldown", link)
    assert _buttons(at) == {"dd-score"} and not at.metric
    _score_badger(settings)
    at = open_link("drilldown", link)
    assert not shown_errors(at)
    assert _buttons(at) == set()
    table = api.run_grid(settings, ["BADGER-like"], ["neg_subj"], [5], suite="default").table
    assert int({m.label: m.value for m in at.metric}["trials"]) == len(table)
