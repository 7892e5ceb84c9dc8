"""MUTT §5 SICK inconsistency study: the list parser and the study on real data."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sp

from muttlab.errors import DataError, MuttlabError
from muttlab.engine.runner import registry_for
from muttlab.settings import Settings
from muttlab.human import sick
from muttlab.metrics.base import Metric, MetricUnavailable


@pytest.fixture(scope="module")
def settings(data_dir, tmp_path_factory):
    return Settings(data_dir=data_dir, cache_dir=tmp_path_factory.mktemp("cache"), workers=1)


def test_parse_neg_subj_list(data_dir):
    listing = sick.parse_corruption_list(data_dir / "mutt" / "corruptions" / "neg_subj.txt")
    assert (listing.name, listing.description) == ("neg_subj", "negated subject")
    # The file's own header: num 543, mean 3.62504604051, stddev 0.444925602341.
    assert listing.declared_count == len(listing.pairs) == 543
    scores = np.array([p.relatedness for p in listing.pairs])
    assert scores.mean() == pytest.approx(listing.declared_mean, abs=1e-9)
    assert scores.std() == pytest.approx(listing.declared_stddev, abs=1e-9)
    first = listing.pairs[0]
    assert (first.dataset, first.original, first.sentence, first.corrupted, first.relatedness) == (
        "SEMEVAL", "a man is holding a frog", "A man is holding a frog", "There is no man holding a frog", 2.1)


@pytest.mark.parametrize("name", sick.SICK_CORRUPTIONS)
def test_every_list_parses_and_matches_its_header(data_dir, name):
    listing = sick.parse_corruption_list(data_dir / "mutt" / "corruptions" / f"{name}.txt")
    assert listing.declared_count == len(listing.pairs)
    assert np.mean([p.relatedness for p in listing.pairs]) == pytest.approx(listing.declared_mean, abs=1e-8)


def test_malformed_list_names_the_line(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text("neg_subj\nnegated subject\n\nnum: 1\n\tdataset: FLICKR\n\torig: a\n\tcorr: b\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"line 7: expected 'sent:'"):
        sick.parse_corruption_list(path)
    path.write_text("x\ny\n\tdataset: F\n\torig: a\n\tsent: a\n\tcorr: b\n\tscore: high\n", encoding="utf-8")
    with pytest.raises(DataError, match="score must be a number"):
        sick.parse_corruption_list(path)


class _Missing(Metric):
    name = "NotInstalled"

    def check_available(self):
        raise MetricUnavailable("NotInstalled needs a package that is not installed (pip install it)")

    def _score(self, candidates, references):
        raise AssertionError("never scored")


@pytest.fixture(scope="module")
def neg_subj(settings):
    registry = registry_for(settings)
    missing = _Missing()
    registry.add(missing)
    return sick.sick_study(settings, "neg_subj", ["BLEU-2", "NotInstalled"], refs=5, registry=registry)


def test_study_pairs_and_table_shape(neg_subj, mutt_suite):
    # neg_subj has 336 trials (data README); every one is a pair of the list.
    assert len(neg_subj.pairs) == 336 == len(mutt_suite.of("neg_subj"))
    assert neg_subj.listed == 543 and neg_subj.unmatched == 207
    assert list(neg_subj.correlations.index) == ["gold", "BLEU-2"]
    assert np.allclose(neg_subj.correlations.to_numpy(), neg_subj.correlations.to_numpy().T)
    assert np.allclose(np.diag(neg_subj.correlations), 1.0)
    expected = sp.pearsonr(neg_subj.pairs["gold"], neg_subj.pairs["BLEU-2"]).statistic
    assert neg_subj.correlations.loc["gold", "BLEU-2"] == pytest.approx(expected)


def test_unavailable_metric_is_skipped_with_a_note(neg_subj):
    assert "NotInstalled" in neg_subj.skipped and "NotInstalled" not in neg_subj.pairs
    assert any("NotInstalled skipped" in n and "pip install" in n for n in neg_subj.notes())


def test_scores_are_the_metric_on_the_pool(neg_subj, settings, mutt_suite):
    trials = {t.id: t for t in mutt_suite.of("neg_subj")}
    rows = neg_subj.pairs.head(20)
    metric = registry_for(settings).get("BLEU-2")
    refs = [list(trials[t].refs(5)) for t in rows["trial"]]
    assert np.allclose(rows["BLEU-2"], metric.score(list(rows["corrupted"]), refs))
    assert np.allclose(rows["BLEU-2:orig"], metric.score([trials[t].original for t in rows["trial"]], refs))
    assert all(trials[t].corrupted == c for t, c in zip(rows["trial"], rows["corrupted"]))


def test_histograms_count_every_pair(neg_subj):
    hist = neg_subj.histograms(bins=10)
    for variable, group in hist.groupby("variable"):
        assert group["count"].sum() == 336 and len(group) == 10
        assert group["density"].sum() == pytest.approx(1.0)
    gold = hist[hist.variable == "gold"]
    assert gold["left"].min() == 1.0 and gold["right"].max() == 5.0


def test_sentence_reference_mode(settings):
    study = sick.sick_study(settings, "det_sub", ["BLEU-1"], reference="sentence")
    metric = registry_for(settings).get("BLEU-1")
    rows = study.pairs.head(10)
    assert np.allclose(rows["BLEU-1"], metric.score(list(rows["corrupted"]), [[s] for s in rows["sentence"]]))
    assert study.refs is None and len(study.pairs) == 65  # det_sub: 65 trials (data README)


def test_bad_requests_are_user_errors(settings):
    with pytest.raises(MuttlabError, match="no SICK gold"):
        sick.sick_study(settings, "double_PP", ["BLEU-1"])
    with pytest.raises(MuttlabError, match="--refs 30"):
        sick.sick_study(settings, "neg_subj", ["BLEU-1"], refs=30)
    with pytest.raises(MuttlabError, match="unknown correlation"):
        sick.sick_study(settings, "neg_subj", ["BLEU-1"], method="cosine")


def test_paper_reading_is_every_sick_pair_b_against_a_oriented(settings, data_dir):
    study = sick.sick_study(settings, "neg_subj", ["BLEU-1", "TER"], reading="paper")
    header = sick.load_corruption_list(settings, "neg_subj")
    # The study's list header (num 543, mean 3.62504604051, stddev 0.444925602341) describes the same pairs.
    assert len(study.pairs) == header.declared_count == 543 and study.listed == 543
    assert study.pairs["gold"].mean() == pytest.approx(header.declared_mean, abs=1e-9)
    assert study.pairs["gold"].std(ddof=0) == pytest.approx(header.declared_stddev, abs=1e-9)
    sick_txt = {p.pair_id: p for p in sick.load_sick(settings)}
    rows = study.pairs.head(25)
    assert all(sick_txt[i].sentence_a.strip() == a for i, a in zip(rows["pair_id"], rows["sentence"]))
    registry = registry_for(settings)
    refs = [[a] for a in rows["sentence"]]
    assert np.allclose(rows["BLEU-1"], registry.get("BLEU-1").score(list(rows["corrupted"]), refs))
    # TER is an error rate: negated, so every variable reads "larger = more related".
    assert np.allclose(rows["TER"], -registry.get("TER").score(list(rows["corrupted"]), refs))
    assert study.reading == "paper" and study.reference == "sentence" and study.refs is None
    assert "every SICK pair" in study.notes()[0]
    with pytest.raises(MuttlabError, match="--refs applies to the trials reading"):
        sick.sick_study(settings, "neg_subj", ["BLEU-1"], refs=5, reading="paper")
    with pytest.raises(MuttlabError, match="unknown reading"):
        sick.sick_study(settings, "neg_subj", ["BLEU-1"], reading="table3")


def test_paper_reading_reproduces_table_3_for_meteor_and_terp(settings):
    """Boag et al. 2016, Table 3: gold~METEOR 0.09, gold~TERp 0.07, METEOR~TERp 0.80 (the BADGER cells
    depend on the BADGER reimplementation and are checked by `muttlab reproduce`)."""
    study = sick.sick_study(settings, "neg_subj", ["METEOR-1.5", "TERp"], reading="paper")
    r = study.correlations
    assert r.loc["gold", "METEOR-1.5"] == pytest.approx(0.09, abs=0.1)
    assert r.loc["gold", "TERp"] == pytest.approx(0.07, abs=0.1)
    assert r.loc["METEOR-1.5", "TERp"] == pytest.approx(0.80, abs=0.1)
