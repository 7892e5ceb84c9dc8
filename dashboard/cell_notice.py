"""What the Drill-down says when the trials it can open are not the ones the landing grid's cell counted.

The landing grid ships with the package and is computed on the MUTT experiment sets; the sets themselves do
not ship (CC BY-NC-SA 3.0, derived from SICK). Without a data dir the Drill-down scores the bundled sample's
trials instead: other sentences and other counts, which must never pass for the grid's. No Streamlit here.
"""
from __future__ import annotations

from typing import Callable

from muttlab.dashboard.number_format import percent
from muttlab.errors import MuttlabError
from muttlab.api import Suite


def sample_cell_notice(load_grid: Callable[[], object], suite: Suite, metric: str, corruption: str,
                       refs: int, label: str, escape: Callable[[str], str]) -> str:
    """The notice for the cell (metric, corruption, refs) of the bundled sample ``suite``: the landing grid's
    numbers for that cell (when it has them) and how many sample trials of the type are shown instead.
    ``load_grid`` gives the shipped grid's snapshot (``services.shipped_grid``); an unreadable one (the Run page
    reports it) leaves its numbers out.
    ``escape`` makes the metric name and label (a user's plug-in may name them) plain text in Markdown."""
    metric, label = escape(metric), escape(label)
    try:
        grid = load_grid()
    except MuttlabError:
        grid = None
    cell = None
    if grid is not None:
        cells = grid.content.cells
        match = cells[(cells["metric"] == metric) & (cells["corruption"] == corruption) & (cells["refs"] == int(refs))]
        cell = None if match.empty else match.iloc[0]
    counted = (f"The landing grid's {metric} · {label} · {int(refs)} refs cell, {percent(cell.accuracy)} "
               f"({int(cell.passed)}/{int(cell.n)}), counts the MUTT experiment sets' trials. "
               if cell is not None else "")
    own = sum(1 for t in suite.trials if t.corruption == corruption)
    shown = (f"This page shows the bundled sample's {own} {label} trials instead, with their own counts below."
             if own else f"The bundled sample has no {label} trials (no generator of its makes them): choose a "
                         "type it has above.")
    return (f"**Not the grid's trials.** {counted}Those sets do not ship with MUTT Lab: their licence "
            "(CC BY-NC-SA 3.0) forbids redistributing the sentences, and no data dir is configured "
            f"(`MUTTLAB_DATA_DIR`). {shown}")
