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


# sacreBLEU's smoothing methods (Chen & Cherry 2014) and their default values.
SMOOTH_DEFAULTS: dict[str, float | None] = {"none": None, "floor": 0.1, "add-k": 1.0, "exp": None}
SMOOTHING = tuple(SMOOTH_DEFAULTS)
# Older name of add-k with k = 1 (BLEU+1, Lin & Och 2004), still accepted.
_ALIASES = {"add-one": ("add-k", 1.0)}


def smoothing_setting(method: str, value: float | None = None) -> tuple[str, float | None]:
    """``(method, value)`` with the method's default value filled in; raises MetricError for an unknown one."""
    if method in _ALIASES:
        method, default = _ALIASES[method]
        value = default if value is None else value
    if method not in SMOOTH_DEFAULTS:
        raise MetricError(f"ΔBLEU: unknown smoothing {method!r}; use one of {', '.join(SMOOTHING)}")
    if value is None:
        value = SMOOTH_DEFAULTS[method]
    elif method in ("none", "exp"):
        raise MetricError(f"ΔBLEU: smoothing {method!r} takes no value; a value goes with floor or add-k")
    return method, None if value is None else float(value)


def bleu_from_stats(stats_sum: np.ndarray, max_n: int = MAX_N, smooth: str = "none",
                    smooth_value: float | None = None, effective_order: bool = False) -> float:
    """BLEU (0..1) from summed ΔBLEU statistics, smoothed as sacreBLEU's ``BLEU.compute_bleu`` does.

    Smoothing (Chen & Cherry 2014, as sacreBLEU implements it):
      none: an order without a match makes the score 0;
      floor: an order without a match gets precision ``smooth_value / total`` (default 0.1);
      add-k: ``smooth_value`` (default 1) is added to the matches and totals of every order n > 1;
      exp: the k-th order without a match gets precision ``1 / (2^k · total)`` (NIST mteval).
    ``effective_order`` averages only over the orders the hypothesis has n-grams of (sacreBLEU's
    ``effective_order``, meant for sentence BLEU). ΔBLEU's matches may be negative (negatively weighted
    references); an order whose net matches are not positive counts as an order without a match.
    The arithmetic follows sacreBLEU's step by step (precisions in percent), so with every weight 1 the result
    is sacreBLEU's score / 100.
    """
    s = np.asarray(stats_sum, dtype=np.float64)
    if s.shape != (2 * max_n + 2,):
        raise MetricError(f"ΔBLEU: statistics must have {2 * max_n + 2} columns for max_n={max_n}, got {s.shape}")
    smooth, smooth_value = smoothing_setting(smooth, smooth_value)
    correct, total = [float(v) for v in s[:max_n]], [float(v) for v in s[max_n:2 * max_n]]
    sys_len, ref_len = float(s[2 * max_n]), float(s[2 * max_n + 1])
    bp = 1.0
    if sys_len < ref_len:
        bp = math.exp(1 - ref_len / sys_len) if sys_len > 0 else 0.0
    if all(c <= 0 for c in correct):
        return 0.0
    precisions = [0.0] * max_n
    mteval = 1.0
    eff_order = max_n
    for n in range(1, max_n + 1):
        if smooth == "add-k" and n > 1:
            correct[n - 1] += smooth_value
            total[n - 1] += smooth_value
        if total[n - 1] <= 0:
            break
        if effective_order:
            eff_order = n
        if correct[n - 1] <= 0:
            if smooth == "exp":
                mteval *= 2
                precisions[n - 1] = 100.0 / (mteval * total[n - 1])
            elif smooth == "floor":
                precisions[n - 1] = 100.0 * smooth_value / total[n - 1]
        else:
            precisions[n - 1] = 100.0 * correct[n - 1] / total[n - 1]
    if any(p <= 0 for p in precisions[:eff_order]):
        return 0.0  # sacreBLEU's log of 0 is -9999999999: the score underflows to 0
    return bp * math.exp(sum(math.log(p) for p in precisions[:eff_order]) / eff_order) / 100.0


def corpus_bleu(stats_sum: np.ndarray, max_n: int = MAX_N, smooth: str = "none", smooth_value: float | None = None,
                effective_order: bool = False) -> float:
    """ΔBLEU in 0..1 from the column sums of :func:`segment_stats` rows (Galley et al. 2015, §3).

    ``BP · exp(mean_n log p_n)`` with ``BP = exp(1 - r/c)`` when the hypothesis length c is below the
    effective reference length r; smoothing and effective order as in :func:`bleu_from_stats` (default none:
    0.0 when some p_n is not positive, as BLEU).
    """
    return bleu_from_stats(stats_sum, max_n, smooth, smooth_value, effective_order)


def sentence_bleu(stats_row: np.ndarray, max_n: int = MAX_N, smoothing: str = "add-k",
                  smooth_value: float | None = None, effective_order: bool = False) -> float:
    """Sentence-level ΔBLEU in 0..1 from one row of :func:`segment_stats`.

    The default, add-k with k = 1, is BLEU+1 (Lin & Och 2004; Chen & Cherry 2014, method 2): 1 is added to
    the numerator and denominator of every order n > 1, so a short sentence without a 4-gram match still
    gets a score. Any of :data:`SMOOTHING` can be chosen (see :func:`bleu_from_stats`); with all weights 1
    the result equals sacreBLEU's ``sentence_score`` with the same smoothing and effective-order setting.
    """
    return bleu_from_stats(stats_row, max_n, smoothing, smooth_value, effective_order)


def corpus_delta_bleu(hypotheses: Sequence[str], references: Sequence[Sequence[WeightedRef]],
                      max_n: int = MAX_N, smooth: str = "none", smooth_value: float | None = None,
                      effective_order: bool = False) -> float:
    """Corpus ΔBLEU (0..1) of whitespace-tokenised hypotheses against weighted references."""
    return corpus_bleu(segment_stats(hypotheses, references, max_n).sum(axis=0), max_n, smooth, smooth_value,
                       effective_order)


def sentence_delta_bleu(hypothesis: str, references: Sequence[WeightedRef], max_n: int = MAX_N,
                        smoothing: str = "add-k", smooth_value: float | None = None,
                        effective_order: bool = False) -> float:
    """Sentence ΔBLEU (0..1) of one whitespace-tokenised hypothesis; see :func:`sentence_bleu`."""
    return sentence_bleu(segment_stats([hypothesis], [references], max_n)[0], max_n, smoothing, smooth_value,
                         effective_order)


class DeltaBleu(Metric):
    """Sentence-level ΔBLEU for trials: PTB-tokenised like coco-caption, BLEU+1 (add-k, k = 1) by default.

    :meth:`score` takes plain references (every weight 1, so it is smoothed sentence BLEU);
    :meth:`score_weighted` takes ``(reference, weight)`` pairs.
    """

    name = "DeltaBLEU"
    version = "2"  # 2: sacreBLEU's arithmetic and smoothing methods
    higher_is_better = True
    description = "ΔBLEU (Galley et al. 2015): BLEU with reference weights in [-1, 1]; sentence level, BLEU+1"

    DEFAULT_N: ClassVar[int] = MAX_N
    DEFAULT_SMOOTHING: ClassVar[str] = "add-k"

    def __init__(self, n: int = DEFAULT_N, smoothing: str = DEFAULT_SMOOTHING, smooth_value: float | None = None,
                 effective_order: bool = False, tokenize: str = "ptb"):
        try:
            self.smoothing, self.smooth_value = smoothing_setting(smoothing, smooth_value)
        except MetricError as exc:
            raise ValueError(str(exc)) from None
        self.n = int(n)
        self.effective_order = bool(effective_order)
        self.tokenize = tokenize
        self._tokenizer = tokenizer(tokenize)

    def params(self) -> dict[str, object]:
        out: dict[str, object] = {"n": self.n, "smooth": self.smoothing}
        if self.smooth_value is not None:
            out["k"] = f"{self.smooth_value:g}"
        out["eff"] = "yes" if self.effective_order else "no"
        out["tok"] = self.tokenize
        return out

    def _tok(self, text: str) -> str:
        return text if self._tokenizer is None else self._tokenizer(text)

    def stats(self, candidates: Sequence[str], references: Sequence[Sequence[WeightedRef]]) -> np.ndarray:
        """:func:`segment_stats` after this metric's tokenisation."""
        return segment_stats([self._tok(c) for c in candidates],
                             [[(self._tok(r), w) for r, w in refs] for refs in references], self.n)

    def score_weighted(self, candidates: Sequence[str], references: Sequence[Sequence[WeightedRef]]) -> np.ndarray:
        """Sentence ΔBLEU per candidate against ``(reference, weight)`` pairs."""
        stats = self.stats(candidates, references)
        return np.array([sentence_bleu(row, self.n, self.smoothing, self.smooth_value, self.effective_order)
                         for row in stats], dtype=np.float64)

    def corpus_score(self, candidates: Sequence[str], references: Sequence[Sequence[WeightedRef]]) -> float:
        """Corpus ΔBLEU (0..1) of the whole batch against ``(reference, weight)`` pairs, with this metric's
        smoothing and effective-order setting."""
        return corpus_bleu(self.stats(candidates, references).sum(axis=0), self.n, self.smoothing,
                           self.smooth_value, self.effective_order)

    def _score(self, candidates: list[str], references: list[list[str]]) -> np.ndarray:
        return self.score_weighted(candidates, [[(r, 1.0) for r in refs] for refs in references])
