"""The Run page: widgets drive muttlab.engine.runner.run and the grid shows exactly its accuracy table."""
from __future__ import annotations

import pytest

from muttlab import api
from muttlab.engine import runner
from muttlab.sources import SAMPLE_TRIALS, load_mutt_experiments
from tests.dashboard.conftest import grid_cells, grid_html, open_page, shown_errors

METRICS = ["BLEU-4", "ROUGE-L"]
CORRUPTIONS = ["neg_subj", "det_sub"]


def _run(at, metrics=METRICS, corruptions=CORRUPTIONS, refs=(5,)):
    at.multiselect(key="run-metrics").set_value(list(metrics))
    at.multiselect(key="run-corruptions").set_value(list(corruptions))
    at.multiselect(key="run-refs").set_value(list(refs))
    at.get("form_submit_button")[0].click().run()
    return at


def test_first_visit_lists_metrics_and_shows_the_precomputed_grid(app_env):
    at = open_page("run")
    assert not shown_errors(at)
    assert at.title[0].value == "Run the metric unit tests"
    # The catalogue table is drawn when its expander is opened (it would slow the grid's first paint).
    assert not at.dataframe
    assert "BLEU-4" in at.multiselect(key="run-metrics").options
    # The MUTT sets have 20 references per trial, so every configured count is offered.
    assert at.multiselect(key="run-refs").options == ["5", "10", "20"]
    # Nothing is scored on a first visit: the grid shown is the one that ships with the package.
    assert any(s.value == "Accuracy (precomputed)" for s in at.subheader)
    assert not at.get("plotly_chart")
    grid = api.snapshot("grid").content
    body = grid_html(at)
    cell = grid.cells.iloc[0]
    # Each cell links to its drill-down and carries its numbers on hover.
    assert (cell.metric, cell.corruption, int(cell.refs)) in grid_cells(at)
    assert f"accuracy {cell.accuracy:.1f}% ({int(cell.passed)}/{int(cell.n)})" in body
    assert len(grid_cells(at)) == len(grid.cells)
    assert not [m for m in at.metric if m.label == "trials"]
    at.session_state["run-catalogue-open"] = True
    at.run()
    catalogue = at.dataframe[0].value
    assert {"BLEU-4", "METEOR-1.5", "ReVal-TreeLSTM"} <= set(catalogue["metric"])


def test_grid_shows_the_engines_accuracy(app_env, app_settings):
    # The page scores a cell at a time (the fair queue's unit); CIDEr-D's document frequencies are per cell, so
    # its accuracies must be exactly those of one engine run over the whole selection.
    metrics, refs = ["BLEU-4", "CIDEr-D"], (5, 10)
    at = _run(open_page("run"), metrics=metrics, refs=refs)
    assert not shown_errors(at)
    suite = load_mutt_experiments(app_settings).select(CORRUPTIONS)
    engine = runner.run(suite, metrics, list(refs), app_settings)
    expected = engine.accuracy()
    shown = {m.label: m.value for m in at.metric}
    # data/README.md: neg_subj has 336 trials and det_sub 65.
    assert shown["trials"] == "401"
    body = grid_html(at)
    assert sorted(grid_cells(at)) == sorted((m, c, k) for m in metrics for c in CORRUPTIONS for k in refs)
    for row in expected.itertuples(index=False):
        assert f"{row.metric} · " in body and f"accuracy {row.accuracy:.1f}% ({row.passed}/{row.n})" in body
    assert not at.dataframe  # the tables are drawn when their expander is opened
    at.session_state["run-tables"] = True
    at.run()
    tidy = next(d.value for d in at.dataframe if "ci_low" in d.value.columns)
    merged = tidy.merge(expected, on=["metric", "corruption", "refs"], suffixes=("", "_engine"))
    assert len(merged) == len(expected) == 8
    for column in ("n", "passed", "accuracy", "ci_low", "ci_high"):
        assert merged[column].tolist() == pytest.approx(merged[f"{column}_engine"].tolist())
    labels = [b.label for b in at.get("download_button")]
    assert "Download CSV" in labels and "Download chart (HTML)" in labels
    # Each metric's results signature: the metric's own, then the tie rule and tolerance it was judged by.
    signatures = next(d.value for d in at.dataframe if list(d.value.columns) == ["metric", "signature"])
    assert signatures["signature"].tolist() == [engine.signature(m) for m in metrics]
    for metric, shown_signature in zip(metrics, signatures["signature"]):
        assert shown_signature.startswith(engine.signatures[metric] + "|") and "|tie:" in shown_signature


def test_rerun_is_served_from_memory(app_env, monkeypatch):
    at = _run(open_page("run"))
    calls = []
    real = runner.run
    monkeypatch.setattr(runner, "run", lambda *a, **k: calls.append(1) or real(*a, **k))
    at.get("form_submit_button")[0].click().run()
    assert not shown_errors(at)
    assert calls == []
    assert {m.label: m.value for m in at.metric}["trials"] == "401"


def test_choosing_a_cell_opens_its_drilldown(app_env):
    at = _run(open_page("run"))
    at.selectbox(key="cell-metric").set_value("ROUGE-L")
    at.selectbox(key="cell-corruption").set_value("det_sub")
    at.button(key="cell-open").click().run()
    assert not shown_errors(at)
    assert at.title[0].value == "Drill-down"
    assert at.session_state["drilldown_cell"] == {"metric": "ROUGE-L", "corruption": "det_sub", "refs": 5}
    assert {m.label: m.value for m in at.metric}["trials"] == "65"


def test_an_empty_choice_is_explained(app_env):
    at = _run(open_page("run"), metrics=[])
    assert not shown_errors(at)
    assert any("at least one metric" in w.value for w in at.warning)


def test_sample_banner_without_a_data_dir(app_env, monkeypatch):
    monkeypatch.delenv("MUTTLAB_DATA_DIR")
    at = open_page("run")
    assert not at.exception
    if SAMPLE_TRIALS.is_file():
        assert any(i.value.startswith("**Sample data.**") for i in at.info)
        assert {"BLEU-4"} <= set(at.multiselect(key="run-metrics").options)
    else:  # the sample has not been generated in this checkout: the page says which file is missing
        assert any("trials.jsonl" in e.value for e in at.error)
