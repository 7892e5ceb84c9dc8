"""Corpus-level scores of the metrics that have a corpus form: BLEU, chrF and TER are defined over a whole test
set (sufficient statistics summed over segments, then one score), which is not the mean of their sentence
scores. At system level, WMT scores a system by its corpus score (Freitag et al., WMT 2021 metrics findings,
§2), so the meta-evaluation does too for these metrics; every other metric scores a system by its mean.

The corpus score is sacrebleu's own ``corpus_score`` with the settings of the lab's sentence metric (its
tokeniser, case, smoothing, orders), cached in the score cache under the metric's signature. TER needs no second
edit search: sacrebleu's corpus TER is Σ edits / Σ reference lengths (``TER._compute_score_from_stats`` over
summed segment statistics), and a segment's edits are its sentence TER times its (average) reference length,
a whole number; so the corpus TER is computed from the sentence scores (equal to ``corpus_score``: the tests).
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from muttlab.engine.cache import context_key, item_key
from muttlab.engine.runner import cache_for
from muttlab.metrics.base import Metric, signature_of
from muttlab.metrics.sacre import ChrF, SentenceBleu, Ter
from muttlab.settings import Settings

# (hypotheses, reference streams, the hypotheses' sentence scores) -> corpus score
CorpusScorer = Callable[[list[str], list[list[str]], np.ndarray], float]


def _ter_corpus(impl) -> CorpusScorer:
    def score(hypotheses: list[str], streams: list[list[str]], sentence: np.ndarray) -> float:
        lengths = np.array([np.mean([len(impl._preprocess_segment(ref).split()) for ref in refs])
                            for refs in zip(*streams)])
        if not len(lengths) or (lengths == 0).any():  # an empty reference: its edits are not in its score
            return float(impl.corpus_score(hypotheses, streams).score)
        edits = np.rint(np.asarray(sentence) * lengths / 100.0)
        return float(impl._compute_score_from_stats([edits.sum(), lengths.sum()]).score)
    return score


def corpus_scorer(metric: Metric) -> CorpusScorer | None:
    """The corpus score of a lab metric with a corpus form; None for any other metric (an outside metric that
    subclasses one of these is not assumed to have it)."""
    from sacrebleu.metrics import BLEU, CHRF, TER

    kind = type(metric)
    if kind is SentenceBleu:
        impl = BLEU(tokenize=metric.tokenize, lowercase=metric.lowercase, smooth_method=metric.smooth)
    elif kind is ChrF:
        impl = CHRF(char_order=metric.char_order, word_order=metric.word_order, beta=metric.beta)
    elif kind is Ter:
        return _ter_corpus(TER(case_sensitive=metric.case_sensitive, normalized=metric.normalized))
    else:
        return None
    return lambda hypotheses, streams, sentence: float(impl.corpus_score(hypotheses, streams).score)


def system_corpus_scores(metric: Metric, hypotheses: Sequence[Sequence[str]], references: Sequence[Sequence[str]],
                         judged: np.ndarray, sentence_scores: np.ndarray, settings: Settings) -> np.ndarray | None:
    """Each system's corpus score over the items it was judged on, in the metric's own orientation; None when
    the metric has no corpus form or the items have different numbers of references (sacrebleu's reference
    streams must be parallel). ``sentence_scores`` are the metric's (systems, items) scores."""
    scorer = corpus_scorer(metric)
    if scorer is None or len({len(r) for r in references}) != 1:
        return None
    cache = cache_for(settings)
    signature = f"corpus:{signature_of(metric)}"
    out = np.empty(len(hypotheses))
    for s, row in enumerate(hypotheses):
        keep = np.flatnonzero(judged[s])
        hyps = [row[i] for i in keep]
        refs = [list(references[i]) for i in keep]
        key = item_key(signature, context_key(refs), context_key([[h] for h in hyps]), "")
        cached = cache.get_many([key])
        if key not in cached:
            streams = [list(stream) for stream in zip(*refs)]
            cached[key] = scorer(hyps, streams, sentence_scores[s, keep])
            cache.put_many({key: cached[key]})
        out[s] = cached[key]
    return out
