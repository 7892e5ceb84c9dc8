"""pycocoevalcap, the reference implementation, run the way coco-caption runs it.

Used by the equality tests: the Java PTB tokenizer that ships in pycocoevalcap, and its BLEU, ROUGE-L and
CIDEr scorers on tokenised text.
"""
from __future__ import annotations

import numpy as np
from pycocoevalcap.bleu.bleu import Bleu
from pycocoevalcap.cider.cider import Cider
from pycocoevalcap.rouge.rouge import Rouge
from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer


def java_ptb(sentences) -> dict[str, str]:
    """Each distinct sentence mapped to coco-caption's tokenisation (one Java call for all)."""
    unique = sorted(set(sentences))
    out = PTBTokenizer().tokenize({i: [{"caption": s}] for i, s in enumerate(unique)})
    return {s: out[i][0] for i, s in enumerate(unique)}


def coco_scores(candidates: list[str], references: list[list[str]]) -> dict[str, np.ndarray]:
    """Per-sentence BLEU-1..4, ROUGE-L and CIDEr-D of one batch, keyed by MUTT Lab's metric names."""
    gts = {i: list(r) for i, r in enumerate(references)}
    res = {i: [c] for i, c in enumerate(candidates)}
    _, bleu = Bleu(4).compute_score(gts, res, verbose=0)
    _, rouge = Rouge().compute_score(gts, res)
    _, cider = Cider().compute_score(gts, res)
    scores = {f"BLEU-{n}": np.array(bleu[n - 1]) for n in range(1, 5)}
    scores["ROUGE-L"] = np.array(rouge)
    scores["CIDEr-D"] = np.array(cider)
    return scores


def coco_meteor_scores(candidates: list[str], references: list[list[str]]) -> np.ndarray:
    """pycocoevalcap's METEOR 1.5 per candidate, fed the PTB tokenisation our metric uses (same jar, same text:
    each segment against all its references in one SCORE line); its JVM is stopped afterwards."""
    from pycocoevalcap.meteor.meteor import Meteor

    from muttlab.metrics.tokenize import ptb_tokenize

    gts = {i: [ptb_tokenize(r) for r in refs] for i, refs in enumerate(references)}
    res = {i: [ptb_tokenize(c)] for i, c in enumerate(candidates)}
    coco = Meteor()
    try:
        _, theirs = coco.compute_score(gts, res)
    finally:
        with coco.lock:
            coco.meteor_p.kill()
            coco.meteor_p.wait()
    return np.asarray(theirs, dtype=np.float64)
