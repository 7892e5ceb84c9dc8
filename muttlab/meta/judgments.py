"""Judged system outputs as matrices: systems × items, the shape every meta-evaluation statistic reads.

A reader (:mod:`muttlab.meta.mqm`, :mod:`muttlab.meta.generic`) fills a :class:`Judgments`; the evaluation
(:mod:`muttlab.meta.evaluate`) adds each metric's scores in the same shape; :mod:`muttlab.meta.statistics`
only ever sees the two float matrices.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from muttlab.errors import MuttlabError

# No human scale comes near: beyond this, score differences lose every digit (and overflow towards 1e308).
MAX_SCORE = 1e15


@dataclass(frozen=True)
class ErrorSpan:
    """One error an annotator marked: characters ``start:end`` of the output (or of the source, when
    ``in_source``) with the ``<v>``/``</v>`` marks removed; a mark never closed runs to the end of the text."""

    start: int
    end: int
    category: str
    severity: str
    rater: str
    in_source: bool = False


@dataclass(frozen=True, eq=False)
class Judgments:
    """Human judgments of system outputs, systems × items.

    Attributes:
      name: what was read (``mqm-ted:en-de``, a file's name).
      pair: the language pair (``en-de``), "" when the data does not say.
      target_language: ISO 639-1 code of the outputs' language (decides which metrics can score them).
      systems: the scored systems, one row each (a human translation used as the reference is not one of them).
      items: the id of each item (source segment), one column each.
      gold: ``(systems, items)`` human scores, higher is better (MQM is negated); NaN where an output was not
        judged: such a cell is no output to evaluate.
      hypotheses: ``hypotheses[s][i]``, the output of system ``s`` for item ``i`` ("" where there is none).
      references: per item, its reference translations.
      sources: per item, its source sentence ("" when unknown).
      errors: ``(s, i)`` -> the error spans marked in that output (MQM); empty for other data.
      reference_system: the human translation used as the reference (None when references came with the data).
      reference_gold: that translation's human score per item (NaN where unrated), None without one.
      human: how the gold is named in tables (``MQM``, ``human``).
      files: the files read; data_digest: sha256 over their bytes, in that order.
      scores: metric name -> ``(systems, items)`` scores in the metric's own orientation (NaN where ``gold``
        is), added by the evaluation.
      notes: what the reader assumed (a target language not given...).
    """

    name: str
    pair: str
    target_language: str
    systems: tuple[str, ...]
    items: tuple[str, ...]
    gold: np.ndarray
    hypotheses: tuple[tuple[str, ...], ...]
    references: tuple[tuple[str, ...], ...]
    sources: tuple[str, ...]
    errors: dict[tuple[int, int], tuple[ErrorSpan, ...]] = field(default_factory=dict)
    reference_system: str | None = None
    reference_gold: np.ndarray | None = None
    human: str = "human"
    files: tuple[str, ...] = ()
    data_digest: str = ""
    scores: dict[str, np.ndarray] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def __post_init__(self):
        gold = np.asarray(self.gold, dtype=np.float64)
        shape = (len(self.systems), len(self.items))
        if gold.shape != shape:
            raise MuttlabError(f"{self.name}: gold has shape {gold.shape}, expected {shape} (systems x items)")
        if len(self.hypotheses) != shape[0] or any(len(row) != shape[1] for row in self.hypotheses):
            raise MuttlabError(f"{self.name}: hypotheses must be {shape[0]} rows of {shape[1]} texts")
        if len(self.references) != shape[1] or len(self.sources) != shape[1]:
            raise MuttlabError(f"{self.name}: one reference list and one source per item")
        object.__setattr__(self, "gold", gold)

    @property
    def shape(self) -> tuple[int, int]:
        return self.gold.shape

    @property
    def rated(self) -> np.ndarray:
        """``(systems, items)`` booleans: the outputs a human judged, the cells every statistic reads."""
        return ~np.isnan(self.gold)

    @property
    def n_outputs(self) -> int:
        return int(self.rated.sum())

    def cells(self) -> tuple[np.ndarray, np.ndarray]:
        """(system index, item index) of every judged output, system by system."""
        return np.nonzero(self.rated)

    def system_gold(self, with_reference: bool = False) -> dict[str, float]:
        """Each system's mean human score over the items it was judged on (and the reference translation's,
        when asked and there is one)."""
        out = {s: float(np.nanmean(row)) for s, row in zip(self.systems, self.gold)}
        if with_reference and self.reference_system is not None and self.reference_gold is not None:
            out[self.reference_system] = float(np.nanmean(self.reference_gold))
        return out

    def with_scores(self, scores: dict[str, np.ndarray]) -> "Judgments":
        """A copy holding these metric scores (each ``(systems, items)``) besides the ones it has."""
        for metric, matrix in scores.items():
            if np.shape(matrix) != self.shape:
                raise MuttlabError(f"{metric}: scores have shape {np.shape(matrix)}, expected {self.shape}")
        return replace(self, scores={**self.scores, **{k: np.asarray(v, dtype=np.float64) for k, v in scores.items()}})

    def first_items(self, count: int) -> "Judgments":
        """The same judgments on the first ``count`` items (a slice for quick checks and tests)."""
        keep = slice(0, count)
        return replace(self, items=self.items[keep], gold=self.gold[:, keep],
                       hypotheses=tuple(row[keep] for row in self.hypotheses), references=self.references[keep],
                       sources=self.sources[keep],
                       errors={k: v for k, v in self.errors.items() if k[1] < count},
                       reference_gold=None if self.reference_gold is None else self.reference_gold[keep],
                       scores={k: v[:, keep] for k, v in self.scores.items()})


SEGMENT_COLUMNS = ["system", "output", "human", "errors"]


def _spans(spans) -> list[dict]:
    return [{"start": e.start, "end": e.end, "category": e.category, "severity": e.severity, "rater": e.rater}
            for e in spans]


def segment_table(judgments: Judgments, item: int):
    """One item's judged outputs (columns :data:`SEGMENT_COLUMNS`; ``errors``: each output's marked spans, as
    dicts, in the text with the marks removed), systems in the judgments' order; ``attrs``: ``item`` (its id),
    ``source``, ``references``, the human translation used as the reference and its score
    (``reference_system``, ``reference_human``) and ``source_errors`` (spans marked in the source)."""
    import pandas as pd

    rows, source_spans = [], []
    for s, system in enumerate(judgments.systems):
        spans = judgments.errors.get((s, item), ())
        source_spans += _spans(e for e in spans if e.in_source)
        if not np.isnan(judgments.gold[s, item]):
            rows.append({"system": system, "output": judgments.hypotheses[s][item],
                         "human": float(judgments.gold[s, item]) + 0.0,  # MQM negated: -0.0 is no error
                         "errors": _spans(e for e in spans if not e.in_source)})
    frame = pd.DataFrame(rows, columns=SEGMENT_COLUMNS)
    reference_human = None
    if judgments.reference_gold is not None and not np.isnan(judgments.reference_gold[item]):
        reference_human = float(judgments.reference_gold[item]) + 0.0
    frame.attrs.update(item=judgments.items[item], source=judgments.sources[item],
                       references=list(judgments.references[item]), reference_system=judgments.reference_system,
                       reference_human=reference_human, source_errors=source_spans)
    return frame
