"""Published vs measured: every number of the papers the lab can compute, beside ours, with the
difference, whether it is within tolerance and why not (``muttlab.api.reproduce``).

The numbers that ship with the package (``scripts/precompute_published.py``, stamped) are shown at once, with
or without a data dir; a server with the data recomputes them on demand, under a progress bar.

Every number says its rules: MUTT accuracies are measured as the paper judged them (ties judged exactly); where
the lab's rules (this server's tie rule, as the Run grid judges) give another number, it stands beside it with
the reason."""
from __future__ import annotations

import streamlit as st

from muttlab.dashboard import services, ui
from muttlab.dashboard.published_table import published_table_html, rules_note
from muttlab.errors import MuttlabError

COLUMNS = ["study", "source", "metric", "subset", "refs", "published", "measured", "measured_lab", "difference",
           "tolerance", "within", "reason", "rule_note"]


def page() -> None:
    settings = ui.header("Published vs measured",
                         "Each published number (MUTT, ΔBLEU, ReVal, Meteor/DREEM) beside what this installation "
                         "measures on the same data, the difference, and whether it is within tolerance.")
    notice = st.container()
    frame, shipped = _numbers(settings)
    if frame is None:
        return
    _rules_caption(settings, frame, shipped)
    frame = frame[[c for c in COLUMNS if c in frame.columns] + [c for c in frame.columns if c not in COLUMNS]]
    studies = list(dict.fromkeys(frame["study"])) if "study" in frame.columns else []
    chosen = ui.query_list("study", studies, studies)
    only_off = ui.query_value("off") == "1"
    left, right = st.columns([5, 2], vertical_alignment="bottom")
    titles = services.published_titles()
    chosen = left.multiselect("Studies", studies, default=chosen, key="pub-studies",
                              format_func=lambda s: titles.get(s, s))
    only_off = right.toggle("Only numbers outside tolerance", value=only_off, key="pub-off")
    ui.write_query({"study": chosen if chosen != studies else None, "off": 1 if only_off else None})
    shown = frame[frame["study"].isin(chosen)] if studies else frame
    if only_off and "within" in shown.columns:
        shown = shown[~shown["within"].astype(bool)]
    if "within" in frame.columns:
        a, b, c = st.columns(3)
        a.metric("published numbers", len(frame))
        b.metric("within tolerance", int(frame["within"].astype(bool).sum()))
        c.metric("outside", int((~frame["within"].astype(bool)).sum()))
    for study in (list(dict.fromkeys(shown["study"])) if studies else [None]):
        part = shown if study is None else shown[shown["study"] == study]
        if study is not None:
            st.subheader(ui.md_text(titles.get(study, study)))
        part = part.reset_index(drop=True)
        subsets = [v for v in part["subset"].dropna().unique() if isinstance(v, str)] if "subset" in part else []
        st.html(published_table_html(part, services.corruption_labels(subsets)))
        ui.csv_download("Download CSV", part, f"published-{study or 'all'}", f"pub-{study}-csv")
    if shown.empty:
        st.info("No published number matches the filter.")
    ui.copy_link("published")
    if shipped is not None:
        # After the table: the signatures need the metric catalogue, which a fresh server may still be loading.
        changed = services.shipped_differences(settings, shipped)
        if changed:
            notice.warning("These shipped numbers are not this server's: " + ui.md_text("; ".join(changed))
                           + (". Recompute them for current numbers." if settings.data_dir is not None else "."),
                           icon=":material/history:")


def _numbers(settings):
    """The frame to show and the shipped reproduction it is (None when it is this server's own): this
    server's recomputation when it has one (or is asked for it), else the shipped numbers with their stamp;
    (None, None) when there is neither."""
    try:
        shipped = services.shipped_reproduction()
    except MuttlabError as exc:
        st.error(f"The shipped published numbers cannot be read: {ui.md_text(exc)}")
        shipped = None
    measured = services.finished_reproduction(settings) if settings.data_dir is not None else None
    if settings.data_dir is not None and measured is None and services.governs(settings):
        st.caption("Recomputing these numbers keeps a server busy for minutes, so this public demo shows the "
                   "shipped ones; `muttlab reproduce` measures them again on your own machine.")
    elif settings.data_dir is not None and measured is None:
        if st.button("Recompute on this server", key="pub-recompute", icon=":material/refresh:",
                     help="Measures every number again on this server's data: minutes on a cold score cache, "
                          "seconds once the scores are cached."):
            measured = ui.with_progress("preparing the reproduction", lambda progress: services.reproduction(
                settings, progress), failure="The published numbers cannot be reproduced")
    if measured is not None:
        st.caption("Measured on this server's data.")
        return measured, None
    if shipped is None:
        if settings.data_dir is None:
            st.info("The published numbers are measured on the real datasets; set `MUTTLAB_DATA_DIR` "
                    "(or `muttlab serve --data-dir`).", icon=":material/folder_off:")
        return None, None
    st.caption(f"Shipped numbers, computed {shipped.created} with muttlab {shipped.muttlab_version} on the real "
               f"data (stamp {shipped.stamp.digest()}: the published file and the data the studies read, the "
               f"reproduction code, {len(shipped.stamp.signatures)} metric signatures and the rules "
               f"{shipped.stamp.rules})."
               + ("" if settings.data_dir is not None else
                  " This server has no data dir, so it cannot recompute them."))
    return shipped.content.frame, shipped


def _rules_caption(settings, frame, shipped) -> None:
    """Which rules the numbers follow: the paper's for MUTT accuracies (ties judged exactly), and the lab's
    beside them where those give another number."""
    note = rules_note(frame, shipped.stamp.rules if shipped is not None else settings.rules.signature())
    if note:
        st.caption(note)  # the server's own rules and counts: no visitor's text


page()
