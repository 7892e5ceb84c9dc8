"""Dataset readers on the real data, and their errors on broken copies of it."""
from __future__ import annotations

import json
import shutil

import pytest

from muttlab.errors import DataError
from muttlab.settings import Settings
from muttlab.sources import (MUTT_SETS, load_flickr_captions, load_flickr_crowdflower, load_flickr_expert,
                            load_mutt_experiments, load_sick, read_json, read_jsonl, read_lines)

# Trial counts of the MUTT experiment sets, from the shared data README (the study's release).
STUDY_COUNTS = {"neg_subj": 336, "neg_verb": 198, "sem_opps": 246, "passive": 214, "near_syms": 240,
                "det_sub": 65, "double_PP": 202, "remove_prep": 202, "swap_chunks": 500, "shuffled": 14}


def test_mutt_sets_load_with_their_counts_and_nested_pools(mutt_suite, data_dir):
    assert {name: len(mutt_suite.of(name)) for name in MUTT_SETS} == STUDY_COUNTS
    assert mutt_suite.max_refs() == 20
    # "5 / 10 / 20 references" are the first k of one pool: check against the study's r5 and r10 files.
    for k in (5, 10):
        doc = json.loads((data_dir / "mutt/experiments" / f"neg_subj_r{k}.json").read_text())
        first = [a["caption"] for a in doc["annotations"] if a["image_id"] == 7]
        assert list(mutt_suite.of("neg_subj")[7].refs(k)) == first


def test_sick_and_flickr_readers(data_settings):
    sick = load_sick(data_settings)
    assert len(sick) == 9840  # SICK has 9,840 pairs (Marelli et al. 2014)
    assert {p.split for p in sick} == {"TRIAL", "TRAIN", "TEST"}
    assert all(1.0 <= p.relatedness <= 5.0 for p in sick)
    captions = load_flickr_captions(data_settings)
    assert len(captions) == 8092 and all(len(c) == 5 for c in captions.values())
    expert = load_flickr_expert(data_settings)
    assert len(expert) == 5822 and all(len(j.scores) == 3 for j in expert)
    assert len(load_flickr_crowdflower(data_settings)) == 47830


def test_missing_data_dir_and_missing_files(tmp_path):
    with pytest.raises(DataError, match="no data dir is configured"):
        load_sick(Settings(data_dir=None))
    with pytest.raises(DataError, match="does not exist"):
        load_sick(Settings(data_dir=tmp_path / "nowhere"))
    with pytest.raises(DataError, match=r"sick/SICK.txt"):
        load_sick(Settings(data_dir=tmp_path))
    with pytest.raises(DataError, match=r"mutt/experiments/neg_subj_a.json"):
        load_mutt_experiments(Settings(data_dir=tmp_path))


def test_non_utf8_file_names_line(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine line\nsecond \xff line\n")
    with pytest.raises(DataError, match=r"bad.txt, line 2: not valid UTF-8"):
        read_lines(bad)


def test_malformed_json_and_jsonl_name_the_line(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('[{"image_id": 0,\n "caption": }]')
    with pytest.raises(DataError, match=r"bad.json, line 2: malformed JSON"):
        read_json(bad)
    lines = tmp_path / "bad.jsonl"
    lines.write_text('{"a": 1}\n{"a": \n')
    with pytest.raises(DataError, match=r"bad.jsonl, line 2"):
        read_jsonl(lines)


def test_truncated_sick_copy_names_the_line(data_dir, tmp_path):
    (tmp_path / "sick").mkdir()
    rows = (data_dir / "sick/SICK.txt").read_text().splitlines()[:4]
    rows[3] = "\t".join(rows[3].split("\t")[:5])
    (tmp_path / "sick/SICK.txt").write_text("\n".join(rows))
    with pytest.raises(DataError, match=r"line 4: expected 12 tab-separated columns, found 5"):
        load_sick(Settings(data_dir=tmp_path))


def test_misaligned_experiment_files(data_dir, tmp_path):
    exp = tmp_path / "mutt/experiments"
    exp.mkdir(parents=True)
    for f in (data_dir / "mutt/experiments").glob("neg_subj_*"):
        shutil.copy(f, exp / f.name)
    originals = json.loads((exp / "neg_subj_a.json").read_text())
    (exp / "neg_subj_a.json").write_text(json.dumps(originals[:-1]))
    with pytest.raises(DataError, match="image ids differ"):
        load_mutt_experiments(Settings(data_dir=tmp_path), names=("neg_subj",))
