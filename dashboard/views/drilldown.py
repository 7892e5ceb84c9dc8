"""Drill-down: the trials of one metric x corruption x reference-count cell, failing first, by margin.

The cell, the filter and the page live in the address bar
(``/drilldown?metric=METEOR-1.5&corruption=neg_subj&refs=5&show=fails``), so the view is a link.
"""
from __future__ import annotations

import math

import streamlit as st

from muttlab.dashboard import charts, glossary, services, ui
from muttlab.dashboard.cell_notice import sample_cell_notice
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
                         f"margin **{ui.margin_text(row.s_orig, row.s_corr, row.margin)}**")
        extra = [] if higher_is_better else ["lower scores are better for this metric"]
        if row.human_score is not None and not (isinstance(row.human_score, float) and math.isnan(row.human_score)):
            extra.append(f"SICK gold relatedness: {row.human_score:.2f} / 5")
        for label, attr in (("SICK pair", "sick_pair_id"), ("SICK split", "sick_split")):
            value = getattr(row, attr, None)
            if value not in (None, "") and value == value:
                extra.append(f"{label}: {value}")
        if row.source:
            extra.append(f"source: {row.source}")
        if extra:
            ui.caption_text(" · ".join(extra))
        with st.expander(f"{len(row.references)} references"):
            st.text("\n".join(f"{i:>2}. {ref}" for i, ref in enumerate(row.references, start=1)))


def _waits_for_click(settings, metric: str, corruption: str, refs: int, suite_name: str, key: str) -> bool:
    """A slow metric's cell is scored after a click, unless the server has it already: a link opens it at once
    only where that is cheap."""
    if services.finished_run(settings, services.Selection((metric,), (corruption,), (refs,)), suite_name) is not None:
        return False
    return ui.slow_and_unasked([metric], ("cell", metric, corruption, refs, suite_name),
                               f"Score {metric} on this cell", key)


def _compare(settings, available: list[str], metric: str, corruption: str, refs: int, suite_name: str) -> None:
    """Another metric on the same trials: McNemar's test on the paired pass/fail outcomes."""
    others = [m for m in available if m != metric]
    wanted = ui.query_value("vs")
    with st.expander("Compare with another metric on these trials (McNemar)", expanded=wanted in others):
        other = st.selectbox("Other metric", [None] + others, index=(others.index(wanted) + 1) if wanted in others
                             else 0, format_func=lambda m: "choose…" if m is None else m, key="dd-vs")
        st.session_state["dd-vs-chosen"] = other
        if other is None or _waits_for_click(settings, other, corruption, refs, suite_name, "dd-vs-score"):
            return
        try:
            result, acc_a, acc_b = services.paired_comparison(settings, metric, other, corruption, refs, suite_name)
        except MuttlabError as exc:
            st.error(ui.md_text(f"{other} cannot be scored on this cell: {exc}"))
            return
        a, b, c, d = st.columns(4)
        a.metric(f"{metric} accuracy", f"{acc_a:.1f}%")
        b.metric(f"{other} accuracy", f"{acc_b:.1f}%")
        c.metric(f"only {metric} right / only {other} right", f"{result.b} / {result.c}")
        d.metric("McNemar p", f"{result.p_value:.3g}" if hasattr(result, "p_value") else "–")
        st.caption(f"{result.n} paired trials; {result.method} test (McNemar 1947). A small p says the two "
                   "metrics get different trials right, beyond chance.")


def page() -> None:
    settings = ui.header("Drill-down", "The trials behind one cell of the accuracy grid: failures first, the "
                                        "closest calls at the top.")
    suite = ui.load_suite(settings)
    if suite is None:
        return
    available = ui.loadable_metrics(settings)
    if not available:
        return
    chosen = {**(st.session_state.get(CELL_KEY) or {}),
              **{k: v for k, v in (("metric", ui.query_value("metric")), ("corruption", ui.query_value("corruption")),
                                   ("refs", ui.query_int("refs"))) if v is not None}}
    suite_name = ui.query_value("suite", "default")
    suite_name = suite_name if suite_name in services.SUITES else "default"
    corruptions = suite.corruptions()
    labels = services.corruption_labels(corruptions)
    max_refs = suite.max_refs()
    ref_options = [k for k in settings.ref_counts if k <= max_refs] or [max_refs]
    if chosen.get("refs") and chosen["refs"] not in ref_options and chosen["refs"] <= max_refs:
        ref_options = sorted(set(ref_options) | {int(chosen["refs"])})
    if chosen.get("corruption") and chosen["corruption"] not in corruptions:
        st.warning(ui.md_text(f"This link's corruption type {chosen['corruption']} is not in the loaded trials "
                              f"(suite {suite.name}); the precomputed grid's cells need the MUTT data dir."))

    left, middle, right, far = st.columns([3, 3, 2, 2])
    metric = left.selectbox("Metric", available, index=_index(available, chosen.get("metric")), key="dd-metric")
    corruption = middle.selectbox("Corruption", corruptions, index=_index(corruptions, chosen.get("corruption")),
                                  format_func=lambda c: labels.get(c, c), key="dd-corruption")
    refs = right.selectbox("References", ref_options, index=_index(ref_options, chosen.get("refs"),
                                                                 len(ref_options) - 1), key="dd-refs",
                         help=glossary.term("references (5/10/20)"))
    suite_name = far.selectbox("Trials", list(services.SUITES), index=list(services.SUITES).index(suite_name),
                               format_func=services.SUITES.get, key="dd-suite")
    st.session_state[CELL_KEY] = {"metric": metric, "corruption": corruption, "refs": int(refs)}
    if suite.is_sample and suite_name == "default":
        st.warning(sample_cell_notice(services.shipped_grid, suite, metric, corruption, int(refs),
                                      labels.get(corruption, corruption), escape=ui.md_text), icon=":material/info:")

    if _waits_for_click(settings, metric, corruption, int(refs), suite_name, "dd-score"):
        return
    with st.spinner(f"Scoring {metric} on {labels.get(corruption, corruption)}…"):
        try:
            cell = services.cell_trials(settings, metric, corruption, int(refs), suite_name=suite_name)
        except MuttlabError as exc:
            st.error(f"This cell cannot be scored: {ui.md_text(exc)}")
            return
    info = {i.name: i for i in services.metric_catalogue(settings)}[metric]
    n, ok = len(cell), int(cell["passed"].sum())
    a, b, c, d = st.columns(4)
    a.metric("trials", n)
    b.metric("passed", ok, help=f"A trial passes when its margin says so. {glossary.margin(corruption)}")
    c.metric("failed", n - ok, help=glossary.term("tie rule"))
    d.metric("accuracy", f"{100.0 * ok / n:.1f}%" if n else "–", help=glossary.term("Wilson interval"))
    if info.signature:
        ui.caption_text(f"signature: {info.signature}")
        st.caption(glossary.term("signature"))

    ui.chart(charts.margin_histogram(cell, f"Margins: {metric} on {labels.get(corruption, corruption)}, "
                                           f"{refs} references"),
             f"margins-{metric}-{corruption}-{refs}", key="dd-margins")

    _compare(settings, available, metric, corruption, int(refs), suite_name)

    f1, f2 = st.columns([2, 5])
    shows = ["fails", "passes", "all"]
    if "dd-verdict" not in st.session_state:
        st.session_state["dd-verdict"] = ui.query_value("show", "fails") if ui.query_value("show") in shows else "fails"
        st.session_state["dd-query"] = ui.query_value("q", "")
    verdict = f1.segmented_control("Show", shows, key="dd-verdict") or "fails"
    query = f2.text_input("Search the sentences", key="dd-query",
                          placeholder="a word in the original or the corruption")
    trial_id = ui.query_value("trial")
    ui.write_query({"metric": metric, "corruption": corruption, "refs": int(refs),
                    "vs": st.session_state.get("dd-vs-chosen"),
                    "suite": suite_name if suite_name != "default" else None,
                    "show": verdict if verdict != "fails" else None, "q": query.strip() or None, "trial": trial_id})
    shown = cell
    if trial_id:
        pinned = cell[cell["trial"] == trial_id]
        if not pinned.empty:
            st.markdown(f"**Trial `{trial_id}`** (from the link)")
            _trial_card(next(pinned.itertuples(index=False)), info.higher_is_better)
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

    ui.copy_link("drilldown")
    with st.expander("All shown trials as a table"):
        table = shown.assign(references=shown["references"].map(lambda refs: " | ".join(refs)))
        ui.table(table, f"trials-{metric}-{corruption}-{refs}", key="dd-table")


page()
