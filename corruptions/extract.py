"""Extraction of the study's corruption pairs from SICK by templates (MUTT, Boag et al. 2016, §3.1).

SICK (Marelli et al. 2014) was built by rewriting a caption into a normalised sentence (sentence A or B)
and then into variants: negated, made passive, one word swapped for a near synonym or an antonym,
words scrambled. A pair whose two sentences come from the same caption is therefore often a clean
*(sentence, corruption)* pair; the templates below recognise which kind it is.

Which side is the corruption (the rule, applied the same way to every type):

* when the type has a surface marker (``There is/are no`` for a negated subject, ``is/are not`` for a
  negated action, ``is/are being`` for the passive), the side that carries the marker is the corruption;
* otherwise (antonyms, near synonyms, determiners, shuffled words) the corruption is the side farther
  from the source caption by character edit distance on normalised text; on a tie it is sentence B,
  SICK's rewritten side. This is the rule of the study's extraction code (``gather_corruptions.py``).

Extractors take anything with the fields of :class:`PairLike` (``muttlab.sources.SickPair`` has them),
so this package does not depend on the engine.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Hashable, Optional, Protocol, Sequence

ENTAILMENT, CONTRADICTION, NEUTRAL = "ENTAILMENT", "CONTRADICTION", "NEUTRAL"

# The study kept only passive pairs SICK annotators rated as closely related (gather_corruptions.py).
PASSIVE_MIN_RELATEDNESS = 3.5

SIDE_A, SIDE_B = "a", "b"


class PairLike(Protocol):
    """The fields of a SICK pair the templates read."""

    pair_id: int
    sentence_a: str
    sentence_b: str
    entailment: str
    relatedness: float
    original_a: str
    original_b: str
    dataset_a: str


@dataclass(frozen=True)
class Extracted:
    """A corruption pair taken from SICK.

    Attributes:
      corruption: the type's name.
      original: the clean sentence; corrupted: its corruption (both SICK sentences, verbatim).
      caption: the source caption both sentences were made from (Flickr8k or MSR-Video).
      dataset: ``FLICKR`` or ``SEMEVAL`` (MSR-Video), where the caption comes from.
      human_score: SICK relatedness of the pair (1-5).
      pair_id: SICK pair id; corrupted_side: ``a`` or ``b``, which SICK sentence is the corruption.
    """

    corruption: str
    original: str
    corrupted: str
    caption: str
    dataset: str
    human_score: float
    pair_id: int
    corrupted_side: str

    @property
    def source(self) -> str:
        return f"sick:{self.pair_id}"


# --------------------------------------------------------------------------- helpers

@lru_cache(maxsize=65536)
def normalise(sentence: str) -> str:
    """Lower case, letters/digits/spaces only, single spaces (the study's ``norm``)."""
    sentence = re.sub(r"[^a-z0-9 ]", "", sentence.lower())
    return re.sub(r" +", " ", sentence).strip()


def edit_distance(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    """Levenshtein distance between two sequences (characters of strings, or token lists).

    Bit-parallel (Myers 1999, in Hyyrö's formulation for edit distance): one pass over ``b`` with the
    DP column of ``a`` packed in an integer, so long captions cost a few microseconds each.
    """
    if a == b:
        return 0
    if not a or not b:
        return len(a) or len(b)
    m = len(a)
    full, last = (1 << m) - 1, 1 << (m - 1)
    peq: dict = {}
    for i, item in enumerate(a):
        peq[item] = peq.get(item, 0) | (1 << i)
    pv, mv, score = full, 0, m
    for item in b:
        eq = peq.get(item, 0)
        xv = eq | mv
        xh = (((eq & pv) + pv) ^ pv) | eq
        ph = (mv | ~(xh | pv)) & full
        mh = pv & xh
        if ph & last:
            score += 1
        elif mh & last:
            score -= 1
        ph = ((ph << 1) | 1) & full
        mh = (mh << 1) & full
        pv = (mh | ~(xv | ph)) & full
        mv = ph & xv
    return score


def same_caption(pair: PairLike) -> bool:
    """Both sentences were made from one caption, so they describe one scene."""
    return normalise(pair.original_a) == normalise(pair.original_b)


def farther_side(pair: PairLike) -> str:
    """The side farther from the source caption (ties: ``b``), by edit distance on normalised text."""
    caption = normalise(pair.original_a)
    dist_a = edit_distance(caption, normalise(pair.sentence_a))
    dist_b = edit_distance(caption, normalise(pair.sentence_b))
    return SIDE_A if dist_a > dist_b else SIDE_B


def marked_side(pair: PairLike, has_marker: Callable[[str], bool]) -> Optional[str]:
    """The one side carrying the marker, or None when neither or both do."""
    in_a, in_b = has_marker(pair.sentence_a), has_marker(pair.sentence_b)
    if in_a == in_b:
        return None
    return SIDE_A if in_a else SIDE_B


def one_word_difference(a: str, b: str) -> bool:
    """The two word sets have the same size and differ in exactly one word (the study's test)."""
    set_a, set_b = set(a.split()), set(b.split())
    return len(set_a) == len(set_b) and len(set_a - set_b) == 1


def without_articles(sentence: str) -> list[str]:
    return [w for w in sentence.lower().split() if w not in ("a", "the")]


def has_negated_subject(sentence: str) -> bool:
    return "There is no" in sentence or "There are no" in sentence


def has_negated_action(sentence: str) -> bool:
    return " is not " in sentence or " are not " in sentence


def has_passive(sentence: str) -> bool:
    return "is being" in sentence or "are being" in sentence


def is_determiner_substitution(pair: PairLike) -> bool:
    return (pair.sentence_a != pair.sentence_b
            and without_articles(pair.sentence_a) == without_articles(pair.sentence_b))


# --------------------------------------------------------------------------- templates: pair -> side or None

def side_neg_subj(pair: PairLike) -> Optional[str]:
    """"There is/are no ..." on exactly one side, and SICK labels the pair a contradiction."""
    if pair.entailment != CONTRADICTION:
        return None
    return marked_side(pair, has_negated_subject)


def side_neg_verb(pair: PairLike) -> Optional[str]:
    """"is/are not" on exactly one side, and SICK labels the pair a contradiction."""
    if pair.entailment != CONTRADICTION:
        return None
    return marked_side(pair, has_negated_action)


def side_passive(pair: PairLike) -> Optional[str]:
    """"is/are being" on exactly one side, an entailment, and relatedness >= 3.5 (without the
    entailment label, negated passives such as "There is no rope being climbed" slip in)."""
    if pair.entailment != ENTAILMENT or pair.relatedness < PASSIVE_MIN_RELATEDNESS:
        return None
    return marked_side(pair, has_passive)


def side_det_sub(pair: PairLike) -> Optional[str]:
    """The sentences are equal once "a" and "the" are removed."""
    return farther_side(pair) if is_determiner_substitution(pair) else None


def side_near_syms(pair: PairLike) -> Optional[str]:
    """One word differs, the pair is an entailment, and it is not a determiner substitution."""
    if (pair.entailment == ENTAILMENT and one_word_difference(pair.sentence_a, pair.sentence_b)
            and not is_determiner_substitution(pair)):
        return farther_side(pair)
    return None


def side_sem_opps(pair: PairLike) -> Optional[str]:
    """One word differs, the pair is not an entailment, and it is not a determiner substitution."""
    if (pair.entailment != ENTAILMENT and one_word_difference(pair.sentence_a, pair.sentence_b)
            and not is_determiner_substitution(pair)):
        return farther_side(pair)
    return None


def side_shuffled(pair: PairLike) -> Optional[str]:
    """The same bag of words in another order."""
    if pair.sentence_a != pair.sentence_b and sorted(pair.sentence_a.split()) == sorted(pair.sentence_b.split()):
        return farther_side(pair)
    return None


TEMPLATES: dict[str, Callable[[PairLike], Optional[str]]] = {
    "neg_subj": side_neg_subj,
    "neg_verb": side_neg_verb,
    "sem_opps": side_sem_opps,
    "shuffled": side_shuffled,
    "passive": side_passive,
    "near_syms": side_near_syms,
    "det_sub": side_det_sub,
}


def make_extractor(name: str) -> Callable[[PairLike], Optional[Extracted]]:
    """The extractor of one type: SICK pair -> :class:`Extracted`, or None when the pair is not of it.

    Only pairs whose two sentences come from the same caption are considered (as in the study).
    """
    template = TEMPLATES[name]

    def extract(pair: PairLike) -> Optional[Extracted]:
        if not same_caption(pair):
            return None
        side = template(pair)
        if side is None:
            return None
        # SICK has stray trailing spaces; they would make equal sentences different strings.
        a, b = pair.sentence_a.strip(), pair.sentence_b.strip()
        original, corrupted = (b, a) if side == SIDE_A else (a, b)
        return Extracted(name, original, corrupted, pair.original_a.strip(), pair.dataset_a, float(pair.relatedness),
                         int(pair.pair_id), side)

    extract.__name__ = f"extract_{name}"
    extract.__doc__ = f"SICK pair -> {name} pair or None. {template.__doc__}"
    return extract


EXTRACTORS = {name: make_extractor(name) for name in TEMPLATES}
