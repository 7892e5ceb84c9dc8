"""A landing-grid cell opens exactly the trials it counts; without a data dir the Drill-down says that the
MUTT sets do not ship and that it shows the bundled sample's own trials and counts."""
from __future__ import annotations

import json

from muttlab import api
from muttlab.sources import SAMPLE_TRIALS
from tests.dashboard.conftest import open_link, shown_errors

CELL = {"metric": "BLEU-4", "corruption": "neg_subj", "refs": "5"}


def _shipped_cell():
    cells = api.snapshot("grid").content.cells
    return cells[(cells["metric"] == CELL["metric"]) & (cells["corruption"] == CELL["corruption"])
                 & (cells["refs"] == int(CELL["refs"]))].iloc[0]


def test_a_grid_cell_opens_the_trials_it_counts(app_env):
    at = open_link("drilldown", CELL)
    assert not shown_errors(at)
    cell = _shipped_cell()
    shown = {m.label: m.value for m in at.metric}
    assert (int(shown["trials"]), int(shown["passed"])) == (int(cell.n), int(cell.passed))
    assert not any("Not the grid's trials" in w.value for w in at.warning)


def test_without_a_data_dir_the_drilldown_names_the_sample_and_its_own_counts(app_env, monkeypatch):
    monkeypatch.delenv("MUTTLAB_DATA_DIR")
    at = open_link("drilldown", CELL)
    assert not shown_errors(at)
    sample = [json.loads(line) for line in SAMPLE_TRIALS.read_text(encoding="utf-8").splitlines() if line.strip()]
    own = sum(1 for t in sample if t["corruption"] == CELL["corruption"])
    cell = _shipped_cell()
    shown = {m.label: m.value for m in at.metric}
    assert int(shown["trials"]) == own != int(cell.n)
    notice = next(w.value for w in at.warning if "Not the grid's trials" in w.value)
    assert f"({int(cell.passed)}/{int(cell.n)})" in notice
    assert "CC BY-NC-SA" in notice
    assert f"bundled sample's {own} Negated Subject trials" in notice
