"""BERTScore-F1 and EmbeddingCosine against the libraries themselves (bert-score, sentence-transformers) on
real Flickr8k captions; the libraries batch in float32, we embed each sentence alone and match in float64."""
from __future__ import annotations

import numpy as np
import pytest

from muttlab.sources import load_flickr_captions
from muttlab.metrics import neural
from muttlab.metrics.neural import BertScore, EmbeddingCosine
from muttlab.settings import Settings


@pytest.fixture(scope="module")
def captions(data_dir):
    pools = list(load_flickr_captions(Settings(data_dir=data_dir)).values())[:40]
    # Each image's first caption against the other four.
    return [p[0] for p in pools], [list(p[1:]) for p in pools]


def test_bertscore_equals_bert_score_library(captions):
    candidates, references = captions
    # Each candidate again with the first two of its references, as a MUTT grid repeats a trial at 5/10/20.
    candidates, references = candidates + candidates, references + [refs[:2] for refs in references]
    metric = BertScore()
    ours = metric.score(candidates, references)
    _, _, f1 = metric.loaded().score(candidates, references, verbose=False)  # best over each pool
    np.testing.assert_allclose(ours, f1.double().numpy(), atol=1e-6)
    # A sentence's score does not depend on the batch it came in.
    assert metric.score(candidates[3:4], references[3:4])[0] == ours[3]


def test_embedding_cosine_equals_sentence_transformers(captions):
    candidates, references = captions
    metric = EmbeddingCosine()
    ours = metric.score(candidates, references)
    model = metric.loaded()
    want = []
    for cand, refs in zip(candidates, references):
        vectors = model.encode([cand, *refs], normalize_embeddings=True, convert_to_numpy=True)
        want.append(float((vectors[1:] @ vectors[0]).max()))
    np.testing.assert_allclose(ours, want, atol=1e-5)
    assert metric.score(candidates[5:6], references[5:6])[0] == ours[5]


@pytest.mark.parametrize("kind", [BertScore, EmbeddingCosine])
def test_embeddings_batched_by_length_equal_each_sentence_alone(kind, captions, monkeypatch):
    """Sentences of one token count share a batch (no padding), batches are encoded by two threads side by side;
    each sentence gets the bits it gets alone, in one thread."""
    candidates, references = captions
    sentences = list(dict.fromkeys(candidates + [r for refs in references for r in refs]))
    together = kind()
    monkeypatch.setattr(neural, "ENCODING_THREADS", 2)
    together._remember(sentences)
    assert together._batching
    lengths = [len(ids) for ids in together._tokenize(sentences)]
    assert max(lengths.count(n) for n in set(lengths)) > 10  # real batches were formed
    monkeypatch.setattr(neural, "ENCODING_THREADS", 1)
    for sentence in sentences[::7]:
        alone = kind()
        alone._remember([sentence])
        got, want = alone._embeddings[sentence], together._embeddings[sentence]
        for x, y in zip(*((got, want) if isinstance(got, tuple) else ((got,), (want,)))):
            np.testing.assert_array_equal(x, y)
