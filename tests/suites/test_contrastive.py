"""Challenge-set reporting: ties as failures, the Kendall-τ-like statistic, ACES' weighted summary, and
pairs in languages a metric does not handle marked unsupported.

The expected counts are worked out by hand from the files in ``files/`` with an exact-match metric
(1 when the candidate equals a reference, else 0), so every outcome can be read off the file.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from muttlab.metrics.base import Metric
from muttlab.metrics.registry import Registry
from muttlab.settings import Settings
from muttlab.suites import read_suite
from muttlab.suites.contrastive import aces_category, run_challenge

FILES = Path(__file__).parent / "files"


class ExactRef(Metric):
    name = "ExactRef"

    def __init__(self, languages=None, name="ExactRef"):
        self.languages = languages
        self.name = name

    def _score(self, candidates, references):
        return np.array([1.0 if c in refs else 0.0 for c, refs in zip(candidates, references)])


@pytest.fixture
def registry():
    reg = Registry(use_entry_points=False)
    reg.add(ExactRef())
    reg.add(ExactRef(languages=("en",), name="ExactRef-en"))
    return reg


@pytest.fixture
def settings(tmp_path):
    return Settings(cache_dir=tmp_path, use_cache=False)


def _row(summary, metric, phenomenon):
    part = summary[(summary["metric"] == metric) & (summary["phenomenon"] == phenomenon)]
    assert len(part) == 1
    return part.iloc[0]


def test_ties_count_as_failures_and_tau_is_concordant_minus_discordant(settings, registry):
    results = run_challenge(settings, read_suite(FILES / "wmt_challenge.tsv"), ["ExactRef"], registry)
    summary = results.summary()
    # negation: line 2 good == reference (concordant); line 6 has an empty good translation, scored 0 like
    # its incorrect one (a tie); line 7 good == incorrect (a tie)
    neg = _row(summary, "ExactRef", "negation")
    assert (neg.n, neg.concordant, neg.discordant, neg.ties, neg.unsupported) == (3, 1, 2, 2, 0)
    assert neg.accuracy == pytest.approx(100 / 3) and neg.tau == pytest.approx(-1 / 3)
    # numbers: neither side equals the reference: a tie, so τ = -1
    num = _row(summary, "ExactRef", "numbers")
    assert (num.concordant, num.ties, num.accuracy, num.tau) == (0, 1, 0.0, -1.0)


def test_progress_names_each_metric_and_side_before_scoring_it(settings, registry):
    suite_file = read_suite(FILES / "wmt_challenge.tsv")
    seen = []

    class Watched(ExactRef):
        def _score(self, candidates, references):
            seen.append(("scored", tuple(candidates)))
            return super()._score(candidates, references)

    registry.add(Watched(name="Watched"))
    run_challenge(settings, suite_file, ["ExactRef", "Watched"], registry,
                  progress=lambda *step: seen.append(("report", step)))
    reports = [step for kind, step in seen if kind == "report"]
    assert [(step, total) for step, total, _ in reports] == [(0, 4), (1, 4), (2, 4), (3, 4), (4, 4)]
    n = len(suite_file.suite.trials)
    assert reports[2][2] == f"scoring Watched (2 of 2 metrics): the better texts of {n:,} pairs"
    assert reports[3][2] == f"scoring Watched (2 of 2 metrics): the worse texts of {n:,} pairs"
    # each report comes before the side it names is scored
    order = [kind for kind, _ in seen]
    assert order[-5:] == ["report", "scored", "report", "scored", "report"]
    assert [c for kind, c in seen if kind == "scored"][0] == tuple(t.original for t in suite_file.suite.trials)


def test_english_only_metric_marks_other_target_languages_unsupported(settings, registry):
    results = run_challenge(settings, read_suite(FILES / "wmt_challenge.tsv"), ["ExactRef", "ExactRef-en"], registry)
    summary = results.summary()
    assert _row(summary, "ExactRef", "antonym").concordant == 1
    antonym_en = _row(summary, "ExactRef-en", "antonym")
    assert (antonym_en.n, antonym_en.unsupported) == (0, 1)
    assert np.isnan(antonym_en.tau)
    table = results.table
    unsupported = table[(table.metric == "ExactRef-en") & (table.outcome == "unsupported")]
    assert list(unsupported["lang"]) == ["de"] and unsupported["s_good"].isna().all()


def test_demetr_reference_baseline_expects_the_second_text_and_not_applied_records_are_counted(settings, registry):
    results = run_challenge(settings, read_suite(FILES / "demetr.json"), ["ExactRef"], registry)
    summary = results.summary().set_index("phenomenon")
    # base_id35_reference: the second text is the reference (ExactRef 1) and the first is not (0): it wins
    assert (summary.loc["base_id35_reference", "concordant"], summary.loc["base_id35_reference", "n"]) == (1, 1)
    assert results.table.set_index("trial").loc["base_id35_reference/6", "expected"] == "second better"
    # critical_id8_negation: record 1 is a test item (0 vs 0, a tie); record 5 was not applied
    assert tuple(summary.loc["critical_id8_negation", ["n", "ties", "not_applied"]]) == (1, 1, 1)
    # base_id33_empty: mt_sent equals the reference, the empty output does not
    assert summary.loc["base_id33_empty", "concordant"] == 1
    by_severity = results.by_severity().set_index("severity")
    assert tuple(by_severity.loc["base", ["n", "concordant", "not_applied"]]) == (2, 2, 0)
    assert tuple(by_severity.loc["critical", ["n", "ties", "not_applied"]]) == (1, 1, 1)
    assert tuple(by_severity.loc["minor", ["n", "concordant"]]) == (1, 1)


class NoEmptyText(ExactRef):
    scores_empty_text = False

    def __init__(self):
        super().__init__(name="NoEmptyText")


def test_a_metric_that_cannot_score_empty_text_marks_the_pair_unsupported(settings, registry):
    registry.add(NoEmptyText())
    results = run_challenge(settings, read_suite(FILES / "demetr.json"), ["NoEmptyText"], registry)
    empty = _row(results.summary(), "NoEmptyText", "base_id33_empty")
    assert (empty.n, empty.unsupported) == (0, 1) and np.isnan(empty.accuracy)


def test_aces_summary_weights_categories(settings, registry):
    results = run_challenge(settings, read_suite(FILES / "aces.tsv"), ["ExactRef"], registry)
    aces = results.aces().iloc[0]
    # addition +1, omission +1, mistranslation (number hallucination, a tie) -1, punctuation +1,
    # real-world knowledge (antonym) +1, undertranslation (hypernym, a tie) -1
    assert (aces["addition"], aces["omission"], aces["mistranslation"]) == (1.0, 1.0, -1.0)
    assert (aces["undertranslation"], aces["real-world knowledge"], aces["punctuation"]) == (-1.0, 1.0, 1.0)
    assert np.isnan(aces["untranslated"])
    assert aces["categories"] == 6
    assert aces["aces_score"] == pytest.approx(5 + 5 - 5 + 1 - 5 + 0.1)


def test_aces_categories_of_published_phenomenon_names():
    assert aces_category("hallucination-date-time") == "mistranslation"
    assert aces_category("copy-source") == "untranslated"
    assert aces_category("hyponym-replacement") == "overtranslation"
    assert aces_category("similar-language-low") == "wrong language"
    assert aces_category("punctuation:statement-to-question") == "punctuation"
    assert aces_category("negation") is None


def test_real_metric_on_demetr_file(settings):
    results = run_challenge(settings, read_suite(FILES / "demetr.json"), ["sentBLEU", "TER"])
    table = results.table
    # The function-word record: the good translation equals the reference, so BLEU 100 / TER 0 beat the perturbation.
    row = table[(table.metric == "sentBLEU") & (table.phenomenon == "minor_id16_function_word")].iloc[0]
    assert row.s_good == pytest.approx(100.0) and row.outcome == "concordant"
    ter = table[(table.metric == "TER") & (table.phenomenon == "minor_id16_function_word")].iloc[0]
    assert ter.s_good == 0.0 and ter.s_incorrect > 0 and ter.outcome == "concordant"
