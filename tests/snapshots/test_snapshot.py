"""One format, one stamp, one staleness rule for everything shipped precomputed (muttlab.snapshots): what makes
a snapshot not current, clear errors for a broken or old file, and every kind wired to a script and its code."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from muttlab import api
from muttlab.errors import DataError, UnknownName
from muttlab.rules import EXACT_RULE
from muttlab.settings import Settings
from muttlab.snapshots import KINDS, Snapshot, Stamp, current_stamp, load, write
from muttlab.snapshots.grid import Grid
from tests.conftest import REPO

STAMP = Stamp({"mutt/experiments/det_sub_a.json": "a" * 64}, {"muttlab.engine.verdict": "b" * 64},
              {"BLEU-4": "BLEU-4|v:1", "TERp": "TERp|v:2"}, "tol:0.15|tie:1e-9")


def test_every_part_of_the_stamp_decides_and_is_named():
    assert STAMP.differences(STAMP) == []
    changes = {
        "data": (replace(STAMP, data={"mutt/experiments/det_sub_a.json": "c" * 64}),
                 "data files changed: mutt/experiments/det_sub_a.json"),
        "code": (replace(STAMP, code={"muttlab.engine.verdict": "d" * 64}), "code changed: muttlab.engine.verdict"),
        "metrics": (replace(STAMP, signatures={"BLEU-4": "BLEU-4|v:2", "TERp": "TERp|v:2"}),
                    "metrics changed: BLEU-4"),
        "rules": (replace(STAMP, rules="tol:0.15|tie:exact"),
                  "judged under other rules: tol:0.15|tie:1e-9, this server's are tol:0.15|tie:exact"),
    }
    for part, (current, message) in changes.items():
        assert STAMP.differences(current) == [message], part
        assert STAMP.digest() != current.digest()
    assert STAMP.stale_metrics(changes["metrics"][0]) == {"BLEU-4": ("BLEU-4|v:1", "BLEU-4|v:2")}


def test_what_this_server_cannot_know_or_compute_is_not_compared():
    # No data dir: the data cannot be compared (nor the numbers computed otherwise); a metric this server cannot
    # load is not one it computes otherwise.
    assert STAMP.differences(replace(STAMP, data=None, signatures={"BLEU-4": "BLEU-4|v:1"})) == []


def test_a_server_under_other_rules_finds_a_judged_snapshot_not_current(data_dir):
    snapshot = api.snapshot("grid")
    exact = Settings(data_dir=data_dir).with_rules(tie=EXACT_RULE)
    differences = api.snapshot_differences(exact, snapshot, signatures={})
    assert differences == ["judged under other rules: tol:0.15|tie:1e-9, this server's are tol:0.15|tie:exact"]
    # Correlations with human judgments judge no trial: the rules do not decide them.
    assert api.snapshot_differences(exact, api.snapshot("human"), signatures={}) == []


def test_the_current_stamp_hashes_the_data_files_of_the_kind(data_dir):
    kind = KINDS["grid"]
    stamp = current_stamp(kind, Settings(data_dir=data_dir), {"BLEU-4": "x"})
    assert len(stamp.data) == 30 and stamp.signatures == {"BLEU-4": "x"} and stamp.rules == "tol:0.15|tie:1e-9"
    assert set(stamp.code) == set(kind.code)
    assert current_stamp(kind, Settings(), {}).data is None


def test_a_snapshot_written_reads_back(tmp_path):
    kind = KINDS["grid"]
    cells = pd.DataFrame([{"metric": "BLEU-4", "corruption": "neg_subj", "refs": 5, "n": 336, "passed": 327,
                           "accuracy": 97.3214, "ci_low": 94.9876, "ci_high": 98.5812, "tie_rate": 0.5952}])
    grid = Grid(cells, "mutt", {"BLEU-4": "BLEU-4|v:1|tol:0.15|tie:1e-9"}, {"COMET": "not installed"})
    path = write(kind, grid, STAMP, "9.9", tmp_path / "grid.json")
    back = load(kind, path)
    assert isinstance(back, Snapshot) and back.stamp == STAMP and back.muttlab_version == "9.9"
    pd.testing.assert_frame_equal(back.content.cells, cells)
    assert back.content.select(["BLEU-4"])["signature"].tolist() == ["BLEU-4|v:1|tol:0.15|tie:1e-9"]
    assert "judged under tol:0.15|tie:1e-9" in back.label()


def test_an_old_broken_or_foreign_file_is_a_data_error_saying_how_to_regenerate(tmp_path):
    kind = KINDS["grid"]
    path = tmp_path / "grid.json"
    cases = [
        ({"format": 1, "cells": []}, "not a format-2 grid snapshot"),  # the format before one snapshot module
        ({"format": 2, "kind": "human", "stamp": {}, "content": {}}, "not a format-2 grid snapshot"),
        ({"format": 2, "kind": "grid", "content": {}}, "it lacks stamp"),
        ({"format": 2, "kind": "grid", "stamp": {"data": {}}, "content": {}}, "a part is malformed"),
        ({"format": 2, "kind": "grid", "stamp": STAMP.document(), "content": {"suite": "mutt", "signatures": {},
                                                                              "cells": [{"metric": "BLEU-4"}]}},
         "cells lack corruption"),
    ]
    for document, message in cases:
        path.write_text(json.dumps(document))
        with pytest.raises(DataError, match=message) as error:
            load(kind, path)
        assert "scripts/precompute_grid.py" in str(error.value)
    path.write_text("{not json")
    with pytest.raises(DataError, match="malformed JSON"):
        load(kind, path)
    assert load(kind, tmp_path / "absent.json") is None


def test_every_kind_has_its_script_its_code_and_its_shipped_file():
    for name, kind in KINDS.items():
        assert kind.name == name and (REPO / kind.script).is_file()
        assert all(len(d) == 64 for d in current_stamp(kind, Settings(), {}).code.values())
        assert api.snapshot(name) is not None, f"data/results/{kind.file} is missing; {kind.regenerate}"
    with pytest.raises(UnknownName):
        api.snapshot("../grid")
    assert Path(REPO / "data" / "results").is_dir()
