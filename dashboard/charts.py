"""Vega-Lite charts built from the engine's result frames. No Streamlit here, so every chart is testable alone.

Each function takes an already-computed frame (a runner table, an accuracy table, a correlation matrix) and
returns an Altair chart (a Vega-Lite specification); nothing is scored or aggregated beyond reshaping and
binning. Vega-Lite rather than plotly: Streamlit's Vega-Lite script is 0.8 MB against plotly's 4.7 MB, whose
evaluation held a page's first paint back by about two seconds (docs/dashboard.md).

Names a user controls (a metric from their metric path, a corruption from an uploaded suite) are only ever data
values and titles, which Vega draws as text; never field names, which Vega reads as paths, nor expressions.
Each chart carries its data inline, so the spec alone draws it: in the app, in a download and in a report.
Panels sit one above the other (``vconcat``); a page draws them as one chart each (:func:`panels`), since
Vega-Lite fits only a single or layered view to a column's width, on a phone too.
"""
from __future__ import annotations

import html
import json
from dataclasses import dataclass
from typing import Mapping, Sequence

import altair as alt
import numpy as np
import pandas as pd

Figure = alt.TopLevelMixin

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
STACK_ABOVE_COLUMNS = 18  # cells per row of the accuracy grid beyond which its panels are stacked
DOWNLOAD_WIDTH = 720  # px: a chart's width in a download or a report, where no page column sizes it


def _interpolated(scale: Sequence[str], points: Sequence[float]) -> np.ndarray:
    """RGB (0-255, rounded) at ``points`` (0..1, clamped; a missing one at 0) of a scale of equally spaced hex
    stops, interpolated in RGB as the charts' scales are (``interpolate="rgb"``)."""
    stops = np.array([[int(c[i:i + 2], 16) for i in (1, 3, 5)] for c in scale], dtype=float)
    positions = np.linspace(0.0, 1.0, len(scale))
    at = np.clip(np.nan_to_num(np.asarray(points, dtype=float).reshape(-1), nan=0.0), 0.0, 1.0)
    return np.round(np.column_stack([np.interp(at, positions, stops[:, k]) for k in range(3)]))


def scale_colours(scale: Sequence[str], points: Sequence[float]) -> list[str]:
    """Colours at ``points`` (0..1) of a scale of equally spaced hex stops, each as ``rgb(r, g, b)``."""
    return [colour for colour, _ in colours_with_ink(scale, points)]


def colours_with_ink(scale: Sequence[str], points: Sequence[float]) -> list[tuple[str, str]]:
    """Per point: the scale's colour there, as ``rgb(r, g, b)``, and a text colour readable on it."""
    return [(f"rgb({r:.0f}, {g:.0f}, {b:.0f})",
             DARK_INK if (0.299 * r + 0.587 * g + 0.114 * b) / 255.0 > 0.55 else LIGHT_INK)
            for r, g, b in _interpolated(scale, points)]


# A cell's number in the ink its row chose for its background (:func:`colours_with_ink`): a condition, not a
# second scale.
_INK = alt.condition(f"datum.ink == '{LIGHT_INK}'", alt.value(LIGHT_INK), alt.value(DARK_INK))


def _scale(domain: tuple[float, float], colours: Sequence[str]) -> alt.Scale:
    """A continuous colour scale through ``colours``, equally spaced over ``domain``."""
    return alt.Scale(domain=list(np.linspace(domain[0], domain[1], len(colours))), range=list(colours),
                     interpolate="rgb", clamp=True)


def _percent(rate: float) -> float:
    """A tie rate in percent, whether the results give it as a fraction or already in percent."""
    rate = float(rate)
    return 100.0 * rate if rate <= 1.0 else rate


def _data(rows: pd.DataFrame | list[dict]) -> alt.InlineData:
    """Rows as inline values, missing numbers as null (Vega leaves them out), numpy scalars as Python's."""
    frame = pd.DataFrame(rows)
    frame = frame.astype(object).where(frame.notna(), None)
    return alt.InlineData(values=[{k: (v.item() if isinstance(v, np.generic) else v) for k, v in row.items()}
                                  for row in frame.to_dict("records")])


def _unique(names: Sequence[object]) -> list[str]:
    """``names`` as text, a repeated one numbered, so that each can key a colour of its own."""
    out: list[str] = []
    for name in map(str, names):
        label, n = name, 1
        while label in out:
            n += 1
            label = f"{name} ({n})"
        out.append(label)
    return out


def _palette(domain: Sequence[str]) -> alt.Scale:
    return alt.Scale(domain=list(domain), range=[OKABE_ITO[i % len(OKABE_ITO)] for i in range(len(domain))])


def _top_legend(title: str | None = None) -> alt.Legend:
    return alt.Legend(orient="top", title=title, labelLimit=400, symbolLimit=0)


def _finish(chart: Figure, title: str | None = None) -> Figure:
    """The chart, just built by this module, with its title and the house style, set in place: Altair's
    ``properties`` and ``configure_*`` each copy the whole chart, which was half of building a small one."""
    if title:
        chart.title = alt.TitleParams(str(title), anchor="start", fontSize=15)
    chart.config = alt.Config(font=FONT, view=alt.ViewConfig(stroke=None), axis=alt.AxisConfig(labelLimit=260))
    return chart


def warm() -> None:
    """Build and serialise one small chart: a process's first chart pays for importing Altair and loading its
    schema (0.3 s), which a server does before its first visitor asks."""
    spec(correlation_heatmap(pd.DataFrame([[1.0, 0.5], [0.5, 1.0]], index=["a", "b"], columns=["a", "b"])))


def spec(figure: Figure) -> dict:
    """The chart's Vega-Lite specification."""
    return figure.to_dict()


def panels(figure: Figure) -> list[dict]:
    """The chart as specifications of one view each, for a page's column: a stack's panels one by one, each with
    the chart's data and configuration, the first under the chart's title; any other chart whole."""
    whole = spec(figure)
    if "vconcat" not in whole:
        return [whole]
    shared = {k: v for k, v in whole.items() if k in ("$schema", "config", "datasets", "data")}
    out = []
    for i, panel in enumerate(whole["vconcat"]):
        part = {**shared, **panel}
        if i == 0 and "title" in whole:
            own = panel.get("title")
            subtitle = own.get("text") if isinstance(own, dict) else own
            part["title"] = {**whole["title"], **({"subtitle": subtitle} if subtitle else {})}
        out.append(part)
    return out


def sized(figure: Figure, width: int = DOWNLOAD_WIDTH) -> dict:
    """The specification with a width for each panel that has none (the page's column sizes them in the app)."""
    out = spec(figure)
    for view in out["vconcat"] if "vconcat" in out else [] if "facet" in out else [out]:
        if "facet" not in view and "hconcat" not in view:
            view.setdefault("width", width)
    return out


def _script_json(value: dict) -> str:
    """JSON that can sit inside a ``<script>`` element: no ``<`` to close it, whatever the names hold."""
    return json.dumps(value).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def embed_html(figures: Sequence[Figure]) -> str:
    """HTML that draws ``figures`` with no internet: Vega, Vega-Lite and vega-embed inlined once, then one
    element per chart. Its menu saves SVG or PNG; it offers no editor link (that would send the data away)."""
    import vl_convert  # only when a file is written: its first bundle takes seconds, then it keeps it

    options = _script_json({"renderer": "svg",
                            "actions": {"export": True, "source": False, "compiled": False, "editor": False}})
    parts = [f"<script>{vl_convert.javascript_bundle()}</script>"]
    for i, figure in enumerate(figures):
        parts.append(f'<div id="mutt-chart-{i}" class="mutt-chart"></div>'
                     f'<script>vegaEmbed("#mutt-chart-{i}", {_script_json(sized(figure))}, {options});</script>')
    return "".join(parts)


def offline_html(figure: Figure, title: str = "MUTT Lab chart") -> str:
    """The chart as a standalone page that opens without the internet (a chart download)."""
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title></head>"
            f"<body style='font-family:sans-serif'>{embed_html([figure])}</body></html>")


def accuracy_heatmap(accuracy: pd.DataFrame, labels: Mapping[str, str] | None = None,
                     metric_order: Sequence[str] | None = None,
                     corruption_order: Sequence[str] | None = None) -> Figure:
    """Accuracy grid, metric x corruption, one panel per reference count (the Run page's download and report).

    Args:
      accuracy: ``Results.accuracy()``: metric, corruption, refs, n, passed, accuracy, ci_low, ci_high (%).
      labels: display names of the corruptions (defaults to their ids).
    Returns:
      Panels side by side while they stay readable, else one above the other; each cell its accuracy as colour
      and number, with passed/n, the 95% Wilson interval and the tie rate on hover.
    """
    labels = dict(labels or {})
    metrics = [str(m) for m in (metric_order or dict.fromkeys(accuracy["metric"]))]
    corruptions = list(corruption_order or dict.fromkeys(accuracy["corruption"]))
    x_labels = _unique([labels.get(c, c) for c in corruptions])
    label_of = dict(zip(corruptions, x_labels))
    ref_counts = sorted(int(k) for k in accuracy["refs"].unique())
    drawn = [r for r in accuracy.itertuples(index=False)
             if r.corruption in label_of and str(r.metric) in metrics and r.accuracy == r.accuracy]
    inks = [ink for _, ink in colours_with_ink(ACCURACY_SCALE, [float(r.accuracy) / 100.0 for r in drawn])]
    rows = []
    for r, ink in zip(drawn, inks):
        tie = getattr(r, "tie_rate", float("nan"))
        rows.append({"metric": str(r.metric), "type": label_of[r.corruption], "refs": f"{int(r.refs)} references",
                     "accuracy": float(r.accuracy), "trials": f"{int(r.passed)}/{int(r.n)}",
                     "interval": f"{r.ci_low:.1f}–{r.ci_high:.1f}%",
                     "ties": f"{_percent(tie):.1f}%" if tie == tie else "", "ink": ink})
    panel = _matrix_chart(
        rows, alt.X("type:N", sort=x_labels, title=None, axis=alt.Axis(labelAngle=-40, orient="top")),
        alt.Y("metric:N", sort=metrics, title=None),
        alt.Color("accuracy:Q", scale=_scale((0.0, 100.0), ACCURACY_SCALE),
                  legend=alt.Legend(title="accuracy %", gradientLength=160)),
        alt.Text("accuracy:Q", format=".0f"),
        [alt.Tooltip("metric:N"), alt.Tooltip("type:N", title="corruption"), alt.Tooltip("refs:N"),
         alt.Tooltip("accuracy:Q", format=".1f", title="accuracy %"), alt.Tooltip("trials:N", title="passed"),
         alt.Tooltip("interval:N", title="95% CI"), alt.Tooltip("ties:N")],
        size=12).properties(width=alt.Step(34), height=alt.Step(26))
    facet_titles = [f"{k} references" for k in ref_counts]
    header = alt.Header(title=None, labelFontSize=13, labelFontWeight="bold", labelAnchor="start")
    if len(corruptions) * len(ref_counts) > STACK_ABOVE_COLUMNS:
        chart = panel.facet(row=alt.Row("refs:N", sort=facet_titles, header=header))
    else:
        chart = panel.facet(column=alt.Column("refs:N", sort=facet_titles, header=header))
    return _finish(chart.resolve_axis(x="independent"))


# A histogram bar's tooltip: where its bin starts and ends.
_BIN_EDGES = [alt.Tooltip("left:Q", format=".3g", title="from"), alt.Tooltip("right:Q", format=".3g", title="to")]


def margin_bins(margins: np.ndarray, low: float, high: float, bins: int = 40) -> tuple[np.ndarray, np.ndarray]:
    """Counts of ``margins`` clipped into ``bins`` bins of equal width from ``low`` past ``high``, and the edges."""
    width = (high - low) / bins
    edges = low + width * np.arange(bins + 2)
    counts, _ = np.histogram(np.clip(margins[np.isfinite(margins)], low, high), bins=edges)
    return counts, edges


@dataclass(frozen=True)
class CellMargins:
    """A cell's margins binned for its histogram (the chart here and the Drill-down's HTML one,
    :mod:`muttlab.dashboard.margin_bars`): fails and passes per bin of :func:`margin_bins` on :func:`margin_axis`,
    the bins' edges, how many margins lie beyond the axis (counted in the edge bins), and the trials that fail
    and pass (those with no finite margin included)."""

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


def margin_histogram(cell: pd.DataFrame, title: str | None = None) -> Figure:
    """Distribution of one cell's margins, passes and fails coloured apart; 0 is the decision boundary.

    A relative change over a near-zero original score (the Difference rule) can be millions of times the
    other margins, so the axis stops at 10 interquartile ranges beyond the quartiles (always showing 0);
    margins beyond are drawn in the edge bins and counted in the axis title.
    """
    binned = cell_margins(cell)
    edges = binned.edges
    rows, names = [], []
    for name, counts, total in (("fails", binned.fails, binned.n_fails), ("passes", binned.passes, binned.n_passes)):
        names.append(f"{name} ({total})")
        rows += [{"outcome": names[-1], "left": float(edges[i]), "right": float(edges[i + 1]), "trials": int(n)}
                 for i, n in enumerate(counts) if n]
    x_scale = alt.Scale(domain=[float(edges[0]), float(edges[-1])], nice=False, zero=False)
    bars = alt.Chart(_data(rows)).mark_bar(opacity=0.8).encode(
        x=alt.X("left:Q", scale=x_scale, title=binned.axis_title), x2="right:Q",
        y=alt.Y("trials:Q", stack=None, title="trials"), y2=alt.datum(0),
        color=alt.Color("outcome:N", scale=alt.Scale(domain=names, range=[FAIL_COLOUR, PASS_COLOUR]),
                        legend=_top_legend()),
        tooltip=[alt.Tooltip("outcome:N"), *_BIN_EDGES, alt.Tooltip("trials:Q")])
    zero = alt.Chart(_data([{"x": 0.0}])).mark_rule(strokeDash=[5, 4], color=ZERO_LINE).encode(x="x:Q")
    return _finish(alt.layer(bars, zero).properties(height=240), title)


def _bars_of_bins(bins: pd.DataFrame, label: str, colour: str, y_title: str | None) -> alt.Chart:
    rows = [{"left": float(b.left), "right": float(b.right), "sentences": int(b.count)}
            for b in bins.itertuples(index=False)]
    return alt.Chart(_data(rows), title=alt.TitleParams(label, anchor="start", fontSize=13)).mark_bar(
        color=colour).encode(
        x=alt.X("left:Q", title=None, scale=alt.Scale(zero=False)), x2="right:Q",
        y=alt.Y("sentences:Q", title=y_title), y2=alt.datum(0),
        tooltip=[*_BIN_EDGES, alt.Tooltip("sentences:Q")]).properties(height=200)


def score_histograms(histograms: pd.DataFrame, metric: str, gold_label: str, metric_label: str,
                     title: str | None = None) -> Figure:
    """Two histograms, one above the other: human gold scores and a metric's scores of the same sentences, from
    the bins of :meth:`muttlab.human.sick.SickStudy.histograms` (variables ``gold`` and ``metric``), so that the
    shipped counts and a live study draw alike."""
    panels = [_bars_of_bins(histograms[histograms["variable"] == variable], label, colour, "sentences")
              for variable, label, colour in (("gold", gold_label, GOLD_COLOUR), (metric, metric_label, METRIC_COLOUR))]
    return _finish(alt.vconcat(*panels, spacing=24), title)


def _matrix_chart(rows: list[dict], x: alt.X, y: alt.Y, colour: alt.Color, text: alt.Text, tooltip: list,
                  size: int = 11) -> alt.LayerChart:
    """A heatmap of ``rows`` (the encoded fields and ``ink``), each cell printed with ``text``; its data on the
    layer, so that it can also be faceted."""
    # The number over a cell answers the pointer with the cell's tooltip too.
    base = alt.Chart().encode(x=x, y=y, tooltip=tooltip)
    return alt.layer(base.mark_rect(stroke="white", strokeWidth=2).encode(color=colour),
                     base.mark_text(fontSize=size).encode(text=text, color=_INK), data=_data(rows))


def _cell_axes(x_order: Sequence[str], y_order: Sequence[str]) -> tuple[alt.X, alt.Y]:
    """The x and y of a heatmap whose rows name their cell ``x`` and ``y``, in the given orders."""
    return (alt.X("x:N", sort=list(x_order), title=None, axis=alt.Axis(labelAngle=-30)),
            alt.Y("y:N", sort=list(y_order), title=None))


def correlation_heatmap(matrix: pd.DataFrame, method: str = "", title: str | None = None) -> Figure:
    """A square correlation matrix (index = columns = score names) as an annotated heatmap on [-1, 1]."""
    columns, index = _unique(matrix.columns), _unique(matrix.index)
    values = matrix.to_numpy(dtype=float)
    inks = [ink for _, ink in colours_with_ink(CORRELATION_SCALE, (values.ravel() + 1.0) / 2.0)]
    rows = [{"x": x, "y": y, "r": None if v != v else float(v), "ink": ink if v == v else DARK_INK}
            for (y, x), v, ink in zip(((y, x) for y in index for x in columns), values.ravel(), inks)]
    name = str(method or "r")
    chart = _matrix_chart(rows, *_cell_axes(columns, index),
                          alt.Color("r:Q", scale=_scale((-1.0, 1.0), CORRELATION_SCALE), legend=alt.Legend(title=name)),
                          alt.Text("r:Q", format=".2f"),
                          [alt.Tooltip("y:N", title="row"), alt.Tooltip("x:N", title="column"),
                           alt.Tooltip("r:Q", format=".3f", title=name)], size=12)
    return _finish(chart.properties(height=alt.Step(44)), title)


def _lines(rows: list[dict], x: alt.X, y_title: str, series: Sequence[str], band: bool = False) -> alt.LayerChart:
    """One line with points per series of ``rows`` (x, value, series; low and high for a shaded interval)."""
    colour = alt.Color("series:N", scale=_palette(series), legend=_top_legend())
    base = alt.Chart(_data(rows)).encode(x=x, color=colour)
    line = base.mark_line(point=True).encode(y=alt.Y("value:Q", title=y_title),
                                             tooltip=[alt.Tooltip("series:N"), alt.Tooltip(x.shorthand),
                                                      alt.Tooltip("value:Q", format=".4g")])
    # The line first: the legend shows the first layer's symbol.
    return alt.layer(line, *([base.mark_area(opacity=0.15).encode(y="low:Q", y2="high:Q")] if band else []))


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
            rows += [{"epoch": e, "value": v, "series": series[-1]} for e, v in zip(part["epoch"], part[column])]
    chart = _lines(rows, alt.X("epoch:Q", title="epoch", axis=alt.Axis(tickMinStep=1, format="d")), "", series)
    return _finish(chart.properties(height=260), title)


def sentence_scores(scores: pd.DataFrame, candidate_names: Sequence[str], title: str | None = None) -> Figure:
    """Playground: one group of bars per metric, one bar per candidate (e.g. the sentence and its corruptions).

    Args:
      scores: :func:`muttlab.dashboard.services.score_sentences` output (metric, candidate, score, ...).
    """
    names = _unique(candidate_names)
    metrics = [str(m) for m in dict.fromkeys(scores["metric"])]
    rows = [{"metric": str(r.metric), "candidate": names[int(r.candidate)], "score": float(r.score)}
            for r in scores.itertuples(index=False) if 0 <= int(r.candidate) < len(names)]
    chart = alt.Chart(_data(rows)).mark_bar().encode(
        x=alt.X("metric:N", sort=metrics, title=None, axis=alt.Axis(labelAngle=-30)),
        xOffset=alt.XOffset("candidate:N", sort=names),
        y=alt.Y("score:Q", title="score"),
        color=alt.Color("candidate:N", scale=_palette(names), legend=_top_legend()),
        tooltip=[alt.Tooltip("metric:N"), alt.Tooltip("candidate:N"), alt.Tooltip("score:Q", format=".4f")])
    return _finish(chart.properties(height=280), title)


def correlation_bars(table: pd.DataFrame, value: str, low: str | None = None, high: str | None = None,
                     group: str = "metric", colour: str | None = None, title: str | None = None) -> Figure:
    """Bars of one correlation column per metric, with CI whiskers when ``low``/``high`` columns are given;
    one bar per value of ``colour`` (a data set...) side by side when it is given."""
    whiskers = bool(low and high and low in table and high in table)
    series = _unique(dict.fromkeys(table[colour])) if colour else [str(value)]
    rows = [{"group": str(r[group]), "series": str(r[colour]) if colour else str(value), "value": float(r[value]),
             **({"low": float(r[low]), "high": float(r[high])} if whiskers else {})} for _, r in table.iterrows()]
    groups = [str(g) for g in dict.fromkeys(table[group])]
    base = alt.Chart(_data(rows)).encode(
        x=alt.X("group:N", sort=groups, title=None, axis=alt.Axis(labelAngle=-30)),
        xOffset=alt.XOffset("series:N", sort=series))
    bars = base.mark_bar().encode(
        y=alt.Y("value:Q", title=str(value)),
        color=alt.Color("series:N", scale=_palette(series), legend=_top_legend() if colour else None),
        tooltip=[alt.Tooltip("group:N", title=group), alt.Tooltip("series:N"),
                 alt.Tooltip("value:Q", format=".3f", title=str(value))]
        + ([alt.Tooltip("low:Q", format=".3f"), alt.Tooltip("high:Q", format=".3f")] if whiskers else []))
    layers = [bars] + ([base.mark_rule(color=ZERO_LINE).encode(y="low:Q", y2="high:Q")] if whiskers else [])
    return _finish(alt.layer(*layers).properties(height=280), title)


def sweep_lines(table: pd.DataFrame, x: str, value: str, low: str | None = None, high: str | None = None,
                group: str = "metric", log_x: bool = False, title: str | None = None) -> Figure:
    """One line per metric of ``value`` against ``x`` (a study sweep), with a shaded interval when given."""
    band = bool(low and high and low in table and high in table)
    series = [str(s) for s in dict.fromkeys(table[group])]
    rows = [{"x": float(r[x]), "value": float(r[value]), "series": str(r[group]),
             **({"low": float(r[low]), "high": float(r[high])} if band else {})}
            for _, r in table.sort_values(x).iterrows()]
    axis = alt.X("x:Q", title=x.replace("_", " "), scale=alt.Scale(type="log") if log_x else alt.Undefined)
    return _finish(_lines(rows, axis, str(value), series, band).properties(height=280), title)


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
      metric x corruption heatmap coloured by verdict first (:func:`verdict_shade`), the relative change
      100 * (s_corr - s_orig) / |s_orig| (%, as the metric reports it) second; each cell reads its change
      and pass or FAIL.
    """
    metrics = _unique(dict.fromkeys(verdicts["metric"]))
    corruptions = _unique(dict.fromkeys(verdicts["corruption"]))
    rows = []
    for row in verdicts.itertuples(index=False):
        change = 100.0 * (row.s_corr - row.s_orig) / abs(row.s_orig) if row.s_orig else np.nan
        shade = verdict_shade(bool(row.passed), change)
        shown = "n/a" if np.isnan(change) else f"{change:+.0f}%"
        rows.append({"x": str(row.corruption), "y": str(row.metric), "shade": shade,
                     "change": f"{shown} {'pass' if row.passed else 'FAIL'}",
                     "ink": LIGHT_INK if abs(shade) > 0.6 else DARK_INK})
    domain, colours = zip(*VERDICT_SCALE)
    legend = alt.Legend(title="verdict; depth: size of the change", values=[-0.6, 0.6], gradientLength=120,
                        labelExpr="datum.value < 0 ? 'FAIL' : 'pass'")
    chart = _matrix_chart(rows, *_cell_axes(corruptions, metrics),
                          alt.Color("shade:Q", scale=alt.Scale(domain=list(domain), range=list(colours),
                                                               interpolate="rgb"), legend=legend),
                          alt.Text("change:N"),
                          [alt.Tooltip("y:N", title="metric"), alt.Tooltip("x:N", title="corruption"),
                           alt.Tooltip("change:N", title="score change")])
    return _finish(chart.properties(height=alt.Step(30)), title)


def severity_curves(curve: pd.DataFrame, corruption_label: str, strength_unit: str = "") -> Figure:
    """Pass rate (with its 95% interval) above mean score drop, against a corruption's strength, one line per
    metric (:func:`muttlab.severity.severity_curve`'s frame); a curve that falls somewhere is drawn dashed."""
    rows, series = [], []
    interval = "pass_ci_low" in curve.columns
    for metric, part in curve.groupby("metric", sort=False):
        flagged = part["monotone"].iloc[0] != "yes"
        series.append(f"{metric} (not monotone)" if flagged else str(metric))
        for r in part.sort_values("strength").itertuples(index=False):
            rows.append({"series": series[-1], "strength": float(r.strength), "flagged": flagged,
                         "pass_rate": float(r.pass_rate), "mean_drop": float(r.mean_drop),
                         **({"low": float(r.pass_ci_low), "high": float(r.pass_ci_high)} if interval else {})})
    x = alt.X("strength:Q", title=f"strength{f' ({strength_unit})' if strength_unit else ''}",
              axis=alt.Axis(tickMinStep=1, format="d"), scale=alt.Scale(zero=False, nice=False, padding=12))
    colour = alt.Color("series:N", scale=_palette(series), legend=_top_legend())
    dash = alt.StrokeDash("flagged:N", scale=alt.Scale(domain=[False, True], range=[[1, 0], [6, 4]]), legend=None)
    base = alt.Chart(_data(rows)).encode(x=x, color=colour)

    def panel(column: str, title: str, y_scale=alt.Undefined) -> alt.LayerChart:
        line = base.mark_line(point=True).encode(
            y=alt.Y(f"{column}:Q", title=None, scale=y_scale), strokeDash=dash,
            tooltip=[alt.Tooltip("series:N", title="metric"), alt.Tooltip("strength:Q"),
                     alt.Tooltip(f"{column}:Q", format=".3f", title=column.replace("_", " "))])
        # The pass rate's 95% Wilson interval as error bars: a fall within them is noise, not flagged.
        whiskers = [base.mark_rule().encode(y="low:Q", y2="high:Q")] if column == "pass_rate" and interval else []
        return alt.layer(*whiskers, line, title=alt.TitleParams(title, anchor="start", fontSize=13)).properties(
            height=200)

    chart = alt.vconcat(panel("pass_rate", "pass rate (%)", alt.Scale(domain=[0, 100])),
                        panel("mean_drop", "mean score drop (original − corruption, better-signed)"), spacing=24)
    return _finish(chart, f"{corruption_label}: how the metrics react as the corruption gets stronger")


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


# Which of two metrics got a trial right: grey where they agree, else the verdict colour of the first metric.
AGREE_COLOUR, ONLY_FIRST_COLOUR, ONLY_SECOND_COLOUR = "#999999", PASS_COLOUR, FAIL_COLOUR
# The 2 x 2 table's cells: rows the first metric passes / fails, columns the second passes / fails.
PAIRED_FILLS = ((AGREE_COLOUR, ONLY_FIRST_COLOUR), (ONLY_SECOND_COLOUR, AGREE_COLOUR))


@dataclass(frozen=True)
class PairedMargins:
    """Each trial both metrics scored, as a point of its two margins (``a``, ``b``: clipped to the axes; ``margin``,
    ``other_margin``: as measured) in one of three groups (both agree, only the first right, only the second),
    named with their counts (``names``, in ``colours``); the axes' domains. What the comparison chart (the
    download) and the Drill-down's HTML comparison draw."""

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
    outcomes above the margin of each trial of ``joined`` (those both metrics scored) under both metrics,
    coloured by which metric alone gets it right."""
    cells = contingency.to_numpy()
    row_labels, column_labels = _unique(contingency.index), _unique(contingency.columns)
    table_rows = [{"x": column_labels[j], "y": row_labels[i], "trials": int(cells[i, j]), "fill": PAIRED_FILLS[i][j],
                   "ink": LIGHT_INK} for i in range(len(row_labels)) for j in range(len(column_labels))]
    table = _matrix_chart(table_rows, *_cell_axes(column_labels, row_labels), alt.Color("fill:N", scale=None),
                          alt.Text("trials:Q"), [alt.Tooltip("y:N", title=str(metric)),
                                                 alt.Tooltip("x:N", title=str(other)), alt.Tooltip("trials:Q")],
                          size=18).properties(height=alt.Step(44),
                                              title=alt.TitleParams("paired outcomes (trials)", anchor="start"))
    paired = paired_margins(joined, metric, other)
    (x_low, x_high), (y_low, y_high) = paired.x_domain, paired.y_domain
    scatter = alt.Chart(_data(paired.points)).mark_circle(size=36, opacity=0.75).encode(
        x=alt.X("a:Q", title=f"margin, {metric}", scale=alt.Scale(domain=[x_low, x_high])),
        y=alt.Y("b:Q", title=f"margin, {other}", scale=alt.Scale(domain=[y_low, y_high])),
        color=alt.Color("which:N", scale=alt.Scale(domain=paired.names, range=paired.colours),
                        legend=_top_legend()),
        tooltip=[alt.Tooltip("trial:N"), alt.Tooltip("margin:Q", format=".4g", title=f"margin, {metric}"),
                 alt.Tooltip("other_margin:Q", format=".4g", title=f"margin, {other}")])
    zero = _data([{"zero": 0.0}])
    rules = [alt.Chart(zero).mark_rule(strokeDash=[5, 4], color=ZERO_LINE).encode(**{axis: "zero:Q"})
             for axis in ("x", "y")]
    margins = alt.layer(scatter, *rules).properties(
        height=260, title=alt.TitleParams("margins (positive = right)", anchor="start"))
    return _finish(alt.vconcat(table, margins, spacing=24).resolve_scale(color="independent"), title)
