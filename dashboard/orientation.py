"""What a first-time visitor of the Run page needs before the grid: whether this server accepts edits, where
the study's published numbers are compared with ours, and what the terms mean."""
from __future__ import annotations

import streamlit as st

from muttlab.dashboard.glossary import markdown
from muttlab.settings import Settings

READ_ONLY_NOTICE = ("**Read-only demo.** You can run metrics, open cells and download results, but nothing you "
                    "do is saved: pair edits, annotations and model training are refused on this server.")
PUBLISHED_PAGE = "views/published.py"


def landing_notes(settings: Settings) -> None:
    """The read-only notice (on a read-only server), the link to Published vs measured and the glossary."""
    if settings.read_only:
        st.info(READ_ONLY_NOTICE, icon=":material/lock:")
    left, right = st.columns([2, 3], vertical_alignment="center")
    left.page_link(PUBLISHED_PAGE, label="Published vs measured: the MUTT paper's numbers beside ours",
                   icon=":material/fact_check:")
    with right.expander("Glossary: signature, tie, Wilson interval, margin…", icon=":material/menu_book:"):
        st.markdown(markdown(settings))
