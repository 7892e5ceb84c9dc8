"""The MUTT accuracy rules and the accuracy table.

Rules (Boag et al. 2016, §3): a trial of a meaning-altering or fluency-disrupting corruption passes when
the metric scores the original strictly better than the corruption; a meaning-preserving trial passes
when the *Difference formula* holds, |s_orig - s_corr| / (|s_orig| + 1e-9) <= tolerance (0.15).
Two scores are *tied* when |s_orig - s_corr| <= tie_tolerance * max(1, |s_orig|) (settings, 1e-9): a
difference in the last bits of a float is rounding and must not decide a trial. A tie fails the strict rule
(as in ACES, Amrhein et al. 2022, which counts ties as failures); the Difference rule is unchanged.
"Better" is sign-aware: for error rates (TER, TERp) lower is better, so the comparison flips. The
difference formula is computed on the scores as reported (an error rate's relative change).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from muttlab.corruptions.base import Rule
from muttlab.human.stats import wilson_interval
from muttlab.settings import DEFAULT_TIE_TOLERANCE

EPS = 1e-9


def passed(margin, rule: Rule) -> np.ndarray:
    """Boolean array from :func:`margins`: strict for ``orig > corr``, inclusive for the difference rule."""
    margin = np.asarray(margin, dtype=np.float64)
    return margin > 0 if rule is Rule.ORIG_BETTER else margin >= 0


def tied(s_orig, s_corr, tie_tolerance: float = DEFAULT_TIE_TOLERANCE) -> np.ndarray:
    """Boolean array: the two scores differ by no more than ``tie_tolerance * max(1, |s_orig|)``."""
    s_orig = np.asarray(s_orig, dtype=np.float64)
    s_corr = np.asarray(s_corr, dtype=np.float64)
    return np.abs(s_orig - s_corr) <= tie_tolerance * np.maximum(1.0, np.abs(s_orig))


def margins(s_orig, s_corr, rule: Rule, higher_is_better: bool, tolerance: float,
            tie_tolerance: float = DEFAULT_TIE_TOLERANCE) -> np.ndarray:
    """How far each trial is from the decision boundary; positive (or zero, for the difference rule) = pass.

    ORIG_BETTER: the oriented score difference, 0 for a tie (so a tie fails). DIFFERENCE: tolerance minus
    the relative change.
    """
    s_orig = np.asarray(s_orig, dtype=np.float64)
    s_corr = np.asarray(s_corr, dtype=np.float64)
    if rule is Rule.ORIG_BETTER:
        sign = 1.0 if higher_is_better else -1.0
        return np.where(tied(s_orig, s_corr, tie_tolerance), 0.0, sign * (s_orig - s_corr))
    return tolerance - np.abs(s_orig - s_corr) / (np.abs(s_orig) + EPS)


def accuracy_table(results: pd.DataFrame) -> pd.DataFrame:
    """Accuracy per metric x corruption x refs, with counts, a 95% Wilson interval and the tie rate (percent).

    Args:
      results: the runner's tidy table (columns metric, corruption, refs, passed and, when known, tied).
    Returns:
      columns metric, corruption, refs, n, passed, accuracy, ci_low, ci_high, tie_rate (NaN when the table
      has no ``tied`` column).
    """
    keys = ["metric", "corruption", "refs"]
    grouped = results.groupby(keys, sort=False)["passed"].agg(n="size", passed="sum").reset_index()
    grouped["passed"] = grouped["passed"].astype(int)
    low, high = wilson_interval(grouped["passed"].to_numpy(), grouped["n"].to_numpy())
    grouped["accuracy"] = 100.0 * grouped["passed"] / grouped["n"]
    grouped["ci_low"] = 100.0 * low
    grouped["ci_high"] = 100.0 * high
    if "tied" in results:
        ties = results.groupby(keys, sort=False)["tied"].sum().to_numpy()
        grouped["tie_rate"] = 100.0 * ties.astype(np.float64) / grouped["n"].to_numpy()
    else:
        grouped["tie_rate"] = np.nan
    return grouped


def accuracy_grid(table: pd.DataFrame) -> pd.DataFrame:
    """The paper's layout: one row per metric, one column per (corruption, refs), accuracy in percent."""
    grid = table.pivot_table(index="metric", columns=["corruption", "refs"], values="accuracy", sort=False)
    return grid
