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

from typing import TYPE_CHECKING, Sequence

import numpy as np

from muttlab.corruptions.base import Rule
from muttlab.stats import wilson_interval
from muttlab.settings import DEFAULT_TIE_TOLERANCE

if TYPE_CHECKING:  # `muttlab run` computes its accuracy cells without importing pandas
    import pandas as pd

EPS = 1e-9
ACCURACY_COLUMNS = ("metric", "corruption", "refs", "n", "passed", "accuracy", "ci_low", "ci_high", "tie_rate")


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


def accuracy_cells(metric: Sequence[str], corruption: Sequence[str], refs, passed, tied=None) -> dict[str, list | np.ndarray]:
    """Accuracy per metric x corruption x refs (cells in order of first appearance), with counts, a 95% Wilson
    interval and the tie rate (percent), from the tidy table's columns (lists, arrays or a frame's columns).

    Returns:
      the columns of :data:`ACCURACY_COLUMNS`: names as lists, numbers as arrays; tie_rate is NaN when
      ``tied`` is None.
    """
    refs = np.asarray(refs, dtype=np.int64)
    cells: dict[tuple, int] = {}
    cell = np.fromiter((cells.setdefault(key, len(cells)) for key in zip(metric, corruption, refs.tolist())),
                       np.int64, refs.size)
    n = np.bincount(cell, minlength=len(cells))
    # Sums of booleans as float64 are exact; the counts are integers again.
    passes = np.bincount(cell, weights=np.asarray(passed, dtype=np.float64), minlength=len(cells)).astype(np.int64)
    low, high = wilson_interval(passes, n)
    if tied is None:
        tie_rate = np.full(len(cells), np.nan)
    else:
        ties = np.bincount(cell, weights=np.asarray(tied, dtype=np.float64), minlength=len(cells))
        tie_rate = 100.0 * ties / n
    keys = list(cells)
    return {"metric": [k[0] for k in keys], "corruption": [k[1] for k in keys],
            "refs": np.array([k[2] for k in keys], dtype=np.int64), "n": n, "passed": passes,
            "accuracy": 100.0 * passes / n, "ci_low": 100.0 * low, "ci_high": 100.0 * high, "tie_rate": tie_rate}


def accuracy_table(results: pd.DataFrame) -> pd.DataFrame:
    """:func:`accuracy_cells` of the runner's tidy table as a frame.

    Args:
      results: the runner's tidy table (columns metric, corruption, refs, passed and, when known, tied).
    Returns:
      columns metric, corruption, refs, n, passed, accuracy, ci_low, ci_high, tie_rate (NaN when the table
      has no ``tied`` column).
    """
    import pandas as pd

    cells = accuracy_cells(results["metric"], results["corruption"], results["refs"], results["passed"],
                           results.get("tied"))
    return pd.DataFrame(cells, columns=list(ACCURACY_COLUMNS))
