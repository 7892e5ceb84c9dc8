"""Verdicts under the default tie rule and under each metric's calibrated ε: the numbers are sacreBLEU's scores
judged by the rule's definition (counted here), and a calibration that cannot judge a suite is listed with why."""
from __future__ import annotations

import json

import pytest

from muttlab import api
from muttlab.errors import MuttlabError
from muttlab.resources.bundled import results_dir
from muttlab.sources import load_mutt_experiments
from tests.profile.conftest import sacre_chrf, sacre_ter, strictly_better

ZH_EN = "calibrated:mqm-ted:zh-en"


def _shipped_epsilon(pair: str, metric: str) -> dict:
    document = json.loads((results_dir() / "calibrations.json").read_text(encoding="utf-8"))
    return next(c for c in document["calibrations"] if c["pair"] == pair and c["metric"] == metric)


@pytest.fixture(scope="module")
def compared(profile_settings, registry):
    return api.compare_rules(profile_settings, ZH_EN, ["chrF", "TER"], ["mutt", "mslc"], registry=registry)


def test_accuracies_under_both_rules_are_sacrebleus_scores_judged_by_each(compared, profile_settings):
    epsilon = _shipped_epsilon("zh-en", "chrF")["epsilon"]
    assert compared.epsilons["chrF"] == epsilon and epsilon > 1  # chrF points experts do not tell apart
    trials = load_mutt_experiments(profile_settings).of("neg_subj")
    scores = [(sacre_chrf(t.original, list(t.refs(5))), sacre_chrf(t.corrupted, list(t.refs(5)))) for t in trials]
    default = sum(strictly_better(a, b, True) for a, b in scores)
    calibrated = sum(strictly_better(a, b, True, epsilon) for a, b in scores)
    ties = sum(abs(a - b) <= epsilon for a, b in scores)
    row = compared.table.query("metric == 'chrF' and suite == 'mutt' and group == 'neg_subj' and refs == 5").iloc[0]
    assert row["n"] == len(trials) == 336
    assert row["accuracy_default"] == pytest.approx(100 * default / 336)
    assert row["accuracy_compared"] == pytest.approx(100 * calibrated / 336)
    assert row["ties_compared"] == pytest.approx(100 * ties / 336) and calibrated < default
    assert row["change"] == pytest.approx(100 * (calibrated - default) / 336)


def test_meaning_preserving_cells_do_not_move(compared):
    # The Difference rule (|Δ| / s_orig <= 0.15) does not use the tie rule (docs/corruptions.md).
    for group in ("passive", "near_syms", "det_sub"):
        rows = compared.table.query(f"suite == 'mutt' and group == '{group}'")
        assert len(rows) == 6 and (rows["change"] == 0).all()


def test_a_calibration_of_another_target_language_is_refused_with_the_reason(compared):
    refused = compared.refused.set_index(["metric", "suite"])
    # MSLC24-B translates out of English (into de, es, zh); the zh-en calibrations are of English outputs.
    for metric in ("chrF", "TER"):
        reason = refused.loc[(metric, "mslc"), "reason"]
        assert "calibrated on translations into 'en', but the trials' target language is 'de', 'es', 'zh'" in reason
    assert set(compared.summary["suite"]) == {"mutt"}


def test_en_de_calibrations_never_judge_english_suites(profile_settings, registry):
    result = api.compare_rules(profile_settings, "calibrated:mqm-ted:en-de", ["chrF", "TER"], ["mutt"],
                               registry=registry)
    assert result.table.empty and result.summary.empty
    for reason in result.refused["reason"]:
        assert "calibrated on translations into 'de', but the trials' target language is 'en'" in reason


def german_suite(data_dir, folder) -> str:
    """A suite file of one's own, translations into German: MSLC24-B en-de's second human translations (refB)
    against the untranslated English source of the same segment, the reference beside them."""
    root = data_dir / "mslc/2024/data/MSLC-B/en-de"
    lines = {name: (root / f"{name}.txt").read_text(encoding="utf-8")[:-1].split("\n")
             for name in ("source", "reference", "hypothesis")}
    kinds = [line.split("\t")[1] for line in (root / "types.tsv").read_text(encoding="utf-8")[:-1].split("\n")]
    rows = [{"good": h, "incorrect": s, "reference": r, "phenomenon": "untranslated", "lp": "en-de"}
            for s, r, h, k in zip(lines["source"], lines["reference"], lines["hypothesis"], kinds)
            if k == "correct-language"]
    path = folder / "german.jsonl"
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return str(path)


def test_a_users_german_suite_under_the_en_de_calibrations(profile_settings, registry, data_dir, tmp_path):
    path = german_suite(data_dir, tmp_path)
    result = api.compare_rules(profile_settings, "calibrated:mqm-ted:en-de", ["chrF", "TER"], [path],
                               registry=registry)
    # chrF's en-de ε ties every pair of the study: not informative, refused with the calibration's own reason.
    (reason,) = result.refused.loc[result.refused["metric"] == "chrF", "reason"]
    assert f"chrF's calibration is not informative ({_shipped_epsilon('en-de', 'chrF')['reason']})" in reason
    # TER earned ε = 300 on en-de (it beats tying everything on 29 pairs): every one of these pairs lies within it
    # by sacreBLEU's own TER, so every trial ties and fails.
    (row,) = result.table.itertuples(index=False)
    rows = [json.loads(line) for line in open(path, encoding="utf-8")]
    deltas = [abs(sacre_ter(r["good"], [r["reference"]]) - sacre_ter(r["incorrect"], [r["reference"]])) for r in rows]
    assert len(rows) == 10 and (row.metric, row.suite, row.n) == ("TER", "german", 10)
    assert max(deltas) <= 300 and row.accuracy_compared == 0.0 and row.ties_compared == 100.0
    assert row.accuracy_default == pytest.approx(100 * sum(
        strictly_better(sacre_ter(r["good"], [r["reference"]]), sacre_ter(r["incorrect"], [r["reference"]]), False)
        for r in rows) / len(rows))


@pytest.mark.parametrize("rule, message", [
    ("calibrated:wmt99:zh-en", "unknown study 'wmt99'"), ("calibrated:mqm-ted:fr-en", "unknown language pair 'fr-en'"),
    ("calibrated:../../etc:zh-en", "plain name"), ("sometimes", "give 'exact'"),
])
def test_a_rule_that_cannot_be_used_is_an_error(rule, message, profile_settings):
    with pytest.raises(MuttlabError, match=message):
        api.compare_rules(profile_settings, rule, ["chrF"], ["mutt"])
