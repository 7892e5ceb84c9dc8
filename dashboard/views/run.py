"""Run: pick metrics, corruption types and reference counts, score them, and read the accuracy grid.

A first visit shows the grid that ships with the package (every study metric, precomputed by
``scripts/precompute_grid.py``); Run recomputes any part of it live. The view lives in the address bar
(``?metrics=BLEU-4,METEOR-1.5&corruptions=all&refs=5,10,20&suite=store&run=1``), so a reload or a shared
link restores it. A link never starts a run: its ``run=1`` shows the run's numbers if the server has them
already and otherwise only fills the form, for the visitor to press Run. The grid is clickable: a cell opens
its trials on the Drill-down page.
"""
from __future__ import annotations

import time

import pandas as pd
import streamlit as st

from muttlab.dashboard import charts, glossary, number_format, services, ui
from muttlab.dashboard.orientation import landing_notes
from muttlab.dashboard.shared import served
from muttlab.dashboard.grid_table import accuracy_grid_html
from muttlab.dashboard.grid_progress import run_with_progress
from muttlab.errors import MuttlabError

SELECTION_KEY = "run_selection"
LIVE_KEY = "run_live"  # set once this session has pressed Run: from then on its selections are scored
CELL_KEY = "drilldown_cell"
PAINTED_KEY = "run_first_paint_done"
CANCELLED_KEY = "run_cancelled"
FIRST_PAINT_PAUSE_S = 0.3


def _first_paint_pause() -> None:
    """On a session's first run only: a short pause once the grid is sent, before the widgets around it.

    A browser fetches the script that draws an HTML element (and DOMPurify) when the first one arrives. Sent
    together with the form, it is fetched alongside the ~25 scripts the form's widgets need, all served by the
    one busy server process, and the grid waits for the lot. A bare app that sends the same grid and form
    showed its grid in a new tab after 2.04 s, with this pause 1.53 s, a bare Streamlit page 1.44 s (median
    of 9 tabs each, load 13). Later runs of the session have those scripts already and do not pause, nor does
    a session with no browser (AppTest).
    """
    if st.session_state.get(PAINTED_KEY) or not served():
        return
    st.session_state[PAINTED_KEY] = True
    time.sleep(FIRST_PAINT_PAUSE_S)


def open_cell(metric: str, corruption: str, refs: int, suite_name: str = "default") -> None:
    """Go to the Drill-down page of this cell; the cell travels in the address, so the view is a link."""
    st.session_state[CELL_KEY] = {"metric": metric, "corruption": corruption, "refs": int(refs)}
    st.switch_page("views/drilldown.py", query_params=ui.encode_params(
        {"metric": metric, "corruption": corruption, "refs": int(refs),
         "suite": suite_name if suite_name != "default" else None}))


def _paper_layout(accuracy: pd.DataFrame, labels: dict[str, str]) -> pd.DataFrame:
    """Rows metrics, columns "corruption · refs": the layout of the MUTT paper's accuracy table."""
    wide = accuracy.assign(column=[f"{labels.get(c, c)} · {k}" for c, k in zip(accuracy["corruption"],
                                                                             accuracy["refs"])])
    grid = wide.pivot_table(index="metric", columns="column", values="accuracy", sort=False)
    return grid.round(1).reset_index()


def _paper_table(accuracy: pd.DataFrame, labels: dict[str, str], key: str) -> None:
    """:func:`_paper_layout` as a table, each accuracy written as the grid's tooltips write it."""
    layout = _paper_layout(accuracy, labels)
    ui.table(layout, "mutt-accuracy-grid", key=key, column_config={
        column: st.column_config.NumberColumn(format=number_format.PERCENT_FORMAT) for column in layout.columns[1:]})


def page() -> None:
    tolerance = services.settings().rules.tolerance
    settings = ui.header("Run the metric unit tests",
                         "Each trial pairs an original sentence with a controlled corruption; a metric passes "
                         "when it scores the original higher (or, for meaning-preserving corruptions, about the "
                         f"same: |Δ| / s_orig ≤ {tolerance:g}).")
    landing_notes(settings)
    live = bool(st.session_state.get(LIVE_KEY))
    cancelled = st.session_state.pop(CANCELLED_KEY, False)
    if cancelled:
        st.info("Run cancelled: the pieces not yet started were dropped, and what was scored stays in the cache "
                "for the next Run.", icon=":material/stop_circle:")
    linked_run = not live and not cancelled and ui.query_value("run") == "1"
    # The live view is drawn above what the page showed before (the precomputed grid), which stays until the
    # run's grid replaces it: a run in progress never leaves the page empty but for its bar.
    controls, live_view, below = st.container(), st.container(), st.empty()
    if not live:
        # The precomputed grid is drawn before the form above it is filled: it needs neither the trials nor
        # the metric catalogue, which a server that has just started may still be loading.
        with below.container():
            _shipped_view(settings)
    with controls:
        submitted, live, suite_name, selection = _controls(settings, live)
    if not live and linked_run and selection is not None and not selection.empty:
        finished = services.finished_run(settings, selection, suite_name)
        if finished is None:
            st.info("This link shows a live run: press **Run** to compute it (the form holds its selection).",
                    icon=":material/touch_app:")
        else:
            below.empty()
            with live_view:
                _live_view(settings, selection, suite_name, finished)
            return
    if not live:
        ui.copy_link("run")
        return
    if selection is None:
        return
    with live_view:
        _live_view(settings, selection, suite_name, previous=below)


def _controls(settings, live: bool):
    """The catalogue and the form. Returns (submitted, live, suite name, Selection or None)."""
    suite = ui.load_suite(settings)
    if suite is None:
        return False, False, "default", None
    catalogue = services.catalogue_frame(settings)
    available = list(catalogue.loc[catalogue["available"], "metric"])
    ui.folded_table(f"Metrics: {len(available)} of {len(catalogue)} available", catalogue, "metrics",
                    key="run-catalogue", expanded=not available)
    if not available:
        st.error("No metric can be loaded in this installation; the table above says why for each one.")
        return False, False, "default", None

    corruptions = suite.corruptions()
    labels = services.corruption_labels(corruptions)
    max_refs = suite.max_refs()
    ref_options = [k for k in settings.ref_counts if k <= max_refs] or [max_refs]
    suite_name = ui.query_value("suite", "default")
    suite_name = suite_name if suite_name in services.SUITES else "default"
    # On the public demo the form starts from the quick ones: the others are refused there (services.budget).
    default_metrics = [m for m in services.DEFAULT_METRICS
                       if m in available and not services.slow_metrics(settings, [m])] or available[:3]
    defaults = (ui.query_list("metrics", available, default_metrics),
                ui.query_list("corruptions", corruptions, corruptions),
                ui.query_list("refs", ref_options, ref_options, int))

    with st.form("run-form", border=True):
        left, middle, right, far = st.columns([4, 4, 2, 2])
        metrics = left.multiselect("Metrics", available, default=defaults[0], key="run-metrics")
        chosen = middle.multiselect("Corruption types", corruptions, default=defaults[1],
                                    format_func=lambda c: labels.get(c, c), key="run-corruptions")
        refs = right.multiselect("References", ref_options, default=defaults[2], key="run-refs",
                                 help=glossary.term("references (5/10/20)"))
        suite_choice = far.selectbox("Trials", list(services.SUITES), index=list(services.SUITES).index(suite_name),
                                     format_func=services.SUITES.get, key="run-suite")
        submitted = st.form_submit_button("Run", type="primary", icon=":material/play_arrow:")
    ui.demo_caption(settings)
    if submitted:
        suite_name, live = suite_choice, True
        st.session_state[LIVE_KEY] = True
        ui.write_query({"metrics": metrics, "corruptions": [c for c in corruptions if c in chosen],
                        "refs": sorted(refs), "suite": suite_name if suite_name != "default" else None, "run": 1})
    selection = services.Selection(tuple(metrics), tuple(c for c in corruptions if c in chosen), tuple(sorted(refs)))
    return submitted, live, suite_name, selection


def _live_view(settings, selection: services.Selection, suite_name: str, results=None, previous=None) -> None:
    """The run of the form's selection (memoised for the whole server) and its grid; ``results`` when the
    server had them already. ``previous`` holds what the page showed before (the precomputed grid): it stays
    on the page while the run is computed and is emptied when the run's grid is drawn."""
    st.session_state[SELECTION_KEY] = selection
    if selection.empty:
        st.warning("Choose at least one metric, one corruption type and one reference count.")
        return
    labels = services.corruption_labels(selection.corruptions)

    if results is None:
        results = run_with_progress(settings, selection, suite_name, _cancel, "run-cancel")
    if results is None:
        return
    if previous is not None:
        previous.empty()
    accuracy = results.accuracy()

    n_trials = results.table.drop_duplicates("trial").shape[0]
    a, b, c, d = st.columns(4)
    a.metric("trials", f"{n_trials:,}")
    b.metric("metrics", len(selection.metrics))
    c.metric("scores", f"{2 * len(results.table):,}")
    d.metric("mean accuracy", number_format.percent(accuracy["accuracy"].mean()))

    st.subheader("Accuracy")
    st.caption("Percentage of trials each metric gets right, per corruption type and number of references, judged "
               f"under this server's rules ({results.rules.signature()}). Hover a cell for its counts, 95% interval "
               "and tie rate; click it to read its trials.")
    _grid(accuracy_grid_html(accuracy, labels, selection.metrics, selection.corruptions, suite=suite_name),
          accuracy, labels, selection.metrics, selection.corruptions, "mutt-accuracy", "grid")
    for warning in results.warnings:
        st.warning(ui.md_text(warning), icon=":material/warning:")
    if suite_name == "store":
        st.caption(f"Scored on `{results.suite}`: the pair store as of its latest revision, edits included.")
    ui.copy_link("run")

    with st.container(border=True):
        st.markdown("**Open a cell**")
        x, y, z, w = st.columns([3, 3, 2, 2], vertical_alignment="bottom")
        metric = x.selectbox("Metric", selection.metrics, key="cell-metric")
        corruption = y.selectbox("Corruption", selection.corruptions, format_func=lambda c: labels.get(c, c),
                                 key="cell-corruption")
        k = z.selectbox("References", selection.ref_counts, key="cell-refs")
        if w.button("Open trials", icon=":material/manage_search:", key="cell-open"):
            open_cell(metric, corruption, k, suite_name)

    tables = st.expander("Tables: paper layout, accuracy with intervals, signatures", key="run-tables",
                         on_change="rerun", icon=":material/table:")
    if tables.open:  # drawn only when asked for: three tables would slow the grid's first paint
        with tables:
            tab_paper, tab_tidy, tab_sig = st.tabs(["Paper layout", "Accuracy with intervals", "Signatures"])
            with tab_paper:
                _paper_table(accuracy, labels, "paper")
            with tab_tidy:
                tidy = accuracy.assign(label=accuracy["corruption"].map(labels))
                ui.table(tidy, "mutt-accuracy", key="tidy")
                scores = results.table.assign(signature=results.table["metric"].map(
                    {m: results.signature(m) for m in results.signatures}))
                ui.csv_download("Download every trial's scores (CSV)", scores, "mutt-scores", "scores-csv")
            with tab_sig:
                sigs = pd.DataFrame({"metric": list(results.signatures),
                                     "signature": [results.signature(m) for m in results.signatures]})
                ui.table(sigs, "mutt-signatures", key="signatures")


def _cancel() -> None:
    """Cancel's click: the rerun it starts stops the run (at its next progress report or queue poll, where
    Streamlit delivers the rerun), and this session is no longer live, so the rerun does not start it again."""
    st.session_state[LIVE_KEY] = False
    st.session_state[CANCELLED_KEY] = True


def _grid(body: str, cells: pd.DataFrame, labels: dict[str, str], metrics, corruptions, name: str, key: str) -> None:
    """The grid as one HTML table of links (``body``, from :mod:`muttlab.dashboard.grid_table`), then its CSV and
    the heatmap chart as downloads, both written only when clicked."""
    st.html(body)
    ui.grid_keys()
    _first_paint_pause()
    left, right = st.columns(2)
    with left:
        ui.csv_download("Download CSV", cells, name, f"{key}-csv")
    with right:
        ui.chart_download(lambda: charts.accuracy_heatmap(cells, labels, metric_order=metrics,
                                                          corruption_order=corruptions), name, key)


def _shipped_view(settings) -> None:
    """The grid that ships with the package, filtered by the address bar; nothing is scored. It is presented as
    this server's numbers only while its stamp is this server's (data, code, metrics, rules); otherwise it says
    what differs (a server judging by other rules never shows the shipped grid as current)."""
    try:
        snapshot = services.shipped_grid()
    except MuttlabError as exc:
        st.error(f"The precomputed grid cannot be read: {ui.md_text(exc)}")
        snapshot = None
    if snapshot is None:
        st.info("Choose metrics, corruption types and reference counts, then press **Run**. Scores come from "
                "the shared cache when they have been computed before.", icon=":material/touch_app:")
        return
    grid = snapshot.content
    metrics = ui.query_list("metrics", grid.metrics, grid.metrics)
    corruptions = ui.query_list("corruptions", grid.corruptions, grid.corruptions)
    ref_counts = ui.query_list("refs", grid.ref_counts, grid.ref_counts, int)
    labels = services.corruption_labels(grid.corruptions)
    # Data, code and rules need no metric loaded: known before the grid is drawn.
    other = services.shipped_differences(settings, snapshot, signatures=False)
    st.subheader("Accuracy (precomputed)" if not other else "Accuracy precomputed under another stamp")
    st.caption(f"Every study metric on the MUTT experiment sets ({grid.suite}), computed {snapshot.created} with "
               f"muttlab {snapshot.muttlab_version}, judged under the rules {snapshot.stamp.rules}"
               + ("; the same numbers a Run gives. " if not other else ". ")
               + "Press **Run** to recompute any part live, or click a cell to read its trials"
               + (" (this server has no data dir: a cell opens the bundled sample's trials of its type, with their "
                  "own counts)." if settings.using_sample else "."))
    notice = st.container()
    if other:
        notice.warning("**Not this server's numbers.** " + ui.md_text("; ".join(other)) + ". Press **Run** for "
                       "the numbers under this server's rules (" + ui.md_text(settings.rules.signature()) + ").",
                       icon=":material/rule:")
    cells = grid.select(metrics, corruptions, ref_counts)
    _grid(services.shipped_grid_html(tuple(metrics), tuple(corruptions), tuple(ref_counts)), cells, labels, metrics,
          corruptions, "mutt-accuracy-precomputed", "shipped-grid")
    # After the grid is on its way to the browser: the catalogue may still be loading on a fresh server.
    changed = [d for d in services.shipped_differences(settings, snapshot) if d not in other]
    if changed:
        notice.warning("These precomputed cells are outdated here, Run them for current numbers: "
                       + ui.md_text("; ".join(changed)), icon=":material/history:")
    tables = st.expander("Tables: paper layout, accuracy with intervals, signatures", key="shipped-tables",
                         on_change="rerun", icon=":material/table:")
    if not tables.open:  # drawn only when asked for: three tables would slow the grid's first paint
        return
    with tables:
        tab_paper, tab_tidy, tab_sig = st.tabs(["Paper layout", "Accuracy with intervals", "Signatures"])
        with tab_paper:
            _paper_table(cells, labels, "shipped-paper")
        with tab_tidy:
            ui.table(cells.assign(label=cells["corruption"].map(labels)), "mutt-accuracy", key="shipped-tidy")
        with tab_sig:
            here = {i.name: i.signature for i in services.metric_catalogue(settings) if i.available}
            shipped = snapshot.stamp.signatures
            sigs = pd.DataFrame({"metric": list(grid.signatures), "signature": list(grid.signatures.values()),
                                 "current": [not other and here.get(m, shipped.get(m)) == shipped.get(m)
                                             for m in grid.signatures]})
            ui.table(sigs, "mutt-signatures", key="shipped-signatures")
            if grid.skipped:
                ui.caption_text("Not in the precomputed grid: "
                                + "; ".join(f"{m} ({r})" for m, r in grid.skipped.items()))

page()
