"""The n-gram metrics count each sentence once per process (muttlab.metrics.ngrams.SentenceTable) and share a
reference set's statistics between batches: a batch's scores must not depend on what was counted before."""
from __future__ import annotations

import numpy as np

from muttlab.metrics.bleu import Bleu
from muttlab.metrics.cider import CiderD
from muttlab.metrics.rouge import RougeL
from tests.coco_reference import coco_scores


def test_later_batches_with_new_words_score_as_pycocoevalcap(mutt_suite):
    """A cell's originals and its corruptions share their references (and the statistics taken from them);
    here the second batch brings words nobody has counted yet, after those statistics were taken."""
    trials = mutt_suite.of("neg_subj")[:60]
    refs = [list(t.refs(5)) for t in trials]
    first = [t.original for t in trials]
    second = [f"{t.corrupted} zyzzyva{i} quux" for i, t in enumerate(trials)]
    metrics = [Bleu(n, tokenize="none") for n in (1, 2, 3, 4)] + [RougeL(tokenize="none"), CiderD(tokenize="none")]
    for candidates in (first, second, first):
        expected = coco_scores(candidates, refs)
        for metric in metrics:
            ours = metric.score(candidates, [list(r) for r in refs])
            worst = float(np.max(np.abs(ours - expected[metric.name])))
            assert worst < 1e-9, f"{metric.name}: largest difference {worst}"
