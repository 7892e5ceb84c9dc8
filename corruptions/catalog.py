"""Every corruption type MUTT Lab knows, by name.

The study's types come from Boag et al. (2016), Table 1. Generators and extractors are attached in
``corruptions.generate`` and ``corruptions.extract``; this module only states what each type is.
"""
from __future__ import annotations

from corruptions.base import CorruptionType, Family

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

EXTRA_TYPES: tuple[CorruptionType, ...] = ()

_BY_NAME = {t.name: t for t in STUDY_TYPES + EXTRA_TYPES}


class UnknownCorruption(KeyError):
    def __init__(self, name: str):
        self.name = name
        super().__init__(f"unknown corruption type {name!r}; known types: {', '.join(_BY_NAME)}")

    def __str__(self) -> str:
        return self.args[0]


def all_types() -> list[CorruptionType]:
    return list(_BY_NAME.values())


def get(name: str) -> CorruptionType:
    try:
        return _BY_NAME[name]
    except KeyError:
        raise UnknownCorruption(name) from None


def register(ctype: CorruptionType) -> None:
    """Add or replace a type (used by the generator and extractor modules to attach their functions)."""
    _BY_NAME[ctype.name] = ctype
