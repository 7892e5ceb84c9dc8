"""The read-only demo as visitors reach it: one server for the module, started with the command line
``muttlab serve --read-only`` gives, on the real data, its pair store an unreachable PostgreSQL server with a
password, driven by anonymous visitors in headless Chromium.

* every page completes with the network limited to the server: no icon, font or script from anywhere else;
* the store's error is a scrubbed message, not a stack;
* two tabs of one visitor have one share: while the first computes, the second's expensive buttons are refused
  with a message; when the first tab closes, its computation stops;
* an over-size paste into "Your sentences" is refused before it freezes the tab, and the box keeps its text;
* the report button of a view the page has not computed computes nothing.

On 6c8e244 every page fetched its favicon from fonts.gstatic.com, the Annotate page showed the store's URL with
its password and a stack, the second tab's buttons ran a computation each, and a 549 KiB paste froze the tab for
177 s (here: 498 s for 562,000 characters) before the box showed the example again."""
from __future__ import annotations

import subprocess
from contextlib import contextmanager
import time
import urllib.parse
from pathlib import Path

import pytest

import muttlab
from muttlab.cli import serve
from muttlab.dashboard.app import page_stems
from tests.attacks.test_served import page_words
from tests.dashboard.conftest import browser, run_ended  # noqa: F401 (fixture)
from tests.dashboard.test_browser import (EXCEPTION, _free_port, _wait_healthy, require_chromium, sample_env,
                                          stop_server)

pytestmark = pytest.mark.browser

PASSWORD = "D3moStore-PW-9"
STORE_URL = f"postgresql+psycopg://mutt:{PASSWORD}@127.0.0.1:1/pairs"
WAIT_MS = 180_000
SHARE_S = 600  # longer than the test: the first tab's grid must still run when it closes
QUICK_METRICS = "BLEU-1,BLEU-2,BLEU-3,BLEU-4,METEOR-1.5,CIDEr-D,ROUGE-L,TER,chrF,sentBLEU"
PASTE_LIMIT = 512 * 1024  # MUTTLAB_MAX_SUITE_KB's default, in characters


class Demo:
    def __init__(self, url: str, proc: subprocess.Popen, log: Path, folders: list[str]):
        self.url, self.proc, self.log, self.folders = url, proc, log, folders

    def cpu_seconds(self) -> float:
        """CPU time of the server and its children (the METEOR JVM, scoring workers) so far."""
        import psutil

        server = psutil.Process(self.proc.pid)
        processes = [server, *server.children(recursive=True)]
        return sum(sum(p.cpu_times()[:2]) for p in processes if p.is_running())

    def cpu_over(self, seconds: float) -> float:
        """The server's CPU seconds over the next ``seconds``."""
        start = self.cpu_seconds()
        time.sleep(seconds)
        return self.cpu_seconds() - start

    def quiet(self, seconds: float, under: float, within: float) -> float:
        """The server's CPU seconds over the first span of ``seconds`` in which it used less than ``under``,
        looking for one for up to ``within`` seconds (else the last span's)."""
        deadline = time.monotonic() + within
        while True:
            used = self.cpu_over(seconds)
            if used < under or time.monotonic() > deadline:
                return used


@pytest.fixture(scope="module")
def demo(tmp_path_factory, data_dir):
    require_chromium()
    root = tmp_path_factory.mktemp("demo")
    # The quick warm-up (sample_env's): what a page asks of the server, and so what the browser fetches, does not
    # depend on how much the server loaded before; the full one's neural models would load while the pages do.
    env = sample_env(root / "cache", MUTTLAB_DATA_DIR=str(data_dir), MUTTLAB_READ_ONLY="1",
                     MUTTLAB_DATABASE_URL=STORE_URL, MUTTLAB_DEMO_CACHE_DIR=str(root / "own"),
                     MUTTLAB_VISITOR_COMPUTE_S=str(SHARE_S))
    port = _free_port()
    log = root / "serve.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(serve.command(port, "127.0.0.1"), env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    folders = sorted({str(data_dir), str(Path(data_dir).resolve()), str(root), str(Path(muttlab.__file__).parent)})
    try:
        _wait_healthy(url, proc, log, seconds=300)
        yield Demo(url, proc, log, folders)
    finally:
        stop_server(proc)


@contextmanager
def _tab(browser, demo_server, outside: list[str] | None = None):  # noqa: F811
    """A new tab in a browser context of its own (a visitor: its further tabs are ``page.context.new_page()``),
    closed at the end; with ``outside``, every request for another host is recorded there and goes nowhere: the
    context's proxy, which only the server's address bypasses, is a closed port. (A Playwright route would do the
    same through a Python handler for each of the pages' hundreds of requests.)"""
    from playwright.sync_api import expect

    host = urllib.parse.urlsplit(demo_server.url).netloc
    proxy = {"server": f"http://127.0.0.1:{_free_port()}", "bypass": host} if outside is not None else None
    context = browser.new_context(viewport={"width": 1400, "height": 1800}, proxy=proxy)
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    expect.set_options(timeout=WAIT_MS)
    if outside is not None:
        def seen(request):
            url = request.url
            if not url.startswith(("data:", "blob:")) and urllib.parse.urlsplit(url).netloc != host:
                outside.append(url)

        context.on("request", seen)
    try:
        yield page
    finally:
        context.close()


def _settled(page, text: str) -> None:
    from playwright.sync_api import expect

    expect(page.get_by_text(text).first).to_be_visible()
    run_ended(page)
    assert page.locator(EXCEPTION).count() == 0


def _warmed_up(demo_server, browser) -> None:
    """Once the demo's warm-up is done. It starts with the server's first visitor (the server runs as `streamlit
    run`): a test run alone, before any other of this file's, waited 15 minutes for it. So while it is not done
    the landing page is opened, which starts it or, begun already, costs a page."""
    if "warm-up done" not in demo_server.log.read_text(errors="replace"):
        with _tab(browser, demo_server) as page:
            page.goto(demo_server.url)
            _settled(page, HEADINGS["run"])
    deadline = time.monotonic() + 900
    while "warm-up done" not in demo_server.log.read_text(errors="replace"):
        assert time.monotonic() < deadline, "the server's warm-up did not end in 15 minutes"
        time.sleep(2)


HEADINGS = {"run": "Run the metric unit tests", "drilldown": "Drill-down", "published": "Published vs measured",
            "playground": "Playground", "severity": "Severity curves", "challenge": "Challenge sets",
            "mine": "Your sentences", "human": "Human judgments", "correlation": "Correlation studies",
            "meta_eval": "Meta-evaluation", "profile": "Metric profile", "learned": "Learned metrics", "annotate": "Annotate corruption pairs"}


# The Playground's default metrics include the slow ones, which a server with the quick warm-up loads for its
# first visitor (20 s of the test); with the quick ones from a link and its button, the page draws the same
# elements (the scores, the change heatmap).
QUICK_PLAYGROUND = "?metrics=BLEU-4,METEOR-1.5"


def test_every_page_completes_with_no_outside_request(demo, browser):  # noqa: F811
    outside: list[str] = []
    assert set(HEADINGS) == set(page_stems())
    with _tab(browser, demo, outside) as first:
        # Every page in a tab of its own, all open at once: each stays open while the others settle, and all of
        # them through the last wait, so a late request of any page is seen.
        tabs = dict(zip(page_stems(), [first, *(first.context.new_page() for _ in page_stems()[1:])]))
        for stem, tab in tabs.items():
            tab.set_default_timeout(WAIT_MS)
            tab.goto(f"{demo.url}/{stem}{QUICK_PLAYGROUND if stem == 'playground' else ''}", wait_until="commit")
        for stem, tab in tabs.items():
            _settled(tab, HEADINGS[stem])
        tabs["playground"].get_by_role("button", name="Score", exact=True).click()
        _settled(tabs["playground"], "How each score moves when the candidate is corrupted")
        first.wait_for_timeout(1500)  # late requests: the favicon, fonts, a chart's scripts
    assert outside == [], outside


def test_the_unreachable_store_is_a_scrubbed_message(demo, browser):  # noqa: F811
    with _tab(browser, demo) as page:
        page.goto(f"{demo.url}/annotate")
        _settled(page, "The pair store cannot be read")
        shown = page_words(page)
    assert PASSWORD not in shown and "Traceback" not in shown and "annotate.py" not in shown
    for folder in demo.folders:
        assert folder not in shown, folder


def test_the_report_button_of_a_link_the_page_has_not_computed_computes_nothing(demo, browser):  # noqa: F811
    """Attack: a link with ``run=1`` (the page only fills its form: "press Run"), then "Download this view as a
    report", pressed again and again, hoping each press scores the grid outside the visitor's share (on 509e7d4
    each did: build_report of the view, in a thread of Streamlit's own). Each file now says what to press; the
    server's CPU stays near idle while the visitor presses. Before the two tabs' test, whose grid computes METEOR's
    scores of the whole grid, which would make this view's report a report."""
    _warmed_up(demo, browser)  # the warm-up's own CPU is not the presses'
    with _tab(browser, demo) as page:
        page.goto(f"{demo.url}/?metrics=METEOR-1.5&corruptions=all&refs=5,10,20&run=1")
        _settled(page, "This link shows a live run")
        page.get_by_text("Link to this view").last.click()
        run_ended(page)  # opening the box reruns the page, which draws the button anew
        button = page.get_by_role("button", name="Download this view as a report (HTML, works offline)")
        start = demo.cpu_seconds()
        for _ in range(3):
            with page.expect_download() as download:
                button.click()
            report = Path(download.value.path()).read_text(encoding="utf-8")
            assert "No report of this view" in report and "not computed on this server" in report
        assert demo.cpu_seconds() - start < 10  # METEOR on 3 x 10 cells of the MUTT grid: minutes
        assert page.locator(EXCEPTION).count() == 0


def test_two_tabs_have_one_share_and_a_closed_tabs_computation_stops(demo, browser):  # noqa: F811
    from playwright.sync_api import expect

    _warmed_up(demo, browser)
    with _tab(browser, demo) as first:
        # The first tab runs the full grid of every quick metric (minutes of a cold server): the five default
        # ones alone can finish on a fast machine before the second tab's checks end.
        first.goto(f"{demo.url}/?metrics={QUICK_METRICS}&corruptions=all&refs=5,10,20")
        _settled(first, "Run the metric unit tests")
        first.get_by_role("button", name="Run", exact=True).click()
        expect(first.get_by_text("Cancel").first).to_be_visible()
        second = first.context.new_page()  # the same visitor's second tab
        second.set_default_timeout(WAIT_MS)
        refused = second.get_by_text("Your other tab (or another visitor at your address) is computing the grid run")
        for address, button in REFUSALS.items():
            second.goto(f"{demo.url}/{address}")
            start = second.get_by_role("button", name=button)
            expect(refused.or_(start).first).to_be_visible()  # reading a challenge set is the visitor's work too
            run_ended(second)  # a click while the page still runs can be lost
            if not refused.count():
                start.click()
            expect(refused.first).to_be_visible()
            assert second.locator(EXCEPTION).count() == 0
        # What the demo does not offer at all, the second tab is told too.
        second.goto(f"{demo.url}/published")
        _settled(second, "this public demo shows the shipped ones")
        assert second.get_by_role("button", name="Recompute on this server").count() == 0
        second.goto(f"{demo.url}/learned")
        _settled(second, "this public demo does not offer it")
        assert second.get_by_role("button", name="Evaluate").count() == 0
        busy = demo.cpu_over(5)
        expect(first.get_by_text("Cancel").first).to_be_visible()  # the grid is still running
        first.close()  # the visitor leaves the tab whose grid is running
        # The piece under way (one grid cell) ends, then the server idles; a grid left running keeps it busy for
        # minutes, so no quiet span comes within the minute.
        after = demo.quiet(5, under=0.5, within=60)
        # Computing before (whatever share of the shared cores it got), idle once the tab had closed.
        assert busy > 0.5 and after < min(0.5, busy), (busy, after)
        # The share is the visitor's again: the second tab's button now starts its computation.
        second.goto(f"{demo.url}/correlation?assignments=37")
        _settled(second, "Run the unit study of this link")  # a click while the page still runs can be lost
        waiting = second.get_by_text("this server has not computed them yet")
        expect(waiting).to_be_visible()
        second.get_by_role("button", name="Run the unit study of this link").click()
        # The study runs (its bar, "Matching n-grams…", may come and go within a second for 37 assignments) and
        # its units are drawn in place of the note that waited for the click.
        expect(waiting).to_be_hidden()
        _settled(second, "Spearman ρ with human ratings")
        assert refused.count() == 0


# A second tab's expensive buttons, each behind a link to its view
REFUSALS = {
    "severity?metrics=BLEU-4&corruption=typo&strengths=1,2&refs=5": "Draw the curves of this link",
    "correlation?assignments=37": "Run the unit study of this link",
    "drilldown?suite=file:demetr/dataset/critical_id8_negation.json&metric=BLEU-4&corruption=critical_id8_negation":
        "Score BLEU-4 on this challenge set",
}


def test_an_oversize_paste_is_refused_and_the_earlier_text_stays(demo, browser):  # noqa: F811
    from playwright.sync_api import expect

    with _tab(browser, demo) as page:
        page.goto(f"{demo.url}/mine")
        _settled(page, "Your sentences")
        box = page.get_by_role("textbox", name="…or paste your sentences (used when no file is uploaded)")
        earlier = "text,reference\nA man rides a horse.,A man is riding a horse.\n"
        box.fill(earlier)
        box.focus()
        page.keyboard.press("End")
        line = "A dog runs on the grass in the park today.,A dog is running on grass.\n"
        paste = (line * (600_000 // len(line) + 1))[:600_000]  # 586 KiB, over the 512 KiB the box takes
        page.keyboard.insert_text(paste)  # what a paste delivers: one input of the whole text
        note = page.locator(".mutt-paste-note")
        expect(note).to_be_visible()
        assert "Not pasted: the text holds 600,000 characters" in note.inner_text()
        assert f"at most {PASTE_LIMIT:,}" in note.inner_text()
        assert box.input_value() == earlier
        # A paste that fits is taken, and the note goes.
        page.keyboard.insert_text("A cat sleeps.,A cat is asleep.\n")
        expect(note).to_be_hidden()
        assert box.input_value() == earlier + "A cat sleeps.,A cat is asleep.\n"

