"""Meta-evaluation statistics: how a metric's scores agree with human scores of the same system outputs.

Every function here is pure: it reads a ``gold`` and a ``metric`` matrix of shape (systems, items) — human and
metric scores of each system's output for each item (source segment), NaN in ``gold`` where an output was not
judged — and returns numbers. Both are oriented so that larger is better (error rates such as TER are negated
before they get here). Nothing here reads a file or knows a metric; every random procedure takes a seed.

Pairs. A pair is two judged outputs; Δh and Δm are their human and metric score differences. For a tie
threshold ε ≥ 0 the metric ties the pair when |Δm| ≤ ε, the human when Δh = 0, and the pair is

* concordant (C): both order it the same way (Δh ≠ 0, |Δm| > ε, same sign);
* discordant (D): they order it opposite ways;
* tied by the human only (T_h), by the metric only (T_m), by both (T_hm).

**Pairwise accuracy with ties** (Deutsch, Foster & Freitag, "Ties Matter", EMNLP 2023, §4, eq. "acc_eq")::

    acc_eq(ε) = (C + T_hm) / (C + D + T_h + T_m + T_hm)

and **acc*_eq** is its maximum over ε, searched over 0 and every distinct |Δm| of the pairs (the tie
calibration, §5); the ε reported is the smallest one reaching the maximum. With ε = 0 this is plain pairwise
accuracy (two outputs agree when the signs of Δh and Δm are equal, ties included: mt-metrics-eval's
``stats.Agreement``). Which pairs are counted:

* **item-grouped**: the outputs of different systems for the same item; acc_eq is computed per item and
  averaged over the items that have a pair, with one ε for all of them (WMT23 and WMT24 metrics task findings,
  segment level; mt-metrics-eval ``KendallWithTiesOpt(average_by="item")``);
* **ungrouped**: all pairs of all judged outputs pooled, pairs across items included
  (``KendallWithTiesOpt(average_by="none")``). There are n(n−1)/2 of them (23.6 million for 6,877 outputs):
  the exact search never holds a Python object per pair (see :func:`tie_calibrated_accuracy`).

**Kendall τ_b and Pearson r** per item (averaged over the items where they are defined: an item whose human
scores, or metric scores, are all equal has none and is left out, as mt-metrics-eval's ``AverageCorrelation``
does) and ungrouped.

**System level**: a system's score is its mean over the items it was judged on (or a corpus-level score
computed elsewhere); **pairwise accuracy** of the system orderings (Kocmi et al., "To Ship or Not to Ship",
WMT 2021, §3.1: the share of system pairs the metric orders as the humans do) and Pearson r.

**Significance** (WMT22–24 findings): acc_eq of two metrics is compared by randomly swapping their pair
outcomes, each metric keeping its own ε (:func:`swap_test`; mt-metrics-eval ``PairwisePermutationSigDiff``);
other statistics by randomly swapping the two metrics' (z-normalised) scores of each unit
(:func:`permutation_test`; ``PermutationSigDiff``, the PERM-BOTH test of Deutsch et al. 2021). Metrics are
ranked into clusters (:func:`clusters`; mt-metrics-eval ``AssignRanks``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Callable

import numpy as np

from muttlab.errors import MuttlabError

# The exact ungrouped search holds 8 bytes per pair it needs (human ties and concordant pairs): above this many
# pairs of outputs (about 10,000 outputs, at most 400 MB) it samples its candidate thresholds instead, from
# this many pairs drawn at random.
DEFAULT_MAX_EXACT_PAIRS = 50_000_000
DEFAULT_SAMPLE_PAIRS = 20_000_000
# Pairs per block of the ungrouped enumeration: bounds the temporary arrays at a few tens of MB.
BLOCK_PAIRS = 2_000_000
DEFAULT_RESAMPLES = 1000
DEFAULT_ALPHA = 0.05


# --------------------------------------------------------------------------- inputs

def _checked(gold, metric) -> tuple[np.ndarray, np.ndarray]:
    gold = np.asarray(gold, dtype=np.float64)
    metric = np.asarray(metric, dtype=np.float64)
    if gold.ndim == 1:
        gold, metric = gold[None, :], metric.reshape(1, -1) if metric.ndim == 1 else metric
    if gold.shape != metric.shape or gold.ndim != 2:
        raise MuttlabError(f"gold and metric scores must be matrices of one shape (systems x items); got "
                           f"{gold.shape} and {metric.shape}")
    rated = ~np.isnan(gold)
    if np.isnan(metric[rated]).any() or np.isinf(metric[rated]).any() or np.isinf(gold[rated]).any():
        raise MuttlabError("every judged output needs a finite metric score and a finite human score")
    return gold, metric


def _flat(gold: np.ndarray, metric: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Human and metric scores of the judged outputs, system by system (mt-metrics-eval's flattening)."""
    rated = ~np.isnan(gold)
    return gold[rated], metric[rated]


@dataclass(frozen=True)
class ItemPairs:
    """Every pair of systems' outputs for one item: arrays of shape (system pairs, items)."""

    dh: np.ndarray  # gold[a] - gold[b], a < b
    dm: np.ndarray  # metric[a] - metric[b]
    valid: np.ndarray  # both outputs judged

    @property
    def per_item(self) -> np.ndarray:
        return self.valid.sum(axis=0)


def item_pairs(gold, metric) -> ItemPairs:
    """The item-grouped pairs (systems ``a < b`` of one item), as mt-metrics-eval enumerates them."""
    gold, metric = _checked(gold, metric)
    a, b = np.triu_indices(gold.shape[0], k=1)
    valid = ~np.isnan(gold[a]) & ~np.isnan(gold[b])
    with np.errstate(invalid="ignore"):
        return ItemPairs(np.where(valid, gold[a] - gold[b], 0.0), np.where(valid, metric[a] - metric[b], 0.0),
                         valid)


# --------------------------------------------------------------------------- pairwise accuracy with ties

@dataclass(frozen=True)
class TieCalibration:
    """acc*_eq and its ε.

    Attributes:
      accuracy: acc_eq at ``epsilon`` (for a sampled search, computed exactly over all pairs at that ε).
      epsilon: the smallest ε reaching the maximum, in the metric's units (an absolute score difference).
      n_pairs: the pairs counted (all of them; the sample's size is ``n_pairs * sample_rate``).
      n_groups: the items with a pair (1 ungrouped).
      candidates: the thresholds searched (0 and the distinct |Δm| that can raise acc_eq).
      sample_rate: 1.0 for the exact search; else the share of pairs whose |Δm| were the candidates.
      estimate: acc_eq at ``epsilon`` on the sampled pairs (equals ``accuracy`` for the exact search).
      untied: the pairs ``epsilon`` leaves untied (|Δm| > ε), of all ``n_pairs``.
      constant: acc_eq of a metric that ties every pair, on the same pairs (weighted alike): the share of pairs
        the humans tie. A calibration has to beat it.
      informative: whether ``epsilon`` leaves some pair untied AND ``accuracy`` beats ``constant`` (compared
        exactly): a metric that does no better than tying everything has earned no ε (every strict comparison
        judged with it would be a tie, or no better than one). Whether it beats it *significantly* is the
        meta-evaluation's to say (:mod:`muttlab.meta.evaluate`).
    """

    accuracy: float
    epsilon: float
    n_pairs: int
    n_groups: int
    candidates: int
    sample_rate: float = 1.0
    estimate: float | None = None
    untied: int = 0
    constant: float = float("nan")
    informative: bool = True


def item_weights(sizes: np.ndarray) -> tuple[np.ndarray, int]:
    """The weight of one pair of each item in an item-grouped accuracy, and the scale: accuracy =
    Σ right pairs × weight / scale. With ``sizes`` pairs per item the true weight is 1 / (items · size); when
    the sizes' least common multiple L is small, the weights are the integers L / size and the scale
    items · L, so the sums are exact (equal accuracies compare equal); else 1 / size and the number of items."""
    sizes = np.asarray(sizes, dtype=np.int64)
    common = 1
    for size in {int(x) for x in sizes}:
        common = common * size // math.gcd(common, size)
        if common > 2 ** 40:
            return 1.0 / sizes, len(sizes)
    return common // sizes, len(sizes) * common


def _item_mean(right: np.ndarray, sizes: np.ndarray) -> float:
    """The mean over items of right / size (:func:`item_weights`)."""
    weights, scale = item_weights(sizes)
    return float((right * weights).sum() / scale)


def _grouped_search(gold: np.ndarray, metric: np.ndarray) -> TieCalibration:
    pairs = item_pairs(gold, metric)
    sizes = pairs.per_item
    groups = np.flatnonzero(sizes)
    if not len(groups):
        raise MuttlabError("no item has two judged outputs: item-grouped pairwise accuracy needs at least two "
                           "systems judged on one item")
    valid = pairs.valid[:, groups]
    dh, dm = pairs.dh[:, groups], pairs.dm[:, groups]
    n_g = sizes[groups]
    d = np.abs(dm)
    human_tie = valid & (dh == 0)
    concordant = valid & (np.sign(dh) * np.sign(dm) > 0)
    # acc(ε) = mean over items of (C_g + Σ_{pairs of g with |Δm| <= ε} g_p) / n_g, with g_p = +1 for a human tie
    # (it becomes T_hm) and -1 for a concordant pair (it becomes T_m): in integers over a common denominator.
    weight, scale = item_weights(n_g)
    base = (concordant.sum(axis=0) * weight).sum()
    gain = np.where(human_tie, 1, np.where(concordant, -1, 0)) * weight[None, :]
    moving = human_tie | concordant
    d_moving, gain_moving = d[moving], gain[moving]
    order = np.argsort(d_moving, kind="stable")
    d_sorted, cumulative = d_moving[order], np.concatenate([[0], np.cumsum(gain_moving[order])])
    candidates = np.unique(np.concatenate([[0.0], d[human_tie]]))
    totals = base + cumulative[np.searchsorted(d_sorted, candidates, side="right")]
    best = int(np.argmax(totals))  # the first maximum: the smallest ε reaching it
    epsilon = float(candidates[best])
    untied = int((valid & (d > epsilon)).sum())
    # Tying every pair is right exactly on the human ties: in the same integer weights, so "beats" is exact.
    constant = (human_tie.sum(axis=0) * weight).sum()
    return TieCalibration(float(totals[best] / scale), epsilon, int(n_g.sum()), len(groups), len(candidates),
                          untied=untied, constant=float(constant / scale),
                          informative=bool(untied > 0 and totals[best] > constant))


def _sorted_flat(gold: np.ndarray, metric: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    h, m = _flat(gold, metric)
    if len(h) < 2:
        raise MuttlabError("ungrouped pairwise accuracy needs at least two judged outputs")
    order = np.argsort(m, kind="stable")
    return h[order], m[order]


def _blocks(n: int):
    """Row ranges [a, b) of the strict upper triangle of an n x n pair matrix, about BLOCK_PAIRS pairs each."""
    a = 0
    while a < n - 1:
        width = n - a - 1
        b = min(n - 1, a + max(1, BLOCK_PAIRS // width))
        yield a, b
        a = b


def _block_parts(n: int, a: int, b: int):
    """The pairs (i, j > i) of rows [a, b) as two rectangles of (rows, columns, mask): the triangle beside the
    diagonal (columns a+1..b, masked to j > i) and the rest (columns b..n, every pair)."""
    rows = slice(a, b)
    upper = np.arange(a + 1, b)[None, :] > np.arange(a, b)[:, None]
    yield rows, slice(a + 1, b), upper
    if b < n:
        yield rows, slice(b, n), None


def _ungrouped_exact(h: np.ndarray, m: np.ndarray) -> TieCalibration:
    """The exact search over all n(n−1)/2 pairs of outputs sorted by metric score.

    acc(ε) = (C_0 + #{human ties with Δm <= ε} − #{concordant pairs with Δm <= ε}) / N, where C_0 counts the
    concordant pairs at ε = 0 (a discordant pair never changes acc). Only the Δm of human ties and of concordant
    pairs are kept: two float64 arrays, their sizes counted beforehand in O(n log n) (:func:`ungrouped_counts`),
    filled block by block and sorted in place — 8 bytes per kept pair, nothing per pair in Python."""
    n = len(h)
    total = n * (n - 1) // 2
    counts = ungrouped_counts(h, m, 0.0, presorted=True)
    ranks = np.unique(h, return_inverse=True)[1].astype(np.int32)  # comparisons of 4-byte ints, not floats
    rises = np.empty(counts.ties_human + counts.ties_both)
    falls = np.empty(counts.concordant)
    at_r = at_f = 0
    for a, b in _blocks(n):
        for rows, cols, mask in _block_parts(n, a, b):
            dm = m[None, cols] - m[rows, None]
            r_rows, r_cols = ranks[rows, None], ranks[None, cols]
            human_tie = r_cols == r_rows
            concordant = (r_cols > r_rows) & (dm > 0)
            if mask is not None:
                human_tie &= mask
                concordant &= mask
            r, f = dm[human_tie], dm[concordant]
            rises[at_r:at_r + len(r)], falls[at_f:at_f + len(f)] = r, f
            at_r, at_f = at_r + len(r), at_f + len(f)
    rises.sort()
    falls.sort()
    found, right = _best_threshold(rises, falls, counts.concordant, total)
    return _judged_ungrouped(found, h, m, right)


def _best_threshold(rises: np.ndarray, falls: np.ndarray, concordant: int, total: int,
                    ) -> tuple[TieCalibration, int]:
    """acc*_eq from the sorted Δm of the human ties (each raises acc_eq once tied) and of the concordant pairs
    (each lowers it): candidates are 0 and each distinct rise, the first maximum wins. Also returns how many
    pairs are right at that ε."""
    last = np.flatnonzero(np.r_[rises[1:] != rises[:-1], True]) if len(rises) else np.zeros(0, dtype=np.intp)
    candidates, tied_rises = rises[last], last + 1
    if not len(candidates) or candidates[0] != 0.0:
        candidates, tied_rises = np.r_[0.0, candidates], np.r_[0, tied_rises]
    correct = concordant + tied_rises - np.searchsorted(falls, candidates, side="right")
    best = int(np.argmax(correct))
    epsilon = float(candidates[best])
    accuracy = float(correct[best] / total)
    return TieCalibration(accuracy, epsilon, total, 1, len(candidates), estimate=accuracy), int(correct[best])


def _judged_ungrouped(found: TieCalibration, h: np.ndarray, m: np.ndarray, right: int) -> TieCalibration:
    """``found`` (over all pairs of the outputs sorted by metric score ``m``, ``right`` of them right at its ε)
    with the pairs its ε leaves untied, the constant metric's accuracy and whether it beats it (exact counts)."""
    total = found.n_pairs
    untied = total - int((_window_ends(m, found.epsilon) - np.arange(len(m)) - 1).sum())
    sizes = np.unique(h, return_counts=True)[1]
    human_ties = int((sizes * (sizes - 1) // 2).sum())
    return replace(found, untied=untied, constant=human_ties / total if total else float("nan"),
                   informative=bool(untied > 0 and right > human_ties))


def _ungrouped_sampled(h: np.ndarray, m: np.ndarray, sample: int, seed: int) -> TieCalibration:
    """The search over the |Δm| of ``sample`` pairs drawn uniformly (with replacement, seeded, block by block) as
    candidate thresholds, acc_eq estimated on those pairs; acc_eq at the chosen ε is then counted exactly over
    all pairs (:func:`ungrouped_counts`)."""
    n = len(h)
    total = n * (n - 1) // 2
    rng = np.random.default_rng(seed)
    rises, falls, concordant = [], [], 0
    for start in range(0, sample, BLOCK_PAIRS):
        k = min(BLOCK_PAIRS, sample - start)
        i = rng.integers(0, n, k)
        j = rng.integers(0, n - 1, k)
        j += j >= i
        dm, dh = m[j] - m[i], h[j] - h[i]
        human_tie, same = dh == 0, np.sign(dm) * np.sign(dh) > 0
        d = np.abs(dm)
        rises.append(d[human_tie])
        falls.append(d[same])
        concordant += int(same.sum())
    rises, falls = np.sort(np.concatenate(rises)), np.sort(np.concatenate(falls))
    found, _ = _best_threshold(rises, falls, concordant, sample)
    counts = ungrouped_counts(h, m, found.epsilon, presorted=True)
    exact = TieCalibration(counts.accuracy, found.epsilon, total, 1, found.candidates, sample_rate=sample / total,
                           estimate=found.accuracy)
    return _judged_ungrouped(exact, h, m, counts.concordant + counts.ties_both)


def tie_calibrated_accuracy(gold, metric, grouped: bool = True, max_exact_pairs: int = DEFAULT_MAX_EXACT_PAIRS,
                            sample_pairs: int | None = None, seed: int = 0) -> TieCalibration:
    """acc*_eq: pairwise accuracy with ties, at the tie threshold ε that maximises it (Deutsch et al. 2023).

    Args:
      gold, metric: (systems, items) matrices; NaN gold marks an output that was not judged.
      grouped: True for the item-grouped statistic (one acc_eq per item, averaged; one ε for all), False for
        all pairs of all outputs pooled.
      max_exact_pairs: ungrouped only: with more pairs than this, candidate thresholds are sampled (below).
      sample_pairs: ungrouped only: how many pairs to sample when sampling (default
        :data:`DEFAULT_SAMPLE_PAIRS`); the sample rate is ``sample_pairs / n_pairs``.
      seed: the sampling's seed.
    Returns:
      :class:`TieCalibration`. The exact search (every item-grouped search; ungrouped up to
      ``max_exact_pairs``) equals mt-metrics-eval's ``stats.KendallWithTiesOpt(variant="acc23",
      sample_rate=1.0)``. A sampled search takes its candidate thresholds from the |Δm| of the sampled pairs
      and picks ε on them; the accuracy it reports is counted exactly over all pairs at that ε (a lower bound
      of the exact acc*_eq), its sample estimate is ``estimate``.
    """
    gold, metric = _checked(gold, metric)
    if grouped:
        return _grouped_search(gold, metric)
    h, m = _sorted_flat(gold, metric)
    total = len(h) * (len(h) - 1) // 2
    sample = int(sample_pairs or DEFAULT_SAMPLE_PAIRS)
    if total <= max_exact_pairs or sample >= total:  # a sample as large as the pairs would only cost more
        return _ungrouped_exact(h, m)
    return _ungrouped_sampled(h, m, sample, seed)


@dataclass(frozen=True)
class PairCounts:
    """The pair counts of one threshold (summed over items when grouped) and the accuracy they give."""

    concordant: int
    discordant: int
    ties_human: int
    ties_metric: int
    ties_both: int
    accuracy: float

    @property
    def n_pairs(self) -> int:
        return self.concordant + self.discordant + self.ties_human + self.ties_metric + self.ties_both


def grouped_outcomes(gold, metric, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """Per item-grouped pair: whether the metric gets it right at ``epsilon`` (concordant or tied by both),
    and whether the pair exists (both outputs judged); arrays of shape (system pairs, items)."""
    pairs = item_pairs(gold, metric)
    metric_tie = np.abs(pairs.dm) <= epsilon
    right = pairs.valid & np.where(metric_tie, pairs.dh == 0, np.sign(pairs.dh) * np.sign(pairs.dm) > 0)
    return right, pairs.valid


def accuracy_with_ties(gold, metric, epsilon: float = 0.0, grouped: bool = True) -> PairCounts:
    """acc_eq at one threshold ``epsilon`` (|Δm| <= ε is a metric tie), with its pair counts. ε = 0 is plain
    pairwise accuracy (mt-metrics-eval ``stats.Agreement``: the signs of Δh and Δm agree, ties included)."""
    if epsilon < 0 or not np.isfinite(epsilon):
        raise MuttlabError(f"a tie threshold is a finite number >= 0, got {epsilon!r}")
    gold, metric = _checked(gold, metric)
    if not grouped:
        h, m = _sorted_flat(gold, metric)
        return ungrouped_counts(h, m, epsilon, presorted=True)
    pairs = item_pairs(gold, metric)
    valid, dh = pairs.valid, pairs.dh
    metric_tie = np.abs(pairs.dm) <= epsilon
    human_tie = dh == 0
    same = np.sign(dh) * np.sign(pairs.dm) > 0
    counts = [int((valid & mask).sum()) for mask in (~metric_tie & same, ~metric_tie & ~human_tie & ~same,
                                                     human_tie & ~metric_tie, metric_tie & ~human_tie,
                                                     metric_tie & human_tie)]
    sizes = valid.sum(axis=0)
    right = (valid & np.where(metric_tie, human_tie, same)).sum(axis=0)
    has = sizes > 0
    return PairCounts(*counts, _item_mean(right[has], sizes[has]))


class _Fenwick:
    """Counts of values inserted by rank, with prefix sums (Fenwick 1994): O(log n) per step."""

    def __init__(self, size: int):
        self.tree = [0] * (size + 1)

    def add(self, rank: int) -> None:
        rank += 1
        tree = self.tree
        while rank < len(tree):
            tree[rank] += 1
            rank += rank & -rank

    def below(self, rank: int) -> int:
        """How many inserted values have a rank < ``rank``."""
        total, tree = 0, self.tree
        while rank > 0:
            total += tree[rank]
            rank -= rank & -rank
        return total


def _window_ends(m: np.ndarray, epsilon: float) -> np.ndarray:
    """For scores sorted ascending: per i, the first j with m_j − m_i > ε (differences compared as computed,
    as the search computes them, so a pair at exactly ε is a tie)."""
    ends = np.searchsorted(m, m + epsilon, side="right")
    index = np.arange(len(m))
    while True:  # m_i + ε can round either way of m_j; settle each end on the differences themselves
        up = (ends < len(m))
        up[up] = m[ends[up]] - m[index[up]] <= epsilon
        down = ends - 1 > index
        down[down] = m[ends[down] - 1] - m[index[down]] > epsilon
        if not up.any() and not down.any():
            return ends
        ends = ends + up - down


def ungrouped_counts(h, m, epsilon: float, presorted: bool = False) -> PairCounts:
    """The exact pair counts of all pairs of outputs at one ε, in O(n log n): metric ties from a sliding window
    over the sorted scores, ties of both per group of equal human scores, concordant pairs as a dominance count
    (pairs more than ε apart whose human scores rise with the metric's) with a Fenwick tree over human ranks."""
    h, m = np.asarray(h, dtype=np.float64), np.asarray(m, dtype=np.float64)
    if not presorted:
        order = np.argsort(m, kind="stable")
        h, m = h[order], m[order]
    n = len(h)
    total = n * (n - 1) // 2
    ends = _window_ends(m, epsilon)
    metric_ties = int((ends - np.arange(n) - 1).sum())
    values, ranks, sizes = np.unique(h, return_inverse=True, return_counts=True)
    human_ties = int((sizes * (sizes - 1) // 2).sum())
    # Grouped by human score, each group keeps the metric order (a stable sort of scores already sorted by m).
    by_group = np.argsort(ranks, kind="stable")
    m_grouped, starts = m[by_group], np.concatenate([[0], np.cumsum(sizes)])
    both = 0
    for group in np.flatnonzero(sizes > 1):
        sub = m_grouped[starts[group]:starts[group + 1]]
        both += int((_window_ends(sub, epsilon) - np.arange(len(sub)) - 1).sum())
    concordant, tree, inserted = 0, _Fenwick(len(values)), n
    rank_list = ranks.tolist()
    for i in np.argsort(-ends, kind="stable").tolist():
        end = int(ends[i])
        while inserted > end:
            inserted -= 1
            tree.add(rank_list[inserted])
        concordant += (n - inserted) - tree.below(rank_list[i] + 1)
    ties_metric, ties_human = metric_ties - both, human_ties - both
    discordant = total - concordant - ties_metric - ties_human - both
    return PairCounts(concordant, discordant, ties_human, ties_metric, both,
                      float((concordant + both) / total) if total else float("nan"))


def ungrouped_outcomes(gold, metrics: dict[str, np.ndarray], epsilons: dict[str, float]) -> dict[str, list]:
    """Per metric, whether it gets each pair of all judged outputs right at its own ε (concordant, or tied by
    both), as bits: one ``np.packbits`` array per block of pairs, the pairs in one order for every metric (the
    judged outputs system by system, ``i < j``), so two metrics' outcomes compare block by block
    (:func:`outcome_difference`). 1/8 byte per pair and metric."""
    gold = np.asarray(gold, dtype=np.float64)
    rated = ~np.isnan(gold)
    h = gold[rated]
    flat = {name: _checked(gold, matrix)[1][rated] for name, matrix in metrics.items()}
    out: dict[str, list] = {name: [] for name in metrics}
    n = len(h)
    for a, b in _blocks(n):
        for rows, cols, mask in _block_parts(n, a, b):
            sign_h = np.sign(h[None, cols] - h[rows, None])
            human_tie = sign_h == 0
            for name, m in flat.items():
                dm = m[None, cols] - m[rows, None]
                right = np.where(np.abs(dm) <= epsilons[name], human_tie, np.sign(dm) * sign_h > 0)
                out[name].append(np.packbits(right if mask is None else right[mask]))
    return out


def outcome_difference(first: list, second: list) -> tuple[int, int]:
    """(pairs where exactly one of two metrics is right, right pairs of the first − of the second), from their
    :func:`ungrouped_outcomes`."""
    disagree = delta = 0
    for x, y in zip(first, second):
        disagree += int(np.bitwise_count(x ^ y).sum())
        delta += int(np.bitwise_count(x).sum()) - int(np.bitwise_count(y).sum())
    return disagree, delta


# --------------------------------------------------------------------------- correlations

def _rows_pearson(x: np.ndarray, y: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Pearson r of each column over its masked rows (a leading axis of resamples allowed: the columns are the
    last axis, the rows the one before); NaN where either side is constant or has fewer than 2 values."""
    n = mask.sum(axis=-2)
    with np.errstate(invalid="ignore", divide="ignore"):
        mx = np.where(mask, x, 0).sum(axis=-2, keepdims=True) / mask.sum(axis=-2, keepdims=True)
        my = np.where(mask, y, 0).sum(axis=-2, keepdims=True) / mask.sum(axis=-2, keepdims=True)
        cx, cy = np.where(mask, x - mx, 0), np.where(mask, y - my, 0)
        sxx, syy = (cx * cx).sum(axis=-2), (cy * cy).sum(axis=-2)
        r = (cx * cy).sum(axis=-2) / np.sqrt(sxx * syy)
    constant = np.zeros(np.broadcast_shapes(x.shape, y.shape)[:-2] + x.shape[-1:], dtype=bool)
    for values in (x, y):
        constant = constant | (np.where(mask, values, np.inf).min(axis=-2)
                               == np.where(mask, values, -np.inf).max(axis=-2))
    return np.where((n >= 2) & ~constant, np.clip(r, -1.0, 1.0), np.nan)


def pearson(gold, metric, grouped: bool = True) -> float:
    """Pearson r: per item over its systems, averaged over the items where it is defined (grouped), or over
    all judged outputs (ungrouped); NaN when it is nowhere defined (a constant metric)."""
    gold, metric = _checked(gold, metric)
    if grouped:
        r = _rows_pearson(gold, metric, ~np.isnan(gold))
        return float(np.mean(r[~np.isnan(r)])) if (~np.isnan(r)).any() else float("nan")
    h, m = _flat(gold, metric)
    if np.ptp(h) == 0 or np.ptp(m) == 0:
        return float("nan")
    from scipy import stats
    return float(stats.pearsonr(h, m)[0])


def kendall(gold, metric, grouped: bool = True) -> float:
    """Kendall τ_b: per item over its systems, averaged over the items where it is defined (an item whose human
    or metric scores are all equal has none), or over all judged outputs (ungrouped, ``scipy.stats.kendalltau``).
    Per item τ_b = (C − D) / sqrt((N − T_m)(N − T_h)), T counting the pairs each side ties (Kendall 1945)."""
    gold, metric = _checked(gold, metric)
    if not grouped:
        h, m = _flat(gold, metric)
        from scipy import stats
        return float(stats.kendalltau(h, m, variant="b")[0])
    pairs = item_pairs(gold, metric)
    v = pairs.valid
    sh, sm = np.sign(pairs.dh), np.sign(pairs.dm)
    con, dis = (v & (sh * sm > 0)).sum(axis=0), (v & (sh * sm < 0)).sum(axis=0)
    n = v.sum(axis=0)
    tie_m, tie_h = (v & (sm == 0)).sum(axis=0), (v & (sh == 0)).sum(axis=0)
    defined = (n > 0) & (tie_m < n) & (tie_h < n)
    if not defined.any():
        return float("nan")
    tau = (con - dis)[defined] / np.sqrt((n - tie_m)[defined].astype(float)) / np.sqrt((n - tie_h)[defined])
    return float(np.mean(tau))


# --------------------------------------------------------------------------- system level

def system_means(matrix, gold) -> np.ndarray:
    """Each system's mean over the items where ``gold`` is judged."""
    matrix, gold = np.asarray(matrix, dtype=np.float64), np.asarray(gold, dtype=np.float64)
    rated = ~np.isnan(gold)
    return np.where(rated, matrix, 0).sum(axis=1) / rated.sum(axis=1)


def pairwise_accuracy(gold_vector, metric_vector) -> float:
    """Pairwise accuracy of two rankings (Kocmi et al. 2021, §3.1): the share of pairs whose order (sign of the
    difference, a tie included) is the same in both; mt-metrics-eval ``stats.Agreement``."""
    g, m = np.asarray(gold_vector, dtype=np.float64), np.asarray(metric_vector, dtype=np.float64)
    a, b = np.triu_indices(len(g), k=1)
    if not len(a):
        return float("nan")
    return float(np.mean(np.sign(g[a] - g[b]) == np.sign(m[a] - m[b])))


def pearson_vector(gold_vector, metric_vector) -> float:
    """Pearson r of two vectors; NaN when either is constant."""
    g, m = np.asarray(gold_vector, dtype=np.float64), np.asarray(metric_vector, dtype=np.float64)
    if len(g) < 2 or np.ptp(g) == 0 or np.ptp(m) == 0:
        return float("nan")
    from scipy import stats
    return float(stats.pearsonr(g, m)[0])


def agreement_rows(gold_vector, stack: np.ndarray) -> np.ndarray:
    """:func:`pairwise_accuracy` of each row of ``stack`` (resamples × systems) with one gold vector."""
    g = np.asarray(gold_vector, dtype=np.float64)
    a, b = np.triu_indices(len(g), k=1)
    return (np.sign(g[a] - g[b])[None, :] == np.sign(stack[:, a] - stack[:, b])).mean(axis=1)


def pearson_rows(gold, stack: np.ndarray) -> np.ndarray:
    """Pearson r per column of ``gold`` (rows × columns; NaN where not judged) with each resample of ``stack``
    (resamples × rows × columns), averaged over the columns where it is defined: the item-grouped r of each
    resample, or with one column the r over all rows. NaN for a resample where it is nowhere defined."""
    gold = np.asarray(gold, dtype=np.float64)
    r = _rows_pearson(gold, stack, ~np.isnan(gold))
    defined = ~np.isnan(r)
    with np.errstate(invalid="ignore"):
        return np.where(defined.any(axis=-1), np.where(defined, r, 0).sum(axis=-1) / defined.sum(axis=-1), np.nan)


# --------------------------------------------------------------------------- significance

def swap_test(disagree: np.ndarray, delta: np.ndarray, weights: np.ndarray, n_resamples: int,
              rng: np.random.Generator) -> float:
    """p-value that the first of two metrics has the higher pairwise accuracy by chance, swapping their pair
    outcomes (mt-metrics-eval ``PairwisePermutationSigDiff``; WMT22–24).

    Per group g (an item, or all pairs ungrouped): ``disagree[g]`` pairs where exactly one metric is right,
    ``delta[g]`` = (pairs the first gets right) − (pairs the second gets right), ``weights[g]`` the weight of
    one pair in the statistic (1 / (groups · pairs of g), any common multiple of it). Swapping each pair's two
    outcomes with probability ½ changes the difference only on disagreeing pairs, each by ±1: a resample's
    difference in group g is 2·B_g − disagree[g] with B_g ~ Binomial(disagree[g], ½), drawn directly.
    Returns the share of resamples whose weighted difference is at least the observed one."""
    disagree, delta, weights = (np.asarray(x) for x in (disagree, delta, weights))
    observed = (delta * weights).sum()
    hits = 0
    for start in range(0, n_resamples, 100):
        k = min(100, n_resamples - start)
        drawn = rng.binomial(disagree[None, :], 0.5, size=(k, len(disagree)))
        hits += int((((2 * drawn - disagree[None, :]) * weights[None, :]).sum(axis=1) >= observed).sum())
    return hits / n_resamples


def permutation_test(statistic: Callable[[np.ndarray], np.ndarray], first: np.ndarray, second: np.ndarray,
                     n_resamples: int, rng: np.random.Generator) -> float:
    """p-value that ``statistic`` of the first scores beats the second's by chance: PERM-BOTH (Deutsch et al.,
    "A Statistical Analysis of Summarization Evaluation Metrics", TACL 2021; mt-metrics-eval
    ``PermutationSigDiff``). Both score arrays (the same units, NaN where not judged) are z-normalised over their
    judged units, then each unit's two scores are swapped with probability ½. ``statistic`` maps a stack of
    score arrays (resamples first) to one value each. Returns the share of resamples whose difference is at
    least the observed one."""
    first, second = np.asarray(first, dtype=np.float64), np.asarray(second, dtype=np.float64)
    judged = ~np.isnan(first)

    def z(x):
        values = x[judged]
        spread = values.std()
        return np.where(judged, (x - values.mean()) / (spread if spread > 0 else 1.0), np.nan)

    a, b = z(first), z(second)
    observed = statistic(np.stack([a, b]))
    delta = observed[0] - observed[1]
    hits = 0
    for start in range(0, n_resamples, 50):
        k = min(50, n_resamples - start)
        swap = rng.random((k,) + a.shape) < 0.5
        one, two = np.where(swap, b, a), np.where(swap, a, b)
        values = statistic(np.concatenate([one, two]))
        with np.errstate(invalid="ignore"):
            hits += int(np.sum(values[:k] - values[k:] >= delta - 1e-12))
    return hits / n_resamples


def clusters(p_values: np.ndarray, alpha: float = DEFAULT_ALPHA) -> list[int]:
    """Significance clusters of metrics sorted best first (mt-metrics-eval ``AssignRanks``; WMT22–24):
    ``p_values[k, i]`` (k < i) is the p-value that metric k is better than metric i only by chance. Metric i
    opens a new cluster when some metric already in the current cluster is significantly better (p < alpha, as
    the WMT findings state it; AssignRanks compares p <= alpha); returns each metric's cluster, 1 for the best."""
    p_values = np.asarray(p_values, dtype=np.float64)
    out, current, start = [], 1, 0
    for i in range(p_values.shape[0]):
        if (p_values[start:i, i] < alpha).any():
            current, start = current + 1, i
        out.append(current)
    return out
