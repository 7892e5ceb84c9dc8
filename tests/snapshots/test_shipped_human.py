"""The human-judgment studies as they ship: a current stamp, numbers equal to a live computation on the real
data, no licensed text in the file."""
from __future__ import annotations

import pytest

from muttlab import stats
from muttlab.human import dbleu, flickr, sick
from muttlab.settings import Settings
from muttlab.snapshots import human as shipped_human
from muttlab.snapshots import path_of, KINDS
from tests.snapshots.conftest import assert_current, shipped


@pytest.fixture(scope="module")
def snapshot():
    return shipped("human")


@pytest.fixture(scope="module")
def studies(snapshot):
    return snapshot.content


def test_the_shipped_studies_are_current(snapshot, studies, data_dir):
    assert_current("human", data_dir)
    scored = {m for s in studies.sick.values() for m in s.metrics} | set(studies.flickr.table["metric"])
    assert set(snapshot.stamp.signatures) == scored
    assert snapshot.stamp.rules == ""  # correlations with human judgments judge no trial: no rules decide them


def test_the_engine_names_are_the_shipped_ones():
    assert shipped_human.SICK_TYPES == sick.SICK_CORRUPTIONS


def test_every_sick_type_ships_in_both_readings_with_every_method(studies):
    assert set(studies.sick) == {(c, r) for c in sick.SICK_CORRUPTIONS for r in sick.READINGS}
    for numbers in studies.sick.values():
        assert numbers.metrics == list(sick.STUDY_METRICS)
        assert set(numbers.correlations) == set(stats.METHODS)
    # data/README.md: 336 negated-subject trials; the paper reading has the study list's 543 pairs (sick.py).
    assert studies.sick_study("neg_subj", "trials").pairs == 336
    assert studies.sick_study("neg_subj", "paper").pairs == 543


def test_shipped_sick_numbers_equal_a_live_study(studies, data_dir, cache_dir):
    settings = Settings(data_dir=data_dir, cache_dir=cache_dir, workers=1)
    live = sick.sick_study(settings, "det_sub", list(sick.STUDY_METRICS), method="spearman")
    numbers = studies.sick_study("det_sub", "trials")
    assert numbers.pairs == len(live.pairs)
    assert numbers.correlations["spearman"].to_numpy() == pytest.approx(live.correlations.to_numpy(), abs=1e-12)
    gold = numbers.histograms[numbers.histograms["variable"] == "gold"]["count"].tolist()
    assert gold == live.histograms().query("variable == 'gold'")["count"].tolist()


def test_shipped_flickr_and_unit_numbers_equal_a_live_computation(studies, data_dir, cache_dir):
    settings = Settings(data_dir=data_dir, cache_dir=cache_dir, workers=1)
    live = flickr.flickr_correlations(settings, ["BLEU-1"], n_boot=studies.flickr.n_boot,
                                      seed=studies.flickr.seed).table
    rows = studies.flickr.table[studies.flickr.table["metric"] == "BLEU-1"]
    assert rows["tau"].tolist() == pytest.approx(live["tau"].tolist(), abs=1e-9)
    assert rows["ci_low"].tolist() == pytest.approx(live["ci_low"].tolist(), abs=1e-9)
    unit = studies.units.settings
    assert {k: unit[k] for k in shipped_human.DEFAULTS.units} == shipped_human.DEFAULTS.units
    main = dbleu.unit_study(dbleu.flickr_expert_set(settings), unit_size=unit["unit"], order=unit["order"],
                            threshold=unit["threshold"], assignments=unit["assignments"], seed=unit["seed"],
                            sweeps=False).main
    assert studies.units.main["rho"].tolist() == pytest.approx(main["rho"].tolist(), abs=1e-12)


def test_no_licensed_sentence_ships(studies, data_dir):
    text = path_of(KINDS["human"]).read_text(encoding="utf-8")
    pairs = (data_dir / "sick" / "SICK.txt").read_text(encoding="utf-8").splitlines()[1:50]
    sentences = [s for line in pairs for s in line.split("\t")[1:3]]
    captions = [line.split("\t")[1] for line in
                (data_dir / "flickr8k" / "Flickr8k.token.txt").read_text(encoding="utf-8").splitlines()[:50]]
    assert not [s for s in sentences + captions if s.strip() in text]
    assert "CC BY-NC-SA 3.0" in studies.licence and "research use" in studies.licence
