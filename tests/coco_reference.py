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
