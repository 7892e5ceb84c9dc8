"""BLEU-1..4 per sentence, exactly as coco-caption computes them.

Papineni et al. (2002); the per-sentence variant of pycocoevalcap's ``BleuScorer`` with
``option='closest'``: clipped n-gram precisions with the add-1e-9 / 1e-15 guards, the geometric mean up
to order n, and the brevity penalty against the reference length closest to the candidate's.
"""
from __future__ import annotations

import numpy as np

from muttlab.metrics.base import Metric
from muttlab.metrics.ngrams import SHIFT, Batch, encode, lookup
from muttlab.metrics.tokenize import tokenizer

# pycocoevalcap's guards against zero counts (bleu_scorer.py, compute_score).
TINY, SMALL = 1e-15, 1e-9


def clipped_counts(batch: Batch, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(matches, guesses) of order k per item: clipped by the maximum count in any one reference."""
    if ("clip", k) not in batch.memo:
        order = batch.table.orders[k - 1]
        ref_keys, ref_max = batch.ref_max(k)
        rows, item = batch.table.rows(k, batch.cand)
        wanted = batch.reflist[item] << SHIFT | order.gram[rows]
        clip = np.minimum(order.count[rows], lookup(ref_keys, ref_max, wanted))
        matches = np.bincount(item, weights=clip, minlength=batch.n_items)
        guesses = np.maximum(batch.lengths[batch.cand] - k + 1, 0).astype(np.float64)
        batch.memo[("clip", k)] = (matches, guesses)
    return batch.memo[("clip", k)]


def closest_ref_length(batch: Batch) -> np.ndarray:
    """Per item, the reference length closest to the candidate's (shorter one on ties), as coco-caption."""
    cand_len = batch.lengths[batch.cand]
    ref_len = batch.lengths[batch.pair_sent]
    diff = np.abs(ref_len - cand_len[batch.pair_item])
    key = diff * (ref_len.max(initial=0) + 1) + ref_len
    starts = np.concatenate(([0], np.cumsum(batch.refs_per_item)[:-1]))
    best = np.minimum.reduceat(key, starts)
    return best % (ref_len.max(initial=0) + 1)


def sentence_bleu(batch: Batch, n: int) -> np.ndarray:
    """coco-caption's per-sentence BLEU-n for every item of an encoded batch."""
    log_prec = np.zeros(batch.n_items)
    for k in range(1, n + 1):
        matches, guesses = clipped_counts(batch, k)
        log_prec += np.log((matches + TINY) / (guesses + SMALL))
    bleu = np.exp(log_prec / n)
    ratio = (batch.lengths[batch.cand] + TINY) / (closest_ref_length(batch) + SMALL)
    with np.errstate(divide="ignore"):
        penalty = np.where(ratio < 1, np.exp(1 - 1 / ratio), 1.0)
    return bleu * penalty


class Bleu(Metric):
    """BLEU-n (Papineni et al. 2002) per sentence as coco-caption computes it."""

    version = "1"
    # Vectorised over the whole batch: splitting it across worker processes costs more than it saves.
    parallel = False
    forkable = True  # numpy over process-wide tables only
    description = "clipped n-gram precision with brevity penalty, coco-caption per-sentence variant"
    score_range = (0.0, 1.0)

    def __init__(self, n: int = 4, tokenize: str = "ptb"):
        if n not in (1, 2, 3, 4):
            raise ValueError(f"BLEU order must be 1..4, got {n}")
        self.n = n
        self.tokenize = tokenize
        self._tokenizer = tokenizer(tokenize)
        self.name = f"BLEU-{n}"

    def params(self) -> dict[str, object]:
        return {"n": self.n, "tok": self.tokenize, "bp": "closest"}

    def _score(self, candidates, references):
        return sentence_bleu(encode(candidates, references, self._tokenizer), self.n)
