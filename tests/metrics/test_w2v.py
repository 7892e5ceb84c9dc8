"""W2V-AVG: blind to word order (MUTT's 0 % on shuffled and swapped chunks), gensim's cosine on single
words, out-of-vocabulary words counted and never fatal, other vector sources."""
from __future__ import annotations

import numpy as np
import pytest

from muttlab.metrics.base import MetricUnavailable
from muttlab.metrics.w2v import W2VAvg


@pytest.fixture(scope="module")
def metric():
    return W2VAvg()


@pytest.mark.parametrize("corruption", ["swap_chunks", "shuffled"])
def test_invariant_to_word_order(mutt_suite, metric, corruption):
    trials = mutt_suite.of(corruption)
    refs = [list(t.refs(10)) for t in trials]
    orig = metric.score([t.original for t in trials], refs)
    corr = metric.score([t.corrupted for t in trials], refs)
    assert np.array_equal(orig, corr)
    assert np.mean(orig > corr) == 0.0  # the paper's 0 % accuracy


def test_single_words_equal_gensim_similarity(metric):
    kv = metric.keyed_vectors()
    scores = metric.score(["dog", "king", "guitar"], [["cat"], ["queen"], ["piano"]])
    expected = [kv.similarity("dog", "cat"), kv.similarity("king", "queen"), kv.similarity("guitar", "piano")]
    np.testing.assert_allclose(scores, expected, rtol=1e-5)


def test_combine_mean_and_max(mutt_suite, metric):
    trials = mutt_suite.of("neg_verb")[:25]
    cands, refs = [t.corrupted for t in trials], [list(t.refs(5)) for t in trials]
    per_ref = np.array([[metric.score([c], [[r]])[0] for r in rs] for c, rs in zip(cands, refs)])
    np.testing.assert_allclose(metric.score(cands, refs), per_ref.mean(axis=1), rtol=1e-12)
    np.testing.assert_allclose(W2VAvg(combine="max").score(cands, refs), per_ref.max(axis=1), rtol=1e-12)


def test_oov_words_are_counted_not_fatal(metric):
    with pytest.warns(RuntimeWarning, match="have no vector"):
        scores = metric.score(["a dog zzqxv runs", "qqzzyx wwvvkk"], [["a dog runs"], ["a dog runs"]])
    assert scores[0] == pytest.approx(1.0)  # the unknown word is skipped
    assert scores[1] == 0.0  # no known word: defined as 0
    report = metric.last_oov
    assert (report.tokens, report.oov_tokens, report.sentences_without_vectors) == (9, 3, 1)
    assert set(report.examples) == {"zzqxv", "qqzzyx", "wwvvkk"}


def test_vectors_from_a_file(tmp_path):
    from gensim.models import KeyedVectors

    kv = KeyedVectors(vector_size=2)
    kv.add_vectors(["dog", "cat", "car"], np.array([[1, 0], [1, 1], [0, 1]], dtype=np.float32))
    kv.save(str(tmp_path / "tiny.kv"))
    metric = W2VAvg(vectors=str(tmp_path / "tiny.kv"))
    assert metric.score(["dog"], [["cat"]])[0] == pytest.approx(1 / np.sqrt(2))
    assert metric.score(["dog car"], [["cat"]])[0] == pytest.approx(1.0)
    assert "vectors:tiny.kv" in metric.signature()


def test_untrained_corpus_vectors_say_how_to_train(tmp_path):
    with pytest.raises(MetricUnavailable, match="muttlab vectors train"):
        W2VAvg(vectors="word2vec-corpus", model_dir=tmp_path).check_available()
