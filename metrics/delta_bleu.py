"""ΔBLEU: BLEU with human-weighted references (Galley et al., ACL 2015, "deltaBLEU", §3).

Each reference ``r_ij`` of segment ``i`` carries a weight ``w_ij`` in [-1, 1]. The modified n-gram precision
of the paper (§3, eq. 2) is

    p_n = Σ_i Σ_{g ∈ ngrams(h_i)} max_{j: g ∈ r_ij} w_ij · #_g(h_i, r_ij)
          ---------------------------------------------------------------
          Σ_i Σ_{g ∈ ngrams(h_i)} max_j w_ij · #_g(h_i)

where ``#_g(h, r) = min(count of g in h, count of g in r)`` and ``#_g(h)`` is the count of g in h. An n-gram
found in no reference contributes 0 to the numerator (the max over an empty set); one found only in
negatively weighted references contributes a negative amount, which is how ΔBLEU penalises a hypothesis for
resembling a bad reference. The denominator is ``max_j w_ij`` times the number of hypothesis n-grams. The
brevity penalty uses the effective reference length of BLEU (the reference length closest to the
hypothesis length, ties to the shorter one), taken over the positively weighted references only, since the
paper assumes every segment has one (segments without are rejected). With every weight equal to 1 all of
this is exactly BLEU (Papineni et al. 2002), which the tests check against sacrebleu.

Everything is kept as sufficient statistics per segment (:func:`segment_stats`), so any subset of segments
— an observation unit of the paper's correlation study (§5) — is scored by summing rows and calling
:func:`corpus_bleu`, with no re-tokenisation.
"""
from __future__ import annotations

import math
from collections import Counter
from typing import ClassVar, Sequence

import numpy as np

from muttlab.metrics.base import Metric, MetricError
from muttlab.metrics.tokenize import tokenizer

WeightedRef = tuple[str, float]

MAX_N = 4
SMOOTHING = ("add-one", "none")


def _ngrams(tokens: list[str], n: int) -> Counter:
    return Counter(zip(*(tokens[i:] for i in range(n))))


def _all_ngrams(tokens: list[str], max_n: int) -> Counter:
    counts: Counter = Counter()
    for n in range(1, max_n + 1):
        counts.update(zip(*(tokens[i:] for i in range(n))))
    return counts


def _closest_length(hyp_len: int, ref_lens: Sequence[int]) -> int:
    # BLEU's "closest reference length", ties broken towards the shorter reference (as sacrebleu).
    return min(ref_lens, key=lambda r: (abs(hyp_len - r), r))


def _check_segment(i: int, refs: Sequence[WeightedRef]) -> None:
    if not refs:
        raise MetricError(f"ΔBLEU: segment {i} has no references; give it at least one positively weighted one")
    for ref in refs:
        if not (isinstance(ref, (tuple, list)) and len(ref) == 2 and isinstance(ref[0], str)):
            raise MetricError(f"ΔBLEU: segment {i}: each reference must be a (text, weight) pair, got {ref!r:.80}")
        w = float(ref[1])
        if not (-1.0 <= w <= 1.0) or math.isnan(w):
            raise MetricError(f"ΔBLEU: segment {i}: reference weight {w} is outside [-1, 1]")
    if max(float(w) for _, w in refs) <= 0:
        raise MetricError(f"ΔBLEU: segment {i} has no reference with a positive weight; ΔBLEU (Galley et al. "
                          "2015, §3) assumes at least one per segment — add one or drop the segment")


def segment_stats(hypotheses: Sequence[str], references: Sequence[Sequence[WeightedRef]],
                  max_n: int = MAX_N) -> np.ndarray:
    """Sufficient statistics of ΔBLEU for each segment.

    Text is split on whitespace (pass already tokenised text); case is kept.

    Args:
      hypotheses: one string per segment.
      references: per segment, a list of ``(reference, weight)`` pairs, weights in [-1, 1], at least one > 0.
      max_n: highest n-gram order.
    Returns:
      float64 array of shape ``(n_segments, 2 * max_n + 2)``: columns ``0..max_n-1`` are the weighted
      clipped match numerators of p_1..p_max_n, columns ``max_n..2*max_n-1`` their denominators, then the
      hypothesis length and the effective reference length. Sum rows and pass to :func:`corpus_bleu`.
    Raises:
      MetricError: lengths differ, a weight is outside [-1, 1], or a segment has no positive weight.
    """
    if len(hypotheses) != len(references):
        raise MetricError(f"ΔBLEU: {len(hypotheses)} hypotheses but {len(references)} reference lists")
    stats = np.zeros((len(hypotheses), 2 * max_n + 2), dtype=np.float64)
    # Segments often share references (a trial's original and corruption), so count each text once.
    ref_cache: dict[str, tuple[int, Counter]] = {}
    for i, (hyp, refs) in enumerate(zip(hypotheses, references)):
        _check_segment(i, refs)
        hyp_toks = hyp.split()
        weights = [float(w) for _, w in refs]
        max_w = max(weights)
        # All orders in one Counter (keys are tuples of length n), so each reference is counted once and
        # only the n-grams it shares with the hypothesis (a C-level set intersection) are visited.
        hyp_counts = _all_ngrams(hyp_toks, max_n)
        hyp_keys = hyp_counts.keys()
        best: dict[tuple, float] = {}
        ref_lens = []
        for (ref, _), w in zip(refs, weights):
            cached = ref_cache.get(ref)
            if cached is None:
                toks = ref.split()
                cached = ref_cache[ref] = (len(toks), _all_ngrams(toks, max_n))
            ref_len, ref_counts = cached
            if w > 0:
                ref_lens.append(ref_len)
            for g in hyp_keys & ref_counts.keys():
                c, rc = hyp_counts[g], ref_counts[g]
                value = w * (c if c < rc else rc)
                if value > best.get(g, -math.inf):
                    best[g] = value
        row = stats[i]
        for g, value in best.items():
            row[len(g) - 1] += value
        for n in range(1, max_n + 1):
            row[max_n + n - 1] = max_w * max(0, len(hyp_toks) - n + 1)
        row[2 * max_n] = len(hyp_toks)
        row[2 * max_n + 1] = _closest_length(len(hyp_toks), ref_lens)
    return stats


def _bleu_from(numerators: np.ndarray, denominators: np.ndarray, hyp_len: float, ref_len: float) -> float:
    if hyp_len <= 0 or np.any(denominators <= 0) or np.any(numerators <= 0):
        # As in BLEU, an order with no (net positive) match makes the geometric mean zero.
        return 0.0
    log_p = float(np.mean(np.log(numerators / denominators)))
    bp = 1.0 if hyp_len >= ref_len else math.exp(1.0 - ref_len / hyp_len)
    return bp * math.exp(log_p)


def corpus_bleu(stats_sum: np.ndarray, max_n: int = MAX_N) -> float:
    """ΔBLEU in 0..1 from the column sums of :func:`segment_stats` rows (Galley et al. 2015, §3).

    ``BP · exp(mean_n log p_n)`` with ``BP = exp(1 - r/c)`` when the hypothesis length c is below the
    effective reference length r. Returns 0.0 when some p_n is not positive (no net match of that order).
    """
    s = np.asarray(stats_sum, dtype=np.float64)
    if s.shape != (2 * max_n + 2,):
        raise MetricError(f"ΔBLEU: statistics must have {2 * max_n + 2} columns for max_n={max_n}, got {s.shape}")
    return _bleu_from(s[:max_n], s[max_n:2 * max_n], s[2 * max_n], s[2 * max_n + 1])


def sentence_bleu(stats_row: np.ndarray, max_n: int = MAX_N, smoothing: str = "add-one") -> float:
    """Sentence-level ΔBLEU in 0..1 from one row of :func:`segment_stats`.

    ``smoothing="add-one"`` is BLEU+1 (Lin & Och 2004, as generalised by Chen & Cherry 2014, method 2):
    1 is added to the numerator and denominator of every order n > 1, so a short sentence without a 4-gram
    match still gets a score. With all weights 1 this equals sacrebleu's ``sentence_bleu`` with
    ``smooth_method="add-k", smooth_value=1``. A negatively weighted match can still drive a smoothed
    numerator to 0 or below; the sentence then scores 0, as BLEU does without a match.
    """
    s = np.array(stats_row, dtype=np.float64)
    num, den = s[:max_n].copy(), s[max_n:2 * max_n].copy()
    if smoothing == "add-one":
        if num[0] <= 0:
            return 0.0
        num[1:] += 1.0
        den[1:] += 1.0
    elif smoothing != "none":
        raise MetricError(f"ΔBLEU: unknown smoothing {smoothing!r}; use one of {', '.join(SMOOTHING)}")
    return _bleu_from(num, den, s[2 * max_n], s[2 * max_n + 1])


def corpus_delta_bleu(hypotheses: Sequence[str], references: Sequence[Sequence[WeightedRef]],
                      max_n: int = MAX_N) -> float:
    """Corpus ΔBLEU (0..1) of whitespace-tokenised hypotheses against weighted references."""
    return corpus_bleu(segment_stats(hypotheses, references, max_n).sum(axis=0), max_n)


def sentence_delta_bleu(hypothesis: str, references: Sequence[WeightedRef], max_n: int = MAX_N,
                        smoothing: str = "add-one") -> float:
    """Sentence ΔBLEU (0..1) of one whitespace-tokenised hypothesis; see :func:`sentence_bleu`."""
    return sentence_bleu(segment_stats([hypothesis], [references], max_n)[0], max_n, smoothing)


class DeltaBleu(Metric):
    """Sentence-level ΔBLEU for trials: PTB-tokenised like coco-caption, BLEU+1 smoothing.

    :meth:`score` takes plain references (every weight 1, so it is smoothed sentence BLEU);
    :meth:`score_weighted` takes ``(reference, weight)`` pairs.
    """

    name = "DeltaBLEU"
    version = "1"
    higher_is_better = True
    description = "ΔBLEU (Galley et al. 2015): BLEU with reference weights in [-1, 1]; sentence level, BLEU+1"

    DEFAULT_N: ClassVar[int] = MAX_N
    DEFAULT_SMOOTHING: ClassVar[str] = "add-one"

    def __init__(self, n: int = DEFAULT_N, smoothing: str = DEFAULT_SMOOTHING, tokenize: str = "ptb"):
        if smoothing not in SMOOTHING:
            raise ValueError(f"ΔBLEU smoothing must be one of {', '.join(SMOOTHING)}, got {smoothing!r}")
        self.n = int(n)
        self.smoothing = smoothing
        self.tokenize = tokenize
        self._tokenizer = tokenizer(tokenize)

    def params(self) -> dict[str, object]:
        return {"n": self.n, "smooth": self.smoothing, "tok": self.tokenize}

    def _tok(self, text: str) -> str:
        return text if self._tokenizer is None else self._tokenizer(text)

    def stats(self, candidates: Sequence[str], references: Sequence[Sequence[WeightedRef]]) -> np.ndarray:
        """:func:`segment_stats` after this metric's tokenisation."""
        return segment_stats([self._tok(c) for c in candidates],
                             [[(self._tok(r), w) for r, w in refs] for refs in references], self.n)

    def score_weighted(self, candidates: Sequence[str], references: Sequence[Sequence[WeightedRef]]) -> np.ndarray:
        """Sentence ΔBLEU per candidate against ``(reference, weight)`` pairs."""
        stats = self.stats(candidates, references)
        return np.array([sentence_bleu(row, self.n, self.smoothing) for row in stats], dtype=np.float64)

    def corpus_score(self, candidates: Sequence[str], references: Sequence[Sequence[WeightedRef]]) -> float:
        """Corpus ΔBLEU (0..1) of the whole batch against ``(reference, weight)`` pairs."""
        return corpus_bleu(self.stats(candidates, references).sum(axis=0), self.n)

    def _score(self, candidates: list[str], references: list[list[str]]) -> np.ndarray:
        return self.score_weighted(candidates, [[(r, 1.0) for r in refs] for refs in references])
