"""A one-file HTML report of a dashboard view, plotly embedded (it opens offline), built without Streamlit.

The view is what the dashboard's "Link to this view" gives: ``/drilldown?metric=METEOR-1.5&corruption=neg_subj&refs=5``
or just its query string (``page=drilldown&...``). ``muttlab report --view ... --output report.html`` and the
dashboard's report download both call :func:`build_report`. Every sentence is HTML-escaped.
"""
from __future__ import annotations

import html
import pandas as pd
import plotly.graph_objects as go

from muttlab import api
from muttlab.corruptions import catalog
from muttlab.dashboard import charts, facts, shipped
from muttlab.dashboard import view as link_view
from muttlab.dashboard.view import View, ViewError
from muttlab.errors import MuttlabError
from muttlab.settings import Settings

PAGES = ("run", "drilldown")
TRIALS_SHOWN = 200


def parse_view(settings: Settings, text: str) -> View:
    """The checked :class:`~muttlab.dashboard.view.View` of a dashboard link, a path with a query string, or a
    bare query string (:func:`muttlab.dashboard.view.strict`: every problem is an error).

    Raises:
      ViewError: an unknown page, key or name; a suite that is not a named one; a malformed number.
    """
    from muttlab.engine.runner import registry_for

    params = link_view.parse_link(text)
    params.setdefault("page", "run")
    if params["page"] not in PAGES:
        raise ViewError(f"no report for the page {params['page']!r}; reports cover the views {', '.join(PAGES)} "
                        "(copy the link from the Run or Drill-down page)")
    return link_view.strict(params, settings, registry_for(settings).names)


def _labels(names) -> dict[str, str]:
    out = {}
    for name in names:
        try:
            out[name] = catalog.get(name).label
        except KeyError:
            out[name] = name
    return out


def _table_html(frame: pd.DataFrame) -> str:
    return frame.to_html(index=False, escape=True, border=0, classes="grid", float_format=lambda v: f"{v:.4g}")


def _run_section(settings: Settings, view: View) -> tuple[str, list[go.Figure], str]:
    metrics, corruptions = (([] if view.values(k) == ["all"] else view.values(k)) for k in ("metrics", "corruptions"))
    refs = [int(k) for k in view.values("refs")]
    if view.value("run") == "1":
        results = api.run_grid(settings, metrics or None, corruptions or None, refs or None,
                               suite=view.value("suite", "default"))
        accuracy, note = results.accuracy(), f"Computed now on suite {results.suite}."
    else:
        grid = shipped.load()
        if grid is None:
            raise MuttlabError("this installation has no precomputed grid; add run=1 to the view to compute it")
        accuracy = shipped.select(grid, metrics, corruptions, refs)
        note = f"Precomputed grid of {grid.created} (muttlab {grid.muttlab_version}, suite {grid.suite})."
    if accuracy.empty:
        raise MuttlabError("the view selects no cell; check its metrics, corruptions and refs")
    labels = _labels(dict.fromkeys(accuracy["corruption"]))
    fig = charts.accuracy_heatmap(accuracy, labels)
    return f"<h2>Accuracy</h2><p>{html.escape(note)}</p>", [fig], _table_html(accuracy)


def _drilldown_section(settings: Settings, view: View) -> tuple[str, list[go.Figure], str]:
    metric, corruption = view.value("metric"), view.value("corruption")
    if not metric or not corruption:
        raise MuttlabError("a drill-down view needs metric= and corruption= (copy the link from the Drill-down page)")
    refs = int(view.values("refs")[0]) if view.values("refs") else 5
    suite = api.load_suite(settings, view.value("suite", "default"))
    results = api.run_grid(settings, [metric], [corruption], [refs], suite=suite)
    cell = results.table
    by_id = {t.id: t for t in suite.trials}
    cell = cell.assign(original=[by_id[t].original for t in cell["trial"]],
                       corrupted=[by_id[t].corrupted for t in cell["trial"]])
    show = view.value("show", "fails")
    shown = cell[~cell["passed"]] if show == "fails" else cell[cell["passed"]] if show == "passes" else cell
    shown = shown.sort_values("margin").head(TRIALS_SHOWN)
    title = f"{metric} on {_labels([corruption])[corruption]}, {refs} references"
    fig = charts.margin_histogram(cell, f"Margins: {title}")
    ok = int(cell["passed"].sum())
    head = (f"<h2>Drill-down: {html.escape(title)}</h2><p>{ok} of {len(cell)} trials passed "
            f"({100.0 * ok / max(1, len(cell)):.1f}%); signature "
            f"<code>{html.escape(results.signatures[metric])}</code>."
            f" Showing {len(shown)} {html.escape(show)} trials.</p>")
    columns = ["trial", "passed", "s_orig", "s_corr", "margin", "original", "corrupted"]
    return head, [fig], _table_html(shown[columns])


def build_report(settings: Settings, view_text: str) -> str:
    """The HTML document of the view (plotly.js embedded once, every figure interactive offline).

    Raises:
      MuttlabError: a view that :func:`parse_view` refuses or that selects nothing, or what the engine raises.
    """
    view = parse_view(settings, view_text)
    head, figures, table = (_run_section if view.page == "run" else _drilldown_section)(settings, view)
    plots = [charts.offline_html(fig, full_html=False) if i == 0 else fig.to_html(include_plotlyjs=False,
                                                                                   full_html=False)
             for i, fig in enumerate(figures)]
    footer = "<br>".join(html.escape(line) for line in facts.collect().lines())
    style = ("body{font-family:sans-serif;margin:2em;color:#111} table.grid{border-collapse:collapse;font-size:13px}"
             " table.grid td,table.grid th{border:1px solid #ddd;padding:3px 6px} footer{color:#555;font-size:12px;"
             "margin-top:2em}")
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>MUTT Lab report: {html.escape(view.page)}"
            f"</title><style>{style}</style></head><body><h1>MUTT Lab report</h1>"
            f"<p>View: <code>{html.escape(view.query())}</code></p>{head}{''.join(plots)}{table}"
            f"<footer>{footer}</footer></body></html>")
