"""ReVal as a metric: a trained similarity model scores a candidate against its references.

Gupta et al. (EMNLP 2015, §3) score a hypothesis by the predicted similarity ŷ ∈ [1, 5] to the reference.
With several references the best one counts (as for the multi-reference metrics of this project); the
score is mapped to [0, 1] as (ŷ − 1) / 4.
"""
from __future__ import annotations

import io
import json
from pathlib import Path
from typing import ClassVar

import numpy as np

from muttlab.metrics.base import Metric, MetricError, MetricUnavailable, require_module
from muttlab.metrics.reval.installed import (INSTALLED_FILE, installed_checkpoint, model_id,  # noqa: F401
                                             read_installed, slot)
from muttlab.resources.bundled import models_dir

# Trained models shipped with the repository, used when the model folder has none.
PUBLISHED_DIR = models_dir()

NAMES = {"lstm": "ReVal-LSTM", "treelstm": "ReVal-TreeLSTM"}


def checkpoint_name(model: str) -> str:
    return f"reval-{model}.pt"


def checkpoint_info(path: Path) -> dict:
    """The JSON written beside a checkpoint: configuration, data, training history, scores."""
    return json.loads(Path(path).with_suffix(".json").read_text(encoding="utf-8"))


def find_checkpoint(model: str, model_dir: Path | None) -> Path | None:
    """The checkpoint a ReVal metric uses: the one installed in the model folder, else the shipped one.

    A checkpoint merely lying in the model folder is not used: training writes new files there, and only
    installing one (a maintainer's recorded action) changes what the metric computes.
    """
    installed = installed_checkpoint(model, model_dir)
    if installed is not None:
        return installed
    path = PUBLISHED_DIR / checkpoint_name(model)
    return path if path.is_file() else None


# Sentence encodings by checkpoint digest, then sentence: instances with the same model (the ReVal-TreeLSTM
# metric and DREEM's reval representation) share them.
_ENCODED: dict[str, dict] = {}

# Dependency trees by sentence, shared by every ReVal instance of the process (the ReVal-TreeLSTM metric and
# DREEM's reval representation parse the same sentences); bounded like the encoding memo.
_TREES: dict = {}
_TREES_SIZE = 200_000


def _parsed(sentences: list[str]) -> list:
    from muttlab.metrics.reval.trees import parse_trees

    found = {s: _TREES[s] for s in dict.fromkeys(sentences) if s in _TREES}
    todo = [s for s in dict.fromkeys(sentences) if s not in found]
    if todo:
        found.update(zip(todo, parse_trees(todo)))
        if len(_TREES) + len(todo) > _TREES_SIZE:
            _TREES.clear()
        _TREES.update((s, found[s]) for s in todo)
    return [found[s] for s in sentences]


class ReVal(Metric):
    """Best predicted SICK relatedness over the references, mapped to [0, 1] (Gupta et al. 2015).

    Args:
      model: ``lstm`` or ``treelstm`` (child-sum dependency Tree-LSTM).
      model_dir: the model folder; the model installed there (``muttlab models install``) is used, else the
        checkpoint shipped in ``data/models``.
      checkpoint: a checkpoint file to use instead (evaluation, tests).

    The checkpoint is pinned at first use: its id (content hash) goes into the signature and the weights
    are loaded from the very bytes that were hashed, so installing another model later never lets this
    instance score under one model's key with another model's weights.
    """

    name: ClassVar[str] = "ReVal"
    # 2: each sentence is encoded alone and the head runs in float64, so a pair's score is batch-independent.
    # 3: encoder and head run forward in float64 numba kernels (scores move by about 1e-7).
    version: ClassVar[str] = "3"
    requires: ClassVar[tuple[str, ...]] = ("torch", "glove-6B-50d", "spacy en_core_web_sm", "trained model")
    languages = ("en",)  # English resources (see muttlab.metrics.base.Metric.languages)
    language_reason = "trained on English SICK over English GloVe vectors and spaCy's English parses"
    description: ClassVar[str] = ("learned similarity (LSTM / dependency Tree-LSTM over GloVe) trained on SICK "
                                  "relatedness; best over references, in [0, 1]")
    # Loading torch, GloVe, spaCy and the model in every worker costs more than the scoring itself.
    parallel: ClassVar[bool] = False
    # An empty sentence has no tokens, so no tree for the network to encode (Gupta et al. define none).
    scores_empty_text: ClassVar[bool] = False
    MEMO_SIZE: ClassVar[int] = 60_000  # encoded sentences kept (the MUTT experiment set has 11,127 distinct)
    CHUNK: ClassVar[int] = 4096  # sentences parsed and encoded per kernel call

    def __init__(self, model: str = "treelstm", model_dir: Path | str | None = None,
                 checkpoint: Path | str | None = None):
        if model not in NAMES:
            raise ValueError(f"unknown ReVal model {model!r}; choose one of {', '.join(NAMES)}")
        self.model = model
        self.name = NAMES[model]
        self.model_dir = Path(model_dir) if model_dir else None
        self._explicit = Path(checkpoint) if checkpoint else None
        self._net = None
        self._encoder = None  # muttlab.metrics.reval.inference.Encoder / Head, built from the loaded weights
        self._head = None
        self._pinned: tuple[Path, str, bytes | None] | None = None  # path, id, bytes until loaded
        self._encoded: dict[str, np.ndarray] = {}  # sentence -> encoding, shared once loaded (_ENCODED)

    @property
    def checkpoint(self) -> Path | None:
        """The checkpoint this instance uses (pinned once it has been read)."""
        if self._pinned is not None:
            return self._pinned[0]
        return self._explicit or find_checkpoint(self.model, self.model_dir)

    def params(self) -> dict[str, object]:
        # The model id (content hash) keys every cached score: no two models' scores share a key.
        return {"model": self.model, "ckpt": self.model_id}

    def _memo_key(self) -> str:
        return f"{self.model}:{self.model_id}"

    @property
    def model_id(self) -> str:
        """The id of the checkpoint in use; reading it pins the checkpoint to this instance."""
        self.check_available()
        if self._pinned is None:
            path = self.checkpoint
            try:
                data = path.read_bytes()
            except OSError as exc:
                raise MetricUnavailable(f"{self.name}: cannot read {path} ({exc})") from None
            self._pinned = (path, model_id(data), data)
        return self._pinned[1]

    def sick_splits_seen(self) -> dict[str, str]:
        """TRAIN and TRIAL (epoch and seed selection) when the checkpoint was trained on SICK (its JSON says
        so); nothing for a model trained on other pairs (``muttlab reval train --pairs``)."""
        path = self.checkpoint
        try:
            source = checkpoint_info(path).get("data", {}).get("source") if path else None
        except (OSError, ValueError):
            return {}
        return {"TRAIN": "training", "TRIAL": "model selection"} if source == "SICK" else {}

    def check_available(self) -> None:
        path = self.checkpoint
        if path is None:
            raise MetricUnavailable(
                f"{self.name}: no trained model (none installed in {self.model_dir or 'the model folder'} and "
                f"no {checkpoint_name(self.model)} in {PUBLISHED_DIR}); train one with `muttlab reval train "
                f"--model {self.model}` and install it with `muttlab models install`")
        if self._pinned is None and not path.is_file():
            raise MetricUnavailable(
                f"{self.name}: the installed model {path} is missing; uninstall it with `muttlab models "
                f"uninstall {slot(self.model)}` to use the shipped model, or install another")
        require_module("torch", f"{self.name} needs PyTorch: pip install torch==2.13.0")

    def _load(self):
        if self._net is None:
            self.check_available()
            from muttlab.metrics.reval.model import WordVectors, load_checkpoint
            try:
                from muttlab.resources.glove import DIM, VectorsMissing, load_glove
                vectors = WordVectors(load_glove(), DIM)
            except VectorsMissing as exc:
                raise MetricUnavailable(f"{self.name}: {exc}") from exc
            _ = self.model_id  # pins the checkpoint: the weights below are the bytes that were hashed
            path, digest, data = self._pinned
            if data is None:  # loaded before and closed since: read again, and only the same model
                try:
                    data = path.read_bytes()
                except OSError as exc:
                    raise MetricUnavailable(f"{self.name}: cannot read {path} ({exc})") from None
                if model_id(data) != digest:
                    raise MetricUnavailable(f"{self.name}: {path} has changed since model {digest} was loaded; "
                                            "models are replaced by installing a new one, never in place")
            try:
                self._net = load_checkpoint(io.BytesIO(data))
            except ValueError as exc:
                raise MetricUnavailable(f"{self.name}: {path}: {exc}; train it again with "
                                        f"`muttlab reval train --model {self.model} --force`") from exc
            self._pinned = (path, digest, None)  # the weights are loaded; the bytes are not needed any more
            from muttlab.metrics.reval.inference import Encoder, Head
            self._encoder = Encoder(self._net, vectors.vector)
            self._head = Head(self._net)
            self._encoded = _ENCODED.setdefault(self._memo_key(), {})
        return self._net

    def _encode_new(self, sentences: list[str]) -> None:
        """Parse (Tree-LSTM) or tokenise (LSTM) and encode the sentences not seen before.

        Encodings are kept: a reference pool is scored against many candidates (both sides of a trial,
        5/10/20 references), and encoding is most of the cost, the more so for an ensemble. An encoding is
        a function of its sentence alone (:mod:`muttlab.metrics.reval.inference`), so keeping it, and
        encoding many sentences in one call, never makes a score depend on the other sentences.
        """
        from muttlab.metrics.reval.trees import DepTree, tokenize

        todo = [s for s in dict.fromkeys(sentences) if s not in self._encoded]
        if not todo:
            return
        if len(self._encoded) + len(todo) > self.MEMO_SIZE:
            # Bound the memo (a large corpus would keep every encoding alive), keeping this call's sentences.
            needed = set(sentences)
            oldest = len(self._encoded) - self.MEMO_SIZE // 2
            for stale in [s for k, s in enumerate(self._encoded) if k < oldest and s not in needed]:
                del self._encoded[stale]  # in place: the memo is shared (see _ENCODED)
        blank = next((s for s in todo if not s.strip()), None)
        if blank is not None:
            raise MetricError(f"{self.name}: cannot encode an empty sentence ({blank!r})")
        for k in range(0, len(todo), self.CHUNK):  # bounds the kernels' per-subtree state arrays
            chunk = todo[k:k + self.CHUNK]
            try:
                if self.model == "treelstm":
                    trees = _parsed(chunk)
                else:
                    # The sequential LSTM reads tokens only; a chain stands in for the tree.
                    trees = [DepTree(tokens, tuple(range(-1, len(tokens) - 1))) for tokens in tokenize(chunk)]
            except RuntimeError as exc:  # muttlab.resources.spacy_nlp.ModelMissing
                raise MetricUnavailable(f"{self.name}: {exc}") from exc
            self._encoded.update(zip(chunk, self._encoder.encode(trees)))

    def encodings(self, sentences: list[str]) -> np.ndarray:
        """The model's sentence encodings, ``(len(sentences), memory × members)`` float64 (kept per sentence)."""
        self._load()
        self._encode_new(sentences)
        if not sentences:
            return np.zeros((0, 0))
        return np.stack([self._encoded[s] for s in sentences])

    def similarities(self, first: list[str], second: list[str]) -> np.ndarray:
        """Predicted relatedness ŷ ∈ [1, 5] for each pair (first[i], second[i]), a function of that pair alone.

        The similarity head runs in float64, one pair at a time (:class:`~muttlab.metrics.reval.inference.Head`);
        a pair that recurs in the call (a reference pool scored for both sides of a trial) is computed once.
        """
        self._load()
        self._encode_new(first + second)
        if not first:
            return np.zeros(0)
        pairs: dict[tuple[str, str], int] = {}
        which = np.fromiter((pairs.setdefault(p, len(pairs)) for p in zip(first, second)), dtype=np.int64,
                            count=len(first))
        left = list(dict.fromkeys(a for a, _ in pairs))
        right = list(dict.fromkeys(b for _, b in pairs))
        at_left = {s: k for k, s in enumerate(left)}
        at_right = {s: k for k, s in enumerate(right)}
        distinct = self._head(np.stack([self._encoded[s] for s in left]), np.stack([self._encoded[s] for s in right]),
                              np.fromiter((at_left[a] for a, _ in pairs), dtype=np.int64, count=len(pairs)),
                              np.fromiter((at_right[b] for _, b in pairs), dtype=np.int64, count=len(pairs)))
        return distinct[which]

    def _score(self, candidates: list[str], references: list[list[str]]) -> np.ndarray:
        # A blank reference has no tree to encode and says nothing about the candidate, so it is left out of
        # the best-over-references (three of the study's MUTT pools contain one); an item with only blank
        # references, or a blank candidate, never gets here (scores_empty_text).
        references = [[r for r in rs if r.strip()] for rs in references]
        owner = np.repeat(np.arange(len(candidates)), [len(r) for r in references])
        refs = [r for rs in references for r in rs]
        cands = [candidates[i] for i in owner]
        sim = (self.similarities(refs, cands) - 1.0) / 4.0
        best = np.full(len(candidates), -np.inf)
        np.maximum.at(best, owner, sim)
        return np.clip(best, 0.0, 1.0)

    def close(self) -> None:
        if self._net is not None:
            _ENCODED.pop(self._memo_key(), None)
        self._net = None
        self._encoder = self._head = None
        self._encoded = {}
