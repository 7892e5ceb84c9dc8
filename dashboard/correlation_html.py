"""A correlation matrix drawn as an HTML table of coloured cells: what the Human judgments page shows, the
Vega-Lite heatmap (:func:`muttlab.dashboard.charts.correlation_heatmap`) being its download. No Streamlit here
(testable alone).

The heatmap's colours (ColorBrewer's RdBu on −1..1, each number in the ink that reads on its cell), drawn with the
page instead of after Vega's scripts (docs/dashboard.md, Design). Each cell says its row, column and value to
three decimals on hover; a missing value shows "–". A wide matrix scrolls sideways in its own box.

Every name (a metric's is a plug-in's choice) is HTML-escaped.
"""
from __future__ import annotations

import html

import numpy as np
import pandas as pd

from muttlab.dashboard.charts import CORRELATION_SCALE, DARK_INK, colours_with_ink
from muttlab.dashboard.figure_frame import frame_css

CSS = "<style>" + frame_css("mutt-corr") + """
.mutt-corr { font-size: 0.85rem; }
.mutt-corr td { min-width: 3.6rem; height: 2.4rem; text-align: center; font-variant-numeric: tabular-nums; }
.mutt-corr .mutt-ramp { display: flex; align-items: center; gap: 0.4rem; margin-top: 0.4rem; opacity: 0.85; }
.mutt-corr .mutt-ramp-bar { width: 10rem; height: 0.7rem; background: linear-gradient(to right, """ \
    + ", ".join(CORRELATION_SCALE) + """); }
</style>"""


def correlation_table_html(matrix: pd.DataFrame, method: str, title: str) -> str:
    """One ``<div class="mutt-corr">``: the title, the matrix (rows and columns named as in ``matrix``) and the
    colour ramp from −1 to 1."""
    values = matrix.to_numpy(dtype=float)
    inks = colours_with_ink(CORRELATION_SCALE, (np.nan_to_num(values.ravel()) + 1.0) / 2.0)
    rows, names = [], [str(c) for c in matrix.columns]
    for i, row_name in enumerate(map(str, matrix.index)):
        cells = []
        for j, column in enumerate(names):
            value = values[i, j]
            if value != value:
                cells.append(f'<td title="{html.escape(f"{row_name} × {column}: not defined")}" '
                             f'style="color: {DARK_INK}">–</td>')
                continue
            fill, ink = inks[i * len(names) + j]
            hover = html.escape(f"{row_name} × {column}: {method} = {value:.3f}")
            cells.append(f'<td title="{hover}" style="background: {fill}; color: {ink}">{value:.2f}</td>')
        rows.append(f'<tr><th scope="row">{html.escape(row_name)}</th>{"".join(cells)}</tr>')
    head = "".join(f'<th scope="col">{html.escape(c)}</th>' for c in names)
    return (f'{CSS}<div class="mutt-corr"><p class="mutt-corr-title">{html.escape(title)}</p>'
            f'<div class="mutt-scroll"><table class="mutt-corr-matrix"><thead><tr><th></th>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div>'
            f'<div class="mutt-ramp"><span>{html.escape(method)}: −1</span><span class="mutt-ramp-bar"></span>'
            f'<span>1</span></div></div>')
