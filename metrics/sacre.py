"""sacrebleu's sentence-level BLEU, chrF and TER behind the MUTT Lab interface.

The numbers are sacrebleu's own (Post 2018). Each signature lists the settings explicitly, plus
sacrebleu's version, so an upgrade or a changed setting is a different cache key.

TER is computed from sacrebleu's own pieces one (candidate, reference) pair at a time: its multi-reference
score is the fewest edits over the references divided by their average length
(``TER._compute_segment_statistics``), and a pair's edits depend on that pair alone, so each distinct pair
is computed once (by :mod:`muttlab.metrics.ter_kernel`, sacrebleu's shift search compiled) and the pools
combined. The 5-, 10- and 20-reference pools of a MUTT trial are nested and
a trial's original recurs, so the full grid needs a third of the edit computations of scoring each pool.
"""
from __future__ import annotations

import numpy as np
import sacrebleu
from sacrebleu.metrics import BLEU, CHRF, TER

from muttlab.metrics.base import Metric

# Remembered tokenisations and pair edits per metric object (about 200 bytes a pair).
_MEMO_LIMIT = 500_000


class _Sacre(Metric):
    """Scores each candidate with sacrebleu's ``sentence_score`` against its own references."""

    _impl: object

    def _score(self, candidates, references):
        return np.array([self._impl.sentence_score(c, list(r)).score for c, r in zip(candidates, references)])


class SentenceBleu(_Sacre):
    """Sentence BLEU with exponential smoothing and effective order (sacrebleu's sentence defaults)."""

    name = "sentBLEU"
    score_range = (0.0, 100.0)
    description = "sacrebleu sentence BLEU (13a tokenizer, exp smoothing, effective order), 0-100"

    def __init__(self, tokenize: str = "13a", lowercase: bool = False, smooth: str = "exp"):
        self.tokenize, self.lowercase, self.smooth = tokenize, lowercase, smooth
        self._impl = BLEU(tokenize=tokenize, lowercase=lowercase, smooth_method=smooth, effective_order=True)

    def params(self) -> dict[str, object]:
        return {"tok": self.tokenize, "lc": self.lowercase, "smooth": self.smooth, "eff": "yes",
                "sacrebleu": sacrebleu.__version__}


class ChrF(_Sacre):
    """chrF (Popović 2015): character n-gram F-score, sacrebleu's implementation."""

    name = "chrF"
    score_range = (0.0, 100.0)
    description = "sacrebleu chrF (character 6-grams, beta 2), 0-100"

    def __init__(self, char_order: int = 6, word_order: int = 0, beta: int = 2):
        self.char_order, self.word_order, self.beta = char_order, word_order, beta
        self._impl = CHRF(char_order=char_order, word_order=word_order, beta=beta)

    def params(self) -> dict[str, object]:
        return {"nc": self.char_order, "nw": self.word_order, "beta": self.beta, "sacrebleu": sacrebleu.__version__}


class Ter(_Sacre):
    """TER (Snover et al. 2006): edits (with shifts) per reference word; an error rate, lower is better."""

    name = "TER"
    score_range = (0.0, float("inf"))
    higher_is_better = False
    description = "sacrebleu translation edit rate, 0-100+ (lower is better)"

    def __init__(self, case_sensitive: bool = False, normalized: bool = False):
        self.case_sensitive, self.normalized = case_sensitive, normalized
        self._impl = TER(case_sensitive=case_sensitive, normalized=normalized)
        self._tokens: dict[str, np.ndarray] = {}
        self._vocab: dict[str, int] = {}
        self._edits: dict[tuple[str, str], tuple[int, int]] = {}

    def _tokenized(self, text: str) -> np.ndarray:
        """sacrebleu's tokenisation of ``text`` as word ids (the kernel compares words by id)."""
        if text not in self._tokens:
            if len(self._tokens) > _MEMO_LIMIT:
                self._tokens.clear()
            words = self._impl._preprocess_segment(text).split()
            self._tokens[text] = np.array([self._vocab.setdefault(w, len(self._vocab)) for w in words],
                                          dtype=np.int64)
        return self._tokens[text]

    def _pair(self, cand: str, ref: str) -> tuple[int, int]:
        """(edits, reference length) of one pair, as sacrebleu's ``translation_edit_rate`` gives them."""
        key = (cand, ref)
        if key not in self._edits:
            from muttlab.metrics.ter_kernel import edits
            if len(self._edits) > _MEMO_LIMIT:
                self._edits.clear()
            words_ref = self._tokenized(ref)
            self._edits[key] = (int(edits(self._tokenized(cand), words_ref)), len(words_ref))
        return self._edits[key]

    def _score(self, candidates, references):
        out = np.empty(len(candidates), dtype=np.float64)
        for i, (cand, refs) in enumerate(zip(candidates, references)):
            # sacrebleu's TER._compute_segment_statistics over the remembered pairs, same operations in order.
            ref_lengths, best_num_edits = 0, int(1e16)
            for ref in refs:
                num_edits, ref_len = self._pair(cand, ref)
                ref_lengths += ref_len
                if num_edits < best_num_edits:
                    best_num_edits = num_edits
            out[i] = self._impl._compute_score_from_stats([best_num_edits, ref_lengths / len(refs)]).score
        return out

    def params(self) -> dict[str, object]:
        return {"case": self.case_sensitive, "norm": self.normalized, "sacrebleu": sacrebleu.__version__}
