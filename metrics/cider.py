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
from muttlab.metrics.ngrams import LOW, SHIFT, Batch, encode, expand_ranges, lookup
from muttlab.metrics.tokenize import tokenizer


@dataclass(frozen=True)
class CorpusStats:
    """The batch-level part of CIDEr-D: the number of documents (items) and, per order, each n-gram's
    document frequency by name. Computed once per batch; any slice of the batch scored with it gets the
    scores the whole batch would (this is how a cluster splits a cell without changing its numbers)."""

    n_docs: int
    df: tuple[dict[str, int], ...]


def document_frequencies(batch: Batch, k: int) -> np.ndarray:
    """In how many items' reference sets each gram of order k occurs (coco-caption's ``document_frequency``),
    indexed by the table's gram id."""
    refs = batch.refs
    if ("df", k) not in refs.memo:
        keys, _ = refs.ref_max(k)
        # An item is one document: a reference list shared by several items counts once for each of them.
        uses = np.bincount(refs.reflist, minlength=refs.n_reflists)
        refs.memo[("df", k)] = np.bincount(keys & LOW, weights=uses[keys >> SHIFT],
                                           minlength=refs.table.orders[k - 1].n_grams).astype(np.int64)
    df = refs.memo[("df", k)]
    # Grams counted since (a later batch's candidates) are in none of these references.
    missing = refs.table.orders[k - 1].n_grams - df.size
    return np.concatenate((df, np.zeros(missing, np.int64))) if missing > 0 else df


def corpus_stats(batch: Batch, n: int) -> CorpusStats:
    """The document frequencies of an encoded batch, by gram name (grams no reference has are left out)."""
    tables = []
    for k in range(1, n + 1):
        df = document_frequencies(batch, k)
        grams = np.flatnonzero(df)
        tables.append(dict(zip(batch.table.gram_names(k, grams), df[grams].tolist())))
    return CorpusStats(batch.n_items, tuple(tables))


def _frequencies_from(stats: CorpusStats, batch: Batch, sentences: np.ndarray, k: int) -> np.ndarray:
    """``stats``' document frequencies for the grams of ``sentences`` (0 for a gram no reference has), indexed
    by the table's gram id."""
    order = batch.table.orders[k - 1]
    grams = np.unique(order.gram[batch.table.rows(k, sentences)[0]])
    table = stats.df[k - 1]
    df = np.zeros(order.n_grams, np.int64)
    df[grams] = np.fromiter((table.get(g, 0) for g in batch.table.gram_names(k, grams)), np.int64, grams.size)
    return df


def _norms(batch: Batch, k: int, sentence_ids: np.ndarray, idf: np.ndarray) -> np.ndarray:
    """The tf-idf vector norm (order ``k``) of the sentence of each entry of ``sentence_ids``: squares summed
    in the order the sentence's grams occur (coco-caption's dictionary order), whatever the gram ids."""
    order = batch.table.orders[k - 1]
    sentences, inverse = np.unique(sentence_ids, return_inverse=True)
    rows, owner = batch.table.rows(k, sentences)
    weights = order.count[rows] * idf[order.gram[rows]]
    return np.sqrt(np.bincount(owner, weights=weights ** 2, minlength=sentences.size))[inverse.reshape(-1)]


def cider_d(batch: Batch, n: int = 4, sigma: float = 6.0, stats: CorpusStats | None = None) -> np.ndarray:
    """CIDEr-D of every item of an encoded batch; document frequencies from ``stats`` when given, else from
    the batch's own references."""
    table = batch.table
    n_pairs = batch.pair_item.size
    per_pair = np.zeros((n, n_pairs))
    # coco-caption's "length" is the number of bigrams of a sentence.
    n_bigrams = np.maximum(table.lengths - 1, 0)
    delta = (n_bigrams[batch.cand[batch.pair_item]] - n_bigrams[batch.pair_sent]).astype(np.float64)
    penalty = np.exp(-(delta ** 2) / (2 * sigma ** 2))
    log_docs = np.log(float(batch.n_items if stats is None else stats.n_docs))
    for k in range(1, n + 1):
        order = table.orders[k - 1]
        if stats is None:
            idf = log_docs - np.log(np.maximum(1.0, document_frequencies(batch, k)))
            # The references' norms depend on the references only: a cell's originals and corruptions share them.
            if ("norms", k) not in batch.refs.memo:
                batch.refs.memo[("norms", k)] = _norms(batch, k, batch.pair_sent, idf)
            ref_norms = batch.refs.memo[("norms", k)]
        else:
            sentences = np.unique(np.concatenate((batch.cand, batch.pair_sent)))
            idf = log_docs - np.log(np.maximum(1.0, _frequencies_from(stats, batch, sentences, k)))
            ref_norms = _norms(batch, k, batch.pair_sent, idf)
        denom = _norms(batch, k, batch.cand, idf)[batch.pair_item] * ref_norms
        # Each pair's dot product runs over the candidate's grams in order; a gram none of the item's
        # references has adds nothing (coco-caption adds exact zeros there), so those rows are dropped first.
        c_rows, c_item = table.rows(k, batch.cand)
        ref_keys, _ = batch.ref_max(k)
        shared = lookup(ref_keys, np.ones(ref_keys.size, bool), batch.reflist[c_item] << SHIFT | order.gram[c_rows],
                        missing=False)
        c_rows, c_item = c_rows[shared], c_item[shared]
        c_gram = order.gram[c_rows]
        c_idf = idf[c_gram]
        c_weight = order.count[c_rows] * c_idf
        # Every reference of the item gets the candidate's shared rows, in order.
        row_start = np.searchsorted(c_item, np.arange(batch.n_items))
        row_stop = np.searchsorted(c_item, np.arange(batch.n_items), side="right")
        picks, pair = expand_ranges(row_start[batch.pair_item], row_stop[batch.pair_item])
        ref_count = lookup(order.keys, order.key_count, batch.pair_sent[pair] << SHIFT | c_gram[picks])
        ref_weight = ref_count * c_idf[picks]
        dot = np.bincount(pair, weights=np.minimum(c_weight[picks], ref_weight) * ref_weight, minlength=n_pairs)
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
    forkable = True  # numpy over process-wide tables only
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
        return cider_d(encode(candidates, references, self._tokenizer), self.n, self.sigma)

    def corpus_stats(self, references: list[list[str]]) -> CorpusStats:
        # The candidates play no part in the document frequencies; a blank stands in for each.
        return corpus_stats(encode([""] * len(references), references, self._tokenizer), self.n)

    def _score_with_stats(self, candidates, references, stats: CorpusStats):
        return cider_d(encode(candidates, references, self._tokenizer), self.n, self.sigma, stats)
