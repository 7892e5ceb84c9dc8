"""The multi-level framework: triplets, F-measures, level routing, ML-DREEM and ML-METEOR.

The METEOR tests start one JVM for the module (one parameter set: the jar's English defaults, passed
explicitly, so ML-METEOR and the plain metric share the process).
"""
from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

from muttlab.engine.runner import registry_for, run, score_batches
from muttlab.settings import Settings
from muttlab.sources import load_flickr_captions
from muttlab.metrics.base import MetricError
from muttlab.metrics.dependencies import ROOT_HEAD, f_measure, features, pair_f
from muttlab.metrics.dreem import Dreem
from muttlab.metrics.multilevel import (LEVELS, METEOR_DEFAULTS, LevelClassifier, MultiLevelDreem, MultiLevelMeteor,
                                document_score)


@pytest.fixture(scope="module")
def flickr(data_dir):
    """30 Flickr8k images: candidate = a caption of the next image (or the image's own second caption)."""
    captions = load_flickr_captions(Settings(data_dir=data_dir))
    images = sorted(captions)[:30]
    cands = [captions[images[i + 1]][0] for i in range(29)] + [captions[images[0]][1]]
    refs = [list(captions[image]) for image in images]
    return cands, refs


def test_dependency_triplets_of_a_simple_sentence():
    (feats,) = features(["A dog chases the cat."])
    assert {("nsubj", "chase", "dog"), ("dobj", "chase", "cat"), ("root", ROOT_HEAD, "chase")} <= set(feats.triplets)
    assert feats.words == Counter({"a": 1, "dog": 1, "chase": 1, "the": 1, "cat": 1})  # lemmas, no punctuation


def test_f_measure_by_hand():
    # 2 clipped matches; precision 2/3, recall 2/4 -> F = 2*(2/3)(1/2)/(2/3+1/2) = 4/7.
    assert f_measure(Counter("aab"), Counter("abcc")) == pytest.approx(4 / 7)
    assert f_measure(Counter("ab"), Counter("cd")) == 0.0
    (same,) = pair_f(["A man is playing a guitar."], ["A man is playing a guitar."])
    assert same.word == pytest.approx(1.0) and same.dep == pytest.approx(1.0)
    (passive,) = pair_f(["The guitar is played by a man."], ["A man is playing a guitar."])
    assert passive.word > passive.dep  # same words, different relations: why F_dep is in the classifier


def test_level_boundaries_and_validation():
    clf = LevelClassifier(0.5, 0.2, 0.6)
    # F = 0.5 * word + 0.5 * dep; F < 0.2 low, 0.2 <= F < 0.6 medium, F >= 0.6 high.
    levels = clf.levels(np.array([0.0, 0.4, 0.2, 1.0, 0.6]), np.array([0.3, 0.0, 0.2, 0.1, 0.6]))
    assert levels.tolist() == [0, 1, 1, 1, 2]
    with pytest.raises(MetricError, match="theta1 < theta2"):
        LevelClassifier(0.5, 0.6, 0.6)
    with pytest.raises(MetricError, match="lambda"):
        LevelClassifier(1.5, 0.1, 0.2)


def test_document_score_is_reference_length_weighted():
    # (0.2*10 + 0.8*30) / 40 = 0.65
    assert document_score([0.2, 0.8], [10, 30]) == pytest.approx(0.65)
    with pytest.raises(MetricError):
        document_score([0.2], [0])


def _model(levels: dict, lam=0.5, theta=(0.2, 0.5)) -> dict:
    return {"lambda": lam, "theta": list(theta), "levels": levels}


def test_ml_dreem_with_equal_levels_is_dreem(flickr):
    cands, refs = flickr
    level = {"weights": {"bow": 0.5, "glove": 0.25, "sent": 0.25}, "length_penalty": 0.5}
    ml = MultiLevelDreem(model=_model({lv: level for lv in LEVELS}))
    np.testing.assert_allclose(ml.score(cands, refs), Dreem(**{"weights": level["weights"],
                                                                "length_penalty": 0.5}).score(cands, refs))


def test_ml_dreem_routes_each_pair_to_its_level(flickr):
    cands, refs = flickr
    levels = {"low": {"weights": {"bow": 1, "glove": 0, "sent": 0}, "length_penalty": 1.0},
              "medium": {"weights": {"bow": 0, "glove": 1, "sent": 0}, "length_penalty": 0.0},
              "high": {"weights": {"bow": 0, "glove": 0, "sent": 1}, "length_penalty": 0.5}}
    ml = MultiLevelDreem(model=_model(levels, lam=0.5, theta=(0.15, 0.3)))
    got = ml.score(cands, refs)
    singles = {lv: Dreem(weights=p["weights"], length_penalty=p["length_penalty"]) for lv, p in levels.items()}
    for cand, rs, score in zip(cands, refs, got):
        pf = pair_f([cand] * len(rs), rs)
        want = []
        for ref, f in zip(rs, pf):
            mixed = 0.5 * f.word + 0.5 * f.dep
            lv = "low" if mixed < 0.15 else "medium" if mixed < 0.3 else "high"
            want.append(singles[lv].score([cand], [[ref]])[0])
        assert score == pytest.approx(max(want))


def test_tuned_parameters_come_from_the_installed_file_then_bundled(tmp_path):
    from tests.metrics.test_dreem import _install

    level = {"weights": {"bow": 1, "glove": 0, "sent": 0}, "length_penalty": 0.0}
    (tmp_path / "ml-dreem.json").write_text(json.dumps(_model({lv: level for lv in LEVELS}, 0.3, (0.1, 0.4))),
                                            encoding="utf-8")
    fallback = MultiLevelDreem(model_dir=tmp_path / "elsewhere")
    assert MultiLevelDreem(model_dir=tmp_path).source == fallback.source  # not installed: not used
    ident = _install(tmp_path, "ml-dreem.json")
    metric = MultiLevelDreem(model_dir=tmp_path)
    assert metric.source == str(tmp_path / "ml-dreem.json")
    assert metric.params()["lambda"] == 0.3 and metric.params()["theta"] == "0.1/0.4"
    assert metric.params()["tuned"] == ident and "tuned" not in fallback.params()
    (tmp_path / "ml-dreem.json").write_text(json.dumps({"lambda": 0.3, "theta": [0.5, 0.1], "levels": {}}),
                                            encoding="utf-8")
    _install(tmp_path, "ml-dreem.json")
    with pytest.raises(MetricError, match="re-run `muttlab multilevel tune`"):
        MultiLevelDreem(model_dir=tmp_path).params()


def test_ml_dreem_in_a_run(data_settings, mutt_suite):
    from muttlab.trials import Suite
    suite = Suite("neg_subj-20", mutt_suite.of("neg_subj")[:20])
    results = run(suite, ["ML-DREEM", "DREEM"], ref_counts=[5], settings=data_settings)
    assert set(results.table["metric"]) == {"ML-DREEM", "DREEM"}
    assert results.table["s_orig"].between(-1, 1).all()
    assert "ML-DREEM|lambda:" in results.signatures["ML-DREEM"]


@pytest.mark.java
def test_ml_meteor_with_default_levels_equals_meteor(flickr, data_settings):
    from muttlab.metrics.meteor import Meteor
    cands, refs = flickr
    ml = MultiLevelMeteor(model=_model({lv: dict(METEOR_DEFAULTS) for lv in LEVELS}))
    meteor = Meteor(**METEOR_DEFAULTS)
    try:
        # Per-reference scoring and taking the best equals the jar's own multi-reference score.
        np.testing.assert_allclose(ml.score(cands, refs), meteor.score(cands, refs), atol=1e-12)
        (through_cache,) = score_batches(ml, [(cands[:5], refs[:5])], data_settings,
                                         registry_for(data_settings))
        np.testing.assert_allclose(through_cache, meteor.score(cands[:5], refs[:5]), atol=1e-12)
    finally:
        ml.close()
        meteor.close()


@pytest.mark.java
def test_ml_meteor_on_nested_pools_equals_scoring_each_pool(mutt_suite, data_settings):
    """The shipped model on real trials: distinct pairs scored once and shared by the 5/10/20 pools equal
    each pool classified and scored pair by pair on its own, with nothing remembered in between."""
    from muttlab.metrics import meteor
    from muttlab.metrics.multilevel import _MultiLevel
    trials = [t for name in mutt_suite.corruptions() for t in mutt_suite.of(name)[::40]]
    batches = [([t.original for t in trials] + [t.corrupted for t in trials], [list(t.refs(k)) for t in trials] * 2)
               for k in (5, 10, 20)]
    ml = registry_for(data_settings).get("ML-METEOR")
    try:
        ours = [ml.score(c, r) for c, r in batches]
        direct = []
        for cands, refs in batches:
            meteor.clear_memo()
            direct.append(_MultiLevel._score(ml, cands, refs))
        for got, expected in zip(ours, direct):
            assert np.array_equal(got, expected)
        levels = ml.levels_of(*[list(x) for x in zip(*[(c, r) for c, rs in zip(*batches[2]) for r in rs])])
        assert set(levels.tolist()) == {0, 1, 2}  # every level's setting took part
    finally:
        ml.close()


def test_ml_meteor_is_registered_and_cheap_to_build(data_settings):
    metric = registry_for(data_settings).get("ML-METEOR")
    assert metric._meteors == {}  # no JVM until the first score
    assert metric.signature().startswith("ML-METEOR|lambda:")


def test_explicit_model_is_not_rebuilt_by_name_in_workers(data_settings):
    level = {"weights": {"bow": 1, "glove": 0, "sent": 0}, "length_penalty": 0.0}
    assert MultiLevelDreem(model=_model({lv: level for lv in LEVELS})).parallel is False
    assert registry_for(data_settings).get("ML-DREEM").parallel is True
