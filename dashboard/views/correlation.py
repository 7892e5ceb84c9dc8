"""Correlation studies: metric scores against human ratings of Flickr8k captions (Flickr8K-Expert and
CrowdFlower, Kendall τ with bootstrap CIs) and the ΔBLEU observation-unit study (Galley et al. 2015).
The numbers come from ``muttlab.human``; this page draws them."""
from __future__ import annotations

import streamlit as st

from muttlab.dashboard import charts, services, ui
from muttlab.errors import MuttlabError

DEFAULT_STUDY_METRICS = ("BLEU-1", "BLEU-4", "ROUGE-L", "METEOR-1.5", "CIDEr-D", "TER", "BADGER-like", "W2V-AVG")


def _flickr_section(settings, flickr, available: list[str]) -> None:
    st.subheader("Flickr8K: correlation with human ratings of captions")
    st.caption("Kendall τ × 100 between each metric and the human ratings: τ-c on Flickr8K-Expert, τ-b on "
               "Flickr8K-CrowdFlower, as in the CIDEr and SPICE papers; 95% bootstrap intervals.")
    with st.form("flickr-form", border=True):
        left, middle, right = st.columns([5, 2, 2])
        metrics = left.multiselect("Metrics", available,
                                   default=[m for m in DEFAULT_STUDY_METRICS if m in available] or available[:3],
                                   key="flickr-metrics")
        datasets = middle.multiselect("Ratings", list(flickr.DATASETS), default=list(flickr.DATASETS),
                                      key="flickr-datasets")
        n_boot = right.number_input("Bootstrap resamples", 0, 2000, 200, step=100, key="flickr-boot")
        submitted = st.form_submit_button("Correlate", type="primary", icon=":material/scatter_plot:")
    if submitted:
        st.session_state["flickr-request"] = (tuple(metrics), tuple(datasets), int(n_boot))
    request = st.session_state.get("flickr-request")
    if not request:
        st.info("Choose metrics and press **Correlate**. Scores come from the shared cache when they exist.")
        return
    metrics, datasets, n_boot = request
    if not metrics or not datasets:
        st.warning("Choose at least one metric and one set of ratings.")
        return
    study = ui.with_progress("Scoring the judged captions…", lambda progress: services.memoised(
        ("flickr", settings, metrics, datasets, n_boot),
        lambda: flickr.flickr_correlations(settings, list(metrics), datasets=datasets, n_boot=n_boot,
                                           registry=services.registry(settings), progress=progress),
        settings))
    if study is None:
        return
    for name, why in study.skipped.items():
        st.warning(ui.md_text(f"{name} skipped: {why}"))
    table = study.table
    if table.empty:
        st.info("No metric could be scored.")
        return
    ui.chart(charts.correlation_bars(table, "tau", "ci_low", "ci_high", colour="dataset",
                                     title="Kendall τ × 100 with human ratings (95% CI)"),
             "flickr8k-kendall", key="flickr-chart")
    wide = table.pivot_table(index="metric", columns="dataset", values="tau", sort=False).round(1).reset_index()
    st.markdown("**τ × 100 by metric**")
    st.dataframe(wide, hide_index=True)
    ui.table(table, "flickr8k-correlations", key="flickr-table")
    st.caption(f"{study.n_boot} bootstrap resamples, seed {study.seed}.")


def _dbleu_section(settings, dbleu) -> None:
    st.subheader("ΔBLEU: correlation on observation units")
    st.caption("Galley et al. (2015), §5–6, on Flickr8K-Expert: rated captions are split at random into units "
               "of M sentences; a unit's corpus score is correlated with its mean human rating (Spearman ρ, "
               "Kendall τ), averaged over random assignments; 95% intervals are the assignments' percentiles.")
    with st.form("dbleu-form", border=True):
        a, b, c, d = st.columns(4)
        sizes = list(dbleu.UNIT_SIZES)
        unit = a.selectbox("Unit size M", sizes, index=sizes.index(dbleu.DEFAULT_UNIT), key="dbleu-unit")
        order = b.selectbox("n-gram order", list(dbleu.ORDERS), index=len(dbleu.ORDERS) - 1, key="dbleu-order")
        threshold = c.selectbox("Reference weight threshold", list(dbleu.THRESHOLDS), index=0, key="dbleu-threshold",
                                help="ΔBLEU uses the extra rated references whose weight is at least this.")
        assignments = d.number_input("Random assignments", 10, 2000, 200, step=50, key="dbleu-assignments")
        sweeps = st.checkbox("Also sweep unit size, n-gram order and threshold", value=True, key="dbleu-sweeps")
        submitted = st.form_submit_button("Run the unit study", type="primary", icon=":material/functions:")
    if submitted:
        st.session_state["dbleu-request"] = (int(unit), int(order), float(threshold), int(assignments), bool(sweeps))
    request = st.session_state.get("dbleu-request")
    if not request:
        st.info("Choose the study's settings and press **Run the unit study**.")
        return
    unit, order, threshold, assignments, sweeps = request
    with st.spinner("Matching n-grams and correlating units…"):
        try:
            study = services.memoised(
                ("dbleu-units", settings, request),
                lambda: dbleu.unit_study(dbleu.flickr_expert_set(settings), unit_size=unit, order=order,
                                         threshold=threshold, assignments=assignments, seed=settings.seed,
                                         sweeps=sweeps,
                                         sweep_assignments=min(assignments, dbleu.DEFAULT_SWEEP_ASSIGNMENTS)),
                settings)
        except MuttlabError as exc:
            st.error(f"The study failed: {ui.md_text(exc)}")
            return
    for note in study.notes:
        st.caption(note)
    ui.chart(charts.correlation_bars(study.main, "rho", "rho_low", "rho_high",
                                     title=f"Spearman ρ with human ratings, units of {unit} (95% interval)"),
             f"dbleu-units-{unit}", key="dbleu-chart")
    ui.table(study.main, f"dbleu-units-{unit}", key="dbleu-main")
    if not study.sweeps.empty:
        st.markdown("**Sweeps**")
        tabs = st.tabs(["unit size", "n-gram order", "reference threshold"])
        for tab, (sweep, x) in zip(tabs, (("unit_size", "unit_size"), ("order", "order"),
                                           ("threshold", "threshold"))):
            with tab:
                part = study.sweeps[study.sweeps["sweep"] == sweep]
                ui.chart(charts.sweep_lines(part, x, "rho", "rho_low", "rho_high", log_x=sweep == "unit_size"),
                         f"dbleu-sweep-{sweep}", key=f"dbleu-sweep-{sweep}")
        ui.table(study.sweeps, "dbleu-sweeps", key="dbleu-sweeps-table")


def page() -> None:
    settings = ui.header("Correlation studies", "How well do metric scores agree with what people said?")
    if settings.using_sample:
        st.info("These studies use the Flickr8k human judgments, which need the data dir "
                "(`MUTTLAB_DATA_DIR`); the bundled sample has no human scores.", icon=":material/science:")
        return
    available = services.available_metrics(settings)
    flickr = services.optional_module("muttlab.human.flickr")
    if flickr is None:
        ui.not_available("The Flickr8K correlation study", "muttlab.human.flickr")
    elif available:
        _flickr_section(settings, flickr, available)
    st.divider()
    dbleu = services.optional_module("muttlab.human.dbleu")
    if dbleu is None:
        ui.not_available("The ΔBLEU unit study", "muttlab.human.dbleu")
    else:
        _dbleu_section(settings, dbleu)


page()
