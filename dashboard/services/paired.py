"""Two metrics on the same trials of one Drill-down cell: the comparison and McNemar's paired test."""
from __future__ import annotations

from muttlab.dashboard.compare import Comparison, compare
from muttlab.dashboard.services.cells import cell_trials
from muttlab.settings import Settings


def paired_comparison(settings: Settings, metric_a: str, metric_b: str, corruption: str, refs: int | None,
                      suite_name: str = "default", format: str | None = None) -> Comparison:
    """``metric_a``'s cell against ``metric_b``'s on the same trials (:func:`muttlab.dashboard.compare.compare`):
    the trials only one of them gets right and McNemar's test over the trials both could score.

    Raises:
      MuttlabError: as :func:`~muttlab.dashboard.services.cells.cell_trials`.
    """
    return compare(cell_trials(settings, metric_a, corruption, refs, suite_name, format),
                   cell_trials(settings, metric_b, corruption, refs, suite_name, format), metric_a, metric_b)
