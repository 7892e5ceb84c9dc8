"""Empty text is a test item: every shipped metric scores MSLC24-B's empty hypotheses and empty references as
its reference implementation does (pycocoevalcap for BLEU-1..4, ROUGE-L, CIDEr-D and METEOR-1.5, sacreBLEU for
sentBLEU, chrF and TER), or declares ``scores_empty_text = False`` and gives NaN (ReVal: no encoding of an empty
sentence). Metrics without a runnable reference implementation score them by their own definition, checked here
item by item. The neural metrics (metrics/neural.py) are covered by their own tests."""
from __future__ import annotations

import numpy as np
import pytest
from sacrebleu.metrics import BLEU, CHRF, TER

from muttlab.metrics.bleu import Bleu
from muttlab.metrics.cider import CiderD
from muttlab.metrics.registry import Registry
from muttlab.metrics.rouge import RougeL
from tests.coco_reference import coco_meteor_scores, coco_scores, java_ptb


def _lines(path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    return text[:-1].split("\n")


@pytest.fixture(scope="module")
def mslc(data_dir):
    """MSLC24-B en-de: 40 empty hypotheses, 40 empty references, 80 lines with text on both sides."""
    folder = data_dir / "mslc" / "2024" / "data" / "MSLC-B" / "en-de"
    hypotheses = _lines(folder / "hypothesis.txt")
    references = [[r] for r in _lines(folder / "reference.txt")]
    empty = np.array([not h or not r[0] for h, r in zip(hypotheses, references)])
    assert empty.sum() == 80
    return hypotheses, references, empty


@pytest.fixture(scope="module")
def registry():
    shipped = Registry(use_entry_points=False)
    yield shipped
    shipped.close()


@pytest.mark.parametrize("name", ["sentBLEU", "chrF", "TER"])
def test_sacrebleu_metrics_equal_sacrebleu(registry, mslc, name):
    hypotheses, references, empty = mslc
    reference = {"sentBLEU": BLEU(effective_order=True), "chrF": CHRF(), "TER": TER()}[name]
    theirs = np.array([reference.sentence_score(h, r).score for h, r in zip(hypotheses, references)])
    ours = registry.get(name).score(hypotheses, references)
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-9)
    # sacreBLEU: BLEU and chrF give an empty side 0; TER gives 100 (every reference word deleted, or every
    # hypothesis word inserted against an empty reference)
    assert set(ours[empty]) == ({100.0} if name == "TER" else {0.0})


def test_coco_metrics_equal_pycocoevalcap(mslc):
    hypotheses, references, _ = mslc
    tok = java_ptb(hypotheses + [r[0] for r in references])
    cands, refs = [tok[h] for h in hypotheses], [[tok[r[0]]] for r in references]
    theirs = coco_scores(cands, refs)
    ours = {**{f"BLEU-{n}": Bleu(n, tokenize="none") for n in range(1, 5)},
            "ROUGE-L": RougeL(tokenize="none"), "CIDEr-D": CiderD(tokenize="none")}
    for name, metric in ours.items():
        got = metric.score(cands, refs)
        # pycocoevalcap's BLEU gives an empty side (1e-15)^(1/n), not 0; its ROUGE-L gives 1 when both sides
        # are empty (the PTB tokenizer drops a punctuation-only hypothesis), and so do ours
        np.testing.assert_allclose(got, theirs[name], rtol=0, atol=1e-9, err_msg=name)


@pytest.mark.java
@pytest.mark.slow
def test_meteor_equals_pycocoevalcap(registry, mslc):
    hypotheses, references, empty = mslc
    theirs = coco_meteor_scores(hypotheses, references)
    ours = registry.get("METEOR-1.5").score(hypotheses, references)
    np.testing.assert_array_equal(ours, theirs)
    assert np.all(ours[empty] == 0.0)


# Metrics with no runnable reference implementation: what their definitions give an empty side.
BY_DEFINITION = {
    # TERp (Snover et al. 2009): edits / average reference words; an empty hypothesis deletes every reference
    # word (1.0); a hypothesis against an empty reference is all insertions over zero words, which TERp
    # scores 1.0 like TER's 100 %.
    "TERp": 1.0,
    # SimMetrics' getSimilarity is 1.0 when either string is empty (metrics/simmetrics.py).
    "BADGER-like": 1.0,
    # an empty text has no word vector; its cosine is 0
    "W2V-AVG": 0.0,
    # no n-gram of an empty side matches
    "DeltaBLEU": 0.0,
    "ML-METEOR": 0.0,
    "DREEM": 0.0,
    "ML-DREEM": 0.0,
}


@pytest.mark.parametrize("name", list(BY_DEFINITION))
def test_metrics_without_a_reference_implementation_score_empty_text_by_definition(registry, mslc, name):
    hypotheses, references, empty = mslc
    metric = registry.get(name)
    assert metric.scores_empty_text
    scores = metric.score(hypotheses, references)
    assert np.isfinite(scores).all()
    assert set(scores[empty]) == {BY_DEFINITION[name]}


@pytest.mark.slow
@pytest.mark.parametrize("name", ["ReVal-LSTM", "ReVal-TreeLSTM"])
def test_reval_declares_it_cannot_score_empty_text(registry, mslc, name):
    hypotheses, references, empty = mslc
    metric = registry.get(name)
    assert metric.scores_empty_text is False
    scores = metric.score(hypotheses, references)
    assert np.isnan(scores[empty]).all() and np.isfinite(scores[~empty]).all()
