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
    assert "vectors:tiny.kv@" in metric.signature()

    # Other content under the same name is another signature, so cached scores are not reused.
    kv.vectors[0] = [0.5, 0.5]
    kv.save(str(tmp_path / "tiny.kv"))
    assert W2VAvg(vectors=str(tmp_path / "tiny.kv")).signature() != metric.signature()


def test_word2vec_trained_with_gensim_by_path(tmp_path, data_dir):
    """A word2vec model trained with gensim on SICK, saved as KeyedVectors, read by path: each score is the
    cosine of the centroids of the in-vocabulary words' vectors, computed here with numpy from the file."""
    from gensim.models import KeyedVectors, Word2Vec

    from muttlab.sources import load_sick
    from muttlab.metrics.tokenize import ptb_tokenize
    from muttlab.settings import Settings

    pairs = load_sick(Settings(data_dir=data_dir))[:3000]
    sentences = [ptb_tokenize(s).split() for p in pairs for s in (p.sentence_a, p.sentence_b)]
    model = Word2Vec(sentences=sentences, vector_size=20, min_count=3, epochs=2, workers=1, seed=1)
    path = tmp_path / "sick-w2v.kv"
    model.wv.save(str(path))
    kv = KeyedVectors.load(str(path))

    def centroid(text):
        words = [w for w in ptb_tokenize(text).split() if w in kv.key_to_index]
        return np.mean([kv[w].astype(np.float64) for w in words], axis=0)

    cands = [p.sentence_a for p in pairs[:40]]
    refs = [[p.sentence_b, pairs[i + 40].sentence_b] for i, p in enumerate(pairs[:40])]
    expected = [np.mean([centroid(c) @ centroid(r) / np.linalg.norm(centroid(c)) / np.linalg.norm(centroid(r))
                         for r in rs]) for c, rs in zip(cands, refs)]
    metric = W2VAvg(vectors=str(path))
    np.testing.assert_allclose(metric.score(cands, refs), expected, rtol=1e-12)
    assert metric.signature().startswith("W2V-AVG|vectors:sick-w2v.kv@")


def test_untrained_corpus_vectors_say_how_to_train(tmp_path):
    with pytest.raises(MetricUnavailable, match="muttlab vectors train"):
        W2VAvg(vectors="word2vec-corpus", model_dir=tmp_path).check_available()
