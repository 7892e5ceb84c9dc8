"""Our statistics equal mt-metrics-eval's on the TED MQM data, within 1e-9.

The expected numbers are mt-metrics-eval's own outputs (``stats.KendallWithTiesOpt`` with variant acc23 and
sample_rate 1.0, ``stats.Agreement``), stored in fixtures/mtme_ted.json with the command that made them and the
toolkit's commit (tests/meta/make_mtme_fixtures.py: it reads the files and scores with sacrebleu itself). Here
the lab reads the same files with its own reader, scores with its own sentBLEU, chrF and TER, and computes.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from muttlab.meta import statistics as st

FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "mtme_ted.json").read_text(encoding="utf-8"))
CASES = [(pair, metric) for pair in FIXTURE["pairs"] for metric in FIXTURE["pairs"][pair]["metrics"]]


def test_the_fixture_is_of_these_files(ted):
    for pair, record in FIXTURE["pairs"].items():
        assert ted[pair].data_digest == record["data_digest"]
        assert list(ted[pair].systems) == record["systems"]
    assert "make_mtme_fixtures.py" in FIXTURE["command"] and len(FIXTURE["mt_metrics_eval_commit"]) == 40


@pytest.mark.parametrize("pair,metric", CASES)
def test_item_grouped_acc_eq_and_its_epsilon(ted_results, pair, metric):
    expected = FIXTURE["pairs"][pair]["metrics"][metric]
    result = ted_results[pair]
    assert result.value(metric, "acc_eq_item") == pytest.approx(expected["acc_eq_item"], abs=1e-9)
    assert result.epsilon(metric, "acc_eq_item") == pytest.approx(expected["acc_eq_item_epsilon"], abs=1e-9)


@pytest.mark.parametrize("pair,metric", CASES)
def test_ungrouped_acc_eq_on_a_slice(ted, ted_results, pair, metric):
    expected = FIXTURE["pairs"][pair]["metrics"][metric]
    items = FIXTURE["pairs"][pair]["slice_items"]
    sign = 1.0 if ted_results[pair].higher_is_better[metric] else -1.0
    gold = ted[pair].gold[:, :items]
    scores = sign * ted_results[pair].scores[metric][:, :items]
    found = st.tie_calibrated_accuracy(gold, scores, grouped=False)
    assert found.sample_rate == 1.0 and found.n_pairs == gold.size * (gold.size - 1) // 2
    assert found.accuracy == pytest.approx(expected["acc_eq_slice"], abs=1e-9)
    assert found.epsilon == pytest.approx(expected["acc_eq_slice_epsilon"], abs=1e-9)
    # Plain pairwise accuracy is acc_eq at ε = 0: stats.Agreement.
    plain = st.accuracy_with_ties(gold, scores, 0.0, grouped=False).accuracy
    assert plain == pytest.approx(expected["pairwise_acc_slice"], abs=1e-9)


@pytest.mark.parametrize("pair,metric", CASES)
def test_system_level_pairwise_accuracy_from_corpus_scores(ted_results, pair, metric):
    expected = FIXTURE["pairs"][pair]["metrics"][metric]
    result = ted_results[pair]
    assert result.system_level[metric] == "corpus"
    sign = 1.0 if result.higher_is_better[metric] else -1.0
    assert np.allclose(sign * np.array(result.system_scores[metric]), expected["system_scores"], rtol=0, atol=1e-9)
    assert result.value(metric, "pairwise_acc_sys") == pytest.approx(expected["pairwise_acc_sys"], abs=1e-9)
