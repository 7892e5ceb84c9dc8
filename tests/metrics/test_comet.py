"""COMET without `unbabel-comet`: what can be checked where the library cannot be installed (numpy >= 2) — the
reason it is unavailable, where a user's checkpoint is looked for, and that the signature names the checkpoint by
its content. Scoring itself needs the library and a checkpoint, so it is not tested here."""
from __future__ import annotations

import importlib.util

import pytest

from muttlab.metrics.base import MetricUnavailable
from muttlab.metrics.comet import INSTALL_HINT, Comet
from muttlab.metrics.registry import Registry

COMET_INSTALLED = importlib.util.find_spec("comet") is not None
needs_no_comet = pytest.mark.skipif(COMET_INSTALLED, reason="unbabel-comet is installed here")


def _download(folder, weights: bytes = b"weights", hparams: bytes | None = b"encoder_model: XLM-RoBERTa\n"):
    """A folder laid out as COMET's downloads are (``checkpoints/model.ckpt`` beside ``hparams.yaml``); the
    bytes are not a model: only the signature reads them."""
    (folder / "checkpoints").mkdir(parents=True)
    (folder / "checkpoints" / "model.ckpt").write_bytes(weights)
    if hparams is not None:
        (folder / "hparams.yaml").write_bytes(hparams)
    return folder


@needs_no_comet
def test_listed_unavailable_with_the_numpy_reason():
    info = Registry(use_entry_points=False).info("COMET")
    assert not info.available and info.reason == INSTALL_HINT
    assert "numpy<2" in INSTALL_HINT and "transformers<5" in INSTALL_HINT


@needs_no_comet
def test_a_users_checkpoint_is_still_refused_with_the_library_reason(tmp_path):
    metric = Comet(model=_download(tmp_path / "wmt22"))
    with pytest.raises(MetricUnavailable, match="unbabel-comet is not installed"):
        metric.check_available()


def test_where_the_checkpoint_is_looked_for(tmp_path):
    folder = _download(tmp_path / "wmt22")
    assert Comet(model=folder).checkpoint() == folder / "checkpoints" / "model.ckpt"
    assert Comet(model=folder / "checkpoints" / "model.ckpt").checkpoint() == folder / "checkpoints" / "model.ckpt"
    assert Comet(model=folder / "checkpoints" / "model.ckpt").hparams() == folder / "hparams.yaml"
    with pytest.raises(MetricUnavailable, match="needs a checkpoint"):
        Comet().checkpoint()
    with pytest.raises(MetricUnavailable, match=r"checkpoints/model.ckpt does not exist"):
        Comet(model=tmp_path).checkpoint()


def test_signature_names_the_checkpoint_by_content(tmp_path):
    folder = _download(tmp_path / "a" / "wmt22")
    signature = Comet(model=folder).signature()
    digest = signature.split("|")[1].split("@")[1]
    assert signature == f"COMET|model:wmt22@{digest}|refs:best|v:{Comet.version}" and len(digest) == 64
    # The same files elsewhere: the same model; the checkpoint named as a file or by its folder: the same digest.
    assert Comet(model=_download(tmp_path / "b" / "wmt22")).signature() == signature
    assert Comet(model=folder / "checkpoints" / "model.ckpt").signature().endswith(f"@{digest}|refs:best|v:1")
    # Other weights, or the same weights with other hyper-parameters, are another model.
    other_weights = Comet(model=_download(tmp_path / "c" / "wmt22", weights=b"weight5")).signature()
    other_hparams = Comet(model=_download(tmp_path / "d" / "wmt22", hparams=b"encoder_model: BERT\n")).signature()
    no_hparams = Comet(model=_download(tmp_path / "e" / "wmt22", hparams=None)).signature()
    assert len({signature, other_weights, other_hparams, no_hparams}) == 4
