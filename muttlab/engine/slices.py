"""Slices of a cell's trials by what the trials are, and the slices where a metric fails most.

A drill-down cell (one metric on one corruption type or phenomenon) holds trials that differ in ways a reader
suspects matter: a long sentence, a sentence that shares few words with its references, a corruption that
changes one word or half the sentence, a DEMETR severity. The properties are read off the trial's texts:

* ``length``: words in the original (the text the corruption was made from);
* ``overlap``: the share of the original's words that occur in any of the references the cell scores against,
  in whole percent;
* ``edit``: the corruption's size, the word-level Levenshtein distance from the original to the corruption
  (insertions, deletions and substitutions of words; ``nltk.edit_distance``);
* ``severity`` and ``phenomenon``: the labels the suite gives its trials, where they give more than one.

Words are ``\\w+`` runs, lower-cased. A slice is a conjunction of conditions, written ``length:5..8`` (a whole
number range, both ends included) or ``severity=major``, joined by commas in a link (``slice=length:5..8,edit:1..1``).
The slice finder groups each number into quantile bins and lists the single slices and the slices of two
properties with at least ``min_n`` judged trials, lowest accuracy first, each with its 95% Wilson interval
(:func:`muttlab.stats.wilson_interval`), as Zeno's slice finder and MT-Telescope's bucket analysis do.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import combinations
from typing import TYPE_CHECKING, Mapping, Sequence

import numpy as np

from muttlab.errors import InvalidArgument
from muttlab.stats import wilson_interval

if TYPE_CHECKING:  # pandas is imported by the functions that build a frame: the API imports this module
    import pandas as pd

# property -> (what a reader sees, unit after a number); numbers first, then labels the suite gives.
NUMBERS = {"length": ("sentence length", "words"), "overlap": ("word overlap with the references", "%"),
           "edit": ("corruption size", "word edits")}
LABELS = {"severity": "severity", "phenomenon": "phenomenon"}
PROPERTIES = (*NUMBERS, *LABELS)
MIN_N = 20  # judged trials a listed slice needs: below it a Wilson interval spans most of [0, 100]
BINS = 4  # quantile bins per number in the slice finder
MAX_CONDITIONS = len(PROPERTIES)
MAX_LABEL = 60
_WORD = re.compile(r"\w+")
_RANGE = re.compile(r"(length|overlap|edit):([0-9]{1,6})\.\.([0-9]{1,6})")
_LABEL = re.compile(r"(severity|phenomenon)=([\w .+/-]{1,%d})" % MAX_LABEL)


@dataclass(frozen=True)
class Condition:
    """One property's condition: a whole-number range ``low..high`` (both included) or one label."""

    prop: str
    low: int | None = None
    high: int | None = None
    label: str | None = None

    @property
    def key(self) -> str:
        return f"{self.prop}={self.label}" if self.label is not None else f"{self.prop}:{self.low}..{self.high}"

    @property
    def text(self) -> str:
        if self.label is not None:
            return f"{LABELS[self.prop]} {self.label}"
        name, unit = NUMBERS[self.prop]
        span = f"{self.low}" if self.low == self.high else f"{self.low}–{self.high}"
        return f"{name} {span} {unit}"

    def mask(self, properties: pd.DataFrame) -> np.ndarray:
        column = properties[self.prop]
        if self.label is not None:
            return (column == self.label).to_numpy(dtype=bool)
        values = column.to_numpy(dtype=float)
        return (values >= self.low) & (values <= self.high)


@dataclass(frozen=True)
class Slice:
    """A conjunction of conditions on different properties; the empty slice holds every trial."""

    conditions: tuple[Condition, ...] = ()

    @property
    def key(self) -> str:
        """The slice as a link writes it (``slice=``): conditions joined by commas."""
        return ",".join(c.key for c in self.conditions)

    @property
    def text(self) -> str:
        return " and ".join(c.text for c in self.conditions) or "all trials"

    def mask(self, properties: pd.DataFrame) -> np.ndarray:
        """Which rows of ``properties`` (:func:`trial_properties`) lie in the slice."""
        keep = np.ones(len(properties), dtype=bool)
        for condition in self.conditions:
            keep &= condition.mask(properties)
        return keep


def parse_slice(text: str) -> Slice:
    """The slice a link's ``slice=`` value names (``length:5..8,severity=major``); an empty text is every trial.

    Raises:
      InvalidArgument: a condition not of the forms ``length|overlap|edit:LOW..HIGH`` or
        ``severity|phenomenon=LABEL``, a range whose low end is above its high end, a property named twice.
    """
    conditions: list[Condition] = []
    for part in (p.strip() for p in (text or "").split(",")):
        if not part:
            continue
        number, label = _RANGE.fullmatch(part), _LABEL.fullmatch(part)
        if number:
            low, high = int(number[2]), int(number[3])
            if low > high:
                raise InvalidArgument("parse_slice", "slice",
                                      f"condition {part!r} runs from {low} down to {high}; write LOW..HIGH")
            conditions.append(Condition(number[1], low=low, high=high))
        elif label:
            conditions.append(Condition(label[1], label=label[2]))
        else:
            raise InvalidArgument("parse_slice", "slice",
                                  f"condition {part[:40]!r} is not of the form PROPERTY:LOW..HIGH "
                                  f"({', '.join(NUMBERS)}) or PROPERTY=LABEL ({', '.join(LABELS)})")
    props = [c.prop for c in conditions]
    if len(set(props)) != len(props):
        raise InvalidArgument("parse_slice", "slice", "names a property twice; a slice names each property once")
    return Slice(tuple(sorted(conditions, key=lambda c: PROPERTIES.index(c.prop))))


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _overlap(original: list[str], references: Sequence[str]) -> float:
    if not original:
        return np.nan
    pool = {w for ref in references for w in _words(ref)}
    return round(100.0 * sum(w in pool for w in original) / len(original))


def trial_properties(cell: pd.DataFrame, trials: Mapping[str, object] | None = None) -> pd.DataFrame:
    """The properties of each trial of ``cell`` (rows in its order: ``trial``, ``original``, ``corrupted``,
    ``references``, the columns of :mod:`muttlab.dashboard.cell_view`), with ``passed``, ``unsupported`` and
    ``margin`` carried over.

    ``trials`` (trial id -> :class:`muttlab.trials.Trial`) supply severity and phenomenon; a label column is
    kept only where the trials have more than one value of it.

    Returns:
      a frame with ``trial``, ``length``, ``overlap``, ``edit`` (floats; ``overlap`` NaN for an empty original),
      the label columns, ``passed``, ``unsupported``, ``margin``.
    """
    import pandas as pd
    from nltk.metrics.distance import edit_distance

    originals = [_words(t) for t in cell["original"]]
    corrupted = [_words(t) for t in cell["corrupted"]]
    frame = pd.DataFrame({
        "trial": cell["trial"].to_numpy(),
        "length": np.array([len(w) for w in originals], dtype=float),
        "overlap": np.array([_overlap(w, refs) for w, refs in zip(originals, cell["references"])], dtype=float),
        "edit": np.array([edit_distance(a, b) for a, b in zip(originals, corrupted)], dtype=float),
    })
    trials = trials or {}
    for prop, attr in (("severity", "severity"), ("phenomenon", "corruption")):
        values = [getattr(trials.get(t), attr, None) for t in frame["trial"]]
        if len({v for v in values if v is not None}) > 1:
            frame[prop] = pd.Series(values, dtype=object).map(lambda v: None if v is None else str(v)[:MAX_LABEL])
    for column in ("passed", "unsupported", "margin"):
        frame[column] = cell[column].to_numpy()
    return frame


def properties_of(properties: pd.DataFrame) -> list[str]:
    """The properties a frame of :func:`trial_properties` has, in :data:`PROPERTIES` order."""
    return [p for p in PROPERTIES if p in properties.columns]


def _conditions(properties: pd.DataFrame, prop: str, bins: int) -> list[Condition]:
    """A label's values, or a number's quantile bins as disjoint whole-number ranges."""
    import pandas as pd

    column = properties[prop]
    if prop in LABELS:
        return [Condition(prop, label=v) for v in sorted(column.dropna().unique())]
    values = column.dropna()
    if values.nunique() < 2:
        return []
    if values.nunique() <= bins:  # few values (a corruption of one or two words): a slice each
        return [Condition(prop, low=int(v), high=int(v)) for v in sorted(values.unique())]
    codes = pd.qcut(values, q=bins, labels=False, duplicates="drop")
    spans = values.groupby(codes).agg(["min", "max"])
    return [Condition(prop, low=int(lo), high=int(hi)) for lo, hi in spans.itertuples(index=False)]


def worst_slices(properties: pd.DataFrame, min_n: int = MIN_N, bins: int = BINS, limit: int = 10) -> pd.DataFrame:
    """The slices of one or two properties with at least ``min_n`` judged trials (unsupported ones are in no
    count), lowest accuracy first (the smaller upper end of the interval first among equal accuracies).

    Returns:
      at most ``limit`` rows: ``slice`` (the link's value), ``text``, ``n`` (judged trials), ``passed``,
      ``accuracy``, ``ci_low``, ``ci_high`` (percent; 95% Wilson interval).
    """
    import pandas as pd

    if min_n < 1:
        raise InvalidArgument("worst_slices", "min_n", f"is {min_n}; a slice needs at least one trial")
    judged = ~properties["unsupported"].to_numpy(dtype=bool)
    passed = properties["passed"].to_numpy(dtype=bool) & judged
    singles = [Slice((c,)) for p in properties_of(properties) for c in _conditions(properties, p, bins)]
    pairs = [Slice(tuple(sorted(a.conditions + b.conditions, key=lambda c: PROPERTIES.index(c.prop))))
             for a, b in combinations(singles, 2) if a.conditions[0].prop != b.conditions[0].prop]
    rows = []
    for candidate in singles + pairs:
        inside = candidate.mask(properties) & judged
        n = int(inside.sum())
        if n >= min_n:
            rows.append((candidate.key, candidate.text, n, int(passed[inside].sum())))
    table = pd.DataFrame(rows, columns=["slice", "text", "n", "passed"])
    if table.empty:
        return table.assign(accuracy=[], ci_low=[], ci_high=[])
    low, high = wilson_interval(table["passed"].to_numpy(), table["n"].to_numpy())
    table = table.assign(accuracy=100.0 * table["passed"] / table["n"], ci_low=100.0 * low, ci_high=100.0 * high)
    return table.sort_values(["accuracy", "ci_high", "n"], ascending=[True, True, False],
                             kind="stable").head(limit).reset_index(drop=True)
