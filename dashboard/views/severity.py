"""Severity curves: a corruption applied at growing strength to the same sentences — every MUTT original it
applies to with a data dir, the bundled sample's scenes without — and each metric's pass rate (with its 95%
interval) and mean score drop per strength (:func:`muttlab.api.severity`, the same report as
``muttlab severity``).

A good metric penalises a stronger corruption at least as much as a weaker one; a curve that falls beyond the
tie rule and sampling noise is flagged. The view lives in the address bar
(``/severity?metrics=BLEU-4,METEOR-1.5&corruption=drop_content&strengths=1,2,3&refs=5``).
"""
from __future__ import annotations

import streamlit as st

from muttlab import api
from muttlab.dashboard import charts, glossary, number_format, services, ui
from muttlab.errors import MuttlabError

# The first curve (muttlab.severity.DEFAULT_CURVE): a typo at strengths 1-3, which every sample scene and most MUTT
# originals take, by the study's classic metrics; it ships precomputed, like the Run page's grid.
FIRST = api.severity_default()
DEFAULT_METRICS, DEFAULT_CORRUPTION, DEFAULT_STRENGTHS = FIRST.metrics, FIRST.corruption, FIRST.strengths
STRENGTH_CHOICES = (1, 2, 3, 4, 5)
REF_CHOICES = (1, 3, 5, 10)


def page() -> None:
    settings = ui.header("Severity curves", "A corruption applied at growing strength to the same sentences: does "
                                            "each metric penalise a stronger corruption at least as much as a "
                                            "weaker one?")
    if settings.data_dir is None:
        st.info("**Sample data.** No data dir is configured, so the curves are drawn on MUTT Lab's small bundled "
                "sample of scenes. Set `MUTTLAB_DATA_DIR` (or `muttlab serve --data-dir`) to draw them on every "
                "original sentence of the MUTT study's trial sets.", icon=":material/science:")
    from muttlab.api import STRENGTHS

    available = ui.loadable_metrics(settings)
    if not available:
        return
    types = list(STRENGTHS)
    labels = services.corruption_labels(types)
    wanted = ui.query_value("corruption")
    with st.form("severity-form", border=True):
        left, middle, right, far = st.columns([5, 3, 3, 1])
        metrics = left.multiselect("Metrics", available, key="sev-metrics", default=ui.query_list(
            "metrics", available, [m for m in DEFAULT_METRICS if m in available] or available[:2]))
        default = wanted if wanted in types else DEFAULT_CORRUPTION if DEFAULT_CORRUPTION in types else types[0]
        # What a strength counts is in the help, not the option: "Dropped Content Word (content words dropped)"
        # was cut in its column.
        corruption = middle.selectbox("Corruption type", types, index=types.index(default),
                                      format_func=lambda c: labels.get(c, c), key="sev-type",
                                      help="What a strength counts: " + "; ".join(
                                          f"{labels.get(c, c)}: {unit}" for c, unit in STRENGTHS.items()) + ".")
        strengths = right.multiselect("Strengths", STRENGTH_CHOICES, key="sev-strengths", default=ui.query_list(
            "strengths", STRENGTH_CHOICES, list(DEFAULT_STRENGTHS), int))
        refs_default = ui.query_int("refs", 5)
        refs = far.selectbox("Refs", REF_CHOICES, key="sev-refs", help=glossary.term("references (5/10/20)"),
                             index=REF_CHOICES.index(refs_default) if refs_default in REF_CHOICES else 2)
        submitted = st.form_submit_button("Draw the curves", type="primary", icon=":material/trending_down:")
    shipped = None
    ui.demo_caption(settings)
    request = ("severity", corruption, tuple(metrics), tuple(sorted(strengths)), refs)
    if submitted:
        ui.ask(request)
        ui.write_query({"metrics": metrics, "corruption": corruption, "strengths": sorted(strengths), "refs": refs})
    elif wanted is None:  # a first visit: the shipped first curve; nothing is scored until asked (or a link asks)
        shipped = _shipped_curve(settings)
        if shipped is None:
            st.info("Choose metrics, a corruption type and its strengths, then press **Draw the curves**.",
                    icon=":material/touch_app:")
            ui.copy_link()
            return
        corruption, metrics, strengths = FIRST.corruption, list(FIRST.metrics), FIRST.strengths
    if not metrics or len(strengths) < 2:
        st.warning("Choose at least one metric and at least two strengths.")
        return
    strengths = tuple(sorted(strengths))
    if shipped is not None:
        curve = shipped
    # A link fills the form; its curves are drawn at once only when this server has them already.
    elif ui.waits_for_click(request, "Draw the curves of this link", "sev-link",
                            "This link's curves are in the form above; this server has not drawn them yet. Press the "
                            "button to corrupt and score the sentences.",
                            finished=services.is_memoised(services.severity_key(settings, corruption, tuple(metrics),
                                                                                strengths, refs))):
        return
    else:
        curve = ui.with_progress("Corrupting and scoring…", lambda progress: services.severity(
            settings, corruption, tuple(metrics), strengths, refs, progress),
            failure="The severity curves could not be computed")
    if curve is None:
        return
    unit = STRENGTHS[corruption]
    kept, offered = curve.attrs["kept"], curve.attrs["sentences"]
    source = "sample" if settings.data_dir is None and shipped is None else "MUTT original"
    ui.caption_text(f"n = {kept} of {offered} {source} sentences take {labels.get(corruption, corruption)} at every "
                    f"strength {', '.join(map(str, strengths))} ({unit}); each point is the same sentences at one "
                    "strength.")
    flagged = curve.loc[curve["monotone"] != "yes"].drop_duplicates("metric")
    for row in flagged.itertuples(index=False):
        st.warning(ui.md_text(f"{row.metric} is not monotone ({row.monotone}): a stronger corruption is penalised "
                              "less than a weaker one."), icon=":material/trending_flat:")
    if flagged.empty:
        st.success("Every curve is monotone: no metric penalises a stronger corruption less, beyond the tie rule "
                   "and the pass rates' 95% intervals.", icon=":material/check_circle:")
    label = labels.get(corruption, corruption)
    # What the curve is, for the server: its figure is built once (services.kept_figure).
    kept = (services.snapshot_key(services.shipped("severity")) if shipped is not None
            else services.severity_key(settings, corruption, tuple(metrics), strengths, refs))
    ui.chart(services.kept_figure(kept + ("curves",), lambda: charts.severity_curves(curve, label, unit)),
             f"severity-{corruption}", key="sev-chart")
    ui.folded_table("The curves' numbers", curve, f"severity-{corruption}", key="sev-table", column_config={
        column: st.column_config.NumberColumn(heading, format=number_format.PERCENT_FORMAT)
        for column, heading in (("pass_ci_low", "95% CI low"), ("pass_ci_high", "95% CI high"))})
    ui.copy_link("severity")


def _shipped_curve(settings):
    """The first curve as it ships (its table, with ``attrs``), captioned with what it is and, where it is not
    this server's (other data, code, metrics or rules), with what differs; None when none ships."""
    try:
        snapshot = services.shipped("severity")
    except MuttlabError as exc:
        st.error(f"The precomputed curve cannot be read: {ui.md_text(exc)}")
        return None
    if snapshot is None or snapshot.content.request != FIRST:
        return None
    ui.caption_text(snapshot.label() + " Press Draw the curves to compute any curve on this server.")
    differences = services.shipped_differences(settings, snapshot)
    if differences:
        st.warning(ui.md_text("These precomputed curves are not this server's numbers: " + "; ".join(differences)
                              + ". Press Draw the curves for its own."), icon=":material/history:")
    elif settings.data_dir is None:
        ui.caption_text("Drawn on every MUTT original of the real data; this server has no data dir, so a curve "
                        "it draws uses the bundled sample's scenes.")
    return snapshot.content.table()


page()
