"""The human-judgment studies as they ship: a current stamp, numbers equal to a live computation on the real
data, no licensed text in the file, clear errors for a broken file."""
from __future__ import annotations

import json
from dataclasses import replace

import pytest

from muttlab import stats
from muttlab.dashboard import shipped_human
from muttlab.engine import runner
from muttlab.errors import DataError
from muttlab.human import dbleu, flickr, sick
from muttlab.settings import Settings

RERUN = "re-run " + shipped_human.REGENERATE


@pytest.fixture(scope="module")
def shipped():
    loaded = shipped_human.load()
    assert loaded is not None, f"data/results/human.json is missing; {RERUN}"
    return loaded


def test_stamp_is_current(shipped, data_dir):
    # As the script computes it: the shipped models, never a model installed on this machine.
    settings = replace(Settings(data_dir=data_dir), read_only=True)
    registry = runner.registry_for(settings)
    try:
        signatures = {m: registry.info(m).signature for m in shipped.stamp.signatures}
    finally:
        registry.close()
    assert shipped.stamp.differences(shipped_human.current_stamp(settings, signatures)) == [], RERUN
    scored = {m for s in shipped.sick.values() for m in s.metrics} | set(shipped.flickr.table["metric"])
    assert set(shipped.stamp.signatures) == scored


def test_a_changed_stamp_is_named():
    old = shipped_human.Stamp({"sick/SICK.txt": "a"}, {"muttlab.human.sick": "b"}, {"TERp": "TERp|v:1"})
    new = shipped_human.Stamp({"sick/SICK.txt": "c"}, {"muttlab.human.sick": "b"}, {"TERp": "TERp|v:2"})
    assert old.differences(new) == ["data files changed: sick/SICK.txt", "metrics changed: TERp"]
    assert old.differences(old) == [] and old.digest() != new.digest()


def test_the_engine_names_are_the_shipped_ones():
    assert shipped_human.SICK_TYPES == sick.SICK_CORRUPTIONS


def test_every_sick_type_ships_in_both_readings_with_every_method(shipped):
    assert set(shipped.sick) == {(c, r) for c in sick.SICK_CORRUPTIONS for r in sick.READINGS}
    for numbers in shipped.sick.values():
        assert numbers.metrics == list(sick.STUDY_METRICS)
        assert set(numbers.correlations) == set(stats.METHODS)
    # data/README.md: 336 negated-subject trials; the paper reading has the study list's 543 pairs (sick.py).
    assert shipped.sick_study("neg_subj", "trials").pairs == 336
    assert shipped.sick_study("neg_subj", "paper").pairs == 543


def test_shipped_sick_numbers_equal_a_live_study(shipped, data_dir, cache_dir):
    settings = Settings(data_dir=data_dir, cache_dir=cache_dir, workers=1)
    live = sick.sick_study(settings, "det_sub", list(sick.STUDY_METRICS), method="spearman")
    numbers = shipped.sick_study("det_sub", "trials")
    assert numbers.pairs == len(live.pairs)
    assert numbers.correlations["spearman"].to_numpy() == pytest.approx(live.correlations.to_numpy(), abs=1e-12)
    gold = numbers.histograms[numbers.histograms["variable"] == "gold"]["count"].tolist()
    assert gold == live.histograms().query("variable == 'gold'")["count"].tolist()


def test_shipped_flickr_and_unit_numbers_equal_a_live_computation(shipped, data_dir, cache_dir):
    settings = Settings(data_dir=data_dir, cache_dir=cache_dir, workers=1)
    live = flickr.flickr_correlations(settings, ["BLEU-1"], n_boot=shipped.flickr.n_boot, seed=shipped.flickr.seed).table
    rows = shipped.flickr.table[shipped.flickr.table["metric"] == "BLEU-1"]
    assert rows["tau"].tolist() == pytest.approx(live["tau"].tolist(), abs=1e-9)
    assert rows["ci_low"].tolist() == pytest.approx(live["ci_low"].tolist(), abs=1e-9)
    unit = shipped.units.settings
    main = dbleu.unit_study(dbleu.flickr_expert_set(settings), unit_size=unit["unit"], order=unit["order"],
                            threshold=unit["threshold"], assignments=unit["assignments"], seed=unit["seed"],
                            sweeps=False).main
    assert shipped.units.main["rho"].tolist() == pytest.approx(main["rho"].tolist(), abs=1e-12)


def test_no_licensed_sentence_ships(shipped, data_dir):
    text = shipped_human.human_path().read_text(encoding="utf-8")
    pairs = (data_dir / "sick" / "SICK.txt").read_text(encoding="utf-8").splitlines()[1:50]
    sentences = [s for line in pairs for s in line.split("\t")[1:3]]
    captions = [line.split("\t")[1] for line in
                (data_dir / "flickr8k" / "Flickr8k.token.txt").read_text(encoding="utf-8").splitlines()[:50]]
    assert not [s for s in sentences + captions if s.strip() in text]
    assert "CC BY-NC-SA 3.0" in shipped.licence and "research use" in shipped.licence


def test_malformed_file_is_a_data_error(tmp_path):
    bad = tmp_path / "human.json"
    bad.write_text(json.dumps({"format": 1, "stamp": {"data": {}}, "sick": [{"corruption": "neg_subj"}],
                               "flickr": {"table": []}, "units": {"main": []}}))
    with pytest.raises(DataError, match="a part is malformed"):
        shipped_human.load(bad)
    bad.write_text(json.dumps({"format": 1}))
    with pytest.raises(DataError, match="it lacks stamp, sick, flickr, units"):
        shipped_human.load(bad)
    bad.write_text("{not json")
    with pytest.raises(DataError, match="malformed JSON"):
        shipped_human.load(bad)
    assert shipped_human.load(tmp_path / "absent.json") is None
