"""A cell's margins as an HTML histogram: what the Drill-down draws above its trial cards. No Streamlit here
(testable alone).

The same bins as the Vega-Lite chart (:func:`muttlab.dashboard.charts.margin_histogram`: both draw
:func:`~muttlab.dashboard.charts.cell_margins`, fails and passes in the Okabe-Ito vermillion and blue, a
dashed line at 0), drawn as boxes of CSS. A chart on the page had the browser fetch and run Vega before it
drew the page's elements, the trial cards with them: 0.4 to 0.5 s of a first visit (docs/dashboard.md,
Design). Each bin says its edges and counts on hover (its ``title``); the chart is still offered as the
download.

Every name (the title holds the metric's, which a user's metric plug-in chooses) is HTML-escaped.
"""
from __future__ import annotations

import html

import pandas as pd

from muttlab.dashboard.charts import FAIL_COLOUR, PASS_COLOUR, ZERO_LINE, cell_margins

PLOT_HEIGHT_PX = 150
CSS = """<style>
.mutt-margins { font-size: 0.8rem; margin: 0.2rem 0 0.6rem 0; }
.mutt-margins .mutt-margins-title { font-size: 0.95rem; font-weight: 600; margin: 0 0 0.3rem 0; }
.mutt-margins .mutt-key { display: flex; flex-wrap: wrap; gap: 0.2rem 1rem; margin-bottom: 0.3rem; }
.mutt-margins .mutt-swatch { display: inline-block; width: 0.75rem; height: 0.75rem; margin-right: 0.3rem;
  vertical-align: middle; }
.mutt-margins .mutt-frame { display: flex; gap: 0.4rem; }
.mutt-margins .mutt-y { display: flex; flex-direction: column; justify-content: space-between; text-align: right;
  font-variant-numeric: tabular-nums; opacity: 0.75; height: """ + f"{PLOT_HEIGHT_PX}px" + """; }
.mutt-margins .mutt-area { flex: 1; min-width: 0; }
.mutt-margins .mutt-plot { position: relative; display: flex; align-items: stretch; gap: 1px;
  height: """ + f"{PLOT_HEIGHT_PX}px" + """; border-bottom: 1px solid #9ca3af; }
.mutt-margins .mutt-bin { flex: 1; display: flex; flex-direction: column; justify-content: flex-end; min-width: 0; }
.mutt-margins .mutt-bin:hover { outline: 1px solid #111827; }
.mutt-margins .mutt-passes { background: """ + PASS_COLOUR + """; opacity: 0.85; }
.mutt-margins .mutt-fails { background: """ + FAIL_COLOUR + """; opacity: 0.85; }
.mutt-margins .mutt-zero { position: absolute; top: 0; bottom: 0; width: 0;
  border-left: 2px dashed """ + ZERO_LINE + """; pointer-events: none; }
.mutt-margins .mutt-x { position: relative; height: 1.1rem; font-variant-numeric: tabular-nums; opacity: 0.75; }
.mutt-margins .mutt-x span { position: absolute; top: 0.1rem; transform: translateX(-50%); white-space: nowrap; }
.mutt-margins .mutt-x span.mutt-first { transform: none; }
.mutt-margins .mutt-x span.mutt-last { transform: translateX(-100%); }
.mutt-margins .mutt-axis { text-align: center; opacity: 0.75; }
</style>"""


def _number(value: float) -> str:
    return f"{value:.3g}"


def margin_bars_html(cell: pd.DataFrame, title: str) -> str:
    """One ``<div class="mutt-margins">``: the title, the key (fails and passes with their counts), the bins
    (each a column of its fails below its passes, as tall as their count against the tallest bin's), the axis
    from the lowest edge through 0 to the highest, and the axis title (saying how many margins lie beyond it)."""
    binned = cell_margins(cell)
    fails, passes, edges = binned.fails, binned.passes, binned.edges
    low = float(edges[0])
    tallest = int(max(1, (fails + passes).max()))
    span = float(edges[-1] - low)
    bins = []
    for i, (f, p) in enumerate(zip(fails.tolist(), passes.tolist())):
        hover = f"margin {_number(edges[i])} to {_number(edges[i + 1])}: {f} fail{'s' * (f != 1)}, " \
                f"{p} pass{'es' * (p != 1)}"
        bars = "".join(f'<div class="mutt-{kind}" style="height: {100.0 * n / tallest:.2f}%"></div>'
                       for kind, n in (("passes", p), ("fails", f)) if n)
        bins.append(f'<div class="mutt-bin" title="{hover}">{bars}</div>')
    zero = 100.0 * (0.0 - low) / span
    ticks = [("mutt-first", 0.0, low), ("", zero, 0.0), ("mutt-last", 100.0, float(edges[-1]))]
    if zero < 8.0 or zero > 92.0:  # 0 at an end: its label would run into that end's
        ticks = [t for t in ticks if t[1] == zero or abs(t[1] - zero) > 8.0]
    x = "".join(f'<span class="{css}" style="left: {left:.2f}%">{_number(value)}</span>'
                for css, left, value in ticks)
    n_fails, n_passes = binned.n_fails, binned.n_passes
    label = (f"Histogram of {len(cell)} margins from {_number(low)} to {_number(float(edges[-1]))}: "
             f"{n_fails} fails, {n_passes} passes")
    return (f'{CSS}<div class="mutt-margins"><p class="mutt-margins-title">{html.escape(title)}</p>'
            f'<div class="mutt-key"><span><span class="mutt-swatch mutt-fails"></span>fails ({n_fails})</span>'
            f'<span><span class="mutt-swatch mutt-passes"></span>passes ({n_passes})</span></div>'
            f'<div class="mutt-frame"><div class="mutt-y"><span>{tallest}</span><span>trials</span><span>0</span></div>'
            f'<div class="mutt-area"><div class="mutt-plot" role="img" aria-label="{html.escape(label)}">'
            f'{"".join(bins)}<div class="mutt-zero" style="left: {zero:.2f}%"></div></div>'
            f'<div class="mutt-x">{x}</div></div></div>'
            f'<div class="mutt-axis">{html.escape(binned.axis_title)}</div></div>')

