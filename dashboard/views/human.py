"""Human judgments: SICK gold relatedness next to metric scores, per corruption type (MUTT §5).

The study is ``muttlab.human.sick.sick_study``; the default view is the paper's: gold vs METEOR on
Negated Subject, and the pairwise correlation of gold, METEOR, BADGER and TERp.
"""
from __future__ import annotations

import streamlit as st

from muttlab.dashboard import charts, services, ui
from muttlab import stats

READING_LABELS = {"trials": "MUTT trials", "paper": "paper (Table 3)"}
METHOD_LABELS = {"pearson": "Pearson r", "spearman": "Spearman ρ", "kendall_b": "Kendall τ-b",
                 "kendall_c": "Kendall τ-c"}


def page() -> None:
    settings = ui.header("Human judgments", "Pairs of one corruption type all undergo the same change, so "
                                            "consistent judges would give them similar relatedness. The SICK "
                                            "gold scores spread widely; do the metrics?")
    sick = services.optional_module("muttlab.human.sick")
    if sick is None:
        ui.not_available("The SICK inconsistency study", "muttlab.human.sick")
        return
    if settings.using_sample:
        st.info("This study uses SICK's gold relatedness scores, which need the data dir (`MUTTLAB_DATA_DIR`); "
                "the bundled sample has no human scores.", icon=":material/science:")
        return
    available = ui.loadable_metrics(settings)
    if not available:
        return
    corruptions = list(sick.SICK_CORRUPTIONS)
    labels = services.corruption_labels(corruptions)
    study_metrics = [m for m in sick.STUDY_METRICS if m in available] or available[:3]
    stats_methods = [m for m in stats.METHODS if m in METHOD_LABELS]

    c1, c2, c3 = st.columns([3, 3, 2])
    corruption = c1.selectbox("Corruption type", corruptions, format_func=lambda c: labels.get(c, c),
                              key="human-corruption")
    metric = c2.selectbox("Metric beside the gold scores", available,
                          index=available.index(study_metrics[0]) if study_metrics else 0, key="human-metric")
    method = c3.selectbox("Correlation", stats_methods, format_func=METHOD_LABELS.get, key="human-method")
    c4, c5, c6 = st.columns([5, 2, 2])
    matrix_metrics = c4.multiselect("Metrics in the correlation matrix", available, default=study_metrics,
                                    key="human-matrix")
    reading = c5.selectbox("Reading", list(sick.READINGS), format_func=READING_LABELS.get, key="human-reading",
                           help="trials: the MUTT experiment trials of the type, scores as the metrics give them. "
                                "paper: every SICK pair of the type, sentence B scored against sentence A, error "
                                "rates negated (the paper's Table 3).")
    reference = c6.selectbox("Score the corruption against", list(sick.REFERENCE_SOURCES),
                             format_func={"pool": "the original's references",
                                          "sentence": "sentence A only"}.get, key="human-reference",
                             disabled=reading == "paper",
                             help="The paper reading always scores sentence B against sentence A.")
    reference = "sentence" if reading == "paper" else reference
    wanted = tuple(dict.fromkeys([metric] + list(matrix_metrics)))

    study = ui.with_progress("Scoring the SICK pairs…", lambda progress: services.memoised(
        ("sick", settings, corruption, wanted, method, reference, reading),
        lambda: sick.sick_study(settings, corruption, list(wanted), method=method, reference=reference,
                                registry=services.registry(settings), progress=progress, reading=reading),
        settings))
    if study is None:
        return
    for note in study.notes():
        ui.caption_text(note)
    for warning in services.study_warnings(settings, study):
        st.warning(ui.md_text(warning), icon=":material/warning:")
    if metric not in study.metrics:
        st.warning(ui.md_text(f"{metric} could not be scored: {study.skipped.get(metric, 'unavailable')}"))
        return

    pairs = study.pairs
    gold_label = "SICK gold relatedness (1–5)"
    st.subheader(ui.md_text(f"{labels.get(corruption, corruption)}: gold vs {metric}"))
    a, b, c = st.columns(3)
    a.metric("pairs", len(pairs))
    b.metric("gold: mean ± sd", f"{pairs['gold'].mean():.2f} ± {pairs['gold'].std():.2f}")
    c.metric(ui.md_text(f"{metric}: mean ± sd"), f"{pairs[metric].mean():.3f} ± {pairs[metric].std():.3f}")
    ui.chart(charts.score_histograms(pairs["gold"], pairs[metric], gold_label, f"{metric} score of the corruption"),
             f"sick-{corruption}-gold-vs-{metric}", key="human-hist")

    st.subheader("Pairwise correlation")
    shown = ["gold"] + [m for m in matrix_metrics if m in study.metrics]
    matrix = study.correlations.loc[shown, shown]
    ui.chart(charts.correlation_heatmap(matrix, METHOD_LABELS.get(method, method),
                                        f"{METHOD_LABELS.get(method, method)}, {labels.get(corruption, corruption)}"),
             f"sick-{corruption}-{method}", key="human-corr")
    ui.table(matrix.reset_index(names=""), f"sick-{corruption}-{method}-matrix", key="human-matrix-table")

    with st.expander("Summary statistics"):
        ui.table(study.summary, f"sick-{corruption}-summary", key="human-summary")
    with st.expander(f"The {len(pairs)} pairs and their scores"):
        ui.table(pairs, f"sick-{corruption}-pairs", key="human-pairs")


page()
