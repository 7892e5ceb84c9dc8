"""Two metrics on one cell drawn as HTML: the Drill-down's comparison (``vs=``), the Vega-Lite chart
(:func:`muttlab.dashboard.charts.comparison_chart`) being its download. No Streamlit here (testable alone).

The chart's two parts: the 2 × 2 table of paired outcomes (where the metrics disagree in the Okabe-Ito blue, only
the page's metric right, and vermillion, only the other right; grey where they agree) and each trial as a point
of its two margins (:func:`~muttlab.dashboard.charts.paired_margins`: the same groups, colours and axes), with
dashed lines at 0. A chart in the comparison held the whole page, the trial cards with it, back until Vega's
scripts had arrived (docs/dashboard.md, Design). A point says its trial and margins on hover.

Every name (the metrics', a plug-in's choice; trial ids, a challenge set's) is HTML-escaped.
"""
from __future__ import annotations

import html

import pandas as pd

from muttlab.dashboard.charts import LIGHT_INK, PAIRED_FILLS, ZERO_LINE, paired_margins
from muttlab.dashboard.figure_frame import frame_css, number

PLOT_HEIGHT_PX = 260
CSS = "<style>" + frame_css("mutt-compare", PLOT_HEIGHT_PX) + """
.mutt-compare td { min-width: 4.5rem; height: 2.6rem; text-align: center; font-size: 1.1rem;
  font-variant-numeric: tabular-nums; }
.mutt-compare .mutt-swatch { display: inline-block; width: 0.75rem; height: 0.75rem; border-radius: 50%;
  margin-right: 0.3rem; vertical-align: middle; }
.mutt-compare .mutt-plot { border-left: 1px solid #9ca3af; }
.mutt-compare .mutt-pt { position: absolute; width: 8px; height: 8px; border-radius: 50%; opacity: 0.75;
  transform: translate(-50%, 50%); }
.mutt-compare .mutt-pt:hover { outline: 2px solid #111827; opacity: 1; }
.mutt-compare .mutt-zero-x { position: absolute; top: 0; bottom: 0; width: 0; border-left: 1px dashed """ \
    + ZERO_LINE + """; }
.mutt-compare .mutt-zero-y { position: absolute; left: 0; right: 0; height: 0; border-top: 1px dashed """ \
    + ZERO_LINE + """; }
.mutt-compare .mutt-x { display: flex; justify-content: space-between; font-variant-numeric: tabular-nums;
  opacity: 0.75; }
.mutt-compare .mutt-axis-y { opacity: 0.75; margin-bottom: 0.2rem; }
</style>"""


def _at(value: float, domain: tuple[float, float]) -> float:
    """Where ``value`` lies on ``domain``, in % from its low end."""
    low, high = domain
    return 50.0 if high == low else 100.0 * (value - low) / (high - low)


def comparison_html(contingency: pd.DataFrame, joined: pd.DataFrame, metric: str, other: str, title: str) -> str:
    """One ``<div class="mutt-compare">``: the title, the 2 × 2 table of ``contingency`` (rows the page's metric,
    columns the other; :meth:`muttlab.dashboard.compare.Comparison.contingency`) and the margins of ``joined``'s
    trials both metrics scored, with the key of its three groups."""
    e = html.escape
    cells = contingency.to_numpy()
    head = "".join(f'<th scope="col">{e(str(c))}</th>' for c in contingency.columns)
    rows = "".join(
        f'<tr><th scope="row">{e(str(name))}</th>' + "".join(
            f'<td title="{e(f"{name}, {column}: {int(cells[i, j])} trials")}" style="background: '
            f'{PAIRED_FILLS[i][j]}; color: {LIGHT_INK}">{int(cells[i, j])}</td>'
            for j, column in enumerate(contingency.columns)) + "</tr>"
        for i, name in enumerate(contingency.index))
    paired = paired_margins(joined, metric, other)
    colour = dict(zip(paired.names, paired.colours))

    def point(p: dict) -> str:
        hover = e(f"{p['trial']}: margin {number(p['margin'])} ({metric}), {number(p['other_margin'])} ({other})")
        return (f'<span class="mutt-pt" style="left: {_at(p["a"], paired.x_domain):.2f}%; '
                f'bottom: {_at(p["b"], paired.y_domain):.2f}%; background: {colour[p["which"]]}" '
                f'title="{hover}"></span>')

    points = "".join(map(point, paired.points))
    zeros = ""
    if paired.x_domain[0] <= 0.0 <= paired.x_domain[1]:
        zeros += f'<div class="mutt-zero-x" style="left: {_at(0.0, paired.x_domain):.2f}%"></div>'
    if paired.y_domain[0] <= 0.0 <= paired.y_domain[1]:
        zeros += f'<div class="mutt-zero-y" style="bottom: {_at(0.0, paired.y_domain):.2f}%"></div>'
    keys = "".join(f'<span><span class="mutt-swatch" style="background: {c}"></span>{e(n)}</span>'
                   for n, c in zip(paired.names, paired.colours))
    label = e(f"Margins of {len(paired.points)} trials, {metric} across and {other} up: " + ", ".join(paired.names))
    (x_low, x_high), (y_low, y_high) = paired.x_domain, paired.y_domain
    return (f'{CSS}<div class="mutt-compare"><p class="mutt-compare-title">{e(title)}</p>'
            f'<p class="mutt-part-title">paired outcomes (trials)</p><div class="mutt-scroll">'
            f'<table class="mutt-paired"><thead><tr><th></th>{head}</tr></thead><tbody>{rows}</tbody></table></div>'
            f'<p class="mutt-part-title">margins (positive = right)</p><div class="mutt-key">{keys}</div>'
            f'<div class="mutt-axis-y">↑ {e(f"margin, {other}")}</div>'
            f'<div class="mutt-frame"><div class="mutt-y"><span>{number(y_high)}</span>'
            f'<span>{number(y_low)}</span></div><div class="mutt-area">'
            f'<div class="mutt-plot" role="img" aria-label="{label}">{zeros}{points}</div>'
            f'<div class="mutt-x"><span>{number(x_low)}</span><span>{number(x_high)}</span></div>'
            f'<div class="mutt-axis">{e(f"margin, {metric}")}</div></div></div></div>')
