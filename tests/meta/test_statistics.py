"""The meta-evaluation statistics on hand-checkable matrices, against a straightforward all-pairs count of the
definitions (Deutsch, Foster & Freitag 2023, §4-5: acc_eq and its tie calibration) and against scipy.

mt-metrics-eval's own numbers on the real TED data are tests/meta/test_mtme_equality.py's."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats as sp

from muttlab.errors import MuttlabError
from muttlab.meta import statistics as st


def brute_counts(h, m, eps):
    """(C, D, T_h, T_m, T_hm) over every pair, by the definitions."""
    c = d = th = tm = thm = 0
    for (h1, m1), (h2, m2) in itertools.combinations(zip(h, m), 2):
        human_tie, metric_tie = h1 == h2, abs(m1 - m2) <= eps
        if human_tie and metric_tie:
            thm += 1
        elif human_tie:
            th += 1
        elif metric_tie:
            tm += 1
        elif (h1 > h2) == (m1 > m2):
            c += 1
        else:
            d += 1
    return c, d, th, tm, thm


def brute_acc(h, m, eps):
    c, d, th, tm, thm = brute_counts(h, m, eps)
    return (c + thm) / (c + d + th + tm + thm)


def brute_groups(gold, metric):
    """Per item: (human scores, metric scores) of the judged outputs, for items with a pair."""
    out = []
    for i in range(gold.shape[1]):
        keep = ~np.isnan(gold[:, i])
        if keep.sum() >= 2:
            out.append((gold[keep, i], metric[keep, i]))
    return out


def brute_search(gold, metric, grouped):
    """acc*_eq by trying 0 and every distinct |Δm| in increasing order, the first maximum kept."""
    rated = ~np.isnan(gold)
    groups = brute_groups(gold, metric) if grouped else [(gold[rated], metric[rated])]
    diffs = {abs(a - b) for _, m in groups for a, b in itertools.combinations(m, 2)} | {0.0}
    best = (-1.0, None)
    for eps in sorted(diffs):
        acc = np.mean([brute_acc(h, m, eps) for h, m in groups])
        if acc > best[0] + 1e-12:
            best = (acc, eps)
    return best


def random_case(rng, systems=5, items=8, missing=0.0):
    gold = rng.integers(-3, 1, (systems, items)).astype(float)  # MQM-like: many ties
    metric = np.round(rng.normal(size=(systems, items)), int(rng.integers(0, 3)))
    if missing:
        gold[rng.random(gold.shape) < missing] = np.nan
    return gold, metric


def test_ungrouped_by_hand():
    # Pairs of h = (0, 0, 1, 2), m = (0, .25, 1, .75): at ε = 0, four concordant, (1,2) a human tie, (3,4)
    # discordant: 4/6. At ε = .25, (1,2) is tied by both and (3,4) by the metric: 5/6. At ε = .5 the
    # concordant (2,4) becomes a metric tie: 4/6. So acc*_eq = 5/6 at ε = 0.25.
    gold, metric = np.array([[0, 0, 1, 2]], float), np.array([[0, .25, 1, .75]])
    found = st.tie_calibrated_accuracy(gold, metric, grouped=False)
    assert (found.accuracy, found.epsilon, found.n_pairs) == (pytest.approx(5 / 6), 0.25, 6)
    assert st.accuracy_with_ties(gold, metric, 0.0, grouped=False).accuracy == pytest.approx(4 / 6)
    counts = st.accuracy_with_ties(gold, metric, 0.25, grouped=False)
    assert (counts.concordant, counts.discordant, counts.ties_human, counts.ties_metric, counts.ties_both) == \
        (4, 0, 0, 1, 1)


def test_item_grouped_by_hand():
    # Item 1: h = (0, 0, 1), m = (0, .5, 1): a human tie (Δm .5) and two concordant pairs: 2/3 at ε < .5, and
    # 2/3 at ε = .5 (the tie becomes both-tied, (b, c) a metric tie). Item 2: h = (2, 1, 0), m = (.25, 0, .5):
    # one concordant, two discordant: 1/3 at ε = 0, 0 from ε = .25. The mean is 0.5 at ε = 0, 1/3 beyond.
    gold = np.array([[0, 2], [0, 1], [1, 0]], float)
    metric = np.array([[0, .25], [.5, 0], [1, .5]])
    found = st.tie_calibrated_accuracy(gold, metric)
    assert (found.accuracy, found.epsilon, found.n_groups, found.n_pairs) == (0.5, 0.0, 2, 6)
    assert st.accuracy_with_ties(gold, metric, 0.25).accuracy == pytest.approx(1 / 3)


@pytest.mark.parametrize("seed", range(40))
def test_the_search_equals_the_all_pairs_definition(seed):
    rng = np.random.default_rng(seed)
    gold, metric = random_case(rng, missing=0.15 if seed % 2 else 0.0)
    for grouped in (True, False):
        found = st.tie_calibrated_accuracy(gold, metric, grouped=grouped)
        accuracy, epsilon = brute_search(gold, metric, grouped)
        assert found.accuracy == pytest.approx(accuracy, abs=1e-12)
        assert found.epsilon == epsilon
        at = st.accuracy_with_ties(gold, metric, epsilon, grouped=grouped).accuracy
        assert at == pytest.approx(accuracy, abs=1e-12)


@pytest.mark.parametrize("seed", range(20))
def test_counts_at_a_threshold_equal_the_definitions(seed):
    rng = np.random.default_rng(100 + seed)
    h = rng.integers(0, 4, 60).astype(float)
    m = np.round(rng.normal(size=60), 1)
    for eps in (0.0, 0.1, 0.3, 5.0):
        counts = st.ungrouped_counts(h, m, eps)
        assert (counts.concordant, counts.discordant, counts.ties_human, counts.ties_metric,
                counts.ties_both) == brute_counts(h, m, eps)


def test_a_metric_that_ties_everything_is_not_informative():
    gold = np.array([[0, 1, -1], [0, -2, 0]], float)
    constant = np.zeros_like(gold)
    for grouped in (True, False):
        found = st.tie_calibrated_accuracy(gold, constant, grouped=grouped)
        assert found.epsilon == 0.0 and not found.informative
    # A metric whose best ε is its largest difference ties every pair as well.
    spread = st.tie_calibrated_accuracy(np.zeros((2, 3)), np.array([[0, 1, 2], [1, 1, 0]], float))
    assert spread.epsilon == 2.0 and spread.accuracy == 1.0 and not spread.informative


def test_sampled_thresholds_give_the_exact_accuracy_at_the_chosen_epsilon():
    rng = np.random.default_rng(7)
    gold, metric = random_case(rng, systems=6, items=50)
    exact = st.tie_calibrated_accuracy(gold, metric, grouped=False)
    sampled = st.tie_calibrated_accuracy(gold, metric, grouped=False, max_exact_pairs=1000, sample_pairs=800, seed=3)
    h, m = gold.ravel(), metric.ravel()
    assert sampled.sample_rate == pytest.approx(800 / exact.n_pairs) and sampled.n_pairs == exact.n_pairs
    assert sampled.accuracy == pytest.approx(brute_acc(h, m, sampled.epsilon), abs=1e-12)
    assert sampled.accuracy <= exact.accuracy + 1e-12
    again = st.tie_calibrated_accuracy(gold, metric, grouped=False, max_exact_pairs=1000, sample_pairs=800, seed=3)
    assert again == sampled  # seeded


@pytest.mark.parametrize("seed", range(10))
def test_correlations_equal_scipy(seed):
    rng = np.random.default_rng(200 + seed)
    gold, metric = random_case(rng, systems=6, items=12, missing=0.1)
    taus, rs = [], []
    for i in range(gold.shape[1]):
        keep = ~np.isnan(gold[:, i])
        g, m = gold[keep, i], metric[keep, i]
        if len(g) >= 2 and np.ptp(g) > 0 and np.ptp(m) > 0:  # an item whose scores are all equal has none
            taus.append(sp.kendalltau(g, m).statistic)
            rs.append(sp.pearsonr(g, m).statistic)
    assert st.kendall(gold, metric) == pytest.approx(np.mean(taus), abs=1e-12)
    assert st.pearson(gold, metric) == pytest.approx(np.mean(rs), abs=1e-12)
    rated = ~np.isnan(gold)
    assert st.kendall(gold, metric, grouped=False) == pytest.approx(sp.kendalltau(gold[rated], metric[rated])[0])
    assert st.pearson(gold, metric, grouped=False) == pytest.approx(sp.pearsonr(gold[rated], metric[rated])[0])
    assert np.isnan(st.pearson(gold, np.zeros_like(metric))) and np.isnan(st.kendall(gold, np.zeros_like(metric)))


def test_system_level_by_hand():
    # Kocmi et al. 2021: of the pairs (1,2), (1,3), (2,3) the metric orders the first two as the humans do.
    assert st.pairwise_accuracy([1, 2, 3], [1, 3, 2]) == pytest.approx(2 / 3)
    assert st.pairwise_accuracy([1, 1, 3], [2, 2, 5]) == 1.0  # a tie both sides agrees
    means = st.system_means(np.array([[1.0, 3.0], [2.0, 9.0]]), np.array([[0.0, 0.0], [0.0, np.nan]]))
    assert list(means) == [2.0, 2.0]
    assert st.pearson_vector([1, 2, 3], [2, 4, 7]) == pytest.approx(sp.pearsonr([1, 2, 3], [2, 4, 7])[0])


def test_swap_test_equals_swapping_each_pair():
    """Drawing Binomial(disagreements, 1/2) per group is swapping every pair's two outcomes with probability 1/2:
    the same p-value as the explicit swaps, up to resampling noise."""
    rng = np.random.default_rng(11)
    sizes = np.array([6, 10, 3, 15])
    first = [rng.random(n) < 0.7 for n in sizes]
    second = [rng.random(n) < 0.5 for n in sizes]
    weights = 1.0 / (len(sizes) * sizes)
    observed = sum(w * (a.sum() - b.sum()) for a, b, w in zip(first, second, weights))
    draws, hits = 20000, 0
    for _ in range(draws):
        total = 0.0
        for a, b, w in zip(first, second, weights):
            swap = rng.random(len(a)) < 0.5
            total += w * (np.where(swap, b, a).sum() - np.where(swap, a, b).sum())
        hits += total >= observed - 1e-12
    disagree = np.array([(a ^ b).sum() for a, b in zip(first, second)])
    delta = np.array([a.sum() - b.sum() for a, b in zip(first, second)])
    p = st.swap_test(disagree, delta, weights, 20000, np.random.default_rng(5))
    assert p == pytest.approx(hits / draws, abs=0.01)
    assert st.swap_test(np.zeros(3, int), np.zeros(3, int), np.ones(3), 100, np.random.default_rng(0)) == 1.0


def test_permutation_test():
    rng = np.random.default_rng(3)
    gold = rng.normal(size=40)
    good, noise = gold + 0.1 * rng.normal(size=40), rng.normal(size=40)

    def r(stack):
        return st.pearson_rows(gold[:, None], stack[:, :, None])

    assert st.permutation_test(r, good, noise, 200, np.random.default_rng(1)) < 0.01
    assert st.permutation_test(r, good, good, 200, np.random.default_rng(1)) == 1.0
    assert r(np.stack([good]))[0] == pytest.approx(sp.pearsonr(gold, good)[0])


def test_clusters_follow_mt_metrics_eval_s_rule():
    # AssignRanks: metric i opens a cluster when a metric of the current cluster beats it (p < alpha);
    # metric 3 is beaten by metric 1 only, which is no longer in the current cluster.
    p = np.full((4, 4), np.nan)
    p[0, 1], p[0, 2], p[1, 2] = 0.5, 0.01, 0.2
    p[0, 3], p[1, 3], p[2, 3] = 0.001, 0.01, 0.3
    assert st.clusters(np.nan_to_num(p, nan=1.0)) == [1, 1, 2, 2]
    assert st.clusters(np.ones((3, 3))) == [1, 1, 1]


def test_bad_matrices_are_refused():
    with pytest.raises(MuttlabError, match="one shape"):
        st.tie_calibrated_accuracy(np.zeros((2, 3)), np.zeros((3, 2)))
    with pytest.raises(MuttlabError, match="finite metric score"):
        st.tie_calibrated_accuracy(np.zeros((2, 2)), np.array([[0, np.nan], [1, 1]]))
    with pytest.raises(MuttlabError, match="no item has two judged outputs"):
        st.tie_calibrated_accuracy(np.array([[0.0, np.nan], [np.nan, 1.0]]), np.zeros((2, 2)))
    with pytest.raises(MuttlabError, match="finite number >= 0"):
        st.accuracy_with_ties(np.zeros((2, 2)), np.zeros((2, 2)), -1.0)


def brute_untied_and_constant(gold, metric, eps, grouped):
    """(pairs with |Δm| > ε, acc_eq of a metric that ties every pair) by the definitions: the constant metric
    is right exactly on the pairs the humans tie, item by item averaged when grouped."""
    rated = ~np.isnan(gold)
    groups = brute_groups(gold, metric) if grouped else [(gold[rated], metric[rated])]
    untied, shares = 0, []
    for h, m in groups:
        pairs = list(itertools.combinations(range(len(h)), 2))
        untied += sum(abs(m[i] - m[j]) > eps for i, j in pairs)
        shares.append(sum(h[i] == h[j] for i, j in pairs) / len(pairs))
    return untied, float(np.mean(shares))


@pytest.mark.parametrize("seed", range(30))
def test_informative_means_pairs_left_untied_and_the_constant_metric_beaten(seed):
    rng = np.random.default_rng(300 + seed)
    gold, metric = random_case(rng, missing=0.1 if seed % 3 else 0.0)
    if seed % 5 == 0:  # a metric that hardly separates anything: most pairs tie at any ε
        metric = np.round(metric, 0)
    for grouped in (True, False):
        found = st.tie_calibrated_accuracy(gold, metric, grouped=grouped)
        untied, constant = brute_untied_and_constant(gold, metric, found.epsilon, grouped)
        assert found.untied == untied and found.constant == pytest.approx(constant, abs=1e-12)
        assert found.informative == (untied > 0 and found.accuracy > constant + 1e-12)


def test_a_metric_no_better_than_tying_everything_earns_no_epsilon():
    # One item, h = (0, 0, 1), m = (0, 5, 1): pair (1, 2) a human tie with Δm 5, (1, 3) concordant with Δm 1,
    # (2, 3) discordant with Δm -4. ε = 0: only (1, 3) is right, 1/3. ε = 1 or 4: no pair is right. ε = 5: only
    # the human tie, 1/3. So acc*_eq = 1/3 at ε = 0, every pair untied -- and tying every pair gets 1/3 too.
    gold, metric = np.array([[0], [0], [1]], float), np.array([[0], [5], [1]], float)
    for grouped in (True, False):
        found = st.tie_calibrated_accuracy(gold, metric, grouped=grouped)
        assert (found.accuracy, found.epsilon, found.untied) == (pytest.approx(1 / 3), 0.0, 3)
        assert found.constant == pytest.approx(1 / 3) and not found.informative
    # One more concordant output beats it: h = (0, 0, 1, 2), m = (0, 5, 1, 6) adds three right pairs of six.
    better = st.tie_calibrated_accuracy(np.array([[0], [0], [1], [2]], float), np.array([[0], [5], [1], [6]], float))
    assert better.accuracy > better.constant and better.informative
