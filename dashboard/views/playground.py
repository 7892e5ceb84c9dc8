"""Playground: type references and a candidate, see every metric's score; corrupt the candidate and watch
the scores move. Scores and verdicts come from the API (``muttlab.api.score`` / ``sentence_verdicts``)."""
from __future__ import annotations

import html
import json

import pandas as pd
import streamlit as st

from muttlab import api
from muttlab.dashboard import charts, glossary, playground_example, services, ui
from muttlab.dashboard import view as link_view
from muttlab.dashboard.diff import diff_block
from muttlab.dashboard.not_applied import not_applied
from muttlab.dashboard.score_table import score_table
from muttlab.errors import MuttlabError

CARD_CSS = """<style>
.mutt-card {border: 1px solid #e5e7eb; border-radius: 0.5rem; padding: 0.6rem 0.9rem; margin-bottom: 0.6rem;}
.mutt-verdict {font-size: 0.875rem; color: #4b5563;}
.mutt-ok {color: #005a8c; font-weight: 600;} .mutt-bad {color: #a33f00; font-weight: 600;}
</style>"""


def corruption_blocks(sentence: str, corrupted: pd.DataFrame, verdicts: pd.DataFrame) -> str:
    """Every corruption of the candidate as one block of escaped HTML: its label, family and rule, the word
    diff, and which metrics notice it. One element instead of four per corruption: each element is a message
    the server's event loop must be woken for, and with many visitors those wake-ups were a good part of a
    rerun's cost."""
    noticed: dict[str, tuple[list[str], list[str]]] = {}
    for label, metric, passed in zip(verdicts["corruption"], verdicts["metric"], verdicts["passed"]):
        noticed.setdefault(label, ([], []))[0 if passed else 1].append(metric)
    blocks = []
    for row in corrupted.itertuples(index=False):
        head = html.escape(f"{row.family} · rule: {row.rule}")
        block = (f'<div class="mutt-card"><b>{html.escape(row.label)}</b> · {head}'
                 f'{diff_block(sentence, row.corrupted, labels=("candidate", "corruption"))}')
        if row.label in noticed:
            ok, bad = noticed[row.label]
            block += (f'<div class="mutt-verdict"><span class="mutt-ok">✔ notice it:</span> '
                      f'{html.escape(", ".join(ok) or "none")} · <span class="mutt-bad">✘ miss it:</span> '
                      f'{html.escape(", ".join(bad) or "none")}</div>')
        blocks.append(block + "</div>")
    return CARD_CSS + "".join(blocks)


def checked_input(references: str, candidate: str, limits) -> tuple[tuple[str, ...], str]:
    """(references, candidate) of the form, within the length limits before any of it is parsed or scored.

    Raises:
      MuttlabError: a text, a reference or the number of references over its limit (the message names it).
    """
    limits.check_text(candidate, "the candidate")
    refs = tuple(line.strip() for line in references.splitlines() if line.strip())
    if len(refs) > limits.max_refs:
        raise MuttlabError(limits.exceeded("max_refs", len(refs), "the reference list"))
    for i, ref in enumerate(refs, start=1):
        limits.check_text(ref, f"reference {i}")
    return refs, " ".join(candidate.split())


def _did_not_apply(skipped: list[tuple[str, str]]) -> None:
    """The chosen generators that found nothing to change in the candidate, each with what it looked for."""
    if skipped:
        st.markdown("**Did not apply to this candidate**\n" + "\n".join(
            f"- {ui.md_text(label)} — {ui.md_text(reason)}" for label, reason in skipped))


FROM_LINK_KEY = "pg-from-link"  # the form holds a link's values and nobody has pressed Score since


def _fill_form(types: list[str], available: list[str], default_metrics: list[str]) -> None:
    """The form's values at a session's first run: the link's (``candidate``, ``references``, ``metrics``,
    ``types``), else the example; a link's values wait for the Score button unless this server has scored
    them."""
    if FROM_LINK_KEY in st.session_state:
        return
    candidate, references = ui.query_value("candidate"), ui.query_value("references")
    values = {"pg-candidate": candidate if candidate is not None else playground_example.CANDIDATE,
              "pg-refs": "\n".join(json.loads(references) if references is not None
                                   else playground_example.REFERENCES),
              "pg-types": ui.query_list("types", types, types),
              "pg-metrics": ui.query_list("metrics", available, default_metrics)}
    for key, value in values.items():
        st.session_state.setdefault(key, value)
    # A link that names the form waits for the click even where its values were left out (the page says why).
    st.session_state[FROM_LINK_KEY] = any(name in st.query_params for name in ("candidate", "references"))


def _write_link(references: str, candidate: str, chosen: list[str], types: list[str], metrics: list[str],
                default_metrics: list[str]) -> None:
    """The address bar holds the form (what the view's checks keep: a form too long for a link is left out of
    it, and a caption says so)."""
    refs = [line.strip() for line in references.splitlines() if line.strip()]
    refs_json = json.dumps(refs, ensure_ascii=False, separators=(",", ":")) if refs else None
    wanted = {"candidate": candidate or None, "references": refs_json,
              "types": chosen if chosen != types else None, "metrics": metrics if metrics != default_metrics else None}
    kept = link_view.check(ui.encode_params(wanted), services.settings(), metrics).params
    ui.write_query(dict(kept))
    if set(ui.encode_params(wanted)) - set(kept):
        st.caption("This form is too long for a link (the address holds a candidate of at most "
                   f"{services.settings().limits.max_chars:,} characters and references of "
                   f"{link_view.LINK_REFERENCES:,} in all): the link leaves the texts out.")


def page() -> None:
    settings = ui.header("Playground", "Type one or more references and a candidate sentence. Every metric "
                                       "scores it; each corruption generator then rewrites the candidate, and "
                                       "you see which metrics notice.")
    available = ui.loadable_metrics(settings)
    if not available:
        return
    types = services.generator_types()
    labels = services.corruption_labels(types)
    limits = settings.limits
    default_metrics = [m for m in available if m not in services.LEARNED_METRICS]
    _fill_form(types, available, default_metrics)
    with st.form("playground", border=True):
        left, right = st.columns(2)
        # The browser stops typing at these lengths; the server checks again below (a client may send more).
        references = left.text_area("References (one per line)", height=150, key="pg-refs",
                                    max_chars=limits.max_chars * limits.max_refs)
        candidate = right.text_area("Candidate", height=68, key="pg-candidate", max_chars=limits.max_chars)
        chosen_types = right.multiselect("Corrupt the candidate with", types, format_func=lambda c: labels.get(c, c),
                                         key="pg-types", help=glossary.term("not applied"))
        metrics = st.multiselect("Metrics", available, key="pg-metrics")
        if st.form_submit_button("Score", type="primary", icon=":material/calculate:"):
            st.session_state[FROM_LINK_KEY] = False  # the visitor's click: scoring may start
    _write_link(references, candidate, chosen_types, types, metrics, default_metrics)
    if not types:
        ui.not_available("Corruption generators", "muttlab.corruptions.generate / muttlab.engine.suites")

    try:
        refs, sentence = checked_input(references, candidate, limits)
    except MuttlabError as exc:
        st.error(ui.md_text(exc))
        return
    if not refs:
        st.warning("Give at least one reference.")
        return
    if not metrics:
        st.warning("Choose at least one metric.")
        return
    try:
        # An empty candidate is scored (an empty output is a test item) but has nothing to corrupt.
        corrupted = services.corrupt_sentence(sentence, refs, tuple(chosen_types) if sentence else (), settings.seed)
    except MuttlabError as exc:
        st.error(f"The generators could not run: {ui.md_text(exc)}")
        corrupted = services.corrupt_sentence(sentence, refs, (), settings.seed)
    candidates = (sentence,) + tuple(corrupted["corrupted"])
    names = ["candidate"] + list(corrupted["label"])
    # N-gram metrics and METEOR answer in a second once loaded; the others (vectors, TERp, learned models)
    # fill in after, so the first answer never waits for the slowest metric.
    quick = tuple(m for m in metrics if services.is_quick(m))
    slow = tuple(m for m in metrics if m not in quick)
    if st.session_state.get(FROM_LINK_KEY) and not all(
            services.playground_scored(settings, part, candidates, refs) for part in (quick, slow) if part):
        st.info("This link filled the form; press **Score** to compute the scores.", icon=":material/touch_app:")
        ui.copy_link()
        return
    early = st.empty()
    parts = []
    if quick:
        with st.spinner("Scoring…"):
            parts.append(services.playground_scores(settings, quick, candidates, refs))
        if slow:
            with early.container():
                st.caption(f"First scores ({', '.join(quick)}); {', '.join(slow)} still scoring…")
                st.dataframe(score_table(parts[0]).T, key="pg-early")
    if slow:
        with st.spinner(f"Scoring with {', '.join(slow)}…"):
            parts.append(services.playground_scores(settings, slow, candidates, refs))
    early.empty()
    scores = pd.concat(parts, ignore_index=True)

    failed = scores[scores["problem"] != ""].drop_duplicates("metric")
    for row in failed.itertuples(index=False):
        st.warning(ui.md_text(f"{row.metric}: {row.problem}"))

    st.subheader("Scores")
    wide = score_table(scores)
    wide.columns = [names[i] for i in wide.columns]
    ui.table(wide.reset_index(), "playground-scores", key="pg-scores",
             column_config={n: st.column_config.NumberColumn(format="%.4g") for n in names})
    skipped = not_applied(chosen_types, list(corrupted["corruption"]), labels)
    if corrupted.empty:
        ui.chart(charts.sentence_scores(scores.dropna(subset=["score"]), names), "playground-scores",
                 key="pg-chart")
        st.info("No chosen generator applies to this candidate.")
        _did_not_apply(skipped)
        return
    def judged() -> tuple[pd.DataFrame, charts.Figure, str]:
        verdicts = api.sentence_verdicts(scores, corrupted, settings)
        return (verdicts, charts.change_heatmap(verdicts, "How each score moves when the candidate is corrupted"),
                corruption_blocks(sentence, corrupted, verdicts))

    verdicts, figure, blocks = services.playground_judged(settings, quick + slow, candidates, refs,
                                                          tuple(corrupted["label"]), judged)
    ui.chart(figure, "playground-changes", key="pg-chart")
    st.caption("Blue: pass, orange: FAIL, by the MUTT rule of the corruption's family (orig > corr, or the "
               f"difference rule for meaning-preserving ones; rules {settings.rules.signature()}), whichever way the "
               "score moved; a deeper shade is a "
               "larger change. A metric that scores one sentence alone against its references can be "
               "degenerate: CIDEr-D's document frequencies come from the batch, so a single candidate gets 0.")

    st.subheader("Corruptions of the candidate")
    st.html(blocks)
    _did_not_apply(skipped)
    ui.table(verdicts, "playground-verdicts", key="pg-verdicts")
    ui.copy_link()


page()
