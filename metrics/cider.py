"""CIDEr-D per sentence, exactly as coco-caption's ``Cider`` scorer computes it.

Vedantam et al. (CVPR 2015), with coco-caption's CIDEr-D changes: tf-idf vectors of 1..4-grams where the
document frequencies come from the batch's references (one document per candidate), clipped cosine
similarity per order, a Gaussian penalty on the difference in length (sigma = 6), the mean over orders,
averaged over references and multiplied by 10. Because of the document frequencies a sentence's score
depends on the whole batch (``corpus_dependent``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from muttlab.metrics.base import Metric
from muttlab.metrics.ngrams import Batch, encode, gram_names, item_rows, lookup
from muttlab.metrics.tokenize import tokenizer


@dataclass(frozen=True)
class CorpusStats:
    """The batch-level part of CIDEr-D: the number of documents (items) and, per order, each n-gram's
    document frequency by name. Computed once per batch; any slice of the batch scored with it gets the
    scores the whole batch would (this is how a cluster splits a cell without changing its numbers)."""

    n_docs: int
    df: tuple[dict[str, int], ...]


def document_frequencies(batch: Batch, k: int) -> np.ndarray:
    """In how many items' reference sets each gram of order k occurs (coco-caption's ``document_frequency``)."""
    counts = batch.orders[k - 1]
    rows, pair = item_rows(counts, batch.pair_sent)
    doc_gram = np.unique(batch.pair_item[pair] * max(counts.n_grams, 1) + counts.gram[rows])
    return np.bincount(doc_gram % max(counts.n_grams, 1), minlength=counts.n_grams)


def corpus_stats(batch: Batch, n: int) -> CorpusStats:
    """The document frequencies of an encoded batch, by gram name (grams no reference has are left out)."""
    tables = []
    for k in range(1, n + 1):
        df = document_frequencies(batch, k)
        grams = np.flatnonzero(df)
        tables.append(dict(zip(gram_names(batch, k, grams), df[grams].tolist())))
    return CorpusStats(batch.n_items, tuple(tables))


def _frequencies_from(stats: CorpusStats, batch: Batch, k: int) -> np.ndarray:
    """``stats``' document frequencies for the grams of this batch (0 for a gram no reference has)."""
    table = stats.df[k - 1]
    names = gram_names(batch, k, np.arange(batch.orders[k - 1].n_grams))
    return np.fromiter((table.get(g, 0) for g in names), np.int64, len(names))


def _tfidf(batch: Batch, k: int, n_docs: int, stats: CorpusStats | None = None):
    """Per distinct sentence of order k: (weights per count row, norm per sentence) using the refs' df."""
    counts = batch.orders[k - 1]
    df = document_frequencies(batch, k) if stats is None else _frequencies_from(stats, batch, k)
    ref_len = np.log(float(n_docs))
    weights = counts.count * (ref_len - np.log(np.maximum(1.0, df[counts.gram])))
    # Summed in the order the grams occur in the sentence (coco-caption's dictionary order), not in gram-id
    # order: ids depend on what the process saw before, and a different order rounds differently.
    order = np.lexsort((counts.first, counts.sentence))
    norms = np.sqrt(np.bincount(counts.sentence[order], weights=weights[order] ** 2, minlength=len(batch.lengths)))
    return weights, norms


def cider_d(batch: Batch, n: int = 4, sigma: float = 6.0, stats: CorpusStats | None = None) -> np.ndarray:
    """CIDEr-D of every item of an encoded batch (max_n >= n); document frequencies from ``stats`` when given,
    else from the batch's own references."""
    n_pairs = batch.pair_item.size
    per_pair = np.zeros((n, n_pairs))
    # coco-caption's "length" is the number of bigrams of a sentence.
    n_bigrams = np.maximum(batch.lengths - 1, 0)
    delta = (n_bigrams[batch.cand][batch.pair_item] - n_bigrams[batch.pair_sent]).astype(np.float64)
    penalty = np.exp(-(delta ** 2) / (2 * sigma ** 2))
    for k in range(1, n + 1):
        counts = batch.orders[k - 1]
        n_grams = max(counts.n_grams, 1)
        weights, norms = _tfidf(batch, k, batch.n_items if stats is None else stats.n_docs, stats)
        # Candidate vectors keyed by (item, gram).
        c_rows, c_item = item_rows(counts, batch.cand)
        c_keys = c_item * n_grams + counts.gram[c_rows]
        c_order = np.argsort(c_keys, kind="stable")
        c_keys, c_weights, c_first = c_keys[c_order], weights[c_rows][c_order], counts.first[c_rows][c_order]
        # Reference vectors, one per pair; only grams present in both contribute, summed in the order they
        # occur in the candidate (as coco-caption iterates the candidate's grams), whatever the gram ids.
        r_rows, r_pair = item_rows(counts, batch.pair_sent)
        r_keys = batch.pair_item[r_pair] * n_grams + counts.gram[r_rows]
        hyp_first = lookup(c_keys, c_first, r_keys, missing=np.iinfo(np.int64).max)
        order = np.lexsort((hyp_first, r_pair))
        r_rows, r_pair, r_keys = r_rows[order], r_pair[order], r_keys[order]
        r_weights = weights[r_rows]
        hyp = lookup(c_keys, c_weights, r_keys, missing=0.0)
        dot = np.bincount(r_pair, weights=np.minimum(hyp, r_weights) * r_weights, minlength=n_pairs)
        denom = norms[batch.cand][batch.pair_item] * norms[batch.pair_sent]
        with np.errstate(divide="ignore", invalid="ignore"):
            sim = np.where(denom != 0, dot / denom, dot)
        per_pair[k - 1] = sim * penalty
    pair_score = per_pair.mean(axis=0)
    return 10.0 * np.bincount(batch.pair_item, weights=pair_score, minlength=batch.n_items) / batch.refs_per_item


class CiderD(Metric):
    """CIDEr-D (Vedantam et al. 2015) as coco-caption computes it, per sentence."""

    name = "CIDEr-D"
    score_range = (0.0, 10.0)
    # Vectorised over the whole batch: splitting it across worker processes costs more than it saves.
    parallel = False
    corpus_dependent = True
    # 2: sums run in the grams' order of occurrence, so a score no longer depends on the process's vocabulary.
    version = "2"
    description = "consensus tf-idf n-gram similarity with clipping and length penalty (coco-caption)"

    def __init__(self, n: int = 4, sigma: float = 6.0, tokenize: str = "ptb"):
        self.n = n
        self.sigma = sigma
        self.tokenize = tokenize
        self._tokenizer = tokenizer(tokenize)

    def params(self) -> dict[str, object]:
        return {"n": self.n, "sigma": self.sigma, "tok": self.tokenize}

    def _score(self, candidates, references):
        return cider_d(encode(candidates, references, self.n, self._tokenizer), self.n, self.sigma)

    def corpus_stats(self, references: list[list[str]]) -> CorpusStats:
        # The candidates play no part in the document frequencies; a blank stands in for each.
        return corpus_stats(encode([""] * len(references), references, self.n, self._tokenizer), self.n)

    def _score_with_stats(self, candidates, references, stats: CorpusStats):
        return cider_d(encode(candidates, references, self.n, self._tokenizer), self.n, self.sigma, stats)
