"""A histogram drawn as HTML boxes: the Drill-down's margins and the Human judgments page's score
distributions. No Streamlit here (testable alone).

A Vega-Lite chart on a page has the browser fetch and run Vega before it draws any of the page's elements:
0.4 to 0.9 s of a first visit (docs/dashboard.md, Design). Boxes of CSS draw with the page. Each bin is a
column of its series' counts stacked bottom-up, as tall as their sum against the tallest bin's, and says its
edges and counts on hover (its ``title``); the plot has an ``aria-label`` for screen readers. The Vega-Lite
chart stays the page's download.

Every text (a title or a series may hold a metric's name, which a user's metric plug-in chooses) is
HTML-escaped.
"""
from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from muttlab.dashboard.charts import ZERO_LINE
from muttlab.dashboard.figure_frame import frame_css, number

PLOT_HEIGHT_PX = 150
CSS = "<style>" + frame_css("mutt-hist", PLOT_HEIGHT_PX) + """
.mutt-hist .mutt-swatch { display: inline-block; width: 0.75rem; height: 0.75rem; margin-right: 0.3rem;
  vertical-align: middle; opacity: 0.85; }
.mutt-hist .mutt-plot { display: flex; align-items: stretch; gap: 1px; }
.mutt-hist .mutt-bin { flex: 1; display: flex; flex-direction: column-reverse; min-width: 0; }
.mutt-hist .mutt-bin:hover { outline: 1px solid #111827; }
.mutt-hist .mutt-bar { opacity: 0.85; }
.mutt-hist .mutt-zero { position: absolute; top: 0; bottom: 0; width: 0;
  border-left: 2px dashed """ + ZERO_LINE + """; pointer-events: none; }
.mutt-hist .mutt-x { position: relative; height: 1.1rem; font-variant-numeric: tabular-nums; opacity: 0.75; }
.mutt-hist .mutt-x span { position: absolute; top: 0.1rem; transform: translateX(-50%); white-space: nowrap; }
.mutt-hist .mutt-x span.mutt-first { transform: none; }
.mutt-hist .mutt-x span.mutt-last { transform: translateX(-100%); }
</style>"""


@dataclass(frozen=True)
class Series:
    """One colour of the bars: its counts per bin, and what one and several of what it counts are called."""

    one: str
    many: str
    colour: str
    counts: Sequence[int]

    def told(self, n: int) -> str:
        return f"{n} {self.one if n == 1 else self.many}"


def histogram_html(edges: Sequence[float], series: Sequence[Series], *, title: str, x_name: str, y_name: str,
                   axis_title: str, css_class: str = "", zero_line: bool = False, key: bool = True) -> str:
    """One ``<div class="mutt-hist">`` (plus ``css_class``): the title, the key (each series with its total,
    unless ``key`` is false), the bins over ``edges`` (equal widths), the axis from the lowest edge to the
    highest (through 0, dashed across the plot, with ``zero_line``), and the axis title. A bin's hover reads
    "<x_name> <from> to <to>: <count per series>"."""
    edges = np.asarray(edges, dtype=float)
    counts = np.array([np.asarray(s.counts, dtype=int) for s in series]).reshape(len(series), len(edges) - 1)
    tallest = int(max(1, counts.sum(axis=0).max()))
    low, high = float(edges[0]), float(edges[-1])
    span = high - low
    bins = []
    for i in range(len(edges) - 1):
        hover = html.escape(f"{x_name} {number(edges[i])} to {number(edges[i + 1])}: "
                            + ", ".join(s.told(int(counts[j, i])) for j, s in enumerate(series)))
        bars = "".join(f'<div class="mutt-bar" style="height: {100.0 * n / tallest:.2f}%; '
                       f'background: {s.colour}"></div>' for s, n in zip(series, counts[:, i].tolist()) if n)
        bins.append(f'<div class="mutt-bin" title="{hover}">{bars}</div>')
    ticks = [("mutt-first", 0.0, low), ("mutt-last", 100.0, high)]
    zero = ""
    if zero_line and low <= 0.0 <= high:
        at = 100.0 * (0.0 - low) / span
        zero = f'<div class="mutt-zero" style="left: {at:.2f}%"></div>'
        if 8.0 <= at <= 92.0:  # nearer an end, its label would run into that end's
            ticks.insert(1, ("", at, 0.0))
        else:
            ticks = [t for t in ticks if abs(t[1] - at) > 8.0] + [("mutt-first" if at < 50 else "mutt-last", at, 0.0)]
    x = "".join(f'<span class="{css}" style="left: {left:.2f}%">{number(value)}</span>'
                for css, left, value in sorted(ticks, key=lambda t: t[1]))
    totals = [int(c.sum()) for c in counts]
    label = html.escape(f"Histogram of {x_name} from {number(low)} to {number(high)}: "
                        + ", ".join(s.told(t) for s, t in zip(series, totals)))
    keys = "".join(f'<span><span class="mutt-swatch" style="background: {s.colour}"></span>'
                   f'{html.escape(s.many)} ({t})</span>' for s, t in zip(series, totals))
    return (f'{CSS}<div class="{" ".join(["mutt-hist", css_class]).strip()}">'
            f'<p class="mutt-hist-title">{html.escape(title)}</p>'
            + (f'<div class="mutt-key">{keys}</div>' if key else "")
            + f'<div class="mutt-frame"><div class="mutt-y"><span>{tallest}</span><span>{html.escape(y_name)}</span>'
            f'<span>0</span></div><div class="mutt-area"><div class="mutt-plot" role="img" aria-label="{label}">'
            f'{"".join(bins)}{zero}</div><div class="mutt-x">{x}</div></div></div>'
            f'<div class="mutt-axis">{html.escape(axis_title)}</div></div>')
