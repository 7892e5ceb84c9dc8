"""Plotly figures built from the engine's result frames. No Streamlit here, so every figure is testable alone.

Each function takes an already-computed frame (a runner table, an accuracy table, a correlation matrix)
and returns a ``plotly.graph_objects.Figure``; nothing is scored or aggregated beyond reshaping.
"""
from __future__ import annotations

import html
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

# Red (fails) through yellow to blue (passes), fixed to 0..100 % so colours compare across runs. ColorBrewer's
# RdYlBu keeps its ends apart for red-green colour-blind readers, which its RdYlGn does not.
ACCURACY_SCALE = "RdYlBu"
# Okabe & Ito's palette, told apart by colour-blind readers: every chart's lines and bars take their colours from
# it, a pass is its blue and a failure its vermillion, as on the grid.
OKABE_ITO = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442"]
PASS_COLOUR, FAIL_COLOUR = OKABE_ITO[0], OKABE_ITO[3]
CORRELATION_SCALE = "RdBu"
FONT = dict(family="Inter, 'Source Sans Pro', sans-serif", size=13)
GOLD_COLOUR, METRIC_COLOUR = OKABE_ITO[1], OKABE_ITO[0]
STACK_ABOVE_COLUMNS = 18  # cells per row of the accuracy grid beyond which its panels are stacked


def plain(value: object) -> str:
    """``value`` as text plotly shows character for character.

    Plotly renders a subset of HTML in every string it draws (titles, axis and tick labels, legend entries,
    hover text, annotations): a metric named ``<a href=...>`` from a user's metric path, or a corruption
    name from an uploaded suite, would become a link. Plotly decodes entities back to the characters, so
    escaping is exact. Every user-controlled string goes through here before it reaches a figure.
    """
    return html.escape(str(value), quote=False)


def _plain_all(values) -> list[str]:
    return [plain(v) for v in values]


def _percent(rate: float) -> float:
    """A tie rate in percent, whether the results give it as a fraction or already in percent."""
    rate = float(rate)
    return 100.0 * rate if rate <= 1.0 else rate


def offline_html(fig: go.Figure, full_html: bool = True) -> str:
    """The figure as HTML with plotly.js embedded, so the downloaded file opens without the internet."""
    return fig.to_html(include_plotlyjs=True, full_html=full_html)


def download_config(name: str, scale: int = 2) -> dict:
    """``st.plotly_chart(config=...)``: the modebar's camera button saves a PNG named ``name``."""
    return {"displaylogo": False,
            "toImageButtonOptions": {"format": "png", "filename": name, "scale": scale},
            "modeBarButtonsToRemove": ["lasso2d", "select2d"]}


def _layout(fig: go.Figure, height: int, title: str | None = None) -> go.Figure:
    fig.update_layout(height=height, font=FONT, margin=dict(l=10, r=10, t=60 if title else 40, b=10),
                      title=dict(text=plain(title), x=0, xanchor="left") if title else None,
                      plot_bgcolor="white", paper_bgcolor="white", colorway=OKABE_ITO)
    return fig


def accuracy_heatmap(accuracy: pd.DataFrame, labels: Mapping[str, str] | None = None,
                     metric_order: Sequence[str] | None = None,
                     corruption_order: Sequence[str] | None = None) -> go.Figure:
    """Accuracy grid, metric x corruption, one panel per reference count.

    Args:
      accuracy: ``Results.accuracy()``: metric, corruption, refs, n, passed, accuracy, ci_low, ci_high (%).
      labels: display names of the corruptions (defaults to their ids).
    Returns:
      A figure with one heatmap per ref count and, on top of each, an invisible scatter whose points
      carry ``customdata = [metric, corruption, refs]`` so that a click (Streamlit ``on_select``) names
      the cell. Hovering shows accuracy, passed/n and the 95% Wilson interval.
    """
    labels = dict(labels or {})
    metrics = list(metric_order or dict.fromkeys(accuracy["metric"]))
    corruptions = list(corruption_order or dict.fromkeys(accuracy["corruption"]))
    ref_counts = sorted(accuracy["refs"].unique())
    x_labels = [plain(labels.get(c, c)) for c in corruptions]
    y_labels = _plain_all(metrics)
    titles = [f"{k} references" for k in ref_counts]
    # Side by side while the panels stay readable; stacked (full width each) for a large grid.
    stacked = len(corruptions) * len(ref_counts) > STACK_ABOVE_COLUMNS
    if stacked:
        spacing = 0.04 + 0.14 / len(ref_counts)  # room for each panel's column labels
        fig = make_subplots(rows=len(ref_counts), cols=1, shared_xaxes=True, vertical_spacing=spacing,
                            subplot_titles=titles)
    else:
        fig = make_subplots(rows=1, cols=len(ref_counts), shared_yaxes=True, horizontal_spacing=0.02,
                            subplot_titles=titles)
    by_cell = {(r.metric, r.corruption, int(r.refs)): r for r in accuracy.itertuples(index=False)}
    for panel, k in enumerate(ref_counts, start=1):
        row_col = dict(row=panel, col=1) if stacked else dict(row=1, col=panel)
        z = np.full((len(metrics), len(corruptions)), np.nan)
        hover = np.empty(z.shape, dtype=object)
        xs, ys, custom, texts = [], [], [], []
        for i, m in enumerate(metrics):
            for j, c in enumerate(corruptions):
                row = by_cell.get((m, c, int(k)))
                if row is None:
                    hover[i, j] = ""
                    continue
                z[i, j] = row.accuracy
                text = (f"<b>{y_labels[i]}</b> · {x_labels[j]} · {k} refs<br>accuracy {row.accuracy:.1f}% "
                        f"({int(row.passed)}/{int(row.n)})<br>95% CI {row.ci_low:.1f}–{row.ci_high:.1f}%"
                        + (f"<br>ties {_percent(row.tie_rate):.1f}%" if hasattr(row, "tie_rate")
                           and row.tie_rate == row.tie_rate else "")
                        + "<br><i>click to open the trials</i>")
                hover[i, j] = text
                xs.append(x_labels[j])
                ys.append(y_labels[i])
                custom.append([m, c, int(k)])
                texts.append(text)
        fig.add_trace(go.Heatmap(
            z=z, x=x_labels, y=y_labels, zmin=0, zmax=100, colorscale=ACCURACY_SCALE,
            texttemplate="%{z:.0f}", textfont=dict(size=12), hoverinfo="skip", xgap=2, ygap=2,
            showscale=panel == len(ref_counts),
            colorbar=dict(title=dict(text="accuracy %"), thickness=12, len=0.8)), **row_col)
        # Heatmaps emit no selection events; invisible markers at the cell centres do.
        fig.add_trace(go.Scatter(
            x=xs, y=ys, mode="markers", customdata=custom, text=texts, hovertemplate="%{text}<extra></extra>",
            marker=dict(symbol="square", size=26, opacity=0.0, color="black"),
            selected=dict(marker=dict(opacity=0.0)), unselected=dict(marker=dict(opacity=0.0)),
            showlegend=False, name=f"{k} refs"), **row_col)
        # Stacked panels each keep their column labels, so no panel needs scrolling to be read.
        fig.update_xaxes(tickangle=-40 if not stacked else -25, showgrid=False, showticklabels=True, **row_col)
    fig.update_yaxes(autorange="reversed", showgrid=False)
    panel_height = 30 * len(metrics) + 60
    height = max(320, ((panel_height + 110) * len(ref_counts) if stacked else panel_height) + 180)
    _layout(fig, height)
    fig.update_layout(clickmode="event+select", dragmode=False, hoverlabel=dict(bgcolor="white"),
                      margin=dict(l=110, b=130, t=50))
    return fig


def margin_histogram(cell: pd.DataFrame, title: str | None = None) -> go.Figure:
    """Distribution of one cell's margins, passes and fails coloured apart; 0 is the decision boundary.

    A relative change over a near-zero original score (the Difference rule) can be millions of times the
    other margins, so the axis stops at 10 interquartile ranges beyond the quartiles (always showing 0);
    margins beyond are drawn in the edge bins and counted in the axis title.
    """
    low, high, outside = margin_axis(cell["margin"].to_numpy(dtype=float))
    fig = go.Figure()
    for ok, colour, name in ((False, FAIL_COLOUR, "fails"), (True, PASS_COLOUR, "passes")):
        part = np.clip(cell.loc[cell["passed"] == ok, "margin"].to_numpy(dtype=float), low, high)
        fig.add_trace(go.Histogram(x=part, name=f"{name} ({len(part)})", marker_color=colour, opacity=0.8,
                                   xbins=dict(start=low, end=high + (high - low) / 40, size=(high - low) / 40)))
    fig.add_vline(x=0, line_dash="dash", line_color="#374151")
    axis = "margin (positive = the metric did the right thing)"
    if outside:
        axis += f"; {outside} beyond the axis are counted in the edge bins"
    fig.update_layout(barmode="overlay", xaxis_title=axis, yaxis_title="trials", legend=dict(orientation="h", y=1.1))
    return _layout(fig, 300, title)


def score_histograms(histograms: pd.DataFrame, metric: str, gold_label: str, metric_label: str,
                     title: str | None = None) -> go.Figure:
    """Two histograms side by side: human gold scores and a metric's scores of the same sentences, from the
    bins of :meth:`muttlab.human.sick.SickStudy.histograms` (variables ``gold`` and ``metric``), so that the
    shipped counts and a live study draw alike."""
    gold_label, metric_label = plain(gold_label), plain(metric_label)
    fig = make_subplots(rows=1, cols=2, subplot_titles=[gold_label, metric_label], horizontal_spacing=0.08)
    for col, (variable, label, colour) in enumerate((("gold", gold_label, GOLD_COLOUR),
                                                     (metric, metric_label, METRIC_COLOUR)), start=1):
        bins = histograms[histograms["variable"] == variable]
        fig.add_trace(go.Bar(x=(bins["left"] + bins["right"]) / 2, y=bins["count"], width=bins["right"] - bins["left"],
                             marker_color=colour, name=label,
                             customdata=np.column_stack([bins["left"], bins["right"]]) if len(bins) else None,
                             hovertemplate="%{customdata[0]:.3g} to %{customdata[1]:.3g}: %{y}<extra></extra>"),
                      1, col)
    fig.update_yaxes(title_text="sentences", row=1, col=1)
    fig.update_layout(showlegend=False, bargap=0.05)
    return _layout(fig, 340, title)


def correlation_heatmap(matrix: pd.DataFrame, method: str = "", title: str | None = None) -> go.Figure:
    """A square correlation matrix (index = columns = score names) as an annotated heatmap on [-1, 1]."""
    names = _plain_all(matrix.columns)
    fig = go.Figure(go.Heatmap(
        z=matrix.to_numpy(dtype=float), x=names, y=_plain_all(matrix.index), zmin=-1, zmax=1,
        colorscale=CORRELATION_SCALE, texttemplate="%{z:.2f}", xgap=2, ygap=2,
        hovertemplate="%{y} vs %{x}: %{z:.3f}<extra>" + plain(method or "") + "</extra>",
        colorbar=dict(title=dict(text=plain(method or "r")), thickness=12)))
    fig.update_yaxes(autorange="reversed")
    return _layout(fig, max(320, 60 * len(names) + 140), title)


def loss_curve(history: pd.DataFrame, title: str | None = None) -> go.Figure:
    """Training curves: one line per measured column of ``history`` (train loss, dev Pearson...), and per
    seed when the history holds several runs. Identifier columns (``seed``, ``run``) are never drawn."""
    fig = go.Figure()
    ids = [c for c in ("seed", "run") if c in history.columns]
    measures = [c for c in history.columns if c != "epoch" and c not in ids
                and pd.api.types.is_numeric_dtype(history[c])]
    groups = history.groupby(ids, sort=True) if ids else [((), history)]
    for key, part in groups:
        key = key if isinstance(key, tuple) else (key,)
        suffix = "" if not ids else " (" + ", ".join(f"{i} {k}" for i, k in zip(ids, key)) + ")"
        for column in measures:
            fig.add_trace(go.Scatter(x=part["epoch"], y=part[column], mode="lines+markers",
                                     name=plain(column + suffix)))
    fig.update_layout(xaxis_title="epoch", legend=dict(orientation="h", y=1.12))
    return _layout(fig, 320, title)


def sentence_scores(scores: pd.DataFrame, candidate_names: Sequence[str], title: str | None = None) -> go.Figure:
    """Playground: one group of bars per metric, one bar per candidate (e.g. the sentence and its corruptions).

    Args:
      scores: :func:`muttlab.dashboard.services.score_sentences` output (metric, candidate, score, ...).
    """
    fig = go.Figure()
    for i, name in enumerate(candidate_names):
        part = scores[scores["candidate"] == i]
        # Cut before escaping, so that no entity is cut in half.
        fig.add_trace(go.Bar(x=_plain_all(part["metric"]), y=part["score"], name=plain(name),
                             marker_color=OKABE_ITO[i % len(OKABE_ITO)],
                             hovertemplate="%{x}: %{y:.4f}<extra>" + plain(str(name)[:40]) + "</extra>"))
    fig.update_layout(barmode="group", yaxis_title="score", legend=dict(orientation="h", y=1.15))
    return _layout(fig, 360, title)


def correlation_bars(table: pd.DataFrame, value: str, low: str | None = None, high: str | None = None,
                     group: str = "metric", colour: str | None = None, title: str | None = None) -> go.Figure:
    """Bars of one correlation column per metric, with CI whiskers when ``low``/``high`` columns are given."""
    fig = go.Figure()
    groups = [(None, table)] if colour is None else list(table.groupby(colour, sort=False))
    for key, part in groups:
        error = None
        if low and high and low in part and high in part:
            error = dict(type="data", symmetric=False, array=(part[high] - part[value]).to_numpy(),
                         arrayminus=(part[value] - part[low]).to_numpy())
        fig.add_trace(go.Bar(x=_plain_all(part[group]), y=part[value], error_y=error,
                             name=plain(key if key is not None else value)))
    fig.update_layout(barmode="group", yaxis_title=plain(value), legend=dict(orientation="h", y=1.12))
    return _layout(fig, 360, title)


def sweep_lines(table: pd.DataFrame, x: str, value: str, low: str | None = None, high: str | None = None,
                group: str = "metric", log_x: bool = False, title: str | None = None) -> go.Figure:
    """One line per metric of ``value`` against ``x`` (a study sweep), with a shaded interval when given."""
    fig = go.Figure()
    for i, (key, part) in enumerate(table.groupby(group, sort=False)):
        part = part.sort_values(x)
        colour = OKABE_ITO[i % len(OKABE_ITO)]
        if low and high and low in part and high in part:
            fig.add_trace(go.Scatter(x=list(part[x]) + list(part[x])[::-1],
                                     y=list(part[high]) + list(part[low])[::-1], fill="toself", opacity=0.15,
                                     line=dict(width=0), fillcolor=colour, hoverinfo="skip", showlegend=False))
        fig.add_trace(go.Scatter(x=part[x], y=part[value], mode="lines+markers", name=plain(key),
                                 line=dict(color=colour)))
    fig.update_layout(xaxis_title=plain(x.replace("_", " ")), yaxis_title=plain(value),
                      legend=dict(orientation="h", y=1.12))
    if log_x:
        fig.update_xaxes(type="log")
    return _layout(fig, 340, title)


# Playground cells: the verdict picks the hue (Okabe-Ito blue for pass, vermillion for fail: told apart by
# red-green colour-blind readers too), the size of the score change its depth. A change's sign says nothing
# by itself (TER's errors rise when BLEU's matches fall), so it must not pick the colour.
VERDICT_SCALE = [[0.0, FAIL_COLOUR], [0.5, "#fbe3d3"], [0.5, "#dbe9f6"], [1.0, PASS_COLOUR]]
VERDICT_FLOOR = 0.25  # the palest a cell gets: an unchanged score still shows its verdict's hue


def verdict_shade(passed: bool, change: float) -> float:
    """A Playground cell's position on :data:`VERDICT_SCALE`: positive for a pass, negative for a fail, further
    from zero the more the score moved (``change`` in %, its size capped at 100)."""
    size = 0.0 if np.isnan(change) else min(abs(change), 100.0) / 100.0
    return (1.0 if passed else -1.0) * (VERDICT_FLOOR + (1.0 - VERDICT_FLOOR) * size)


def change_heatmap(verdicts: pd.DataFrame, title: str | None = None) -> go.Figure:
    """Playground: which metrics notice each corruption of the candidate, and how much their scores move.

    Args:
      verdicts: rows of metric, corruption, s_orig, s_corr, passed (the engine's MUTT verdict).
    Returns:
      metric x corruption heatmap coloured by verdict first (:func:`verdict_shade`), the relative change
      100 * (s_corr - s_orig) / |s_orig| (%, as the metric reports it) second; each cell reads its change
      and pass or FAIL.
    """
    metrics = list(dict.fromkeys(verdicts["metric"]))
    corruptions = list(dict.fromkeys(verdicts["corruption"]))
    z = np.full((len(metrics), len(corruptions)), np.nan)
    text = np.full(z.shape, "", dtype=object)
    for row in verdicts.itertuples(index=False):
        i, j = metrics.index(row.metric), corruptions.index(row.corruption)
        change = 100.0 * (row.s_corr - row.s_orig) / abs(row.s_orig) if row.s_orig else np.nan
        z[i, j] = verdict_shade(bool(row.passed), change)
        shown = "n/a" if np.isnan(change) else f"{change:+.0f}%"
        text[i, j] = f"{shown} {'pass' if row.passed else 'FAIL'}"
    fig = go.Figure(go.Heatmap(
        z=z, x=_plain_all(corruptions), y=_plain_all(metrics), zmin=-1, zmax=1, colorscale=VERDICT_SCALE,
        text=text, texttemplate="%{text}", textfont=dict(size=11), xgap=2, ygap=2,
        hovertemplate="%{y} · %{x}: score change %{text}<extra></extra>",
        colorbar=dict(title=dict(text="verdict; depth: size of the change"), thickness=12,
                      tickvals=[-0.6, 0.6], ticktext=["FAIL", "pass"])))
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(tickangle=-30)
    return _layout(fig, max(320, 30 * len(metrics) + 200), title)


def severity_curves(curve: pd.DataFrame, corruption_label: str, strength_unit: str = "") -> go.Figure:
    """Pass rate (with its 95% interval) and mean score drop against a corruption's strength, one line per metric
    (:func:`muttlab.severity.severity_curve`'s frame); a curve that falls somewhere is drawn dashed."""
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.1,
                        subplot_titles=["pass rate (%)", "mean score drop (original − corruption, better-signed)"])
    for i, (metric, part) in enumerate(curve.groupby("metric", sort=False)):
        part = part.sort_values("strength")
        flagged = part["monotone"].iloc[0] != "yes"
        style = dict(color=OKABE_ITO[i % len(OKABE_ITO)], dash="dash" if flagged else "solid")
        name = f"{metric} (not monotone)" if flagged else str(metric)
        # The pass rate's 95% Wilson interval as error bars: a fall within them is noise, not flagged.
        interval = (dict(type="data", symmetric=False, array=part["pass_ci_high"] - part["pass_rate"],
                         arrayminus=part["pass_rate"] - part["pass_ci_low"], color=style["color"], thickness=1)
                    if "pass_ci_low" in part.columns else None)
        for col, column in ((1, "pass_rate"), (2, "mean_drop")):
            fig.add_trace(go.Scatter(x=part["strength"], y=part[column], mode="lines+markers", name=name,
                                     error_y=interval if col == 1 else None,
                                     legendgroup=str(metric), showlegend=col == 1, line=style,
                                     hovertemplate=f"{metric}<br>strength %{{x}}<br>{column.replace('_', ' ')} "
                                                   "%{y:.3f}<extra></extra>"), row=1, col=col)
    fig.update_xaxes(title_text=f"strength{f' ({strength_unit})' if strength_unit else ''}", dtick=1)
    fig.update_yaxes(range=[0, 100], row=1, col=1)
    return _layout(fig, 420, f"{corruption_label}: how the metrics react as the corruption gets stronger")


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


def comparison_chart(contingency: pd.DataFrame, joined: pd.DataFrame, metric: str, other: str,
                     title: str | None = None) -> go.Figure:
    """Two metrics on one cell (:class:`muttlab.dashboard.compare.Comparison`): the 2 x 2 table of paired
    outcomes, and the margin of each trial of ``joined`` (those both metrics scored) under both metrics,
    coloured by which metric alone gets it right."""
    fig = make_subplots(rows=1, cols=2, column_widths=[0.35, 0.65], horizontal_spacing=0.12,
                        subplot_titles=["paired outcomes (trials)", "margins (positive = right)"])
    cells = contingency.to_numpy()
    # rows: metric passes / fails; columns: other passes / fails. b (only metric) is [0, 1], c is [1, 0].
    colours = [[AGREE_COLOUR, ONLY_FIRST_COLOUR], [ONLY_SECOND_COLOUR, AGREE_COLOUR]]
    for i, row_label in enumerate(contingency.index):
        for j, column_label in enumerate(contingency.columns):
            fig.add_trace(go.Bar(x=[plain(column_label)], y=[1], base=[i], width=0.95, showlegend=False,
                                 marker_color=colours[i][j], text=[f"{cells[i, j]}"], textposition="inside",
                                 insidetextanchor="middle", textfont=dict(size=18, color="white"),
                                 hovertemplate=f"{plain(row_label)}, {plain(column_label)}: {cells[i, j]}"
                                               "<extra></extra>"), row=1, col=1)
    fig.update_yaxes(tickvals=[0.5, 1.5], ticktext=_plain_all(contingency.index), range=[2, 0], row=1, col=1)
    a = joined["margin"].to_numpy(dtype=float)
    b = joined["vs_margin"].to_numpy(dtype=float)
    x_low, x_high, _ = margin_axis(a)
    y_low, y_high, _ = margin_axis(b)
    first, second = joined["passed"].astype(bool), joined["vs_passed"].astype(bool)
    for mask, colour, name in ((first == second, AGREE_COLOUR, "both agree"),
                               (first & ~second, ONLY_FIRST_COLOUR, f"only {metric} right"),
                               (~first & second, ONLY_SECOND_COLOUR, f"only {other} right")):
        fig.add_trace(go.Scatter(x=np.clip(a[mask.to_numpy()], x_low, x_high), y=np.clip(b[mask.to_numpy()],
                                 y_low, y_high), mode="markers", name=plain(f"{name} ({int(mask.sum())})"),
                                 marker=dict(color=colour, size=6, opacity=0.75),
                                 text=_plain_all(joined.loc[mask, "trial"]),
                                 hovertemplate="%{text}<br>%{x:.4g} / %{y:.4g}<extra></extra>"), row=1, col=2)
    fig.add_vline(x=0, line_dash="dash", line_color="#374151", row=1, col=2)
    fig.add_hline(y=0, line_dash="dash", line_color="#374151", row=1, col=2)
    fig.update_xaxes(title_text=plain(f"margin, {metric}"), row=1, col=2)
    fig.update_yaxes(title_text=plain(f"margin, {other}"), row=1, col=2)
    fig.update_layout(barmode="overlay", legend=dict(orientation="h", y=-0.2))
    return _layout(fig, 380, title)
