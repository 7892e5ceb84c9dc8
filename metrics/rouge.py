"""ROUGE-L per sentence, exactly as coco-caption's ``Rouge`` scorer computes it.

Lin (2004): the longest common subsequence (LCS) between candidate and each reference gives a precision
and a recall; coco-caption takes the maximum precision and the maximum recall over the references
(separately) and combines them in an F-measure with beta = 1.2.

The LCS lengths of all (candidate, reference) pairs are computed at once with the bit-parallel LCS
algorithm (Allison & Dix 1986; Hyyrö 2004) on 64-bit words: one pass over the candidate's tokens,
a few integer operations per pair and token. References longer than 63 tokens use Python integers.
"""
from __future__ import annotations

import numpy as np

from muttlab.metrics.base import Metric
from muttlab.metrics.ngrams import token_ids
from muttlab.metrics.tokenize import tokenizer

BETA = 1.2
_WORD = 63  # reference tokens that fit in one uint64 without overflow of V + U
_CHUNK = 20_000


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


def _pad(arrays: list[np.ndarray], lengths: np.ndarray, width: int, fill: int) -> np.ndarray:
    """Ragged token-id arrays as rows of a (len(arrays), width) matrix, padded with ``fill``."""
    out = np.full((len(arrays), width), fill, np.int64)
    row = np.repeat(np.arange(len(arrays)), lengths)
    col = np.arange(row.size) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    out[row, col] = np.concatenate(arrays)
    return out


def _coco_ids(sentence: str) -> np.ndarray:
    # coco-caption splits on single spaces; for normally spaced text that equals a whitespace split,
    # whose ids are already cached by the n-gram metrics.
    normal = sentence and "  " not in sentence and sentence == sentence.strip()
    return token_ids(sentence) if normal else token_ids(sentence, " ")


def lcs_lengths(cands: list[np.ndarray], refs: list[np.ndarray]) -> np.ndarray:
    """LCS length of each (candidate, reference) pair of token-id arrays."""
    n = len(cands)
    out = np.zeros(n, np.int64)
    c_len = np.fromiter((len(c) for c in cands), np.int64, n)
    r_len = np.fromiter((len(r) for r in refs), np.int64, n)
    long = np.flatnonzero(r_len > _WORD)
    for i in long:
        out[i] = _lcs_bigint(cands[i].tolist(), refs[i].tolist())
    short = np.flatnonzero(r_len <= _WORD)
    short = short[np.argsort(c_len[short], kind="stable")]  # similar lengths share a chunk: less padding
    for start in range(0, short.size, _CHUNK):
        idx = short[start:start + _CHUNK]
        lc, lr = int(c_len[idx].max(initial=0)), int(r_len[idx].max(initial=0))
        if lc == 0 or lr == 0:
            continue
        cpad = _pad([cands[i] for i in idx], c_len[idx], lc, -1)
        rpad = _pad([refs[i] for i in idx], r_len[idx], lr, -2)
        bits = np.left_shift(np.uint64(1), np.arange(lr, dtype=np.uint64))
        # masks[p, j]: bit i set where reference token i equals candidate token j.
        masks = np.bitwise_or.reduce(np.where(cpad[:, :, None] == rpad[:, None, :], bits, np.uint64(0)), axis=2)
        full = np.left_shift(np.uint64(1), r_len[idx].astype(np.uint64)) - np.uint64(1)
        v = full.copy()
        for j in range(lc):
            u = v & masks[:, j]
            v = np.where(j < c_len[idx], ((v + u) | (v - u)) & full, v)
        out[idx] = r_len[idx] - np.bitwise_count(v).astype(np.int64)
    return out


def rouge_l(candidates: list[str], references: list[list[str]], beta: float = BETA) -> np.ndarray:
    """coco-caption's ROUGE-L for already tokenised, space-separated sentences."""
    cand_ids = [_coco_ids(c) for c in candidates]
    ref_ids = {r: _coco_ids(r) for refs in references for r in dict.fromkeys(refs)}
    pair_item = np.repeat(np.arange(len(candidates)), [len(r) for r in references])
    pair_refs = [ref_ids[r] for refs in references for r in refs]
    lcs = lcs_lengths([cand_ids[i] for i in pair_item], pair_refs).astype(np.float64)
    c_len = np.array([len(c) for c in cand_ids], np.float64)[pair_item]
    r_len = np.array([len(r) for r in pair_refs], np.float64)
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
    version = "1"
    description = "longest-common-subsequence F-measure against the best-matching references"

    def __init__(self, beta: float = BETA, tokenize: str = "ptb"):
        self.beta = beta
        self.tokenize = tokenize
        self._tokenizer = tokenizer(tokenize)

    def params(self) -> dict[str, object]:
        return {"beta": self.beta, "tok": self.tokenize}

    def _score(self, candidates, references):
        tok = self._tokenizer
        if tok is not None:
            candidates = [tok(c) for c in candidates]
            references = [[tok(r) for r in refs] for refs in references]
        return rouge_l(candidates, references, self.beta)
