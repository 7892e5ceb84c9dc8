"""The shipped meta-evaluation (the ``meta_eval`` snapshot) and tie calibrations (data/results/calibrations.json)
are what a run computes now, on these files, with these metrics. When a test here fails, re-run
`MUTTLAB_DATA_DIR=../shared/data .venv/bin/python scripts/precompute_meta_eval.py` and commit both files."""
from __future__ import annotations

import json

import numpy as np
import pytest

from muttlab import api
from muttlab.meta.calibration import FIELDS
from muttlab.resources.bundled import results_dir
from muttlab.snapshots.meta_eval import SCORED
from tests.conftest import SACRE
from tests.snapshots.conftest import assert_current, shipped as shipped_snapshot

RERUN = "re-run scripts/precompute_meta_eval.py and commit data/results/meta_eval.json and calibrations.json"


@pytest.fixture(scope="module")
def snapshot():
    return shipped_snapshot("meta_eval")


@pytest.fixture(scope="module")
def shipped(snapshot):
    return {pair: snapshot.content.result(pair, with_scores=True) for pair in snapshot.content.pairs}


@pytest.fixture(scope="module")
def calibrations():
    return json.loads((results_dir() / "calibrations.json").read_text(encoding="utf-8"))


def test_the_shipped_meta_evaluation_is_current(snapshot, data_dir, ted):
    assert_current("meta_eval", data_dir)
    assert snapshot.stamp.rules == ""  # no trial is judged: the rules do not decide these numbers
    assert set(snapshot.content.pairs) == {"en-de", "zh-en"}
    for pair, result in snapshot.content.results.items():
        assert result.data_digest == ted[pair].data_digest, RERUN


@pytest.mark.parametrize("pair", ["en-de", "zh-en"])
def test_the_shipped_numbers_equal_a_live_run(shipped, ted_results, ted, pair):
    live, kept = ted_results[pair], shipped[pair]
    assert kept.n_resamples == 1000 and kept.statistics[0] == "acc_eq_item"
    for metric in SACRE + list(live.baselines):
        for statistic in live.statistics:
            assert kept.values[metric][statistic] == pytest.approx(live.values[metric][statistic], abs=1e-12,
                                                                   nan_ok=True), (metric, statistic, RERUN)
        assert kept.epsilons[metric]["acc_eq_item"] == live.epsilons[metric]["acc_eq_item"]
        assert kept.intervals[metric]["acc_eq_item"] == pytest.approx(live.intervals[metric]["acc_eq_item"])
        assert kept.system_scores[metric] == pytest.approx(live.system_scores[metric], abs=1e-9)
    # The per-output scores and the MQM scores ship exactly (float64), for the scatter of pairs.
    assert np.array_equal(kept.gold, ted[pair].gold, equal_nan=True)
    for metric in SACRE:
        assert np.array_equal(kept.scores[metric], live.scores[metric], equal_nan=True), metric
    assert set(kept.scores) == {m for m in SCORED if m in kept.values}


def test_english_only_metrics_are_reported_not_scored_on_german(shipped):
    skipped = shipped["en-de"].skipped
    for metric in ("METEOR-1.5", "TERp", "BADGER-like", "BERTScore-F1", "EmbeddingCosine", "ReVal-TreeLSTM"):
        assert "scores en only" in skipped[metric] and metric in shipped["zh-en"].values


def test_the_calibrations_are_the_shipped_results_epsilons(shipped, calibrations):
    assert calibrations["version"] == 1
    records = calibrations["calibrations"]
    assert {(r["pair"], r["metric"]) for r in records} == {
        (pair, m) for pair, result in shipped.items() for m in result.metrics if m not in result.baselines}
    for record in records:
        assert tuple(record) == FIELDS and record["study"] == "mqm-ted"
        result = shipped[record["pair"]]
        assert record["epsilon"] == result.epsilons[record["metric"]]["acc_eq_item"]
        assert record["informative"] == result.informative[record["metric"]]["acc_eq_item"]
        assert record["reason"] == result.reasons[record["metric"]]["acc_eq_item"]
        assert record["signature"] == result.metrics[record["metric"]]
        assert record["target_language"] == result.target_language and record["data_digest"] == result.data_digest


def test_on_en_de_no_metric_earns_an_epsilon_but_ter(shipped):
    # No en-de ε but TER's leaves a pair untied while beating tying everything (tests/meta/test_evaluate.py checks
    # TER's 29 untied pairs by hand); CIDEr-D's leaves 12 untied and equals the constant metric on them.
    result = shipped["en-de"]
    earned = {m for m in result.metrics if result.informative[m]["acc_eq_item"]}
    assert earned == {"TER"}
    assert result.values["CIDEr-D"]["acc_eq_item"] == result.values["constant baseline"]["acc_eq_item"]
    assert "does not beat the constant baseline's" in result.reasons["CIDEr-D"]["acc_eq_item"]
    zh_en = shipped["zh-en"]
    assert all(zh_en.informative[m]["acc_eq_item"] for m in zh_en.metrics if m not in zh_en.baselines)


def test_a_shipped_pair_reads_through_the_api(snapshot):
    result = api.shipped_meta_evaluation("zh-en", with_scores=True)
    table = api.meta_ranking(result)
    assert table["metric"].iloc[0] == result.ranking("acc_eq_item")[0]
    assert set(table.loc[table["baseline"], "metric"]) == {"constant baseline", "random baseline"}
    assert {"acc_eq_item low", "acc_eq_item high", "acc_eq_item eps", "acc_eq_item cluster"} <= set(table.columns)
    pairs = api.meta_pairs(result, "chrF")
    assert len(pairs) == result.pairs["acc_eq_item"]
    assert pairs.attrs["epsilon"] == result.epsilons["chrF"]["acc_eq_item"]
    # The pairs a scatter draws are the statistic's: the mean over items of their right share is acc*_eq.
    assert pairs.groupby("item")["right"].mean().mean() == pytest.approx(result.values["chrF"]["acc_eq_item"],
                                                                         abs=1e-12)
