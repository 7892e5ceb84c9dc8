"""Published vs measured: every number of the papers the lab can compute, beside ours, with the
difference, whether it is within tolerance and why not (``muttlab.api.reproduce``)."""
from __future__ import annotations

import streamlit as st

from muttlab.dashboard import services, ui
from muttlab.errors import MuttlabError

COLUMNS = ["study", "source", "metric", "subset", "refs", "published", "measured", "difference", "tolerance",
           "within", "reason"]


def page() -> None:
    settings = ui.header("Published vs measured",
                         "Each published number (MUTT, ΔBLEU, ReVal, Meteor/DREEM) beside what this installation "
                         "measures on the same data, the difference, and whether it is within tolerance.")
    if not services.reproduce_available():
        ui.not_available("The reproduction of published numbers", "muttlab.human.reproduce",
                         "It arrives with `muttlab reproduce`; the precomputed grid on the Run page already "
                         "shows our accuracies.")
        return
    if settings.data_dir is None:
        st.info("The published numbers are measured on the real datasets; set `MUTTLAB_DATA_DIR` "
                "(or `muttlab serve --data-dir`).", icon=":material/folder_off:")
        return
    try:
        frame = services.reproduction(settings)
    except MuttlabError as exc:
        st.error(f"The published numbers cannot be reproduced: {ui.md_text(exc)}")
        return
    frame = frame[[c for c in COLUMNS if c in frame.columns] + [c for c in frame.columns if c not in COLUMNS]]
    studies = list(dict.fromkeys(frame["study"])) if "study" in frame.columns else []
    chosen = ui.query_list("study", studies, studies)
    only_off = ui.query_value("off") == "1"
    left, right = st.columns([5, 2], vertical_alignment="bottom")
    chosen = left.multiselect("Studies", studies, default=chosen, key="pub-studies")
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
            st.subheader(str(study))
        ui.table(part.reset_index(drop=True), f"published-{study or 'all'}", key=f"pub-{study}")
    if shown.empty:
        st.info("No published number matches the filter.")
    ui.copy_link()


page()
