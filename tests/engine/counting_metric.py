"""An outside metric, registered by import path in the tests, that counts how often it really scores."""
from __future__ import annotations

import numpy as np

from muttlab.metrics.base import Metric


class WordOverlap(Metric):
    """Fraction of candidate words found in any reference; counts the candidates it scored."""

    name = "word-overlap"
    calls = 0
    scored = 0

    def _score(self, candidates, references):
        type(self).calls += 1
        type(self).scored += len(candidates)
        out = []
        for cand, refs in zip(candidates, references):
            words = cand.lower().split()
            vocab = {w for r in refs for w in r.lower().split()}
            out.append(sum(w in vocab for w in words) / len(words))
        return np.array(out)


def make() -> WordOverlap:
    return WordOverlap()


def not_a_metric():
    return "not a metric"
