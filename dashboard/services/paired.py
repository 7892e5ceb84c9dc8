"""Two metrics on the same trials: McNemar's paired test on the Drill-down page."""
from __future__ import annotations

from muttlab.dashboard.services.grid import cell_trials
from muttlab.settings import Settings


def paired_comparison(settings: Settings, metric_a: str, metric_b: str, corruption: str, refs: int,
                      suite_name: str = "default"):
    """McNemar's test of two metrics on the same trials of one cell (:func:`muttlab.stats.mcnemar`),
    over the trials both metrics could score (an unsupported trial has no verdict to compare).

    Returns:
      (McNemarResult, accuracy of A in %, accuracy of B in %).
    """
    from muttlab.stats import mcnemar

    a = cell_trials(settings, metric_a, corruption, refs, suite_name).set_index("trial")
    b = cell_trials(settings, metric_b, corruption, refs, suite_name).set_index("trial").reindex(a.index)
    both = a["margin"].notna() & b["margin"].notna()
    a, b = a.loc[both, "passed"].astype(bool), b.loc[both, "passed"].astype(bool)
    return mcnemar(a.to_numpy(), b.to_numpy()), 100.0 * a.mean(), 100.0 * b.mean()
