"""Drill-down: the trials of one metric x corruption x reference-count cell, failing first, by margin; or of one
phenomenon of a challenge set (``suite=file:<path>`` in the data dir, ``suite=upload:<sha256>`` of a file
uploaded to this server); also of the pair store (``suite=store``) and a visitor's own suite (``suite=mine:<id>``).

The cell, the filter, the search, the compared metric and the page live in the address bar
(``/drilldown?metric=METEOR-1.5&corruption=neg_subj&refs=5&show=fails&vs=BLEU-4``), so the view is a link; the
list shown and every number on it are built by :mod:`muttlab.dashboard.cell_view`, :mod:`~muttlab.dashboard.compare`
and :mod:`~muttlab.dashboard.number_format`, which the view's offline report (:mod:`muttlab.dashboard.report`)
uses too.
"""
from __future__ import annotations

import math
from urllib.parse import urlencode

import streamlit as st

from muttlab.dashboard import cell_view, charts, glossary, services, trial_card, ui
from muttlab.dashboard.cell_notice import sample_cell_notice
from muttlab.dashboard.number_format import accuracy_text, interval_text
from muttlab.api import SLICE_LABELS, SLICE_NUMBERS
from muttlab.errors import MuttlabError

CELL_KEY = "drilldown_cell"
SHOW_PENDING_KEY = "dd-show-pending"  # a link's show= that waits for its comparison (scored after a click)
PAGE_SIZE = 15
SHOW_LABELS = {"fails": "fails", "passes": "passes", "all": "all"}


def _index(options: list, value, fallback: int = 0) -> int:
    return options.index(value) if value in options else fallback


def _trial_card(row, higher_is_better: bool, pair_id: int | None, other: str | None) -> None:
    st.html(trial_card.card_html(row, higher_is_better, pair_id, other, text=ui.html_text))


def _waits_for_click(settings, metric: str, corruption: str, refs: int | None, suite_name: str, key: str,
                     file_key: tuple | None = None) -> bool:
    """Whether the page waits for a click before scoring: a link opens at once only what is cheap. A grid cell
    the server has, a cell whose every score is in the score cache (nothing to score), or a quick metric's one
    cell (small bounded work), opens at once; a slow metric's cell waits; a challenge set's phenomenon waits
    unless the server has scored the set with the metric (scoring it is the whole file's work, one side of every
    pair)."""
    what = ("cell", metric, corruption, refs, suite_name)
    if file_key is not None:
        return ui.waits_for_click(what, f"Score {metric} on this challenge set", key,
                                  f"This link opens a phenomenon of a challenge set that this server has not scored "
                                  f"with {metric} yet: press the button to score the set.",
                                  finished=services.is_memoised(services.challenge_key(settings, file_key, (metric,))))
    if services.finished_run(settings, services.Selection((metric,), (corruption,), (refs,)), suite_name) is not None:
        return False
    # The cache is looked up for a slow metric's cell not yet asked for only: any other opens at once anyway.
    if services.is_quick(metric) or ui.asked(what) or services.cell_cached(settings, metric, corruption, refs,
                                                                            suite_name):
        return False
    return ui.slow_and_unasked([metric], what, f"Score {metric} on this cell", key)


def _compare(settings, available: list[str], metric: str, corruption: str, refs: int | None, suite_name: str,
             fmt: str | None, title: str, file_key: tuple | None):
    """Another metric on the same trials: which trials only one of the two gets right (browsable below with
    Show), McNemar's test on those counts, their figure and CSV. Returns the comparison, or None."""
    others = [m for m in available if m != metric]
    wanted = ui.query_value("vs")
    with st.expander("Compare with another metric on these trials (McNemar)", expanded=wanted in others):
        other = st.selectbox("Other metric", [None] + others, index=(others.index(wanted) + 1) if wanted in others
                             else 0, format_func=lambda m: "choose…" if m is None else m, key="dd-vs")
        st.session_state["dd-vs-chosen"] = other
        if other is None or _waits_for_click(settings, other, corruption, refs, suite_name, "dd-vs-score", file_key):
            return None
        try:
            comparison = services.paired_comparison(settings, metric, other, corruption, refs, suite_name, fmt)
        except services.DemoLimit as exc:
            ui.demo_limit(exc)
            return None
        except MuttlabError as exc:
            st.error(ui.md_text(f"{other} cannot be scored on this cell: {exc}"))
            return None
        result = comparison.test
        for column, (label, value) in zip(st.columns(4), comparison.numbers()):
            column.metric(label, value)
        st.caption(f"{result.n} paired trials (both metrics could score them); {result.method} test (McNemar "
                   "1947). A small p says the two metrics get different trials right, beyond chance. Show "
                   "“only … right” below lists either side with its cards.")
        judged = comparison.joined[comparison.both_judged]
        heading = f"{metric} vs {other}: {title}"
        ui.chart(charts.comparison_chart(comparison.contingency(), judged, metric, other, heading),
                 f"compare-{metric}-{other}-{corruption}", key="dd-compare-chart")
        ui.folded_table("The trials only one of the two gets right", comparison.disagreeing(),
                        f"disagreeing-{metric}-{other}-{corruption}", key="dd-compare")
        return comparison


def _slice_link(key: str) -> str:
    """This view with the slice ``key`` (relative to this page, as the Challenge sets page links its rows)."""
    params = {k: v for k, v in ui.view().params.items() if k not in ("page", "slice", "trial")}
    return "drilldown?" + urlencode({**params, "slice": key})


def _slice_control(properties, condition, prop: str, key: str):
    """One property's filter; returns its condition, or None while it keeps every trial. A link's condition
    sets the control the first time it is drawn, clamped to the values this cell has."""
    column = properties[prop].dropna()
    if prop in SLICE_LABELS:
        options = ["all", *sorted(column.unique())]
        if key not in st.session_state:
            st.session_state[key] = condition.label if condition is not None and condition.label in options else "all"
        chosen = st.selectbox(SLICE_LABELS[prop], options, key=key)
        return None if chosen == "all" else f"{prop}={chosen}"
    low, high = int(column.min()), int(column.max())
    if low == high:
        return None
    if key not in st.session_state:
        wanted = (low, high) if condition is None else (max(low, min(condition.low, high)),
                                                        min(high, max(condition.high, low)))
        st.session_state[key] = wanted
    name, unit = SLICE_NUMBERS[prop]
    chosen = st.slider(f"{name} ({unit})", low, high, key=key)
    return None if tuple(chosen) == (low, high) else f"{prop}:{chosen[0]}..{chosen[1]}"


def _slices(cell, trials: dict, where: str, title: str):
    """The cell's trials by their properties: a filter per property, a histogram, and the slices (n ≥ 20) where
    the metric's accuracy is lowest, each a link. Returns the ids of the trials in the chosen slice (None: all)
    and the slice's link value."""
    linked = services.parse_slice(ui.query_value("slice"))  # the link's view kept it only if it reads
    by_prop = {c.prop: c for c in linked.conditions}
    # Filled only when open, as a folded table is: its figure and table would hold the trial cards back.
    box = st.expander("Slices: the trials by length, overlap with the references, corruption size",
                      expanded=bool(linked.conditions), icon=":material/filter_alt:", key=f"dd-slices-{where}",
                      on_change="rerun")
    if not box.open:
        return None, None
    try:
        properties, worst = services.cell_slices(cell, trials)
    except MuttlabError as exc:
        st.error(ui.md_text(f"The trials cannot be sliced: {exc}"))
        return None, None
    with box:
        st.caption("Length counts the original's words; overlap is the share of them found in the references "
                   "scored against; corruption size is the word-level edit distance from the original to the "
                   "corruption. Narrow a property to list only its trials below; closing this box lists every "
                   "trial again.")
        props = [p for p in (*SLICE_NUMBERS, *SLICE_LABELS) if p in properties.columns]
        keys = []
        for prop, column in zip(props, st.columns(len(props))):
            with column:
                keys.append(_slice_control(properties, by_prop.get(prop), prop, f"dd-slice-{prop}-{where}"))
        chosen = ",".join(k for k in keys if k)
        active = services.parse_slice(chosen)
        shown_prop = st.segmented_control("Histogram of", props, default=props[0], key=f"dd-slice-hist-{where}",
                                          format_func=lambda p: SLICE_NUMBERS.get(p, (SLICE_LABELS.get(p, p),))[0])
        inside = properties[active.mask(properties)]
        prop = shown_prop or props[0]
        axis = " ".join(SLICE_NUMBERS[prop]) if prop in SLICE_NUMBERS else SLICE_LABELS[prop]
        ui.chart(charts.slice_histogram(inside, prop, axis, f"{title}: {active.text}"), f"slices-{prop}-{where}",
                 key=f"dd-slice-chart-{where}")
        st.markdown("**Where the metric fails most** (slices of at least 20 judged trials, lowest accuracy first)")
        if worst.empty:
            st.caption("No slice of this cell holds 20 judged trials.")
        else:
            listed = worst.assign(accuracy=[accuracy_text(p, n) for p, n in zip(worst["passed"], worst["n"])],
                                  interval=[interval_text(lo, hi) for lo, hi in zip(worst["ci_low"], worst["ci_high"])],
                                  link=[_slice_link(k) for k in worst["slice"]])
            ui.table(listed[["text", "n", "passed", "accuracy", "interval", "link"]].rename(columns={"text": "slice"}),
                     f"slices-{where}", key=f"dd-slice-table-{where}",
                     column_config={"link": st.column_config.LinkColumn("link", display_text="open this slice")})
            st.caption("95% Wilson intervals. Each link opens this cell with its slice chosen.")
    if not active.conditions:
        return None, None
    return set(properties.loc[active.mask(properties), "trial"]), active.key


def _missing_notice(settings, suite, suite_name: str, challenge: bool, metric: str, missing: str,
                    refs: int | None) -> None:
    """The one notice of a link whose corruption type (or phenomenon) the loaded trials do not have: on the
    bundled sample, the grid cell's MUTT numbers and that the sample has none of its trials; else which suite
    lacks it. Nothing is scored until a type is chosen."""
    if suite.is_sample and suite_name == "default" and refs is not None:
        st.warning(sample_cell_notice(services.shipped_grid, suite, metric, missing, refs,
                                      services.corruption_label(missing), escape=ui.md_text), icon=":material/info:")
        return
    where = ("" if challenge or cell_view.suite_kind(suite_name) == "mine"
             else "; the precomputed grid's cells need the MUTT data dir")
    st.warning(ui.md_text(f"This link's {'phenomenon' if challenge else 'corruption type'} {missing} is not in the "
                          f"loaded trials (suite {suite.name}){where}. Choose one they have above."))


def _suite_label(name: str) -> str:
    kind = cell_view.suite_kind(name)
    if kind == "file":
        return f"challenge set {name.partition(':')[2]}"
    return {"upload": "uploaded challenge set", "mine": "your suite"}.get(kind) or services.SUITES[name]


def _load(settings, suite_name: str, fmt: str | None):
    """(suite, its challenge-set file or None, that file's memo key or None) for ``suite_name``, or None after
    saying why it cannot be opened."""
    kind = cell_view.suite_kind(suite_name)
    try:
        if cell_view.is_challenge(suite_name):
            with ui.progress_bar("Reading the challenge set…") as progress:
                suite_file, file_key = services.challenge_file(settings, suite_name, fmt, progress)
            return suite_file.suite, suite_file, file_key
        if kind == "mine":
            return services.suite_named(settings, suite_name), None, None
    except services.DemoLimit as exc:
        ui.demo_limit(exc)
        return None
    except MuttlabError as exc:
        st.error(f"The trials this link names cannot be opened: {ui.md_text(exc)}")
        return None
    suite = ui.load_suite(settings)
    return None if suite is None else (suite, None, None)


def page() -> None:
    settings = ui.header("Drill-down", "The trials behind one cell of the accuracy grid or one phenomenon of a "
                                        "challenge set: failures first, the closest calls at the top.")
    available = ui.loadable_metrics(settings)
    if not available:
        return
    linked = ui.query_value("suite", "default")
    suite_options = list(services.SUITES) + ([linked] if linked not in services.SUITES else [])
    left, middle, right, far = st.columns([3, 3, 2, 2])
    suite_name = far.selectbox("Trials", suite_options, index=suite_options.index(linked), format_func=_suite_label,
                               key="dd-suite")
    challenge = cell_view.is_challenge(suite_name)
    fmt = ui.query_value("format") if challenge else None
    loaded = _load(settings, suite_name, fmt)
    if loaded is None:
        return
    suite, suite_file, file_key = loaded
    chosen = {**(st.session_state.get(CELL_KEY) or {}),
              **{k: v for k, v in (("metric", ui.query_value("metric")), ("corruption", ui.query_value("corruption")),
                                   ("refs", ui.query_int("refs"))) if v is not None}}
    corruptions = suite.corruptions()
    labels = {c: c for c in corruptions} if challenge else services.corruption_labels(corruptions)
    missing = chosen["corruption"] if chosen.get("corruption") and chosen["corruption"] not in corruptions else None
    metric = left.selectbox("Metric", available, index=_index(available, chosen.get("metric")), key="dd-metric")
    # A link's type these trials do not have selects none: the page never opens another type's trials under it.
    corruption = middle.selectbox("Phenomenon" if challenge else "Corruption", corruptions,
                                  index=None if missing else _index(corruptions, chosen.get("corruption")),
                                  format_func=lambda c: labels.get(c, c), key="dd-corruption",
                                  placeholder="choose one")
    if challenge:
        refs = None
        right.caption("References: each pair's own")
    else:
        max_refs = suite.max_refs()
        ref_options = [k for k in settings.ref_counts if k <= max_refs] or [max_refs]
        if chosen.get("refs") and chosen["refs"] not in ref_options and chosen["refs"] <= max_refs:
            ref_options = sorted(set(ref_options) | {int(chosen["refs"])})
        refs = int(right.selectbox("References", ref_options, index=_index(ref_options, chosen.get("refs"),
                                                                           len(ref_options) - 1), key="dd-refs",
                                   help=glossary.term("references (5/10/20)")))
    if corruption is None:
        _missing_notice(settings, suite, suite_name, challenge, metric, missing or "", refs)
        return
    st.session_state[CELL_KEY] = {"metric": metric, "corruption": corruption, "refs": refs}
    if suite.is_sample and suite_name == "default":
        st.warning(sample_cell_notice(services.shipped_grid, suite, metric, corruption, refs,
                                      labels.get(corruption, corruption), escape=ui.md_text), icon=":material/info:")

    if _waits_for_click(settings, metric, corruption, refs, suite_name, "dd-score", file_key):
        return
    cell = ui.with_progress(f"Scoring {metric} on {labels.get(corruption, corruption)}…", lambda progress:
                            services.cell_trials(settings, metric, corruption, refs, suite_name, fmt, progress),
                            failure="This cell cannot be scored")
    if cell is None:
        return
    info = {i.name: i for i in services.metric_catalogue(settings)}[metric]
    counts = cell_view.counts(cell)
    helps = {"passed": f"A trial passes when its margin says so. {glossary.margin(corruption, settings)}",
             "failed": glossary.term("tie rule", settings), "accuracy": glossary.term("Wilson interval")}
    for column, (label, value) in zip(st.columns(4), cell_view.header_numbers(counts)):
        column.metric(label, value, help=helps.get(label))
    if counts.unsupported:
        ui.caption_text(f"{counts.unsupported} trial(s) {metric} cannot score are unsupported: in no count above "
                        "but trials, and in no accuracy.")
    skipped = suite_file.not_applied.get(corruption, 0) if suite_file is not None else 0
    if skipped:
        ui.caption_text(f"{skipped} record(s) of this phenomenon the data set marks as not applied are no test "
                        "items: not listed, never scored.")
    if info.signature:
        ui.caption_text(f"signature: {info.signature}")
        st.caption(glossary.term("signature"))

    title = (f"{labels.get(corruption, corruption)}" + (f", {refs} references" if refs is not None else ""))
    heading = f"Margins: {metric} on {title}"
    ui.chart(charts.margin_histogram(cell, heading), f"margins-{metric}-{corruption}-{refs or 'own'}",
             key="dd-margins")

    comparison = _compare(settings, available, metric, corruption, refs, suite_name, fmt, title, file_key)
    in_slice, slice_key = _slices(cell, {t.id: t for t in suite.of(corruption)},
                                  f"{suite_name}-{corruption}-{refs}", f"{metric} on {title}")

    f1, f2 = st.columns([3, 4])
    shows = list(SHOW_LABELS) + (["only-metric", "only-vs"] if comparison is not None else [])
    show_labels = {**SHOW_LABELS, **({"only-metric": f"only {metric} right", "only-vs": f"only {comparison.other} "
                                      "right"} if comparison is not None else {})}
    if "dd-verdict" not in st.session_state:
        linked_show = ui.query_value("show", "fails")
        st.session_state["dd-verdict"] = linked_show if linked_show in shows else "fails"
        st.session_state["dd-query"] = ui.query_value("q", "")
        if linked_show not in shows:  # "only …": it applies once the comparison the link names is scored
            st.session_state[SHOW_PENDING_KEY] = linked_show
    elif st.session_state.get(SHOW_PENDING_KEY) in shows:
        st.session_state["dd-verdict"] = st.session_state.pop(SHOW_PENDING_KEY)
    elif st.session_state["dd-verdict"] not in shows:
        st.session_state["dd-verdict"] = "fails"
    verdict = f1.segmented_control("Show", shows, format_func=show_labels.get, key="dd-verdict") or "fails"
    query = f2.text_input("Search the sentences", key="dd-query",
                          placeholder="a word in the original or the corruption")
    trial_id = ui.query_value("trial")
    ui.write_query({"metric": metric, "corruption": corruption, "refs": refs,
                    "vs": st.session_state.get("dd-vs-chosen"),
                    "suite": suite_name if suite_name != "default" else None, "format": fmt,
                    "show": verdict if verdict != "fails" else st.session_state.get(SHOW_PENDING_KEY),
                    "q": query.strip() or None, "trial": trial_id, "slice": slice_key})
    other = comparison.other if comparison is not None else None
    st.html(trial_card.CSS)
    if trial_id:
        base = cell if comparison is None else comparison.joined
        pinned = base[base["trial"] == trial_id]
        if not pinned.empty:
            st.markdown(f"**Trial {ui.md_text(trial_id)}** (from the link)")
            editable = services.pair_ids(settings, [trial_id]) if not challenge else {}
            _trial_card(next(pinned.itertuples(index=False)), info.higher_is_better, editable.get(trial_id), other)
    shown = cell_view.shown(cell, verdict, query, comparison)
    if in_slice is not None:
        shown = shown[shown["trial"].isin(in_slice)]
    st.markdown(f"**{len(shown)}** of {counts.trials} trials shown")
    if shown.empty:
        st.info("No trial matches the filter.")
        return

    pages = max(1, math.ceil(len(shown) / PAGE_SIZE))
    number = st.number_input("Page", min_value=1, max_value=pages, value=1, step=1, key="dd-page") if pages > 1 else 1
    start = (int(number) - 1) * PAGE_SIZE
    on_page = shown.iloc[start:start + PAGE_SIZE]
    editable = services.pair_ids(settings, list(on_page["trial"])) if not challenge else {}
    for row in on_page.itertuples(index=False):
        _trial_card(row, info.higher_is_better, editable.get(row.trial), other)

    ui.copy_link("drilldown")
    ui.folded_table("All shown trials as a table", shown.assign(references=shown["references"].map(" | ".join)),
                    f"trials-{metric}-{corruption}-{refs or 'own'}", key="dd-table")


page()
