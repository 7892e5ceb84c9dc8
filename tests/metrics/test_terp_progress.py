"""TERp followed by a progress callback aligns its pairs a chunk at a time and reports each chunk, so a grid cell's
count advances within the cell (it went 9-16 s without an advance as one kernel call); the scores are the
one-call scores exactly (each pair is aligned on its own), and so are they after ``prepare`` (which loads the kernel
before the first cell, under the run's *loading*). On real MUTT trials with their 20 references."""
from __future__ import annotations

import numpy as np

from muttlab.metrics.terp import CHUNK, TerPlus, tokenize


def test_a_followed_call_reports_each_chunk_and_scores_as_one_call(mutt_suite):
    trials = mutt_suite.of("det_sub")[:60]
    candidates = [t.original for t in trials] + [t.corrupted for t in trials]
    references = [list(t.refs(20)) for t in trials] * 2
    reports = []
    prepared = TerPlus()
    prepared.prepare()  # as a run does before its first cell: the kernel, WordNet and the stemmer loaded
    followed = prepared.score(candidates, references, progress=lambda done, total: reports.append((done, total)))
    whole = TerPlus().score(candidates, references)  # a fresh metric: nothing memoised
    assert np.array_equal(followed, whole)
    # The pairs to align: distinct after TERp's normalisation (two texts may normalise alike).
    distinct = len({(tokenize(c), tokenize(r)) for c, rs in zip(candidates, references) for r in rs})
    assert distinct > 2 * CHUNK  # several chunks
    assert reports == [(min(k + CHUNK, distinct), distinct) for k in range(0, distinct, CHUNK)]
    # Scored again, everything is memoised: nothing to align, nothing to report.
    reports.clear()
    metric = TerPlus()
    metric.score(candidates, references)
    assert np.array_equal(metric.score(candidates, references, progress=lambda *r: reports.append(r)), whole)
    assert reports == []
