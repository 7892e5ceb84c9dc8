"""Run: pick metrics, corruption types and reference counts, score them, and read the accuracy grid.

The grid is clickable: a cell opens its trials on the Drill-down page. A run can also be started from
the address bar, e.g. ``?metrics=BLEU-4,METEOR-1.5&corruptions=all&refs=5,10,20&run=1``.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from muttlab.dashboard import charts, services, ui

SELECTION_KEY = "run_selection"
CELL_KEY = "drilldown_cell"


def _from_query(name: str, options: list, default: list, cast=str) -> list:
    """Values of query parameter ``name`` (comma-separated, or ``all``) that are among ``options``."""
    raw = st.query_params.get(name)
    if not raw:
        return default
    if raw.strip().lower() == "all":
        return list(options)
    wanted = []
    for part in raw.split(","):
        try:
            value = cast(part.strip())
        except ValueError:
            continue
        if value in options and value not in wanted:
            wanted.append(value)
    return wanted or default


def open_cell(metric: str, corruption: str, refs: int) -> None:
    """Remember the cell and go to the Drill-down page."""
    st.session_state[CELL_KEY] = {"metric": metric, "corruption": corruption, "refs": int(refs)}
    st.switch_page("views/drilldown.py")


def _paper_layout(accuracy: pd.DataFrame, labels: dict[str, str]) -> pd.DataFrame:
    """Rows metrics, columns "corruption · refs": the layout of the MUTT paper's accuracy table."""
    wide = accuracy.assign(column=[f"{labels.get(c, c)} · {k}" for c, k in zip(accuracy["corruption"],
                                                                             accuracy["refs"])])
    grid = wide.pivot_table(index="metric", columns="column", values="accuracy", sort=False)
    return grid.round(1).reset_index()


def page() -> None:
    tolerance = services.settings().tolerance
    settings = ui.header("Run the metric unit tests",
                         "Each trial pairs an original sentence with a controlled corruption; a metric passes "
                         "when it scores the original higher (or, for meaning-preserving corruptions, about the "
                         f"same: |Δ| / s_orig ≤ {tolerance:g}).")
    suite = ui.load_suite(settings)
    if suite is None:
        return
    catalogue = services.catalogue_frame(settings)
    available = list(catalogue.loc[catalogue["available"], "metric"])
    with st.expander(f"Metrics: {len(available)} of {len(catalogue)} available", expanded=not available):
        ui.table(catalogue, "metrics", key="catalogue")
    if not available:
        st.error("No metric can be loaded in this installation; the table above says why for each one.")
        return

    corruptions = suite.corruptions()
    labels = services.corruption_labels(corruptions)
    max_refs = suite.max_refs()
    ref_options = [k for k in settings.ref_counts if k <= max_refs] or [max_refs]
    previous: services.Selection | None = st.session_state.get(SELECTION_KEY)
    default_metrics = [m for m in services.DEFAULT_METRICS if m in available] or available[:3]
    defaults = (list(previous.metrics) if previous else _from_query("metrics", available, default_metrics),
                list(previous.corruptions) if previous else _from_query("corruptions", corruptions, corruptions),
                list(previous.ref_counts) if previous else _from_query("refs", ref_options, ref_options, int))

    with st.form("run-form", border=True):
        left, middle, right = st.columns([4, 4, 2])
        metrics = left.multiselect("Metrics", available, default=[m for m in defaults[0] if m in available],
                                   key="run-metrics")
        chosen = middle.multiselect("Corruption types", corruptions, default=defaults[1],
                                    format_func=lambda c: labels.get(c, c), key="run-corruptions")
        refs = right.multiselect("References", ref_options, default=defaults[2], key="run-refs")
        submitted = st.form_submit_button("Run", type="primary", icon=":material/play_arrow:")
    if submitted or (previous is None and st.query_params.get("run") == "1"):
        selection = services.Selection(tuple(metrics), tuple(c for c in corruptions if c in chosen),
                                       tuple(sorted(refs)))
        st.session_state[SELECTION_KEY] = selection
    selection = st.session_state.get(SELECTION_KEY)
    if selection is None:
        st.info("Choose metrics, corruption types and reference counts, then press **Run**. Scores come from "
                "the shared cache when they have been computed before.", icon=":material/touch_app:")
        return
    if selection.empty:
        st.warning("Choose at least one metric, one corruption type and one reference count.")
        return

    results = ui.with_progress("Starting…", lambda progress: services.run_grid(settings, selection, progress=progress),
                               failure="The run failed", unit=" metrics")
    if results is None:
        return
    accuracy = results.accuracy()

    n_trials = results.table.drop_duplicates("trial").shape[0]
    a, b, c, d = st.columns(4)
    a.metric("trials", f"{n_trials:,}")
    b.metric("metrics", len(selection.metrics))
    c.metric("scores", f"{2 * len(results.table):,}")
    d.metric("mean accuracy", f"{accuracy['accuracy'].mean():.1f}%")

    st.subheader("Accuracy")
    st.caption("Percentage of trials each metric gets right, per corruption type and number of references. "
               "Hover a cell for its counts and 95% interval; click it to read its trials.")
    fig = charts.accuracy_heatmap(accuracy, labels, metric_order=selection.metrics,
                                  corruption_order=selection.corruptions)
    state = ui.chart(fig, "mutt-accuracy", key="grid", on_select="rerun", selection_mode="points")
    cell = charts.selected_cell(state)
    if cell is not None:
        open_cell(*cell)

    with st.container(border=True):
        st.markdown("**Open a cell**")
        x, y, z, w = st.columns([3, 3, 2, 2], vertical_alignment="bottom")
        metric = x.selectbox("Metric", selection.metrics, key="cell-metric")
        corruption = y.selectbox("Corruption", selection.corruptions, format_func=lambda c: labels.get(c, c),
                                 key="cell-corruption")
        k = z.selectbox("References", selection.ref_counts, key="cell-refs")
        if w.button("Open trials", icon=":material/manage_search:", key="cell-open"):
            open_cell(metric, corruption, k)

    tab_paper, tab_tidy, tab_sig = st.tabs(["Paper layout", "Accuracy with intervals", "Signatures"])
    with tab_paper:
        ui.table(_paper_layout(accuracy, labels), "mutt-accuracy-grid", key="paper")
    with tab_tidy:
        tidy = accuracy.assign(label=accuracy["corruption"].map(labels))
        ui.table(tidy, "mutt-accuracy", key="tidy")
        ui.csv_download("Download every trial's scores (CSV)", results.table, "mutt-scores", "scores-csv")
    with tab_sig:
        sigs = pd.DataFrame({"metric": list(results.signatures), "signature": list(results.signatures.values())})
        ui.table(sigs, "mutt-signatures", key="signatures")


page()
