"""The meta-evaluation: which metrics score which language, the baseline rows, significance, the result's
JSON form and the calibrations it writes."""
from __future__ import annotations

import json

import numpy as np
import pytest

from muttlab import api
from muttlab.errors import DataError, InvalidArgument, MuttlabError, UnknownMetric
from muttlab.meta import calibration, evaluate, statistics as st
from muttlab.meta.result import STATISTICS, MetaEvaluation
from muttlab.metrics.base import Metric
from muttlab.metrics.registry import Registry

ITEMS = 40


class EnglishLength(Metric):
    """An outside metric that says it scores English only: shorter outputs score higher."""

    name = "EnglishLength"
    languages = ("en",)
    language_reason = "counts English words"

    def _score(self, candidates, references):
        return np.array([-len(c.split()) for c in candidates], dtype=float)


@pytest.fixture(scope="module")
def small_results(meta_settings, ted):
    """Both pairs on their first 40 items, every statistic, chrF, TER and an outside metric (and on en-de METEOR,
    which scores English only: the JVM never starts)."""
    registry = Registry(use_entry_points=False)
    registry.add(EnglishLength())
    metrics = {"en-de": ["chrF", "TER", "EnglishLength", "METEOR-1.5"], "zh-en": ["chrF", "TER", "EnglishLength"]}
    out = {pair: evaluate.meta_evaluate(meta_settings, judgments.first_items(ITEMS), metrics[pair],
                                        registry=registry, n_resamples=200)
           for pair, judgments in ted.items()}
    registry.close()
    return out


def test_a_metric_that_cannot_score_the_language_is_skipped_with_its_reason(small_results):
    ende, zhen = small_results["en-de"], small_results["zh-en"]
    assert set(ende.skipped) == {"EnglishLength", "METEOR-1.5"}
    assert ende.skipped["EnglishLength"] == "scores en only (counts English words); these outputs are in 'de'"
    assert "English stemmer, WordNet synonyms and paraphrase table" in ende.skipped["METEOR-1.5"]
    assert "EnglishLength" in zhen.values and "EnglishLength" not in zhen.skipped  # an outside metric is evaluated
    rows = [r for r in ende.rows() if r["metric"] == "METEOR-1.5"]
    assert len(rows) == len(STATISTICS) and all(r["value"] is None and "only" in r["reason"] for r in rows)


def test_english_only_lab_metrics_say_so():
    registry = Registry(use_entry_points=False)
    for name in ("METEOR-1.5", "TERp", "BADGER-like", "W2V-AVG", "BERTScore-F1", "EmbeddingCosine", "ReVal-LSTM",
                 "DREEM", "ML-METEOR"):
        cls = registry._factories[name][1]
        try:
            metric = cls()
        except MuttlabError:  # not installed here: the class still says what it scores
            continue
        assert metric.languages == ("en",) and metric.language_reason, name
        assert evaluate.language_reason(metric, "de") and evaluate.language_reason(metric, "en") is None
    for name in ("sentBLEU", "chrF", "TER", "BLEU-4", "ROUGE-L", "CIDEr-D"):
        assert registry.get(name).languages is None
    registry.close()


def test_every_statistic_with_baselines_and_clusters(small_results):
    result = small_results["zh-en"]
    assert result.statistics == list(STATISTICS) and result.baselines == ["constant baseline", "random baseline"]
    assert set(result.values) == {"chrF", "TER", "EnglishLength", "constant baseline", "random baseline"}
    assert set(result.significance) == {"acc_eq_item", "acc_eq", "pairwise_acc_sys", "pearson_sys"}
    sig = result.significance["acc_eq_item"]
    assert sig.ranking == result.ranking("acc_eq_item")[:len(sig.ranking)]
    assert sig.clusters[0] == 1 and sig.clusters == sorted(sig.clusters)
    # The constant metric ties everything: its pairwise accuracy is the share of pairs the humans tie.
    constant = result.values["constant baseline"]
    assert constant["acc_eq_item"] == constant["pairwise_acc_item"]
    assert not result.informative["constant baseline"]["acc_eq_item"]
    assert np.isnan(constant["pearson_item"]) and np.isnan(constant["kendall"])
    judgments_pairs = result.pairs["acc_eq_item"]
    assert judgments_pairs == ITEMS * 14 * 13 // 2 and result.pairs["acc_eq"] == (ITEMS * 14) * (ITEMS * 14 - 1) // 2


def test_the_constant_metric_on_en_de_reaches_about_half(ted_results):
    # Data README: experts tie about half of en-de's item-grouped pairs, "a metric that ties everything scores
    # acc*_eq ~ 0.480 item-grouped".
    result = ted_results["en-de"]
    assert result.value("constant baseline", "acc_eq_item") == pytest.approx(0.480, abs=0.0005)


def _p(result, statistic, first, second):
    sig = result.significance[statistic]
    a, b = sorted((sig.ranking.index(first), sig.ranking.index(second)))
    return sig.p_values[a][b]


def test_the_same_seed_gives_the_same_numbers(meta_settings, ted):
    part = ted["zh-en"].first_items(ITEMS)
    options = {"statistics": ["acc_eq_item", "pairwise_acc_sys"], "n_resamples": 200}
    one = evaluate.meta_evaluate(meta_settings, part, ["chrF", "TER"], **options)
    two = evaluate.meta_evaluate(meta_settings, part, ["chrF", "TER"], **options)
    assert one == two
    # A comparison's generator is named by its two metrics: another metric beside them changes no p-value.
    three = evaluate.meta_evaluate(meta_settings, part, ["chrF", "TER", "sentBLEU"], **options)
    for statistic in options["statistics"]:
        assert _p(three, statistic, "chrF", "TER") == _p(one, statistic, "chrF", "TER")
    other = evaluate.meta_evaluate(meta_settings, part, ["chrF", "TER"], seed=99, **options)
    assert other.value("random baseline", "acc_eq_item") != one.value("random baseline", "acc_eq_item")


def test_the_json_form_is_lossless(small_results, ted_results):
    for result in (small_results["en-de"], ted_results["zh-en"]):
        back = MetaEvaluation.from_dict(json.loads(json.dumps(result.to_dict(), allow_nan=False)))
        assert back == result and back.to_dict() == result.to_dict()
        for metric, row in result.values.items():
            for statistic, value in row.items():
                assert back.values[metric][statistic] == value or (np.isnan(value)
                                                                    and np.isnan(back.values[metric][statistic]))
    with_scores = ted_results["en-de"]
    back = MetaEvaluation.from_dict(json.loads(json.dumps(with_scores.to_dict())))
    assert all(np.array_equal(back.scores[m], with_scores.scores[m], equal_nan=True) for m in with_scores.scores)
    with pytest.raises(DataError, match="not a format-2 meta-evaluation"):
        MetaEvaluation.from_dict({"format": 1})  # the format before the reasons and intervals
    with pytest.raises(DataError, match="lacks values"):
        MetaEvaluation.from_dict({k: v for k, v in with_scores.to_dict().items() if k != "values"})


def test_rows_have_the_documented_fields(small_results):
    rows = small_results["zh-en"].rows()
    for row in rows:
        assert {"metric", "statistic", "value"} <= set(row)
        assert ("epsilon" in row) == (row["statistic"] in ("acc_eq_item", "acc_eq") and "reason" not in row)
    first = rows[0]
    assert first["statistic"] == "acc_eq_item" and first["rank"] == 1 and first["cluster"] == 1


def test_calibrations_name_what_they_hold(ted_results):
    records = calibration.calibration_records(ted_results["en-de"])
    assert [r["metric"] for r in records] == ["sentBLEU", "chrF", "TER"]
    for record in records:
        assert set(record) == set(calibration.FIELDS)
        assert (record["study"], record["pair"], record["target_language"]) == ("mqm-ted", "en-de", "de")
        assert record["signature"].startswith(record["metric"] + "|")
        assert record["data_digest"] == ted_results["en-de"].data_digest and record["n_pairs"] == 529 * 78
    by_metric = {r["metric"]: r for r in records}
    # On en-de the best ε of sentBLEU is 100, its whole range (tests/meta/fixtures/mtme_ted.json): every pair tied.
    assert by_metric["sentBLEU"]["epsilon"] == pytest.approx(100.0) and not by_metric["sentBLEU"]["informative"]
    document = api.meta_calibrations(ted_results["zh-en"])
    assert document["version"] == 1 and all(r["informative"] for r in document["calibrations"])


def test_bad_requests(meta_settings, ted):
    part = ted["en-de"].first_items(5)
    with pytest.raises(UnknownMetric):
        evaluate.meta_evaluate(meta_settings, part, ["chrF", "NoSuchMetric"])
    with pytest.raises(MuttlabError, match="unknown statistics 'tau'; choose from acc_eq_item"):
        evaluate.meta_evaluate(meta_settings, part, ["chrF"], statistics="acc_eq_item,tau")
    with pytest.raises(MuttlabError, match="unknown significance statistic 'kendall'"):
        evaluate.meta_evaluate(meta_settings, part, ["chrF"], significance=["kendall"])
    with pytest.raises(InvalidArgument, match="n_resamples must be from 1"):
        evaluate.meta_evaluate(meta_settings, part, ["chrF"], n_resamples=0)
    with pytest.raises(InvalidArgument, match="meta_evaluate: bogus is not an option"):
        api.meta_evaluate(meta_settings, part, ["chrF"], bogus=1)


def test_significance_can_be_left_out_and_statistics_chosen(meta_settings, ted):
    result = api.meta_evaluate(meta_settings, ted["en-de"].first_items(10), "chrF", statistics="pearson_sys,acc_eq",
                               significance="none")
    assert result.statistics == ["pearson_sys", "acc_eq"] and result.significance == {}
    assert st.DEFAULT_RESAMPLES == 1000 and result.n_resamples == 1000


def test_the_api_reads_the_judgments_a_page_shows(meta_settings, ted):
    judgments = api.load_judgments(meta_settings, "mqm-ted:en-de")
    assert judgments.systems == ted["en-de"].systems and len(judgments.errors) == len(ted["en-de"].errors)
    with pytest.raises(InvalidArgument, match="load_judgments: data must be a study's pair"):
        api.load_judgments(meta_settings, None)
    with pytest.raises(InvalidArgument, match="load_judgments: bogus is not an option"):
        api.load_judgments(meta_settings, "mqm-ted:en-de", bogus=1)


def test_large_inputs_sample_thresholds_and_skip_pairwise_significance(meta_settings, ted):
    part = ted["en-de"].first_items(10)  # 130 outputs, 8,385 pairs
    small = api.meta_evaluate(meta_settings, part, "chrF", statistics="acc_eq,pairwise_acc_sys",
                              max_exact_pairs=1000, n_resamples=50)
    assert set(small.significance) == {"pairwise_acc_sys"}
    assert "no significance for acc_eq" in small.notes[-1]
    exact = api.meta_evaluate(meta_settings, part, "chrF", statistics="acc_eq", n_resamples=50)
    assert small.value("chrF", "acc_eq") == exact.value("chrF", "acc_eq")  # 20M samples > 8,385 pairs: exact
    assert small.search["chrF"]["acc_eq"]["sample_rate"] == 1.0


def _untied(gold, metric, epsilon):
    """Item-grouped pairs of judged outputs whose metric scores differ by more than ε, counted item by item."""
    count = 0
    for i in range(gold.shape[1]):
        judged = [s for s in range(gold.shape[0]) if not np.isnan(gold[s, i])]
        count += sum(abs(metric[a, i] - metric[b, i]) > epsilon for k, a in enumerate(judged) for b in judged[k + 1:])
    return count


@pytest.fixture(scope="module")
def en_de_tested(meta_settings, ted):
    """en-de's item-grouped acc*_eq of sentBLEU, chrF and TER, clustered (1,000 resamples, the settings' seed)."""
    return api.meta_evaluate(meta_settings, ted["en-de"], metrics=["sentBLEU", "chrF", "TER"],
                             statistics=["acc_eq_item"], significance=["acc_eq_item"], keep_scores=True)


def test_an_epsilon_is_informative_only_where_it_beats_tying_everything(en_de_tested):
    result = en_de_tested
    constant = result.values["constant baseline"]["acc_eq_item"]
    for metric in ("sentBLEU", "chrF", "TER"):
        oriented = result.scores[metric] * (1 if result.higher_is_better[metric] else -1)
        untied = _untied(result.gold, oriented, result.epsilons[metric]["acc_eq_item"])
        informative, reason = result.informative[metric]["acc_eq_item"], result.reasons[metric]["acc_eq_item"]
        if metric in ("sentBLEU", "chrF"):
            # Their best ε on en-de is their whole range (tests/meta/fixtures/mtme_ted.json): every pair tied.
            assert untied == 0 and not informative
            assert reason.endswith(f"ties every one of the {41262:,} pairs: every strict trial would be a tie")
        else:
            # TER's ε = 300 leaves a handful of pairs untied, and on those it is right more often than not: it beats
            # the constant metric by 0.0003, which the swap test (each metric keeping its ε) finds significant.
            assert untied == 29 and result.values["TER"]["acc_eq_item"] > constant and informative
            assert f"29 of {41262:,} pairs left untied" in reason and "beats the constant baseline's 0.4803 (p = " \
                in reason
    assert not result.informative["constant baseline"]["acc_eq_item"]
    assert "the baseline a calibration has to beat" in result.reasons["constant baseline"]["acc_eq_item"]


def test_a_refused_calibration_quotes_its_reason(en_de_tested, meta_settings, tmp_path):
    from muttlab.engine import verdict
    from muttlab.rules import parse_tie_rule

    path = tmp_path / "calibrations.json"
    calibration.write_calibrations(path, calibration.calibration_records(en_de_tested))
    record = json.loads(path.read_text())["calibrations"][1]
    assert (record["metric"], record["informative"]) == ("chrF", False) and record["reason"]
    settings = meta_settings.with_overrides(calibrations_file=path).with_rules(
        tie=parse_tie_rule("calibrated:mqm-ted:en-de", "test"))
    with pytest.raises(MuttlabError) as refused:
        verdict.rules_for(settings, "chrF", en_de_tested.metrics["chrF"], 0.0, ("de",))
    assert f"chrF's calibration is not informative ({record['reason']})" in str(refused.value)
