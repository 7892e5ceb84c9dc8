"""The Learned metrics page: ReVal status, training with progress and a loss curve for maintainers only,
installing a trained model, read-only refusal."""
from __future__ import annotations

import json
import re
import time

import pytest

from muttlab.access.roles import Identity, Role
from muttlab.access.sessions import Session
from muttlab.dashboard.auth import SESSION_KEY
from muttlab.engine.runner import model_dir
from muttlab.learned import models
from muttlab.settings import load_settings
from muttlab.metrics.reval.metric import find_checkpoint
from tests.dashboard.conftest import figures_drawn, open_page, shown_errors


def as_maintainer(**state) -> dict:
    """Session state of a signed-in maintainer (the sign-in form itself is tested in test_access_pages)."""
    return {SESSION_KEY: Session(Identity("max", Role.MAINTAINER), time.time() + 3600), **state}


def _install_trained(at) -> str:
    """Install the model the training message names, with the page's maintainer control; returns its id."""
    ident = next(m.group(1) for s in at.success if (m := re.search(r"model ([0-9a-f]{12})", s.value)))
    # The page shows 12 digits of an id; the value it installs is the whole SHA-256 (docs/security.md).
    whole = next(r.id for r in models.list_models(load_settings()) if r.id.startswith(ident))
    at.selectbox(key="learned-install-id").set_value(whole)
    at.button(key="learned-install").click().run()
    assert any(f"Installed {ident}" in s.value for s in at.success), [e.value for e in at.error]
    return ident


def test_untrained_model_is_reported_and_training_offered_to_maintainers(app_env, monkeypatch, tmp_path):
    # Without the checkpoints bundled in data/models, nothing is trained yet.
    monkeypatch.setattr("muttlab.metrics.reval.metric.PUBLISHED_DIR", tmp_path / "no-bundled-models")
    at = open_page("learned", state=as_maintainer(**{"learned-model": "lstm"}))
    assert not shown_errors(at)
    assert any("No trained ReVal-LSTM model yet" in w.value for w in at.warning)
    assert [b.label for b in at.get("form_submit_button")] == ["Train"]


def test_anonymous_visitors_get_no_training_or_install_controls(app_env):
    at = open_page("learned", state={"learned-model": "lstm"})
    assert not shown_errors(at)
    assert "Train" not in [b.label for b in at.get("form_submit_button")]
    assert not [b for b in at.button if b.key in ("learned-install", "learned-uninstall", "learned-clear-caches")]
    assert any("Training is for maintainers" in i.value for i in at.info)


def test_a_short_training_run_draws_its_curve_and_installs_only_when_asked(app_env, app_settings):
    at = open_page("learned", state=as_maintainer(**{"learned-model": "lstm"}))
    at.number_input(key="learned-epochs").set_value(1)
    at.number_input(key="learned-limit").set_value(30)
    at.get("form_submit_button")[0].click().run()
    assert not shown_errors(at)
    assert any("ReVal-LSTM: trained" in s.value for s in at.success)
    assert find_checkpoint("lstm", model_dir(app_settings)).parent.name == "models"  # still the shipped one
    _install_trained(at)
    installed = find_checkpoint("lstm", model_dir(app_settings))
    info = json.loads(installed.with_suffix(".json").read_text())
    assert info["data"]["train"] == 30 and len(info["history"]) == 1
    # Reopened, the page shows the checkpoint's epoch history and the metric is available to runs.
    at = open_page("learned", state={"learned-model": "lstm"})
    history = next(d.value for d in at.dataframe if "train_loss" in d.value.columns)
    assert history["train_loss"].tolist() == [info["history"][0]["train_loss"]]
    curves = figures_drawn(at)
    assert len(curves) == 1 and [list(t.y) for t in curves[0].data if t.name == "train_loss"] == [
        [info["history"][0]["train_loss"]]]
    at.switch_page("views/run.py").run()
    assert "ReVal-LSTM" in at.multiselect(key="run-metrics").options


def test_read_only_server_offers_no_training(app_env, monkeypatch):
    monkeypatch.setenv("MUTTLAB_READ_ONLY", "1")
    at = open_page("learned", state=as_maintainer())  # even a session that claims to be a maintainer
    assert not shown_errors(at)
    assert not at.get("form_submit_button")
    assert not [b for b in at.button if b.key == "learned-install"]
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


def test_several_runs_train_an_ensemble_a_maintainer_installs(app_env, app_settings):
    at = open_page("learned", state=as_maintainer(**{"learned-model": "lstm"}))
    at.number_input(key="learned-epochs").set_value(1)
    at.number_input(key="learned-limit").set_value(30)
    at.number_input(key="learned-runs").set_value(2)
    at.get("form_submit_button")[0].click().run()
    assert not shown_errors(at)
    assert any("an ensemble of 2 runs (seeds 13, 1)" in s.value for s in at.success)
    _install_trained(at)
    info = json.loads(find_checkpoint("lstm", model_dir(app_settings)).with_suffix(".json").read_text())
    assert info["ensemble"] and [m["seed"] for m in info["members_info"]] == [13, 1]
    at = open_page("learned", state={"learned-model": "lstm"})
    assert any(m.label == "ensemble" and m.value == "2 seeds" for m in at.metric)
