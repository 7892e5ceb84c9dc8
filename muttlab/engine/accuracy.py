"""The accuracy table: trials' verdicts (:mod:`muttlab.engine.verdict`) counted per cell.

A cell is metric x corruption type x reference count. Unsupported trials (a NaN score: the metric cannot
score the text) count in no cell's n.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np

from muttlab.stats import wilson_interval

if TYPE_CHECKING:  # `muttlab run` computes its accuracy cells without importing pandas
    import pandas as pd

ACCURACY_COLUMNS = ("metric", "corruption", "refs", "n", "passed", "accuracy", "ci_low", "ci_high", "tie_rate")


def accuracy_cells(metric: Sequence[str], corruption: Sequence[str], refs, passed, tied=None,
                   margin=None, intervals: bool = True) -> dict[str, list | np.ndarray]:
    """Accuracy per metric x corruption x refs (cells in order of first appearance), with counts, a 95% Wilson
    interval and the tie rate (percent), from the tidy table's columns (lists, arrays or a frame's columns).
    A trial whose ``margin`` is NaN is unsupported and counts in no cell's n.

    Args:
      intervals: False leaves the interval out. It is scipy's (:func:`muttlab.stats.wilson_interval`), and
        importing scipy.stats costs 1-2 s that a grid printed to the terminal (accuracy, counts, tie rate)
        does not need.
    Returns:
      the columns of :data:`ACCURACY_COLUMNS` (without ci_low and ci_high when ``intervals`` is False): names
      as lists, numbers as arrays; tie_rate is NaN when ``tied`` is None.
    """
    refs = np.asarray(refs, dtype=np.int64)
    cells: dict[tuple, int] = {}
    cell = np.fromiter((cells.setdefault(key, len(cells)) for key in zip(metric, corruption, refs.tolist())),
                       np.int64, refs.size)
    scored = None if margin is None else ~np.isnan(np.asarray(margin, dtype=np.float64))
    n = np.bincount(cell, weights=scored, minlength=len(cells)).astype(np.int64)
    # Sums of booleans as float64 are exact; the counts are integers again.
    passes = np.bincount(cell, weights=np.asarray(passed, dtype=np.float64), minlength=len(cells)).astype(np.int64)
    if tied is None:
        tie_rate = np.full(len(cells), np.nan)
    else:
        ties = np.bincount(cell, weights=np.asarray(tied, dtype=np.float64), minlength=len(cells))
        with np.errstate(invalid="ignore", divide="ignore"):
            tie_rate = 100.0 * ties / n
    keys = list(cells)
    with np.errstate(invalid="ignore", divide="ignore"):
        accuracy = 100.0 * passes / n
    columns = {"metric": [k[0] for k in keys], "corruption": [k[1] for k in keys],
               "refs": np.array([k[2] for k in keys], dtype=np.int64), "n": n, "passed": passes, "accuracy": accuracy}
    if intervals:
        low, high = wilson_interval(passes, n)
        columns.update(ci_low=100.0 * low, ci_high=100.0 * high)
    columns["tie_rate"] = tie_rate
    return columns


def accuracy_table(results: pd.DataFrame) -> pd.DataFrame:
    """:func:`accuracy_cells` of the runner's tidy table as a frame.

    Args:
      results: the runner's tidy table (columns metric, corruption, refs, passed and, when known, tied and
        margin).
    Returns:
      columns metric, corruption, refs, n, passed, accuracy, ci_low, ci_high, tie_rate (NaN when the table
      has no ``tied`` column).
    """
    import pandas as pd

    cells = accuracy_cells(results["metric"], results["corruption"], results["refs"], results["passed"],
                           results.get("tied"), results.get("margin"))
    return pd.DataFrame(cells, columns=list(ACCURACY_COLUMNS))
