"""COMET (Rei et al., EMNLP 2020): a trained estimator that reads source, candidate and reference.

The adapter loads a user's checkpoint (``model=<path to a .ckpt>``, or a folder holding
``checkpoints/model.ckpt``) with ``unbabel-comet``. That package pins numpy < 2 and transformers < 5, which
this project's numpy >= 2 excludes, so it is not a dependency: installed beside the project it is used, and
otherwise ``muttlab metrics`` lists COMET as unavailable with that reason. Several references: the best
score over them (COMET itself reads one reference). Without a source sentence (MUTT trials have none) the
source field is left empty, which is how reference-only use of a source-reference model is usually run.
The signature names the checkpoint by a content hash of the files COMET builds the model from: the
checkpoint and the ``hparams.yaml`` of its folder.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np

from muttlab.metrics.base import Metric, MetricUnavailable, require_module

INSTALL_HINT = ("unbabel-comet is not installed: it pins numpy<2 and transformers<5, which conflict with this "
                "project's numpy>=2; install it in an environment of its own with muttlab installed --no-deps")


class Comet(Metric):
    """COMET score of (source, candidate, reference), best over references.

    Args:
      model: path of a COMET checkpoint (``.ckpt``) or of the folder it was downloaded to.
      batch_size, gpus: passed to COMET's ``predict``.
    """

    name = "COMET"
    version = "1"
    description = "COMET (unbabel-comet) with a checkpoint you give; reads the source sentence when there is one"
    parallel = False
    uses_source = True
    requires = ("unbabel-comet", "a COMET checkpoint")

    def __init__(self, model: str | os.PathLike | None = None, batch_size: int = 32, gpus: int = 0):
        self.model = None if model is None else Path(model)
        self.batch_size = int(batch_size)
        self.gpus = int(gpus)
        self._loaded = None
        self._digest: str | None = None

    def checkpoint(self) -> Path:
        if self.model is None:
            raise MetricUnavailable("COMET needs a checkpoint: register it with a factory that passes "
                                    "model=<path to model.ckpt> (e.g. --metric-path mypkg:comet)")
        path = self.model
        if path.is_dir():
            path = path / "checkpoints" / "model.ckpt"
        if not path.is_file():
            raise MetricUnavailable(f"COMET checkpoint {path} does not exist; give the path of a .ckpt file")
        return path

    def check_available(self) -> None:
        require_module("comet", INSTALL_HINT)
        self.checkpoint()

    def hparams(self) -> Path:
        """Where COMET's ``load_from_checkpoint`` reads the model's hyper-parameters: ``<folder>/hparams.yaml``
        for ``<folder>/checkpoints/model.ckpt``."""
        return self.checkpoint().parent.parent / "hparams.yaml"

    def checkpoint_digest(self) -> str:
        """The SHA-256 of the checkpoint and its ``hparams.yaml`` (when there is one), in hex."""
        if self._digest is None:
            # Once per instance: a checkpoint is gigabytes, and the signature is asked for on every batch.
            digest = hashlib.sha256()
            for part in (self.checkpoint(), self.hparams()):
                if part.is_file():
                    digest.update(part.name.encode() + b"\0")
                    with part.open("rb") as handle:
                        for block in iter(lambda: handle.read(1 << 20), b""):
                            digest.update(block)
            self._digest = digest.hexdigest()
        return self._digest

    def params(self) -> dict[str, object]:
        if self.model is None:
            return {"model": "none"}
        return {"model": f"{self.model.name}@{self.checkpoint_digest()}", "refs": "best"}

    def _score(self, candidates: list[str], references: list[list[str]], sources: list[str] | None) -> np.ndarray:
        if self._loaded is None:
            self.check_available()
            from comet import load_from_checkpoint
            self._loaded = load_from_checkpoint(str(self.checkpoint()))
        sources = sources if sources is not None else [""] * len(candidates)
        rows, owner = [], []
        for i, (cand, refs, src) in enumerate(zip(candidates, references, sources)):
            for ref in refs:
                rows.append({"src": src or "", "mt": cand, "ref": ref})
                owner.append(i)
        output = self._loaded.predict(rows, batch_size=self.batch_size, gpus=self.gpus, progress_bar=False)
        best = np.full(len(candidates), -np.inf)
        for i, value in zip(owner, output.scores):
            best[i] = max(best[i], float(value))
        return best

    def close(self) -> None:
        self._loaded = None
