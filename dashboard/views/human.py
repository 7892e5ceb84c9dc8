"""Human judgments: SICK gold relatedness next to metric scores, per corruption type (MUTT §5).

The study is ``muttlab.human.sick.sick_study``; the default view is the paper's: gold vs METEOR on
Negated Subject, and the pairwise correlation of gold, METEOR, BADGER and TERp. The view lives in the address
bar (``/human?corruption=det_sub&metric=TERp&metrics=METEOR-1.5,TERp&method=spearman&reading=paper``).

The study's results ship with the package (the ``human`` snapshot, :func:`muttlab.api.snapshot`): a server
without the data shows them, and a server with the data draws them at once while their stamp matches its own, instead of
scoring the pairs on a first visit; any other choice is computed here, under a progress bar.
"""
from __future__ import annotations

import streamlit as st

from muttlab import api
from muttlab.dashboard import charts, services, ui
from muttlab.dashboard.number_format import fmt_score, rating_text
from muttlab.errors import MuttlabError

READING_LABELS = {"trials": "MUTT trials", "paper": "paper (Table 3)"}
METHOD_LABELS = {"pearson": "Pearson r", "spearman": "Spearman ρ", "kendall_b": "Kendall τ-b",
                 "kendall_c": "Kendall τ-c"}
REFERENCE_LABELS = {"pool": "the original's references", "sentence": "sentence A only"}
PAIRS_KEY = "human-pairs-open"


def _shipped():
    try:
        return services.shipped_studies()
    except MuttlabError as exc:
        st.error(f"The shipped study results cannot be read: {ui.md_text(exc)}")
        return None


def _study_key(settings, corruption, wanted, method, reference, reading) -> tuple:
    return ("sick", settings, corruption, wanted, method, reference, reading)


def _live_study(settings, sick, corruption, wanted, method, reference, reading):
    return ui.with_progress("Scoring the SICK pairs…", lambda progress: services.memoised(
        _study_key(settings, corruption, wanted, method, reference, reading),
        lambda: services.queued_study(lambda report: api.correlate(
            services.scoring_settings(settings), "sick", corruption=corruption, metrics=list(wanted), method=method,
            reference=reference, registry=services.registry(settings), progress=report, reading=reading), progress),
        settings, costly="the SICK study", metrics=wanted))


def page() -> None:
    settings = ui.header("Human judgments", "Pairs of one corruption type all undergo the same change, so "
                                            "consistent judges would give them similar relatedness. The SICK "
                                            "gold scores spread widely; do the metrics?")
    sick = api.study_choices("sick")
    shipped = _shipped()
    live = not settings.using_sample
    if live:
        available = ui.loadable_metrics(settings)
        if not available:
            return
    elif shipped is None:
        st.info("This study uses SICK's gold relatedness scores, which need the data dir (`MUTTLAB_DATA_DIR`); "
                "the bundled sample has no human scores.", icon=":material/science:")
        return
    else:  # the hosted demo: the shipped selections
        available = list(dict.fromkeys(m for s in shipped.content.sick.values() for m in s.metrics))
    corruptions = list(sick.SICK_CORRUPTIONS)
    labels = services.corruption_labels(corruptions)
    study_metrics = [m for m in sick.STUDY_METRICS if m in available] or available[:3]
    methods = [m for m in api.CORRELATION_METHODS if m in METHOD_LABELS]
    references = list(sick.REFERENCE_SOURCES) if live else ["pool"]

    default_metric = study_metrics[0] if study_metrics else available[0]
    corruption = ui.query_choice("corruption", corruptions, corruptions[0], "corruption type")
    metric = ui.query_choice("metric", available, default_metric, "metric")
    method = ui.query_choice("method", methods, methods[0], "correlation")
    matrix_default = ui.query_choices("metrics", available, study_metrics, "metrics")
    reading = ui.query_choice("reading", list(sick.READINGS), sick.READINGS[0], "reading")
    reference = ui.query_choice("reference", references, references[0], "reference source")

    c1, c2, c3 = st.columns([3, 3, 2])
    corruption = c1.selectbox("Corruption type", corruptions, index=corruptions.index(corruption),
                              format_func=lambda c: labels.get(c, c), key="human-corruption")
    metric = c2.selectbox("Metric beside the gold scores", available, index=available.index(metric),
                          key="human-metric")
    method = c3.selectbox("Correlation", methods, index=methods.index(method), format_func=METHOD_LABELS.get,
                          key="human-method")
    c4, c5, c6 = st.columns([5, 2, 2])
    matrix_metrics = c4.multiselect("Metrics in the correlation matrix", available, default=matrix_default,
                                    key="human-matrix")
    reading = c5.selectbox("Reading", list(sick.READINGS), index=list(sick.READINGS).index(reading),
                           format_func=READING_LABELS.get, key="human-reading",
                           help="trials: the MUTT experiment trials of the type, scores as the metrics give them. "
                                "paper: every SICK pair of the type, sentence B scored against sentence A, error "
                                "rates negated (the paper's Table 3).")
    reference = c6.selectbox("Score the corruption against", references, index=references.index(reference),
                             format_func=REFERENCE_LABELS.get, key="human-reference", disabled=reading == "paper",
                             help="The paper reading always scores sentence B against sentence A.")
    ui.write_query({"corruption": corruption if corruption != corruptions[0] else None,
                    "metric": metric if metric != default_metric else None,
                    "method": method if method != methods[0] else None,
                    "metrics": matrix_metrics if matrix_metrics != study_metrics else None,
                    "reading": reading if reading != sick.READINGS[0] else None,
                    "reference": reference if reference != references[0] and reading != "paper" else None})
    reference = "sentence" if reading == "paper" else reference
    wanted = tuple(dict.fromkeys([metric] + list(matrix_metrics)))

    entry = shipped.content.sick_study(corruption, reading) if shipped is not None else None
    covered = (entry is not None and set(wanted) <= set(entry.metrics) and method in entry.correlations
               and reference == entry.reference)
    if covered and (not live or services.shipped_studies_current(settings)):
        numbers, study = entry, None
        kept = services.snapshot_key(shipped) + ("sick", corruption, reading)
        ui.caption_text(shipped.label() + (" This server has no data dir: the pairs' sentences do not ship "
                                           "(SICK is CC BY-NC-SA 3.0), only these derived numbers." if not live
                                           else " They match this server's data, code and metrics."))
    elif not live:
        st.info(ui.md_text(f"Without a data dir this page shows the shipped study ({', '.join(entry.metrics)})"
                           if entry else "This choice needs the data dir (`MUTTLAB_DATA_DIR`)."),
                icon=":material/folder_off:")
        return
    else:
        # A choice the shipped study does not cover is scored from the button, a link's as a click's.
        what = _study_key(settings, corruption, wanted, method, reference, reading)
        ui.demo_caption(settings)
        if ui.waits_for_click(what, "Score the pairs of this view", "human-link",
                              "The shipped study does not cover this choice and this server has not scored it yet: "
                              "press the button to score the pairs.", finished=services.is_memoised(what)):
            return
        study = _live_study(settings, sick, corruption, wanted, method, reference, reading)
        if study is None:
            return
        numbers, kept = api.study_numbers(study), what
        for warning in services.study_warnings(settings, study):
            st.warning(ui.md_text(warning), icon=":material/warning:")
    for note in numbers.notes:
        ui.caption_text(note)
    if metric not in numbers.metrics:
        why = study.skipped.get(metric, "unavailable") if study is not None else "unavailable"
        st.warning(ui.md_text(f"{metric} could not be scored: {why}"))
        return
    _draw(numbers, corruption, labels.get(corruption, corruption), metric, matrix_metrics, method, kept)
    if live:
        _pairs(settings, sick, study, numbers, corruption, wanted, method, reference, reading)
    ui.copy_link("human")


def _draw(numbers, corruption: str, label: str, metric: str, matrix_metrics, method: str, kept: tuple) -> None:
    """The study's numbers; ``kept`` identifies them for the server (the shipped snapshot's entry, or the live
    study's memo key), so that their figures are built once (``services.kept_figure``)."""
    summary = numbers.summary.set_index("variable")
    st.subheader(ui.md_text(f"{label}: gold vs {metric}"))
    a, b, c = st.columns([1, 2, 2])  # a mean ± sd of scores, four decimals each, is the widest
    a.metric("pairs", numbers.pairs)
    b.metric("gold: mean ± sd", f"{rating_text(summary.loc['gold', 'mean'])} ± {rating_text(summary.loc['gold', 'std'])}")
    c.metric(ui.md_text(f"{metric}: mean ± sd"),
             f"{fmt_score(summary.loc[metric, 'mean'])} ± {fmt_score(summary.loc[metric, 'std'])}")
    gold_label, metric_label = "SICK gold relatedness (1–5)", f"{metric} score of the corruption"
    ui.chart(services.kept_figure(kept + ("histograms", metric), lambda: charts.score_histograms(
        numbers.histograms, metric, gold_label, metric_label)), f"sick-{corruption}-gold-vs-{metric}",
        key="human-hist")

    st.subheader("Pairwise correlation")
    shown = ["gold"] + [m for m in matrix_metrics if m in numbers.metrics]
    matrix = numbers.correlations[method].loc[shown, shown]
    name = METHOD_LABELS.get(method, method)
    ui.chart(services.kept_figure(kept + ("correlations", method, tuple(shown)), lambda: charts.correlation_heatmap(
        matrix, name, f"{name}, {label}")), f"sick-{corruption}-{method}", key="human-corr")
    ui.folded_table("The matrix as a table", matrix.reset_index(names=""), f"sick-{corruption}-{method}-matrix",
                    key="human-matrix-table")
    ui.folded_table("Summary statistics", numbers.summary, f"sick-{corruption}-summary", key="human-summary")


def _pairs(settings, sick, study, numbers, corruption, wanted, method, reference, reading) -> None:
    """The pairs and their scores (sentences: never shipped); over shipped numbers, scored when opened."""
    box = st.expander(f"The {numbers.pairs} pairs and their scores", key=PAIRS_KEY, on_change="rerun")
    if study is None and not box.open:
        return
    with box:
        study = study or _live_study(settings, sick, corruption, wanted, method, reference, reading)
        if study is not None:
            ui.table(study.pairs, f"sick-{corruption}-pairs", key="human-pairs")


page()
