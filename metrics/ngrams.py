"""Vectorised n-gram statistics shared by BLEU and CIDEr-D.

A batch (candidates with their reference lists) is encoded once: every distinct sentence becomes a row of
integer token ids, every distinct n-gram of each order an integer id, and per-sentence n-gram counts are
sorted arrays. The metrics then work on whole arrays (join candidate and reference n-grams with
``searchsorted``, reduce per item with ``bincount``/``reduceat``) instead of Python dictionaries.
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Sequence

import numpy as np

# One vocabulary per process: a sentence's token ids are computed once and reused by every metric and batch.
_VOCAB: dict[str, int] = {}


@dataclass(frozen=True)
class Counts:
    """Counts of one n-gram order for the distinct sentences, sorted by (sentence, gram)."""

    sentence: np.ndarray  # int64, sentence index of each row
    gram: np.ndarray  # int64, n-gram id (dense within the order)
    count: np.ndarray  # int64
    n_grams: int  # number of distinct n-grams of this order
    starts: np.ndarray  # rows of sentence s are starts[s]:starts[s+1]
    first: np.ndarray  # int64, position of the gram's first occurrence in its sentence
    # How gram g of this order is built: the id of its first k-1 tokens' gram and its last token id
    # (None for order 1, where the gram id is the token id). Lets a gram be named outside this process.
    prefix: np.ndarray | None = None
    last: np.ndarray | None = None


@dataclass(frozen=True)
class Batch:
    """A batch of candidates and references, encoded for n-gram statistics.

    Items are candidates; pairs are (item, reference) combinations, contiguous per item.
    """

    lengths: np.ndarray  # tokens per distinct sentence
    cand: np.ndarray  # sentence index of each item's candidate
    pair_item: np.ndarray  # item of each pair
    pair_sent: np.ndarray  # sentence index of each pair's reference
    refs_per_item: np.ndarray
    orders: list[Counts]  # orders[k-1] for k = 1..max_n
    tokens: tuple[str, ...] = ()  # the batch's words; a unigram's id is its index here (sorted by text)

    @property
    def n_items(self) -> int:
        return len(self.cand)


def expand_ranges(starts: np.ndarray, stops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Concatenate ``arange(starts[i], stops[i])`` for all i; returns (indices, owner i of each index)."""
    sizes = stops - starts
    owner = np.repeat(np.arange(len(starts)), sizes)
    if owner.size == 0:
        return np.zeros(0, np.int64), owner
    offsets = np.cumsum(sizes) - sizes
    return starts[owner] + (np.arange(owner.size) - offsets[owner]), owner


@lru_cache(maxsize=500_000)
def token_ids(tokens: str, sep: str | None = None) -> np.ndarray:
    """Process-wide integer ids of a tokenised sentence's tokens (split on ``sep``, default whitespace)."""
    return np.fromiter((_VOCAB.setdefault(w, len(_VOCAB)) for w in tokens.split(sep)), np.int64)


def encode(candidates: Sequence[str], references: Sequence[Sequence[str]], max_n: int,
           tokenize: Callable[[str], str] | None = None) -> Batch:
    """Encode a batch. ``tokenize`` maps each sentence to space-separated tokens (None: split as is).

    The last few batches are remembered, so BLEU-1..4 and CIDEr-D scoring the same batches one metric after
    the other (the runner hands a sentence-level metric its misses in one or two jobs) encode them once.
    """
    key = (tuple(candidates), tuple(map(tuple, references)), tokenize)
    cached = _RECENT.get(key)
    if cached is not None and cached[0] >= max_n:
        _RECENT.move_to_end(key)
        return cached[1]
    order = max(max_n, _MEMO_ORDER)
    batch = _encode(candidates, references, order, tokenize)
    _RECENT[key] = (order, batch)
    while len(_RECENT) > _RECENT_SIZE:
        _RECENT.popitem(last=False)
    return batch


_RECENT: OrderedDict = OrderedDict()
_RECENT_SIZE = 4  # the runner's parallel split makes at most `workers` jobs per metric
_MEMO_ORDER = 4  # encode up to 4-grams once so that every BLEU-n and CIDEr-D can reuse the batch


def _encode(candidates, references, max_n, tokenize) -> Batch:
    index: dict[str, int] = {}
    cand = np.fromiter((index.setdefault(c, len(index)) for c in candidates), np.int64, len(candidates))
    refs_per_item = np.fromiter((len(r) for r in references), np.int64, len(references))
    pair_sent = np.fromiter((index.setdefault(r, len(index)) for refs in references for r in refs), np.int64,
                            int(refs_per_item.sum()))
    pair_item = np.repeat(np.arange(len(references)), refs_per_item)
    arrays = [token_ids(tokenize(s) if tokenize else s) for s in index]
    lengths = np.fromiter((a.size for a in arrays), np.int64, len(arrays))
    ids = np.concatenate(arrays) if arrays else np.zeros(0, np.int64)
    sent_of = np.repeat(np.arange(len(arrays)), lengths)
    # Process-wide token ids follow the order in which this process first saw each word. Re-number the
    # batch's words by their text, so that a sentence's n-grams (and the float sums over them) come in the
    # same order in every process: a cell scored on a Dask worker, or after other batches, is bitwise equal.
    present, local = np.unique(ids, return_inverse=True)
    words = list(_VOCAB)  # insertion order is id order
    texts = [words[i] for i in present.tolist()]
    by_text = sorted(range(len(texts)), key=texts.__getitem__)
    rank = np.empty(len(texts), np.int64)
    rank[by_text] = np.arange(len(texts))
    tokens = tuple(texts[i] for i in by_text)
    return Batch(lengths, cand, pair_item, pair_sent, refs_per_item,
                 _count_orders(rank[local].reshape(-1), sent_of, len(arrays), max(len(tokens), 1), max_n), tokens)


def _count_orders(ids: np.ndarray, sent_of: np.ndarray, n_sent: int, vocab: int, max_n: int) -> list[Counts]:
    total = ids.size
    orders = []
    sentence_start = np.searchsorted(sent_of, np.arange(n_sent))
    keys = ids  # dense ids of the n-gram starting at each position (order 1: the token itself)
    for k in range(1, max_n + 1):
        prefix = last = None
        if k > 1:
            m = max(total - k + 1, 0)
            valid = (sent_of[:m] == sent_of[k - 1:k - 1 + m]) & (keys[:m] >= 0)
            combo = keys[:m] * vocab + ids[k - 1:k - 1 + m]
            new = np.full(m, -1, np.int64)
            uniq, inverse = np.unique(combo[valid], return_inverse=True)
            new[valid] = inverse
            keys, n_grams = new, len(uniq)
            prefix, last = np.divmod(uniq, vocab)
        else:
            n_grams = vocab
        pos = np.flatnonzero(keys >= 0)
        pair = sent_of[pos] * n_grams + keys[pos]
        uniq, first, counts = np.unique(pair, return_index=True, return_counts=True)
        sentence, gram = np.divmod(uniq, n_grams) if n_grams else (uniq, uniq)
        starts = np.searchsorted(sentence, np.arange(n_sent + 1))
        # Float sums over a sentence's grams are taken in the order the grams first occur in it, which is the
        # same in every run and process (and is coco-caption's order).
        first = pos[first] - sentence_start[sentence]
        orders.append(Counts(sentence, gram, counts, n_grams, starts, first, prefix, last))
    return orders


def gram_names(batch: Batch, k: int, grams: np.ndarray) -> list[str]:
    """Process-independent names of n-grams of order ``k`` (their tokens joined by a separator).

    Gram ids are dense within one batch; a name is what two batches, or two processes (a Dask client and
    its workers), can agree on.
    """
    words = batch.tokens
    if k == 1:
        return [words[g] for g in grams.tolist()]
    order = batch.orders[k - 1]
    heads = gram_names(batch, k - 1, order.prefix[grams])
    return [h + _GRAM_SEP + words[t] for h, t in zip(heads, order.last[grams].tolist())]


_GRAM_SEP = "\x1f"


def item_rows(counts: Counts, sentence_of_item: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of ``counts`` for each item's sentence: (row indices, item of each row)."""
    return expand_ranges(counts.starts[sentence_of_item], counts.starts[sentence_of_item + 1])


def lookup(table_keys: np.ndarray, table_values: np.ndarray, keys: np.ndarray, missing=0) -> np.ndarray:
    """Values of ``keys`` in a table sorted by key; ``missing`` where absent."""
    if table_keys.size == 0:
        return np.full(keys.shape, missing, dtype=table_values.dtype)
    pos = np.minimum(np.searchsorted(table_keys, keys), table_keys.size - 1)
    return np.where(table_keys[pos] == keys, table_values[pos], missing)
