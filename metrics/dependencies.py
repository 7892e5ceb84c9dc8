"""Word and dependency-triplet features for the multi-level framework's quality classifier.

The multi-level metrics (Chen, Guo & Kuhn, "Multi-level evaluation for machine translation", WMT 2015)
sort candidates into quality levels with an F-measure that mixes word matches and matches of dependency
triplets ``(relation, head lemma, dependent lemma)``. Sentences are parsed with spaCy
(:mod:`muttlab.resources.spacy_nlp`); parses are cached per process because the same references come back for
every candidate of an image.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Sequence

from muttlab.resources.spacy_nlp import parse

ROOT_HEAD = "<root>"
_CACHE_LIMIT = 200_000
_cache: dict[str, "SentenceFeatures"] = {}


@dataclass(frozen=True)
class SentenceFeatures:
    """The bags the classifier compares: lowercase lemmas and dependency triplets, punctuation left out."""

    words: Counter
    triplets: Counter

    @property
    def length(self) -> int:
        return sum(self.words.values())


def _from_doc(doc) -> SentenceFeatures:
    words: Counter = Counter()
    triplets: Counter = Counter()
    for token in doc:
        if token.is_punct or token.is_space:
            continue
        lemma = token.lemma_.lower()
        words[lemma] += 1
        # spaCy marks the root as its own head; give it a fixed head so "the root is X" can match.
        head = ROOT_HEAD if token.head.i == token.i else token.head.lemma_.lower()
        triplets[(token.dep_.lower(), head, lemma)] += 1
    return SentenceFeatures(words, triplets)


def features(sentences: Sequence[str]) -> list[SentenceFeatures]:
    """Word and triplet bags of each sentence, parsing only those not seen before in this process."""
    missing = list(dict.fromkeys(s for s in sentences if s not in _cache))
    if missing:
        if len(_cache) + len(missing) > _CACHE_LIMIT:
            _cache.clear()
        for sentence, doc in zip(missing, parse(missing)):
            _cache[sentence] = _from_doc(doc)
    return [_cache[s] for s in sentences]


def f_measure(candidate: Counter, reference: Counter) -> float:
    """Harmonic mean of precision and recall of clipped (multiset) matches; 0 when nothing matches."""
    matches = sum((candidate & reference).values())
    if matches == 0:
        return 0.0
    precision = matches / sum(candidate.values())
    recall = matches / sum(reference.values())
    return 2 * precision * recall / (precision + recall)


@dataclass(frozen=True)
class PairF:
    """F-measures of one candidate against one reference."""

    word: float
    dep: float

    def mixed(self, lam: float) -> float:
        """The classification score F = λ·F_word + (1 − λ)·F_dep (Chen et al. 2015, §2)."""
        return lam * self.word + (1 - lam) * self.dep


def pair_f(candidates: Sequence[str], references: Sequence[str]) -> list[PairF]:
    """Word and dependency F-measures of each (candidate, reference) pair, in order."""
    if len(candidates) != len(references):
        raise ValueError(f"{len(candidates)} candidates but {len(references)} references")
    feats = features(list(candidates) + list(references))
    cand_f, ref_f = feats[: len(candidates)], feats[len(candidates):]
    return [PairF(f_measure(c.words, r.words), f_measure(c.triplets, r.triplets))
            for c, r in zip(cand_f, ref_f)]
