"""Every built-in metric scores the study's trials whose reference pool holds a blank reference.

Three MUTT pools (neg_subj, sem_opps, swap_chunks) contain one reference that is only spaces; the study
kept them, so a full 20-reference grid reaches them. A metric must score such a trial (the blank
reference simply matches nothing), not stop the whole run.
"""
from __future__ import annotations

import numpy as np
import pytest

from muttlab.metrics.base import MetricUnavailable
from muttlab.metrics.registry import BUILTIN, Registry
from muttlab.metrics.terp import TerPlus


@pytest.fixture(scope="module")
def blank_trials(mutt_suite):
    trials = [t for t in mutt_suite.trials if any(not r.strip() for r in t.refs(20))]
    assert {t.corruption for t in trials} == {"neg_subj", "sem_opps", "swap_chunks"}
    return trials


JAVA = {"METEOR-1.5", "ML-METEOR"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.java) if n in JAVA else n for n in sorted(BUILTIN)])
def test_metric_scores_a_pool_with_a_blank_reference(name, blank_trials, tmp_path):
    try:
        if name == "TERp":
            # The paraphrase table plays no part in blank handling and takes minutes to hash on a cold cache.
            metric = TerPlus(paraphrases=False)
        else:
            metric = Registry(use_entry_points=False, model_dir=tmp_path).get(name)
        metric.check_available()
    except MetricUnavailable as exc:  # e.g. W2V-AVG-corpus before `muttlab vectors train`
        pytest.skip(str(exc))
    try:
        sides = [t.original for t in blank_trials] + [t.corrupted for t in blank_trials]
        scores = metric.score(sides, [list(t.refs(20)) for t in blank_trials] * 2)
    finally:
        metric.close()
    assert scores.shape == (len(sides),) and np.all(np.isfinite(scores))
