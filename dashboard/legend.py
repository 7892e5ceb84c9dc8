"""What the accuracy grid's colours and marks mean, as one HTML block drawn under the grid. No Streamlit here.

The cells keep the heatmap's red-yellow-blue scale (the downloadable chart uses it too), whose ends a
red-green colour-blind reader tells apart; the legend names both ends and the middle in words and every cell
also prints its number, so the colour is never the only carrier of the value.
"""
from __future__ import annotations

import html
from typing import Callable, Sequence

from muttlab.dashboard.glossary import term

SCALE_STOPS = 11
EMPTY_COLOUR = "#f3f4f6"


def grid_legend_html(colours: Callable[[Sequence[float]], list[tuple[str, str]]]) -> str:
    """The legend block; ``colours`` maps accuracies (%) to (background, text) as the cells are coloured."""
    stops = ", ".join(bg for bg, _ in colours([100.0 * i / (SCALE_STOPS - 1) for i in range(SCALE_STOPS)]))
    esc = html.escape
    return ('<div class="mutt-legend">'
            '<span class="mutt-legend-title">Colour and number: accuracy, the % of trials the metric gets right'
            '</span>'
            '<span class="mutt-scale">0% (red)<span class="mutt-bar" '
            f'style="background: linear-gradient(to right, {stops})"></span>100% (blue)</span>'
            '<span>50%: yellow</span>'
            f'<span><span class="mutt-swatch" style="background:{EMPTY_COLOUR}"></span>grey: not scored</span>'
            f'<span title="{esc(term("Wilson interval"))}">hover a cell: passed/n, 95% Wilson interval, ties'
            '</span><span>click a cell: its trials</span></div>')
