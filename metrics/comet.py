"""COMET (Rei et al., EMNLP 2020): a trained estimator that reads source, candidate and reference.

The adapter loads a user's checkpoint (``model=<path to a .ckpt>``, or a folder holding
``checkpoints/model.ckpt``) with ``unbabel-comet``. That package pins numpy < 2 and transformers < 5, which
this project's numpy >= 2 excludes, so it is not a dependency: installed beside the project it is used, and
otherwise ``muttlab metrics`` lists COMET as unavailable with that reason. Several references: the best
score over them (COMET itself reads one reference). Without a source sentence (MUTT trials have none) the
source field is left empty, which is how reference-only use of a source-reference model is usually run.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from muttlab.metrics.base import Metric, MetricUnavailable
from muttlab.metrics.neural import model_digest

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
        try:
            import comet  # noqa: F401
        except ImportError:
            raise MetricUnavailable(INSTALL_HINT) from None
        self.checkpoint()

    def params(self) -> dict[str, object]:
        if self.model is None:
            return {"model": "none"}
        folder = self.model if self.model.is_dir() else self.model.parent
        return {"model": f"{self.model.name}@{model_digest(folder)}", "refs": "best"}

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
