"""Tuning and evaluation of the multi-level metrics: data splits, τ-c against scipy, the grid search,
and tune -> JSON -> metric -> eval on a small SICK subset (DREEM only: no JVM here)."""
from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from muttlab.learned import multilevel
from muttlab.cli import main
from muttlab.judged import JudgedSet, flickr_expert
from muttlab.stats import RatingsCorrelator, correlation_with_ratings
from muttlab.learned.multilevel import PairArrays, search
from muttlab.engine.runner import model_dir
from muttlab.metrics.multilevel import MultiLevelDreem


@pytest.fixture(scope="module")
def flickr_set(data_dir):
    from muttlab.settings import Settings
    return multilevel.load_eval_set("flickr8k", Settings(data_dir=data_dir))


@pytest.fixture(scope="module")
def sick_full(data_dir):
    from muttlab.settings import Settings
    return multilevel.load_eval_set("sick", Settings(data_dir=data_dir))


def test_flickr_expert_set(flickr_set, data_dir):
    from muttlab.settings import Settings
    # 5,822 judged pairs minus those whose caption belongs to the judged image leaves 5,664
    # (the 16,992 = 5,664 x 3 expert judgments of Hessel et al. 2021, CLIPScore, §4).
    assert len(flickr_set) == 5664
    assert flickr_set.human.shape == (5664, 3)
    assert all(len(r) == 5 and c not in r for c, r in zip(flickr_set.candidates, flickr_set.references))
    dev, test = flickr_set.subset("dev"), flickr_set.subset("test")
    assert len(dev) + len(test) == 5664
    # Images, not pairs, are split: no reference pool is on both sides.
    assert not {tuple(r) for r in dev.references} & {tuple(r) for r in test.references}
    again = multilevel.load_eval_set("flickr8k", Settings(data_dir=data_dir))
    assert (again.split == flickr_set.split).all()
    other = flickr_expert(Settings(data_dir=data_dir)).split_by_group(0.5, seed=99)
    assert (other.split != flickr_set.split).any()


def test_sick_set_uses_train_for_dev_and_test_for_report(sick_full, data_dir):
    from muttlab.settings import Settings
    from muttlab.sources import load_sick
    pairs = load_sick(Settings(data_dir=data_dir))
    by_split = {s: [p for p in pairs if p.split == s] for s in ("TRAIN", "TEST")}
    dev, test = sick_full.subset("dev"), sick_full.subset("test")
    assert len(dev) == len(by_split["TRAIN"]) and len(test) == len(by_split["TEST"])
    assert dev.candidates[0] == by_split["TRAIN"][0].sentence_b
    assert dev.references[0] == [by_split["TRAIN"][0].sentence_a]
    assert test.human[0, 0] == by_split["TEST"][0].relatedness


def test_kendall_tau_c_equals_scipy(flickr_set):
    rng = np.random.default_rng(0)
    lengths = np.array([len(c.split()) for c in flickr_set.candidates], dtype=float)  # many ties
    for x in (lengths, rng.normal(size=len(flickr_set))):
        xs, ys = np.repeat(x, 3), flickr_set.human.ravel()
        want = stats.kendalltau(xs, ys, variant="c").statistic
        assert correlation_with_ratings(x, flickr_set.human, "kendall_c") == pytest.approx(want, abs=1e-12)
        assert RatingsCorrelator("kendall_c", flickr_set.human)(x) == pytest.approx(want, abs=1e-12)
        assert RatingsCorrelator("pearson", flickr_set.human)(x) == pytest.approx(stats.pearsonr(xs, ys).statistic,
                                                                                 abs=1e-12)
    y_cont = rng.normal(size=300)
    x_cont = y_cont + rng.normal(size=300)
    # Continuous ratings (300 classes): the correlator asks scipy.
    assert correlation_with_ratings(x_cont, y_cont[:, None], "kendall_c") == pytest.approx(
        stats.kendalltau(x_cont, y_cont, variant="c").statistic, abs=1e-12)
    assert correlation_with_ratings(x_cont, y_cont[:, None], "pearson") == pytest.approx(
        stats.pearsonr(x_cont, y_cont).statistic, abs=1e-12)


def test_search_finds_the_levels_that_matter():
    # Candidate quality f in [0, 1); choice 0 tracks the human score only where f < 0.5, choice 1 only
    # where f >= 0.5. One choice for everything gets half the signal; the right split gets all of it.
    rng = np.random.default_rng(1)
    n = 2000
    f = rng.uniform(0, 1, n)
    human = rng.normal(size=n)
    noise = rng.normal(size=(2, n))
    scores = np.vstack([np.where(f < 0.5, human, noise[0]), np.where(f >= 0.5, human, noise[1])])
    pairs = PairArrays(np.arange(n), np.arange(n), f, f, [""] * n, [""] * n)
    result = search(scores, pairs, human[:, None], "pearson", lambdas=(0.5,), thetas=(0.3, 0.5, 0.7))
    assert result.single_corr < 0.75
    assert result.multi_corr == pytest.approx(1.0, abs=1e-9)
    low, _, high = result.level_choice
    assert (low, high) == (0, 1)
    assert result.theta[0] <= 0.5 <= result.theta[1]


@pytest.fixture(scope="module")
def small_sick(sick_full):
    """SICK cut to 250 dev and 250 test pairs, so tune and eval run in seconds."""
    dev, test = sick_full.subset("dev"), sick_full.subset("test")
    small = JudgedSet("sick", dev.candidates[:250] + test.candidates[:250], dev.references[:250] + test.references[:250],
                      np.vstack([dev.human[:250], test.human[:250]]), ids=dev.ids[:250] + test.ids[:250],
                      split=np.array(["dev"] * 250 + ["test"] * 250))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(multilevel, "load_eval_set", lambda name, settings: small)
        yield small


@pytest.fixture(scope="module")
def tuned(small_sick, data_dir, tmp_path_factory):
    """DREEM tuned once on the small SICK dev part, on a reduced λ/θ grid."""
    from muttlab.settings import Settings
    settings = Settings(data_dir=data_dir, cache_dir=tmp_path_factory.mktemp("cache"), workers=1)
    report = multilevel.tune("dreem", "sick", settings, lambdas=(0.25, 0.75), thetas=(0.4, 0.6, 0.8))
    return settings, report


def test_tune_writes_parameters_the_metric_reads(small_sick, tuned):
    data_settings, report = tuned
    folder = model_dir(data_settings)
    assert {p.split("/")[-1] for p in report.files} == {"ml-dreem.sick.json", "dreem.sick.json"}
    saved = json.loads((folder / "ml-dreem.sick.json").read_text())
    assert saved["dev_correlation"] == pytest.approx(report.multi_dev)
    assert report.multi_dev >= report.single_dev  # the single entry is one of the configurations searched
    metric = MultiLevelDreem(model=saved)
    dev = small_sick.subset("dev")
    got = correlation_with_ratings(metric.score(dev.candidates, dev.references), dev.human, "pearson")
    assert got == pytest.approx(report.multi_dev, abs=1e-9)  # the saved model reproduces the search's number


def test_eval_cli_reports_cis(small_sick, tuned, capsys, monkeypatch):
    data_settings, _ = tuned
    monkeypatch.setenv("MUTTLAB_DATA_DIR", str(data_settings.data_dir))
    code = main(["multilevel", "eval", "--metric", "dreem", "--dataset", "sick", "--resamples", "200",
                 "--cache-dir", str(data_settings.cache_dir), "--format", "json"])
    assert code == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["metric"] for r in rows] == ["DREEM", "ML-DREEM"]
    for row in rows:
        assert row["n"] == 250 and row["ci_low"] <= row["test"] <= row["ci_high"]
    assert rows[1]["delta_low"] <= rows[1]["delta"] <= rows[1]["delta_high"]
    assert main(["multilevel", "eval", "--metric", "bleu"]) == 2


def test_dreem_grid_covers_the_weight_simplex():
    grid = multilevel.dreem_grid()
    assert len(grid) == 35 * len(multilevel.DREEM_LP_EXPONENTS)  # 4 weights in steps of 1/4 summing to 1
    assert all(abs(sum(g["weights"].values()) - 1.0) < 1e-9 for g in grid)
    three = multilevel.dreem_grid(components=("bow", "glove", "sent"))
    assert len(three) == 15 * len(multilevel.DREEM_LP_EXPONENTS) and all(g["weights"]["reval"] == 0 for g in three)
    assert {tuple(sorted(g["weights"].items())) for g in three} < {tuple(sorted(g["weights"].items())) for g in grid}
