"""The MUTT accuracy rules and the accuracy table.

Rules (Boag et al. 2016, §3): a trial of a meaning-altering or fluency-disrupting corruption passes when
the metric scores the original strictly better than the corruption; a meaning-preserving trial passes
when the *Difference formula* holds, |s_orig - s_corr| / (|s_orig| + 1e-9) <= tolerance (0.15).
"Better" is sign-aware: for error rates (TER, TERp) lower is better, so the comparison flips. The
difference formula is computed on the scores as reported (an error rate's relative change).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from muttlab.corruptions.base import Rule
from muttlab.human.stats import wilson_interval

EPS = 1e-9


def passed(margin, rule: Rule) -> np.ndarray:
    """Boolean array from :func:`margins`: strict for ``orig > corr``, inclusive for the difference rule."""
    margin = np.asarray(margin, dtype=np.float64)
    return margin > 0 if rule is Rule.ORIG_BETTER else margin >= 0


def margins(s_orig, s_corr, rule: Rule, higher_is_better: bool, tolerance: float) -> np.ndarray:
    """How far each trial is from the decision boundary; positive (or zero, for the difference rule) = pass.

    ORIG_BETTER: the oriented score difference. DIFFERENCE: tolerance minus the relative change.
    """
    s_orig = np.asarray(s_orig, dtype=np.float64)
    s_corr = np.asarray(s_corr, dtype=np.float64)
    if rule is Rule.ORIG_BETTER:
        sign = 1.0 if higher_is_better else -1.0
        return sign * (s_orig - s_corr)
    return tolerance - np.abs(s_orig - s_corr) / (np.abs(s_orig) + EPS)


def accuracy_table(results: pd.DataFrame) -> pd.DataFrame:
    """Accuracy per metric x corruption x refs, with counts and a 95% Wilson interval (percent).

    Args:
      results: the runner's tidy table (columns metric, corruption, refs, passed).
    Returns:
      columns metric, corruption, refs, n, passed, accuracy, ci_low, ci_high.
    """
    grouped = (results.groupby(["metric", "corruption", "refs"], sort=False)["passed"]
               .agg(n="size", passed="sum").reset_index())
    grouped["passed"] = grouped["passed"].astype(int)
    low, high = wilson_interval(grouped["passed"].to_numpy(), grouped["n"].to_numpy())
    grouped["accuracy"] = 100.0 * grouped["passed"] / grouped["n"]
    grouped["ci_low"] = 100.0 * low
    grouped["ci_high"] = 100.0 * high
    return grouped


def accuracy_grid(table: pd.DataFrame) -> pd.DataFrame:
    """The paper's layout: one row per metric, one column per (corruption, refs), accuracy in percent."""
    grid = table.pivot_table(index="metric", columns=["corruption", "refs"], values="accuracy", sort=False)
    return grid
