"""Statistics over plain arrays: no files, no metrics. Every random procedure takes an explicit seed.

What is here:

* correlations — Pearson, Spearman, Kendall τ-b and τ-c (:func:`correlation`, :func:`correlate`), also
  against items rated several times (:func:`correlation_with_ratings`, :class:`RatingsCorrelator`, a fast
  τ-c for few rating classes :func:`kendall_tau_c`) with a bootstrap over items (:func:`bootstrap_over_items`);
* bootstrap confidence intervals, percentile and BCa (Efron & Tibshirani 1993, ch. 13 and 14.3), for a
  correlation and for an accuracy (:func:`bootstrap_ci`, :func:`correlate`, :func:`accuracy_ci`);
* is metric A closer to the humans than metric B?  A paired bootstrap (:func:`paired_bootstrap`) and
  Williams' test for dependent correlations (:func:`williams_test`, Williams 1959; Graham & Baldwin 2014);
* do two metrics fail different trials?  McNemar's test (:func:`mcnemar`, McNemar 1947);
* the Wilson interval for a proportion (:func:`wilson_interval`), used by the accuracy table.

Bootstraps are vectorised: the resamples are one ``(n_boot, n)`` matrix of indices drawn with
``np.random.default_rng(seed).integers(0, n, (n_boot, n))`` — the same draw as
``scipy.stats.bootstrap(..., paired=True, rng=np.random.default_rng(seed))`` with ``batch=None``, so the
intervals here equal scipy's for the same seed (the tests check this).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np


class _LazyScipyStats:
    """``scipy.stats``, imported on first use: it costs ~2 s of start-up, and ``muttlab run`` needs only
    the Wilson interval from this module."""

    def __getattr__(self, name):
        from scipy import stats
        return getattr(stats, name)


_sp = _LazyScipyStats()

METHODS = ("pearson", "spearman", "kendall_b", "kendall_c")
CI_METHODS = ("percentile", "bca")
DEFAULT_N_BOOT = 1000
DEFAULT_CONFIDENCE = 0.95
# Above this many observations BCa's acceleration comes from a grouped (delete-a-block) jackknife: a
# leave-one-out jackknife of Kendall's tau over ~17,000 Flickr8K samples would cost 17,000 tau computations.
JACKKNIFE_MAX_N = 2000
JACKKNIFE_GROUPS = 500
# Elements per block of a vectorised bootstrap: bounds memory at a few tens of MB.
_BLOCK_ELEMENTS = 2_000_000


# scipy.special.ndtri(0.975), the quantile of the default 95% interval: the accuracy table of every
# `muttlab run` needs it, and importing scipy.special costs a few tenths of a second of start-up.
_Z_975 = 1.959963984540054


def _normal_quantile(p: float) -> float:
    """The standard normal quantile (``scipy.special.ndtri``, which ``scipy.stats.norm.ppf`` is)."""
    if p == 0.975:
        return _Z_975
    from scipy.special import ndtri
    return float(ndtri(p))


def wilson_interval(successes, n, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval for a binomial proportion (Wilson 1927), as fractions in [0, 1].

    Preferred over the normal approximation because accuracies near 0% or 100% are common here.
    """
    successes = np.asarray(successes, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    z = _normal_quantile(0.5 + confidence / 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = successes / n
        denom = 1 + z * z / n
        centre = (p + z * z / (2 * n)) / denom
        half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    low = np.where(n > 0, centre - half, np.nan)
    high = np.where(n > 0, centre + half, np.nan)
    return np.clip(low, 0, 1), np.clip(high, 0, 1)


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
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan"), float("nan")
    if method == "pearson":
        res = _sp.pearsonr(x, y)
    elif method == "spearman":
        res = _sp.spearmanr(x, y)
    else:
        res = _sp.kendalltau(x, y, variant=method[-1])
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
        out = np.empty(k)
        for i in range(k):
            out[i] = _sp.kendalltau(a[i], b[i]).statistic if np.ptp(a[i]) and np.ptp(b[i]) else np.nan
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
        return lambda xs, ys: pearson_rows(_sp.rankdata(xs, axis=-1), _sp.rankdata(ys, axis=-1))
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


def _kendall_bootstrap(x: np.ndarray, y: np.ndarray, index_rows: np.ndarray, variant: str) -> np.ndarray:
    if np.unique(y).size > np.unique(x).size:
        x, y = y, x  # tau is symmetric; count over the variable with fewer levels
    n = x.size
    out = np.empty(index_rows.shape[0])
    for block in _blocks(index_rows.shape[0], 4 * n):
        idx = index_rows[block]
        flat = (idx + n * np.arange(idx.shape[0])[:, None]).ravel()
        counts = np.bincount(flat, minlength=idx.shape[0] * n).reshape(idx.shape[0], n).astype(np.float64)
        out[block] = _kendall_from_counts(x, y, counts, variant)
    return out


def _resampled_statistic(method: str, x: np.ndarray, y: np.ndarray, index_rows: np.ndarray) -> np.ndarray:
    """The correlation on each resample (row of indices), by the fastest exact route."""
    if method.startswith("kendall") and min(np.unique(x).size, np.unique(y).size) <= KENDALL_FEW_LEVELS:
        return _kendall_bootstrap(x, y, index_rows, method[-1])
    return _statistic_on_rows(_rows_statistic(method), (x, y), index_rows)


def bootstrap_indices(n: int, n_boot: int, seed: int) -> np.ndarray:
    """The ``(n_boot, n)`` matrix of resampled indices: row b is bootstrap resample b (with replacement)."""
    return np.random.default_rng(seed).integers(0, n, (n_boot, n))


def _blocks(n_rows: int, n_cols: int):
    size = max(1, _BLOCK_ELEMENTS // max(1, n_cols))
    for start in range(0, n_rows, size):
        yield slice(start, min(n_rows, start + size))


def _statistic_on_rows(stat_rows, arrays: tuple[np.ndarray, ...], index_rows: np.ndarray) -> np.ndarray:
    out = np.empty(index_rows.shape[0])
    for block in _blocks(*index_rows.shape):
        idx = index_rows[block]
        out[block] = stat_rows(*(a[idx] for a in arrays))
    return out


def _jackknife(stat_rows, arrays: tuple[np.ndarray, ...], seed: int) -> np.ndarray:
    """Leave-one-out estimates, or leave-one-block-out when n > JACKKNIFE_MAX_N (seeded blocks)."""
    n = arrays[0].shape[0]
    if n <= JACKKNIFE_MAX_N:
        keep = np.broadcast_to(np.arange(n), (n, n))
        keep = keep[~np.eye(n, dtype=bool)].reshape(n, n - 1)
        return _statistic_on_rows(stat_rows, arrays, keep)
    groups = np.random.default_rng(seed + 1).permutation(n) % JACKKNIFE_GROUPS
    out = np.empty(JACKKNIFE_GROUPS)
    for g in range(JACKKNIFE_GROUPS):
        out[g] = stat_rows(*(a[groups != g][None, :] for a in arrays))[0]
    return out


def _percentile_of_score(samples: np.ndarray, score: float) -> float:
    # The "mean" kind of percentileofscore, as scipy.stats.bootstrap uses for BCa's z0.
    return (np.count_nonzero(samples < score) + np.count_nonzero(samples <= score)) / (2 * samples.size)


def _interval(theta_hat: float, boot: np.ndarray, jack: np.ndarray | None, confidence: float,
              ci_method: str) -> tuple[float, float]:
    """Percentile or BCa interval from the bootstrap distribution (Efron & Tibshirani 1993, eq. 14.10)."""
    boot = boot[~np.isnan(boot)]
    if boot.size == 0 or np.isnan(theta_hat):
        return float("nan"), float("nan")
    alpha = (1 - confidence) / 2
    if ci_method == "percentile":
        a1, a2 = alpha, 1 - alpha
    else:
        from scipy.special import ndtr, ndtri
        z0 = ndtri(_percentile_of_score(boot, theta_hat))
        jack = jack[~np.isnan(jack)]
        u = (len(jack) - 1) * (jack.mean() - jack)
        den = np.sum(u ** 2) / len(jack) ** 2
        accel = (np.sum(u ** 3) / len(jack) ** 3) / (6 * den ** 1.5) if den > 0 else 0.0
        z = ndtri(np.array([alpha, 1 - alpha]))
        a1, a2 = ndtr(z0 + (z0 + z) / (1 - accel * (z0 + z)))
        if np.isnan(a1) or np.isnan(a2):
            return float("nan"), float("nan")
    low, high = np.percentile(boot, [100 * a1, 100 * a2])
    return float(low), float(high)


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
    """Paired bootstrap interval of any statistic of aligned arrays.

    Args:
      statistic: vectorised over rows: given arrays of shape ``(k, n)`` (one per input, aligned), returns
        ``k`` values. It is also called once with ``(1, n)`` arrays for the point estimate.
      arrays: the aligned 1-d inputs (e.g. ``(metric_scores, human_scores)``).
      ci_method: ``percentile`` or ``bca``.
    Returns:
      :class:`Interval` with the estimate on the full data and the interval.
    """
    _check_ci(ci_method, confidence, n_boot)
    arrays = tuple(np.asarray(a, dtype=np.float64).ravel() for a in arrays)
    n = arrays[0].size
    if any(a.size != n for a in arrays):
        raise ValueError("bootstrap inputs must all have the same length")
    theta = float(statistic(*(a[None, :] for a in arrays))[0])
    if n_boot == 0:
        return Interval(theta, float("nan"), float("nan"), n, ci_method, confidence, n_boot, seed)
    boot = _statistic_on_rows(statistic, arrays, bootstrap_indices(n, n_boot, seed))
    jack = _jackknife(statistic, arrays, seed) if ci_method == "bca" else None
    low, high = _interval(theta, boot, jack, confidence, ci_method)
    return Interval(theta, low, high, n, ci_method, confidence, n_boot, seed)


def bootstrap_correlations(x, y, method: str = "pearson", n_boot: int = DEFAULT_N_BOOT,
                           seed: int = 0) -> np.ndarray:
    """The correlation on each of ``n_boot`` paired resamples of (x, y): an array of ``n_boot`` values."""
    x, y = _as_pair(x, y)
    return _resampled_statistic(_check_method(method), x, y, bootstrap_indices(x.size, n_boot, seed))


def correlate(x, y, method: str = "pearson", n_boot: int = DEFAULT_N_BOOT,
              confidence: float = DEFAULT_CONFIDENCE, ci_method: str = "percentile", seed: int = 0) -> Correlation:
    """Correlation of x and y with a paired bootstrap CI (percentile or BCa).

    Returns:
      :class:`Correlation`; with ``n_boot=0`` the interval is NaN.
    """
    x, y = _as_pair(x, y)
    _check_method(method)
    _check_ci(ci_method, confidence, n_boot)
    value, p = _correlation_with_p(x, y, method)
    low = high = float("nan")
    if n_boot:
        boot = _resampled_statistic(method, x, y, bootstrap_indices(x.size, n_boot, seed))
        jack = _jackknife(_rows_statistic(method), (x, y), seed) if ci_method == "bca" else None
        low, high = _interval(value, boot, jack, confidence, ci_method)
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
    interval and the one-sided p-value (share of resamples with ``r_a <= r_b``).
    """
    human, a = _as_pair(human, metric_a)
    _, b = _as_pair(human, metric_b)
    _check_method(method)
    _check_ci("percentile", confidence, n_boot)
    if n_boot < 1:
        raise ValueError("a paired bootstrap needs n_boot >= 1")
    idx = bootstrap_indices(human.size, n_boot, seed)
    r_a = _resampled_statistic(method, a, human, idx)
    r_b = _resampled_statistic(method, b, human, idx)
    diffs = r_a - r_b
    diffs = diffs[~np.isnan(diffs)]
    point_a = correlation(a, human, method)
    point_b = correlation(b, human, method)
    alpha = (1 - confidence) / 2
    low, high = (np.percentile(diffs, [100 * alpha, 100 * (1 - alpha)]) if diffs.size
                 else (float("nan"), float("nan")))
    p = float(np.mean(diffs <= 0)) if diffs.size else float("nan")
    return PairedComparison(method, point_a, point_b, point_a - point_b, float(low), float(high), p,
                            int(human.size), n_boot, seed)


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
    p = float(2 * _sp.t.sf(abs(t), df)) if two_sided else float(_sp.t.sf(t, df))
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
    the chi-square statistic (|b - c| - 1)^2 / (b + c) with one degree of freedom (Edwards 1948).
    """
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
    # Both p-values in closed form, without scipy.stats: importing it cost a page's first comparison 4.8 s.
    if exact:
        tail = sum(math.comb(discordant, k) for k in range(min(b, c) + 1))
        p = min(1.0, 2 * tail / 2 ** discordant)  # exact integers, one correctly rounded division
        return McNemarResult(b, c, int(a.size), float(min(b, c)), p, "exact")
    stat = (abs(b - c) - 1) ** 2 / discordant
    # The chi-square survival function with one degree of freedom: P(Z^2 > x) = erfc(sqrt(x / 2)).
    return McNemarResult(b, c, int(a.size), float(stat), math.erfc(math.sqrt(stat / 2)), "chi2")


# --------------------------------------------------------------------------- ratings with several samples per item

def kendall_tau_c(x: np.ndarray, y: np.ndarray) -> float:
    """Stuart's τ-c, equal to ``scipy.stats.kendalltau(x, y, variant="c")``.

    When ``y`` takes few values (expert ratings 1-4) the concordant-minus-discordant count is taken class
    pair by class pair with sorted searches, O(n log n) without scipy's overhead; the grid search calls
    this thousands of times.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    classes = np.unique(y)
    if classes.size > 16:
        return float(_sp.kendalltau(x, y, variant="c").statistic)
    m = min(np.unique(x).size, classes.size)
    if m < 2:
        return float("nan")
    groups = [np.sort(x[y == c]) for c in classes]
    net = 0.0
    for a in range(len(groups)):
        for b in range(a + 1, len(groups)):
            lower, upper = groups[a], groups[b]
            less = np.searchsorted(lower, upper, side="left").sum()
            greater = (lower.size - np.searchsorted(lower, upper, side="right")).sum()
            net += float(less - greater)
    n = x.size
    return 2.0 * net / (n * n * (m - 1) / m)


class RatingsCorrelator:
    """:func:`correlation_with_ratings` against fixed human ratings, with the ratings' side precomputed.

    The grid search correlates thousands of score vectors with the same ratings; sorting the ratings
    into classes (τ-c) or centring them (Pearson) once makes each call a few sorts of the scores.
    """

    def __init__(self, kind: str, human: np.ndarray):
        if kind not in ("kendall_c", "pearson"):
            raise ValueError(f"unknown correlation {kind!r}")
        self.kind = kind
        self.human = np.asarray(human, dtype=np.float64)
        y = self.human.ravel()
        self.n = y.size
        self.classes = np.unique(y)
        self.fast = kind == "kendall_c" and self.classes.size <= 16
        if self.fast:
            # Candidate indices once per rating equal to each class (a candidate rated 2, 2, 3 appears twice
            # under 2 and once under 3): the flattened samples without materialising them.
            self.members = [np.nonzero(self.human == c)[0] for c in self.classes]
        centred = self.human - y.mean()
        self.y_sum = centred.sum(axis=1)
        self.y_norm = float(np.sqrt((centred ** 2).sum()))

    def __call__(self, scores: np.ndarray) -> float:
        x = np.asarray(scores, dtype=np.float64)
        if self.kind == "pearson":
            xc = x - x.mean()
            denom = np.sqrt(self.human.shape[1] * (xc ** 2).sum()) * self.y_norm
            return float(xc @ self.y_sum / denom) if denom > 0 else float("nan")
        if not self.fast:
            return correlation_with_ratings(x, self.human, self.kind)
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
    ratings, each rating column its own sample (a caption's score counts once per expert)."""
    human = np.asarray(human, dtype=np.float64)
    x = np.repeat(np.asarray(scores, dtype=np.float64), human.shape[1])
    y = human.ravel()
    if kind == "kendall_c":
        return kendall_tau_c(x, y)
    if kind == "pearson":
        if np.std(x) == 0:
            return float("nan")
        return float(np.corrcoef(x, y)[0, 1])
    raise ValueError(f"unknown correlation {kind!r}")


def bootstrap_over_items(statistic: Callable[[np.ndarray], float], n: int, seed: int,
                         n_resamples: int = DEFAULT_N_BOOT) -> Interval:
    """95% percentile bootstrap CI of ``statistic(indices)`` over ``n`` items resampled with replacement.

    The resampling is :func:`bootstrap_ci`'s; the unit is the item (a candidate), so a caption's three
    expert ratings stay together. ``statistic`` takes an array of item indices.
    """
    def rows(index_rows: np.ndarray) -> np.ndarray:
        return np.array([statistic(r) for r in np.asarray(index_rows).astype(np.int64)])

    return bootstrap_ci(rows, (np.arange(n),), n_boot=n_resamples, seed=seed)
