"""A one-file HTML report of a dashboard view, its figures drawn offline (plotly.js inlined once, each figure the
one the page draws: :mod:`muttlab.dashboard.charts`), built without Streamlit.

The view is what the dashboard's "Link to this view" gives: ``/drilldown?metric=METEOR-1.5&corruption=neg_subj&refs=5``
or just its query string (``page=drilldown&...``). ``muttlab report --view ... --output report.html`` and the
dashboard's report download both call :func:`build_report`. The document is written by one Jinja2 template with
autoescape on (:mod:`muttlab.dashboard.report_document`): every name and sentence is text. The Run and Drill-down
views are built here; Severity, Published vs measured, Human judgments and Correlation studies in
:mod:`muttlab.dashboard.report_views`.

A drill-down report is the page's view: the same suite (``suite=``, challenge-set files included), comparison
(``vs=``), list (``show=``) and search (``q=``), in the page's order, every trial the page lists (over its pages),
and every number written by the functions the page writes it with (:mod:`muttlab.dashboard.cell_view`,
:mod:`~muttlab.dashboard.compare`, :mod:`~muttlab.dashboard.number_format`). A Run view's accuracy table writes
its percentages as the grid's tooltips and the heatmap's hovers do.

Static images: none. A figure's toolbar saves it as a PNG in the browser, in the report as on the page; a report
that drew PNGs itself would need a browser on the server (plotly's kaleido drives Chromium) for what the file's
reader already has.
"""
from __future__ import annotations

from typing import Callable

import pandas as pd

from muttlab import api
from muttlab.dashboard import cell_view, charts, report_views
from muttlab.dashboard.compare import compare
from muttlab.dashboard import view as link_view
from muttlab.dashboard.report_document import Section, render
from muttlab.dashboard.view import View, ViewError
from muttlab.errors import MuttlabError
from muttlab.settings import Settings

PAGES = ("run", "drilldown", *report_views.SECTIONS)


def parse_view(settings: Settings, text: str) -> View:
    """The checked :class:`~muttlab.dashboard.view.View` of a dashboard link, a path with a query string, or a
    bare query string (:func:`muttlab.dashboard.view.strict`: every problem is an error).

    Raises:
      ViewError: an unknown page, key or name; a suite that is not a named one; a malformed number.
    """
    params = link_view.parse_link(text)
    params.setdefault("page", "run")
    if params["page"] not in PAGES:
        raise ViewError(f"no report for the page {params['page']!r}; reports cover the views {', '.join(PAGES)} "
                        "(copy the link from one of those pages)")
    return link_view.strict(params, settings, api.registry_for(settings).names)


def _labels(names) -> dict[str, str]:
    out = {}
    for name in names:
        try:
            out[name] = api.corruption_type(name).label
        except KeyError:
            out[name] = name
    return out


def _run_section(settings: Settings, view: View) -> list[Section]:
    metrics, corruptions = (([] if view.values(k) == ["all"] else view.values(k)) for k in ("metrics", "corruptions"))
    refs = [int(k) for k in view.values("refs")]
    if view.value("run") == "1":
        suite_name = view.value("suite", "default")
        if suite_name not in link_view.SUITES:  # api.load_suite would read any other name as a path
            raise MuttlabError(f"the Run view's report covers the suites {' and '.join(link_view.SUITES)}; open "
                               "a challenge set or your own suite on the Drill-down page")
        results = api.run_grid(settings, metrics or None, corruptions or None, refs or None, suite=suite_name)
        accuracy = results.accuracy()
        note = f"Computed now on suite {results.suite}, judged under the rules {results.rules.signature()}."
    else:
        snapshot = api.snapshot("grid")
        if snapshot is None:
            raise MuttlabError("this installation has no precomputed grid; add run=1 to the view to compute it")
        if snapshot.stamp.rules != settings.rules.signature():
            # A grid judged by other rules is never given as this report's numbers.
            raise MuttlabError(f"the precomputed grid was judged under the rules {snapshot.stamp.rules}, not under "
                               f"this report's ({settings.rules.signature()}); add run=1 to the view to compute it "
                               "under them")
        accuracy = snapshot.content.select(metrics, corruptions, refs)
        note = (f"Precomputed grid of {snapshot.created} (muttlab {snapshot.muttlab_version}, suite "
                f"{snapshot.content.suite}), judged under the rules {snapshot.stamp.rules}.")
    if accuracy.empty:
        raise MuttlabError("the view selects no cell; check its metrics, corruptions and refs")
    labels = _labels(dict.fromkeys(accuracy["corruption"]))
    return [Section().heading("Accuracy").note(note).figure(charts.accuracy_heatmap(accuracy, labels))
            .table(accuracy)]


def _held(held: Callable[[str], object] | None, suite_name: str):
    if held is None:
        raise MuttlabError(f"suite={suite_name.partition(':')[0]}:… names something only the dashboard server that "
                           "holds it can read (an upload, a suite of your sentences); download the report from "
                           "that page's “Link to this view”")
    return held(suite_name)


def _cells(settings: Settings, view: View, metrics: list[str], corruption: str, refs: int | None,
           held: Callable[[str], object] | None) -> tuple[dict[str, pd.DataFrame], dict[str, str], int]:
    """Each metric's cell (:mod:`muttlab.dashboard.cell_view`), the metrics' signatures, and how many records of
    the phenomenon the data set marks as not applied; scored by the engine as the page's services score it."""
    suite_name = view.value("suite", "default")
    if cell_view.is_challenge(suite_name):
        kind, _, rest = suite_name.partition(":")
        data, name = cell_view.read_data_file(settings, rest) if kind == "file" else _held(held, suite_name)
        suite_file = api.read_suite(data, format=view.value("format"), name=name)
        cell_view.require_contrastive(suite_file, name)
        results = api.run_challenge(settings, suite_file, metrics)
        return ({m: cell_view.from_challenge(results.table, suite_file, m, corruption) for m in metrics},
                dict(results.signatures), suite_file.not_applied.get(corruption, 0))
    if cell_view.suite_kind(suite_name) == "mine":
        suite = _held(held, suite_name)
    else:
        suite = api.load_suite(settings, suite_name)
    results = api.run_grid(settings, metrics, [corruption], [refs], suite=suite)
    by_id = {t.id: t for t in suite.trials}
    return ({m: cell_view.from_grid(results.table, m, corruption, refs, by_id) for m in metrics},
            dict(results.signatures), 0)


def _trials_frame(shown: pd.DataFrame, other: str | None) -> pd.DataFrame:
    """The listed trials as the page's cards write them (:func:`muttlab.dashboard.cell_view.trial_numbers`)."""
    rows = []
    for row in shown.itertuples(index=False):
        line = {"trial": row.trial, "verdict": cell_view.verdict_word(row.passed, row.unsupported),
                **dict(cell_view.trial_numbers(row))}
        if other is not None:
            line[f"{other} verdict"] = cell_view.verdict_word(row.vs_passed, row.vs_unsupported)
            line[f"{other} margin"] = cell_view.vs_margin_text(row)
        line.update({"original text": row.original, "corrupted text": row.corrupted})
        rows.append(line)
    return pd.DataFrame(rows)


def _drilldown_section(settings: Settings, view: View,
                       held: Callable[[str], object] | None) -> list[Section]:
    """The Drill-down page's view: its counts, the comparison of ``vs=``, and the trials it lists (``show=``,
    ``q=``), in its order, every number written by the page's own functions."""
    metric, corruption = view.value("metric"), view.value("corruption")
    if not metric or not corruption:
        raise MuttlabError("a drill-down view needs metric= and corruption= (copy the link from the Drill-down page)")
    challenge = cell_view.is_challenge(view.value("suite", "default"))
    refs = None if challenge else int(view.values("refs")[0]) if view.values("refs") else 5
    other = view.value("vs")
    other = other if other and other != metric else None
    cells, signatures, skipped = _cells(settings, view, [metric] + ([other] if other else []), corruption, refs, held)
    cell = cells[metric]
    comparison = compare(cell, cells[other], metric, other) if other else None
    show = cell_view.effective_show(view.value("show", "fails"), comparison)
    shown = cell_view.shown(cell, show, view.value("q", ""), comparison)
    found = cell_view.counts(cell)
    label = corruption if challenge else _labels([corruption])[corruption]
    title = f"{metric} on {label}" + (f", {refs} references" if refs is not None else "")
    listed = {"only-metric": f"only {metric} right", "only-vs": f"only {other} right"}.get(show, show)
    section = Section().heading(f"Drill-down: {title}").numbers(cell_view.header_numbers(found), "counts")
    if found.unsupported:
        section.note(f"{found.unsupported} trial(s) {metric} cannot score are unsupported.")
    if skipped:
        section.note(f"{skipped} record(s) of this phenomenon the data set marks as not applied are no test "
                     "items: not listed, never scored.")
    section.note("Signature", code=signatures[metric])
    if comparison is not None:
        section.heading(f"Compared with {other} (McNemar)", 3).numbers(comparison.numbers(), "comparison")
    query = view.value("q", "")
    section.note(f"{cell_view.shown_text(len(shown), found)}: {listed}{f', search “{query}”' if query else ''}.",
                 css="shown")
    section.figure(charts.margin_histogram(cell, f"Margins: {title}"))
    if comparison is not None:
        section.figure(charts.comparison_chart(comparison.contingency(), comparison.joined[comparison.both_judged],
                                               metric, other, f"{metric} vs {other}: {title}"))
    trials = _trials_frame(shown, other)
    if not trials.empty:
        section.table(trials, css="trials", formatters={})  # already written by the page's functions
    return [section]


def build_report(settings: Settings, view_text: str, held: Callable[[str], object] | None = None) -> str:
    """The HTML document of the view (plotly.js inlined once, every figure drawn and interactive offline).

    ``held`` gives what only a dashboard server holds for a link's ``suite=``: an upload's (bytes, name) for
    ``upload:<sha256>``, the suite for ``mine:<id>``; without it (the command line) such a view is an error.

    Raises:
      MuttlabError: a view that :func:`parse_view` refuses or that selects nothing, or what the engine raises.
    """
    view = parse_view(settings, view_text)
    if view.page == "run":
        sections = _run_section(settings, view)
    elif view.page == "drilldown":
        sections = _drilldown_section(settings, view, held)
    else:
        sections = report_views.SECTIONS[view.page](settings, view)
    return render(view.page, view.query(), sections)
