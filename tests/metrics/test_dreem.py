"""DREEM: representation cosines against gensim and hand values, tuned-weight loading, the runner path."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from muttlab.engine.runner import registry_for, score_batches
from muttlab.sources import load_sick
from muttlab.metrics.base import MetricError, MetricUnavailable
from muttlab.metrics.dreem import Dreem, length_penalty, pair_components, reval_encoder
from muttlab.metrics.tokenize import ptb_tokenize
from muttlab.resources.glove import load_glove


@pytest.fixture(scope="module")
def sick_pairs(data_dir):
    from muttlab.settings import Settings
    return [p for p in load_sick(Settings(data_dir=data_dir)) if p.split == "TEST"][:150]


def test_length_penalty_by_hand():
    # exp(1 - longer/shorter): equal lengths 1; 5 vs 10 tokens in either order exp(-1).
    assert length_penalty([7], [7])[0] == pytest.approx(1.0)
    assert length_penalty([5, 10], [10, 5]) == pytest.approx([math.exp(-1), math.exp(-1)])


def test_bag_of_words_cosine_by_hand():
    # counts (a:1, dog:1, runs:1) and (a:1, dog:1, sleeps:1): dot 2, norms sqrt(3) each -> 2/3.
    comps = pair_components(["A dog runs."], ["a dog sleeps"])
    assert comps.cosines["bow"][0] == pytest.approx(2 / 3)
    # (the:2, dog:1) vs (the:1, dog:1): dot 3, norms sqrt(5), sqrt(2).
    comps = pair_components(["the dog the"], ["the dog"])
    assert comps.cosines["bow"][0] == pytest.approx(3 / math.sqrt(10))


def test_glove_average_equals_gensim_mean_vector(sick_pairs):
    kv = load_glove()
    cands = [p.sentence_b for p in sick_pairs[:40]]
    refs = [p.sentence_a for p in sick_pairs[:40]]
    comps = pair_components(cands, refs)
    for cand, ref, got in zip(cands, refs, comps.cosines["glove"]):
        a = kv.get_mean_vector([t for t in ptb_tokenize(cand).split() if t in kv], pre_normalize=False)
        b = kv.get_mean_vector([t for t in ptb_tokenize(ref).split() if t in kv], pre_normalize=False)
        want = float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))
        assert got == pytest.approx(want, abs=1e-5)


def test_identical_sentence_scores_one_and_best_reference_counts(sick_pairs):
    metric = Dreem(weights={"bow": 0.2, "glove": 0.3, "sent": 0.5}, length_penalty=1.0)
    a, b, c = sick_pairs[0].sentence_a, sick_pairs[0].sentence_b, sick_pairs[1].sentence_a
    assert metric.score([a], [[a]])[0] == pytest.approx(1.0)
    both = metric.score([b], [[a, c]])[0]
    assert both == pytest.approx(max(metric.score([b], [[a]])[0], metric.score([b], [[c]])[0]))


def test_weights_and_penalty_combine_as_documented(sick_pairs):
    cands = [p.sentence_b for p in sick_pairs[:30]]
    refs = [p.sentence_a for p in sick_pairs[:30]]
    comps = pair_components(cands, refs)
    got = Dreem(weights={"bow": 1, "glove": 0, "sent": 3}, length_penalty=0.5).score(cands, [[r] for r in refs])
    want = (0.25 * comps.cosines["bow"] + 0.75 * comps.cosines["sent"]) * np.sqrt(comps.length_penalty)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_correlates_with_sick_relatedness(sick_pairs):
    scores = Dreem().score([p.sentence_b for p in sick_pairs], [[p.sentence_a] for p in sick_pairs])
    r = np.corrcoef(scores, [p.relatedness for p in sick_pairs])[0, 1]
    assert r > 0.4  # word-overlap metrics reach r ~ 0.6 on SICK; an inverted or broken score would not


def _install(folder, filename):
    """What ``muttlab models install`` records (tests/learned/test_models.py tests the action itself)."""
    from muttlab.metrics.reval.installed import model_id

    entry = {"id": model_id((folder / filename).read_bytes()), "file": filename}
    (folder / "installed.json").write_text(json.dumps({filename.removesuffix(".json"): entry}), encoding="utf-8")
    return entry["id"]


def test_installed_file_overrides_bundled_and_bad_file_is_clear(tmp_path):
    (tmp_path / "dreem.json").write_text(json.dumps({"weights": {"bow": 1, "glove": 0, "sent": 0},
                                                     "length_penalty": 0.0}), encoding="utf-8")
    bundled = Dreem(model_dir=tmp_path / "empty")
    assert Dreem(model_dir=tmp_path).signature() == bundled.signature()  # lying in the folder is not enough
    ident = _install(tmp_path, "dreem.json")
    metric = Dreem(model_dir=tmp_path)
    # a file tuned before the reval representation existed: reval weighs 0 and is never computed
    assert metric.weights == {"bow": 1.0, "glove": 0.0, "sent": 0.0, "reval": 0.0} and metric.lp_exponent == 0.0
    assert "w_bow:1" in metric.signature() and "reval:" not in metric.signature().replace("w_reval:", "")
    assert f"tuned:{ident}" in metric.signature() and "tuned:" not in bundled.signature()
    (tmp_path / "dreem.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(MetricUnavailable, match="changed since it was installed"):
        Dreem(model_dir=tmp_path).score(["a dog"], [["a dog"]])
    _install(tmp_path, "dreem.json")
    with pytest.raises(MetricError, match="dreem.json"):
        Dreem(model_dir=tmp_path).score(["a dog"], [["a dog"]])
    with pytest.raises(MetricError, match="unknown representation"):
        Dreem(weights={"rae": 1.0})


def test_registry_and_score_batches(data_settings, sick_pairs):
    metric = registry_for(data_settings).get("DREEM")
    cands = [p.sentence_b for p in sick_pairs[:20]]
    refs = [[p.sentence_a] for p in sick_pairs[:20]]
    (first,) = score_batches(metric, [(cands, refs)], data_settings)
    np.testing.assert_allclose(first, metric.score(cands, refs))
    (again,) = score_batches(metric, [(cands, refs)], data_settings)  # from the cache
    np.testing.assert_allclose(again, first)


def test_explicit_parameters_are_not_rebuilt_by_name_in_workers(data_settings):
    # The runner's workers rebuild a metric from the registry by name (reading the tuned file), so a
    # metric given explicit parameters must be scored in-process.
    assert Dreem(weights={"bow": 1, "glove": 0, "sent": 0}).parallel is False
    assert registry_for(data_settings).get("DREEM").parallel is True


def test_reval_representation_is_the_cosine_of_revals_encodings(sick_pairs):
    cands = [p.sentence_b for p in sick_pairs[:30]]
    refs = [p.sentence_a for p in sick_pairs[:30]]
    comps = pair_components(cands, refs, ["reval"])
    assert set(comps.cosines) == {"reval"}
    encoder = reval_encoder(None)
    a, b = encoder.encodings(cands), encoder.encodings(refs)
    want = (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    np.testing.assert_allclose(comps.cosines["reval"], want, atol=1e-9)
    assert pair_components(cands[:3], cands[:3], ["reval"]).cosines["reval"] == pytest.approx([1.0] * 3)
    # a blank reference has no encoding: cosine 0, as for the other representations
    blank = pair_components(cands[:2], [refs[0], "   "], ["reval", "sent"]).cosines
    assert blank["reval"][1] == 0.0 == blank["sent"][1] and blank["reval"][0] == pytest.approx(want[0])
    with pytest.raises(ValueError, match="not computed"):
        comps.combine({"bow": 1.0}, 0.0)


def test_dreem_with_reval_weight_scores_with_it_and_signs_the_checkpoint(sick_pairs):
    cands = [p.sentence_b for p in sick_pairs[:10]]
    refs = [[p.sentence_a, sick_pairs[10 + k].sentence_a] for k, p in enumerate(sick_pairs[:10])]
    metric = Dreem(weights={"reval": 1.0}, length_penalty=0.0)
    metric.check_available()
    scores = metric.score(cands, refs)
    best = np.max([pair_components(cands, [r[j] for r in refs], ["reval"]).cosines["reval"] for j in range(2)], axis=0)
    np.testing.assert_allclose(scores, best, atol=1e-12)
    assert f"reval:{reval_encoder(None).params()['ckpt']}" in metric.signature()
