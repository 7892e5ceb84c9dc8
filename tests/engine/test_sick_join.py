"""The join of the MUTT experiment trials to their SICK pairs, split runs and the training-overlap warning.

The oracle for the join is the study's own lists (``mutt/corruptions/<type>.txt``): each names the SICK
sentences of a pair and its relatedness, independently of SICK.txt and of the join's code.
"""
from __future__ import annotations

import pytest

from muttlab.engine.runner import run
from muttlab.sources import load_sick, sick_join_report
from muttlab.trials import MIXED_SPLIT, Suite
from muttlab.errors import MuttlabError
from muttlab.human.sick import SICK_CORRUPTIONS, load_corruption_list
from muttlab.metrics.registry import Registry
from tests.conftest import run_muttlab

GENERATED = ("double_PP", "remove_prep", "swap_chunks")


def test_every_sick_derived_trial_joins_and_agrees_with_the_study_lists(mutt_suite, data_settings):
    sick = {p.pair_id: p for p in load_sick(data_settings)}
    for corruption in SICK_CORRUPTIONS:
        listed: dict[tuple[str, str], set[float]] = {}
        for pair in load_corruption_list(data_settings, corruption).pairs:
            listed.setdefault((pair.sentence.strip(), pair.corrupted.strip()), set()).add(pair.relatedness)
        for trial in mutt_suite.of(corruption):
            assert trial.sick_pairs, trial.id
            scores = listed[(trial.original.strip(), trial.corrupted.strip())]
            assert trial.human_score in scores
            # Both orders of a sentence pair are in SICK sometimes; the list then holds one or both scores.
            assert scores <= {sick[i].relatedness for i in trial.sick_pairs}
            for pair_id, split in zip(trial.sick_pairs, trial.sick_splits):
                pair = sick[pair_id]
                assert {pair.sentence_a.strip(), pair.sentence_b.strip()} == {trial.original.strip(),
                                                                              trial.corrupted.strip()}
                assert pair.split == split
    for corruption in GENERATED:
        assert all(not t.sick_pairs and t.split is None for t in mutt_suite.of(corruption))


def test_join_report_counts(mutt_suite):
    report = {r.corruption: r for r in sick_join_report(mutt_suite)}
    assert sum(r.joined for r in report.values()) == 1313  # 336+198+246+14+214+240+65 SICK-derived trials
    assert all(r.joined == r.trials for name, r in report.items() if name in SICK_CORRUPTIONS)
    assert all(r.joined == 0 and "generated" in r.why_not for name, r in report.items() if name in GENERATED)
    neg = report["neg_subj"]
    assert neg.two_pairs == 34 and sum(neg.splits.values()) == 336
    # A known pair: "A woman is riding a horse" / "There is no woman riding a horse" is SICK 4547 (TEST,
    # A = the original) and 1099 (TRAIN, the other order), so the trial is in no single split.
    trial = next(t for t in mutt_suite.of("neg_subj") if t.original == "A woman is riding a horse"
                 and t.corrupted == "There is no woman riding a horse")
    assert trial.sick_pairs == (4547, 1099) and trial.human_score == 3.3 and trial.split == MIXED_SPLIT


def test_split_restricts_the_run(mutt_suite, data_settings):
    test = mutt_suite.in_split("test")
    assert len(test.of("neg_subj")) == 162 and not any(test.of(c) for c in GENERATED)
    assert all(set(t.sick_splits) == {"TEST"} for t in test.trials)
    suite = mutt_suite.select(["neg_subj", "double_PP"])
    results = run(suite, ["BLEU-4"], [5], data_settings, split="test")
    assert set(results.table["corruption"]) == {"neg_subj"} and len(results.table) == 162
    with pytest.raises(MuttlabError, match="unknown SICK split"):
        run(suite, ["BLEU-4"], [5], data_settings, split="dev")


def test_sick_trained_metric_warns_on_pairs_it_saw(mutt_suite, data_settings):
    registry = Registry()
    trials = mutt_suite.of("neg_subj")
    train = [t for t in trials if t.split == "TRAIN"][:3]
    test = [t for t in trials if t.split == "TEST"][:3]
    seen = run(Suite("s", train + test), ["ReVal-LSTM", "BLEU-4"], [5], data_settings, registry)
    assert len(seen.warnings) == 1
    assert seen.warnings[0].startswith("ReVal-LSTM was trained on SICK and scores 3 of 6 trials")
    unseen = run(Suite("s", test), ["ReVal-LSTM"], [5], data_settings, registry)
    assert unseen.warnings == []
    registry.close()


def test_cli_split_and_warning(data_dir, tmp_path):
    env = {"MUTTLAB_DATA_DIR": str(data_dir), "MUTTLAB_CACHE_DIR": str(tmp_path)}
    out = run_muttlab("run", "--metrics", "BLEU-4,ReVal-LSTM", "--corruptions", "det_sub", "--refs", "5", env=env)
    assert out.returncode == 0, out.stderr
    # det_sub: 30 TRAIN + 2 TRIAL + 3 with one pair in each of two splits (none of them TEST-only).
    assert "warning: ReVal-LSTM was trained on SICK and scores 35 of 65 trials" in out.stderr
    out = run_muttlab("run", "--metrics", "BLEU-4,ReVal-LSTM", "--corruptions", "det_sub", "--refs", "5", "--split",
                      "test", env=env)
    assert out.returncode == 0 and "warning" not in out.stderr
    assert "30 of 65 trials" in out.stderr and "/30)" in out.stdout
    out = run_muttlab("run", "--corruptions", "swap_chunks", "--split", "test", env=env)
    assert out.returncode == 2 and "none of the 500 trials is taken from a SICK pair" in out.stderr
