"""N-gram counts shared by BLEU and CIDEr-D: every distinct sentence is tokenised and counted once per process.

A grid run scores 13,302 candidates against 5/10/20 references with six metrics, but holds only ~11,000
distinct sentences and ~500 reference pools. So the counting is done per distinct sentence, in a
process-wide :class:`SentenceTable` (one per tokenizer), whatever metric or batch asks: each sentence gets an
id, its tokens process-wide ids, and each of its n-grams (orders 1..4) a process-wide id per order. A batch
is then a few integer arrays pointing into the table (:class:`Batch`), and the metrics work on whole arrays
(``searchsorted`` joins, ``bincount`` reductions) instead of Python dictionaries.

Float sums over a sentence's grams always run in the order the grams first occur in the sentence (which is
coco-caption's dictionary order), never in id order: ids depend on what the process saw first, the order of
occurrence does not, so a score is bitwise the same in every process (a Dask worker, a long-lived dashboard).
"""
from __future__ import annotations

from collections import OrderedDict
from functools import lru_cache
from typing import Callable, Sequence

import numpy as np

MAX_N = 4
# (sentence id, gram id) and (prefix gram id, token id) are packed into one int64 key.
SHIFT = np.int64(32)
LOW = np.int64((1 << 32) - 1)

# One vocabulary per process: a word's id is its index in _WORDS.
_VOCAB: dict[str, int] = {}
_WORDS: list[str] = []


def _word_id(word: str) -> int:
    found = _VOCAB.get(word)
    if found is None:
        found = _VOCAB[word] = len(_WORDS)
        _WORDS.append(word)
    return found


@lru_cache(maxsize=500_000)
def token_ids(tokens: str, sep: str | None = None) -> np.ndarray:
    """Process-wide integer ids of a tokenised sentence's tokens (split on ``sep``, default whitespace)."""
    return np.fromiter(map(_word_id, tokens.split(sep)), np.int64)


def expand_ranges(starts: np.ndarray, stops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Concatenate ``arange(starts[i], stops[i])`` for all i; returns (indices, owner i of each index)."""
    sizes = stops - starts
    owner = np.repeat(np.arange(len(starts)), sizes)
    if owner.size == 0:
        return np.zeros(0, np.int64), owner
    offsets = np.cumsum(sizes) - sizes
    return starts[owner] + (np.arange(owner.size) - offsets[owner]), owner


def lookup(table_keys: np.ndarray, table_values: np.ndarray, keys: np.ndarray, missing=0) -> np.ndarray:
    """Values of ``keys`` in a table sorted by key; ``missing`` where absent."""
    if table_keys.size == 0:
        return np.full(keys.shape, missing, dtype=table_values.dtype)
    pos = np.minimum(np.searchsorted(table_keys, keys), table_keys.size - 1)
    return np.where(table_keys[pos] == keys, table_values[pos], missing)


_EMPTY = np.zeros(0, np.int64)


class _Growing:
    """An append-only int64 array with spare room (capacity doubles as it fills): adding a batch's sentences
    copies only them. A table fed one CIDEr-D cell at a time would otherwise copy all of its arrays at every
    cell. Views handed out earlier stay valid: appending writes only past their end, or into a new buffer."""

    __slots__ = ("_buffer", "_size")

    def __init__(self, initial: np.ndarray = _EMPTY):
        self._buffer = np.array(initial, np.int64)
        self._size = self._buffer.size

    @property
    def values(self) -> np.ndarray:
        return self._buffer[:self._size]

    def extend(self, more: np.ndarray) -> None:
        end = self._size + more.size
        if end > self._buffer.size:
            grown = np.empty(max(end, 2 * self._buffer.size), np.int64)
            grown[:self._size] = self._buffer[:self._size]
            self._buffer = grown
        self._buffer[self._size:end] = more
        self._size = end


class Order:
    """The counts of one n-gram order for every sentence of a table.

    Rows of sentence ``s`` are ``starts[s]:starts[s+1]`` of ``gram``/``count``, in the order the grams first
    occur in it. ``keys``/``key_count`` hold the same counts sorted by ``s << 32 | gram`` for lookups (sentence
    ids only grow, so appending a new sentence block keeps them sorted).
    """

    def __init__(self):
        self._starts = _Growing(np.zeros(1, np.int64))
        self._gram, self._count, self._keys, self._key_count = _Growing(), _Growing(), _Growing(), _Growing()
        # Gram g (order > 1) is its first k-1 tokens' gram prefix[g] followed by token last[g]: how a gram
        # is named outside this process (gram_names). The known (prefix << 32 | last) combinations, sorted, and
        # their gram ids: numbering a batch's combinations is then a few array operations.
        self.combos = self.combo_ids = _EMPTY
        self._prefix, self._last = _Growing(), _Growing()

    starts = property(lambda self: self._starts.values)
    gram = property(lambda self: self._gram.values)
    count = property(lambda self: self._count.values)
    keys = property(lambda self: self._keys.values)
    key_count = property(lambda self: self._key_count.values)
    prefix = property(lambda self: self._prefix.values)
    last = property(lambda self: self._last.values)

    @property
    def n_grams(self) -> int:
        return self.combos.size if self.combos.size else len(_WORDS)

    def number(self, combos: np.ndarray) -> np.ndarray:
        """Gram ids of sorted, distinct combinations; the unknown ones are numbered after the known ones, in
        their sorted order, and remembered."""
        pos = np.searchsorted(self.combos, combos)
        found = np.zeros(combos.size, bool)
        inside = pos < self.combos.size
        found[inside] = self.combos[pos[inside]] == combos[inside]
        gram_of = np.empty(combos.size, np.int64)
        gram_of[found] = self.combo_ids[pos[found]]
        fresh = ~found
        gram_of[fresh] = self.combos.size + np.arange(np.count_nonzero(fresh))
        # Inserting each new combination before its sorted position keeps ``combos`` sorted.
        self.combos = np.insert(self.combos, pos[fresh], combos[fresh])
        self.combo_ids = np.insert(self.combo_ids, pos[fresh], gram_of[fresh])
        self._prefix.extend(combos[fresh] >> SHIFT)
        self._last.extend(combos[fresh] & LOW)
        return gram_of


class SentenceTable:
    """Token ids and n-gram counts of every distinct sentence this process has scored, for one tokenizer."""

    def __init__(self, tokenize: Callable[[str], str] | None):
        self.tokenize = tokenize
        self.index: dict[str, int] = {}
        self._lengths = _Growing()
        self.orders = [Order() for _ in range(MAX_N)]

    @property
    def lengths(self) -> np.ndarray:
        """Token count of each sentence, by sentence id."""
        return self._lengths.values

    def ids(self, sentences: Sequence[str]) -> np.ndarray:
        """The table's ids of ``sentences``, counting the ones it has not seen."""
        index = self.index
        new = [s for s in dict.fromkeys(sentences) if s not in index]
        if new:
            self._add(new)
        return np.fromiter(map(index.__getitem__, sentences), np.int64, len(sentences))

    def _add(self, sentences: list[str]) -> None:
        first_id = len(self.index)
        for i, s in enumerate(sentences):
            self.index[s] = first_id + i
        tokenize = self.tokenize
        arrays = [token_ids(tokenize(s) if tokenize else s) for s in sentences]
        lengths = np.fromiter(map(len, arrays), np.int64, len(arrays))
        self._lengths.extend(lengths)
        ids = np.concatenate(arrays) if arrays else _EMPTY
        sent_of = np.repeat(np.arange(first_id, first_id + len(arrays)), lengths)
        keys = ids  # id of the gram of the current order starting at each position (-1: none)
        for k, order in enumerate(self.orders, start=1):
            if k > 1:
                m = max(ids.size - k + 1, 0)
                valid = (sent_of[:m] == sent_of[k - 1:k - 1 + m]) & (keys[:m] >= 0)
                combos, inverse = np.unique((keys[:m] << SHIFT | ids[k - 1:k - 1 + m])[valid], return_inverse=True)
                keys = np.full(m, -1, np.int64)
                keys[valid] = order.number(combos)[inverse.reshape(-1)]
            pos = np.flatnonzero(keys >= 0)
            packed = sent_of[pos] << SHIFT | keys[pos]
            uniq, first, counts = np.unique(packed, return_index=True, return_counts=True)
            order._keys.extend(uniq)
            order._key_count.extend(counts)
            # Sentences are contiguous and in id order, so sorting by position of first occurrence sorts by
            # (sentence, first occurrence).
            by_occurrence = np.argsort(pos[first], kind="stable")
            order._gram.extend((uniq & LOW)[by_occurrence])
            order._count.extend(counts[by_occurrence])
            per_sentence = np.bincount((uniq >> SHIFT) - first_id, minlength=len(sentences))
            order._starts.extend(order.starts[-1] + np.cumsum(per_sentence))

    def rows(self, k: int, sentences: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Count rows of order ``k`` of each of ``sentences`` (by occurrence): (row indices, owner index)."""
        starts = self.orders[k - 1].starts
        return expand_ranges(starts[sentences], starts[sentences + 1])

    def gram_names(self, k: int, grams: np.ndarray) -> list[str]:
        """Process-independent names of grams of order ``k`` (their tokens joined by a separator): what two
        processes (a Dask client and its workers) can agree on."""
        if k == 1:
            return [_WORDS[g] for g in grams.tolist()]
        order = self.orders[k - 1]
        heads = self.gram_names(k - 1, order.prefix[grams])
        return [h + _GRAM_SEP + _WORDS[t] for h, t in zip(heads, order.last[grams].tolist())]


_GRAM_SEP = "\x1f"
_TABLES: dict[object, SentenceTable] = {}
# A long-lived process (the dashboard) starts a fresh table past this many sentences: a table holds ~2 KB
# per sentence, and the 55,000 distinct sentences of MUTT, SICK and Flickr8k fit.
_MAX_SENTENCES = 100_000


def table_for(tokenize: Callable[[str], str] | None) -> SentenceTable:
    """The process's sentence table for a tokenizer (None: sentences are already tokenised)."""
    table = _TABLES.get(tokenize)
    if table is None or len(table.index) > _MAX_SENTENCES:
        # Remembered batches hold ids of the old table.
        _RECENT.clear()
        _RECENT_REFS.clear()
        table = _TABLES[tokenize] = SentenceTable(tokenize)
    return table


class References:
    """The reference lists of a batch, as sentence ids of a table.

    Pairs are (item, reference) combinations, contiguous per item. Items with the same reference list share
    it (``reflist``): per-list statistics (a gram's maximum count over the references, whether a list holds
    a gram) are computed once per distinct list, not once per item; and batches with the same lists (a grid
    scores its originals and its corruptions against the same references) share this object.
    """

    def __init__(self, table: SentenceTable, references: Sequence[Sequence[str]]):
        self.table = table
        self.refs_per_item = np.fromiter(map(len, references), np.int64, len(references))
        self.pair_sent = table.ids([r for refs in references for r in refs])
        self.pair_item = np.repeat(np.arange(len(references)), self.refs_per_item)
        lists: dict[tuple[str, ...], int] = {}
        self.reflist = np.fromiter((lists.setdefault(tuple(refs), len(lists)) for refs in references), np.int64,
                                   len(references))
        self.n_reflists = len(lists)
        self._ref_max: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self.memo: dict[object, object] = {}  # results that depend on the references only (CIDEr-D's df)

    def ref_max(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Per distinct reference list, the maximum count of each gram of order ``k`` over its references:
        (keys ``reflist << 32 | gram``, sorted; maximum counts)."""
        if k not in self._ref_max:
            # The references of a list are those of its first item.
            first_item = np.full(self.n_reflists, -1, np.int64)
            first_item[self.reflist[::-1]] = np.arange(self.reflist.size)[::-1]
            pair_start = (np.cumsum(self.refs_per_item) - self.refs_per_item)[first_item]
            pairs, owner = expand_ranges(pair_start, pair_start + self.refs_per_item[first_item])
            order = self.table.orders[k - 1]
            rows, pair = self.table.rows(k, self.pair_sent[pairs])
            keys = owner[pair] << SHIFT | order.gram[rows]
            by_key = np.argsort(keys, kind="stable")
            keys, counts = keys[by_key], order.count[rows][by_key]
            if keys.size:
                starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
                counts, keys = np.maximum.reduceat(counts, starts), keys[starts]
            self._ref_max[k] = (keys, counts)
        return self._ref_max[k]


class Batch:
    """Candidates with their :class:`References`, as sentence ids of a table; items are candidates."""

    def __init__(self, table: SentenceTable, candidates: Sequence[str], refs: References):
        self.table = table
        self.refs = refs
        self.cand = table.ids(candidates)
        self.pair_item, self.pair_sent, self.refs_per_item = refs.pair_item, refs.pair_sent, refs.refs_per_item
        self.reflist, self.n_reflists, self.ref_max = refs.reflist, refs.n_reflists, refs.ref_max
        self.memo: dict[object, object] = {}  # per-batch results a metric reuses (BLEU's clipped counts)

    @property
    def n_items(self) -> int:
        return len(self.cand)

    @property
    def lengths(self) -> np.ndarray:
        return self.table.lengths


def encode(candidates: Sequence[str], references: Sequence[Sequence[str]],
           tokenize: Callable[[str], str] | None = None) -> Batch:
    """A batch over the process's sentence table for ``tokenize`` (None: split sentences as they are).

    The last few batches and reference lists are remembered, so BLEU-1..4 and CIDEr-D scoring the same
    batches one metric after the other (the runner hands a sentence-level metric its misses in one or two
    jobs), and the originals and corruptions of a cell, share their ids and per-list statistics.
    """
    table = table_for(tokenize)
    refs_key = (tuple(map(tuple, references)), tokenize)
    refs = _remember(_RECENT_REFS, refs_key, lambda: References(table, references))
    return _remember(_RECENT, (tuple(candidates), refs_key), lambda: Batch(table, candidates, refs))


def _remember(recent: OrderedDict, key, make):
    found = recent.get(key)
    if found is not None:
        recent.move_to_end(key)
        return found
    found = recent[key] = make()
    while len(recent) > _RECENT_SIZE:
        recent.popitem(last=False)
    return found


_RECENT: OrderedDict = OrderedDict()
_RECENT_REFS: OrderedDict = OrderedDict()
_RECENT_SIZE = 4  # the runner's parallel split makes at most `workers` jobs per metric
