"""Trials: an original sentence, its corruption, and an ordered pool of references.

"5 / 10 / 20 references" always means the first k references of the pool (MUTT, §4).
"""
from __future__ import annotations

from dataclasses import dataclass, field


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
    """

    id: str
    corruption: str
    original: str
    corrupted: str
    references: tuple[str, ...]
    source: str = ""
    human_score: float | None = None
    status: str = "accepted"

    def refs(self, k: int) -> tuple[str, ...]:
        return self.references[:k]


@dataclass
class Suite:
    """A named collection of trials, grouped by corruption type, with where it came from."""

    name: str
    trials: list[Trial] = field(default_factory=list)
    is_sample: bool = False

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
        return Suite(self.name, [t for t in self.trials if t.corruption in wanted], self.is_sample)
