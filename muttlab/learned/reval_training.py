"""Training and evaluating ReVal on plain lists of (sentence_a, sentence_b, score) pairs.

Follows Tai et al. (2015, §4.2 and §5.2) as ReVal does (Gupta et al. 2015, §3): AdaGrad with learning
rate 0.05, mini-batches of 25, L2 regularisation 1e-4, frozen word vectors, and the model of the epoch
with the best development Pearson r kept. Nothing here knows where the data came from.
"""
from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import numpy as np
import torch

from muttlab import stats
from muttlab.learned.reval_config import TrainConfig
from muttlab.metrics.reval.model import ModelConfig, ReValModel, WordVectors, kl_loss, target_distribution
from muttlab.metrics.reval.trees import DepTree


@dataclass(frozen=True)
class Pair:
    """One training or evaluation example: two sentences and their relatedness in [1, K]."""

    sentence_a: str
    sentence_b: str
    score: float


@dataclass(frozen=True)
class EpochStats:
    epoch: int
    train_loss: float
    dev_pearson: float
    dev_mse: float
    seconds: float


@dataclass(frozen=True)
class Progress:
    """What the progress callback receives after every mini-batch (``dev_pearson`` only at epoch ends)."""

    epoch: int
    epochs: int
    step: int
    steps: int
    loss: float
    dev_pearson: float | None = None


@dataclass
class TrainResult:
    """The best model found (by dev Pearson), and how training went."""

    model: ReValModel
    best_epoch: int
    best_dev_pearson: float
    history: list[EpochStats] = field(default_factory=list)
    seconds: float = 0.0


class Inputs:
    """Frozen per-sentence inputs (tree + word-vector tensor), built once per distinct sentence."""

    def __init__(self, trees: Mapping[str, DepTree], vectors: WordVectors):
        self.trees = trees
        self.vectors = vectors
        self._cache: dict[str, torch.Tensor] = {}

    def __call__(self, sentences: Sequence[str]) -> tuple[list[DepTree], list[torch.Tensor]]:
        trees, tensors = [], []
        for s in sentences:
            tree = self.trees[s]
            if s not in self._cache:
                self._cache[s] = self.vectors.encode(tree.tokens)
            trees.append(tree)
            tensors.append(self._cache[s])
        return trees, tensors


def predict(model: ReValModel, pairs: Sequence[tuple[str, str]], inputs: Inputs,
            batch_size: int = 512, progress: Callable[[int, int], None] | None = None) -> np.ndarray:
    """ŷ = rᵀp̂ in [1, K] for each (sentence_a, sentence_b); each distinct sentence is encoded once.
    ``progress(sentences encoded, distinct sentences)`` is told after each batch of ``batch_size`` sentences."""
    sentences = list(dict.fromkeys(s for pair in pairs for s in pair))
    index = {s: k for k, s in enumerate(sentences)}
    was_training = model.training
    model.eval()

    def encode(k: int) -> torch.Tensor:
        batch = model.encode(*inputs(sentences[k:k + batch_size]))
        if progress is not None:
            progress(min(len(sentences), k + batch_size), len(sentences))
        return batch

    try:
        with torch.no_grad():
            encoded = torch.cat([encode(k) for k in range(0, len(sentences), batch_size)]) if sentences else None
            out = []
            for k in range(0, len(pairs), batch_size):
                chunk = pairs[k:k + batch_size]
                h1 = encoded.index_select(0, torch.tensor([index[a] for a, _ in chunk]))
                h2 = encoded.index_select(0, torch.tensor([index[b] for _, b in chunk]))
                out.append(model.expected_score(model.log_probs(h1, h2)))
    finally:
        model.train(was_training)
    return torch.cat(out).numpy().astype(np.float64) if pairs else np.zeros(0)


def pearson(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson's r of predictions and gold; NaN where it is undefined (under 2 pairs, a diverged prediction)."""
    if len(x) < 2 or not np.isfinite(x).all():
        return float("nan")
    return stats.correlation(x, y, "pearson")


def train(train_pairs: Sequence[Pair], dev_pairs: Sequence[Pair], inputs: Inputs,
          model_config: ModelConfig = ModelConfig(), config: TrainConfig = TrainConfig(),
          progress: Callable[[Progress], None] | None = None,
          on_epoch: Callable[[TrainResult], None] | None = None) -> TrainResult:
    """Train a ReVal model; returns the epoch with the best dev Pearson r (Tai et al. §5.2).

    Args:
      train_pairs, dev_pairs: examples; every sentence must have a tree in ``inputs``.
      inputs: trees and frozen word vectors.
      progress: called after each mini-batch and at each epoch's end.
      on_epoch: called after each epoch with the best result so far (e.g. to save a checkpoint).
    """
    if not train_pairs:
        raise ValueError("no training pairs")
    torch.manual_seed(config.seed)
    rng = np.random.default_rng(config.seed)
    model = ReValModel(model_config)
    # Torch7's optim.adagrad (used by Tai et al.) adds the L2 term to the gradient, as weight_decay does.
    optimizer = torch.optim.Adagrad(model.parameters(), lr=config.learning_rate,
                                    weight_decay=config.weight_decay)
    scores = torch.tensor([p.score for p in train_pairs], dtype=torch.float32)
    targets = target_distribution(scores, model_config.classes)
    dev_gold = np.array([p.score for p in dev_pairs], dtype=np.float64)
    dev_input = [(p.sentence_a, p.sentence_b) for p in dev_pairs]
    steps = (len(train_pairs) + config.batch_size - 1) // config.batch_size
    result = TrainResult(model=copy.deepcopy(model), best_epoch=0, best_dev_pearson=float("-inf"))
    started = time.perf_counter()
    for epoch in range(1, config.epochs + 1):
        epoch_start = time.perf_counter()
        model.train()
        order = rng.permutation(len(train_pairs))
        total = 0.0
        for step in range(steps):
            idx = order[step * config.batch_size:(step + 1) * config.batch_size]
            batch = [train_pairs[i] for i in idx]
            # Both sides of the batch go through the encoder together: one forest, one pass per tree level.
            trees, vectors = inputs([p.sentence_a for p in batch] + [p.sentence_b for p in batch])
            h = model.encode(trees, vectors)
            log_probs = model.log_probs(h[:len(batch)], h[len(batch):])
            loss = kl_loss(log_probs, targets[torch.from_numpy(idx)])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += float(loss.detach()) * len(batch)
            if progress:
                progress(Progress(epoch, config.epochs, step + 1, steps, float(loss.detach())))
        dev_pred = predict(model, dev_input, inputs) if dev_pairs else np.zeros(0)
        dev_r = pearson(dev_pred, dev_gold) if dev_pairs else float("nan")
        stats = EpochStats(epoch, total / len(train_pairs), dev_r,
                           float(np.mean((dev_pred - dev_gold) ** 2)) if dev_pairs else float("nan"),
                           time.perf_counter() - epoch_start)
        result.history.append(stats)
        if not dev_pairs or dev_r > result.best_dev_pearson:
            result.model = copy.deepcopy(model)
            result.best_epoch, result.best_dev_pearson = epoch, dev_r
        result.seconds = time.perf_counter() - started
        if progress:
            progress(Progress(epoch, config.epochs, steps, steps, stats.train_loss, dev_r))
        if on_epoch:
            on_epoch(result)
    result.model.eval()
    return result


def mean_loss(model: ReValModel, pairs: Sequence[Pair], inputs: Inputs, batch_size: int = 256) -> float:
    """The mean training loss (KL only, no L2) over ``pairs``, without updating the model."""
    was_training = model.training
    model.eval()
    total = 0.0
    try:
        with torch.no_grad():
            for k in range(0, len(pairs), batch_size):
                batch = pairs[k:k + batch_size]
                trees, vectors = inputs([p.sentence_a for p in batch] + [p.sentence_b for p in batch])
                h = model.encode(trees, vectors)
                target = target_distribution(torch.tensor([p.score for p in batch]), model.config.classes)
                total += float(kl_loss(model.log_probs(h[:len(batch)], h[len(batch):]), target)) * len(batch)
    finally:
        model.train(was_training)
    return total / len(pairs)
