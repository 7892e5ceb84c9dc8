"""ΔBLEU unit study: statistics equal muttlab.metrics.delta_bleu, the Flickr8K-Expert set, unit correlations vs scipy."""
from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest
from scipy import stats as sp

from muttlab.errors import DataError, MuttlabError
from muttlab.settings import Settings
from muttlab.sources import load_flickr_expert
from muttlab.human import dbleu
from muttlab.metrics.delta_bleu import corpus_bleu, order_columns, segment_statistics, sentence_bleu


@pytest.fixture(scope="module")
def data(data_dir):
    return dbleu.flickr_expert_set(Settings(data_dir=data_dir))


@pytest.fixture(scope="module")
def table(data):
    return dbleu.match_table(data)


def test_flickr_expert_set_definition(data, data_dir):
    judgments = load_flickr_expert(Settings(data_dir=data_dir))
    assert len(data) == 5664  # 5,822 expert pairs less the 158 that rate one of the image's own captions
    means = {(j.image, j.caption_id): np.mean(j.scores) for j in judgments}
    for i in range(500):
        hyp, refs, base = data.candidates[i], data.weighted_references(i), data.plain_mask(i)
        human, key = data.mean_human[i], data.ids[i]
        image, cid = key.split("|")
        assert human == pytest.approx(means[(image, cid)])
        assert base[:5] == [True] * 5 and not any(base[5:])
        assert all(w == 1.0 for _, w in refs[:5])
        assert hyp not in [r for r, _ in refs[5:]]  # never the caption itself
        others = {c: m for (img, c), m in means.items() if img == image and c != cid and c.split("#")[0] != image}
        assert sorted(w for _, w in refs[5:]) <= sorted((m - 2.5) / 1.5 for m in others.values())
        assert all(-1.0 <= w <= 1.0 for _, w in refs)


def _galley_statistics(hypothesis: str, refs: list[tuple[str, float]], max_n: int = 4) -> list[float]:
    """Galley et al. (2015) eq. 2 written out for one segment: per order, the sum over hypothesis n-grams of
    the best w_j · min(count in h, count in r_j) over the references holding the n-gram, and max_j w_j times
    the hypothesis n-gram count; then the hypothesis length and the closest positively weighted reference
    length (ties to the shorter)."""
    def counts(tokens, n):
        return Counter(tuple(tokens[k:k + n]) for k in range(len(tokens) - n + 1))

    hyp = hypothesis.split()
    matches, totals = [], []
    for n in range(1, max_n + 1):
        ref_counts = [(counts(r.split(), n), w) for r, w in refs]
        numerator = 0.0
        for gram, c in counts(hyp, n).items():
            values = [w * min(c, rc[gram]) for rc, w in ref_counts if gram in rc]
            numerator += max(values) if values else 0.0
        matches.append(numerator)
        totals.append(max(w for _, w in refs) * max(0, len(hyp) - n + 1))
    lengths = [len(r.split()) for r, w in refs if w > 0]
    closest = min(lengths, key=lambda length: (abs(len(hyp) - length), length))
    return matches + totals + [len(hyp), closest]


@pytest.mark.parametrize("threshold, weighted", [(None, False), (-1.0, True), (0.0, True), (-1.0, False), (0.5, True)])
def test_segment_statistics_follow_galley_equation_2(data, table, threshold, weighted):
    ours = segment_statistics(table, threshold, weighted)[:400]
    refs = [[(r, w if weighted else 1.0) for (r, w), b in zip(data.weighted_references(i), data.plain_mask(i))
             if b or (threshold is not None and w >= threshold)] for i in range(400)]
    expected = [_galley_statistics(data.candidates[i], refs[i]) for i in range(400)]
    np.testing.assert_allclose(ours, expected, atol=1e-12)


@pytest.mark.parametrize("order", [1, 2, 3, 4])
def test_vectorised_bleu_equals_delta_bleu(table, order):
    stats = segment_statistics(table, -1.0, True)[:, order_columns(4, order)]
    units = stats[np.random.default_rng(order).integers(0, len(stats), (40, 30))].sum(axis=1)
    np.testing.assert_allclose(dbleu.bleu_rows(units, order, order), [corpus_bleu(u, order) for u in units], atol=1e-12)
    np.testing.assert_allclose(dbleu.bleu_rows(stats[:300], order, order, smooth=True),
                               [sentence_bleu(s, order) for s in stats[:300]], atol=1e-12)


def test_all_weights_one_makes_delta_bleu_equal_bleu(table):
    # Galley et al. §3: with every weight 1, ΔBLEU is BLEU.
    np.testing.assert_array_equal(segment_statistics(table, None, True), segment_statistics(table, None, False))


def test_unit_assignments_are_partitions():
    index = dbleu.unit_assignments(1003, 100, 7, seed=1)
    assert index.shape == (7, 10, 100)
    for row in index:
        assert np.unique(row).size == 1000
    np.testing.assert_array_equal(index, dbleu.unit_assignments(1003, 100, 7, seed=1))
    with pytest.raises(MuttlabError, match="unit size"):
        dbleu.unit_assignments(10, 11, 1, seed=0)


def test_unit_correlations_equal_scipy_per_assignment(data, table):
    base = segment_statistics(table, None, False)
    metric = dbleu.SegmentScores("BLEU", stats=base)
    (result,) = dbleu.unit_correlations(data.mean_human, [metric], unit_size=50, assignments=5, seed=3)
    index = dbleu.unit_assignments(len(data), 50, 5, seed=3)
    for k in (0, 4):
        human_units = data.mean_human[index[k]].mean(axis=1)
        bleu_units = [corpus_bleu(base[u].sum(axis=0)) for u in index[k]]
        assert result.rho_all[k] == pytest.approx(sp.spearmanr(human_units, bleu_units).statistic, abs=1e-12)
        assert result.tau_all[k] == pytest.approx(sp.kendalltau(human_units, bleu_units).statistic, abs=1e-12)
    assert result.rho == pytest.approx(np.mean(result.rho_all)) and result.units == len(data) // 50


def test_a_perfect_metric_correlates_perfectly(data):
    (result,) = dbleu.unit_correlations(data.mean_human, [dbleu.SegmentScores("human", scores=data.mean_human)], 100, 10, 0)
    assert result.rho == pytest.approx(1.0) and result.tau == pytest.approx(1.0)


def test_unit_study_tables(data, table):
    study = dbleu.unit_study(data, assignments=20, sweep_assignments=4, unit_sizes=(10, 100), orders=(1, 4),
                             thresholds=(0.0,), table=table, seed=2)
    assert list(study.main.metric) == ["BLEU", "sentence-BLEU", "DeltaBLEU"]
    assert (study.main.units == 56).all() and (study.main.assignments == 20).all()
    assert (study.main.rho_low <= study.main.rho).all() and (study.main.rho <= study.main.rho_high).all()
    assert study.sweeps.groupby("sweep").size().to_dict() == {"order": 6, "threshold": 2, "unit_size": 6}
    again = dbleu.unit_study(data, assignments=20, sweeps=False, table=table, seed=2)
    assert again.main.equals(study.main)


def test_unit_study_reports_each_part_before_doing_it(data, table):
    """The Correlation page's progress bar: matching, the main comparison and each sweep setting, then done."""
    calls = []
    dbleu.unit_study(data, assignments=5, sweep_assignments=2, unit_sizes=(10, 100, 10_000), orders=(1, 4),
                     thresholds=(0.0,), table=table, progress=lambda *call: calls.append(call))
    # The unit size larger than the set (10,000) is skipped, and not counted.
    assert [step for step, _, _ in calls] == list(range(8)) and {total for _, total, _ in calls} == {7}
    assert [message for _, _, message in calls] == [
        "matching n-grams", "correlating units of 100, 5 random assignments", "sweep: units of 10",
        "sweep: units of 100", "sweep: n-gram order 1", "sweep: n-gram order 4",
        "sweep: reference weight threshold 0", "done"]


def test_user_set_jsonl_and_tsv(tmp_path):
    segs = [("a man rides a horse", [["a man rides a brown horse", 1.0], ["a dog runs", -0.5]], 4.0),
            ("a dog runs on grass", [["a dog runs on the grass", 1.0]], 3.0),
            ("two kids play", [["two children are playing", 0.8], ["two kids play ball", 1.0]], 2.0)]
    jsonl = tmp_path / "set.jsonl"
    jsonl.write_text("\n".join(json.dumps({"hypothesis": h, "references": r, "human": s}) for h, r, s in segs),
                     encoding="utf-8")
    data = dbleu.user_set(jsonl)
    assert list(data.mean_human) == [4.0, 3.0, 2.0]
    assert data.plain_mask(0) == [True, False]  # positively weighted references are BLEU's
    tsv = tmp_path / "set.tsv"
    tsv.write_text("\n".join("\t".join([h] + [str(x) for ref in r for x in ref]) for h, r, _ in segs), encoding="utf-8")
    ratings = tmp_path / "ratings.txt"
    ratings.write_text("4\n3\n2\n", encoding="utf-8")
    assert list(dbleu.user_set(tsv, ratings).mean_human) == [4.0, 3.0, 2.0]
    ratings.write_text("4\n3\n", encoding="utf-8")
    with pytest.raises(DataError, match="2 ratings for 3 segments"):
        dbleu.user_set(tsv, ratings)
    with pytest.raises(DataError, match="line 1: no numeric 'human'"):
        dbleu.user_set(tsv)
    study = dbleu.unit_study(data, unit_size=1, assignments=3, sweeps=False)
    assert study.main.units.tolist() == [3, 3, 3]


def test_comparison_on_the_same_assignments(data, table):
    study = dbleu.unit_study(data, assignments=30, sweeps=False, table=table, seed=4)
    cmp = study.comparison
    assert set(cmp.baseline) == {"BLEU", "sentence-BLEU"} and set(cmp.statistic) == {"rho", "tau"}
    rho = study.main.set_index("metric")["rho"]
    row = cmp[(cmp.baseline == "BLEU") & (cmp.statistic == "rho")].iloc[0]
    assert row.mean_diff == pytest.approx(rho["DeltaBLEU"] - rho["BLEU"])
    assert row.diff_low <= row.mean_diff <= row.diff_high and 0 <= row.share_better <= 1
