"""A calibrated tie rule through every path that judges: the runner (and the API's grid), the API's sentence
verdicts, severity curves, challenge sets, and the command line; each metric judged by its own ε, the
signatures naming the calibration, and every refusal before anything is scored.

The expected verdicts are computed here from the run's own scores with the definition of a calibrated tie
(|s_orig − s_corr| ≤ ε, Deutsch, Foster & Freitag 2023, §3), independently of the verdict function."""
from __future__ import annotations

import json

import numpy as np
import pytest

from muttlab import api
from muttlab.corruptions import catalog
from muttlab.corruptions.base import Rule
from muttlab.engine import runner
from muttlab.errors import MuttlabError
from muttlab.rules import CALIBRATED, TieRule
from muttlab.settings import load_settings
from tests.conftest import run_muttlab
from tests.engine.calibrations import EPSILON, write_calibrations

ZH_EN = TieRule(CALIBRATED, 0.0, "mqm-ted", "zh-en")
DEMETR = "demetr/dataset/critical_id8_negation.json"


@pytest.fixture
def calibrated(sample_settings, tmp_path):
    """The bundled sample (English) judged by the zh-en calibrations of the fixture."""
    return sample_settings.with_overrides(calibrations_file=write_calibrations(tmp_path)).with_rules(tie=ZH_EN)


def test_the_runner_judges_each_metric_by_its_own_epsilon(calibrated, sample_settings):
    suite = api.load_suite(calibrated, "sample")
    results = runner.run(suite, ["BLEU-4", "chrF"], [5], calibrated)
    default = runner.run(suite, ["BLEU-4", "chrF"], [5], sample_settings).table
    table = results.table
    strict = np.array([catalog.get(c).rule is Rule.ORIG_BETTER for c in table["corruption"]])
    for metric, eps in EPSILON.items():
        mine = (table["metric"] == metric).to_numpy()
        delta = (table["s_orig"] - table["s_corr"]).to_numpy()[mine]
        assert table["tied"].to_numpy()[mine].tolist() == (np.abs(delta) <= eps).tolist()
        assert table["passed"].to_numpy()[mine & strict].tolist() == (delta[strict[mine]] > eps).tolist()
        # The Difference formula's trials do not depend on the tie rule.
        same = mine & ~strict
        assert table["passed"].to_numpy()[same].tolist() == default["passed"].to_numpy()[same].tolist()
        assert results.signature(metric).endswith(f"|tol:0.15|tie:calibrated:mqm-ted:zh-en|data:3b9c1e0a7f5d|eps:{eps}")
    # ε = 0.05 on BLEU-4 makes ties of differences the default rule judged: the tie rate grows.
    tied = table.groupby("metric")["tied"].sum()
    assert tied["BLEU-4"] > default.groupby("metric")["tied"].sum()["BLEU-4"]
    assert set(results.accuracy()["signature"].str.rsplit("|eps:", n=1).str[1]) == {"0.05", "2.5"}
    assert results.rules.signature() == "tol:0.15|tie:calibrated:mqm-ted:zh-en"


@pytest.mark.parametrize("rule, metric, reason", [
    (ZH_EN, "TER", "not informative"),
    (ZH_EN, "ROUGE-L", "not as it is now"),
    (ZH_EN, "CIDEr-D", "CIDEr-D has no calibration there"),
    (TieRule(CALIBRATED, 0.0, "mqm-ted", "en-de"), "BLEU-4", "calibrated on translations into 'de'"),
    (TieRule(CALIBRATED, 0.0, "wmt99", "zh-en"), "BLEU-4", "unknown study 'wmt99'"),
])
def test_a_metric_the_rule_cannot_judge_is_refused_before_anything_is_scored(calibrated, rule, metric, reason,
                                                                            monkeypatch):
    monkeypatch.setattr(runner._Scorer, "score_each", lambda *a, **k: pytest.fail("scored before the refusal"))
    with pytest.raises(MuttlabError, match=reason):
        api.run_grid(calibrated.with_rules(tie=rule), [metric], suite="sample")


def test_a_suite_file_in_german_takes_the_en_de_calibration_and_refuses_zh_en(calibrated, tmp_path):
    suite_path = tmp_path / "german.jsonl"
    suite_path.write_text("".join(json.dumps({"id": f"t{i}", "corruption": "neg_subj", "lang": "de",
                                              "original": f"Ein Mann fährt {i} Rad.",
                                              "corrupted": f"Kein Mann fährt {i} Rad.",
                                              "references": [f"Ein Mann fährt {i} Fahrrad."]}) + "\n"
                                  for i in range(4)), encoding="utf-8")
    assert api.load_suite(calibrated, str(suite_path)).languages == ("de",)
    german = calibrated.with_rules(tie=TieRule(CALIBRATED, 0.0, "mqm-ted", "en-de"))
    results = api.run_grid(german, ["BLEU-4"], suite=str(suite_path), ref_counts=[1])
    assert results.signature("BLEU-4").endswith("|eps:0.04")
    with pytest.raises(MuttlabError, match="trials' target language is 'de'"):
        api.run_grid(calibrated, ["BLEU-4"], suite=str(suite_path), ref_counts=[1])


def test_sentence_verdicts_severity_and_challenge_sets_use_the_calibration(calibrated, data_dir):
    corrupted = api.corrupt("a man rides a bike", ["a man is riding a bicycle"], ["remove_prep", "typo"], 13)
    scores = api.score(calibrated, ["chrF"], ["a man rides a bike", *corrupted["corrupted"]],
                       [["a man is riding a bicycle"]] * (1 + len(corrupted)))
    verdicts = api.sentence_verdicts(scores, corrupted, calibrated)
    delta = verdicts["s_orig"] - verdicts["s_corr"]
    assert verdicts["passed"].tolist() == (delta > EPSILON["chrF"]).tolist()

    curve = api.severity(calibrated, "typo", ["chrF"], [1, 2])
    assert curve["signature"].str.endswith("|tie:calibrated:mqm-ted:zh-en|data:3b9c1e0a7f5d|eps:2.5").all()

    demetr = api.read_suite(data_dir / DEMETR)  # translations into English
    results = api.run_challenge(calibrated, demetr, ["chrF"])
    table = results.table.dropna(subset=["s_good"])
    delta = (table["s_good"] - table["s_incorrect"]).to_numpy()
    second = (table["expected"] == "second better").to_numpy()
    tied = np.abs(delta) <= EPSILON["chrF"]
    assert (table["outcome"] == "tie").to_numpy().tolist() == tied.tolist()
    assert table["passed"].tolist() == np.where(second, -delta > EPSILON["chrF"], delta > EPSILON["chrF"]).tolist()
    assert results.signature("chrF").endswith("|eps:2.5")


def test_the_environment_and_the_command_line_name_the_calibrated_rule(tmp_path, monkeypatch):
    calibrations = write_calibrations(tmp_path)
    settings = load_settings({"MUTTLAB_TIE_RULE": "calibrated:mqm-ted:zh-en",
                              "MUTTLAB_CALIBRATIONS": str(calibrations)})
    assert settings.rules.tie == ZH_EN and settings.calibrations_file == calibrations
    env = {"MUTTLAB_CALIBRATIONS": str(calibrations), "MUTTLAB_CACHE_DIR": str(tmp_path / "cache"),
           "MUTTLAB_DATA_DIR": ""}
    run = run_muttlab("run", "--suite", "sample", "--metrics", "BLEU-4", "--refs", "5", "--tie-rule",
                      "calibrated:mqm-ted:zh-en", "--format", "json", env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    cells = json.loads(run.stdout)
    assert cells and all(c["signature"].endswith("|tie:calibrated:mqm-ted:zh-en|data:3b9c1e0a7f5d|eps:0.05")
                         for c in cells)
    for rule, reason in [("calibrated:mqm-ted:fr-en", "unknown language pair 'fr-en' of mqm-ted; it has en-de, zh-en"),
                         ("calibrated:../x:zh-en", "plain name")]:
        refused = run_muttlab("run", "--suite", "sample", "--metrics", "BLEU-4", "--tie-rule", rule, env=env,
                              timeout=300)
        assert refused.returncode == 2 and refused.stdout == ""
        assert reason in refused.stderr and "Traceback" not in refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1
