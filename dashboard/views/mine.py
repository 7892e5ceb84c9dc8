"""Your sentences: a visitor's own sentences with their references become a suite of metric unit tests, scored
into the accuracy grid, in the browser: ``muttlab corrupt --input FILE --output suite.jsonl`` followed by
``muttlab run --suite suite.jsonl``.

The suite is kept in the server's memory under an unguessable ``mine:<id>`` name
(:mod:`muttlab.dashboard.services.user_suites`, which also enforces the caps); the grid's cells open its trials
on the Drill-down page (``suite=mine:<id>``), and the suite downloads as the JSONL ``muttlab run --suite``
reads, so the command line gives the same grid. What was typed or uploaded cannot travel in a link: the page
has no link parameters of its own.
"""
from __future__ import annotations

import streamlit as st

from muttlab.dashboard import charts, glossary, services, ui
from muttlab.dashboard.grid_progress import run_with_progress
from muttlab.dashboard.grid_table import accuracy_grid_html
from muttlab.dashboard.services import user_suites
from muttlab.errors import MuttlabError
from muttlab.api import frame_jsonl, sentences_format, suite_frame

BUILT_KEY = "mine_built"  # (name, dropped names, Selection) of this session's latest suite; the suite is the store's
LIVE_KEY = "mine_live"  # False after Cancel: the rerun it starts must not score again
REF_OPTIONS = (1, 2, 3, 5, 10, 20)
PASTE_LABEL = "…or paste your sentences (used when no file is uploaded)"


def _format_help(limits) -> None:
    st.markdown(
        "**Format.** One sentence per row with its references, as a file or pasted below:\n"
        "- **CSV** or **TSV**: a header row with `text`, optionally `id`, and one or more reference columns "
        "(each named `reference`, or `reference1`, `reference2`, …);\n"
        "- **JSON lines** (`.jsonl`): one object per line, `{\"id\": \"s1\", \"text\": \"…\", "
        "\"references\": [\"…\", \"…\"]}` (`id` optional).\n\n"
        f"At most {limits.max_suite_sentences:,} sentences and {limits.max_suite_kb:,} KiB per suite, "
        f"{limits.max_refs:,} references per sentence, {limits.max_chars:,} characters and {limits.max_words:,} "
        f"words per sentence or reference; this server keeps {limits.max_suites:,} suites per visitor (a newer "
        "one replaces your oldest). Rows without a text or a reference are left out and listed by line. "
        "The same files work on the command line: `muttlab corrupt --input FILE --output suite.jsonl`.")
    # One row that wraps (not fixed columns): each button keeps the width its label needs at any window width.
    examples = st.container(horizontal=True)
    examples.download_button("Example (CSV)", user_suites.example("csv").encode("utf-8"),
                             file_name="my-sentences.csv", mime="text/csv", key="mine-example-csv",
                             icon=":material/download:", on_click="ignore")
    examples.download_button("Example (JSONL)", user_suites.example("jsonl").encode("utf-8"),
                             file_name="my-sentences.jsonl", mime="application/jsonl", key="mine-example-jsonl",
                             icon=":material/download:", on_click="ignore")


def _use_example() -> None:
    st.session_state["mine-text"] = user_suites.example("csv")


def _cancel() -> None:
    st.session_state[LIVE_KEY] = False


def _score_again() -> None:
    st.session_state[LIVE_KEY] = True


def page() -> None:
    settings = ui.header("Your sentences",
                         "Turn your own sentences into metric unit tests: each corruption generator rewrites every "
                         "sentence it applies to, and each metric must score your sentence above its corruption "
                         "(or, for meaning-preserving corruptions, about the same) against your references.")
    available = ui.loadable_metrics(settings)
    if not available:
        return
    types = services.generator_types()
    if not types:
        ui.not_available("Corruption generators", "muttlab.corruptions.generate / muttlab.engine.suites")
        return
    labels = services.corruption_labels(types)
    limits = settings.limits
    _format_help(limits)
    st.button("Put the example in the box", key="mine-use-example", icon=":material/content_paste:",
              on_click=_use_example, help="Replaces what the box holds with the example's six sentences.")
    with st.form("mine-form", border=True):
        uploaded = st.file_uploader("Upload a file (.csv, .tsv or .jsonl)", type=["csv", "tsv", "jsonl"],
                                    key="mine-file")
        # Empty, with the example as its grey placeholder: a box that starts with the example could be scored as
        # the visitor's own sentences after the session was lost (a frozen tab, a reconnect).
        pasted = st.text_area(PASTE_LABEL, "", height=200, key="mine-text", max_chars=limits.max_suite_kb * 1024,
                              placeholder=user_suites.example("csv"),
                              help=f"At most {limits.max_suite_kb * 1024:,} characters; a longer paste is refused "
                                   "and the box keeps what it held.")
        ui.paste_guard(PASTE_LABEL, limits.max_suite_kb * 1024)
        left, middle, right = st.columns([4, 4, 2])
        chosen_types = left.multiselect("Corruption types", types, default=types,
                                        format_func=lambda c: labels.get(c, c), key="mine-types",
                                        help=glossary.term("not applied"))
        default_metrics = [m for m in services.DEFAULT_METRICS if m in available and services.is_quick(m)]
        metrics = middle.multiselect("Metrics", available, default=default_metrics or available[:2],
                                     key="mine-metrics")
        options = sorted(set(REF_OPTIONS) | set(settings.ref_counts))
        refs = right.multiselect("References", options, default=list(settings.ref_counts), key="mine-refs",
                                 help=glossary.term("references (5/10/20)")
                                 + " Counts above what every one of your sentences has are left out.")
        submitted = st.form_submit_button("Build and score", type="primary", icon=":material/play_arrow:")
    ui.demo_caption(settings)
    if submitted and _build(settings, uploaded, pasted, chosen_types, metrics, refs):
        st.session_state[LIVE_KEY] = True
    if BUILT_KEY in st.session_state:
        _show(settings, *st.session_state[BUILT_KEY])


def _build(settings, uploaded, pasted: str, types, metrics, refs) -> bool:
    """Build and keep the suite of the form's input; False (after saying why) when it cannot be built. The
    form keeps what was typed and chosen either way."""
    if not metrics:
        st.warning("Choose at least one metric.")
        return False
    if uploaded is None and not pasted.strip():
        st.warning("The box is empty: paste your sentences or upload a file (the grey text in the box is only an "
                   "example; **Put the example in the box** uses it).", icon=":material/edit_note:")
        return False
    try:
        if uploaded is not None:
            user_suites.check_size(settings.limits, uploaded.size, uploaded.name)  # before a copy is read
            data, label, kind = uploaded.getvalue(), uploaded.name, sentences_format(uploaded.name, "")
        else:
            data, label, kind = pasted.encode("utf-8"), "the pasted text", sentences_format("", pasted)
        with ui.progress_bar("Reading, parsing and corrupting your sentences…") as progress:
            name, dropped = user_suites.build(settings, user_suites.current_visitor(), data, label, kind,
                                              list(types), progress)
    except MuttlabError as exc:
        st.error(ui.md_text(exc), icon=":material/error:")
        return False
    suite = user_suites.lookup(name)
    if suite is None:  # newer suites of this client replaced it in the meantime
        st.warning("Your suite was replaced before it could be scored: press **Build and score** again.")
        return False
    have = suite.max_refs()
    counts = tuple(k for k in sorted(refs) if k <= have) or (have,)
    left_out = [k for k in refs if k > have]
    if left_out:
        st.info(ui.md_text(f"Reference counts {', '.join(map(str, sorted(left_out)))} left out: one of your "
                           f"sentences has only {have} reference{'s' if have != 1 else ''}."),
                icon=":material/info:")
    present = set(suite.corruptions())
    selection = services.Selection(tuple(metrics), tuple(t for t in types if t in present), counts)
    st.session_state[BUILT_KEY] = (name, dropped, selection)
    return True


def _show(settings, name: str, dropped: tuple[str, ...], selection: services.Selection) -> None:
    """The kept suite: what was built from which sentences, its download, and its grid."""
    suite, found = user_suites.lookup(name), user_suites.report(name)
    if suite is None or found is None:
        st.warning("This server no longer holds your suite (it restarted, or newer suites replaced it): press "
                   "**Build and score** again.", icon=":material/history:")
        return
    labels = services.corruption_labels(selection.corruptions)
    st.subheader("Your suite")
    a, b, c = st.columns(3)
    a.metric("sentences", f"{found.sentences:,}")
    b.metric("trials", f"{len(suite.trials):,}")
    c.metric("corruption types that applied", f"{len(selection.corruptions)} of {len(found.coverage)}")
    if dropped:
        st.info(ui.md_text(f"You keep at most {settings.limits.max_suites} suites on this server: your oldest "
                           f"({', '.join(dropped)}) made room for this one, and its links no longer open."),
                icon=":material/info:")
    if found.problem_count:
        st.warning(ui.md_text(f"{found.problem_count:,} row(s) left out: "
                              + "; ".join(str(p) for p in found.problems)
                              + ("; …" if found.problem_count > len(found.problems) else "")),
                   icon=":material/warning:")
    st.caption("Per corruption type: how many of your sentences it rewrote, and when it does not apply.")
    ui.table(found.coverage, "mine-coverage", key="mine-coverage")
    if not found.skipped.empty:
        with st.expander(f"Where a type did not apply ({len(found.skipped):,} sentence × type)"):
            ui.table(found.skipped, "mine-not-applied", key="mine-skipped")
    file_name = f"mine-{name.removeprefix(user_suites.PREFIX)[:8]}.jsonl"
    st.download_button("Download the suite (JSONL)", lambda: frame_jsonl(suite_frame(suite)).encode("utf-8"),
                       file_name=file_name, mime="application/jsonl", key="mine-suite-jsonl",
                       icon=":material/download:", on_click="ignore")
    st.caption("The same grid on the command line:")
    st.code(f"muttlab run --suite {file_name} --metrics {','.join(selection.metrics)} "
            f"--corruptions {','.join(selection.corruptions)} --refs {','.join(map(str, selection.ref_counts))}",
            language="bash", wrap_lines=True)

    if not st.session_state.get(LIVE_KEY, True):
        st.info("Run cancelled: what was scored stays in the cache.", icon=":material/stop_circle:")
        st.button("Score again", icon=":material/play_arrow:", key="mine-again", on_click=_score_again)
        return
    results = run_with_progress(settings, selection, name, _cancel, "mine-cancel")
    if results is None:
        return
    accuracy = results.accuracy()
    st.subheader("Accuracy")
    st.caption("Percentage of your trials each metric gets right, per corruption type and number of references. "
               "Hover a cell for its counts, 95% interval and tie rate; click it to read its trials.")
    st.html(accuracy_grid_html(accuracy, labels, selection.metrics, selection.corruptions, suite=name))
    ui.grid_keys()
    left, right = st.columns(2)
    with left:
        ui.csv_download("Download CSV", accuracy, "mine-accuracy", "mine-grid-csv")
    with right:
        ui.chart_download(lambda: charts.accuracy_heatmap(accuracy, labels, metric_order=selection.metrics,
                                                          corruption_order=selection.corruptions),
                          "mine-accuracy", "mine-grid")
    for warning in results.warnings:
        st.warning(ui.md_text(warning), icon=":material/warning:")


page()
