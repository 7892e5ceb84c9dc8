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


def test_without_a_data_dir_a_type_the_sample_lacks_opens_no_other_types_trials(app_env, monkeypatch):
    """METEOR-1.5 x Active-to-Passive from the landing grid: the sample has no passive trials (its generators do
    not make them), so the page says so once, with the grid cell's numbers, and lists no trials of another type."""
    monkeypatch.delenv("MUTTLAB_DATA_DIR")
    sample = [json.loads(line) for line in SAMPLE_TRIALS.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert not any(t["corruption"] == "passive" for t in sample)
    at = open_link("drilldown", {"metric": "METEOR-1.5", "corruption": "passive", "refs": "5"})
    assert not shown_errors(at)
    notices = [w.value for w in at.warning]
    assert len(notices) == 1, notices
    # Beside it only the label every page of a sample-only server carries (ui.load_suite); no button's note.
    assert [i.value for i in at.info if "MUTTLAB_DATA_DIR" not in i.value] == []
    cells = api.snapshot("grid").content.cells
    cell = cells[(cells["metric"] == "METEOR-1.5") & (cells["corruption"] == "passive") & (cells["refs"] == 5)].iloc[0]
    assert f"({int(cell.passed)}/{int(cell.n)})" in notices[0] and "no Active-to-Passive trials" in notices[0]
    assert at.selectbox(key="dd-corruption").value is None
    assert not at.metric and not [b for b in at.button if b.key == "dd-score"]
    # Choosing a type the sample has opens its trials (BLEU-4: quick, opens without a click).
    at.selectbox(key="dd-metric").set_value("BLEU-4")
    at.selectbox(key="dd-corruption").set_value("neg_subj").run()
    own = sum(1 for t in sample if t["corruption"] == "neg_subj")
    assert int({m.label: m.value for m in at.metric}["trials"]) == own
