"""The dashboard's figures, drawn by plotly, built from the engine's result frames. No Streamlit here, so every
figure is testable alone.

Each chart has one builder here: a plain function that takes an already-computed frame (a runner table, an
accuracy table, a correlation matrix...) and returns a plotly ``go.Figure``; nothing is scored or aggregated
beyond reshaping and binning. A page draws the figure with ``st.plotly_chart`` (:func:`muttlab.dashboard.ui.chart`),
its download and the offline reports write the same figure as HTML with plotly.js inlined (:func:`offline_html`,
:func:`embed_html`), which opens without the internet. Hover, zoom and pan, legend toggle (click) and isolate
(double-click), and "Download plot as a png" in the toolbar come from plotly.

Plotly reads a subset of HTML in every text it draws (``<a href>``, ``<br>``, ``<b>``..., entities), ``%{...}``
templates in titles and legend entries, and ``$...$`` as TeX. Every text a figure carries — a metric's name (a
user's plug-in chooses it), a corruption label (an uploaded suite's), a trial id, a title, a legend entry, an axis
title, a hover — goes through :func:`text` once, here, and nowhere else. Numbers in hovers and cell labels are
written by :mod:`muttlab.dashboard.number_format` and handed over as text, never formatted again in the browser,
so a hover reads as the page's tables and tooltips do.
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio

from muttlab.dashboard.number_format import (accuracy_text, cell_lines, change_text, correlation_text, count_text,
                                             fmt_score, interval_text, percent, relative_change, whole_percent)

Figure = go.Figure

# ColorBrewer's RdYlBu (11 classes), red (fails) through yellow to blue (passes), fixed to 0..100 % so colours
# compare across runs; it keeps its ends apart for red-green colour-blind readers, which RdYlGn does not.
ACCURACY_SCALE = ["#a50026", "#d73027", "#f46d43", "#fdae61", "#fee090", "#ffffbf", "#e0f3f8", "#abd9e9",
                  "#74add1", "#4575b4", "#313695"]
CORRELATION_SCALE = ["#67001f", "#b2182b", "#d6604d", "#f4a582", "#fddbc7", "#f7f7f7", "#d1e5f0", "#92c5de",
                     "#4393c3", "#2166ac", "#053061"]  # ColorBrewer's RdBu, on -1..1
# Okabe & Ito's palette, told apart by colour-blind readers: every chart's lines and bars take their colours from
# it, a pass is its blue and a failure its vermillion, as on the grid.
OKABE_ITO = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442"]
PASS_COLOUR, FAIL_COLOUR = OKABE_ITO[0], OKABE_ITO[3]
GOLD_COLOUR, METRIC_COLOUR = OKABE_ITO[1], OKABE_ITO[0]
FONT = "Inter, 'Source Sans Pro', sans-serif"
DARK_INK, LIGHT_INK = "#111827", "#ffffff"
ZERO_LINE = "#374151"
GRID_LINE = "#e5e7eb"
STACK_ABOVE_COLUMNS = 18  # cells per row of the accuracy grid beyond which its panels are stacked
TITLE_PX, LEGEND_PX, PANEL_TITLE_PX = 36, 30, 34  # the heights of a figure's title, legend and panel titles
# plotly.js's options for every figure, on the page and in a download: no logo linking to plotly's site; the
# toolbar's PNG at twice the drawn size.
CONFIG = {"displaylogo": False, "responsive": True,
          "toImageButtonOptions": {"format": "png", "scale": 2, "filename": "muttlab-chart"}}

# What plotly reads as markup, an entity, a template or TeX, as entities it shows as the characters: "&" first.
_PLOTLY_TEXT = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", "%": "&#37;", "$": "&#36;"})


def text(value: object) -> str:
    """``value`` as text plotly draws as these characters: no tag (``<a href>``, ``<br>``...), entity,
    ``%{...}`` template or ``$...$`` TeX of it is read, each shows as written. The one escape of every text a
    figure holds."""
    return str(value).translate(_PLOTLY_TEXT)


def _lines(lines: Sequence[str]) -> str:
    """A hover of several lines, each escaped (:func:`text`), joined by plotly's line break."""
    return "<br>".join(text(line) for line in lines)


def _interpolated(scale: Sequence[str], points: Sequence[float]) -> np.ndarray:
    """RGB (0-255, rounded) at ``points`` (0..1, clamped; a missing one at 0) of a scale of equally spaced hex
    stops, interpolated in RGB as plotly interpolates a colour scale."""
    stops = np.array([[int(c[i:i + 2], 16) for i in (1, 3, 5)] for c in scale], dtype=float)
    positions = np.linspace(0.0, 1.0, len(scale))
    at = np.clip(np.nan_to_num(np.asarray(points, dtype=float).reshape(-1), nan=0.0), 0.0, 1.0)
    return np.round(np.column_stack([np.interp(at, positions, stops[:, k]) for k in range(3)]))


def colours_with_ink(scale: Sequence[str], points: Sequence[float]) -> list[tuple[str, str]]:
    """Per point: the scale's colour there, as ``rgb(r, g, b)``, and a text colour readable on it."""
    return [(f"rgb({r:.0f}, {g:.0f}, {b:.0f})",
             DARK_INK if (0.299 * r + 0.587 * g + 0.114 * b) / 255.0 > 0.55 else LIGHT_INK)
            for r, g, b in _interpolated(scale, points)]


def _colourscale(colours: Sequence[str]) -> list[list]:
    """Plotly's colour scale of ``colours`` equally spaced from 0 to 1."""
    return [[i / (len(colours) - 1), c] for i, c in enumerate(colours)]


def _unique(names: Sequence[object]) -> list[str]:
    """``names`` as text, a repeated one numbered, so that each can key a category of its own."""
    out: list[str] = []
    for name in map(str, names):
        label, n = name, 1
        while label in out:
            n += 1
            label = f"{name} ({n})"
        out.append(label)
    return out


def _colour(i: int) -> str:
    return OKABE_ITO[i % len(OKABE_ITO)]


def _merged(into: dict, update: Mapping) -> dict:
    """``into`` with ``update`` merged in, nested dictionaries key by key (as plotly's ``update_layout`` merges)."""
    for key, value in update.items():
        if isinstance(value, Mapping) and isinstance(into.get(key), dict):
            _merged(into[key], value)
        else:
            into[key] = dict(value) if isinstance(value, Mapping) else value
    return into


def _finish(figure: Figure, title: str | None, height: int, legend: bool = True) -> Figure:
    """The figure, just built here, with its title (escaped), height and the house style: no template (plotly's
    default one adds 7 kB to every figure), the title and then the legend at the top of the figure, above any
    panel's own title, hovers left-aligned.

    The style is merged into the layout's plain data and the layout replaced once: plotly's ``update_layout`` and
    ``update_xaxes`` diff every property against the figure's: 10 ms of the Playground's 15 ms heatmap, which a
    page run pays for each visitor (docs/dashboard.md, "Building a figure")."""
    top = (TITLE_PX if title else 0) + (LEGEND_PX if legend else 0)
    layout = _merged(figure.layout.to_plotly_json(), {
        "template": "none", "height": height, "font": {"family": FONT, "size": 12, "color": DARK_INK},
        "paper_bgcolor": "white", "plot_bgcolor": "white",
        "margin": {"l": 60, "r": 20, "t": top + PANEL_TITLE_PX, "b": 60}, "showlegend": legend,
        "hoverlabel": {"align": "left"},
        "legend": {"orientation": "h", "x": 0, "xanchor": "left", "xref": "paper", "yref": "container",
                   "y": 1.0 - ((TITLE_PX if title else 0) + 6) / height, "yanchor": "top", "traceorder": "normal"}})
    if title:
        _merged(layout, {"title": {"text": text(title), "x": 0, "xanchor": "left", "xref": "paper",
                                   "yref": "container", "y": 1.0 - 10 / height, "yanchor": "top",
                                   "font": {"size": 15}}})
    for annotation in layout.get("annotations", ()):  # the panels' titles
        _merged(annotation, {"font": {"size": 13}})
    axis_style = {"gridcolor": GRID_LINE, "zerolinecolor": GRID_LINE, "automargin": True}
    axes = [key for key in layout if re.fullmatch(r"[xy]axis\d*", key)]
    for key in dict.fromkeys(["xaxis", "yaxis", *axes]):  # in order, whatever the process's string hashing
        _merged(layout.setdefault(key, {}), axis_style)
    figure.layout = layout
    return figure


def _subplots(rows: int = 1, cols: int = 1, titles: Sequence[str] = (), **options) -> Figure:
    """An empty figure of ``rows`` x ``cols`` panels, each titled (escaped)."""
    # Imported when a figure has panels: 0.3 s that the landing page, which imports this module for the grid's
    # colours only, does not pay.
    from plotly.subplots import make_subplots

    return make_subplots(rows=rows, cols=cols, subplot_titles=[text(t) for t in titles] or None, **options)


def _zero_line(figure: Figure, axis: str, **where) -> None:
    """A dashed line at 0 across a panel: the decision boundary of a margin."""
    add = figure.add_vline if axis == "x" else figure.add_hline
    add(0.0, line={"dash": "dash", "color": ZERO_LINE, "width": 1}, **where)


# ----------------------------------------------------------------------------------------------- files

def warm() -> None:
    """Build and serialise one small figure: a process's first figure pays for importing plotly's figure
    classes and their validators (0.4 s), which a server does before its first visitor asks."""
    pio.to_json(correlation_heatmap(pd.DataFrame([[1.0, 0.5], [0.5, 1.0]], index=["a", "b"], columns=["a", "b"])),
                validate=False)
    _subplots(2, 1)


def embed_html(figures: Sequence[Figure], start: int = 0) -> str:
    """HTML that draws ``figures`` with no internet: plotly.js inlined once, then one element per figure, each
    with plotly's toolbar (PNG, zoom, pan) and hovers. ``start`` numbers the figures after others of the same
    document (plotly.js is inlined only with the document's first)."""
    return "".join(pio.to_html(figure, include_plotlyjs=start + i == 0, full_html=False, config=CONFIG,
                               div_id=f"mutt-chart-{start + i}", default_width="100%")
                   for i, figure in enumerate(figures))


def offline_html(figure: Figure, title: str = "MUTT Lab chart") -> str:
    """The figure as a standalone page that opens without the internet (a chart download)."""
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title></head>"
            f"<body style='font-family:sans-serif'>{embed_html([figure])}</body></html>")


# ----------------------------------------------------------------------------------------------- figures

def accuracy_heatmap(accuracy: pd.DataFrame, labels: Mapping[str, str] | None = None,
                     metric_order: Sequence[str] | None = None,
                     corruption_order: Sequence[str] | None = None) -> Figure:
    """Accuracy grid, metric x corruption, one panel per reference count (the Run page's download and report).

    Args:
      accuracy: ``Results.accuracy()``: metric, corruption, refs, n, passed, accuracy, ci_low, ci_high,
        tie_rate (percent).
      labels: display names of the corruptions (defaults to their ids).
    Returns:
      One heatmap per reference count, side by side while they stay readable, else one above the other; each
      cell its accuracy as colour (0-100 %) and whole percentage, and on hover what the grid's tooltip says
      (:func:`muttlab.dashboard.number_format.cell_lines`).
    """
    labels = dict(labels or {})
    metrics = [str(m) for m in (metric_order or dict.fromkeys(accuracy["metric"]))]
    corruptions = list(corruption_order or dict.fromkeys(accuracy["corruption"]))
    x_labels = _unique([labels.get(c, c) for c in corruptions])
    ref_counts = sorted(int(k) for k in accuracy["refs"].unique())
    by_cell = {(str(r.metric), r.corruption, int(r.refs)): r for r in accuracy.itertuples(index=False)}
    stacked = len(corruptions) * len(ref_counts) > STACK_ABOVE_COLUMNS
    rows, cols = (len(ref_counts), 1) if stacked else (1, len(ref_counts))
    figure = _subplots(rows, cols, [f"{k} references" for k in ref_counts], shared_yaxes=not stacked,
                       horizontal_spacing=0.03, vertical_spacing=min(0.3, 0.6 / max(1, rows)))
    y = [text(m) for m in metrics]
    for i, k in enumerate(ref_counts):
        cells = [[by_cell.get((m, c, k)) for c in corruptions] for m in metrics]
        drawn = [[r if r is not None and r.accuracy == r.accuracy else None for r in row] for row in cells]
        figure.add_trace(go.Heatmap(
            z=[[None if r is None else float(r.accuracy) for r in row] for row in drawn],
            x=[text(label) for label in x_labels], y=y, zmin=0.0, zmax=100.0,
            colorscale=_colourscale(ACCURACY_SCALE), xgap=2, ygap=2, showscale=i == 0,
            colorbar={"title": {"text": text("accuracy %")}, "len": 0.8},
            text=[["" if r is None else whole_percent(r.accuracy) for r in row] for row in drawn],
            texttemplate="%{text}", hoverongaps=False, hoverinfo="text",
            hovertext=[["" if r is None else _lines(cell_lines(r, m, label, k)) for r, label in zip(row, x_labels)]
                       for row, m in zip(drawn, metrics)],
            name=text(f"{k} references")), row=i + 1 if stacked else 1, col=1 if stacked else i + 1)
    figure.update_yaxes(autorange="reversed", showgrid=False)
    figure.update_xaxes(tickangle=-40, side="bottom", showgrid=False)
    panel = 26 * len(metrics) + 140
    return _finish(figure, None, panel * rows + 40, legend=False)


def margin_bins(margins: np.ndarray, low: float, high: float, bins: int = 40) -> tuple[np.ndarray, np.ndarray]:
    """Counts of ``margins`` clipped into ``bins`` bins of equal width from ``low`` past ``high``, and the edges."""
    width = (high - low) / bins
    edges = low + width * np.arange(bins + 2)
    counts, _ = np.histogram(np.clip(margins[np.isfinite(margins)], low, high), bins=edges)
    return counts, edges


def margin_axis(values: np.ndarray) -> tuple[float, float, int]:
    """An axis for margins: 10 interquartile ranges beyond the quartiles at most, always showing 0 (a relative
    change over a near-zero original can be millions of times the others); and how many finite values lie
    beyond it."""
    finite = values[np.isfinite(values)]
    if finite.size:
        q1, q3 = np.quantile(finite, [0.25, 0.75])
        spread = 10.0 * max(float(q3 - q1), 1e-6)
        low, high = max(float(finite.min()), q1 - spread), min(float(finite.max()), q3 + spread)
    else:
        low = high = 0.0
    low, high = min(low, 0.0), max(high, 0.0)
    if high - low < 1e-12:
        low, high = low - 1.0, high + 1.0
    return low, high, int(((finite < low) | (finite > high)).sum())


@dataclass(frozen=True)
class CellMargins:
    """A cell's margins binned for its histogram: fails and passes per bin of :func:`margin_bins` on
    :func:`margin_axis`, the bins' edges, how many margins lie beyond the axis (counted in the edge bins), and the
    trials that fail and pass (those with no finite margin included)."""

    fails: np.ndarray
    passes: np.ndarray
    edges: np.ndarray
    outside: int
    n_fails: int
    n_passes: int

    @property
    def axis_title(self) -> str:
        beyond = f"; {self.outside} beyond the axis are counted in the edge bins" if self.outside else ""
        return "margin (positive = the metric did the right thing)" + beyond


def cell_margins(cell: pd.DataFrame) -> CellMargins:
    """:class:`CellMargins` of a cell's trials (``margin``, ``passed``)."""
    margins = cell["margin"].to_numpy(dtype=float)
    passed = cell["passed"].to_numpy(dtype=bool)
    low, high, outside = margin_axis(margins)
    fails, edges = margin_bins(margins[~passed], low, high)
    passes, _ = margin_bins(margins[passed], low, high)
    return CellMargins(fails, passes, edges, outside, int((~passed).sum()), int(passed.sum()))


def _bins(figure: Figure, edges: np.ndarray, series: Sequence[tuple[str, np.ndarray, str]], x_name: str,
          noun: tuple[str, str], **where) -> None:
    """Bars of equal-width bins over ``edges``, one trace per series (its legend entry, counts per bin, colour),
    stacked; each bar's hover names the bin and every series' count in it."""
    edges = np.asarray(edges, dtype=float)
    centres, width = (edges[:-1] + edges[1:]) / 2.0, float(edges[1] - edges[0])
    hovers = [_lines([f"{x_name} {fmt_score(edges[i])} to {fmt_score(edges[i + 1])}: "
                      + ", ".join(count_text(counts[i], *noun) if len(series) == 1 else
                                  f"{int(counts[i])} {name.split(' (')[0]}" for name, counts, _ in series)])
              for i in range(len(centres))]
    for name, counts, colour in series:
        figure.add_trace(go.Bar(x=centres, y=np.asarray(counts, dtype=int), width=width, name=text(name),
                                marker={"color": colour, "line": {"width": 1, "color": "white"}}, opacity=0.85,
                                hovertext=hovers, hoverinfo="text"), **where)


def margin_histogram(cell: pd.DataFrame, title: str | None = None) -> Figure:
    """Distribution of one cell's margins, fails and passes stacked in their colours; 0, the decision boundary,
    dashed (the Drill-down page and its report).

    A relative change over a near-zero original score (the Difference rule) can be millions of times the
    other margins, so the axis stops at 10 interquartile ranges beyond the quartiles (always showing 0);
    margins beyond are drawn in the edge bins and counted in the axis title.
    """
    binned = cell_margins(cell)
    figure = go.Figure()
    _bins(figure, binned.edges, [(f"fails ({binned.n_fails})", binned.fails, FAIL_COLOUR),
                                 (f"passes ({binned.n_passes})", binned.passes, PASS_COLOUR)],
          "margin", ("trial", "trials"))
    _zero_line(figure, "x")
    figure.update_layout(barmode="stack", bargap=0.0)
    figure.update_xaxes(title={"text": text(binned.axis_title)},
                        range=[float(binned.edges[0]), float(binned.edges[-1])])
    figure.update_yaxes(title={"text": text("trials")}, rangemode="tozero")
    return _finish(figure, title, 320)


def slice_histogram(properties: pd.DataFrame, prop: str, axis_title: str, title: str | None = None) -> Figure:
    """How a cell's judged trials spread over one property of :func:`muttlab.api.slice_properties` (a whole
    number or a label), fails and passes stacked in their colours; each bar's hover gives its counts and the
    accuracy in it (the Drill-down page's slices). Up to 30 values a bar each, else 10 equal-width bins."""
    judged = properties[~properties["unsupported"].to_numpy(dtype=bool)].dropna(subset=[prop])
    passed = judged["passed"].to_numpy(dtype=bool)
    values = judged[prop]
    if values.dtype == object or values.nunique() <= 30:
        keys = sorted(values.unique(), key=lambda v: (isinstance(v, str), v))
        names = [str(int(k)) if not isinstance(k, str) else k for k in keys]
        fails = np.array([((values == k).to_numpy() & ~passed).sum() for k in keys], dtype=int)
        passes = np.array([((values == k).to_numpy() & passed).sum() for k in keys], dtype=int)
    else:
        edges = np.linspace(float(values.min()), float(values.max()), 11)
        fails, _ = np.histogram(values[~passed], edges)
        passes, _ = np.histogram(values[passed], edges)
        names = [f"{edges[i]:.0f}–{edges[i + 1]:.0f}" for i in range(10)]
    hovers = [_lines([f"{axis_title} {name}: {count_text(f + p, 'trial', 'trials')}",
                      f"{int(f)} fail, {int(p)} pass, accuracy {accuracy_text(int(p), int(f + p))}"])
              for name, f, p in zip(names, fails, passes)]
    figure = go.Figure()
    for label, counts, colour in (("fails", fails, FAIL_COLOUR), ("passes", passes, PASS_COLOUR)):
        figure.add_trace(go.Bar(x=[text(n) for n in names], y=counts, name=text(f"{label} ({int(counts.sum())})"),
                                marker={"color": colour}, opacity=0.85, hovertext=hovers, hoverinfo="text"))
    figure.update_layout(barmode="stack", bargap=0.05)
    figure.update_xaxes(title={"text": text(axis_title)}, type="category")
    figure.update_yaxes(title={"text": text("trials")}, rangemode="tozero")
    return _finish(figure, title, 300)


def score_histograms(histograms: pd.DataFrame, metric: str, gold_label: str, metric_label: str,
                     title: str | None = None) -> Figure:
    """Two histograms, one above the other: human gold scores and a metric's scores of the same sentences, from
    the bins of :meth:`muttlab.human.sick.SickStudy.histograms` (variables ``gold`` and ``metric``: left, right,
    count), so that the shipped counts and a live study draw alike."""
    figure = _subplots(2, 1, [gold_label, metric_label], vertical_spacing=0.2)
    for row, (variable, label, axis, colour) in enumerate((("gold", gold_label, "relatedness", GOLD_COLOUR),
                                                            (metric, metric_label, f"{metric} score", METRIC_COLOUR))):
        bins = histograms[histograms["variable"] == variable].sort_values("left")
        edges = np.append(bins["left"].to_numpy(float), bins["right"].to_numpy(float)[-1:])
        _bins(figure, edges, [(label, bins["count"].to_numpy(int), colour)], axis, ("sentence", "sentences"),
              row=row + 1, col=1)
        figure.update_xaxes(title={"text": text(axis)}, row=row + 1, col=1)
        figure.update_yaxes(title={"text": text("sentences")}, rangemode="tozero", row=row + 1, col=1)
    figure.update_layout(bargap=0.02)
    return _finish(figure, title, 520, legend=False)


def _matrix(figure: Figure, z, x: Sequence[str], y: Sequence[str], cell_text, hovers, colours: Sequence[str],
            domain: tuple[float, float], colourbar: str | None, **where) -> None:
    """A heatmap panel: ``z`` rows of ``y`` by columns of ``x`` (names, escaped here), each cell printed with
    ``cell_text`` and hovering ``hovers`` (escaped lines), colours on ``domain``; a colour bar when titled."""
    figure.add_trace(go.Heatmap(
        z=z, x=[text(v) for v in x], y=[text(v) for v in y], zmin=domain[0], zmax=domain[1],
        colorscale=_colourscale(colours), xgap=2, ygap=2, showscale=colourbar is not None,
        colorbar={"title": {"text": text(colourbar or "")}, "len": 0.9}, text=cell_text, texttemplate="%{text}",
        textfont={"size": 13}, hoverinfo="text", hoverongaps=False, hovertext=hovers), **where)


def correlation_heatmap(matrix: pd.DataFrame, method: str = "", title: str | None = None) -> Figure:
    """A square correlation matrix (index = columns = score names) as an annotated heatmap on [-1, 1]: each cell
    its coefficient, on hover its row, column and method."""
    columns, index = _unique(matrix.columns), _unique(matrix.index)
    values = matrix.to_numpy(dtype=float)
    name = str(method or "r")
    figure = go.Figure()
    _matrix(figure, [[None if v != v else float(v) for v in row] for row in values], columns, index,
            [[correlation_text(v) for v in row] for row in values],
            [[_lines([f"{r} × {c}: {name} = {correlation_text(v)}"]) for c, v in zip(columns, row)]
             for r, row in zip(index, values)], CORRELATION_SCALE, (-1.0, 1.0), name)
    figure.update_yaxes(autorange="reversed", showgrid=False)
    figure.update_xaxes(tickangle=-30, showgrid=False)
    return _finish(figure, title, 80 + 60 * len(index) + 80, legend=False)


def _series_lines(figure: Figure, rows: pd.DataFrame, x: str, x_name: str, series: Sequence[str], value_name: str,
                  band: bool = False) -> None:
    """One line with points per series of ``rows`` (columns series, x, value; low and high for a shaded
    interval), each point's hover its series, x and value."""
    for i, name in enumerate(series):
        part = rows[rows["series"] == name]
        colour = _colour(i)
        if band:  # the interval first, under its line: the lower edge, then the upper filled down to it
            figure.add_trace(go.Scatter(x=part[x], y=part["low"], mode="lines", line={"width": 0},
                                        legendgroup=text(name), showlegend=False, hoverinfo="skip"))
            figure.add_trace(go.Scatter(x=part[x], y=part["high"], mode="lines", line={"width": 0},
                                        fill="tonexty", fillcolor=_transparent(colour), legendgroup=text(name),
                                        showlegend=False, hoverinfo="skip"))
        hovers = [_lines([f"{name}, {x_name} {fmt_score(a) if not float(a).is_integer() else int(a)}: "
                          f"{value_name} {fmt_score(v)}"])
                  for a, v in zip(part[x], part["value"])]
        figure.add_trace(go.Scatter(x=part[x], y=part["value"], mode="lines+markers", name=text(name),
                                    legendgroup=text(name), line={"color": colour}, marker={"color": colour},
                                    hovertext=hovers, hoverinfo="text"))


def _transparent(colour: str, alpha: float = 0.15) -> str:
    r, g, b = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r}, {g}, {b}, {alpha})"


def loss_curve(history: pd.DataFrame, title: str | None = None) -> Figure:
    """Training curves: one line per measured column of ``history`` (train loss, dev Pearson...), and per
    seed when the history holds several runs. Identifier columns (``seed``, ``run``) are never drawn."""
    ids = [c for c in ("seed", "run") if c in history.columns]
    measures = [c for c in history.columns if c != "epoch" and c not in ids
                and pd.api.types.is_numeric_dtype(history[c])]
    groups = history.groupby(ids, sort=True) if ids else [((), history)]
    rows, series = [], []
    for key, part in groups:
        key = key if isinstance(key, tuple) else (key,)
        suffix = "" if not ids else " (" + ", ".join(f"{i} {k}" for i, k in zip(ids, key)) + ")"
        for column in measures:
            series.append(str(column) + suffix)
            rows += [{"x": e, "value": float(v), "series": series[-1]} for e, v in zip(part["epoch"], part[column])]
    figure = go.Figure()
    _series_lines(figure, pd.DataFrame(rows, columns=["x", "value", "series"]), "x", "epoch", series, "value")
    figure.update_xaxes(title={"text": text("epoch")}, dtick=1, tickformat="d")
    return _finish(figure, title, 320)


def sentence_scores(scores: pd.DataFrame, candidate_names: Sequence[str], title: str | None = None) -> Figure:
    """Playground: one group of bars per metric, one bar per candidate (e.g. the sentence and its corruptions).

    Args:
      scores: :func:`muttlab.dashboard.services.score_sentences` output (metric, candidate, score, ...).
    """
    names = _unique(candidate_names)
    metrics = [str(m) for m in dict.fromkeys(scores["metric"])]
    by_key = {(str(r.metric), int(r.candidate)): float(r.score) for r in scores.itertuples(index=False)}
    figure = go.Figure()
    for i, name in enumerate(names):
        ys = [by_key.get((m, i)) for m in metrics]
        figure.add_trace(go.Bar(
            x=[text(m) for m in metrics], y=ys, name=text(name), marker={"color": _colour(i)},
            hoverinfo="text", hovertext=[_lines([f"{m} · {name}: {fmt_score(v)}"]) if v is not None else ""
                                         for m, v in zip(metrics, ys)]))
    figure.update_layout(barmode="group")
    figure.update_xaxes(tickangle=-30)
    figure.update_yaxes(title={"text": text("score")})
    return _finish(figure, title, 340)


def correlation_bars(table: pd.DataFrame, value: str, low: str | None = None, high: str | None = None,
                     group: str = "metric", colour: str | None = None, title: str | None = None) -> Figure:
    """Bars of one correlation column per metric, with CI whiskers when ``low``/``high`` columns are given;
    one bar per value of ``colour`` (a data set...) side by side when it is given."""
    whiskers = bool(low and high and low in table and high in table)
    series = _unique(dict.fromkeys(table[colour])) if colour else [str(value)]
    groups = [str(g) for g in dict.fromkeys(table[group])]
    figure = go.Figure()
    for i, name in enumerate(series):
        part = table[table[colour].astype(str) == name] if colour else table
        values = part[value].to_numpy(float)
        interval = ([f"95% CI {correlation_text(a)} to {correlation_text(b)}"
                     for a, b in zip(part[low].to_numpy(float), part[high].to_numpy(float))]
                    if whiskers else [""] * len(part))
        hovers = [_lines([f"{g} · {name}", f"{value} {correlation_text(v)}"] + ([ci] if ci else []))
                  for g, v, ci in zip(part[group].astype(str), values, interval)]
        error = ({"type": "data", "array": part[high].to_numpy(float) - values,
                  "arrayminus": values - part[low].to_numpy(float), "color": ZERO_LINE} if whiskers else None)
        figure.add_trace(go.Bar(x=[text(g) for g in part[group].astype(str)], y=values, name=text(name),
                                marker={"color": _colour(i)}, error_y=error, hoverinfo="text", hovertext=hovers))
    figure.update_layout(barmode="group")
    figure.update_xaxes(categoryorder="array", categoryarray=[text(g) for g in groups], tickangle=-30)
    figure.update_yaxes(title={"text": text(value)})
    return _finish(figure, title, 340, legend=bool(colour))


def sweep_lines(table: pd.DataFrame, x: str, value: str, low: str | None = None, high: str | None = None,
                group: str = "metric", log_x: bool = False, title: str | None = None) -> Figure:
    """One line per metric of ``value`` against ``x`` (a study sweep), with a shaded interval when given."""
    band = bool(low and high and low in table and high in table)
    series = [str(s) for s in dict.fromkeys(table[group])]
    ordered = table.sort_values(x)
    rows = pd.DataFrame({"x": ordered[x].astype(float), "value": ordered[value].astype(float),
                         "series": ordered[group].astype(str),
                         "low": ordered[low].astype(float) if band else np.nan,
                         "high": ordered[high].astype(float) if band else np.nan})
    figure = go.Figure()
    _series_lines(figure, rows, "x", x.replace("_", " "), series, str(value), band)
    figure.update_xaxes(title={"text": text(x.replace("_", " "))}, type="log" if log_x else None)
    figure.update_yaxes(title={"text": text(value)})
    return _finish(figure, title, 340)


# Playground cells: the verdict picks the hue (Okabe-Ito blue for pass, vermillion for fail: told apart by
# red-green colour-blind readers too), the size of the score change its depth. A change's sign says nothing
# by itself (TER's errors rise when BLEU's matches fall), so it must not pick the colour.
VERDICT_SCALE = [(-1.0, FAIL_COLOUR), (-1e-9, "#fbe3d3"), (1e-9, "#dbe9f6"), (1.0, PASS_COLOUR)]
VERDICT_FLOOR = 0.25  # the palest a cell gets: an unchanged score still shows its verdict's hue


def verdict_shade(passed: bool, change: float) -> float:
    """A Playground cell's position on :data:`VERDICT_SCALE`: positive for a pass, negative for a fail, further
    from zero the more the score moved (``change`` in %, its size capped at 100)."""
    size = 0.0 if np.isnan(change) else min(abs(change), 100.0) / 100.0
    return (1.0 if passed else -1.0) * (VERDICT_FLOOR + (1.0 - VERDICT_FLOOR) * size)


def change_heatmap(verdicts: pd.DataFrame, title: str | None = None) -> Figure:
    """Playground: which metrics notice each corruption of the candidate, and how much their scores move.

    Args:
      verdicts: rows of metric, corruption, s_orig, s_corr, passed (the engine's MUTT verdict).
    Returns:
      metric x corruption heatmap coloured by verdict first (:func:`verdict_shade`), the relative change of the
      score (:func:`muttlab.dashboard.number_format.relative_change`, as the metric reports it) second; each
      cell reads its change and pass or FAIL.
    """
    metrics = _unique(dict.fromkeys(verdicts["metric"]))
    corruptions = _unique(dict.fromkeys(verdicts["corruption"]))
    found = {(str(r.metric), str(r.corruption)): r for r in verdicts.itertuples(index=False)}
    z, cells, hovers = [], [], []
    for m in metrics:
        z.append([]), cells.append([]), hovers.append([])
        for c in corruptions:
            row = found.get((m, c))
            if row is None:
                z[-1].append(None), cells[-1].append(""), hovers[-1].append("")
                continue
            change = 100.0 * relative_change(row.s_orig, row.s_corr)
            shown = f"{change_text(row.s_orig, row.s_corr)} {'pass' if row.passed else 'FAIL'}"
            z[-1].append(verdict_shade(bool(row.passed), change))
            cells[-1].append(text(shown))
            hovers[-1].append(_lines([f"{m} · {c}", f"score {fmt_score(row.s_orig)} → {fmt_score(row.s_corr)}",
                                      f"change {shown}"]))
    domain, colours = zip(*VERDICT_SCALE)
    figure = go.Figure(go.Heatmap(
        z=z, x=[text(c) for c in corruptions], y=[text(m) for m in metrics], zmin=-1.0, zmax=1.0,
        colorscale=[[(d + 1.0) / 2.0, c] for d, c in zip(domain, colours)], xgap=2, ygap=2,
        colorbar={"title": {"text": text("verdict; depth: size of the change")}, "tickvals": [-0.6, 0.6],
                  "ticktext": ["FAIL", "pass"], "len": 0.9},
        text=cells, texttemplate="%{text}", hoverinfo="text", hovertext=hovers, hoverongaps=False))
    figure.update_yaxes(autorange="reversed", showgrid=False)
    figure.update_xaxes(tickangle=-30, showgrid=False)
    return _finish(figure, title, 120 + 34 * len(metrics) + 80, legend=False)


def severity_curves(curve: pd.DataFrame, corruption_label: str, strength_unit: str = "") -> Figure:
    """Pass rate (with its 95% interval as error bars) above mean score drop, against a corruption's strength,
    one line per metric in both panels (:func:`muttlab.severity.severity_curve`'s frame); a curve that falls
    somewhere is drawn dashed and named "(not monotone)". A legend entry hides or isolates a metric in both."""
    figure = _subplots(2, 1, ["pass rate (%)", "mean score drop (original − corruption, better-signed)"],
                       shared_xaxes=True, vertical_spacing=0.14)
    interval = "pass_ci_low" in curve.columns
    for i, (metric, part) in enumerate(curve.groupby("metric", sort=False)):
        part = part.sort_values("strength")
        flagged = part["monotone"].iloc[0] != "yes"
        name = f"{metric} (not monotone)" if flagged else str(metric)
        line = {"color": _colour(i), "dash": "dash" if flagged else "solid", "width": 2.5}
        rates, drops = part["pass_rate"].to_numpy(float), part["mean_drop"].to_numpy(float)
        lows = part["pass_ci_low"].to_numpy(float) if interval else np.full(len(part), np.nan)
        highs = part["pass_ci_high"].to_numpy(float) if interval else np.full(len(part), np.nan)
        where = [f"{name}, strength {int(s) if float(s).is_integer() else s}" for s in part["strength"]]
        rate_hovers = [_lines([f"{w}: pass rate {percent(r)}"
                               + ("" if lo != lo else f" (95% CI {interval_text(lo, hi)})") + f", n = {int(n)}"])
                       for w, r, lo, hi, n in zip(where, rates, lows, highs, part["n"])]
        drop_hovers = [_lines([f"{w}: mean score drop {fmt_score(d)}, n = {int(n)}"])
                       for w, d, n in zip(where, drops, part["n"])]
        error = {"type": "data", "array": highs - rates, "arrayminus": rates - lows, "thickness": 1.5,
                 "width": 4, "color": _colour(i)} if interval else None
        common = {"x": part["strength"].astype(float), "mode": "lines+markers", "legendgroup": text(name),
                  "line": line, "marker": {"color": _colour(i), "size": 8}, "hoverinfo": "text"}
        figure.add_trace(go.Scatter(y=rates, name=text(name), error_y=error, hovertext=rate_hovers, **common),
                         row=1, col=1)
        figure.add_trace(go.Scatter(y=drops, name=text(name), showlegend=False, hovertext=drop_hovers, **common),
                         row=2, col=1)
    # The pass rate's axis runs 0-100 %, with room beyond both so that a point and its error bar at an end show
    # whole, where its value is.
    figure.update_yaxes(range=[-5.0, 105.0], tickvals=[0, 20, 40, 60, 80, 100], row=1, col=1)
    _zero_line(figure, "y", row=2, col=1)
    figure.update_xaxes(dtick=1, tickformat="d", row=1, col=1)
    figure.update_xaxes(dtick=1, tickformat="d", title={"text": text(
        f"strength{f' ({strength_unit})' if strength_unit else ''}")}, row=2, col=1)
    return _finish(figure, f"{corruption_label}: how the metrics react as the corruption gets stronger", 560)


# Which of two metrics got a trial right: grey where they agree, else the verdict colour of the first metric.
AGREE_COLOUR, ONLY_FIRST_COLOUR, ONLY_SECOND_COLOUR = "#999999", PASS_COLOUR, FAIL_COLOUR
# The 2 x 2 table's cells: rows the first metric passes / fails, columns the second passes / fails.
PAIRED_FILLS = ((AGREE_COLOUR, ONLY_FIRST_COLOUR), (ONLY_SECOND_COLOUR, AGREE_COLOUR))


@dataclass(frozen=True)
class PairedMargins:
    """Each trial both metrics scored, as a point of its two margins (``a``, ``b``: clipped to the axes; ``margin``,
    ``other_margin``: as measured) in one of three groups (both agree, only the first right, only the second),
    named with their counts (``names``, in ``colours``); the axes' domains. What the comparison figure draws."""

    points: list[dict]
    names: list[str]
    colours: list[str]
    x_domain: tuple[float, float]
    y_domain: tuple[float, float]


def paired_margins(joined: pd.DataFrame, metric: str, other: str) -> PairedMargins:
    a = joined["margin"].to_numpy(dtype=float)
    b = joined["vs_margin"].to_numpy(dtype=float)
    x_low, x_high, _ = margin_axis(a)
    y_low, y_high, _ = margin_axis(b)
    first, second = joined["passed"].astype(bool).to_numpy(), joined["vs_passed"].astype(bool).to_numpy()
    groups = ((first == second, "both agree", AGREE_COLOUR),
              (first & ~second, f"only {metric} right", ONLY_FIRST_COLOUR),
              (~first & second, f"only {other} right", ONLY_SECOND_COLOUR))
    names = _unique(f"{name} ({int(mask.sum())})" for mask, name, _ in groups)
    which = np.select([mask for mask, _, _ in groups], names, default=names[0])
    points = [{"trial": str(t), "a": float(np.clip(x, x_low, x_high)), "b": float(np.clip(y, y_low, y_high)),
               "which": w, "margin": float(x), "other_margin": float(y)}
              for t, x, y, w in zip(joined["trial"], a, b, which) if np.isfinite(x) and np.isfinite(y)]
    return PairedMargins(points, names, [c for _, _, c in groups], (x_low, x_high), (y_low, y_high))


def comparison_chart(contingency: pd.DataFrame, joined: pd.DataFrame, metric: str, other: str,
                     title: str | None = None) -> Figure:
    """Two metrics on one cell (:class:`muttlab.dashboard.compare.Comparison`): the 2 x 2 table of paired
    outcomes (agreement grey, only the first metric right in the Okabe-Ito blue, only the other in vermillion)
    above the margin of each trial of ``joined`` (those both metrics scored) under both metrics, coloured the
    same way; dashed lines at 0. A point's hover names its trial and both margins."""
    figure = _subplots(2, 1, ["paired outcomes (trials)", "margins (positive = right)"], row_heights=[0.3, 0.7],
                       vertical_spacing=0.16)
    cells = contingency.to_numpy()
    rows, columns = _unique(contingency.index), _unique(contingency.columns)
    # One colour per cell, whatever its count: the fills are categories (0 agree, 1 only first, 2 only second).
    code = {AGREE_COLOUR: 0.0, ONLY_FIRST_COLOUR: 1.0, ONLY_SECOND_COLOUR: 2.0}
    figure.add_trace(go.Heatmap(
        z=[[code[PAIRED_FILLS[i][j]] for j in range(len(columns))] for i in range(len(rows))],
        x=[text(c) for c in columns], y=[text(r) for r in rows], zmin=0.0, zmax=2.0, showscale=False, xgap=3, ygap=3,
        colorscale=[[0.0, AGREE_COLOUR], [0.5, ONLY_FIRST_COLOUR], [1.0, ONLY_SECOND_COLOUR]],
        text=[[str(int(cells[i, j])) for j in range(len(columns))] for i in range(len(rows))],
        texttemplate="%{text}", textfont={"size": 18, "color": LIGHT_INK}, hoverinfo="text",
        hovertext=[[_lines([f"{r}, {c}: {count_text(cells[i, j], 'trial', 'trials')}"]) for j, c in enumerate(columns)]
                   for i, r in enumerate(rows)]), row=1, col=1)
    figure.update_yaxes(autorange="reversed", showgrid=False, row=1, col=1)
    figure.update_xaxes(showgrid=False, row=1, col=1)
    paired = paired_margins(joined, metric, other)
    for name, colour in zip(paired.names, paired.colours):
        points = [p for p in paired.points if p["which"] == name]
        figure.add_trace(go.Scatter(
            x=[p["a"] for p in points], y=[p["b"] for p in points], mode="markers", name=text(name),
            marker={"color": colour, "size": 7, "opacity": 0.75}, hoverinfo="text",
            hovertext=[_lines([p["trial"], f"margin, {metric}: {fmt_score(p['margin'])}",
                               f"margin, {other}: {fmt_score(p['other_margin'])}"]) for p in points]), row=2, col=1)
    _zero_line(figure, "x", row=2, col=1)
    _zero_line(figure, "y", row=2, col=1)
    figure.update_xaxes(title={"text": text(f"margin, {metric}")}, range=list(_padded(paired.x_domain)), row=2, col=1)
    figure.update_yaxes(title={"text": text(f"margin, {other}")}, range=list(_padded(paired.y_domain)), row=2, col=1)
    return _finish(figure, title, 640)


def _padded(domain: tuple[float, float], share: float = 0.03) -> tuple[float, float]:
    """``domain`` widened by ``share`` of its span at each end, so that a point clipped to an end shows whole."""
    low, high = domain
    pad = share * (high - low)
    return low - pad, high + pad


# ----------------------------------------------------------------------------------------------- meta-evaluation

RIGHT_LABEL, WRONG_LABEL = "ordered as the experts (or tied by both)", "not"
BAND_COLOUR = "rgba(230, 159, 0, 0.18)"  # Okabe-Ito orange, pale: the metric's ties


def meta_scatter(pairs: pd.DataFrame, metric: str, human: str = "MQM", title: str | None = None) -> Figure:
    """Δmetric against Δhuman over every item-grouped pair of outputs (:func:`muttlab.api.meta_pairs`: one row a
    pair, ``attrs["epsilon"]`` the statistic's ε), the band |Δmetric| ≤ ε shaded: inside it the metric ties the
    pair. A pair the metric gets right (both tie it, or both order it alike) is a blue point, any other vermillion;
    each point's ``customdata`` is its segment (the item's column), so a click on it opens that segment."""
    epsilon = float(pairs.attrs.get("epsilon", 0.0))
    figure = go.Figure()
    for label, right, colour in ((RIGHT_LABEL, True, PASS_COLOUR), (WRONG_LABEL, False, FAIL_COLOUR)):
        part = pairs[pairs["right"].to_numpy(bool) == right]
        # The segment alone, from the point's customdata: a pair's two Δ are its position, its systems and texts
        # one click away. A hover of each pair's systems and numbers tripled the figure (48,139 zh-en pairs:
        # 6.0 MB against 1.9 MB), and even a text per point ("segment 12") weighs a third of it. Positions in
        # single precision (seven digits, far below a pixel) and segments as 32-bit integers halve the rest.
        figure.add_trace(go.Scattergl(
            x=part["delta_human"].to_numpy(np.float32), y=part["delta_metric"].to_numpy(np.float32), mode="markers",
            name=text(f"{label} ({len(part):,})"), customdata=part["item"].to_numpy(np.int32),
            marker={"color": colour, "size": 5, "opacity": 0.45}, hovertemplate="segment %{customdata}<extra></extra>"))
    if epsilon > 0:
        figure.add_hrect(y0=-epsilon, y1=epsilon, fillcolor=BAND_COLOUR, line={"width": 0}, layer="below")
    _zero_line(figure, "x")
    _zero_line(figure, "y")
    figure.add_annotation(text=text(f"|Δ{metric}| ≤ ε = {fmt_score(epsilon)}: the metric ties the pair"),
                          xref="paper", yref="paper", x=0, y=1.02, showarrow=False, xanchor="left",
                          yanchor="bottom")
    figure.update_xaxes(title={"text": text(f"Δ{human} (first output − second; higher is better)")})
    figure.update_yaxes(title={"text": text(f"Δ{metric} (oriented: higher is better)")})
    figure.update_layout(clickmode="event+select", dragmode="zoom")
    return _finish(figure, title, 480)


def interval_dots(table: pd.DataFrame, group: str, value: str, low: str, high: str, percent_values: bool,
                  series: str | None = None, title: str | None = None) -> Figure:
    """One dot per row of ``table`` (``group`` along the x axis) at ``value`` with its interval ``low``–``high``
    as whiskers (none where the interval is missing); one colour per value of ``series`` (two metrics
    compared) side by side. ``percent_values``: accuracies in percent (written by ``percent``), else statistics
    (``correlation_text``)."""
    write = percent if percent_values else correlation_text
    names = _unique(dict.fromkeys(table[series].astype(str))) if series else [str(value)]
    groups = [str(g) for g in dict.fromkeys(table[group].astype(str))]
    figure = go.Figure()
    for i, name in enumerate(names):
        part = table[table[series].astype(str) == name] if series else table
        values = part[value].to_numpy(float)
        lows, highs = part[low].to_numpy(float), part[high].to_numpy(float)
        hovers = [_lines([f"{g} · {name}" if series else g, f"{value} {write(v)}"]
                         + ([f"95% interval {write(a)} to {write(b)}"] if np.isfinite(a) and np.isfinite(b) else []))
                  for g, v, a, b in zip(part[group].astype(str), values, lows, highs)]
        figure.add_trace(go.Scatter(
            x=[text(g) for g in part[group].astype(str)], y=values, mode="markers", name=text(name),
            marker={"color": _colour(i), "size": 9},
            error_y={"type": "data", "array": np.nan_to_num(highs - values), "arrayminus": np.nan_to_num(values - lows),
                     "color": _colour(i)}, hoverinfo="text", hovertext=hovers))
    figure.update_layout(scattermode="group")
    figure.update_xaxes(categoryorder="array", categoryarray=[text(g) for g in groups], tickangle=-30)
    figure.update_yaxes(title={"text": text(value)})
    return _finish(figure, title, 380, legend=bool(series))
