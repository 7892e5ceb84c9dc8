"""The result of a meta-evaluation: every statistic of every metric (and baseline) on one set of judgments,
the significance clusters, the system-level scores, and a lossless JSON form.

Statistic names (docs/meta_eval.md says how each is computed):

=====================  ===============================================================================
``acc_eq_item``        item-grouped pairwise accuracy with tie calibration (acc*_eq), with its ε
``acc_eq``             ungrouped acc*_eq (all pairs of all outputs), with its ε
``pairwise_acc_item``  item-grouped pairwise accuracy, exact ties (ε = 0)
``pairwise_acc``       ungrouped pairwise accuracy, exact ties
``kendall_item``       Kendall τ_b per item, averaged
``kendall``            Kendall τ_b over all outputs
``pearson_item``       Pearson r per item, averaged
``pearson``            Pearson r over all outputs
``pairwise_acc_sys``   system level: pairwise accuracy of the system ranking (Kocmi et al. 2021)
``pearson_sys``        system level: Pearson r of the system scores
=====================  ===============================================================================
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields

import numpy as np

from muttlab.errors import DataError

STATISTICS: dict[str, str] = {
    "acc_eq_item": "item-grouped pairwise accuracy with tie calibration (acc*_eq)",
    "acc_eq": "ungrouped pairwise accuracy with tie calibration (acc*_eq), all pairs of outputs",
    "pairwise_acc_item": "item-grouped pairwise accuracy, exact ties",
    "pairwise_acc": "ungrouped pairwise accuracy, exact ties",
    "kendall_item": "Kendall tau-b per item, averaged",
    "kendall": "Kendall tau-b over all outputs",
    "pearson_item": "Pearson r per item, averaged",
    "pearson": "Pearson r over all outputs",
    "pairwise_acc_sys": "system-level pairwise accuracy (Kocmi et al. 2021)",
    "pearson_sys": "system-level Pearson r",
}
TIE_CALIBRATED = ("acc_eq_item", "acc_eq")
SYSTEM_LEVEL = ("pairwise_acc_sys", "pearson_sys")
FORMAT = 2  # 2: why each ε is informative or not, and the item-level intervals


@dataclass
class Significance:
    """One statistic's ranking (best first, metrics with a value), the p-value of each ordered comparison
    (``p_values[k][i]``, k < i: that metric k beats metric i by chance) and the clusters."""

    statistic: str
    method: str  # "pairs" (outcomes swapped, ε fixed) or "scores" (scores permuted)
    ranking: list[str]
    p_values: list[list[float | None]]
    clusters: list[int]


@dataclass
class MetaEvaluation:
    """Statistics of metrics against human judgments on one data set.

    ``values[metric][statistic]`` is the number (NaN where undefined: a constant metric has no Pearson r);
    ``epsilons`` the tie threshold of each tie-calibrated statistic, in the metric's own units;
    ``informative`` whether that ε is one the metric has earned (it leaves pairs untied and beats the constant
    baseline on the same pairs, significantly where tested) and ``reasons`` why, in words
    (:func:`muttlab.meta.evaluate.calibration_verdict`). ``intervals`` holds a 95% bootstrap interval over items
    of the item-grouped accuracies (``acc_eq_item`` at its ε, ``pairwise_acc_item``;
    :func:`muttlab.meta.evaluate.item_interval`). ``skipped`` names the metrics that could not score
    these outputs, with why. ``scores`` (optional) holds each metric's segment scores, systems × items, in its
    own orientation (NaN where not judged), and ``gold`` the human scores they were compared with.
    """

    name: str
    pair: str
    target_language: str
    human: str
    data_digest: str
    systems: list[str]
    items: int
    outputs: int
    statistics: list[str]
    metrics: dict[str, str]  # metric -> signature (a baseline's says what it is)
    baselines: list[str]
    higher_is_better: dict[str, bool]
    values: dict[str, dict[str, float]]
    epsilons: dict[str, dict[str, float]] = field(default_factory=dict)
    informative: dict[str, dict[str, bool]] = field(default_factory=dict)
    reasons: dict[str, dict[str, str]] = field(default_factory=dict)
    intervals: dict[str, dict[str, list[float]]] = field(default_factory=dict)  # metric -> statistic -> [low, high]
    pairs: dict[str, int] = field(default_factory=dict)  # statistic -> pairs counted
    search: dict[str, dict[str, dict]] = field(default_factory=dict)  # metric -> statistic -> candidates, rate
    system_gold: list[float] = field(default_factory=list)
    system_scores: dict[str, list[float]] = field(default_factory=dict)
    system_level: dict[str, str] = field(default_factory=dict)  # metric -> "corpus" or "mean"
    significance: dict[str, Significance] = field(default_factory=dict)
    n_resamples: int = 0
    seed: int = 0
    alpha: float = 0.05
    skipped: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    scores: dict[str, np.ndarray] | None = None
    gold: np.ndarray | None = None

    # ------------------------------------------------------------------ reading

    def value(self, metric: str, statistic: str) -> float:
        return self.values[metric][statistic]

    def epsilon(self, metric: str, statistic: str = "acc_eq_item") -> float:
        return self.epsilons[metric][statistic]

    def cluster(self, metric: str, statistic: str) -> int | None:
        sig = self.significance.get(statistic)
        if sig is None or metric not in sig.ranking:
            return None
        return sig.clusters[sig.ranking.index(metric)]

    def ranking(self, statistic: str) -> list[str]:
        """The metrics best first by ``statistic`` (those without a value last, then the skipped ones)."""
        sig = self.significance.get(statistic)
        if sig is not None:
            ranked = list(sig.ranking)
        else:
            ranked = sorted((m for m in self.values if not math.isnan(self.values[m][statistic])),
                            key=lambda m: -self.values[m][statistic])
        return ranked + [m for m in self.values if m not in ranked]

    def rows(self) -> list[dict]:
        """One row per (metric, statistic), metrics in the order of the first statistic's ranking: ``metric``,
        ``statistic``, ``value`` (None where undefined), ``epsilon`` for a tie-calibrated statistic, then
        ``informative`` and ``informative_reason``, ``ci_low`` and ``ci_high`` where there is an interval,
        ``rank`` and ``cluster`` where significance was tested, ``baseline``; a skipped metric has one row per
        statistic with value None and its ``reason``. The JSON form of ``muttlab meta-eval``."""
        out = []
        order = self.ranking(self.statistics[0]) if self.statistics else list(self.values)
        for metric in order:
            for statistic in self.statistics:
                value = self.values[metric][statistic]
                row = {"metric": metric, "statistic": statistic, "value": None if math.isnan(value) else value}
                if statistic in TIE_CALIBRATED:
                    row["epsilon"] = self.epsilons[metric][statistic]
                    row["informative"] = self.informative[metric][statistic]
                    row["informative_reason"] = self.reasons.get(metric, {}).get(statistic, "")
                interval = self.intervals.get(metric, {}).get(statistic)
                if interval is not None:
                    row["ci_low"], row["ci_high"] = (None if math.isnan(v) else v for v in interval)
                sig = self.significance.get(statistic)
                if sig is not None and metric in sig.ranking:
                    row["rank"] = sig.ranking.index(metric) + 1
                    row["cluster"] = sig.clusters[sig.ranking.index(metric)]
                row["baseline"] = metric in self.baselines
                out.append(row)
        for metric, reason in self.skipped.items():
            out += [{"metric": metric, "statistic": s, "value": None, "baseline": False, "reason": reason}
                    for s in self.statistics]
        return out

    def table(self):
        """A wide frame, one row per metric (ranked by the first statistic): each statistic's value, its 95%
        interval (``<statistic> low``, ``<statistic> high``), ε (``<statistic> eps``) and cluster
        (``<statistic> cluster``) where it has them."""
        import pandas as pd

        records = []
        order = self.ranking(self.statistics[0]) if self.statistics else list(self.values)
        for metric in order:
            record: dict = {"metric": metric}
            for statistic in self.statistics:
                record[statistic] = self.values[metric][statistic]
                interval = self.intervals.get(metric, {}).get(statistic)
                if interval is not None:
                    record[f"{statistic} low"], record[f"{statistic} high"] = interval
                if statistic in TIE_CALIBRATED:
                    record[f"{statistic} eps"] = self.epsilons[metric][statistic]
                if statistic in self.significance:
                    record[f"{statistic} cluster"] = self.cluster(metric, statistic)
            records.append(record)
        frame = pd.DataFrame(records)
        for column in frame.columns:
            if column.endswith(" cluster"):
                frame[column] = frame[column].astype("Int64")
        return frame

    def system_table(self):
        """Systems × (human score, each metric's system score)."""
        import pandas as pd

        frame = pd.DataFrame({"system": self.systems, self.human: self.system_gold})
        for metric, scores in self.system_scores.items():
            frame[metric] = scores
        return frame

    # ------------------------------------------------------------------ JSON

    def to_dict(self) -> dict:
        """A JSON-ready dict; :meth:`from_dict` gives back an equal object (NaN is written as null)."""
        out = {"format": FORMAT}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "significance":
                value = {k: asdict(v) for k, v in value.items()}
            elif f.name == "scores":
                value = None if value is None else {k: _nulls(v.tolist()) for k, v in value.items()}
            elif f.name == "gold":
                value = None if value is None else _nulls(value.tolist())
            out[f.name] = _nulls(value)
        return out

    @classmethod
    def from_dict(cls, data: dict, where: str = "meta-evaluation") -> "MetaEvaluation":
        """The object :meth:`to_dict` wrote; a DataError naming what is missing or malformed."""
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise DataError(where, f"not a format-{FORMAT} meta-evaluation")
        names = [f.name for f in fields(cls)]
        missing = [n for n in names if n not in data and n not in ("scores", "gold")]
        if missing:
            raise DataError(where, f"lacks {', '.join(missing)}")
        try:
            kwargs = {n: data.get(n) for n in names}
            # Nulls are NaN where numbers belong; p-values keep theirs (a comparison not made).
            kwargs["values"] = {m: {s: _number(v) for s, v in row.items()} for m, row in data["values"].items()}
            kwargs["system_gold"] = [_number(v) for v in data["system_gold"]]
            kwargs["system_scores"] = {m: [_number(v) for v in row] for m, row in data["system_scores"].items()}
            kwargs["significance"] = {k: Significance(**v) for k, v in data["significance"].items()}
            kwargs["intervals"] = {m: {s: [_number(v) for v in pair] for s, pair in row.items()}
                                   for m, row in data["intervals"].items()}
            if kwargs["scores"] is not None:
                kwargs["scores"] = {k: np.array(v, dtype=np.float64) for k, v in kwargs["scores"].items()}
            if kwargs["gold"] is not None:
                kwargs["gold"] = np.array(kwargs["gold"], dtype=np.float64)
            return cls(**kwargs)
        except (TypeError, AttributeError, ValueError) as exc:
            raise DataError(where, f"malformed: {exc}") from None

    def __eq__(self, other) -> bool:
        if not isinstance(other, MetaEvaluation):
            return NotImplemented
        return self.to_dict() == other.to_dict()


def _nulls(value):
    """``value`` with every NaN float replaced by None (JSON has no NaN) and numpy scalars as Python's."""
    if isinstance(value, dict):
        return {k: _nulls(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_nulls(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _number(value) -> float:
    return float("nan") if value is None else float(value)
