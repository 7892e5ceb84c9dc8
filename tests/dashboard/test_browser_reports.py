"""A report for every view, in Chromium: on each page that offers one, "Link to this view" and then "Download this
view as a report" bring one HTML file that opens offline, and it is the file the page's caption promises: the one
``muttlab report --view '<the link>'`` writes (:func:`muttlab.dashboard.report.build_report` here, on the same data).

The server is the researcher's (tests/dashboard/test_browser_audiences.py's ``research_server``: the data dir, a
cache of its own); each view is one a visitor opens first, so the report is made from what the page shows (the
shipped numbers, or the quick metric's cell the Drill-down scores when it opens).
"""
from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from muttlab.dashboard.report import build_report
from muttlab.settings import Settings
from tests.dashboard.conftest import run_ended, settle
from tests.dashboard.test_browser import EXCEPTION
from tests.dashboard.test_browser_audiences import VIEWPORT, new_tab, research_server  # noqa: F401 (fixture)

pytestmark = pytest.mark.browser

BUTTON = "Download this view as a report (HTML, works offline)"
# Each page with a report, at the view a visitor opens first (the Drill-down: a cell of the landing grid).
VIEWS = {"run": "", "drilldown": "drilldown?metric=BLEU-4&corruption=neg_subj&refs=5", "severity": "severity",
         "published": "published", "human": "human", "correlation": "correlation",
         "meta_eval": "meta_eval?pair=zh-en&metric=TER", "profile": "profile?metric=chrF"}


@pytest.fixture(scope="module")
def tab(browser):  # noqa: F811 (the module's Chromium)
    page = new_tab(browser.new_context(viewport=VIEWPORT, accept_downloads=True))
    yield page
    page.context.close()


@pytest.mark.parametrize("page_name", list(VIEWS))
def test_every_view_downloads_the_report_the_command_line_writes(research_server, tab, data_dir, tmp_path,
                                                                  page_name):
    from playwright.sync_api import expect

    tab.goto(f"{research_server}/{VIEWS[page_name]}")
    # Drawn to its end, a held-back figure's second run included: that run draws the download button anew, and a
    # click on the first run's button then asks for a file the server has dropped ("Deferred file not found").
    settle(tab)
    link = tab.get_by_text("Link to this view").last
    link.click()
    run_ended(tab)  # opening the box reruns the page, which draws the button anew
    button = tab.get_by_role("button", name=BUTTON)
    expect(button).to_be_visible()
    with tab.expect_download() as download:
        button.click()
    assert download.value.suggested_filename == f"muttlab-{page_name}-report.html"
    report = Path(download.value.path()).read_text(encoding="utf-8")
    assert tab.locator(EXCEPTION).count() == 0

    assert report.startswith("<!DOCTYPE html>") and f"<title>MUTT Lab report: {page_name}</title>" in report
    assert "No report of this view" not in report
    # Opens offline: no script, style or frame from elsewhere (plotly.js is inlined).
    assert not re.search(r"""<(script|link|iframe|img)[^>]+(src|href)=["']?(https?:)?//""", report)
    # The view the caption names is the page's current link, and the command line writes the same document.
    view = re.search(r"<p>View: <code>(.*?)</code></p>", report).group(1).replace("&amp;", "&")
    assert f"page={page_name}" in view
    assert urlsplit(tab.url).path.strip("/") in ("", page_name)
    cli = build_report(Settings(data_dir=data_dir, cache_dir=tmp_path / "cache", workers=1), view)
    assert report == cli  # byte for byte: the figures' data and ids, every table, the footer
