"""Judged data: candidates, their references and what people said of them — the one shape every
human-judgment study loads into (Flickr8K-Expert, Flickr8K-CrowdFlower, SICK, ΔBLEU sets).

Loaders here apply each dataset's published protocol once; the studies (:mod:`~muttlab.human.flickr`,
:mod:`~muttlab.human.sick`, :mod:`~muttlab.human.dbleu`) and the multi-level tuning
(:mod:`muttlab.learned.multilevel`) only score and correlate.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Sequence

import numpy as np

from muttlab.sources import (CaptionJudgment, load_flickr_captions, load_flickr_crowdflower, load_flickr_expert,
                                    load_sick)
from muttlab.errors import DataError, MuttlabError
from muttlab.settings import Settings

DATASETS = ("flickr8k-expert", "flickr8k-crowdflower", "sick")


@dataclass(frozen=True)
class JudgedSet:
    """Candidates scored against references, with human ratings.

    Attributes:
      candidates, references: ``candidates[i]`` is scored against ``references[i]``.
      human: ``(n, k)`` ratings; each of a candidate's ``k`` ratings is its own sample (Flickr8K-Expert has
        three experts per caption, the others one rating).
      ids: the dataset's id of each candidate (caption id, SICK pair id, line number).
      groups: what each candidate was judged for (the Flickr image, the SICK pair): the unit a split keeps whole.
      split: a label per candidate (SICK's TRAIN/TRIAL/TEST, or dev/test), or None.
      weights: ΔBLEU's human weight w ∈ [−1, 1] of each reference (None: every reference weighs 1).
      plain: which references plain BLEU uses (None: all); ΔBLEU's extra rated references are False.
      dropped: items the protocol left out.
    """

    name: str
    candidates: list[str]
    references: list[list[str]]
    human: np.ndarray
    ids: list[str]
    groups: list[str] = field(default_factory=list)
    split: np.ndarray | None = None
    weights: list[list[float]] | None = None
    plain: list[list[bool]] | None = None
    dropped: int = 0

    def __post_init__(self):
        human = np.asarray(self.human, dtype=np.float64)
        object.__setattr__(self, "human", human.reshape(len(self.candidates), -1))

    def __len__(self) -> int:
        return len(self.candidates)

    @property
    def item(self) -> np.ndarray:
        """The candidate index of each rating sample (``human.ravel()`` order)."""
        return np.repeat(np.arange(len(self)), self.human.shape[1])

    @property
    def mean_human(self) -> np.ndarray:
        """One rating per candidate: the mean of its ratings."""
        return self.human.mean(axis=1)

    def samples(self, scores) -> tuple[np.ndarray, np.ndarray]:
        """(metric score, human rating) per rating sample: a candidate's score repeats once per rating."""
        return np.asarray(scores, dtype=np.float64)[self.item], self.human.ravel()

    def weighted_references(self, i: int) -> list[tuple[str, float]]:
        """Candidate ``i``'s references with their ΔBLEU weights (1 where none are given)."""
        weights = self.weights[i] if self.weights is not None else [1.0] * len(self.references[i])
        return list(zip(self.references[i], weights))

    def plain_mask(self, i: int) -> list[bool]:
        return self.plain[i] if self.plain is not None else [True] * len(self.references[i])

    def subset(self, rows: Sequence[int] | str) -> "JudgedSet":
        """The candidates at ``rows``, or those whose split label is ``rows``."""
        if isinstance(rows, str):
            if self.split is None:
                raise MuttlabError(f"{self.name} has no split; split it first (split_by_group)")
            rows = np.flatnonzero(self.split == rows)
        rows = [int(r) for r in rows]

        def pick(values):
            return values if not values else [values[r] for r in rows]  # None or [] stay as they are

        return replace(self, candidates=pick(self.candidates), references=pick(self.references),
                       human=self.human[rows], ids=pick(self.ids), groups=pick(self.groups),
                       split=None if self.split is None else self.split[rows], weights=pick(self.weights),
                       plain=pick(self.plain))

    def split_by_group(self, first_fraction: float, seed: int, labels: tuple[str, str] = ("dev", "test")) -> "JudgedSet":
        """Groups (e.g. images) shuffled with ``seed``; the first ``first_fraction`` of them get ``labels[0]``."""
        groups = sorted(set(self.groups))
        order = np.random.default_rng(seed).permutation(groups)
        first = set(order[: int(round(first_fraction * len(groups)))].tolist())
        return replace(self, split=np.array([labels[0] if g in first else labels[1] for g in self.groups]))


def caption_text(captions: dict[str, tuple[str, ...]], caption_id: str, path: str) -> str:
    """The caption ``<image>.jpg#k`` of ``Flickr8k.token.txt``; a DataError naming ``path`` (the judgments file
    that asked for it) when there is no such caption."""
    image, _, k = caption_id.rpartition("#")
    try:
        return captions[image][int(k)]
    except (KeyError, ValueError, IndexError):
        raise DataError(path, f"caption {caption_id!r} is not in Flickr8k.token.txt",
                        fix="use the Flickr8k files distributed together") from None


def flickr_expert(settings: Settings) -> JudgedSet:
    """Flickr8K-Expert (Hodosh et al. 2013) under the caption-metric protocol: references are the five captions
    of the rated image; pairs whose candidate is one of that image's own captions are dropped; the three
    expert ratings (1-4) are three samples. 5,664 candidates, 16,992 samples on the shipped data."""
    captions = load_flickr_captions(settings)
    judgments = load_flickr_expert(settings)
    kept = [j for j in judgments if j.caption_image != j.image]
    return JudgedSet("flickr8k-expert",
                     [caption_text(captions, j.caption_id, "flickr8k/ExpertAnnotations.txt") for j in kept],
                     [list(captions[j.image]) for j in kept],
                     np.array([j.scores for j in kept], dtype=np.float64),
                     ids=[j.caption_id for j in kept], groups=[j.image for j in kept],
                     dropped=len(judgments) - len(kept))


def flickr_crowdflower(settings: Settings) -> JudgedSet:
    """Flickr8K-CrowdFlower: the rating is the fraction of "yes"; a candidate that is one of the image's
    captions is removed from its own references (four remain). 47,830 candidates on the shipped data."""
    captions = load_flickr_captions(settings)
    judgments: list[CaptionJudgment] = load_flickr_crowdflower(settings)
    cands, refs = [], []
    for j in judgments:
        cands.append(caption_text(captions, j.caption_id, "flickr8k/CrowdFlowerAnnotations.txt"))
        own = list(captions[j.image])
        if j.caption_image == j.image:
            own.pop(int(j.caption_id.rpartition("#")[2]))
        refs.append(own)
    return JudgedSet("flickr8k-crowdflower", cands, refs, np.array([j.scores[0] for j in judgments]),
                     ids=[j.caption_id for j in judgments], groups=[j.image for j in judgments])


def sick(settings: Settings) -> JudgedSet:
    """SICK relatedness (Marelli et al. 2014): sentence B scored against sentence A, gold relatedness 1-5,
    split = the SemEval set (TRAIN / TRIAL / TEST)."""
    pairs = load_sick(settings)
    return JudgedSet("sick", [p.sentence_b for p in pairs], [[p.sentence_a] for p in pairs],
                     np.array([p.relatedness for p in pairs], dtype=np.float64),
                     ids=[str(p.pair_id) for p in pairs], groups=[str(p.pair_id) for p in pairs],
                     split=np.array([p.split for p in pairs]))


def load_judged(settings: Settings, name: str) -> JudgedSet:
    """One of :data:`DATASETS`."""
    loaders = {"flickr8k-expert": flickr_expert, "flickr8k-crowdflower": flickr_crowdflower, "sick": sick}
    if name not in loaders:
        raise MuttlabError(f"unknown judged dataset {name!r}; choose from {', '.join(DATASETS)}")
    return loaders[name](settings)
