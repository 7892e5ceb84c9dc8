"""Severity curves drawn as HTML and inline SVG: what the Severity page shows, the Vega-Lite chart
(:func:`muttlab.dashboard.charts.severity_curves`) being its download. No Streamlit here (testable alone).

The same two panels as the chart: the pass rate (0–100 %, with its 95% Wilson interval as whiskers) above the
mean score drop, against the strength, one line per metric in the Okabe-Ito palette, dashed where the curve is
flagged as not monotone. A chart on the page had the browser fetch and run Vega before it drew anything of the
page (docs/dashboard.md, Design). Everything is a box of CSS placed in % of the plot (Streamlit's HTML element
keeps no SVG), so the curves fit any width while text keeps its size. Each point says its numbers on hover;
each plot has an ``aria-label`` listing them for screen readers.

Every text (a metric's name is a plug-in's choice) is HTML-escaped.
"""
from __future__ import annotations

import html
import math

import pandas as pd

from muttlab.dashboard.charts import OKABE_ITO, ZERO_LINE
from muttlab.dashboard.figure_frame import frame_css, number

PLOT_HEIGHT_PX = 170
LINE_PX = 2.5
X_PADDING = 5.0  # % of the plot's width left free at each end, so that the first and last points show whole
CSS = "<style>" + frame_css("mutt-curves", PLOT_HEIGHT_PX) + """
.mutt-curves .mutt-stroke { display: inline-block; width: 1.4rem; height: 0; margin-right: 0.3rem;
  vertical-align: middle; border-top-width: 3px; }
.mutt-curves .mutt-y { min-width: 2.2rem; }
.mutt-curves .mutt-plot { border-left: 1px solid #9ca3af; }
.mutt-curves .mutt-line { position: absolute; inset: 0; pointer-events: none; }
.mutt-curves .mutt-whisker { position: absolute; width: 2px; transform: translateX(-50%); opacity: 0.6; }
.mutt-curves .mutt-zero { position: absolute; left: 0; right: 0; height: 0;
  border-top: 1px dashed """ + ZERO_LINE + """; }
.mutt-curves .mutt-pt { position: absolute; width: 9px; height: 9px; border-radius: 50%;
  transform: translate(-50%, -50%); border: 1px solid #ffffff; }
.mutt-curves .mutt-pt:hover { outline: 2px solid #111827; }
.mutt-curves .mutt-x { position: relative; height: 1.1rem; font-variant-numeric: tabular-nums; opacity: 0.75; }
.mutt-curves .mutt-x span { position: absolute; top: 0.1rem; transform: translateX(-50%); white-space: nowrap; }
</style>"""


def _x(strength: float, low: float, high: float) -> float:
    if high == low:
        return 50.0
    return X_PADDING + (100.0 - 2 * X_PADDING) * (strength - low) / (high - low)


def _y(value: float, low: float, high: float) -> float:
    """Distance from the top, in % of the plot's height."""
    return 100.0 * (high - value) / (high - low)


def _line(points: list[tuple[float, float]], colour: str, dashed: bool) -> str:
    """A line through ``points`` (x, y in % of the plot) as a box the size of the plot clipped to a band
    LINE_PX tall around it: percentages keep it on its points at any width, which a rotated box would not."""
    half = LINE_PX / 2
    upper = [f"{x:.3f}% calc({y:.3f}% - {half}px)" for x, y in points]
    lower = [f"{x:.3f}% calc({y:.3f}% + {half}px)" for x, y in reversed(points)]
    paint = (f"repeating-linear-gradient(to right, {colour} 0 6px, transparent 6px 10px)" if dashed else colour)
    return f'<div class="mutt-line" style="background: {paint}; clip-path: polygon({", ".join(upper + lower)})"></div>'


def _panel(title: str, rows: list[dict], column: str, series: list[tuple[str, str, bool]], domain: tuple[float, float],
           strengths: list[float], whiskers: bool, describe) -> str:
    low, high = domain
    s_low, s_high = min(strengths), max(strengths)
    marks, points, spoken = [], [], []
    if low < 0.0 < high:
        marks.append(f'<div class="mutt-zero" style="top: {_y(0.0, low, high):.3f}%"></div>')
    for name, colour, flagged in series:
        mine = [r for r in rows if r["series"] == name and not math.isnan(r[column])]
        for r in mine if whiskers else ():
            if not math.isnan(r["low"]) and not math.isnan(r["high"]):
                top, bottom = _y(r["high"], low, high), _y(r["low"], low, high)
                marks.append(f'<div class="mutt-whisker" style="left: {_x(r["strength"], s_low, s_high):.3f}%; '
                             f'top: {top:.3f}%; height: {bottom - top:.3f}%; background: {colour}"></div>')
        if len(mine) > 1:
            marks.append(_line([(_x(r["strength"], s_low, s_high), _y(r[column], low, high)) for r in mine], colour,
                               flagged))
        points += [f'<span class="mutt-pt" style="left: {_x(r["strength"], s_low, s_high):.2f}%; '
                   f'top: {_y(r[column], low, high):.2f}%; background: {colour}" '
                   f'title="{html.escape(describe(r))}"></span>' for r in mine]
        spoken.append(f"{name}: " + ", ".join(f"{number(r[column])} at {number(r['strength'])}" for r in mine))
    x = "".join(f'<span style="left: {_x(s, s_low, s_high):.2f}%">{number(s)}</span>' for s in strengths)
    label = html.escape(f"{title} against strength. " + "; ".join(spoken))
    return (f'<p class="mutt-part-title">{html.escape(title)}</p><div class="mutt-frame">'
            f'<div class="mutt-y"><span>{number(high)}</span><span>{number((low + high) / 2)}</span>'
            f'<span>{number(low)}</span></div><div class="mutt-area">'
            f'<div class="mutt-plot" role="img" aria-label="{label}">{"".join(marks)}{"".join(points)}</div>'
            f'<div class="mutt-x">{x}</div></div></div>')


def severity_curves_html(curve: pd.DataFrame, corruption_label: str, strength_unit: str = "") -> str:
    """One ``<div class="mutt-curves">`` of :func:`muttlab.severity.severity_curve`'s frame: the title, the key
    (each metric's line, "(not monotone)" after a flagged one's name), the pass-rate panel and the mean-drop
    panel, and the strength axis's title."""
    rows, series = [], []
    interval = "pass_ci_low" in curve.columns
    for i, (metric, part) in enumerate(curve.groupby("metric", sort=False)):
        flagged = part["monotone"].iloc[0] != "yes"
        name = f"{metric} (not monotone)" if flagged else str(metric)
        series.append((name, OKABE_ITO[i % len(OKABE_ITO)], flagged))
        for r in part.sort_values("strength").itertuples(index=False):
            rows.append({"series": name, "strength": float(r.strength), "n": int(r.n),
                         "pass_rate": float(r.pass_rate), "mean_drop": float(r.mean_drop),
                         "low": float(r.pass_ci_low) if interval else math.nan,
                         "high": float(r.pass_ci_high) if interval else math.nan})
    strengths = sorted({r["strength"] for r in rows})
    drops = [r["mean_drop"] for r in rows if not math.isnan(r["mean_drop"])] or [0.0]
    drop_domain = (min(0.0, min(drops)), max(0.0, max(drops)))
    if drop_domain[0] == drop_domain[1]:
        drop_domain = (drop_domain[0] - 1.0, drop_domain[1] + 1.0)

    def rate(r: dict) -> str:
        ci = "" if math.isnan(r["low"]) else f" (95% CI {r['low']:.1f}–{r['high']:.1f} %)"
        return f"{r['series']}, strength {number(r['strength'])}: pass rate {r['pass_rate']:.1f} %{ci}, n = {r['n']}"

    def drop(r: dict) -> str:
        return f"{r['series']}, strength {number(r['strength'])}: mean score drop {r['mean_drop']:.4g}, n = {r['n']}"

    keys = "".join(f'<span><span class="mutt-stroke" style="border-top: 3px {"dashed" if flagged else "solid"} '
                   f'{colour}"></span>{html.escape(name)}</span>' for name, colour, flagged in series)
    title = f"{corruption_label}: how the metrics react as the corruption gets stronger"
    axis = f"strength{f' ({strength_unit})' if strength_unit else ''}"
    return (f'{CSS}<div class="mutt-curves"><p class="mutt-curves-title">{html.escape(title)}</p>'
            f'<div class="mutt-key">{keys}</div>'
            + _panel("pass rate (%)", rows, "pass_rate", series, (0.0, 100.0), strengths, interval, rate)
            + _panel("mean score drop (original − corruption, better-signed)", rows, "mean_drop", series,
                     drop_domain, strengths, False, drop)
            + f'<div class="mutt-axis">{html.escape(axis)}</div></div>')
