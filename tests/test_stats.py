"""muttlab.stats against scipy on fixed data, on hand-verifiable vectors, and a simulated CI coverage check."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sp

from muttlab import stats

# Fixed data: 40 pairs drawn once with a fixed seed, with ties in y (a 1..4 rating, as in Flickr8K-Expert).
_RNG = np.random.default_rng(2024)
X = np.round(_RNG.normal(size=40), 3)
Y = np.clip(np.round(1.5 * X + _RNG.normal(size=40) + 2.5), 1, 4)
Z = np.round(X + 2.0 * _RNG.normal(size=40), 3)  # a second, noisier "metric"


# --------------------------------------------------------------------------- point estimates

def test_pearson_hand_vector():
    # dx = (-2,-1,0,1,2), dy = (-2,0,1,0,1): r = 6 / sqrt(10 * 6)
    assert stats.correlation([1, 2, 3, 4, 5], [2, 4, 5, 4, 5], "pearson") == pytest.approx(6 / math.sqrt(60))


def test_kendall_hand_vectors():
    # One discordant pair of six: tau = (5 - 1) / 6.
    assert stats.correlation([1, 2, 3, 4], [1, 3, 2, 4], "kendall_b") == pytest.approx(4 / 6)
    # y ties in two pairs: C = 4, D = 0. tau-b = 4 / sqrt(6 * (6 - 2)); tau-c = 2 * 4 / (4^2 * (2 - 1) / 2).
    assert stats.correlation([1, 2, 3, 4], [1, 1, 2, 2], "kendall_b") == pytest.approx(4 / math.sqrt(24))
    assert stats.correlation([1, 2, 3, 4], [1, 1, 2, 2], "kendall_c") == pytest.approx(1.0)


@pytest.mark.parametrize("method, reference", [
    ("pearson", lambda x, y: sp.pearsonr(x, y).statistic),
    ("spearman", lambda x, y: sp.spearmanr(x, y).statistic),
    ("kendall_b", lambda x, y: sp.kendalltau(x, y, variant="b").statistic),
    ("kendall_c", lambda x, y: sp.kendalltau(x, y, variant="c").statistic),
])
def test_correlation_equals_scipy(method, reference):
    assert stats.correlation(X, Y, method) == pytest.approx(reference(X, Y), abs=1e-12)
    result = stats.correlate(X, Y, method, n_boot=0)
    assert result.value == pytest.approx(reference(X, Y), abs=1e-12)
    assert math.isnan(result.ci_low) and result.n == 40


def test_constant_input_gives_nan_not_an_error():
    assert math.isnan(stats.correlation([1, 1, 1], [1, 2, 3], "kendall_c"))


def test_bad_input_is_rejected():
    with pytest.raises(ValueError, match="same length"):
        stats.correlation([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="unknown correlation method"):
        stats.correlation([1, 2, 3], [1, 2, 3], "kendall_z")
    with pytest.raises(ValueError, match="interval method"):
        stats.correlate(X, Y, ci_method="basic")


# --------------------------------------------------------------------------- bootstrap intervals = scipy's

def _scipy_ci(statistic, data, method, seed, n_boot=400):
    res = sp.bootstrap(data, statistic, paired=True, vectorized=True, n_resamples=n_boot, method=method,
                       rng=np.random.default_rng(seed))
    return res.confidence_interval


@pytest.mark.parametrize("ci_method, scipy_method", [("percentile", "percentile"), ("bca", "BCa")])
def test_pearson_bootstrap_interval_equals_scipy(ci_method, scipy_method):
    ours = stats.correlate(X, Y, "pearson", n_boot=400, ci_method=ci_method, seed=7)
    ref = _scipy_ci(lambda x, y, axis: sp.pearsonr(x, y, axis=axis).statistic, (X, Y), scipy_method, seed=7)
    assert (ours.ci_low, ours.ci_high) == pytest.approx((ref.low, ref.high), abs=1e-12)
    assert ours.ci_low < ours.value < ours.ci_high


@pytest.mark.parametrize("ci_method, scipy_method", [("percentile", "percentile"), ("bca", "BCa")])
def test_kendall_bootstrap_interval_equals_scipy(ci_method, scipy_method):
    def tau_c(x, y, axis):
        flat_x, flat_y = x.reshape(-1, x.shape[-1]), y.reshape(-1, y.shape[-1])
        taus = [sp.kendalltau(a, b, variant="c").statistic for a, b in zip(flat_x, flat_y)]
        return np.array(taus).reshape(x.shape[:-1])

    ours = stats.correlate(X, Y, "kendall_c", n_boot=200, ci_method=ci_method, seed=3)
    ref = _scipy_ci(tau_c, (X, Y), scipy_method, seed=3, n_boot=200)
    assert (ours.ci_low, ours.ci_high) == pytest.approx((ref.low, ref.high), abs=1e-12)


def test_spearman_bootstrap_distribution_equals_scipy():
    ours = stats.bootstrap_correlations(X, Y, "spearman", n_boot=300, seed=11)
    def rho(x, y, axis):
        return np.array([sp.spearmanr(a, b).statistic for a, b in zip(x, y)])

    res = sp.bootstrap((X, Y), rho, paired=True, method="percentile", vectorized=True, n_resamples=300, rng=np.random.default_rng(11))
    np.testing.assert_allclose(ours, res.bootstrap_distribution, atol=1e-12)


@pytest.mark.parametrize("ci_method, scipy_method", [("percentile", "percentile"), ("bca", "BCa")])
def test_accuracy_interval_equals_scipy(ci_method, scipy_method):
    passed = Y >= 3  # 40 pass/fail outcomes
    ours = stats.accuracy_ci(passed, n_boot=500, ci_method=ci_method, seed=5)
    ref = sp.bootstrap((passed.astype(float),), np.mean, n_resamples=500, method=scipy_method,
                       rng=np.random.default_rng(5)).confidence_interval
    assert ours.value == pytest.approx(passed.mean())
    assert (ours.ci_low, ours.ci_high) == pytest.approx((ref.low, ref.high), abs=1e-12)


def test_bootstrap_is_reproducible_and_seed_dependent():
    a = stats.correlate(X, Y, "spearman", n_boot=200, seed=1)
    b = stats.correlate(X, Y, "spearman", n_boot=200, seed=1)
    c = stats.correlate(X, Y, "spearman", n_boot=200, seed=2)
    assert a == b
    assert (a.ci_low, a.ci_high) != (c.ci_low, c.ci_high)


def test_grouped_jackknife_for_large_samples_gives_a_sane_bca_interval():
    rng = np.random.default_rng(0)
    n = stats.JACKKNIFE_MAX_N + 500
    x = rng.normal(size=n)
    y = 0.5 * x + rng.normal(size=n)
    bca = stats.correlate(x, y, "pearson", n_boot=300, ci_method="bca", seed=0)
    pct = stats.correlate(x, y, "pearson", n_boot=300, ci_method="percentile", seed=0)
    assert bca.ci_low < bca.value < bca.ci_high
    # Near-symmetric sampling distribution: BCa barely moves the percentile interval.
    assert abs(bca.ci_low - pct.ci_low) < 0.01 and abs(bca.ci_high - pct.ci_high) < 0.01


def test_percentile_interval_covers_true_correlation_about_95_percent():
    # 300 simulated samples (n = 60) from a bivariate normal with rho = 0.5; the percentile CI of Pearson's r
    # should cover 0.5 about 95% of the time (a little less at this n: the interval is known to undercover).
    rho, n, sims = 0.5, 60, 300
    rng = np.random.default_rng(123)
    cov = [[1, rho], [rho, 1]]
    covered = 0
    for s in range(sims):
        xy = rng.multivariate_normal([0, 0], cov, size=n)
        ci = stats.correlate(xy[:, 0], xy[:, 1], "pearson", n_boot=400, seed=s)
        covered += ci.ci_low <= rho <= ci.ci_high
    assert 0.90 <= covered / sims <= 0.985


# --------------------------------------------------------------------------- comparing metrics

def test_paired_bootstrap_uses_the_same_resamples_for_both_metrics():
    cmp = stats.paired_bootstrap(Y, X, Z, "pearson", n_boot=300, seed=9)
    r_a = stats.bootstrap_correlations(X, Y, "pearson", 300, seed=9)
    r_b = stats.bootstrap_correlations(Z, Y, "pearson", 300, seed=9)
    assert cmp.r_a == pytest.approx(sp.pearsonr(X, Y).statistic)
    assert cmp.r_b == pytest.approx(sp.pearsonr(Z, Y).statistic)
    assert cmp.p_value == pytest.approx(np.mean(r_a - r_b <= 0))
    assert (cmp.ci_low, cmp.ci_high) == pytest.approx(tuple(np.percentile(r_a - r_b, [2.5, 97.5])))
    assert cmp.diff > 0 and cmp.ci_low > 0  # X generated Y; Z is X plus twice as much noise


def test_paired_bootstrap_of_a_metric_with_itself():
    cmp = stats.paired_bootstrap(Y, X, X, "kendall_b", n_boot=50, seed=0)
    assert cmp.diff == 0 and cmp.ci_low == 0 and cmp.ci_high == 0 and cmp.p_value == 1.0


def test_williams_hand_example():
    # r12=.5, r13=.3, r23=.4, n=100: K = 1 - .25 - .09 - .16 + 2(.5)(.3)(.4) = .62;
    # t = .2 sqrt(99 * 1.4) / sqrt(2(.62)(99/97) + (.8^2/4)(.6^3)) = 2.35457 / 1.14023 = 2.06498 on 97 d.o.f.
    res = stats.williams_test(0.5, 0.3, 0.4, 100)
    assert res.t == pytest.approx(2.06498, abs=1e-4)
    assert res.df == 97
    assert res.p_value == pytest.approx(sp.t.sf(2.06498, 97), abs=1e-5)
    assert stats.williams_test(0.5, 0.3, 0.4, 100, two_sided=True).p_value == pytest.approx(2 * res.p_value)


def test_williams_is_antisymmetric_and_zero_for_equal_correlations():
    assert stats.williams_test(0.3, 0.5, 0.4, 100).t == pytest.approx(-stats.williams_test(0.5, 0.3, 0.4, 100).t)
    equal = stats.williams_test(0.4, 0.4, 0.2, 50)
    assert equal.t == 0 and equal.p_value == pytest.approx(0.5)
    # A higher correlation between the two metrics makes the same gap more significant (Graham & Baldwin §3).
    assert stats.williams_test(0.5, 0.3, 0.9, 100).p_value < stats.williams_test(0.5, 0.3, 0.1, 100).p_value


def test_compare_williams_on_data():
    res = stats.compare_williams(Y, X, Z, "pearson")
    assert res.r12 == pytest.approx(sp.pearsonr(Y, X).statistic)
    assert res.r23 == pytest.approx(sp.pearsonr(X, Z).statistic)
    assert res.n == 40 and res.p_value < 0.05
    with pytest.raises(ValueError, match="n > 3"):
        stats.williams_test(0.5, 0.3, 0.4, 3)


def test_mcnemar_exact_equals_scipy_binomtest():
    a = np.array([1, 1, 1, 1, 1, 1, 0, 0, 1, 0], dtype=bool)
    b = np.array([0, 0, 0, 0, 1, 1, 1, 0, 1, 0], dtype=bool)
    res = stats.mcnemar(a, b)  # b = 4 (A only), c = 1 (B only)
    assert (res.b, res.c, res.method) == (4, 1, "exact")
    assert res.p_value == pytest.approx(sp.binomtest(4, 5, 0.5).pvalue)  # = 0.375


def test_mcnemar_chi2_hand_example():
    # b = 30, c = 10: (|30 - 10| - 1)^2 / 40 = 9.025 on 1 d.o.f.
    a = np.r_[np.ones(30), np.zeros(10), np.ones(50), np.zeros(10)].astype(bool)
    b = np.r_[np.zeros(30), np.ones(10), np.ones(50), np.zeros(10)].astype(bool)
    res = stats.mcnemar(a, b)
    assert (res.b, res.c, res.n, res.method) == (30, 10, 100, "chi2")
    assert res.statistic == pytest.approx(9.025)
    assert res.p_value == pytest.approx(sp.chi2.sf(9.025, 1))
    assert stats.mcnemar(a, b, exact=True).p_value == pytest.approx(sp.binomtest(10, 40, 0.5).pvalue)


def test_mcnemar_without_discordant_trials():
    same = np.array([True, False, True])
    assert stats.mcnemar(same, same).p_value == 1.0


def test_wilson_interval_published_values():
    # Newcombe (1998), "Two-sided confidence intervals for the single proportion", Table II, method 3 (Wilson).
    for (k, n), (lo, hi) in {(81, 263): (0.2553, 0.3662), (15, 148): (0.0624, 0.1605),
                              (0, 20): (0.0, 0.1611)}.items():
        low, high = stats.wilson_interval(k, n)
        assert (float(low), float(high)) == pytest.approx((lo, hi), abs=1e-4)


def test_wilson_interval_quantile_is_scipys():
    """The default 95% interval uses a stored quantile (no scipy import); it must be scipy's, to the bit, and
    any other confidence still asks scipy."""
    from scipy.special import ndtri
    assert stats._normal_quantile(0.5 + 0.95 / 2) == float(ndtri(0.975))
    for confidence in (0.9, 0.99):
        assert stats._normal_quantile(0.5 + confidence / 2) == float(ndtri(0.5 + confidence / 2))


@pytest.mark.parametrize("levels", [4, 12, None])  # None: both continuous, the per-resample scipy path
@pytest.mark.parametrize("method", ["kendall_b", "kendall_c"])
def test_kendall_bootstrap_distribution_equals_scipy_on_each_resample(levels, method):
    rng = np.random.default_rng(levels or 0)
    x = np.round(rng.normal(size=150), 2)  # rounded: ties in the metric too
    y = rng.integers(0, levels, 150) / levels if levels else rng.normal(size=150)
    ours = stats.bootstrap_correlations(x, y, method, n_boot=60, seed=8)
    idx = stats.bootstrap_indices(150, 60, seed=8)
    expected = [sp.kendalltau(x[i], y[i], variant=method[-1]).statistic for i in idx]
    np.testing.assert_allclose(ours, expected, atol=1e-12)
