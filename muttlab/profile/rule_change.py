"""How a metric's unit-test verdicts move from one tie rule to another — above all from the default rule to
the ε the metric earned on expert judgments (``calibrated:<study>:<pair>``, :mod:`muttlab.rules`).

Each suite is judged twice, under the settings' rules and under the same rules with the other tie rule; the
scores are the same (the second pass reads them from the score cache), only the verdicts differ. A strict trial
whose two scores lie within ε is a tie, and a tie fails: a metric that passes a corruption only by margins
experts would call a tie has not clearly passed it. The Difference rule of meaning-preserving corruptions does
not use the tie rule, so those cells do not move.

A metric the other rule cannot judge on a suite is listed in ``refused`` with the reason (a calibration that
is not informative, none for the metric, or calibrated on another target language than the suite's: the TED
en-de calibrations are of German outputs, MUTT and DEMETR are English, MSLC24-B translates out of English).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from muttlab.engine import verdict
from muttlab.errors import DataError, MuttlabError
from muttlab.metrics.registry import Registry
from muttlab.profile import outcomes as oc
from muttlab.profile.result import FORMAT, frame_document, frame_from
from muttlab.rules import TieRule
from muttlab.settings import Settings

ProgressFn = Callable[[int, int, str], None]

COLUMNS = ["metric", "suite", "group", "refs", "severity", "n", "accuracy_default", "accuracy_compared", "change",
           "ties_default", "ties_compared"]
SUMMARY_COLUMNS = ["metric", "suite", "n", "accuracy_default", "accuracy_compared", "change", "ties_default",
                   "ties_compared", "epsilon"]


@dataclass(eq=False)
class RulesComparison:
    """Accuracies (%) and tie rates (%) under the settings' rules (``default``) and under ``rule``
    (``compared``), per metric × suite × corruption type or phenomenon (× reference count for MUTT) in
    ``table``, per metric × suite over all its trials in ``summary``; ``refused`` says why a metric was not
    judged on a suite under ``rule``; ``epsilons`` gives each judged metric's calibrated ε."""

    rule: str
    default: str
    table: pd.DataFrame
    summary: pd.DataFrame
    refused: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=["metric", "suite", "reason"]))
    epsilons: dict[str, float] = field(default_factory=dict)
    signatures: dict[str, str] = field(default_factory=dict)

    def rows(self) -> dict:
        """The JSON document of ``muttlab compare-rules --format json``: the rules, then each table as a list of
        records (NaN as null)."""
        def records(frame: pd.DataFrame) -> list[dict]:
            document = frame_document(frame)
            return [dict(zip(document["columns"], row)) for row in document["rows"]]
        return {"rule": self.rule, "default": self.default, "epsilons": self.epsilons,
                "summary": records(self.summary), "cells": records(self.table), "refused": records(self.refused)}

    def to_dict(self) -> dict:
        return {"format": FORMAT, "rule": self.rule, "default": self.default, "table": frame_document(self.table),
                "summary": frame_document(self.summary), "refused": frame_document(self.refused),
                "epsilons": dict(self.epsilons), "signatures": dict(self.signatures)}

    @classmethod
    def from_dict(cls, data: dict, where: str = "rules comparison") -> "RulesComparison":
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise DataError(where, f"not a format-{FORMAT} rules comparison")
        try:
            return cls(str(data["rule"]), str(data["default"]), frame_from(data["table"]), frame_from(data["summary"]),
                       frame_from(data["refused"]), {str(k): float(v) for k, v in data["epsilons"].items()},
                       {str(k): str(v) for k, v in data["signatures"].items()})
        except (KeyError, TypeError, ValueError) as exc:
            raise DataError(where, f"malformed: {type(exc).__name__}: {exc}") from None

    def __eq__(self, other) -> bool:
        if not isinstance(other, RulesComparison):
            return NotImplemented
        return self.to_dict() == other.to_dict()


def _rates(frame: pd.DataFrame) -> tuple[int, float, float]:
    scored = frame[frame["supported"]]
    n = len(scored)
    if not n:
        return 0, np.nan, np.nan
    return n, 100.0 * scored["passed"].mean(), 100.0 * scored["tied"].mean()


def _pair_rows(metric: str, suite: str, before: oc.Outcomes, after: oc.Outcomes) -> list[dict]:
    """One row per cell: the same trials in the same order under both rules."""
    if before.keys() != after.keys():
        raise MuttlabError(f"{suite}: {metric} was judged on other trials under the second rule")
    keys = ["group", "refs"]
    rows = []
    a_groups = before.frame.groupby(keys, sort=False)
    b_frame = after.frame
    for (group, refs), part in a_groups:
        other = b_frame.loc[part.index]
        n, acc_a, tie_a = _rates(part)
        _, acc_b, tie_b = _rates(other)
        severity = part["severity"].iloc[0]
        rows.append({"metric": metric, "suite": suite, "group": group, "refs": int(refs),
                     "severity": severity if isinstance(severity, str) else None, "n": n,
                     "accuracy_default": acc_a, "accuracy_compared": acc_b, "change": acc_b - acc_a,
                     "ties_default": tie_a, "ties_compared": tie_b})
    return rows


def compare_rules(settings: Settings, rule: TieRule, metrics: Sequence[str], registry: Registry,
                  suites: Sequence[str] = oc.SUITES, progress: ProgressFn | None = None) -> RulesComparison:
    """Each metric's verdicts on each suite under the settings' rules and under the tie rule ``rule`` (module
    doc). ``suites``: names of :data:`muttlab.profile.outcomes.SUITES` or suite files' paths.

    Raises:
      MuttlabError: an unknown metric; a suite that cannot be read (no data dir, a malformed file); a
        calibrated rule whose study or pair has no calibrations.
    """
    other = settings.with_rules(tie=rule)
    verdict.check_rules(other)
    chosen = {name: registry.get(name) for name in metrics}
    rows, summary, refused, epsilons, signatures = [], [], [], {}, {}
    for suite in suites:
        judged = [m for m, metric in chosen.items() if not _refused(other, suite, metric, refused)]
        before = oc.judge(settings, suite, list(chosen), registry, progress)
        after = oc.judge(other, suite, judged, registry, progress) if judged else {}
        for name in chosen:
            metric = chosen[name]
            signatures[name] = metric.signature()
            if name not in after:
                continue
            bound = verdict.rules_for(other, name, metric.signature(), metric.noise_floor, ())
            epsilons[name] = bound.epsilon if bound.epsilon is not None else np.nan
            a, b = before[name], after[name]
            shown = suite if suite in oc.SUITES else a.suite  # a suite file by its name, not its path
            rows += _pair_rows(name, shown, a, b)
            n, acc_a, tie_a = _rates(a.frame)
            _, acc_b, tie_b = _rates(b.frame)
            summary.append({"metric": name, "suite": shown, "n": n,
                            "accuracy_default": acc_a, "accuracy_compared": acc_b, "change": acc_b - acc_a,
                            "ties_default": tie_a, "ties_compared": tie_b, "epsilon": epsilons[name]})
    table = pd.DataFrame(rows, columns=COLUMNS).astype({"refs": np.int64, "n": np.int64})
    return RulesComparison(str(rule), settings.rules.signature(), table,
                           pd.DataFrame(summary, columns=SUMMARY_COLUMNS).astype({"n": np.int64}),
                           pd.DataFrame(refused, columns=["metric", "suite", "reason"]), epsilons, signatures)


def _refused(settings: Settings, suite: str, metric, refused: list[dict]) -> bool:
    why = oc.refusal(settings, suite, metric)
    if why is not None:
        refused.append({"metric": metric.name, "suite": suite, "reason": why})
    return why is not None
