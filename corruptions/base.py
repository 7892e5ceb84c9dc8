"""What a corruption type is: a name, a family, the rule a metric must satisfy, and how pairs are made.

MUTT (Boag et al., ACL 2016, §3) groups corruptions in three families. Meaning-altering and
fluency-disrupting corruptions must score below the original (``orig > corr``); meaning-preserving
ones must score about the same (the *Difference formula*, |s_orig - s_corr| / s_orig <= tolerance).
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Callable, Optional


class Family(str, Enum):
    MEANING_ALTERING = "meaning-altering"
    MEANING_PRESERVING = "meaning-preserving"
    FLUENCY_DISRUPTING = "fluency-disrupting"


class Rule(str, Enum):
    ORIG_BETTER = "orig > corr"
    DIFFERENCE = "difference"  # |Δ| / s_orig <= tolerance


RULE_OF_FAMILY = {
    Family.MEANING_ALTERING: Rule.ORIG_BETTER,
    Family.FLUENCY_DISRUPTING: Rule.ORIG_BETTER,
    Family.MEANING_PRESERVING: Rule.DIFFERENCE,
}


@dataclass(frozen=True)
class CorruptionType:
    """One corruption type.

    Attributes:
      name: short id used on the CLI and in files (``neg_subj``, ``double_PP``...).
      label: the name the paper uses ("Negated Subject").
      family: which of the three families it belongs to; decides the rule.
      description: one line on what changes and why a metric might miss it.
      study: True for the nine types of the MUTT study (plus its word-order ``shuffled`` set).
      generator: parsed sentence (a spaCy Doc) -> corrupted sentence, or None when it does not apply.
      extractor: SICK pair -> (original, corruption), or None when the pair is not of this type.
    """

    name: str
    label: str
    family: Family
    description: str
    study: bool = True
    generator: Optional[Callable] = None
    extractor: Optional[Callable] = None

    @property
    def rule(self) -> Rule:
        return RULE_OF_FAMILY[self.family]
