"""Building a metric's profile from what is already there, computing only what is missing.

The caller (:func:`muttlab.api.profile`) hands over what ships and is current: the accuracy grid's cells of
the metric and each TED pair's meta-evaluation. A section found there is taken as it is; any other is
computed through the score cache (:mod:`muttlab.profile.outcomes`, :func:`muttlab.meta.evaluate.meta_evaluate`),
with progress. A section that cannot be computed here (no data dir, a tie rule that cannot judge the suite) is
listed in ``unavailable`` with the reason, never left out silently.
"""
from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from muttlab.errors import DataError
from muttlab.meta import mqm
from muttlab.meta.evaluate import meta_evaluate
from muttlab.meta.result import TIE_CALIBRATED, MetaEvaluation
from muttlab.metrics.registry import Registry
from muttlab.profile import outcomes as oc
from muttlab.profile.result import MQM_COLUMNS, Profile, TrialOutcomes
from muttlab.settings import Settings

ProgressFn = Callable[[int, int, str], None]

# The meta-evaluation statistics a profile shows, per TED pair.
MQM_STATISTICS = ("acc_eq_item", "acc_eq", "pairwise_acc_item", "kendall_item", "pearson_item", "pairwise_acc_sys",
                  "pearson_sys")
SEVERITIES = ("base", "minor", "major", "critical")  # DEMETR's, mildest first
SUITE_TITLES = {"mutt": "MUTT", "demetr": "DEMETR", "mslc": "MSLC24-B"}
GRID = "shipped accuracy grid (data/results/grid.json)"
SHIPPED_MQM = "shipped meta-evaluation (data/results/meta_eval.json)"
COMPUTED = "computed here (scores from the score cache where it has them)"


def _trials(judged: oc.Outcomes) -> TrialOutcomes:
    frame = judged.frame
    cell = pd.MultiIndex.from_arrays([frame["group"].astype(str), frame["refs"]]).factorize()[0]
    return TrialOutcomes(judged.keys(), cell.astype(np.int64), frame["passed"].to_numpy(dtype=bool),
                         frame["supported"].to_numpy(dtype=bool))


def unit_test_sections(suite: str, judged: oc.Outcomes) -> dict[str, pd.DataFrame]:
    """The profile's tables of one suite's outcomes: ``mutt`` per corruption × refs, ``demetr`` per phenomenon
    (with its severity and the records not applied) and ``demetr_severity``, ``mslc`` per pair and case."""
    cells = judged.cells("group")
    if suite != "demetr":
        return {suite: cells}
    severity = dict(zip(judged.frame["group"], judged.frame["severity"]))
    cells.insert(1, "severity", cells["group"].map(severity))
    cells["not_applied"] = cells["group"].map(lambda g: judged.not_applied.get(g, 0)).astype(np.int64)
    by_severity = judged.cells("severity")
    skipped = pd.Series(cells["not_applied"].to_numpy(), index=cells["severity"]).groupby(level=0).sum()
    by_severity["not_applied"] = by_severity["severity"].map(lambda s: int(skipped.get(s, 0))).astype(np.int64)
    rank = {s: i for i, s in enumerate(SEVERITIES)}
    by_severity = by_severity.sort_values("severity", key=lambda c: c.map(lambda s: rank.get(s, len(rank))),
                                          kind="stable").reset_index(drop=True)
    return {"demetr": cells, "demetr_severity": by_severity}


def grid_section(cells: pd.DataFrame) -> pd.DataFrame:
    """The shipped grid's cells of one metric as the profile's ``mutt`` table (the grid does not count the
    trials a metric could not score: ``unsupported`` is unknown there)."""
    out = cells.rename(columns={"corruption": "group"})[["group", "refs", "n", "passed", "accuracy", "ci_low",
                                                          "ci_high", "tie_rate"]].reset_index(drop=True)
    out["unsupported"] = np.nan
    return out.astype({"refs": np.int64, "n": np.int64, "passed": np.int64})


def mqm_rows(result: MetaEvaluation, metric: str) -> pd.DataFrame:
    """One pair's rows of a metric: each statistic's value, interval, ε (and whether it is informative, why),
    rank and cluster among the metrics and baselines evaluated, and the constant baseline's value beside it."""
    rows = []
    for statistic in (s for s in MQM_STATISTICS if s in result.statistics):
        value = result.values[metric][statistic]
        ranking = [m for m in result.ranking(statistic) if not math.isnan(result.values[m][statistic])]
        low, high = result.intervals.get(metric, {}).get(statistic, (math.nan, math.nan))
        sig = result.significance.get(statistic)
        cluster = result.cluster(metric, statistic)
        tied = statistic in TIE_CALIBRATED
        rows.append({"pair": result.pair, "statistic": statistic, "value": value, "ci_low": low, "ci_high": high,
                     "epsilon": result.epsilons[metric][statistic] if tied else math.nan,
                     "informative": result.informative[metric][statistic] if tied else None,
                     "informative_reason": result.reasons.get(metric, {}).get(statistic) if tied else None,
                     "rank": ranking.index(metric) + 1 if metric in ranking else None, "of": len(ranking),
                     "cluster": cluster, "clusters": max(sig.clusters) if sig is not None and sig.clusters else None,
                     "constant": result.values["constant baseline"][statistic]})
    frame = pd.DataFrame(rows, columns=MQM_COLUMNS)
    for column in ("rank", "of", "cluster", "clusters"):
        frame[column] = frame[column].astype("Int64")
    return frame.astype({"value": float, "ci_low": float, "ci_high": float, "epsilon": float, "constant": float})


def build_profile(settings: Settings, metric: str, registry: Registry, grid: pd.DataFrame | None = None,
                  meta: dict[str, MetaEvaluation] | None = None, with_trials: bool = True,
                  suites: Sequence[str] = oc.SUITES, progress: ProgressFn | None = None) -> Profile:
    """The profile of ``metric`` under the settings' rules.

    Args:
      grid: the shipped grid's cells of this metric (current: same signature, same rules), or None. Used for
        the MUTT table unless ``with_trials`` asks for every trial's outcome (a comparison needs them).
      meta: each TED pair's shipped meta-evaluation; a pair where the metric was not evaluated is computed
        (with a data dir) with the metric alone beside the baselines.
      suites: the unit-test suites (:data:`muttlab.profile.outcomes.SUITES`).
    Raises:
      MuttlabError: an unknown or unavailable metric.
    """
    report = progress or (lambda *a: None)
    scorer = registry.get(metric)  # an unknown or unavailable metric is refused here, with what it lacks
    signature = scorer.signature()
    profile = Profile(metric, signature, settings.rules.signature())
    for suite in suites:
        if suite == "mutt" and grid is not None and not with_trials:
            profile.sections["mutt"], profile.origin["mutt"] = grid_section(grid), GRID
            continue
        report(0, 1, f"{SUITE_TITLES[suite]}: judging {metric} here, through the score cache")
        try:
            why = oc.refusal(settings, suite, scorer)
            if why is not None:
                profile.unavailable[suite] = why
                continue
            judged = oc.judge(settings, suite, [metric], registry, progress)[metric]
        except DataError as exc:  # no data dir, or its files cannot be read: nothing to judge here
            profile.unavailable[suite] = str(exc)
            continue
        profile.rules = judged.signature[len(signature) + 1:]
        profile.sections.update(unit_test_sections(suite, judged))
        profile.trials[suite] = _trials(judged)
        profile.origin[suite] = COMPUTED
    for pair in mqm.TED_PAIRS:
        result = (meta or {}).get(pair)
        origin = SHIPPED_MQM
        if result is None or (metric not in result.values and metric not in result.skipped):
            report(0, 1, f"MQM {pair}: meta-evaluating {metric} here, through the score cache")
            try:
                result = meta_evaluate(settings, mqm.load_ted(settings, pair), [metric], registry=registry)
            except DataError as exc:
                profile.mqm_skipped[pair] = f"not evaluated here: {exc}"
                continue
            origin = COMPUTED
            profile.notes.append(f"MQM {pair}: {metric} was evaluated beside the baselines only; its rank and "
                                 "cluster are among those")
        if metric in result.skipped:
            profile.mqm_skipped[pair] = result.skipped[metric]
            continue
        profile.mqm = mqm_rows(result, metric) if profile.mqm.empty else pd.concat(
            [profile.mqm, mqm_rows(result, metric)], ignore_index=True)
        profile.origin[f"mqm {pair}"] = origin
    return profile
