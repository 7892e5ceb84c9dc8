"""ROUGE-L per sentence, exactly as coco-caption's ``Rouge`` scorer computes it.

Lin (2004): the longest common subsequence (LCS) between candidate and each reference gives a precision
and a recall; coco-caption takes the maximum precision and the maximum recall over the references
(separately) and combines them in an F-measure with beta = 1.2.

The LCS lengths of all (candidate, reference) pairs are computed at once with the bit-parallel LCS
algorithm (Allison & Dix 1986; Hyyrö 2004) on 64-bit words: one pass over the candidate's tokens,
a few integer operations per pair and token. References longer than 63 tokens use Python integers.
"""
from __future__ import annotations

from itertools import chain
from typing import Callable

import numpy as np

from muttlab.metrics.base import Metric
from muttlab.metrics.ngrams import LOW, SHIFT, lookup, token_ids
from muttlab.metrics.tokenize import tokenizer

BETA = 1.2
_WORD = 63  # reference tokens that fit in one uint64 without overflow of V + U


def _lcs_bigint(cand: list[int], ref: list[int]) -> int:
    masks: dict[int, int] = {}
    for i, t in enumerate(ref):
        masks[t] = masks.get(t, 0) | (1 << i)
    full = (1 << len(ref)) - 1
    v = full
    for t in cand:
        u = v & masks.get(t, 0)
        v = ((v + u) | (v - u)) & full
    return len(ref) - bin(v).count("1")


def _coco_ids(sentence: str) -> np.ndarray:
    # coco-caption splits on single spaces; for normally spaced text that equals a whitespace split,
    # whose ids are already cached by the n-gram metrics.
    normal = sentence and "  " not in sentence and sentence == sentence.strip()
    return token_ids(sentence) if normal else token_ids(sentence, " ")


def _position_masks(sentences: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """For each (sentence, token) the bit mask of the token's positions in the sentence (sentences of at
    most 63 tokens): (keys ``sentence << 32 | token``, sorted; masks)."""
    lengths = np.fromiter(map(len, sentences), np.int64, len(sentences))
    if not lengths.sum():
        return np.zeros(0, np.int64), np.zeros(0, np.uint64)
    owner = np.repeat(np.arange(len(sentences)), lengths)
    position = np.arange(owner.size) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    keys = owner << SHIFT | np.concatenate(sentences)
    by_key = np.argsort(keys, kind="stable")
    keys, bits = keys[by_key], np.left_shift(np.uint64(1), position[by_key].astype(np.uint64))
    starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
    return keys[starts], np.bitwise_or.reduceat(bits, starts)


def lcs_lengths(cands: list[np.ndarray], refs: list[np.ndarray]) -> np.ndarray:
    """LCS length of each (candidate, reference) pair of token-id arrays."""
    n = len(cands)
    out = np.zeros(n, np.int64)
    c_len = np.fromiter(map(len, cands), np.int64, n)
    r_len = np.fromiter(map(len, refs), np.int64, n)
    for i in np.flatnonzero(r_len > _WORD):
        out[i] = _lcs_bigint(cands[i].tolist(), refs[i].tolist())
    short = np.flatnonzero(r_len <= _WORD)
    # Longest candidates first: at candidate position j only the first `active[j]` pairs have a token left.
    short = short[np.argsort(-c_len[short], kind="stable")]
    lc = int(c_len[short].max(initial=0))
    if lc == 0:
        return out
    # One mask table per distinct reference (the same array object, as rouge_l passes them), not per pair.
    distinct: dict[int, int] = {}
    ref_of_pair = np.fromiter((distinct.setdefault(id(refs[i]), len(distinct)) for i in short.tolist()), np.int64,
                              short.size)
    by_id = {id(r): r for r in refs}
    mask_keys, masks = _position_masks([by_id[key] for key in distinct])
    tokens = np.full((short.size, lc), -1, np.int64)  # candidate tokens, padded
    rows = np.repeat(np.arange(short.size), c_len[short])
    cols = np.arange(rows.size) - np.repeat(np.cumsum(c_len[short]) - c_len[short], c_len[short])
    tokens[rows, cols] = np.concatenate([cands[i] for i in short])
    active = np.searchsorted(-c_len[short], -np.arange(lc), side="left")  # pairs with c_len > j
    full = np.left_shift(np.uint64(1), r_len[short].astype(np.uint64)) - np.uint64(1)
    v = full.copy()
    pair_key = ref_of_pair << SHIFT
    for j in range(lc):
        a = active[j]
        m = lookup(mask_keys, masks, pair_key[:a] | tokens[:a, j], missing=np.uint64(0))
        u = v[:a] & m
        v[:a] = ((v[:a] + u) | (v[:a] - u)) & full[:a]
    out[short] = r_len[short] - np.bitwise_count(v).astype(np.int64)
    return out


def rouge_l(candidates: list[str], references: list[list[str]], beta: float = BETA,
            tokenize: Callable[[str], str] | None = None) -> np.ndarray:
    """coco-caption's ROUGE-L; sentences tokenised by ``tokenize`` (None: already tokenised, space-separated)."""
    # Each distinct sentence is tokenised once and the LCS computed once per distinct (candidate, reference)
    # pair: a grid repeats them across reference counts (the first 5 references are also among the first 10
    # and 20). Ids are numbered with C-level dict and map calls: a grid has ~170,000 sentences to number.
    flat = list(chain.from_iterable(references))
    sentence_ids = {s: i for i, s in enumerate(dict.fromkeys(chain(candidates, flat)))}
    cand_sid = np.fromiter(map(sentence_ids.__getitem__, candidates), np.int64, len(candidates))
    ref_sid = np.fromiter(map(sentence_ids.__getitem__, flat), np.int64, len(flat))
    ids = [_coco_ids(tokenize(s) if tokenize else s) for s in sentence_ids]
    lengths = np.fromiter(map(len, ids), np.int64, len(ids)).astype(np.float64)
    pair_item = np.repeat(np.arange(len(candidates)), np.fromiter(map(len, references), np.int64, len(references)))
    distinct, pair_of = np.unique(cand_sid[pair_item] << SHIFT | ref_sid, return_inverse=True)
    lcs = lcs_lengths([ids[i] for i in (distinct >> SHIFT).tolist()],
                      [ids[i] for i in (distinct & LOW).tolist()]).astype(np.float64)[pair_of.reshape(-1)]
    c_len = lengths[cand_sid][pair_item]
    r_len = lengths[ref_sid]
    prec = np.zeros(len(candidates))
    rec = np.zeros(len(candidates))
    np.maximum.at(prec, pair_item, lcs / c_len)
    np.maximum.at(rec, pair_item, lcs / r_len)
    with np.errstate(divide="ignore", invalid="ignore"):
        score = (1 + beta ** 2) * prec * rec / (rec + beta ** 2 * prec)
    return np.where((prec != 0) & (rec != 0), score, 0.0)


class RougeL(Metric):
    """ROUGE-L (Lin 2004), coco-caption's per-sentence variant (max precision, max recall, beta 1.2)."""

    name = "ROUGE-L"
    score_range = (0.0, 1.0)
    # Vectorised over the whole batch: splitting it across worker processes costs more than it saves.
    parallel = False
    forkable = True  # numpy over process-wide tables only
    version = "1"
    description = "longest-common-subsequence F-measure against the best-matching references"

    def __init__(self, beta: float = BETA, tokenize: str = "ptb"):
        self.beta = beta
        self.tokenize = tokenize
        self._tokenizer = tokenizer(tokenize)

    def params(self) -> dict[str, object]:
        return {"beta": self.beta, "tok": self.tokenize}

    def _score(self, candidates, references):
        return rouge_l(candidates, references, self.beta, self._tokenizer)
