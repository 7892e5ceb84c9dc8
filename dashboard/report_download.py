"""A view's report as the page's download button serves it: built from what this server has computed.

The button's file is made when it is pressed, in a thread of Streamlit's own (no page run, no fair queue, no
progress bar), so it must not start a computation: a link's view that the page has not computed yet (``run=1``
before **Run**, a challenge set before **Score**) would otherwise be scored there, outside the visitor's share,
the queue and the cancellation when the tab closes. So the report takes every score from the score cache
(:func:`muttlab.api.cached_scores_only`): a view whose scores are there (shipped, or computed by the page) gives
its report; any other gives a document saying what to press first. On the public demo it also runs under the
visitor's lease (:func:`~muttlab.dashboard.services.budget.governed`): one report or computation at a time per
visitor, within the server's cap.
"""
from __future__ import annotations

from urllib.parse import parse_qs

from muttlab import api
from muttlab.dashboard.report import build_report
from muttlab.dashboard.report_document import Section, render
from muttlab.dashboard.services.budget import governed
from muttlab.dashboard.services.cells import held
from muttlab.errors import MuttlabError
from muttlab.settings import Settings

INSTEAD = ("open the view on its page and compute it there first (press its Run, Draw the curves, Correlate or "
           "Score button), then download its report again")


def report_file(settings: Settings, query: str, visitor: str) -> bytes:
    """The HTML report of the view ``query`` (a dashboard link's query string with its ``page=``) for ``visitor``
    (:func:`~muttlab.dashboard.services.budget.current_visitor`, read when the button was drawn). A view this server
    cannot report without computing, or one the demo refuses, gives a document that says why instead: the download
    always brings a file that explains itself."""
    def build() -> str:
        with api.cached_scores_only(INSTEAD):
            return build_report(settings, query, lambda name: held(settings, name))

    try:
        return governed(settings, "a report", build, visitor=visitor).encode("utf-8")
    except MuttlabError as exc:
        page = parse_qs(query).get("page", ["report"])[0]
        note = Section().heading("No report of this view").note(str(exc))
        return render(page, query, [note]).encode("utf-8")
