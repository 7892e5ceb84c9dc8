"""The Learned metrics page: ReVal status, training with progress and a loss curve, read-only refusal."""
from __future__ import annotations

import json

import pytest

from muttlab.engine.runner import model_dir
from tests.dashboard.conftest import open_page, shown_errors


def test_untrained_model_is_reported_and_training_offered(app_env, monkeypatch, tmp_path):
    # Without the checkpoints bundled in data/models, nothing is trained yet.
    monkeypatch.setattr("muttlab.metrics.reval.metric.PUBLISHED_DIR", tmp_path / "no-bundled-models")
    at = open_page("learned", state={"learned-model": "lstm"})
    assert not shown_errors(at)
    assert any("No trained ReVal-LSTM model yet" in w.value for w in at.warning)
    assert [b.label for b in at.get("form_submit_button")] == ["Train"]


def test_a_short_training_run_draws_its_curve_and_installs_the_model(app_env, app_settings):
    at = open_page("learned", state={"learned-model": "lstm"})
    at.number_input(key="learned-epochs").set_value(1)
    at.number_input(key="learned-limit").set_value(30)
    at.get("form_submit_button")[0].click().run()
    assert not shown_errors(at)
    assert any("ReVal-LSTM: trained" in s.value for s in at.success)
    installed = model_dir(app_settings) / "reval-lstm.pt"
    assert installed.is_file()
    info = json.loads(installed.with_suffix(".json").read_text())
    assert info["data"]["train"] == 30 and len(info["history"]) == 1
    # Reopened, the page shows the checkpoint's epoch history and the metric is available to runs.
    at = open_page("learned", state={"learned-model": "lstm"})
    history = next(d.value for d in at.dataframe if "train_loss" in d.value.columns)
    assert history["train_loss"].tolist() == [info["history"][0]["train_loss"]]
    assert len(at.get("plotly_chart")) == 1
    at.switch_page("views/run.py").run()
    assert "ReVal-LSTM" in at.multiselect(key="run-metrics").options


def test_read_only_server_offers_no_training(app_env, monkeypatch):
    monkeypatch.setenv("MUTTLAB_READ_ONLY", "1")
    at = open_page("learned")
    assert not shown_errors(at)
    assert not at.get("form_submit_button")
    assert any("read-only" in i.value for i in at.info)


def test_an_installed_ensemble_shows_its_runs(app_env):
    from muttlab.metrics.reval.metric import PUBLISHED_DIR

    info = json.loads((PUBLISHED_DIR / "reval-treelstm.json").read_text())
    seeds = sorted(m["seed"] for m in info.get("members_info", []))
    if not seeds:
        pytest.skip("the bundled Tree-LSTM is a single run, not an ensemble")
    at = open_page("learned", state={"learned-model": "treelstm"})
    assert not shown_errors(at)
    assert any(m.label == "ensemble" and m.value == f"{len(seeds)} seeds" for m in at.metric)
    members = next(d.value for d in at.dataframe if "seed" in d.value.columns)
    assert sorted(members["seed"]) == seeds


def test_several_runs_train_and_install_an_ensemble(app_env, app_settings):
    at = open_page("learned", state={"learned-model": "lstm"})
    at.number_input(key="learned-epochs").set_value(1)
    at.number_input(key="learned-limit").set_value(30)
    at.number_input(key="learned-runs").set_value(2)
    at.get("form_submit_button")[0].click().run()
    assert not shown_errors(at)
    assert any("an ensemble of 2 runs (seeds 13, 1)" in s.value for s in at.success)
    info = json.loads((model_dir(app_settings) / "reval-lstm.json").read_text())
    assert info["ensemble"] and [m["seed"] for m in info["members_info"]] == [13, 1]
    at = open_page("learned", state={"learned-model": "lstm"})
    assert any(m.label == "ensemble" and m.value == "2 seeds" for m in at.metric)
