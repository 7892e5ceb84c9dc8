"""Tuned multi-level parameters and corpus word vectors under the model registry's rules (issue 17): a file
dropped into the model folder (what `muttlab multilevel tune` and `muttlab vectors train` write) changes no
score and no signature; only a maintainer installs one, by its content id, which is then in the signature
of every metric that uses it; installs are logged; the shipped files are never written."""
from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from muttlab.access.roles import ANONYMOUS, Identity, Role, local_operator
from muttlab.engine.runner import model_dir, registry_for
from muttlab.errors import PermissionDenied
from muttlab.learned import models
from muttlab.metrics.base import MetricUnavailable
from muttlab.metrics.dreem import BUNDLED_MODELS, Dreem
from muttlab.metrics.w2v import W2VAvg
from muttlab.settings import Settings

OPERATOR = local_operator()
FILE_METRICS = ("ML-METEOR", "DREEM", "ML-DREEM")
CANDS = ["A man is playing a guitar on stage", "A dog is running in the grass"]
REFS = [["A man plays the guitar", "Someone is playing music"], ["A dog runs on the lawn"]]
WORDS = "a man is playing guitar on stage dog running in the grass plays music someone runs lawn".split()


def _write_vectors(path, seed: int):
    from gensim.models import KeyedVectors

    kv = KeyedVectors(vector_size=8)
    kv.add_vectors(WORDS, np.random.default_rng(seed).normal(size=(len(WORDS), 8)).astype(np.float32))
    kv.save(str(path))


@pytest.fixture
def settings(tmp_path) -> Settings:
    return Settings(cache_dir=tmp_path / "cache", workers=1)


@pytest.fixture
def dropped(settings):
    """What a tuning run and a vectors run leave in the model folder: parameters unlike the shipped ones."""
    folder = model_dir(settings)
    folder.mkdir(parents=True)
    (folder / "dreem.flickr8k.json").write_text(json.dumps(
        {"weights": {"bow": 1.0, "glove": 0.0, "sent": 0.0, "reval": 0.0}, "length_penalty": 0.0,
         "tuned_on": "flickr8k dev", "correlation": "kendall_c", "dev_correlation": 0.1}), encoding="utf-8")
    (folder / "dreem.json").write_bytes((folder / "dreem.flickr8k.json").read_bytes())  # the old default name
    for stem in ("ml-dreem", "multilevel-meteor"):
        data = json.loads((BUNDLED_MODELS / f"{stem}.json").read_text(encoding="utf-8"))
        data["lambda"], data["theta"] = 1.0, [0.2, 0.6]
        (folder / f"{stem}.flickr8k.json").write_text(json.dumps(data), encoding="utf-8")
    _write_vectors(folder / "word2vec-corpus.kv", seed=1)
    return folder


def _signatures(settings) -> dict[str, str]:
    registry = registry_for(settings)
    return {name: registry.get(name).signature() for name in FILE_METRICS}


def shipped_file_digests() -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(BUNDLED_MODELS.iterdir())}


def test_files_in_the_model_folder_are_inert_until_installed(settings, dropped, tmp_path):
    bare = Settings(cache_dir=tmp_path / "bare", workers=1)
    assert _signatures(settings) == _signatures(bare)
    assert all("tuned:" not in s for s in _signatures(settings).values())
    registry = registry_for(settings)
    np.testing.assert_array_equal(registry.get("DREEM").score(CANDS, REFS),
                                  registry_for(bare).get("DREEM").score(CANDS, REFS))
    assert registry.info("W2V-AVG-corpus").available is False
    with pytest.raises(MetricUnavailable, match="muttlab models install"):
        registry.get("W2V-AVG-corpus")
    # The registry lists them, each under its content id, none in use.
    trained = [r for r in models.list_models(settings) if not r.shipped]
    assert {r.slot for r in trained} == {"dreem", "ml-dreem", "multilevel-meteor", "word2vec-corpus"}
    assert not any(r.in_use for r in trained)
    assert len({r.id for r in trained if r.slot == "dreem"}) == 1  # dreem.json and dreem.flickr8k.json: one model


@pytest.mark.parametrize("actor", [ANONYMOUS, Identity("ann", Role.ANNOTATOR)])
def test_viewers_and_annotators_cannot_install_tuned_files_or_vectors(settings, dropped, actor):
    before = _signatures(settings)
    for record in [r for r in models.list_models(settings) if not r.shipped]:
        with pytest.raises(PermissionDenied, match="maintainer"):
            models.install(settings, actor, record.id)
    for slot_name in models.FILE_SLOTS:
        with pytest.raises(PermissionDenied):
            models.uninstall(settings, actor, slot_name)
    assert not (dropped / "installed.json").exists() and models.install_log(settings) == []
    assert _signatures(settings) == before


def test_read_only_server_installs_nothing(settings, dropped):
    record = next(r for r in models.list_models(settings) if r.slot == "dreem" and not r.shipped)
    with pytest.raises(PermissionDenied, match="read-only"):
        models.install(settings.with_overrides(read_only=True), OPERATOR, record.id)


def test_installed_tuned_file_scores_under_its_id_and_retuning_does_not_change_it(settings, dropped):
    shipped = shipped_file_digests()
    bundled_signature = registry_for(settings).get("DREEM").signature()
    record = next(r for r in models.list_models(settings) if r.slot == "dreem" and not r.shipped)
    installed = models.install(settings, OPERATOR, record.id[:8])
    assert installed.in_use and installed.id == record.id
    metric = registry_for(settings).get("DREEM")
    assert f"tuned:{record.id}" in metric.signature() and metric.signature() != bundled_signature
    # The oracle: DREEM with the file's weights given explicitly.
    oracle = Dreem(weights={"bow": 1.0, "glove": 0.0, "sent": 0.0, "reval": 0.0}, length_penalty=0.0)
    np.testing.assert_allclose(metric.score(CANDS, REFS), oracle.score(CANDS, REFS), rtol=1e-12)
    # Only DREEM changed; the log says who installed what, replacing which, for which metric.
    entry = models.install_log(settings)[-1]
    assert (entry["who"], entry["action"], entry["slot"], entry["model"], entry["metrics"]) == \
        (OPERATOR.name, "install", "dreem", record.id, ["DREEM"])
    assert entry["previous"] == next(r.id for r in models.list_models(settings) if r.slot == "dreem" and r.shipped)
    # A new tuning run overwrites its output: the installed copy, and so the metric, stay as installed.
    (dropped / "dreem.flickr8k.json").write_text(json.dumps(
        {"weights": {"bow": 0.0, "glove": 1.0, "sent": 0.0, "reval": 0.0}, "length_penalty": 1.0}), encoding="utf-8")
    assert registry_for(settings).get("DREEM").signature() == metric.signature()
    # A copy changed behind the registry's back is refused, not scored under the installed id.
    copy = dropped / json.loads((dropped / "installed.json").read_text())["dreem"]["file"]
    copy.write_text(copy.read_text().replace('"bow": 1.0', '"bow": 0.5'))
    with pytest.raises(MetricUnavailable, match="changed since it was installed"):
        registry_for(settings).get("DREEM").score(CANDS, REFS)
    models.uninstall(settings, OPERATOR, "dreem")
    assert registry_for(settings).get("DREEM").signature() == bundled_signature
    assert shipped_file_digests() == shipped  # the package data was never written


def test_installed_multilevel_files_carry_their_id(settings, dropped):
    before = _signatures(settings)
    for slot_name, metric in (("ml-dreem", "ML-DREEM"), ("multilevel-meteor", "ML-METEOR")):
        record = next(r for r in models.list_models(settings) if r.slot == slot_name and not r.shipped)
        models.install(settings, OPERATOR, record.id)
        params = registry_for(settings).get(metric).params()
        assert params["tuned"] == record.id and params["lambda"] == 1.0 and params["theta"] == "0.2/0.6"
    after = _signatures(settings)
    assert after["DREEM"] == before["DREEM"]
    assert after["ML-DREEM"] != before["ML-DREEM"] and after["ML-METEOR"] != before["ML-METEOR"]


def test_installed_vectors_score_under_their_id(settings, dropped):
    record = next(r for r in models.list_models(settings) if r.slot == "word2vec-corpus")
    models.install(settings, OPERATOR, record.id)
    metric = registry_for(settings).get("W2V-AVG-corpus")
    assert f"vectors:word2vec-corpus@{record.id}" in metric.signature()
    expected = W2VAvg(vectors=str(dropped / "word2vec-corpus.kv")).score(CANDS, REFS)
    np.testing.assert_allclose(metric.score(CANDS, REFS), expected, rtol=1e-12)
    # Retraining replaces the training output (and its .npy arrays); the installed vectors stay.
    _write_vectors(dropped / "word2vec-corpus.kv", seed=2)
    again = registry_for(settings).get("W2V-AVG-corpus")
    assert again.signature() == metric.signature()
    np.testing.assert_allclose(again.score(CANDS, REFS), expected, rtol=1e-12)
    assert models.install_log(settings)[-1]["metrics"] == ["W2V-AVG-corpus"]
    models.uninstall(settings, OPERATOR, "word2vec-corpus")
    assert registry_for(settings).info("W2V-AVG-corpus").available is False
