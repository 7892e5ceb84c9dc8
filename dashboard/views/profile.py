"""Metric profile: one metric's robustness profile — its MUTT grid, DEMETR accuracy per severity, MSLC24-B edge
cases and MQM meta-evaluation side by side, each with its interval (:func:`muttlab.api.profile`) — and, with
another metric, the two compared: which phenomena one catches and the other misses, and where the difference is
significant (:func:`muttlab.api.compare_profiles`).

The default metrics' profiles ship (the ``profiles`` snapshot) and open at once; any other profile, and every
comparison, is computed after a click (a link fills the form, never starts the work). The view lives in the
address bar (``/profile?metric=chrF&vs=TER``).
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from muttlab.dashboard import services, ui
from muttlab.dashboard.services import meta
from muttlab.errors import MuttlabError

DEFAULT_METRIC = "chrF"


def _profile(settings, metric: str, shipped: dict, key: str):
    """``metric``'s profile: the shipped one, or one computed here after a click; None while it waits."""
    if metric in shipped:
        return shipped[metric]
    what = meta.profile_key(settings, metric)
    ui.demo_caption(settings)
    if ui.waits_for_click(what, f"Build the profile of {metric}", key,
                          f"{metric}'s profile does not ship: building it scores MUTT, DEMETR and MSLC24-B and "
                          "meta-evaluates it on both TED pairs (minutes on a cold score cache). Press the button "
                          "to build it.", finished=services.is_memoised(what)):
        return None
    return ui.with_progress(f"Building the profile of {metric}…",
                            lambda progress: meta.profile(settings, metric, progress),
                            failure=f"The profile of {metric} cannot be built")


def _section(name: str, profiles: list) -> None:
    tables = meta.section_tables(name, profiles)
    st.subheader(meta.SECTION_TITLES[name])
    if not tables:
        st.caption("Not in this profile" + "".join(f"; {p.metric}: {p.unavailable[name]}" for p in profiles
                                                  if name in p.unavailable) + ".")
        return
    names = " vs ".join(m for m, _ in tables)
    ui.chart(meta.profile_figure(name, tables), f"profile-{names}-{name}", key=f"pf-chart-{name}")
    ui.folded_table(f"{meta.SECTION_TITLES[name]} as a table", meta.profile_shown(name, tables),
                    f"profile-{names}-{name}", key=f"pf-table-{name}", expanded=name == "mqm")


def _comparison(settings, first: str, second: str) -> None:
    st.subheader(f"{first} against {second}")
    what = meta.comparison_key(settings, first, second)
    ui.demo_caption(settings)
    if ui.waits_for_click(what, f"Compare {first} with {second}", "pf-compare",
                          "The comparison judges both metrics trial by trial (McNemar's test per cell) and takes "
                          "the meta-evaluation's own significance test: press the button to compute it.",
                          finished=services.is_memoised(what)):
        return
    compared = ui.with_progress(f"Comparing {first} with {second}…",
                                lambda progress: meta.comparison(settings, first, second, progress),
                                failure="The comparison failed")
    if compared is None:
        return
    caught = compared.caught_by_one()
    ui.caption_text(f"first = {first}, second = {second}. A metric catches a phenomenon when its accuracy's 95% "
                    f"interval lies above 50 %, misses it when below; p < {compared.alpha} is significant.")
    st.markdown(f"**{len(caught)}** phenomena caught by one metric and missed by the other")
    ui.table(meta.comparison_frame(caught), f"{first}-vs-{second}-caught-by-one", key="pf-caught")
    ui.folded_table("Every unit-test cell compared", meta.comparison_frame(compared.cells),
                    f"{first}-vs-{second}-cells", key="pf-cells")
    if not compared.mqm.empty:
        st.markdown("**MQM meta-evaluation**: the difference and the meta-evaluation's own significance test")
        ui.table(meta.mqm_comparison_frame(compared.mqm), f"{first}-vs-{second}-mqm", key="pf-mqm")
    for note in compared.notes:
        ui.caption_text(note)


def page() -> None:
    settings = ui.header("Metric profile", "One metric's unit tests, challenge sets and agreement with expert "
                                           "judgments side by side, each with its interval; or two metrics "
                                           "compared.")
    try:
        shipped = meta.shipped_profiles()
    except MuttlabError as exc:
        st.error(f"The shipped profiles cannot be read: {ui.md_text(exc)}")
        shipped = {}
    available = services.available_metrics(settings)
    options = list(dict.fromkeys([*shipped, *available]))
    if not options:
        st.error("No metric can be loaded in this installation, and no profile ships.")
        return
    default = DEFAULT_METRIC if DEFAULT_METRIC in options else options[0]
    metric = ui.query_choice("metric", options, default, "metric")
    linked_vs = ui.query_choice("vs", options, None, "metric to compare with")
    left, right = st.columns(2)
    metric = left.selectbox("Metric", options, index=options.index(metric), key="pf-metric",
                            format_func=lambda m: m + (" (shipped)" if m in shipped else ""))
    others = [None] + [m for m in options if m != metric]
    vs = right.selectbox("Compare with", others, index=others.index(linked_vs) if linked_vs in others else 0,
                         key="pf-vs", format_func=lambda m: "no other metric" if m is None
                         else m + (" (shipped)" if m in shipped else ""))
    ui.write_query({"metric": metric, "vs": vs})
    stale = meta.shipped_profile_notes(settings) if metric in shipped or vs in shipped else []
    if stale:
        ui.caption_text("The shipped profiles were computed under another stamp than this server's: "
                        + "; ".join(stale))
    first = _profile(settings, metric, shipped, "pf-build")
    second = _profile(settings, vs, shipped, "pf-build-vs") if vs is not None else None
    profiles = [p for p in (first, second) if p is not None]
    if not profiles:
        return
    for p in profiles:
        ui.caption_text(f"{p.metric}: {p.signature} · rules {p.rules}")
        for note in [*p.notes, *(f"{k}: {v}" for k, v in p.unavailable.items()),
                     *(f"MQM {k}: {v}" for k, v in p.mqm_skipped.items())]:
            ui.caption_text(note)
    for name in meta.PROFILE_SECTIONS:
        _section(name, profiles)
    per_perturbation = meta.section_tables("demetr", profiles)
    if per_perturbation:
        ui.folded_table(meta.SECTION_TITLES["demetr"], pd.concat(
            [meta.profile_frame("demetr", t).assign(metric=m) for m, t in per_perturbation], ignore_index=True),
            "profile-demetr-perturbations", key="pf-table-demetr")
    if first is not None and second is not None:
        _comparison(settings, metric, vs)
    ui.copy_link("profile")


page()
