"""The dashboard's entry point: it declares the pages and nothing else (``streamlit run dashboard/app.py``)."""
from __future__ import annotations

import copy
from pathlib import Path

import streamlit as st

from muttlab.dashboard.shared import refuse_client_cache_clearing, served, singleton

# Page files, relative to this script, grouped as the navigation shows them. They live in ``views/``, not
# ``pages/``: a ``pages/`` folder beside the entry point puts Streamlit into its legacy multipage mode,
# where a deep link such as /human runs the page file alone, without this navigation or page config.
PAGES = {
    "Metric unit tests": [
        ("views/run.py", "Run", ":material/grid_view:"),
        ("views/drilldown.py", "Drill-down", ":material/manage_search:"),
        ("views/published.py", "Published vs measured", ":material/fact_check:"),
        ("views/playground.py", "Playground", ":material/edit_note:"),
        ("views/severity.py", "Severity curves", ":material/trending_down:"),
        ("views/challenge.py", "Challenge sets", ":material/rule:"),
        ("views/mine.py", "Your sentences", ":material/edit_document:"),
    ],
    "Human judgments": [
        ("views/human.py", "Human judgments", ":material/groups:"),
        ("views/correlation.py", "Correlation studies", ":material/scatter_plot:"),
        ("views/meta_eval.py", "Meta-evaluation", ":material/leaderboard:"),
        ("views/profile.py", "Metric profile", ":material/fingerprint:"),
        ("views/learned.py", "Learned metrics", ":material/model_training:"),
    ],
    "Corruption pairs": [
        ("views/annotate.py", "Annotate", ":material/rate_review:"),
    ],
}


def pages() -> dict[str, list[st.Page]]:
    """The navigation: section -> pages; the Run page is the default. Copies of :func:`_built_pages`, fresh for
    each run: ``st.navigation`` marks the pages it is given (the one that may run, the default), so two runs must
    not share them."""
    return {section: [copy.copy(page) for page in entries] for section, entries in _built_pages().items()}


@singleton
def _built_pages() -> dict[str, list[st.Page]]:
    # Built once per process: an st.Page resolves its file's path and stats it, and 13 of them on every run of
    # every visitor were 4-8 % of a loaded demo's CPU (docs/deploy.md, "Load on the demo").
    return {section: [st.Page(path, title=title, icon=icon, default=path == "views/run.py")
                      for path, title, icon in entries]
            for section, entries in PAGES.items()}


def page_stems() -> list[str]:
    """Every page of the navigation by its address's path (its file's stem; the default page, ``run``, is also
    served at ``/``), in the navigation's order."""
    return [Path(path).stem for entries in PAGES.values() for path, _, _ in entries]


# The browser tab's icon. An emoji, which the browser draws itself: a ":material/…:" icon here makes every
# visitor's browser fetch it from Google's font host (the pages' own icons come with Streamlit's bundled font).
PAGE_ICON = "🧪"


def main() -> None:
    # Before anything is cached: no browser message may empty the caches other visitors rely on.
    refuse_client_cache_clearing()
    st.set_page_config(page_title="MUTT Lab", page_icon=PAGE_ICON, layout="wide")
    # Imported here: the entry point stays importable (tests read PAGES) without the engine.
    from muttlab.dashboard import services, ui
    # The one error boundary of every page: what a page does not handle is shown scrubbed and logged whole.
    with ui.error_boundary():
        if served():
            services.warm_start(services.settings())  # once per process: models and JVMs load in the background
        navigation = st.navigation(pages())
        navigation.run()
        ui.footer()


if __name__ == "__main__":
    main()
