"""The model registry against the cache-poisoning attack of issue 17: a trained model's scores never land
under the shipped model's key, only a maintainer installs, and every install is logged."""
from __future__ import annotations

import json

import numpy as np
import pytest

from muttlab.access.roles import ANONYMOUS, Identity, Role, local_operator
from muttlab.cli import main
from muttlab.engine.runner import model_dir, registry_for, score_batches
from muttlab.errors import MuttlabError, PermissionDenied
from muttlab.learned import models, reval
from muttlab.metrics.base import MetricUnavailable
from muttlab.metrics.reval import metric as reval_metric
from muttlab.settings import Settings

OPERATOR = local_operator()
TrainConfig = reval.TrainConfig  # where the training configuration lives is reval's business
SHIPPED = reval_metric.PUBLISHED_DIR / "reval-treelstm.pt"
BATCH = (["A man is playing a guitar", "A dog is running in the grass"],
         [["A man is playing a flute", "Someone is playing a guitar"], ["A cat is sleeping"]])


@pytest.fixture(scope="module")
def settings(data_dir, tmp_path_factory):
    return Settings(data_dir=data_dir, cache_dir=tmp_path_factory.mktemp("cache"), workers=1)


@pytest.fixture(scope="module")
def trained(settings):
    """A weak Tree-LSTM (one epoch on 40 SICK pairs): its scores differ from the shipped model's."""
    return reval.train_model(settings, "treelstm", TrainConfig(epochs=1, seed=5), limit=40, actor=OPERATOR)


def shipped_scores() -> np.ndarray:
    """The shipped model's scores of BATCH, computed without any cache (the oracle)."""
    return reval_metric.ReVal("treelstm", checkpoint=SHIPPED).score(*BATCH)


@pytest.mark.parametrize("actor", [ANONYMOUS, Identity("ann", Role.ANNOTATOR)])
def test_viewers_and_annotators_cannot_train_or_install(settings, trained, actor):
    with pytest.raises(PermissionDenied):
        reval.train_model(settings, "treelstm", TrainConfig(epochs=1, seed=5), limit=40, actor=actor)
    with pytest.raises(PermissionDenied):
        reval.train_best_of_seeds(settings, "lstm", [1, 2], limit=40, actor=actor)
    with pytest.raises(PermissionDenied):
        models.install(settings, actor, models.model_id(trained.path.read_bytes()))
    with pytest.raises(PermissionDenied):
        models.uninstall(settings, actor, "reval-treelstm")
    assert reval_metric.find_checkpoint("treelstm", model_dir(settings)) == SHIPPED


def test_read_only_server_trains_nothing_and_uses_shipped_models(settings, trained):
    read_only = settings.with_overrides(read_only=True)
    with pytest.raises(PermissionDenied, match="read-only"):
        reval.train_model(read_only, "treelstm", TrainConfig(epochs=1, seed=5), limit=40, actor=OPERATOR)
    with pytest.raises(PermissionDenied, match="read-only"):
        models.install(read_only, OPERATOR, models.model_id(trained.path.read_bytes()))
    assert registry_for(read_only).get("ReVal-TreeLSTM").checkpoint == SHIPPED


def test_training_alone_changes_nothing_the_metrics_compute(settings, trained):
    metric = registry_for(settings).get("ReVal-TreeLSTM")
    assert metric.checkpoint == SHIPPED
    assert f"ckpt:{models.model_id(SHIPPED.read_bytes())}" in metric.signature()
    # a trained file dropped where the old code looked first is ignored as well
    (model_dir(settings) / "reval-treelstm.pt").write_bytes(trained.path.read_bytes())
    assert registry_for(settings).get("ReVal-TreeLSTM").checkpoint == SHIPPED


def test_installed_model_scores_under_its_own_id_and_never_under_the_shipped_key(settings, trained):
    expected = shipped_scores()
    trained_id, shipped_id = models.model_id(trained.path.read_bytes()), models.model_id(SHIPPED.read_bytes())
    # A registry built before the install (the dashboard's shared one): its metric object exists, unloaded.
    early = registry_for(settings)
    early_metric = early.get("ReVal-TreeLSTM")
    record = models.install(settings, OPERATOR, trained_id[:8])
    assert record.in_use and record.id == trained_id
    late = registry_for(settings)
    metric = late.get("ReVal-TreeLSTM")
    assert f"ckpt:{trained_id}" in metric.signature()
    assert f"reval:{trained_id}" in late.get("DREEM").signature()  # the shipped DREEM weights its reval representation
    with_trained = score_batches(metric, [BATCH], settings, late)[0]
    assert not np.allclose(with_trained, expected, atol=1e-4)  # a different model, or the test proves nothing
    # whatever the early object scores, its signature names the model whose weights it used
    early_scores = score_batches(early_metric, [BATCH], settings, early)[0]
    used = early_metric.model_id
    assert np.allclose(early_scores, with_trained if used == trained_id else expected, atol=1e-6)
    # the trained model is deleted; the metric says so instead of silently switching models
    trained.path.rename(trained.path.with_suffix(".gone"))
    try:
        with pytest.raises(MetricUnavailable, match="is missing"):
            registry_for(settings).get("ReVal-TreeLSTM")
        models.uninstall(settings, OPERATOR, "reval-treelstm")
        again = registry_for(settings)
        back = again.get("ReVal-TreeLSTM")
        assert f"ckpt:{shipped_id}" in back.signature()
        # through the shared cache: the shipped key holds the shipped model's scores only
        np.testing.assert_allclose(score_batches(back, [BATCH], settings, again)[0], expected, atol=1e-6)
    finally:
        trained.path.with_suffix(".gone").rename(trained.path)


def test_install_log_is_append_only_and_names_who_what_and_which_metrics(settings, trained):
    before = models.install_log(settings)
    trained_id = models.model_id(trained.path.read_bytes())
    models.install(settings, OPERATOR, trained_id)
    models.uninstall(settings, OPERATOR, "reval-treelstm")
    log = models.install_log(settings)
    assert log[:len(before)] == before and len(log) == len(before) + 2
    install, uninstall = log[-2:]
    assert (install["who"], install["action"], install["model"]) == (OPERATOR.name, "install", trained_id)
    assert "ReVal-TreeLSTM" in install["metrics"] and any(m.startswith("DREEM") for m in install["metrics"])
    assert uninstall["action"] == "uninstall" and uninstall["previous"] == trained_id
    assert uninstall["model"] == models.model_id(SHIPPED.read_bytes())


def test_a_registry_entry_pointing_outside_the_model_folder_is_refused(settings, tmp_path):
    folder = model_dir(settings)
    folder.mkdir(parents=True, exist_ok=True)
    outside = tmp_path / "evil.pt"
    outside.write_bytes(SHIPPED.read_bytes())
    (folder / "installed.json").write_text(json.dumps({"reval-lstm": {"id": "x", "file": str(outside)}}))
    try:
        with pytest.raises(MetricUnavailable, match="outside the model folder"):
            reval_metric.find_checkpoint("lstm", folder)
    finally:
        (folder / "installed.json").write_text("{}")


def test_cli_models_list_install_log(settings, trained, capsys):
    cache = ["--cache-dir", str(settings.cache_dir)]
    trained_id = models.model_id(trained.path.read_bytes())
    assert main(["models", "list", "--format", "json", *cache]) == 0
    rows = json.loads(capsys.readouterr().out)
    # The list shows each id's first 12 digits; the id itself is the whole SHA-256.
    assert len(trained_id) == 64
    assert {(r["id"], r["origin"]) for r in rows} >= {(trained_id[:12], "trained"),
                                                       (models.model_id(SHIPPED.read_bytes())[:12], "shipped")}
    assert main(["models", "install", trained_id, *cache]) == 0
    assert "ReVal-TreeLSTM" in capsys.readouterr().out
    assert main(["models", "uninstall", "reval-treelstm", *cache]) == 0
    assert main(["models", "install", "ffffff", *cache]) == 2
    assert "matches no model" in capsys.readouterr().err
    with pytest.raises(MuttlabError, match="matches no model"):
        models.find(settings, "abc")  # too short to name a model
