"""Meta-evaluation: how well each metric agrees with expert MQM judgments of real MT output (WMT21 TED talks), as
WMT's metrics task measures it (docs/meta_eval.md), or with a visitor's own judgments, uploaded.

The page opens on the shipped results (the ``meta_eval`` snapshot): a link never starts a computation. For a
language pair and a statistic it shows the ranking with its significance clusters and the constant and random
baseline rows, the metrics that could not score the pair with why, a scatter of Δmetric against ΔMQM over the
pairs of outputs of one source with the band |Δmetric| ≤ ε shaded, and one segment's outputs with their MQM
errors highlighted where the annotators marked them (a point of the scatter, or the segment picker). The view
lives in the address bar (``/meta_eval?pair=zh-en&statistic=acc_eq_item&metric=chrF&segment=12``). An upload in
the generic format (TSV or JSONL) is read with the other uploads' limits and scored after a click, within the
public demo's share.
"""
from __future__ import annotations

import streamlit as st

from muttlab import api
from muttlab.dashboard import charts, services, ui
from muttlab.dashboard.error_spans import SPANS_CSS, output_html
from muttlab.dashboard.number_format import fmt_score
from muttlab.dashboard.services import meta
from muttlab.errors import MuttlabError

SOURCES = {"ted": "WMT21 TED talks: expert MQM", "upload": "your own judgments (upload)"}
DEFAULT_UPLOAD_METRICS = ("chrF", "sentBLEU", "TER")
SEGMENT_KEY, PICKED_KEY = "me-segment", "me-picked"


def _statistic_label(statistic: str) -> str:
    return f"{statistic}: {api.meta_statistics().get(statistic, statistic)}"


def _shipped_result(settings):
    """(pair, its shipped result), or None after saying why there is none."""
    try:
        pairs = meta.meta_pairs_shipped()
    except MuttlabError as exc:
        st.error(f"The shipped meta-evaluation cannot be read: {ui.md_text(exc)}")
        return None
    if not pairs:
        st.info("This build ships no meta-evaluation; run `muttlab meta-eval mqm-ted:en-de` with the data dir.",
                icon=":material/folder_off:")
        return None
    pair = ui.query_choice("pair", pairs, pairs[0], "language pair")
    pair = st.segmented_control("Language pair", pairs, default=pair, key="me-pair") or pair
    result = meta.shipped_meta(pair)
    stale = meta.shipped_meta_notes(settings)
    ui.caption_text(meta.shipped_caption(result, stale))
    return pair, result


def _upload(settings):
    """(a key naming the upload, its evaluation) once uploaded and scored, or None."""
    upload = st.file_uploader("Judgments file (.tsv or .jsonl: item, system, hypothesis, reference, score)",
                              type=["tsv", "txt", "jsonl", "json"], key="me-upload")
    st.caption("One row per judged output, higher scores better; the format is in docs/meta_eval.md "
               "(“Your own judgments”). Uploads are kept while the server runs and are not linked.")
    if upload is None:
        return None
    read = ui.with_progress("Reading the file…", lambda _: meta.read_judgments(settings, upload.getvalue(),
                                                                              upload.name),
                            failure="The file cannot be read")
    if read is None:
        return None
    judgments, key = read
    judged = int((judgments.gold == judgments.gold).sum())
    ui.caption_text(f"{upload.name}: {len(judgments.systems)} systems, {len(judgments.items)} items, {judged:,} "
                    f"judged outputs, target language {judgments.target_language}.")
    for note in judgments.notes:
        ui.caption_text(note)
    available = ui.loadable_metrics(settings)
    metrics = st.multiselect("Metrics", available, key="me-metrics",
                             default=[m for m in DEFAULT_UPLOAD_METRICS if m in available] or available[:2])
    if not metrics:
        st.warning("Choose at least one metric.")
        return None
    ui.demo_caption(settings)
    what = meta.evaluation_key(settings, key, tuple(metrics))
    if ui.waits_for_click(what, "Meta-evaluate the metrics", "me-score",
                          f"Press the button to score {judged:,} outputs with {', '.join(metrics)} and compare them "
                          "with your judgments.", finished=services.is_memoised(what)):
        return None
    result = ui.with_progress("Scoring the outputs…", lambda progress: meta.evaluate(
        settings, judgments, key, tuple(metrics), progress), failure="The meta-evaluation failed")
    return None if result is None else (key, judgments, result)


def _ranking(result, statistic: str, name: str) -> None:
    st.subheader("Ranking")
    ui.table(meta.ranking_frame(result, statistic), f"meta-{name}-{statistic}", key="me-ranking")
    st.caption("Best first. A cluster is a group no metric of which is significantly better than another in it "
               "(a new one opens when one already in the group beats it, p < α); the constant baseline ties every "
               "pair, the random one scores at random (seeded): a metric at or below them has learnt nothing this "
               "statistic can see. ε: the largest score difference the metric calls a tie, in its own units.")
    if result.skipped:
        st.markdown(f"**Not evaluated** ({len(result.skipped)}): these metrics cannot score this pair")
        ui.table(meta.skipped_frame(result), f"meta-{name}-not-evaluated", key="me-skipped")
    for note in result.notes:
        ui.caption_text(note)


def _scatter(result, key: tuple, statistic: str, name: str) -> int | None:
    """The scatter of pairs for a metric of the page's choice; returns the segment a click chose, or None."""
    scored = [m for m in result.metrics if m in (result.scores or {})]
    if not scored:
        return None
    st.subheader("Pairs of outputs: Δmetric against Δ" + ui.md_text(result.human))
    default = "chrF" if "chrF" in scored else scored[0]
    metric = ui.query_choice("metric", scored, default, "metric (with shipped per-output scores)")
    metric = st.selectbox("Metric", scored, index=scored.index(metric), key="me-metric")
    grouped = meta.scatter_statistic(statistic)
    pairs = meta.pairs_of(key, result, metric, grouped)
    if grouped != statistic:
        st.caption("The scatter shows the item-grouped pairs of acc*_eq (its ε), whatever the ranking's statistic.")
    chosen = ui.chart(charts.meta_scatter(pairs, metric, result.human,
                                          f"{metric} on {name}: pairs of outputs of one source"),
                      f"meta-{name}-{metric}-pairs", key="me-scatter", selectable=True)
    ui.caption_text(f"{len(pairs):,} pairs; ε = {fmt_score(pairs.attrs['epsilon'])}. Click a point to open its "
                    "segment below.")
    picked = next((int(p["customdata"]) for p in chosen if p.get("customdata") is not None), None)
    return metric, picked


def _segment(settings, result, key: tuple, data, picked: int | None) -> int | None:
    """One segment's outputs with their errors highlighted; returns the segment shown."""
    st.subheader("One segment's outputs")
    last = result.items - 1
    if picked is not None and picked != st.session_state.get(PICKED_KEY):  # a new click on the scatter
        st.session_state[PICKED_KEY] = picked
        st.session_state[SEGMENT_KEY] = min(picked, last)
    elif SEGMENT_KEY not in st.session_state:
        st.session_state[SEGMENT_KEY] = min(ui.query_int("segment", 0), last)
    number = int(st.number_input(f"Segment (0–{last})", min_value=0, max_value=last, step=1, key=SEGMENT_KEY))
    if data is None:
        st.info("The outputs' texts come from the MQM files in the data dir (`MUTTLAB_DATA_DIR`), which do not "
                "ship; this server has none.", icon=":material/folder_off:")
        return number
    try:
        outputs = meta.segment(settings, key, data, number)
    except MuttlabError as exc:
        st.error(f"The segment cannot be shown: {ui.md_text(exc)}")
        return number
    attrs = outputs.attrs
    st.html(SPANS_CSS)
    lines = []
    if attrs.get("source"):
        lines.append(output_html("source", attrs["source"], attrs.get("source_errors", ())))
    for k, reference in enumerate(attrs.get("references", ())):
        label = attrs.get("reference_system") or f"reference {k + 1}"
        lines.append(output_html(f"{label} (reference)", reference, ()))
    ranked = outputs.sort_values("human", ascending=False, kind="stable")
    for row in ranked.itertuples(index=False):
        lines.append(output_html(row.system, row.output, row.errors, f"{result.human} {fmt_score(row.human)}"))
    st.html("".join(lines))
    ui.caption_text(f"Item {attrs.get('item')}: outputs best first by {result.human}; a marked span is an error an "
                    "annotator marked (Major darker, Minor lighter; its title names severity, category and rater).")
    errors = [{"system": row.system, "severity": e["severity"], "category": e["category"], "rater": e["rater"],
               "text": row.output[e["start"]:e["end"]]} for row in ranked.itertuples(index=False) for e in row.errors]
    if errors:
        import pandas as pd
        ui.folded_table("The errors as a table", pd.DataFrame(errors), f"segment-{number}-errors",
                        key="me-errors")
    return number


def page() -> None:
    settings = ui.header("Meta-evaluation", "Which metric agrees best with expert judgments of real system output? "
                                            "Pairwise accuracy with tie calibration, correlations and system-level "
                                            "accuracy, with baselines and significance clusters, as WMT measures "
                                            "them.")
    source = st.radio("Judgments", list(SOURCES), format_func=SOURCES.get, horizontal=True, key="me-source")
    statistics = list(api.meta_statistics())
    statistic = ui.query_choice("statistic", statistics, statistics[0], "statistic")
    # The name alone in the box (a phone's width cuts the descriptions); the chosen one's meaning below it.
    statistic = st.selectbox("Statistic", statistics, index=statistics.index(statistic), key="me-statistic",
                             help=ui.md_text("; ".join(_statistic_label(s) for s in statistics)))
    st.caption(ui.md_text(api.meta_statistics()[statistic]))
    if source == "upload":
        ui.write_query({})
        uploaded = _upload(settings)
        if uploaded is None:
            return
        key, judgments, result = uploaded
        _ranking(result, statistic, result.name)
        scatter = _scatter(result, key, statistic, result.name)
        _segment(settings, result, key, judgments, scatter[1] if scatter else None)
        return
    shipped = _shipped_result(settings)
    if shipped is None:
        return
    pair, result = shipped
    _ranking(result, statistic, pair)
    key = ("shipped", pair)
    scatter = _scatter(result, key, statistic, pair)
    data = f"mqm-ted:{pair}" if settings.data_dir is not None else None
    number = _segment(settings, result, key, data, scatter[1] if scatter else None)
    ui.write_query({"pair": pair, "statistic": statistic, "metric": scatter[0] if scatter else None,
                    "segment": number})
    ui.copy_link("meta_eval")


page()
