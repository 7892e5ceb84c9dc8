"""Correlation studies: metric scores against human ratings of Flickr8k captions (Flickr8K-Expert and
CrowdFlower, Kendall τ with bootstrap CIs) and the ΔBLEU observation-unit study (Galley et al. 2015).
The numbers come from ``muttlab.human``; this page draws them.

The view lives in the address bar: the Flickr8K request (``metrics``, ``ratings``, ``boot``) and the unit
study's (``unit``, ``order``, ``threshold``, ``assignments``, ``sweeps``). The studies with each section's
default settings ship with the package (the ``human`` snapshot, :func:`muttlab.api.snapshot`): a server without the
data shows them, and a server with the data shows them before anything is asked, and for a request they cover,
while their stamp matches its own.
"""
from __future__ import annotations

import streamlit as st

from muttlab import api
from muttlab.dashboard import charts, number_format, services, ui
from muttlab.errors import MuttlabError

FLICKR_KEYS = ("metrics", "ratings", "boot")
LINK_NOTE = ("This link's settings are in the form above; this server has not computed them yet. Press the button "
             "to compute them.")
UNIT_KEYS = ("unit", "order", "threshold", "assignments", "sweeps")
MIN_ASSIGNMENTS = 10


def _numbers(frame) -> dict:
    """Streamlit's column formats for a study's table: each coefficient and interval as the chart's hover writes
    it (:func:`muttlab.dashboard.number_format.correlation_text`)."""
    return {c: st.column_config.NumberColumn(format=number_format.CORRELATION_FORMAT)
            for c in number_format.correlation_columns(frame)}


def _draw_flickr(table, n_boot: int, seed: int, kept: tuple) -> None:
    """The study's rows; ``kept`` identifies them for the server (a shipped snapshot's, or the study's memo key), so
    that their figure is built once (``services.kept_figure``)."""
    ui.chart(services.kept_figure(kept + ("flickr-bars",), lambda: charts.correlation_bars(
        table, "tau", "ci_low", "ci_high", colour="dataset", title="Kendall τ × 100 with human ratings (95% CI)")),
        "flickr8k-kendall", key="flickr-chart")
    wide = table.pivot_table(index="metric", columns="dataset", values="tau", sort=False).reset_index()
    st.markdown("**τ × 100 by metric**")
    st.dataframe(wide, hide_index=True, column_config={
        c: st.column_config.NumberColumn(format=number_format.CORRELATION_FORMAT) for c in wide.columns
        if c != "metric"})
    ui.table(table, "flickr8k-correlations", key="flickr-table", column_config=_numbers(table))
    st.caption(f"{n_boot} bootstrap resamples, seed {seed}.")


def _draw_units(study_main, sweeps, notes, unit: int, kept: tuple) -> None:
    """The unit study's results; ``kept`` as :func:`_draw_flickr`'s."""
    for note in notes:
        st.caption(note)
    title = f"Spearman ρ with human ratings, units of {unit} (95% interval)"
    ui.chart(services.kept_figure(kept + ("units-bars", title), lambda: charts.correlation_bars(
        study_main, "rho", "rho_low", "rho_high", title=title)), f"dbleu-units-{unit}", key="dbleu-chart")
    ui.table(study_main, f"dbleu-units-{unit}", key="dbleu-main", column_config=_numbers(study_main))
    if not sweeps.empty:
        st.markdown("**Sweeps**")
        tabs = st.tabs(["unit size", "n-gram order", "reference threshold"])
        for tab, sweep in zip(tabs, ("unit_size", "order", "threshold")):
            with tab:
                part = sweeps[sweeps["sweep"] == sweep]
                ui.chart(services.kept_figure(kept + ("sweep", sweep), lambda: charts.sweep_lines(
                    part, sweep, "rho", "rho_low", "rho_high", log_x=sweep == "unit_size")),
                    f"dbleu-sweep-{sweep}", key=f"dbleu-sweep-{sweep}")
        ui.table(sweeps, "dbleu-sweeps", key="dbleu-sweeps-table", column_config=_numbers(sweeps))


def _shipped_flickr(shipped, metrics, datasets, n_boot):
    """The shipped rows for this request, or None when the shipped study does not cover it."""
    table = shipped.content.flickr.table
    if (n_boot != shipped.content.flickr.n_boot or not set(metrics) <= set(table["metric"])
            or not set(datasets) <= set(table["dataset"])):
        return None
    rows = table[table["metric"].isin(metrics) & table["dataset"].isin(datasets)]
    order = {m: i for i, m in enumerate(metrics)}
    return rows.sort_values("metric", key=lambda column: column.map(order), kind="stable").reset_index(drop=True)


def _flickr_section(settings, flickr, available: list[str], shipped, current: bool) -> dict:
    """The Flickr8K study; returns its part of the address (empty until something is asked)."""
    st.subheader("Flickr8K: correlation with human ratings of captions")
    st.caption("Kendall τ × 100 between each metric and the human ratings: τ-c on Flickr8K-Expert, τ-b on "
               "Flickr8K-CrowdFlower, as in the CIDEr and SPICE papers; 95% bootstrap intervals.")
    defaults = [m for m in api.study_defaults().flickr_metrics if m in available] or available[:3]
    datasets_all = list(flickr.DATASETS)
    linked = any(ui.query_value(k) is not None for k in FLICKR_KEYS)
    link_metrics = ui.query_choices("metrics", available, defaults, "metrics")
    link_datasets = ui.query_choices("ratings", datasets_all, datasets_all, "ratings")
    link_boot = ui.query_int("boot", api.study_defaults().flickr_boot)
    with st.form("flickr-form", border=True):
        left, middle, right = st.columns([5, 2, 2])
        metrics = left.multiselect("Metrics", available, default=link_metrics, key="flickr-metrics")
        datasets = middle.multiselect("Ratings", datasets_all, default=link_datasets, key="flickr-datasets")
        n_boot = right.number_input("Bootstrap resamples", 0, 2000, link_boot, step=100, key="flickr-boot")
        submitted = st.form_submit_button("Correlate", type="primary", icon=":material/scatter_plot:")
    ui.demo_caption(settings)
    if submitted:
        st.session_state["flickr-request"] = (tuple(metrics), tuple(datasets), int(n_boot))
        ui.ask(("flickr", st.session_state["flickr-request"]))
    request = st.session_state.get("flickr-request") or (
        (tuple(link_metrics), tuple(link_datasets), link_boot) if linked else None)
    if not request:
        if shipped is not None and current:
            ui.caption_text(shipped.label() + " Choose metrics and press Correlate for others.")
            _draw_flickr(shipped.content.flickr.table, shipped.content.flickr.n_boot, shipped.content.flickr.seed,
                         services.snapshot_key(shipped))
        else:
            st.info("Choose metrics and press **Correlate**. Scores come from the shared cache when they exist.")
        return {}
    metrics, datasets, n_boot = request
    query = {"metrics": list(metrics), "ratings": list(datasets) if list(datasets) != datasets_all else None,
             "boot": n_boot}
    if not metrics or not datasets:
        st.warning("Choose at least one metric and one set of ratings.")
        return query
    rows = _shipped_flickr(shipped, metrics, datasets, n_boot) if shipped is not None and current else None
    if rows is not None:
        ui.caption_text(shipped.label())
        _draw_flickr(rows, shipped.content.flickr.n_boot, shipped.content.flickr.seed,
                     services.snapshot_key(shipped) + (metrics, datasets))
        return query
    key = ("flickr", settings, metrics, datasets, n_boot)
    if ui.waits_for_click(("flickr", request), "Correlate the metrics of this link", "flickr-link", LINK_NOTE,
                          finished=services.is_memoised(key)):
        return query
    study = ui.with_progress("Scoring the judged captions…", lambda progress: services.memoised(
        key, lambda: services.queued_study(lambda report: api.correlate(
            services.scoring_settings(settings), "flickr8k", metrics=list(metrics), datasets=datasets, n_boot=n_boot,
            registry=services.registry(settings), progress=report), progress),
        settings, costly="the Flickr8K correlations", metrics=metrics))
    if study is None:
        return query
    for name, why in study.skipped.items():
        st.warning(ui.md_text(f"{name} skipped: {why}"))
    if study.table.empty:
        st.info("No metric could be scored.")
        return query
    _draw_flickr(study.table, study.n_boot, study.seed, key)
    return query


def _unit_request(dbleu) -> tuple | None:
    """The unit study a link asks for (defaults for what it leaves out), or None when it asks for none."""
    if not any(ui.query_value(k) is not None for k in UNIT_KEYS):
        return None
    defaults = api.study_defaults().units
    assignments = ui.query_int("assignments", defaults["assignments"])
    if assignments < MIN_ASSIGNMENTS:
        st.warning(f"This page does not offer {assignments} random assignments (at least {MIN_ASSIGNMENTS}); "
                   f"showing {defaults['assignments']}.", icon=":material/link_off:")
        assignments = defaults["assignments"]
    return (ui.query_choice("unit", dbleu.UNIT_SIZES, defaults["unit"], "unit size", int),
            ui.query_choice("order", dbleu.ORDERS, defaults["order"], "n-gram order", int),
            ui.query_choice("threshold", dbleu.THRESHOLDS, defaults["threshold"], "reference weight threshold",
                            float),
            assignments, ui.query_value("sweeps", "1" if defaults["sweeps"] else "0") == "1")


def _unit_section(settings, dbleu, shipped, current: bool) -> dict:
    """The ΔBLEU unit study; returns its part of the address (empty until something is asked)."""
    st.subheader("ΔBLEU: correlation on observation units")
    st.caption("Galley et al. (2015), §5–6, on Flickr8K-Expert: rated captions are split at random into units "
               "of M sentences; a unit's corpus score is correlated with its mean human rating (Spearman ρ, "
               "Kendall τ), averaged over random assignments; 95% intervals are the assignments' percentiles.")
    defaults = api.study_defaults().units
    shipped_request = (defaults["unit"], defaults["order"], defaults["threshold"], defaults["assignments"],
                       defaults["sweeps"])
    linked = _unit_request(dbleu)
    unit, order, threshold, assignments, sweeps = linked or shipped_request
    with st.form("dbleu-form", border=True):
        a, b, c, d = st.columns(4)
        sizes, orders, thresholds = list(dbleu.UNIT_SIZES), list(dbleu.ORDERS), list(dbleu.THRESHOLDS)
        unit = a.selectbox("Unit size M", sizes, index=sizes.index(unit), key="dbleu-unit")
        order = b.selectbox("n-gram order", orders, index=orders.index(order), key="dbleu-order")
        threshold = c.selectbox("Reference weight threshold", thresholds, index=thresholds.index(threshold),
                                key="dbleu-threshold",
                                help="ΔBLEU uses the extra rated references whose weight is at least this.")
        assignments = d.number_input("Random assignments", MIN_ASSIGNMENTS, 2000, assignments, step=50,
                                     key="dbleu-assignments")
        sweeps = st.checkbox("Also sweep unit size, n-gram order and threshold", value=sweeps, key="dbleu-sweeps")
        submitted = st.form_submit_button("Run the unit study", type="primary", icon=":material/functions:")
    ui.demo_caption(settings)
    if submitted:
        st.session_state["dbleu-request"] = (int(unit), int(order), float(threshold), int(assignments), bool(sweeps))
        ui.ask(("dbleu", st.session_state["dbleu-request"]))
    request = st.session_state.get("dbleu-request") or linked
    if request is None and not (shipped is not None and current):
        st.info("Choose the study's settings and press **Run the unit study**.")
        return {}
    query = {} if request is None else dict(zip(UNIT_KEYS, request[:4] + (int(request[4]),)))
    if (request or shipped_request) == shipped_request and shipped is not None and current:
        ui.caption_text(shipped.label() + ("" if request else " Change the settings and press Run the unit study "
                                                              "for others."))
        units = shipped.content.units
        _draw_units(units.main, units.sweeps, units.notes, defaults["unit"], services.snapshot_key(shipped))
        return query
    unit, order, threshold, assignments, sweeps = request
    key = ("dbleu-units", settings, request)
    # A link's settings fill the form; the study (11-14 s of the server's time) runs from the button.
    if ui.waits_for_click(("dbleu", request), "Run the unit study of this link", "dbleu-link", LINK_NOTE,
                          finished=services.is_memoised(key)):
        return query
    registry = services.registry(settings)

    def compute(report):  # pure Python over n-gram counts, no metric object: apart from the server's visitors
        return api.correlate(settings, "dbleu", unit_size=unit, order=order, threshold=threshold,
                             assignments=assignments, seed=settings.seed, sweeps=sweeps,
                             sweep_assignments=min(assignments, dbleu.DEFAULT_SWEEP_ASSIGNMENTS), registry=registry,
                             progress=report)

    study = ui.with_progress("Matching n-grams and correlating units…", lambda progress: services.memoised(
        key, lambda: services.apart(compute, progress),
        settings, costly="the ΔBLEU unit study"))
    if study is None:
        return query
    _draw_units(study.main, study.sweeps, study.notes, unit, key)
    return query


def _shipped_only(shipped) -> None:
    """A server without the data: the shipped studies, as computed with each section's default settings."""
    if any(ui.query_value(k) is not None for k in FLICKR_KEYS + UNIT_KEYS):
        st.info("This server has no data dir, so it shows the shipped studies; the link's settings apply on a "
                "server with the data.", icon=":material/folder_off:")
    ui.caption_text(shipped.label() + " This server has no data dir: the captions and ratings do not ship (Flickr8k: "
                    "research use only), only these derived numbers.")
    st.subheader("Flickr8K: correlation with human ratings of captions")
    _draw_flickr(shipped.content.flickr.table, shipped.content.flickr.n_boot, shipped.content.flickr.seed,
                 services.snapshot_key(shipped))
    st.divider()
    unit = shipped.content.units.settings
    st.subheader("ΔBLEU: correlation on observation units")
    st.caption(f"Units of {unit['unit']} captions, n-gram order {unit['order']}, reference weight threshold "
               f"{unit['threshold']}, {unit['assignments']} random assignments, seed {unit['seed']}.")
    _draw_units(shipped.content.units.main, shipped.content.units.sweeps, shipped.content.units.notes, unit["unit"],
                services.snapshot_key(shipped))


def page() -> None:
    settings = ui.header("Correlation studies", "How well do metric scores agree with what people said?")
    try:
        shipped = services.shipped_studies()
    except MuttlabError as exc:
        st.error(f"The shipped study results cannot be read: {ui.md_text(exc)}")
        shipped = None
    if settings.using_sample:
        if shipped is None:
            st.info("These studies use the Flickr8k human judgments, which need the data dir "
                    "(`MUTTLAB_DATA_DIR`); the bundled sample has no human scores.", icon=":material/science:")
        else:
            _shipped_only(shipped)
        return
    available = services.available_metrics(settings)
    current = shipped is not None and services.shipped_studies_current(settings)
    query: dict = {}
    flickr = api.study_choices("flickr8k")
    if available:
        query.update(_flickr_section(settings, flickr, available, shipped, current))
    st.divider()
    dbleu = api.study_choices("dbleu")
    query.update(_unit_section(settings, dbleu, shipped, current))
    ui.write_query(query)
    ui.copy_link("correlation")


page()
