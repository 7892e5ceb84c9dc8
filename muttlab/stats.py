"""Statistics over plain arrays: no files, no metrics. Every random procedure takes an explicit seed.

What is here:

* correlations — Pearson, Spearman, Kendall τ-b and τ-c (:func:`correlation`, :func:`correlate`), also
  against items rated several times (:func:`correlation_with_ratings`, :class:`RatingsCorrelator`) with a
  bootstrap over items (:func:`bootstrap_over_items`);
* bootstrap confidence intervals, percentile and BCa (Efron & Tibshirani 1993, ch. 13 and 14.3), for a
  correlation and for an accuracy (:func:`bootstrap_ci`, :func:`correlate`, :func:`accuracy_ci`);
* is metric A closer to the humans than metric B?  A paired bootstrap (:func:`paired_bootstrap`) and
  Williams' test for dependent correlations (:func:`williams_test`, Williams 1959; Graham & Baldwin 2014);
* do two metrics fail different trials?  McNemar's test (:func:`mcnemar`, McNemar 1947);
* the Wilson interval for a proportion (:func:`wilson_interval`), used by the accuracy table.

The tests, intervals and coefficients are scipy's. Every bootstrap is ``scipy.stats.bootstrap`` over the item
indices: scipy draws the resamples (``rng.integers(0, n, (n_resamples, n))`` with
``rng = np.random.default_rng(seed)``) and computes the interval; the statistic it calls is ours, vectorised
over rows of item indices (Kendall's τ of all resamples at once by counting, :func:`resampled_correlations`).

``scipy.stats`` is imported by the functions that use it, not with this module: it costs 1-2 s, which a
``muttlab run`` printing its grid to the terminal never needs (the dashboard pays it in its warm-up).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Callable

import numpy as np

METHODS = ("pearson", "spearman", "kendall_b", "kendall_c")
CI_METHODS = ("percentile", "bca")
DEFAULT_N_BOOT = 1000
DEFAULT_CONFIDENCE = 0.95
# Above this many observations BCa's acceleration comes from a grouped (delete-a-block) jackknife: scipy's
# leave-one-out jackknife of ~17,000 Flickr8K samples would hold a 17,000 x 16,999 index matrix (2.3 GB) and
# cost 17,000 tau computations.
JACKKNIFE_MAX_N = 2000
JACKKNIFE_GROUPS = 500
# Elements per block of a vectorised statistic: bounds memory at a few tens of MB.
_BLOCK_ELEMENTS = 2_000_000


def wilson_interval(successes, n, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval for a binomial proportion (Wilson 1927; Newcombe 1998, method 3), as fractions
    in [0, 1]: ``scipy.stats.binomtest(k, n).proportion_ci(confidence, method="wilson")`` of each count.

    Preferred over the normal approximation because accuracies near 0% or 100% are common here.

    Returns:
      ``(low, high)``, arrays of the broadcast shape of ``successes`` and ``n``; NaN where ``n`` is 0.
    """
    from scipy.stats import binomtest

    successes, n = np.broadcast_arrays(np.asarray(successes), np.asarray(n))
    low, high = np.full(n.shape, np.nan), np.full(n.shape, np.nan)
    for cell in np.ndindex(n.shape):
        if n[cell] > 0:
            low[cell], high[cell] = binomtest(int(successes[cell]), int(n[cell])).proportion_ci(
                confidence, method="wilson")
    return low, high


# --------------------------------------------------------------------------- result types

@dataclass(frozen=True)
class Correlation:
    """A correlation coefficient with its bootstrap confidence interval.

    ``ci_low``/``ci_high`` are NaN when no interval was asked for (``n_boot=0``); ``p_value`` is the
    two-sided p-value of the coefficient's own test in scipy (no correlation), NaN when undefined.
    """

    method: str
    value: float
    ci_low: float
    ci_high: float
    n: int
    p_value: float = float("nan")
    ci_method: str = "percentile"
    confidence: float = DEFAULT_CONFIDENCE
    n_boot: int = DEFAULT_N_BOOT
    seed: int = 0


@dataclass(frozen=True)
class Interval:
    """A point estimate and its bootstrap interval."""

    value: float
    ci_low: float
    ci_high: float
    n: int
    ci_method: str = "percentile"
    confidence: float = DEFAULT_CONFIDENCE
    n_boot: int = DEFAULT_N_BOOT
    seed: int = 0


@dataclass(frozen=True)
class PairedComparison:
    """Metric A against metric B on the same human scores (paired bootstrap).

    ``diff = r_a - r_b``; ``ci_low``/``ci_high`` bound it; ``p_value`` is the one-sided bootstrap p-value of
    "A is not better than B" (the share of resamples where A's correlation is not above B's).
    """

    method: str
    r_a: float
    r_b: float
    diff: float
    ci_low: float
    ci_high: float
    p_value: float
    n: int
    n_boot: int
    seed: int


@dataclass(frozen=True)
class WilliamsResult:
    """Williams' test that r12 > r13 given r23 (one-sided unless ``two_sided``); t has n - 3 d.o.f."""

    r12: float
    r13: float
    r23: float
    n: int
    t: float
    df: int
    p_value: float
    two_sided: bool = False


@dataclass(frozen=True)
class McNemarResult:
    """McNemar's test on paired pass/fail outcomes.

    ``b``: trials A passed and B failed; ``c``: A failed and B passed. ``method`` is ``exact`` (two-sided
    binomial test of b against Bin(b + c, 1/2)) or ``chi2`` (with Edwards' continuity correction).
    """

    b: int
    c: int
    n: int
    statistic: float
    p_value: float
    method: str


# --------------------------------------------------------------------------- correlations

def _as_pair(x, y) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(x, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=np.float64).ravel()
    if x.shape != y.shape:
        raise ValueError(f"x and y must have the same length, got {x.size} and {y.size}")
    if x.size < 2:
        raise ValueError(f"a correlation needs at least 2 observations, got {x.size}")
    if np.isnan(x).any() or np.isnan(y).any():
        raise ValueError("x and y must not contain NaN")
    return x, y


def _check_method(method: str) -> str:
    if method not in METHODS:
        raise ValueError(f"unknown correlation method {method!r}; use one of {', '.join(METHODS)}")
    return method


def correlation(x, y, method: str = "pearson") -> float:
    """The correlation coefficient of x and y: ``pearson``, ``spearman``, ``kendall_b`` or ``kendall_c``.

    Kendall's τ-b corrects for ties in both variables; τ-c (Stuart 1953) for rectangular tables, as used
    for Flickr8K-Expert's 4-point ratings (Hodosh et al. 2013; Elliott & Keller 2014). NaN when a variable is
    constant.
    """
    return _correlation_with_p(*_as_pair(x, y), _check_method(method))[0]


def _correlation_with_p(x: np.ndarray, y: np.ndarray, method: str) -> tuple[float, float]:
    from scipy import stats

    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan"), float("nan")
    if method == "pearson":
        res = stats.pearsonr(x, y)
    elif method == "spearman":
        res = stats.spearmanr(x, y)
    else:
        res = stats.kendalltau(x, y, variant=method[-1])
    return float(res.statistic), float(res.pvalue)


def pearson_rows(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """Pearson's r of each row pair of two ``(k, n)`` arrays (NaN for a constant row): k values.

    Spearman's rho of rows is this on ``scipy.stats.rankdata(..., axis=-1)`` ranks.
    """
    xc = xs - xs.mean(axis=-1, keepdims=True)
    yc = ys - ys.mean(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.einsum("...i,...i->...", xc, yc) / np.sqrt(
            np.einsum("...i,...i->...", xc, xc) * np.einsum("...i,...i->...", yc, yc))


# Up to this many units, τ-b of all assignments is computed from (assignments, units, units) sign matrices.
_PAIRWISE_MAX_UNITS = 400


def kendall_b_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Kendall's τ-b (as scipy's kendalltau) of each row pair of two ``(k, n)`` matrices; NaN for a constant row.

    Up to :data:`_PAIRWISE_MAX_UNITS` columns, all rows at once from sign matrices; beyond, scipy row by row.
    """
    k, u = a.shape
    if u > _PAIRWISE_MAX_UNITS:
        from scipy import stats

        out = np.empty(k)
        for i in range(k):
            out[i] = stats.kendalltau(a[i], b[i]).statistic if np.ptp(a[i]) and np.ptp(b[i]) else np.nan
        return out
    out = np.empty(k)
    pairs = u * (u - 1) / 2
    block = max(1, 4_000_000 // (u * u))
    for start in range(0, k, block):
        sa = np.sign(a[start:start + block, :, None] - a[start:start + block, None, :])
        sb = np.sign(b[start:start + block, :, None] - b[start:start + block, None, :])
        s = np.einsum("kij,kij->k", sa, sb) / 2
        ties_a = (np.count_nonzero(sa == 0, axis=(1, 2)) - u) / 2
        ties_b = (np.count_nonzero(sb == 0, axis=(1, 2)) - u) / 2
        with np.errstate(divide="ignore", invalid="ignore"):
            out[start:start + block] = s / np.sqrt((pairs - ties_a) * (pairs - ties_b))
    return out


def _rows_statistic(method: str) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """f(xs, ys) -> one coefficient per row of two (k, n) matrices."""
    if method == "pearson":
        return pearson_rows
    if method == "spearman":
        from scipy.stats import rankdata
        return lambda xs, ys: pearson_rows(rankdata(xs, axis=-1), rankdata(ys, axis=-1))
    if method == "kendall_b":
        return kendall_b_rows
    return lambda xs, ys: np.array([correlation(x, y, "kendall_c") for x, y in zip(xs, ys)])


# --------------------------------------------------------------------------- bootstrap machinery

# Kendall's tau on a resample costs one O(n log n) scipy call; when one variable takes few values (human
# ratings: 4 expert levels, a dozen CrowdFlower fractions) all resamples are counted at once instead.
KENDALL_FEW_LEVELS = 64


def _group_sums(weights: np.ndarray, groups: np.ndarray, n_groups: int) -> np.ndarray:
    """Per-row sums of ``weights`` (k, n) over column groups (n,) -> (k, n_groups)."""
    order = np.argsort(groups, kind="stable")
    sorted_groups = groups[order]
    starts = np.flatnonzero(np.r_[True, sorted_groups[1:] != sorted_groups[:-1]])
    out = np.zeros((weights.shape[0], n_groups))
    out[:, sorted_groups[starts]] = np.add.reduceat(weights[:, order], starts, axis=1)
    return out


def _kendall_from_counts(x: np.ndarray, y: np.ndarray, counts: np.ndarray, variant: str) -> np.ndarray:
    """Kendall's tau (scipy's tau-b / tau-c) of each resample given as multiplicities ``counts`` (k, n).

    ``y`` must take few distinct values. Concordant minus discordant pairs are counted level by level of
    y: each item of level b is compared, through cumulative sums over the sorted x values, with the weight of
    all items of lower levels (Knight 1966's idea of counting instead of comparing pairs).
    """
    ux, gx = np.unique(x, return_inverse=True)
    uy, gy = np.unique(y, return_inverse=True)
    n_x, n_y = ux.size, uy.size
    total = counts.sum(axis=1)
    per_x = _group_sums(counts, gx, n_x)
    per_y = _group_sums(counts, gy, n_y)
    pairs = total * (total - 1) / 2
    x_ties = np.sum(per_x * (per_x - 1) / 2, axis=1)
    y_ties = np.sum(per_y * (per_y - 1) / 2, axis=1)
    lower = np.zeros((counts.shape[0], n_x + 1))  # column g + 1: weight of lower levels at x group g
    s = np.zeros(counts.shape[0])
    for level in range(n_y):
        items = np.flatnonzero(gy == level)
        cum = np.cumsum(lower, axis=1)  # cum[:, g]: weight of lower levels with x group < g
        g = gx[items]
        less = cum[:, g]
        greater = cum[:, -1:] - cum[:, g + 1]
        s += np.sum(counts[:, items] * (less - greater), axis=1)
        lower[:, 1:] += _group_sums(counts[:, items], g, n_x)
    with np.errstate(divide="ignore", invalid="ignore"):
        if variant == "b":
            tau = s / np.sqrt((pairs - x_ties) * (pairs - y_ties))
        else:
            m = np.minimum(np.count_nonzero(per_x, axis=1), np.count_nonzero(per_y, axis=1))
            tau = 2 * s / (total ** 2 * (m - 1) / m)
    constant = (x_ties == pairs) | (y_ties == pairs)
    return np.where(constant, np.nan, tau)


def _kendall_bootstrap(x: np.ndarray, y: np.ndarray, index_rows: np.ndarray, variant: str,
                       between: Callable[[], None]) -> np.ndarray:
    if np.unique(y).size > np.unique(x).size:
        x, y = y, x  # tau is symmetric; count over the variable with fewer levels
    n = x.size
    out = np.empty(index_rows.shape[0])
    for block in _blocks(index_rows.shape[0], 4 * n):
        between()
        idx = index_rows[block]
        flat = (idx + n * np.arange(idx.shape[0])[:, None]).ravel()
        counts = np.bincount(flat, minlength=idx.shape[0] * n).reshape(idx.shape[0], n).astype(np.float64)
        out[block] = _kendall_from_counts(x, y, counts, variant)
    return out


def resampled_correlations(x: np.ndarray, y: np.ndarray, method: str, index_rows: np.ndarray,
                           between: Callable[[], None] = lambda: None) -> np.ndarray:
    """The correlation of ``(x[r], y[r])`` for each row ``r`` of item indices ``index_rows`` ``(k, m)``: k values,
    each equal to :func:`correlation` of that resample (NaN where a variable is constant in it).

    This is the statistic :func:`correlate` and :func:`paired_bootstrap` hand to ``scipy.stats.bootstrap``.
    Kendall's τ with a variable of few levels is counted for all rows at once (:func:`_kendall_from_counts`):
    1,000 scipy calls on 17,000-48,000 samples would take minutes. The rows are taken in blocks, and
    ``between()`` is called before each: where a caller lets other work pass (the dashboard's queue).
    """
    if method.startswith("kendall") and min(np.unique(x).size, np.unique(y).size) <= KENDALL_FEW_LEVELS:
        return _kendall_bootstrap(x, y, index_rows, method[-1], between)
    return _statistic_on_rows(_rows_statistic(method), (x, y), index_rows, between)


def _blocks(n_rows: int, n_cols: int):
    size = max(1, _BLOCK_ELEMENTS // max(1, n_cols))
    for start in range(0, n_rows, size):
        yield slice(start, min(n_rows, start + size))


def _statistic_on_rows(stat_rows, arrays: tuple[np.ndarray, ...], index_rows: np.ndarray,
                       between: Callable[[], None] = lambda: None) -> np.ndarray:
    out = np.empty(index_rows.shape[0])
    for block in _blocks(*index_rows.shape):
        between()
        idx = index_rows[block]
        out[block] = stat_rows(*(a[idx] for a in arrays))
    return out


class _Distribution:
    """A bootstrap distribution handed back to ``scipy.stats.bootstrap`` (its ``bootstrap_result``)."""

    def __init__(self, values: np.ndarray):
        self.bootstrap_distribution = values


def _on_items(on_rows: Callable[[np.ndarray], np.ndarray]):
    """``on_rows`` (rows of item indices -> one value each) as the vectorised statistic scipy calls: with a
    ``(k, m)`` array of indices, or with one ``(m,)`` row for the estimate on the data."""
    def statistic(index_rows: np.ndarray, axis: int = -1):
        values = on_rows(np.atleast_2d(index_rows))
        return values if np.ndim(index_rows) > 1 else values[0]
    return statistic


def _on_groups(on_rows: Callable[[np.ndarray], np.ndarray], n: int, seed: int):
    """The statistic of the items in each row of block numbers: leaving one of :data:`JACKKNIFE_GROUPS` seeded
    blocks out is the delete-a-block jackknife BCa takes its acceleration from above :data:`JACKKNIFE_MAX_N`."""
    blocks = np.random.default_rng(seed + 1).permutation(n) % JACKKNIFE_GROUPS

    def rows(group_rows: np.ndarray) -> np.ndarray:
        return np.array([on_rows(np.flatnonzero(np.isin(blocks, row))[None, :])[0] for row in group_rows])
    return _on_items(rows)


def _bootstrap(on_rows: Callable[[np.ndarray], np.ndarray], n: int, n_boot: int, confidence: float,
               ci_method: str, seed: int) -> tuple[float, float, np.ndarray]:
    """``scipy.stats.bootstrap`` over ``n`` items: the interval of ``on_rows`` (rows of item indices -> one value
    each) and its bootstrap distribution, ``(low, high, distribution)``.

    Resamples on which the statistic is undefined (NaN: a constant resample has no correlation) are left out
    of the interval. BCa's jackknife leaves out one item, or one of :data:`JACKKNIFE_GROUPS` blocks above
    :data:`JACKKNIFE_MAX_N` items; a BCa interval is NaN where scipy's is (a constant jackknife, or a
    jackknife estimate that is NaN); a constant distribution is its own interval.
    """
    from scipy import stats

    # The indices as the data: scipy resamples them and the statistic reads the items. The smallest integer type
    # keeps the resampled copy scipy makes of them small (1,000 resamples of 47,830 CrowdFlower samples: 96 MB
    # as uint16, 383 MB as int64).
    items = np.arange(n, dtype=np.min_scalar_type(n - 1))
    statistic = _on_items(on_rows)
    # A NaN interval is the answer where scipy warns of a degenerate distribution or divides 0 by 0.
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        result = stats.bootstrap((items,), statistic, n_resamples=n_boot, confidence_level=confidence,
                                 method="percentile", vectorized=True, rng=np.random.default_rng(seed))
        distribution = result.bootstrap_distribution
        defined = distribution[~np.isnan(distribution)]
        if defined.size == 0:
            return float("nan"), float("nan"), distribution
        if np.ptp(defined) == 0:  # every resample gives one value (all trials passed): that is the interval
            return float(defined[0]), float(defined[0]), distribution
        if ci_method == "bca" or defined.size < distribution.size:
            if ci_method == "bca" and n > JACKKNIFE_MAX_N:
                items, statistic = np.arange(JACKKNIFE_GROUPS), _on_groups(on_rows, n, seed)
            result = stats.bootstrap((items,), statistic, n_resamples=0, bootstrap_result=_Distribution(defined),
                                     confidence_level=confidence, method=ci_method, vectorized=True)
    interval = result.confidence_interval
    return float(interval.low), float(interval.high), distribution


def _check_ci(ci_method: str, confidence: float, n_boot: int) -> None:
    if ci_method not in CI_METHODS:
        raise ValueError(f"unknown interval method {ci_method!r}; use one of {', '.join(CI_METHODS)}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    if n_boot < 0:
        raise ValueError(f"n_boot must be >= 0, got {n_boot}")


def bootstrap_ci(statistic: Callable[..., np.ndarray], arrays, n_boot: int = DEFAULT_N_BOOT,
                 confidence: float = DEFAULT_CONFIDENCE, ci_method: str = "percentile",
                 seed: int = 0) -> Interval:
    """Paired bootstrap interval of any statistic of aligned arrays (``scipy.stats.bootstrap``, paired).

    Args:
      statistic: vectorised over rows: given arrays of shape ``(k, n)`` (one per input, aligned), returns
        ``k`` values. It is also called once with ``(1, n)`` arrays for the point estimate.
      arrays: the aligned 1-d inputs (e.g. ``(metric_scores, human_scores)``).
      ci_method: ``percentile`` or ``bca``.
    Returns:
      :class:`Interval` with the estimate on the full data and the interval (NaN with ``n_boot=0`` or an
      undefined estimate).
    """
    _check_ci(ci_method, confidence, n_boot)
    arrays = tuple(np.asarray(a, dtype=np.float64).ravel() for a in arrays)
    n = arrays[0].size
    if any(a.size != n for a in arrays):
        raise ValueError("bootstrap inputs must all have the same length")
    theta = float(statistic(*(a[None, :] for a in arrays))[0])
    low = high = float("nan")
    if n_boot and n == 1 and not np.isnan(theta):
        low = high = theta  # every resample of one observation is the data (scipy needs two)
    elif n_boot and not np.isnan(theta):
        low, high, _ = _bootstrap(lambda rows: _statistic_on_rows(statistic, arrays, rows), n, n_boot, confidence,
                                  ci_method, seed)
    return Interval(theta, low, high, n, ci_method, confidence, n_boot, seed)


def correlate(x, y, method: str = "pearson", n_boot: int = DEFAULT_N_BOOT,
              confidence: float = DEFAULT_CONFIDENCE, ci_method: str = "percentile", seed: int = 0,
              between: Callable[[], None] = lambda: None) -> Correlation:
    """Correlation of x and y with a paired bootstrap CI (percentile or BCa, ``scipy.stats.bootstrap``);
    ``between()`` is called between blocks of resamples (:func:`resampled_correlations`).

    Returns:
      :class:`Correlation`; with ``n_boot=0`` the interval is NaN.
    """
    x, y = _as_pair(x, y)
    _check_method(method)
    _check_ci(ci_method, confidence, n_boot)
    value, p = _correlation_with_p(x, y, method)
    low = high = float("nan")
    if n_boot and not np.isnan(value):
        low, high, _ = _bootstrap(lambda rows: resampled_correlations(x, y, method, rows, between), x.size, n_boot,
                                  confidence, ci_method, seed)
    return Correlation(method, value, low, high, int(x.size), p, ci_method, confidence, n_boot, seed)


def accuracy_ci(passed, n_boot: int = DEFAULT_N_BOOT, confidence: float = DEFAULT_CONFIDENCE,
                ci_method: str = "percentile", seed: int = 0) -> Interval:
    """Accuracy (fraction of True) of a pass/fail vector with a bootstrap interval, as fractions in [0, 1].

    The Wilson interval (:func:`wilson_interval`) is the closed-form alternative the accuracy table uses.
    """
    values = np.asarray(passed, dtype=np.float64).ravel()
    if values.size == 0:
        raise ValueError("accuracy of an empty vector is undefined")
    return bootstrap_ci(lambda v: v.mean(axis=-1), (values,), n_boot, confidence, ci_method, seed)


# --------------------------------------------------------------------------- comparing two metrics

def paired_bootstrap(human, metric_a, metric_b, method: str = "pearson", n_boot: int = DEFAULT_N_BOOT,
                     confidence: float = DEFAULT_CONFIDENCE, seed: int = 0) -> PairedComparison:
    """Does metric A correlate better with the humans than metric B?  Paired bootstrap.

    Each resample draws the same items for both metrics, so the two correlations stay dependent as they
    are on the real data (the paired bootstrap of Koehn 2004, applied to correlations as in
    Graham & Baldwin 2014 §4 / Deutsch et al. 2021). Returns the difference ``r_a - r_b``, its percentile
    interval (``scipy.stats.bootstrap``) and the one-sided p-value (share of resamples with ``r_a <= r_b``).
    """
    human, a = _as_pair(human, metric_a)
    _, b = _as_pair(human, metric_b)
    _check_method(method)
    _check_ci("percentile", confidence, n_boot)
    if n_boot < 1:
        raise ValueError("a paired bootstrap needs n_boot >= 1")

    def difference(rows: np.ndarray) -> np.ndarray:
        return resampled_correlations(a, human, method, rows) - resampled_correlations(b, human, method, rows)

    low, high, diffs = _bootstrap(difference, human.size, n_boot, confidence, "percentile", seed)
    diffs = diffs[~np.isnan(diffs)]
    p = float(np.mean(diffs <= 0)) if diffs.size else float("nan")
    point_a = correlation(a, human, method)
    point_b = correlation(b, human, method)
    return PairedComparison(method, point_a, point_b, point_a - point_b, low, high, p, int(human.size), n_boot,
                            seed)


def williams_test(r12: float, r13: float, r23: float, n: int, two_sided: bool = False) -> WilliamsResult:
    """Williams' test (Williams 1959) for the difference of two dependent correlations sharing variable 1.

    Variable 1 is the human score, 2 and 3 are the metrics: tests whether r12 > r13 given r23 (the metrics'
    correlation with each other), as Graham & Baldwin (2014, §3) recommend for metric comparison:

        t(n-3) = (r12 - r13) sqrt((n-1)(1+r23)) / sqrt(2K (n-1)/(n-3) + ((r12+r13)/2)^2 (1-r23)^3),
        K = 1 - r12^2 - r13^2 - r23^2 + 2 r12 r13 r23.

    Returns:
      :class:`WilliamsResult`; the p-value is one-sided (H1: r12 > r13) unless ``two_sided``.
    """
    if n <= 3:
        raise ValueError(f"Williams' test needs n > 3 observations, got {n}")
    for name, r in (("r12", r12), ("r13", r13), ("r23", r23)):
        if not -1 <= r <= 1:
            raise ValueError(f"{name} must be a correlation in [-1, 1], got {r}")
    k = 1 - r12 ** 2 - r13 ** 2 - r23 ** 2 + 2 * r12 * r13 * r23
    denom = np.sqrt(2 * k * (n - 1) / (n - 3) + ((r12 + r13) ** 2 / 4) * (1 - r23) ** 3)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = float((r12 - r13) * np.sqrt((n - 1) * (1 + r23)) / denom)
    df = n - 3
    from scipy.stats import t as student_t
    p = float(2 * student_t.sf(abs(t), df)) if two_sided else float(student_t.sf(t, df))
    return WilliamsResult(r12, r13, r23, int(n), t, df, p, two_sided)


def compare_williams(human, metric_a, metric_b, method: str = "pearson", two_sided: bool = False) -> WilliamsResult:
    """Williams' test of corr(human, A) > corr(human, B) on the data, with corr(A, B) from the same data."""
    human, a = _as_pair(human, metric_a)
    _, b = _as_pair(human, metric_b)
    return williams_test(correlation(human, a, method), correlation(human, b, method),
                         correlation(a, b, method), human.size, two_sided)


def mcnemar(passed_a, passed_b, exact: bool | None = None) -> McNemarResult:
    """McNemar's test (McNemar 1947): do metrics A and B pass different trials of the same suite?

    Only the discordant trials count: b (A passes, B fails) and c (A fails, B passes). With ``exact`` (the
    default when b + c < 25) the p-value is the two-sided binomial test of b ~ Bin(b + c, 1/2); otherwise
    the chi-square statistic (|b - c| - 1)^2 / (b + c) with one degree of freedom (Edwards 1948): scipy's
    ``binomtest(b, b + c).pvalue`` and ``chi2.sf(statistic, 1)``.
    """
    from scipy import stats

    a = np.asarray(passed_a, dtype=bool).ravel()
    b_arr = np.asarray(passed_b, dtype=bool).ravel()
    if a.shape != b_arr.shape:
        raise ValueError(f"pass/fail vectors must have the same length, got {a.size} and {b_arr.size}")
    b = int(np.count_nonzero(a & ~b_arr))
    c = int(np.count_nonzero(~a & b_arr))
    discordant = b + c
    if exact is None:
        exact = discordant < 25
    if discordant == 0:
        return McNemarResult(b, c, int(a.size), 0.0, 1.0, "exact" if exact else "chi2")
    if exact:
        return McNemarResult(b, c, int(a.size), float(min(b, c)), float(stats.binomtest(b, discordant).pvalue),
                             "exact")
    stat = (abs(b - c) - 1) ** 2 / discordant
    return McNemarResult(b, c, int(a.size), float(stat), float(stats.chi2.sf(stat, 1)), "chi2")


# --------------------------------------------------------------------------- ratings with several samples per item

class RatingsCorrelator:
    """:func:`correlation_with_ratings` against fixed human ratings ``(n, k)``, with the ratings' side
    precomputed: a callable taking ``n`` candidate scores and returning the correlation (NaN for constant
    scores).

    The multi-level grid search correlates thousands of score vectors with the same ratings
    (:func:`muttlab.learned.multilevel.search`). Pearson's r is two dot products with the centred ratings.
    Stuart's τ-c against few rating classes (Flickr8K-Expert's 1-4) is counted class pair by class pair with
    sorted searches, equal to ``scipy.stats.kendalltau(..., variant="c")`` (tested): scipy's kendalltau on
    the 8,499 samples of the Flickr8K dev half takes 2.0 ms a call against 0.44 ms here, so a tuning run's
    search would take 4-5 times as long (``benchmarks/bench_tau_c.py``). With more classes it is scipy's.
    """

    # Above this many rating classes τ-c is scipy's: the count below is quadratic in the classes.
    FEW_CLASSES = 16

    def __init__(self, kind: str, human: np.ndarray):
        if kind not in ("kendall_c", "pearson"):
            raise ValueError(f"unknown correlation {kind!r}")
        self.kind = kind
        self.human = np.asarray(human, dtype=np.float64)
        y = self.human.ravel()
        self.n = y.size
        self.classes = np.unique(y)
        self.fast = kind == "kendall_c" and self.classes.size <= self.FEW_CLASSES
        if self.fast:
            # Candidate indices once per rating equal to each class (a candidate rated 2, 2, 3 appears twice
            # under 2 and once under 3): the flattened samples without materialising them.
            self.members = [np.nonzero(self.human == c)[0] for c in self.classes]
        centred = self.human - y.mean()
        self.y_sum = centred.sum(axis=1)
        self.y_norm = float(np.sqrt((centred ** 2).sum()))

    def __call__(self, scores: np.ndarray) -> float:
        x = np.asarray(scores, dtype=np.float64)
        if np.ptp(x) == 0:
            return float("nan")
        if self.kind == "pearson":
            xc = x - x.mean()
            denom = np.sqrt(self.human.shape[1] * (xc ** 2).sum()) * self.y_norm
            return float(xc @ self.y_sum / denom) if denom > 0 else float("nan")
        if not self.fast:
            from scipy import stats
            return float(stats.kendalltau(np.repeat(x, self.human.shape[1]), self.human.ravel(),
                                          variant="c").statistic)
        m = min(np.unique(x).size, self.classes.size)
        if m < 2:
            return float("nan")
        groups = [np.sort(x[idx]) for idx in self.members]
        net = 0.0
        for a in range(len(groups)):
            for b in range(a + 1, len(groups)):
                lower, upper = groups[a], groups[b]
                net += float(np.searchsorted(lower, upper, side="left").sum()
                             - (lower.size - np.searchsorted(lower, upper, side="right")).sum())
        return 2.0 * net / (self.n * self.n * (m - 1) / m)


def correlation_with_ratings(scores: np.ndarray, human: np.ndarray, kind: str) -> float:
    """Correlation (``kendall_c`` or ``pearson``) of candidate scores with an ``(n, k)`` array of human
    ratings, each rating column its own sample (a caption's score counts once per expert): the correlation of
    ``np.repeat(scores, k)`` with ``human.ravel()`` (:class:`RatingsCorrelator`); NaN for constant scores."""
    return RatingsCorrelator(kind, human)(scores)


def bootstrap_over_items(statistic: Callable[[np.ndarray], float], n: int, seed: int,
                         n_resamples: int = DEFAULT_N_BOOT) -> Interval:
    """95% percentile bootstrap CI of ``statistic(indices)`` over ``n`` items resampled with replacement
    (``scipy.stats.bootstrap``); the unit is the item (a candidate), so a caption's three expert ratings stay
    together. ``statistic`` takes an array of item indices.

    Returns:
      :class:`Interval`: ``statistic`` of all items and its interval.
    """
    def rows(index_rows: np.ndarray) -> np.ndarray:
        return np.array([statistic(r) for r in index_rows.astype(np.int64)])

    return bootstrap_ci(rows, (np.arange(n),), n_boot=n_resamples, seed=seed)
