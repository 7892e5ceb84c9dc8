"""The rules a trial is judged by (muttlab.rules): the tie rule's forms and range, the calibrations file, which
calibration a metric gets and why one is refused, the rules' signatures, and a calibrated ε in the verdict.

The calibrated tie is WMT's tie calibration (Deutsch, Foster & Freitag 2023, §3; mt-metrics-eval's
``stats.KendallWithTiesOpt``): two metric scores are tied when their absolute difference is at most ε, in the
metric's own units."""
from __future__ import annotations

import json

import numpy as np
import pytest

from muttlab.engine import verdict
from muttlab.errors import DataError, MuttlabError
from muttlab.rules import (CALIBRATED, DEFAULT_RULES, EXACT_RULE, Calibrations, Rules, TieRule, parse_tie_rule,
                           relative_tie_rule)
from muttlab.trials import Expectation
from tests.engine.calibrations import write_calibrations

FIRST, SAME = Expectation.FIRST_BETTER, Expectation.ABOUT_SAME
ZH_EN = TieRule(CALIBRATED, 0.0, "mqm-ted", "zh-en")


@pytest.fixture(scope="module")
def calibrations(tmp_path_factory):
    return Calibrations.read(write_calibrations(tmp_path_factory.mktemp("calibrations")))


def _signature(name: str) -> str:
    from muttlab.metrics.registry import Registry
    return Registry(use_entry_points=False).info(name).signature


# --------------------------------------------------------------------------- the tie rule's forms

def test_the_three_forms_of_a_tie_rule_read_and_write_back():
    assert parse_tie_rule("exact", "X") == EXACT_RULE and str(EXACT_RULE) == "exact"
    assert parse_tie_rule("1e-9", "X") == DEFAULT_RULES.tie and str(DEFAULT_RULES.tie) == "1e-9"
    assert parse_tie_rule(" Calibrated:MQM-TED:zh-en ", "X") == ZH_EN and str(ZH_EN) == "calibrated:mqm-ted:zh-en"
    assert parse_tie_rule(str(ZH_EN), "X") == ZH_EN


@pytest.mark.parametrize("text", ["calibrated:../../etc/passwd:en-de", "calibrated:/tmp/calibrations:zh-en",
                                  "calibrated:mqm-ted:zh-en/../../x", "calibrated:mqm-ted:..",
                                  "calibrated:mqm ted:zh-en", "calibrated:*:zh-en", "calibrated:mqm-ted:%2e%2e",
                                  "calibrated:" + "a" * 65 + ":zh-en", "calibrated::zh-en"])
def test_a_calibrated_rule_names_plain_names_never_a_path(text):
    with pytest.raises(MuttlabError, match="plain name"):
        parse_tie_rule(text, "--tie-rule")


@pytest.mark.parametrize("text", ["calibrated", "calibrated:mqm-ted", "calibrated:mqm-ted:zh-en:extra",
                                  "calibratedx:mqm-ted:zh-en"])
def test_a_calibrated_rule_has_a_study_and_a_pair(text):
    with pytest.raises(MuttlabError, match=r"calibrated:<study>:<pair>"):
        parse_tie_rule(text, "--tie-rule")


def test_the_relative_rule_takes_one_range():
    assert relative_tie_rule(0, "f") == EXACT_RULE and relative_tie_rule(1e-15, "f").tolerance == 1e-15
    for value in (1e-16, 0.01, 1e8, -1e-9, float("inf"), float("nan"), True, "1e-9"):
        with pytest.raises(MuttlabError, match=r"f=.*from 1e-15 to below 0\.01"):
            relative_tie_rule(value, "f")


# --------------------------------------------------------------------------- the calibrations file

def test_the_calibration_a_metric_gets(calibrations):
    found = calibrations.find(ZH_EN, "BLEU-4", _signature("BLEU-4"), ("en",))
    assert (found.study, found.pair, found.target_language, found.epsilon) == ("mqm-ted", "zh-en", "en", 0.05)
    assert calibrations.studies() == ["mqm-ted"] and calibrations.pairs("mqm-ted") == ["en-de", "zh-en"]


@pytest.mark.parametrize("rule, metric, languages, message", [
    (TieRule(CALIBRATED, 0.0, "wmt23", "zh-en"), "BLEU-4", ("en",),
     "unknown study 'wmt23'; the calibrations have mqm-ted"),
    (TieRule(CALIBRATED, 0.0, "mqm-ted", "de-en"), "BLEU-4", ("en",),
     "unknown language pair 'de-en' of mqm-ted; it has en-de, zh-en"),
    (ZH_EN, "CIDEr-D", ("en",), "CIDEr-D has no calibration there; calibrated metrics: BLEU-4, ROUGE-L, TER, chrF"),
    (ZH_EN, "ROUGE-L", ("en",), "ROUGE-L was calibrated as ROUGE-L|beta:1.2|tok:ptb|v:0, not as it is now"),
    (ZH_EN, "TER", ("en",), "not informative (its ε = 412.0 ties every pair of the study, so every strict trial"),
    (TieRule(CALIBRATED, 0.0, "mqm-ted", "en-de"), "BLEU-4", ("en",),
     "calibrated on translations into 'de', but the trials' target language is 'en' (MUTT and the sample"),
    (ZH_EN, "BLEU-4", ("en", "de"), "the trials' target language is 'de'"),
])
def test_a_calibration_that_cannot_judge_is_refused_with_the_reason(calibrations, rule, metric, languages, message):
    with pytest.raises(MuttlabError) as refused:
        calibrations.find(rule, metric, _signature(metric), languages)
    assert message in str(refused.value) and str(rule) in str(refused.value)


def test_the_document_of_calibrations_reads_back(calibrations, tmp_path):
    path = tmp_path / "written.json"
    path.write_text(json.dumps(calibrations.document()))
    assert Calibrations.read(path).entries == calibrations.entries and len(calibrations.entries) == 6


def test_a_malformed_calibrations_file_is_a_data_error_naming_the_entry_and_field(tmp_path):
    good = json.loads(write_calibrations(tmp_path).read_text())
    path = tmp_path / "bad.json"
    for change, message in [
        (lambda d: d.update(version=2), "not a version-1 calibrations file"),
        (lambda d: d["calibrations"][1].pop("epsilon"), "calibration 1: field 'epsilon' must be a finite number"),
        (lambda d: d["calibrations"][0].update(epsilon=float("nan")), "calibration 0: field 'epsilon'"),
        (lambda d: d["calibrations"][2].update(informative="yes"), "calibration 2: field 'informative' must be bool"),
        (lambda d: d["calibrations"][3].update(study=""), "calibration 3: field 'study' must be a non-empty string"),
        (lambda d: d["calibrations"][0].update(epsilon=-0.1), "calibration 0: epsilon -0.1 is negative"),
        (lambda d: d["calibrations"].append([1, 2]), "calibration 6 is not an object"),
    ]:
        document = json.loads(json.dumps(good))
        change(document)
        path.write_text(json.dumps(document))
        with pytest.raises(DataError, match=message) as error:
            Calibrations.read(path)
        assert str(path) in str(error.value)
    path.write_text("{not json")
    with pytest.raises(DataError, match="malformed JSON"):
        Calibrations.read(path)
    with pytest.raises(DataError, match="no calibrations file.*MUTTLAB_CALIBRATIONS"):
        Calibrations.read(tmp_path / "absent.json")


# --------------------------------------------------------------------------- signatures and the verdict

def test_a_calibrated_signature_names_the_study_pair_data_and_epsilon(calibrations):
    found = calibrations.find(ZH_EN, "chrF", _signature("chrF"))
    rules = Rules(tie=ZH_EN).for_metric(0.0, found)
    assert Rules(tie=ZH_EN).signature() == "tol:0.15|tie:calibrated:mqm-ted:zh-en"
    assert rules.signature() == "tol:0.15|tie:calibrated:mqm-ted:zh-en|data:3b9c1e0a7f5d|eps:2.5"
    assert rules.for_metric(1e-6, found).signature().endswith("|eps:2.5|floor:1e-6")


def test_a_calibrated_epsilon_is_an_absolute_difference_in_the_metrics_units(calibrations):
    chrf = Rules(tie=ZH_EN).for_metric(0.0, calibrations.find(ZH_EN, "chrF", _signature("chrF")))
    # chrF is on 0-100: 2.0 apart is a tie under its ε of 2.5 at any level; 3.0 apart is a judgement.
    judged = verdict.judge([60.0, 60.0, 1.0, 60.0], [58.0, 57.0, 0.0, 62.5], FIRST, True, chrf)
    assert judged.outcome.tolist() == ["tie", "passed", "tie", "tie"]
    assert judged.margin.tolist() == [0.0, 3.0, 0.0, 0.0]
    # Under the default relative rule the same differences are all judgements.
    assert verdict.judge([60.0, 60.0, 1.0, 60.0], [58.0, 57.0, 0.0, 62.5], FIRST, True).outcome.tolist() == [
        "passed", "passed", "passed", "failed"]
    # The Difference formula is the Difference formula under any tie rule.
    assert verdict.judge([60.0], [50.0], SAME, True, chrf).outcome.tolist() == ["failed"]
    assert np.array_equal(verdict.judge([60.0], [58.0], SAME, True, chrf).margin,
                          verdict.judge([60.0], [58.0], SAME, True).margin)


def test_a_calibrated_rule_not_bound_to_a_calibration_cannot_judge():
    with pytest.raises(MuttlabError, match="needs the metric's calibration"):
        verdict.judge([0.5], [0.4], FIRST, True, Rules(tie=ZH_EN))
    with pytest.raises(MuttlabError, match="needs its calibration"):
        Rules(tie=ZH_EN).for_metric(0.0)
