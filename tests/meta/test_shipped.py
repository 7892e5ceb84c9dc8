"""The shipped meta-evaluation (data/results/meta_eval.json) and tie calibrations (data/results/calibrations.json)
are what a run computes now, on these files, with these metrics. When a test here fails, re-run
`MUTTLAB_DATA_DIR=../shared/data .venv/bin/python scripts/precompute_meta_eval.py` and commit both files."""
from __future__ import annotations

import json

import pytest

from muttlab.meta.calibration import FIELDS
from muttlab.meta.result import MetaEvaluation
from muttlab.metrics.registry import Registry
from muttlab.resources.bundled import data_dir
from tests.meta.conftest import SACRE

RERUN = "re-run scripts/precompute_meta_eval.py and commit data/results/meta_eval.json and calibrations.json"


@pytest.fixture(scope="module")
def shipped():
    document = json.loads((data_dir() / "results" / "meta_eval.json").read_text(encoding="utf-8"))
    return {pair: MetaEvaluation.from_dict(data) for pair, data in document["results"].items()}


@pytest.fixture(scope="module")
def calibrations():
    return json.loads((data_dir() / "results" / "calibrations.json").read_text(encoding="utf-8"))


def test_the_shipped_results_are_of_these_files_and_metrics(shipped, ted):
    assert set(shipped) == {"en-de", "zh-en"}
    registry = Registry(use_entry_points=False)
    try:
        for pair, result in shipped.items():
            assert result.data_digest == ted[pair].data_digest, RERUN
            for metric, signature in result.metrics.items():
                if metric not in result.baselines and metric in registry.names and registry.info(metric).available:
                    assert registry.info(metric).signature == signature, f"{metric}: {RERUN}"
    finally:
        registry.close()


@pytest.mark.parametrize("pair", ["en-de", "zh-en"])
def test_the_shipped_numbers_equal_a_live_run(shipped, ted_results, pair):
    live, kept = ted_results[pair], shipped[pair]
    assert kept.n_resamples == 1000 and kept.statistics[0] == "acc_eq_item"
    for metric in SACRE + list(live.baselines):
        for statistic in live.statistics:
            assert kept.values[metric][statistic] == pytest.approx(live.values[metric][statistic], abs=1e-12,
                                                                   nan_ok=True), (metric, statistic, RERUN)
        assert kept.epsilons[metric]["acc_eq_item"] == live.epsilons[metric]["acc_eq_item"]
        assert kept.system_scores[metric] == pytest.approx(live.system_scores[metric], abs=1e-9)


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
        assert record["signature"] == result.metrics[record["metric"]]
        assert record["target_language"] == result.target_language and record["data_digest"] == result.data_digest
