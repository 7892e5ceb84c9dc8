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

from muttlab.dashboard import charts, glossary, number_format, services, ui

DEFAULT_METRICS = ("BLEU-4", "METEOR-1.5", "CIDEr-D")
# services.SEVERITY_DEFAULT: a typo at strengths 1-3, which every sample scene and most MUTT originals take;
# dropped content words at all three fit one sample sentence only, where a mean is that sentence and CIDEr-D,
# scoring it alone, gives 0.
DEFAULT_CORRUPTION, DEFAULT_STRENGTHS = services.SEVERITY_DEFAULT
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
    from muttlab.corruptions.generate import STRENGTHS

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
    if submitted:
        ui.ask(("severity",))
        ui.write_query({"metrics": metrics, "corruption": corruption, "strengths": sorted(strengths), "refs": refs})
    elif wanted is None:  # a first visit: nothing is scored until asked (or a link asks)
        st.info("Choose metrics, a corruption type and its strengths, then press **Draw the curves**.",
                icon=":material/touch_app:")
        ui.copy_link()
        return
    if not metrics or len(strengths) < 2:
        st.warning("Choose at least one metric and at least two strengths.")
        return
    strengths = tuple(sorted(strengths))
    if ui.slow_and_unasked(metrics, ("severity",), "Draw the curves of this link", "sev-link"):
        return
    curve = ui.with_progress("Corrupting and scoring…", lambda progress: services.severity(
        settings, corruption, tuple(metrics), strengths, refs, progress),
        failure="The severity curves could not be computed")
    if curve is None:
        return
    unit = STRENGTHS[corruption]
    kept, offered = curve.attrs["kept"], curve.attrs["sentences"]
    source = "sample" if settings.data_dir is None else "MUTT original"
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
    ui.chart(charts.severity_curves(curve, label, unit), f"severity-{corruption}", key="sev-chart")
    ui.folded_table("The curves' numbers", curve, f"severity-{corruption}", key="sev-table", column_config={
        column: st.column_config.NumberColumn(heading, format=number_format.PERCENT_FORMAT)
        for column, heading in (("pass_ci_low", "95% CI low"), ("pass_ci_high", "95% CI high"))})
    ui.copy_link()


page()
