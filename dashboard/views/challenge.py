"""Challenge sets: a published contrastive challenge set (WMT challenge-set TSV, ACES TSV, DEMETR JSON,
contrastive JSONL, MSLC24-B), uploaded or read from the data dir, scored by the chosen metrics and reported as
those papers do — per phenomenon, accuracy with ties as failures and the Kendall-τ-like statistic, and ACES'
weighted summary for an ACES file. Reading and reporting are :mod:`muttlab.suites` through
``muttlab.api.read_suite`` / ``run_challenge``, the same as ``muttlab run --suite FILE``.

MSLC24-B is a folder, not a file: named in the data dir (MSLC-B's root or one pair's folder,
``/challenge?file=mslc/2024/data/MSLC-B&format=mslc24-b``), or uploaded as one pair's four files together
(``source.txt``, ``reference.txt``, ``hypothesis.txt``, ``types.tsv``) with the language pair typed on the page.
Several files uploaded at once are always such a pair.

A trial suite (``trials-jsonl``, ``muttlab corrupt --output``) is no challenge set: it is kept as a visitor's
suite and scored into the accuracy grid the Your sentences page draws (:func:`_trial_grid`).

Malformed rows are listed with their line numbers; the good rows are scored. Errors speak of the page (its
Format choice), never of a command-line flag. A file or folder in the data dir keeps the view in the address bar
(``/challenge?file=challenge/aces.tsv&metrics=chrF,BLEU-4``); an upload cannot. Each phenomenon's row links to
its pairs on the Drill-down page (``suite=file:<path>``, or ``upload:<sha256>`` of an upload — of a pair's files
together — which the server keeps while it runs).
"""
from __future__ import annotations

from urllib.parse import urlencode

import streamlit as st

from muttlab.dashboard import services, ui
from muttlab.dashboard.cell_view import read_data_file
from muttlab.dashboard.number_format import count_text
from muttlab.errors import MuttlabError

DEFAULT_METRICS = ("chrF", "sentBLEU", "BLEU-4", "METEOR-1.5")
AUTO = "auto"
FORMAT_LABELS = {AUTO: "tell from the file", "wmt-tsv": "WMT challenge-set TSV", "aces-tsv": "ACES TSV",
                 "demetr-json": "DEMETR JSON", "contrastive-jsonl": "contrastive JSONL",
                 "mslc24-b": "MSLC24-B (a folder, or a pair's four files)"}
PROBLEMS_SHOWN = 200


def _file(settings):
    """(content, name, suite name for Drill-down links) of the chosen file or folder, or None; the data-dir path
    goes to the address bar, an upload is kept by the server for the links to its phenomena (``upload:<sha256>``).
    The content is a file's bytes, or MSLC24-B's files' bytes keyed ``<pair>/<file name>``."""
    from muttlab.api import MSLC_FILES

    from_data_dir = settings.data_dir is not None
    sources = ["upload"] + (["data dir"] if from_data_dir else [])
    linked = ui.query_value("file")
    source = st.radio("File", sources, index=1 if linked and from_data_dir else 0, horizontal=True,
                      format_func={"upload": "upload", "data dir": "from the data dir"}.get, key="ch-source")
    if source == "upload":
        uploads = st.file_uploader(f"A challenge-set file (.tsv, .json, .jsonl), or the four files of one MSLC24-B "
                                   f"pair together ({', '.join(MSLC_FILES)})", type=["tsv", "txt", "json", "jsonl"],
                                   accept_multiple_files=True, key="ch-upload")
        if not uploads:
            return None
        if len(uploads) == 1:
            data, name = uploads[0].getvalue(), uploads[0].name.rsplit(".", 1)[0]
            return data, name, services.remember_upload(data, name)
        return _pair_files(uploads)
    relative = st.text_input("Path inside the data dir: a file, or MSLC24-B's folder (MSLC-B or one pair's)",
                             value=linked or "", key="ch-path", placeholder="challenge/aces.tsv")
    if not relative.strip():
        return None
    try:
        return (*read_data_file(settings, relative.strip()), f"file:{relative.strip()}")
    except MuttlabError as exc:
        st.error(ui.md_text(exc))
        return None


def _pair_files(uploads):
    """The uploaded files of one MSLC24-B pair, keyed ``<pair>/<file name>`` with the pair typed here, as
    :func:`_file` returns them; None (after a message) until the pair is named or when two files share a name."""
    pair = st.text_input("Language pair of these MSLC24-B files (its target language is the second code)",
                         key="ch-pair", placeholder="en-de").strip()
    names = [u.name for u in uploads]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        st.error(ui.md_text(f"Two of the uploaded files are called {twice[0]}: upload each of a pair's four files "
                            "once."))
        return None
    if not pair:
        st.info("Name the language pair of these files (such as en-de) to read them as MSLC24-B.",
                icon=":material/translate:")
        return None
    data = {f"{pair}/{u.name}": u.getvalue() for u in uploads}
    return data, pair, services.remember_upload(data, pair)


def _trial_grid(settings, suite_file, data: bytes, name: str, metrics: list[str]) -> None:
    """A trial suite (``trials-jsonl``, as ``muttlab corrupt --output`` writes it) scored into the accuracy grid
    the way the Your sentences page scores one: kept on the server as a visitor's suite (``mine:<id>``, within
    that page's size cap and suites per visitor, :mod:`muttlab.dashboard.services.user_suites`), so that each
    cell opens its trials on the Drill-down page."""
    import hashlib
    from dataclasses import replace

    from muttlab.dashboard.grid_progress import run_with_progress
    from muttlab.dashboard.grid_table import accuracy_grid_html
    from muttlab.dashboard.services import user_suites

    try:
        user_suites.check_size(settings.limits, len(data), name)
    except MuttlabError as exc:
        st.error(ui.md_text(exc), icon=":material/error:")
        return
    # One kept suite per file and session: a rerun finds it again rather than keeping another copy.
    held = f"ch-trials-{hashlib.sha256(data).hexdigest()}"
    suite = user_suites.lookup(st.session_state.get(held, ""))
    if suite is None:
        kept = replace(suite_file.suite, languages=suite_file.target_languages())
        st.session_state[held] = user_suites.add(user_suites.current_visitor(), kept)
        suite = user_suites.lookup(st.session_state[held])
    have = suite.max_refs()
    selection = services.Selection(tuple(metrics), tuple(suite.corruptions()),
                                   tuple(k for k in (5, 10, 20) if k <= have) or (have,))
    asked = ("challenge-grid", suite.name, tuple(metrics))

    def cancel() -> None:  # the next run waits for the button again; what was scored stays in the cache
        st.session_state[ui.ASKED_KEY] = set(st.session_state.get(ui.ASKED_KEY, ())) - {asked}
    if ui.waits_for_click(asked, "Score the suite", "ch-score",
                          f"Press the button to score its {count_text(len(suite.trials), 'trial', 'trials')} with "
                          f"{', '.join(metrics)} at {', '.join(map(str, selection.ref_counts))} references."):
        return
    results = run_with_progress(settings, selection, suite.name, cancel, "ch-cancel")
    if results is None:
        return
    accuracy = results.accuracy()
    labels = services.corruption_labels(selection.corruptions)
    st.subheader("Accuracy")
    st.caption("Percentage of the suite's trials each metric gets right, per corruption type and number of "
               "references. Hover a cell for its counts, 95% interval and tie rate; click it to read its trials.")
    st.html(accuracy_grid_html(accuracy, labels, selection.metrics, selection.corruptions, suite=suite.name))
    ui.grid_keys()
    ui.csv_download("Download CSV", accuracy, f"{name}-accuracy", "ch-grid-csv")
    for warning in results.warnings:
        st.warning(ui.md_text(warning), icon=":material/warning:")


def drilldown_link(suite_name: str, metric: str, phenomenon: str, fmt: str | None) -> str:
    """The Drill-down view of one phenomenon's pairs as judged by ``metric`` (relative to this page)."""
    return "drilldown?" + urlencode({k: v for k, v in (("suite", suite_name), ("metric", metric),
                                                        ("corruption", phenomenon), ("format", fmt)) if v})


def _in_this_pages_words(exc: MuttlabError) -> str:
    """A reader's error as this page says it: a fix that names a command-line flag (``--format-in``) becomes
    the page's own Format choice."""
    fix = getattr(exc, "fix", None)
    if not fix or "--" not in fix:
        return str(exc)
    where = exc.path if exc.line is None else f"{exc.path}, line {exc.line}"
    return f"{where}: {exc.problem} (or choose the file's format under Format above)"


def page() -> None:
    settings = ui.header("Challenge sets", "Contrastive challenge sets pair a good and an incorrect translation of "
                                           "one source: a metric ranks a pair correctly when it scores the good one "
                                           "strictly better (a tie is a failure).")
    from muttlab.api import CONTRASTIVE_FORMATS

    available = ui.loadable_metrics(settings)
    if not available:
        return
    chosen = _file(settings)
    formats = [AUTO] + [f for f in FORMAT_LABELS if f in CONTRASTIVE_FORMATS]
    left, right = st.columns([6, 2])
    metrics = left.multiselect("Metrics", available, key="ch-metrics", default=ui.query_list(
        "metrics", available, [m for m in DEFAULT_METRICS if m in available] or available[:2]))
    wanted_format = ui.query_value("format", AUTO)
    fmt = right.selectbox("Format", formats, index=formats.index(wanted_format) if wanted_format in formats else 0,
                          format_func=FORMAT_LABELS.get, key="ch-format")
    linked = st.session_state.get("ch-source") == "data dir"
    ui.write_query({"file": st.session_state.get("ch-path") if linked else None, "metrics": metrics,
                    "format": None if fmt == AUTO else fmt})
    if chosen is None:
        st.info("Upload a challenge set or name one in the data dir: WMT challenge-set TSV, ACES TSV, DEMETR JSON, "
                "contrastive JSONL, or MSLC24-B (its folder, or one pair's four files uploaded together).",
                icon=":material/upload_file:")
        return
    data, name, suite_name = chosen
    try:
        with ui.progress_bar("Reading the file…") as progress:
            suite_file, key = services.read_challenge(settings, data, name, None if fmt == AUTO else fmt, progress)
    except services.DemoLimit as exc:
        ui.demo_limit(exc)
        return
    except MuttlabError as exc:
        st.error(f"The file cannot be read: {ui.md_text(_in_this_pages_words(exc))}")
        return
    trials = suite_file.suite.trials
    groups = len(set(t.corruption for t in trials))
    if suite_file.contrastive:
        ui.caption_text(f"{name}: {count_text(len(trials), 'pair', 'pairs')} read as "
                        f"{FORMAT_LABELS.get(suite_file.format, suite_file.format)}, "
                        f"{count_text(groups, 'phenomenon', 'phenomena')}")
    else:
        ui.caption_text(f"{name}: {count_text(len(trials), 'trial', 'trials')} read as a trial suite, "
                        f"{count_text(groups, 'corruption type', 'corruption types')}: scored into the accuracy "
                        "grid, as the Your sentences page scores a suite of your sentences")
    if suite_file.problems:
        st.warning(f"{len(suite_file.problems):,} malformed row(s) left out; the other rows are scored.",
                   icon=":material/report:")
        import pandas as pd
        shown = suite_file.problems[:PROBLEMS_SHOWN]
        st.dataframe(pd.DataFrame({"line": [p.line for p in shown], "problem": [p.problem for p in shown]}),
                     hide_index=True, key="ch-problems")
        if len(suite_file.problems) > PROBLEMS_SHOWN:
            st.caption(f"The first {PROBLEMS_SHOWN} of {len(suite_file.problems):,} are listed.")
    if not metrics:
        st.warning("Choose at least one metric.")
        return
    ui.demo_caption(settings)
    if not suite_file.contrastive:
        _trial_grid(settings, suite_file, data, name, metrics)
        return
    # Reading the file was the upload's (or the link's) work; scoring it, seconds to minutes, is the button's.
    if ui.waits_for_click(("challenge", key, tuple(metrics)), "Score the challenge set", "ch-score",
                          f"Press the button to score its {count_text(len(trials), 'pair', 'pairs')} with {', '.join(metrics)}.",
                          finished=services.is_memoised(services.challenge_key(settings, key, tuple(metrics)))):
        ui.copy_link()
        return
    results = ui.with_progress(f"Scoring {count_text(len(trials), 'pair', 'pairs')} with "
                               f"{count_text(len(metrics), 'metric', 'metrics')}…", lambda progress:
                               services.challenge(settings, suite_file, key, tuple(metrics), progress),
                               failure="The challenge set could not be scored")
    if results is None:
        return
    # Every table names the rules its pairs were judged by, in each metric's results signature.
    signatures = {m: results.signature(m) for m in results.signatures}
    summary = results.summary()
    summary = summary.assign(signature=summary["metric"].map(signatures))
    st.subheader("Per phenomenon")
    st.caption("accuracy: concordant / scored pairs, ties counted as failures; τ = (concordant − discordant) / "
               "(concordant + discordant), ties among the discordant (the WMT challenge-set task and ACES). "
               f"Judged under this server's rules ({results.rules.signature()}). "
               "A row's drill-down lists its pairs with both scores, the margin and a word diff.")
    links = [drilldown_link(suite_name, m, p, None if fmt == AUTO else fmt)
             for m, p in zip(summary["metric"], summary["phenomenon"])]
    ui.table(summary.assign(pairs=links), f"{name}-phenomena", key="ch-summary",
             column_config={"accuracy": st.column_config.NumberColumn(format="%.1f"),
                            "tau": st.column_config.NumberColumn(format="%.3f"),
                            "pairs": st.column_config.LinkColumn("pairs", display_text="drill-down")})
    for metric, count in summary.groupby("metric")["unsupported"].sum().items():
        if count:
            ui.caption_text(f"{metric}: {count} pair(s) it cannot score (a target language it does not handle, or "
                            "empty text it declares it cannot score) are marked unsupported and count in no statistic.")
    if results.not_applied:
        ui.caption_text(f"{sum(results.not_applied.values())} record(s) the data set marks as not applied are no "
                        "test items: counted in not_applied, never scored.")
    by_severity = results.by_severity()
    by_severity = by_severity.assign(signature=by_severity["metric"].map(signatures))
    if not by_severity.empty:
        st.subheader("Per severity")
        ui.table(by_severity, f"{name}-severity", key="ch-severity",
                 column_config={"accuracy": st.column_config.NumberColumn(format="%.1f"),
                                "tau": st.column_config.NumberColumn(format="%.3f")})
    from muttlab.api import is_aces
    if is_aces(results):
        st.subheader("ACES summary")
        st.caption("Each category's τ is the mean over its phenomena; the ACES score is Σ weight × τ over the "
                   "categories present (major accuracy errors 5, minor 1, punctuation 0.1).")
        aces = results.aces()
        ui.table(aces.assign(signature=aces["metric"].map(signatures)), f"{name}-aces", key="ch-aces")
    with st.expander("Signatures"):
        st.dataframe({"metric": list(results.signatures),
                      "signature": [results.signature(m) for m in results.signatures]},
                     hide_index=True, key="ch-signatures")
    ui.copy_link()


page()
