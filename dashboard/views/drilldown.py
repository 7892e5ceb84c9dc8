"""Drill-down: the trials of one metric x corruption x reference-count cell, failing first, by margin."""
from __future__ import annotations

import math

import streamlit as st

from muttlab.dashboard import charts, services, ui
from muttlab.dashboard.diff import diff_block
from muttlab.errors import MuttlabError

CELL_KEY = "drilldown_cell"
PAGE_SIZE = 15


def _index(options: list, value, fallback: int = 0) -> int:
    return options.index(value) if value in options else fallback


def _trial_card(row, higher_is_better: bool) -> None:
    verdict = ":green[:material/check_circle:] passes" if row.passed else ":red[:material/cancel:] fails"
    with st.container(border=True):
        text, numbers = st.columns([5, 2])
        text.markdown(f"**{verdict}** · {ui.md_text(row.trial)}")
        text.html(diff_block(row.original, row.corrupted))
        numbers.markdown(f"original **{ui.fmt_score(row.s_orig)}**  \n"
                         f"corruption **{ui.fmt_score(row.s_corr)}**  \n"
                         f"margin **{ui.fmt_score(row.margin)}**")
        extra = [] if higher_is_better else ["lower scores are better for this metric"]
        if row.human_score is not None and not (isinstance(row.human_score, float) and math.isnan(row.human_score)):
            extra.append(f"SICK gold relatedness: {row.human_score:.2f} / 5")
        if row.source:
            extra.append(f"source: {row.source}")
        if extra:
            ui.caption_text(" · ".join(extra))
        with st.expander(f"{len(row.references)} references"):
            st.text("\n".join(f"{i:>2}. {ref}" for i, ref in enumerate(row.references, start=1)))


def page() -> None:
    settings = ui.header("Drill-down", "The trials behind one cell of the accuracy grid: failures first, the "
                                        "closest calls at the top.")
    suite = ui.load_suite(settings)
    if suite is None:
        return
    available = services.available_metrics(settings)
    if not available:
        st.error("No metric can be loaded in this installation (see the Run page).")
        return
    chosen = st.session_state.get(CELL_KEY) or {}
    corruptions = suite.corruptions()
    labels = services.corruption_labels(corruptions)
    max_refs = suite.max_refs()
    ref_options = [k for k in settings.ref_counts if k <= max_refs] or [max_refs]
    if chosen.get("refs") and chosen["refs"] not in ref_options:
        ref_options = sorted(set(ref_options) | {int(chosen["refs"])})

    left, middle, right = st.columns([3, 3, 2])
    metric = left.selectbox("Metric", available, index=_index(available, chosen.get("metric")), key="dd-metric")
    corruption = middle.selectbox("Corruption", corruptions, index=_index(corruptions, chosen.get("corruption")),
                                  format_func=lambda c: labels.get(c, c), key="dd-corruption")
    refs = right.selectbox("References", ref_options, index=_index(ref_options, chosen.get("refs"),
                                                                 len(ref_options) - 1), key="dd-refs")
    st.session_state[CELL_KEY] = {"metric": metric, "corruption": corruption, "refs": int(refs)}

    with st.spinner(f"Scoring {metric} on {labels.get(corruption, corruption)}…"):
        try:
            cell = services.cell_trials(settings, metric, corruption, int(refs))
        except MuttlabError as exc:
            st.error(f"This cell cannot be scored: {ui.md_text(exc)}")
            return
    info = {i.name: i for i in services.metric_catalogue(settings)}[metric]
    n, ok = len(cell), int(cell["passed"].sum())
    a, b, c, d = st.columns(4)
    a.metric("trials", n)
    b.metric("passed", ok)
    c.metric("failed", n - ok)
    d.metric("accuracy", f"{100.0 * ok / n:.1f}%" if n else "–")
    if info.signature:
        ui.caption_text(f"signature: {info.signature}")

    ui.chart(charts.margin_histogram(cell, f"Margins: {metric} on {labels.get(corruption, corruption)}, "
                                           f"{refs} references"),
             f"margins-{metric}-{corruption}-{refs}", key="dd-margins")

    f1, f2 = st.columns([2, 5])
    verdict = f1.segmented_control("Show", ["fails", "passes", "all"], default="fails", key="dd-verdict")
    query = f2.text_input("Search the sentences", key="dd-query",
                          placeholder="a word in the original or the corruption")
    shown = cell
    if verdict == "fails":
        shown = shown[~shown["passed"]]
    elif verdict == "passes":
        shown = shown[shown["passed"]]
    if query.strip():
        needle = query.strip().lower()
        mask = (shown["original"].str.lower().str.contains(needle, regex=False)
                | shown["corrupted"].str.lower().str.contains(needle, regex=False))
        shown = shown[mask]
    st.markdown(f"**{len(shown)}** of {n} trials shown")
    if shown.empty:
        st.info("No trial matches the filter.")
        return

    pages = max(1, math.ceil(len(shown) / PAGE_SIZE))
    number = st.number_input("Page", min_value=1, max_value=pages, value=1, step=1, key="dd-page") if pages > 1 else 1
    start = (int(number) - 1) * PAGE_SIZE
    for row in shown.iloc[start:start + PAGE_SIZE].itertuples(index=False):
        _trial_card(row, info.higher_is_better)

    with st.expander("All shown trials as a table"):
        table = shown.assign(references=shown["references"].map(lambda refs: " | ".join(refs)))
        ui.table(table, f"trials-{metric}-{corruption}-{refs}", key="dd-table")


page()
