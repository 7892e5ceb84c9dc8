"""Trials: an original sentence, its corruption, and an ordered pool of references.

"5 / 10 / 20 references" always means the first k references of the pool (MUTT, §4).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from muttlab.errors import MuttlabError

# SICK's SemEval-2014 splits, and the split of a trial whose two SICK pairs lie in different ones.
SICK_SPLITS = ("TRIAL", "TRAIN", "TEST")
MIXED_SPLIT = "MIXED"


class Expectation(str, Enum):
    """What a metric must do with a trial's two texts for the trial to pass.

    FIRST_BETTER: the first text (original, good translation) scores strictly better; a tie fails.
    SECOND_BETTER: the second text scores strictly better (DEMETR's reference-as-translation baseline,
      where the "perturbed" side is the reference itself); a tie fails.
    ABOUT_SAME: the two scores differ by no more than the relative tolerance (MUTT's Difference formula).
    """

    FIRST_BETTER = "first better"
    SECOND_BETTER = "second better"
    ABOUT_SAME = "about the same"


@dataclass(frozen=True)
class Trial:
    """One metric unit test.

    Attributes:
      id: unique within a suite, e.g. ``neg_subj/17``.
      corruption: the corruption type's name.
      original, corrupted: the two candidates that are scored against the references.
      references: the ordered reference pool.
      source: where the pair came from (``mutt:neg_subj#17``, ``sick:1234``, ``sample:kitchen-2``...).
      human_score: a gold score when one exists (SICK relatedness), else None.
      status: review status in the pair store (``accepted`` for published sets).
      sick_pairs: ids of the SICK pairs (Marelli et al. 2014) made of the same two sentences, the one the
        study took first; empty for a generated trial. SICK holds some sentence
        pairs in both orders (two ids, one relatedness each), so a trial can have two.
      sick_splits: the SemEval-2014 split of each of those pairs (``TRIAL`` / ``TRAIN`` / ``TEST``).
      expectation: what a metric must do with the two texts; None = the rule of the corruption type's
        family (``orig > corr`` -> FIRST_BETTER, the Difference formula -> ABOUT_SAME).
      severity: the dataset's severity label of the phenomenon (DEMETR: minor / major / critical / base).
      weight: the dataset's weight of the item, where it has one.
    """

    id: str
    corruption: str
    original: str
    corrupted: str
    references: tuple[str, ...]
    source: str = ""
    human_score: float | None = None
    status: str = "accepted"
    sick_pairs: tuple[int, ...] = ()
    sick_splits: tuple[str, ...] = ()
    expectation: Expectation | None = None
    severity: str | None = None
    weight: float | None = None

    def refs(self, k: int) -> tuple[str, ...]:
        return self.references[:k]

    @property
    def sick_pair(self) -> int | None:
        """The SICK pair this trial was taken from."""
        return self.sick_pairs[0] if self.sick_pairs else None

    @property
    def split(self) -> str | None:
        """The trial's SemEval split: that of its SICK pairs, ``MIXED`` when its two pairs (one per
        order) lie in different splits, None for a trial not taken from SICK."""
        if not self.sick_splits:
            return None
        return self.sick_splits[0] if len(set(self.sick_splits)) == 1 else MIXED_SPLIT


def count_in_splits(trials, splits) -> dict[str, int]:
    """How many trials have a SICK pair in each of ``splits`` (a trial with pairs in two counts in both)."""
    return {split: sum(split in t.sick_splits for t in trials) for split in splits}


@dataclass
class Suite:
    """A named collection of trials, grouped by corruption type, with where it came from and the target
    languages its texts are in (ISO 639-1; MUTT, the sample and the pair store are English)."""

    name: str
    trials: list[Trial] = field(default_factory=list)
    is_sample: bool = False
    languages: tuple[str, ...] = ("en",)

    def corruptions(self) -> list[str]:
        seen: dict[str, None] = {}
        for t in self.trials:
            seen.setdefault(t.corruption, None)
        return list(seen)

    def of(self, corruption: str) -> list[Trial]:
        return [t for t in self.trials if t.corruption == corruption]

    def max_refs(self, corruption: str | None = None) -> int:
        trials = self.trials if corruption is None else self.of(corruption)
        return min((len(t.references) for t in trials), default=0)

    def select(self, corruptions: list[str]) -> "Suite":
        wanted = set(corruptions)
        return Suite(self.name, [t for t in self.trials if t.corruption in wanted], self.is_sample, self.languages)

    def in_split(self, split: str) -> "Suite":
        """The trials whose SICK pairs all lie in one SemEval split (``test``, ``train``, ``trial``;
        any case). Generated trials and trials with pairs in two splits are left out."""
        wanted = split.strip().upper()
        if wanted not in SICK_SPLITS:
            raise MuttlabError(f"unknown SICK split {split!r}; use one of {', '.join(s.lower() for s in SICK_SPLITS)}")
        return Suite(f"{self.name}[{wanted.lower()}]", [t for t in self.trials if t.split == wanted], self.is_sample,
                     self.languages)
