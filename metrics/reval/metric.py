"""ReVal as a metric: a trained similarity model scores a candidate against its references.

Gupta et al. (EMNLP 2015, §3) score a hypothesis by the predicted similarity ŷ ∈ [1, 5] to the reference.
With several references the best one counts (as for the multi-reference metrics of this project); the
score is mapped to [0, 1] as (ŷ − 1) / 4.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from muttlab.metrics.base import Metric, MetricError, MetricUnavailable
from muttlab.metrics.reval.model import MODELS
from muttlab.resources.bundled import models_dir

if TYPE_CHECKING:
    import torch

# Trained models shipped with the repository, used when the model folder has none.
PUBLISHED_DIR = models_dir()

NAMES = {"lstm": "ReVal-LSTM", "treelstm": "ReVal-TreeLSTM"}


def checkpoint_name(model: str) -> str:
    return f"reval-{model}.pt"


def find_checkpoint(model: str, model_dir: Path | None) -> Path | None:
    """The checkpoint a ReVal metric uses: the model folder's first, else the bundled one, else None."""
    for folder in ([Path(model_dir)] if model_dir else []) + [PUBLISHED_DIR]:
        path = folder / checkpoint_name(model)
        if path.is_file():
            return path
    return None


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
      model_dir: folder searched first for ``reval-<model>.pt`` (``muttlab reval train`` writes there);
        the checkpoints bundled in ``data/models`` are the fallback.
    """

    name: ClassVar[str] = "ReVal"
    version: ClassVar[str] = "1"
    requires: ClassVar[tuple[str, ...]] = ("torch", "glove-6B-50d", "spacy en_core_web_sm", "trained model")
    languages = ("en",)  # English resources (see muttlab.metrics.base.Metric.languages)
    description: ClassVar[str] = ("learned similarity (LSTM / dependency Tree-LSTM over GloVe) trained on SICK "
                                  "relatedness; best over references, in [0, 1]")
    # Loading torch, GloVe, spaCy and the model in every worker costs more than the scoring itself.
    parallel: ClassVar[bool] = False
    MEMO_SIZE: ClassVar[int] = 60_000  # encoded sentences kept (the MUTT experiment set has about 40,000)

    def __init__(self, model: str = "treelstm", model_dir: Path | str | None = None):
        if model not in MODELS:
            raise ValueError(f"unknown ReVal model {model!r}; choose one of {', '.join(MODELS)}")
        self.model = model
        self.name = NAMES[model]
        self.model_dir = Path(model_dir) if model_dir else None
        self._net = None
        self._vectors = None
        self._digest: str | None = None
        self._encoded: dict[str, torch.Tensor] = {}  # sentence -> encoding, shared once loaded (_ENCODED)

    @property
    def checkpoint(self) -> Path | None:
        return find_checkpoint(self.model, self.model_dir)

    def params(self) -> dict[str, object]:
        # The checkpoint's digest makes retraining invalidate cached scores.
        return {"model": self.model, "ckpt": self._checkpoint_digest()}

    def _memo_key(self) -> str:
        return f"{self.model}:{self._checkpoint_digest()}"

    def _checkpoint_digest(self) -> str:
        if self._digest is None:
            path = self.checkpoint
            self._digest = hashlib.sha256(path.read_bytes()).hexdigest()[:12] if path else "none"
        return self._digest

    def check_available(self) -> None:
        if self.checkpoint is None:
            raise MetricUnavailable(
                f"{self.name}: no trained model (looked for {checkpoint_name(self.model)} in "
                f"{self.model_dir or 'the model folder'} and {PUBLISHED_DIR}); "
                f"train it with `muttlab reval train --model {self.model}`")
        try:
            import torch  # noqa: F401
        except ImportError as exc:
            raise MetricUnavailable(f"{self.name} needs PyTorch: pip install torch==2.13.0 ({exc})") from exc

    def _load(self):
        if self._net is None:
            self.check_available()
            from muttlab.metrics.reval.model import WordVectors, load_checkpoint
            try:
                from muttlab.resources.glove import DIM, VectorsMissing, load_glove
                vectors = WordVectors(load_glove(), DIM)
            except VectorsMissing as exc:
                raise MetricUnavailable(f"{self.name}: {exc}") from exc
            try:
                self._net = load_checkpoint(self.checkpoint)
            except ValueError as exc:
                raise MetricUnavailable(f"{self.name}: {exc}; train it again with "
                                        f"`muttlab reval train --model {self.model} --force`") from exc
            self._vectors = vectors
            self._encoded = _ENCODED.setdefault(self._memo_key(), {})
        return self._net

    def _encode_new(self, sentences: list[str]) -> None:
        """Parse (Tree-LSTM) or tokenise (LSTM) and encode the sentences not seen before.

        Encodings are kept: a reference pool is scored against many candidates (both sides of a trial,
        5/10/20 references), and encoding is most of the cost, the more so for an ensemble.
        """
        import torch

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
        try:
            if self.model == "treelstm":
                trees = _parsed(todo)
            else:
                # The sequential LSTM reads tokens only; a chain stands in for the tree.
                trees = [DepTree(tokens, tuple(range(-1, len(tokens) - 1)))
                         for tokens in tokenize(todo)]
        except RuntimeError as exc:  # muttlab.resources.spacy_nlp.ModelMissing
            raise MetricUnavailable(f"{self.name}: {exc}") from exc
        with torch.no_grad():
            for k in range(0, len(todo), 512):
                chunk = trees[k:k + 512]
                encoded = self._net.encode(chunk, [self._vectors.encode(t.tokens) for t in chunk])
                self._encoded.update(zip(todo[k:k + 512], encoded))

    def encodings(self, sentences: list[str]) -> np.ndarray:
        """The model's sentence encodings, ``(len(sentences), memory × members)`` float64 (kept per sentence)."""
        import torch

        self._load()
        self._encode_new(sentences)
        if not sentences:
            return np.zeros((0, 0))
        return torch.stack([self._encoded[s] for s in sentences]).numpy().astype(np.float64)

    def similarities(self, first: list[str], second: list[str]) -> np.ndarray:
        """Predicted relatedness ŷ ∈ [1, 5] for each pair (first[i], second[i])."""
        import torch

        net = self._load()
        sentences = list(dict.fromkeys(first + second))
        self._encode_new(sentences)
        index = {s: k for k, s in enumerate(sentences)}
        out = []
        with torch.no_grad():
            encoded = torch.stack([self._encoded[s] for s in sentences])
            for k in range(0, len(first), 4096):
                h1 = encoded.index_select(0, torch.tensor([index[s] for s in first[k:k + 4096]]))
                h2 = encoded.index_select(0, torch.tensor([index[s] for s in second[k:k + 4096]]))
                out.append(net.expected_score(net.log_probs(h1, h2)))
        return torch.cat(out).numpy().astype(np.float64)

    def _score(self, candidates: list[str], references: list[list[str]]) -> np.ndarray:
        # A blank reference has no tree to encode and says nothing about the candidate, so it is left out of
        # the best-over-references (three of the study's MUTT pools contain one); only-blank is an error.
        references = [[r for r in rs if r.strip()] for rs in references]
        lonely = next((i for i, rs in enumerate(references) if not rs), None)
        if lonely is not None:
            raise MetricError(f"{self.name}: every reference of candidate {lonely} is empty; "
                              f"give it at least one non-empty reference")
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
        self._encoded = {}
