"""Every corruption type MUTT Lab knows, by name.

The study's types come from Boag et al. (2016), Table 1; the extra types are MUTT Lab's own (see
docs/corruptions.md for why each is there). Each type carries its generator (``muttlab.corruptions.generate``:
spaCy Doc -> corrupted sentence or None) and/or its SICK extractor (``muttlab.corruptions.extract``: SICK pair
-> extracted pair or None).
"""
from __future__ import annotations

from dataclasses import replace

from muttlab.corruptions.base import CorruptionType, Family
from muttlab.corruptions.extract import EXTRACTORS
from muttlab.corruptions.generate import GENERATORS
from muttlab.errors import UnknownCorruption  # noqa: F401  (re-export)

_A, _P, _F = Family.MEANING_ALTERING, Family.MEANING_PRESERVING, Family.FLUENCY_DISRUPTING

STUDY_TYPES: tuple[CorruptionType, ...] = (
    CorruptionType("neg_subj", "Negated Subject", _A, '"A man is ..." becomes "There is no man ..."'),
    CorruptionType("neg_verb", "Negated Action", _A, '"not" inserted before the action'),
    CorruptionType("sem_opps", "Antonym Replacement", _A, "one word replaced by its opposite"),
    CorruptionType("shuffled", "Shuffled Words", _A, "the same bag of words in another order (SICK pairs)"),
    CorruptionType("passive", "Active-to-Passive", _P, "the sentence turned into the passive voice"),
    CorruptionType("near_syms", "Synonymous Phrase", _P, "one word or phrase replaced by a synonym"),
    CorruptionType("det_sub", "Determiner Substitution", _P, '"a" and "the" exchanged'),
    CorruptionType("double_PP", "Duplicated PP", _F, "a prepositional phrase repeated"),
    CorruptionType("remove_prep", "Removed Preposition", _F, "the head preposition of a PP dropped"),
    CorruptionType("swap_chunks", "Re-ordered Chunks", _F, "noun chunks and other segments re-ordered"),
)

EXTRA_TYPES: tuple[CorruptionType, ...] = (
    CorruptionType("subj_obj_swap", "Subject-Object Swap", _A,
                   "subject and object exchanged: the same words, another meaning", study=False),
    CorruptionType("number_change", "Number Change", _A,
                   'a count changed ("two dogs" -> "five dogs", "a frog" -> "two frogs")', study=False),
    CorruptionType("gender_swap", "Gender Swap", _A,
                   'every gendered word turned to the other gender ("a man ... his" -> "a woman ... her")',
                   study=False),
    CorruptionType("drop_content", "Dropped Content Word", _A,
                   'an adjective or noun modifier dropped ("a red jacket" -> "a jacket")', study=False),
    CorruptionType("typo", "Typo", _F, "two adjacent letters of one content word swapped", study=False),
)


def _with_functions(ctype: CorruptionType) -> CorruptionType:
    return replace(ctype, generator=GENERATORS.get(ctype.name), extractor=EXTRACTORS.get(ctype.name))


STUDY_TYPES = tuple(_with_functions(t) for t in STUDY_TYPES)
EXTRA_TYPES = tuple(_with_functions(t) for t in EXTRA_TYPES)

_BY_NAME = {t.name: t for t in STUDY_TYPES + EXTRA_TYPES}




def all_types() -> list[CorruptionType]:
    return list(_BY_NAME.values())


def generated_types() -> list[str]:
    """Names of the types that have a generator, in catalogue order."""
    return [t.name for t in _BY_NAME.values() if t.generator is not None]


def extracted_types() -> list[str]:
    """Names of the types extracted from SICK, in catalogue order."""
    return [t.name for t in _BY_NAME.values() if t.extractor is not None]


def get(name: str) -> CorruptionType:
    try:
        return _BY_NAME[name]
    except KeyError:
        raise UnknownCorruption(name, _BY_NAME) from None


def register(ctype: CorruptionType) -> None:
    """Add or replace a type (used by the generator and extractor modules to attach their functions)."""
    _BY_NAME[ctype.name] = ctype
