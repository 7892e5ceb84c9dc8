"""``muttlab vectors train`` on the real corpus, then W2V-AVG-corpus through the registry."""
from __future__ import annotations

import json

import numpy as np

from muttlab.cli import main
from muttlab.engine.runner import registry_for
from muttlab.settings import Settings
from muttlab.learned.vectors import corpus_sentences, corpus_vectors_path
from muttlab.metrics.w2v import OOV_WARN_RATE


def test_train_then_score(data_dir, tmp_path, capsys, mutt_suite):
    settings = Settings(data_dir=data_dir, cache_dir=tmp_path / "cache", workers=1)
    assert registry_for(settings).info("W2V-AVG-corpus").available is False

    code = main(["vectors", "train", "--data-dir", str(data_dir), "--cache-dir", str(tmp_path / "cache"),
                 "--dim", "16", "--epochs", "1", "--min-count", "5", "--format", "json"])
    assert code == 0
    record = json.loads(capsys.readouterr().out)[0]
    assert record["path"] == str(corpus_vectors_path(settings))
    # SICK + Flickr8k (not the MUTT pools the vectors are tested on), each distinct sentence once.
    assert record["sentences"] == len(corpus_sentences(settings)) > 40_000
    assert record["dim"] == 16 and record["vocabulary"] > 1000

    # Training installs nothing: the metric stays unavailable until a maintainer installs the vectors' id.
    assert registry_for(settings).info("W2V-AVG-corpus").available is False
    assert main(["models", "install", record["id"], "--cache-dir", str(tmp_path / "cache")]) == 0
    metric = registry_for(settings).get("W2V-AVG-corpus")
    assert f"vectors:word2vec-corpus@{record['id']}" in metric.signature()
    trials = mutt_suite.of("swap_chunks")[:50]
    refs = [list(t.refs(5)) for t in trials]
    orig = metric.score([t.original for t in trials], refs)
    assert np.array_equal(orig, metric.score([t.corrupted for t in trials], refs))
    assert np.all((orig > 0) & (orig <= 1 + 1e-9))
    # The MUTT sentences are not in the training corpus; with min-count 5 about 6 % of their tokens (rare verbs
    # and nouns) have no vector, below the metric's 10 % warning threshold.
    assert 0 < metric.last_oov.rate < OOV_WARN_RATE
