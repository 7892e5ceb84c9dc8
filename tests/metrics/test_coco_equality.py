"""BLEU-1..4, ROUGE-L and CIDEr-D equal pycocoevalcap's scorers on every MUTT trial.

Both sides get the same input: the text as coco-caption's Java PTB tokenizer leaves it. Then the grid
built with MUTT Lab's own (Java-free) tokenizer is compared with the grid pycocoevalcap + its tokenizer
produce: within 0.5 accuracy points per cell (issue: Foundation, "Done when").
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from muttlab.corruptions import catalog
from muttlab.engine import verdict
from muttlab.engine.accuracy import accuracy_table
from muttlab.engine.runner import run
from muttlab.settings import Settings
from muttlab.metrics.bleu import Bleu
from muttlab.metrics.cider import CiderD
from muttlab.metrics.rouge import RougeL
from tests.coco_reference import coco_scores, java_ptb

REF_COUNTS = (5, 10, 20)
OURS = {**{f"BLEU-{n}": Bleu(n, tokenize="none") for n in range(1, 5)},
        "ROUGE-L": RougeL(tokenize="none"), "CIDEr-D": CiderD(tokenize="none")}

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def coco(mutt_suite):
    """pycocoevalcap's scores for every set x refs x side, on Java-tokenised text."""
    tok = java_ptb([s for t in mutt_suite.trials for s in (t.original, t.corrupted, *t.references)])
    batches = {}
    for name in mutt_suite.corruptions():
        trials = mutt_suite.of(name)
        for k in REF_COUNTS:
            refs = [[tok[r] for r in t.refs(k)] for t in trials]
            for side in ("orig", "corr"):
                cands = [tok[t.original if side == "orig" else t.corrupted] for t in trials]
                batches[name, k, side] = (cands, refs, coco_scores(cands, refs))
    return batches


@pytest.mark.parametrize("metric", list(OURS))
def test_per_sentence_scores_equal_pycocoevalcap(coco, metric):
    worst = 0.0
    for (name, k, side), (cands, refs, expected) in coco.items():
        got = OURS[metric].score(cands, refs)
        worst = max(worst, float(np.max(np.abs(got - expected[metric]))))
    assert worst < 1e-9, f"{metric}: largest difference {worst}"


def test_grid_with_own_tokenizer_matches_coco_pipeline(coco, mutt_suite, tmp_path):
    settings = Settings(data_dir=None, cache_dir=tmp_path, workers=1)
    ours = run(mutt_suite, list(OURS), list(REF_COUNTS), settings).accuracy()
    rows = []
    for (name, k, side), _ in coco.items():
        if side != "orig":
            continue
        expected = verdict.EXPECTATION_OF_RULE[catalog.get(name).rule]
        for metric in OURS:
            s_orig, s_corr = coco[name, k, "orig"][2][metric], coco[name, k, "corr"][2][metric]
            ok = verdict.judge(s_orig, s_corr, expected, True, settings.rules).passed
            rows.append(pd.DataFrame({"metric": metric, "corruption": name, "refs": k, "passed": ok}))
    theirs = accuracy_table(pd.concat(rows))
    merged = ours.merge(theirs, on=["metric", "corruption", "refs"], suffixes=("_ours", "_coco"))
    assert len(merged) == len(OURS) * 10 * len(REF_COUNTS)
    diff = (merged["accuracy_ours"] - merged["accuracy_coco"]).abs()
    assert diff.max() <= 0.5, merged.loc[diff.idxmax()].to_dict()
