"""A cell's margins as an HTML histogram (:mod:`muttlab.dashboard.histogram_html`): what the Drill-down draws
above its trial cards. The same bins as the Vega-Lite chart that is its download
(:func:`muttlab.dashboard.charts.margin_histogram`: both draw :func:`~muttlab.dashboard.charts.cell_margins`),
fails and passes in the Okabe-Ito vermillion and blue, a dashed line at 0."""
from __future__ import annotations

import pandas as pd

from muttlab.dashboard.charts import FAIL_COLOUR, PASS_COLOUR, cell_margins
from muttlab.dashboard.histogram_html import Series, histogram_html


def margin_bars_html(cell: pd.DataFrame, title: str) -> str:
    """The cell's margins: each bin a column of its fails below its passes, and the axis title saying how many
    margins lie beyond the axis."""
    binned = cell_margins(cell)
    series = [Series("fail", "fails", FAIL_COLOUR, binned.fails), Series("pass", "passes", PASS_COLOUR, binned.passes)]
    return histogram_html(binned.edges, series, title=title, x_name="margin", y_name="trials",
                          axis_title=binned.axis_title, css_class="mutt-margins", zero_line=True)
