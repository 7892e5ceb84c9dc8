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
from dataclasses import dataclass
from typing import ClassVar, Sequence

import numpy as np

from muttlab.metrics.base import Metric, MetricError
from muttlab.metrics.tokenize import tokenizer

WeightedRef = tuple[str, float]

MAX_N = 4


def _all_ngrams(tokens: list[str], max_n: int) -> Counter:
    counts: Counter = Counter()
    for n in range(1, max_n + 1):
        counts.update(zip(*(tokens[i:] for i in range(n))))
    return counts


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
    for i, refs in enumerate(references):
        _check_segment(i, refs)
    return segment_statistics(match_table(hypotheses, [[(r, float(w)) for r, w in refs] for refs in references],
                                          max_n=max_n))


@dataclass(frozen=True)
class MatchTable:
    """Every hypothesis n-gram's clipped count against every reference, computed once.

    Rows are (segment, order, distinct hypothesis n-gram). A match is a row and a reference ``j`` holding
    its n-gram, with ``min(count in hypothesis, count in reference j)``; a pair that is not listed has none.
    """

    max_n: int
    row_segment: np.ndarray  # (rows,)
    row_order: np.ndarray  # (rows,) 0-based
    match_row: np.ndarray  # (matches,)
    match_ref: np.ndarray  # (matches,) the reference's column
    match_count: np.ndarray  # (matches,) the clipped count
    ref_exists: np.ndarray  # (segments, R) bool
    ref_weight: np.ndarray  # (segments, R)
    ref_base: np.ndarray  # (segments, R) bool
    ref_len: np.ndarray  # (segments, R)
    hyp_ngrams: np.ndarray  # (segments, max_n) n-gram counts of the hypothesis
    hyp_len: np.ndarray  # (segments,)


def match_table(hypotheses: Sequence[str], references: Sequence[Sequence[WeightedRef]],
                base: Sequence[Sequence[bool]] | None = None, max_n: int = MAX_N) -> MatchTable:
    """Every hypothesis n-gram matched against every reference once; :func:`segment_statistics` then gives
    the statistics of any reference threshold or weighting without matching again.

    ``base`` marks, per segment, the references every threshold keeps (default: all of them).
    """
    n_seg = len(hypotheses)
    width = max((len(r) for r in references), default=1)
    ref_exists = np.zeros((n_seg, width), dtype=bool)
    ref_weight = np.zeros((n_seg, width))
    ref_base = np.zeros((n_seg, width), dtype=bool)
    ref_len = np.zeros((n_seg, width))
    hyp_ngrams = np.zeros((n_seg, max_n))
    hyp_len = np.zeros(n_seg)
    seg_rows, order_rows, match_row, match_ref, match_count = [], [], [], [], []
    # A reference often serves several hypotheses (an image's candidates, a trial's two texts): count it once.
    ref_counts_of: dict[str, tuple[int, Counter]] = {}
    for i, (hyp, refs) in enumerate(zip(hypotheses, references)):
        hyp_toks = hyp.split()
        # All orders in one Counter (a key's length is its order), so each reference is visited once and only
        # for the n-grams it shares with the hypothesis (a C-level set intersection).
        hyp_counts = _all_ngrams(hyp_toks, max_n)
        first = len(seg_rows)
        slot = {g: first + row for row, g in enumerate(hyp_counts)}
        lengths = []
        for j, (r, _) in enumerate(refs):
            cached = ref_counts_of.get(r)
            if cached is None:
                toks = r.split()
                cached = ref_counts_of[r] = (len(toks), _all_ngrams(toks, max_n))
            lengths.append(cached[0])
            counts = cached[1]
            for g in hyp_counts.keys() & counts.keys():
                c, m = hyp_counts[g], counts[g]
                match_row.append(slot[g])
                match_ref.append(j)
                match_count.append(c if c < m else m)
        k = len(refs)
        ref_exists[i, :k] = True
        ref_weight[i, :k] = [w for _, w in refs]
        ref_base[i, :k] = True if base is None else base[i]
        ref_len[i, :k] = lengths
        hyp_len[i] = len(hyp_toks)
        hyp_ngrams[i] = [max(0, len(hyp_toks) - n + 1) for n in range(1, max_n + 1)]
        seg_rows += [i] * len(slot)
        order_rows += [len(g) - 1 for g in hyp_counts]
    return MatchTable(max_n, np.array(seg_rows, dtype=np.int64), np.array(order_rows, dtype=np.int64),
                      np.array(match_row, dtype=np.int64), np.array(match_ref, dtype=np.int64),
                      np.array(match_count, dtype=np.float64), ref_exists, ref_weight, ref_base, ref_len,
                      hyp_ngrams, hyp_len)


def segment_statistics(table: MatchTable, threshold: float | None = None, weighted: bool = True) -> np.ndarray:
    """ΔBLEU sufficient statistics per segment for one configuration of references.

    Args:
      threshold: extra references are used when their weight is >= threshold; None = none of them
        (the base references only).
      weighted: True = the references' weights (ΔBLEU); False = every used reference weighs 1 (BLEU).
    Returns:
      ``(segments, 2 * max_n + 2)``: weighted matches per order, denominators, hypothesis length,
      effective reference length (the columns of :func:`segment_stats`).
    """
    used = table.ref_base.copy() if threshold is None else \
        table.ref_exists & (table.ref_base | (table.ref_weight >= threshold))
    weight = np.where(weighted, table.ref_weight, 1.0)
    weight = np.where(used, weight, -np.inf)
    max_n = table.max_n
    n_seg = used.shape[0]
    out = np.zeros((n_seg, 2 * max_n + 2))
    # Numerator: per hypothesis n-gram, the best w_j * clipped count over references that contain it.
    match_weight = weight[table.row_segment[table.match_row], table.match_ref]
    counted = np.isfinite(match_weight)
    best = np.full(len(table.row_segment), -np.inf)
    np.maximum.at(best, table.match_row[counted], match_weight[counted] * table.match_count[counted])
    best = np.where(np.isfinite(best), best, 0.0)
    flat = table.row_segment * max_n + table.row_order
    out[:, :max_n] = np.bincount(flat, weights=best, minlength=n_seg * max_n).reshape(n_seg, max_n)
    max_w = np.max(weight, axis=1)
    out[:, max_n:2 * max_n] = max_w[:, None] * table.hyp_ngrams
    out[:, 2 * max_n] = table.hyp_len
    # Effective reference length: the closest positively weighted reference, ties to the shorter.
    positive = used & (np.where(weighted, table.ref_weight, 1.0) > 0)
    distance = np.where(positive, np.abs(table.ref_len - table.hyp_len[:, None]), np.inf)
    key = distance * 1e6 + np.where(positive, table.ref_len, np.inf)
    out[:, 2 * max_n + 1] = table.ref_len[np.arange(n_seg), np.argmin(key, axis=1)]
    return out


def order_columns(max_n: int, order: int) -> np.ndarray:
    """Columns of a ``max_n`` statistics row that make the statistics row of a lower n-gram ``order``."""
    return np.r_[0:order, max_n:max_n + order, 2 * max_n, 2 * max_n + 1]


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
