"""muttlab.stats against scipy on fixed data, on hand-verifiable vectors, and a simulated CI coverage check;
its intervals and tests against the closed forms it used before it called scipy for them, on the shipped MUTT
grid and on Flickr8K-Expert."""
from __future__ import annotations

import math
import os
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats as sp

from muttlab import api, stats
from muttlab.judged import flickr_expert
from muttlab.settings import Settings

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


def _resamples(n: int, n_boot: int, seed: int) -> np.ndarray:
    """The item indices scipy.stats.bootstrap draws (scipy/stats/_resampling.py, _bootstrap_resample)."""
    return np.random.default_rng(seed).integers(0, n, (n_boot, n))


def test_spearman_bootstrap_distribution_equals_scipy():
    ours = stats.resampled_correlations(X, Y, "spearman", _resamples(40, 300, seed=11))

    def rho(x, y, axis):
        return np.array([sp.spearmanr(a, b).statistic for a, b in zip(x, y)])

    res = sp.bootstrap((X, Y), rho, paired=True, method="percentile", vectorized=True, n_resamples=300,
                       rng=np.random.default_rng(11))
    np.testing.assert_allclose(ours, res.bootstrap_distribution, atol=1e-12)


def test_resamples_without_a_correlation_are_left_out_of_the_interval():
    # Five items: some resamples repeat one item only, so y is constant there and tau is undefined.
    x, y = np.array([1.0, 2, 3, 4, 5]), np.array([1.0, 1, 2, 2, 3])
    with pytest.warns(sp.DegenerateDataWarning):  # scipy's own interval is NaN
        taus = sp.bootstrap((x, y), lambda a, b, axis: np.array([sp.kendalltau(r, s).statistic for r, s in zip(a, b)]),
                            paired=True, vectorized=True, n_resamples=500, method="percentile",
                            rng=np.random.default_rng(4)).bootstrap_distribution
    assert np.isnan(taus).any()
    ours = stats.correlate(x, y, "kendall_b", n_boot=500, seed=4)
    assert (ours.ci_low, ours.ci_high) == pytest.approx(tuple(np.percentile(taus[~np.isnan(taus)], [2.5, 97.5])),
                                                        abs=1e-12)


def test_all_trials_passed_is_its_own_interval():
    # Every resample of 20 passes has accuracy 1 (scipy's BCa alone would be 0 / 0).
    for ci_method in stats.CI_METHODS:
        found = stats.accuracy_ci([True] * 20, n_boot=100, ci_method=ci_method)
        assert (found.value, found.ci_low, found.ci_high) == (1.0, 1.0, 1.0)
    found = stats.accuracy_ci([False], n_boot=10)  # one trial: every resample is the data
    assert (found.value, found.ci_low, found.ci_high) == (0.0, 0.0, 0.0)


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
    r_a = stats.resampled_correlations(X, Y, "pearson", _resamples(40, 300, seed=9))
    r_b = stats.resampled_correlations(Z, Y, "pearson", _resamples(40, 300, seed=9))
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


def _mcnemar_closed_form(b: int, c: int, exact: bool) -> float:
    """McNemar's p-value as muttlab computed it before it asked scipy: the two-sided exact binomial tail
    2 P(X <= min(b, c)), X ~ Bin(b + c, 1/2), summed in integers; or the chi-square survival with one degree
    of freedom of Edwards' statistic, P(Z^2 > x) = erfc(sqrt(x / 2))."""
    d = b + c
    if exact:
        return min(1.0, 2 * sum(math.comb(d, k) for k in range(min(b, c) + 1)) / 2 ** d)
    return math.erfc(math.sqrt((abs(b - c) - 1) ** 2 / d / 2))


def _pass_fail(b: int, c: int, both: int = 7) -> tuple[np.ndarray, np.ndarray]:
    first = np.r_[np.ones(b), np.zeros(c), np.ones(both), np.zeros(3)].astype(bool)
    second = np.r_[np.zeros(b), np.ones(c), np.ones(both), np.zeros(3)].astype(bool)
    return first, second


def test_mcnemar_hand_examples():
    res = stats.mcnemar(*_pass_fail(4, 1))  # 2 (1 + 5) / 32 = 0.375
    assert (res.b, res.c, res.n, res.method, res.statistic) == (4, 1, 15, "exact", 1.0)
    assert res.p_value == pytest.approx(0.375, abs=1e-15)
    # b = 30, c = 10: (|30 - 10| - 1)^2 / 40 = 9.025 on 1 d.o.f.
    res = stats.mcnemar(*_pass_fail(30, 10))
    assert (res.b, res.c, res.method) == (30, 10, "chi2")
    assert res.statistic == pytest.approx(9.025)
    assert res.p_value == pytest.approx(math.erfc(math.sqrt(9.025 / 2)), abs=1e-15)


@pytest.mark.parametrize("exact", [None, True, False])
def test_mcnemar_equals_the_closed_forms(exact):
    for b in range(0, 61, 3):
        for c in range(0, 80, 7):
            res = stats.mcnemar(*_pass_fail(b, c), exact=exact)
            if b + c == 0:
                assert res.p_value == 1.0
                continue
            assert res.method == ("exact" if (b + c < 25 if exact is None else exact) else "chi2")
            assert res.p_value == pytest.approx(_mcnemar_closed_form(b, c, res.method == "exact"), abs=1e-12)


def test_mcnemar_without_discordant_trials():
    same = np.array([True, False, True])
    assert stats.mcnemar(same, same).p_value == 1.0


def test_wilson_interval_published_values():
    # Newcombe (1998), "Two-sided confidence intervals for the single proportion", Table II, method 3 (Wilson).
    for (k, n), (lo, hi) in {(81, 263): (0.2553, 0.3662), (15, 148): (0.0624, 0.1605),
                              (0, 20): (0.0, 0.1611)}.items():
        low, high = stats.wilson_interval(k, n)
        assert (float(low), float(high)) == pytest.approx((lo, hi), abs=1e-4)


def _wilson_closed_form(k, n, z=1.959963984540054):
    """Wilson's interval (Wilson 1927) as muttlab computed it before it asked scipy: centre
    (p + z²/2n) / (1 + z²/n), half-width z sqrt(p(1-p)/n + z²/4n²) / (1 + z²/n), clipped to [0, 1];
    z = ndtri(0.975)."""
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return np.clip(centre - half, 0, 1), np.clip(centre + half, 0, 1)


def test_wilson_intervals_of_the_shipped_mutt_grid():
    """The grid that ships (data/results/grid.json, written with the closed form, in percent to 4 decimals):
    every cell's interval again, from scipy, and equal to the closed form to 1e-12."""
    cells = api.snapshot("grid").content.cells
    assert len(cells) > 500 and (cells["passed"] == 0).any() and (cells["passed"] == cells["n"]).any()
    low, high = stats.wilson_interval(cells["passed"].to_numpy(), cells["n"].to_numpy())
    np.testing.assert_allclose(100 * low, cells["ci_low"], atol=5e-5 + 1e-9, rtol=0)
    np.testing.assert_allclose(100 * high, cells["ci_high"], atol=5e-5 + 1e-9, rtol=0)
    closed_low, closed_high = _wilson_closed_form(cells["passed"], cells["n"])
    np.testing.assert_allclose(low, closed_low, atol=1e-12, rtol=0)
    np.testing.assert_allclose(high, closed_high, atol=1e-12, rtol=0)


def test_wilson_interval_shapes_and_empty_cells():
    low, high = stats.wilson_interval([3, 0, 7], [10, 0, 7], confidence=0.9)
    assert np.isnan(low[1]) and np.isnan(high[1]) and high[2] == 1.0
    assert low[0] == pytest.approx(sp.binomtest(3, 10).proportion_ci(0.9, method="wilson").low, abs=1e-15)
    single = stats.wilson_interval(5, 20)
    assert np.shape(single[0]) == () and 0 < float(single[0]) < 0.25 < float(single[1])


# --------------------------------------------------------------------------- real data: Flickr8K-Expert

@pytest.fixture(scope="module")
def expert(data_dir):
    """Flickr8K-Expert's 5,664 candidates x 3 ratings and a score that follows them (mean rating plus noise)."""
    ratings = flickr_expert(Settings(data_dir=data_dir)).human
    score = np.round(ratings.mean(axis=1) + np.random.default_rng(5).normal(size=len(ratings)), 2)
    return np.repeat(score, 3), ratings.ravel()


@pytest.mark.parametrize("method", stats.METHODS)
def test_flickr_expert_intervals_equal_scipy(expert, method):
    """scipy's paired bootstrap of scipy's own coefficient on 900 of the 16,992 samples, percentile and BCa."""
    x, y = expert[0][:900], expert[1][:900]
    reference = {"pearson": lambda a, b: sp.pearsonr(a, b).statistic,
                 "spearman": lambda a, b: sp.spearmanr(a, b).statistic}.get(
        method, lambda a, b: sp.kendalltau(a, b, variant=method[-1]).statistic)

    def statistic(a, b, axis):
        return np.array([reference(r, s) for r, s in zip(np.atleast_2d(a), np.atleast_2d(b))]).reshape(a.shape[:-1])

    for ci_method, scipy_method in (("percentile", "percentile"), ("bca", "BCa")):
        ours = stats.correlate(x, y, method, n_boot=150, ci_method=ci_method, seed=3)
        ref = sp.bootstrap((x, y), statistic, paired=True, vectorized=True, n_resamples=150, method=scipy_method,
                           rng=np.random.default_rng(3)).confidence_interval
        assert (ours.ci_low, ours.ci_high) == pytest.approx((ref.low, ref.high), abs=1e-12)


def test_bootstrap_over_items_equals_scipy(expert):
    x, y = expert
    ratings = y.reshape(-1, 3)
    scores = x[::3]
    ours = stats.bootstrap_over_items(lambda idx: stats.correlation_with_ratings(scores[idx], ratings[idx],
                                                                                 "kendall_c"),
                                      len(scores), seed=7, n_resamples=40)

    def tau_c(items, axis):
        return np.array([sp.kendalltau(np.repeat(scores[i], 3), ratings[i].ravel(), variant="c").statistic
                         for i in np.atleast_2d(items)])

    ref = sp.bootstrap((np.arange(len(scores)),), tau_c, n_resamples=40, method="percentile", vectorized=True,
                       rng=np.random.default_rng(7)).confidence_interval
    assert ours.value == pytest.approx(sp.kendalltau(x, y, variant="c").statistic, abs=1e-12)
    assert (ours.ci_low, ours.ci_high) == pytest.approx((ref.low, ref.high), abs=1e-12)


# --------------------------------------------------------------------------- start-up

def test_an_ngram_run_printed_as_a_table_never_imports_scipy_stats(data_dir, tmp_path):
    """`muttlab run` of an n-gram metric shows accuracy, counts and tie rates, no interval: scipy.stats (1-2 s
    to import) must stay out of it (benchmarks/bench_startup.py measures the start-up)."""
    code = ("import sys\nfrom muttlab.cli import main\n"
            "code = main(['run', '--metrics', 'BLEU-4', '--corruptions', 'neg_subj', '--refs', '5', '--cache-dir', "
            f"{str(tmp_path)!r}])\n"
            "print('scipy.stats' in sys.modules, 'scipy.special' in sys.modules, code, file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={**os.environ, "MUTTLAB_DATA_DIR": str(data_dir)})
    row = next(line for line in done.stdout.splitlines() if line.startswith("BLEU-4"))
    assert "/336) tie " in row  # data/README.md: neg_subj has 336 trials
    assert done.stderr.strip().splitlines()[-1] == "False False 0"


@pytest.mark.parametrize("levels", [4, 12, None])  # None: both continuous, the per-resample scipy path
@pytest.mark.parametrize("method", ["kendall_b", "kendall_c"])
def test_kendall_bootstrap_distribution_equals_scipy_on_each_resample(levels, method):
    rng = np.random.default_rng(levels or 0)
    x = np.round(rng.normal(size=150), 2)  # rounded: ties in the metric too
    y = rng.integers(0, levels, 150) / levels if levels else rng.normal(size=150)
    idx = _resamples(150, 60, seed=8)
    ours = stats.resampled_correlations(x, y, method, idx)
    expected = [sp.kendalltau(x[i], y[i], variant=method[-1]).statistic for i in idx]
    np.testing.assert_allclose(ours, expected, atol=1e-12)


@pytest.mark.parametrize("levels, method", [(4, "kendall_b"), (None, "pearson")])
def test_a_bootstrap_lets_its_caller_work_between_blocks_of_resamples_and_its_interval_is_unchanged(levels, method):
    """The dashboard's queue lets a Playground request pass between the blocks of a study's bootstrap (before, a
    Flickr8K bootstrap held it for 1-2 s under load); the resamples and the interval are the same."""
    rng = np.random.default_rng(5)
    x = np.round(rng.normal(size=4000), 2)
    y = rng.integers(0, levels, 4000) / levels if levels else x + rng.normal(size=4000)
    calls = []
    plain = stats.correlate(x, y, method, n_boot=1000, seed=3)
    passing = stats.correlate(x, y, method, n_boot=1000, seed=3, between=lambda: calls.append(1))
    assert len(calls) >= 2  # the 1,000 resamples in two blocks or more
    assert (passing.value, passing.ci_low, passing.ci_high) == (plain.value, plain.ci_low, plain.ci_high)
