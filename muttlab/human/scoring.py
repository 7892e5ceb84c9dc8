"""Choosing the metrics a study can use and scoring candidates with them through the cache."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from muttlab.errors import MuttlabError
from muttlab.engine.runner import registry_for, score_batches
from muttlab.settings import Settings
from muttlab.metrics.base import Metric, MetricError, MetricUnavailable
from muttlab.metrics.registry import Registry

ProgressFn = Callable[[int, int, str], None]


@dataclass
class MetricChoice:
    """The metrics a study will score with, and those it had to skip (name -> why)."""

    metrics: list[Metric] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        return [m.name for m in self.metrics]

    def notes(self) -> list[str]:
        return [f"{name} skipped: {why}" for name, why in self.skipped.items()]


def choose_metrics(spec: str | Sequence[str], registry: Registry) -> MetricChoice:
    """Resolve ``spec`` (``all``, a comma-separated string or a list) into available metrics.

    Unknown names are the user's mistake and raise :class:`MuttlabError`; a known metric whose requirement
    is missing (not installed yet, no trained model, no Java) is skipped with its reason, so one missing
    metric never stops a study.
    """
    # "all" lists every registered metric, so the unavailable ones appear among the skipped with why.
    names = registry.names if isinstance(spec, str) and spec.strip() == "all" else registry.resolve(spec)
    choice = MetricChoice()
    for name in names:
        try:
            choice.metrics.append(registry.get(name))
        except MetricUnavailable as exc:
            choice.skipped[name] = str(exc)
    return choice


def score_with(metric: Metric, candidates: list[str], references: list[list[str]], settings: Settings,
               registry: Registry | None = None) -> np.ndarray:
    """One score per candidate, as one batch through the score cache; input errors become MuttlabError."""
    try:
        return score_batches(metric, [(candidates, references)], settings, registry or registry_for(settings))[0]
    except MetricError as exc:
        raise MuttlabError(str(exc)) from None


def oriented(scores: np.ndarray, metric: Metric) -> np.ndarray:
    """Scores with the sign that makes larger better (error rates such as TER are negated)."""
    return scores if metric.higher_is_better else -scores
