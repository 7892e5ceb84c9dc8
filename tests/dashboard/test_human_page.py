"""The Human judgments page: SICK gold vs a metric, and the pairwise correlation matrix (MUTT §5)."""
from __future__ import annotations

import pytest

from muttlab.human.sick import sick_study
from tests.dashboard.conftest import open_page, shown_errors

# Cheap metrics stand in for the paper's METEOR/BADGER/TERp, which the page shows by default.
STATE = {"human-metric": "BLEU-4", "human-matrix": ["BLEU-4", "ROUGE-L"]}


def test_gold_and_metric_side_by_side_with_their_correlations(app_env, app_settings):
    at = open_page("human", state=STATE)
    assert not shown_errors(at)
    shown = {m.label: m.value for m in at.metric}
    # MUTT data: 336 of the 543 listed neg_subj pairs have an experiment trial (data/README.md counts).
    assert shown["pairs"] == "336"
    expected = sick_study(app_settings, "neg_subj", ["BLEU-4", "ROUGE-L"], method="pearson")
    gold = expected.pairs["gold"]
    assert shown["gold: mean ± sd"] == f"{gold.mean():.2f} ± {gold.std():.2f}"
    matrix = next(d.value for d in at.dataframe if "gold" in d.value.columns)
    assert matrix["gold"].tolist() == pytest.approx(expected.correlations["gold"].tolist())
    assert len(at.get("plotly_chart")) == 2


def test_method_and_corruption_change_the_study(app_env, app_settings):
    at = open_page("human", state=STATE)
    at.selectbox(key="human-method").set_value("spearman")
    at.selectbox(key="human-corruption").set_value("det_sub").run()
    assert not shown_errors(at)
    expected = sick_study(app_settings, "det_sub", ["BLEU-4", "ROUGE-L"], method="spearman")
    matrix = next(d.value for d in at.dataframe if "gold" in d.value.columns)
    assert matrix["BLEU-4"].tolist() == pytest.approx(expected.correlations["BLEU-4"].tolist())
    assert {m.label: m.value for m in at.metric}["pairs"] == str(len(expected.pairs))


def test_sample_mode_explains_the_data_dir_is_needed(app_env, monkeypatch):
    monkeypatch.delenv("MUTTLAB_DATA_DIR")
    at = open_page("human")
    assert not at.exception
    assert any("MUTTLAB_DATA_DIR" in i.value for i in at.info)


def test_the_paper_reading_scores_every_sick_pair_of_the_type(app_env, app_settings):
    at = open_page("human", state=dict(STATE, **{"human-reading": "paper"}))
    assert not shown_errors(at)
    expected = sick_study(app_settings, "neg_subj", ["BLEU-4", "ROUGE-L"], method="pearson", reading="paper")
    # sick.py: the extractor finds 543 negated-subject pairs in SICK.txt, the count of the study's list.
    assert {m.label: m.value for m in at.metric}["pairs"] == str(len(expected.pairs)) == "543"
    matrix = next(d.value for d in at.dataframe if "gold" in d.value.columns)
    assert matrix["BLEU-4"].tolist() == pytest.approx(expected.correlations["BLEU-4"].tolist())
    # The reference choice does not apply to that reading: it is shown disabled.
    assert at.selectbox(key="human-reference").disabled


def test_a_metric_trained_on_sick_is_flagged(app_env):
    at = open_page("human", state={"human-metric": "BLEU-4", "human-matrix": ["BLEU-4", "ReVal-LSTM"],
                                   "human-corruption": "det_sub"})
    assert not shown_errors(at)
    warnings = [w.value for w in at.warning]
    assert any(w.startswith("ReVal-LSTM was trained on SICK") for w in warnings), warnings
    assert not any("BLEU" in w for w in warnings)
