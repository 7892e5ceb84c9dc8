"""The Human judgments page: SICK gold vs a metric, and the pairwise correlation matrix (MUTT §5)."""
from __future__ import annotations


import numpy as np
import pytest

from muttlab import api
from muttlab.human import sick
from muttlab.human.sick import sick_study
from muttlab.dashboard.number_format import correlation_text, count_text
from tests.dashboard.conftest import (builders_called, figures_drawn, html_bodies, html_tables, open_link, open_page,
                                     press, read_as_plotly_shows, shown_errors)

PAIRS_KEY = "human-pairs-open"  # the pairs expander's key: opening it scores the study
# Cheap metrics stand in for the paper's METEOR/BADGER/TERp, which the page shows by default.
STATE = {"human-metric": "BLEU-4", "human-matrix": ["BLEU-4", "ROUGE-L"]}


def matrix_table(at):
    """The correlation matrix's numbers, once their expander is opened."""
    at.session_state["human-matrix-table-open"] = True
    at.run()
    assert not shown_errors(at)
    return next(d.value for d in at.dataframe if d.value.columns[0] == "")


def assert_drawn(at, numbers, metric: str, method: str) -> None:
    """The page's two figures are ``numbers``' own: the histograms of gold and ``metric`` (each bin's edges,
    width and count, and its hover), and the correlation heatmap of their matrix for ``method``, each cell the
    coefficient as the hovers and tables write it."""
    histograms, heatmap = figures_drawn(at)
    assert [a.text for a in histograms.layout.annotations] == ["SICK gold relatedness (1–5)",
                                                                f"{metric} score of the corruption"]
    for trace, variable in zip(histograms.data, ("gold", metric)):
        bins = numbers.histograms[numbers.histograms["variable"] == variable].sort_values("left")
        assert list(trace.y) == bins["count"].tolist()
        assert list(np.asarray(trace.x) - trace.width / 2) == pytest.approx(bins["left"].tolist())
        assert list(np.asarray(trace.x) + trace.width / 2) == pytest.approx(bins["right"].tolist())
        first = read_as_plotly_shows(trace.hovertext[0])
        assert first.endswith(f": {count_text(bins['count'].iloc[0], 'sentence', 'sentences')}")
    cells = heatmap.data[0]
    names = list(cells.x)
    matrix = numbers.correlations[method].loc[names, names]
    assert list(cells.y) == names
    assert np.asarray(cells.z, dtype=float) == pytest.approx(matrix.to_numpy())
    assert [list(row) for row in cells.text] == [[correlation_text(v) for v in row] for row in matrix.to_numpy()]


def test_gold_and_metric_side_by_side_with_their_correlations(app_env, app_settings):
    at = press(open_page("human", state=STATE), "human-link")
    assert not shown_errors(at)
    shown = {m.label: m.value for m in at.metric}
    # MUTT data: 336 of the 543 listed neg_subj pairs have an experiment trial (data/README.md counts).
    assert shown["pairs"] == "336"
    expected = sick_study(app_settings, "neg_subj", ["BLEU-4", "ROUGE-L"], method="pearson")
    gold = expected.pairs["gold"]
    assert shown["gold: mean ± sd"] == f"{gold.mean():.2f} ± {gold.std():.2f}"
    assert not [d for d in at.dataframe if d.value.columns[0] == ""]  # sent once its expander is opened
    matrix = matrix_table(at)
    assert matrix["gold"].tolist() == pytest.approx(expected.correlations["gold"].tolist())
    assert_drawn(at, api.study_numbers(expected), "BLEU-4", "pearson")


def test_method_and_corruption_change_the_study(app_env, app_settings):
    at = press(open_page("human", state=STATE), "human-link")
    at.selectbox(key="human-method").set_value("spearman")
    at = press(at.selectbox(key="human-corruption").set_value("det_sub").run(), "human-link")
    assert not shown_errors(at)
    expected = sick_study(app_settings, "det_sub", ["BLEU-4", "ROUGE-L"], method="spearman")
    matrix = matrix_table(at)
    assert matrix["BLEU-4"].tolist() == pytest.approx(expected.correlations["BLEU-4"].tolist())
    assert {m.label: m.value for m in at.metric}["pairs"] == str(len(expected.pairs))


def test_without_a_data_dir_the_shipped_study_is_shown(app_env, monkeypatch):
    monkeypatch.delenv("MUTTLAB_DATA_DIR")
    shipped = api.snapshot("human")
    at = open_page("human")
    assert not shown_errors(at)
    # MUTT data: 336 of the 543 listed neg_subj pairs have an experiment trial (data/README.md counts).
    assert {m.label: m.value for m in at.metric}["pairs"] == "336"
    matrix = matrix_table(at)
    assert matrix.columns.tolist() == ["", "gold", "METEOR-1.5", "BADGER-like", "TERp"]
    expected = shipped.content.sick_study("neg_subj", "trials").correlations["pearson"]
    assert matrix["TERp"].tolist() == pytest.approx(expected["TERp"].tolist())
    captions = " ".join(c.proto.body for c in at.get("html"))
    assert "Shipped results" in captions and shipped.stamp.digest() in captions and "no data dir" in captions
    assert_drawn(at, shipped.content.sick_study("neg_subj", "trials"), "METEOR-1.5", "pearson")
    # Another type, reading and method come from the shipped file too; no sentence ships.
    at.selectbox(key="human-corruption").set_value("passive")
    at.selectbox(key="human-reading").set_value("paper")
    at.selectbox(key="human-method").set_value("kendall_b").run()
    assert not shown_errors(at)
    numbers = shipped.content.sick_study("passive", "paper")
    assert {m.label: m.value for m in at.metric}["pairs"] == str(numbers.pairs)
    matrix = matrix_table(at)
    assert matrix["gold"].tolist() == pytest.approx(numbers.correlations["kendall_b"]["gold"].tolist())
    assert not [e for e in at.expander if "pairs and their scores" in e.label]
    assert at.query_params["corruption"] in ("passive", ["passive"])


def test_the_default_view_draws_the_shipped_numbers_without_scoring(app_env, monkeypatch):
    calls = []
    real = sick.sick_study
    monkeypatch.setattr(sick, "sick_study", lambda *a, **k: calls.append(a) or real(*a, **k))
    at = open_page("human")
    assert not shown_errors(at)
    assert calls == []  # the shipped numbers are current for this data dir (tests/snapshots/test_shipped_human.py)
    assert {m.label: m.value for m in at.metric}["pairs"] == "336"
    assert any("Shipped results" in c.proto.body for c in at.get("html"))
    # The sentences are this server's: opening the pairs scores the study once.
    at.session_state[PAIRS_KEY] = True
    at.run()
    assert not shown_errors(at) and len(calls) == 1
    pairs = next(d.value for d in at.dataframe if "corrupted" in d.value.columns)
    assert len(pairs) == 336 and pairs["sentence"].str.len().min() > 0


def test_the_shipped_views_figures_are_built_once_for_the_server(app_env, monkeypatch):
    """The default view's histograms and correlation heatmap (services.kept_figure): a second visitor is shown
    the same figures, not built again; another metric's histograms are its own."""
    from muttlab.dashboard import shared

    shared.region.clear()  # this process's earlier tests kept the shipped figures already
    built = builders_called(monkeypatch, "score_histograms", "correlation_heatmap")
    first, second = open_page("human"), open_page("human")
    assert not shown_errors(first) and not shown_errors(second)
    assert sorted(built) == ["correlation_heatmap", "score_histograms"]
    assert figures_drawn(second) == figures_drawn(first)
    other = open_page("human", state={"human-metric": "TERp"})  # in the shipped study too
    assert not shown_errors(other) and sorted(built) == ["correlation_heatmap", "score_histograms",
                                                          "score_histograms"]


def test_a_link_restores_the_view_in_a_new_session(app_env, app_settings):
    at = open_page("human", state=STATE)
    at.selectbox(key="human-corruption").set_value("det_sub")
    at = press(at.selectbox(key="human-method").set_value("spearman").run(), "human-link")
    assert not shown_errors(at)
    query = {k: at.query_params[k] for k in at.query_params}
    query = {k: (v[0] if isinstance(v, list) else v) for k, v in query.items()}
    assert query == {"corruption": "det_sub", "metric": "BLEU-4", "metrics": "BLEU-4,ROUGE-L", "method": "spearman"}
    again = open_link("human", query)  # the server has scored this view: the link shows it at once
    assert not shown_errors(again)
    assert again.selectbox(key="human-corruption").value == "det_sub"
    assert again.selectbox(key="human-metric").value == "BLEU-4"
    assert again.multiselect(key="human-matrix").value == ["BLEU-4", "ROUGE-L"]
    expected = sick_study(app_settings, "det_sub", ["BLEU-4", "ROUGE-L"], method="spearman")
    matrix = matrix_table(again)
    assert matrix["ROUGE-L"].tolist() == pytest.approx(expected.correlations["ROUGE-L"].tolist())
    paper = press(open_link("human", {"reading": "paper", "metric": "BLEU-4", "metrics": "BLEU-4"}), "human-link")
    assert paper.selectbox(key="human-reading").value == "paper"
    assert {m.label: m.value for m in paper.metric}["pairs"] == "543"


def test_the_paper_reading_scores_every_sick_pair_of_the_type(app_env, app_settings):
    at = press(open_page("human", state=dict(STATE, **{"human-reading": "paper"})), "human-link")
    assert not shown_errors(at)
    expected = sick_study(app_settings, "neg_subj", ["BLEU-4", "ROUGE-L"], method="pearson", reading="paper")
    # sick.py: the extractor finds 543 negated-subject pairs in SICK.txt, the count of the study's list.
    assert {m.label: m.value for m in at.metric}["pairs"] == str(len(expected.pairs)) == "543"
    matrix = matrix_table(at)
    assert matrix["BLEU-4"].tolist() == pytest.approx(expected.correlations["BLEU-4"].tolist())
    # The reference choice does not apply to that reading: it is shown disabled.
    assert at.selectbox(key="human-reference").disabled


def test_a_metric_trained_on_sick_is_flagged(app_env):
    at = press(open_page("human", state={"human-metric": "BLEU-4", "human-matrix": ["BLEU-4", "ReVal-LSTM"],
                                         "human-corruption": "det_sub"}), "human-link")
    assert not shown_errors(at)
    warnings = [w.value for w in at.warning]
    assert any(w.startswith("ReVal-LSTM was trained on SICK") for w in warnings), warnings
    assert not any("BLEU" in w for w in warnings)
