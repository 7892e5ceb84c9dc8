"""Each audience's first minute in real Chromium against `muttlab serve`, one server per audience:

* a reviewer on the hosted read-only demo without a data dir: the landing grid with the read-only notice, the
  legend, the glossary and the way to Published vs measured; a cell's drill-down (the bundled sample's trials,
  said so); the Published page; no way to edit;
* a researcher with the data dir: the same landing on the MUTT data, no sample banner; a cell's drill-down on
  the cell's MUTT trials;
* an annotator signing in through the server's own page (``/_muttlab/signin``): signed in on the Annotate
  page, still after a reload and in a new tab, and the session id never readable by the page's scripts
  (``document.cookie``).

With ``MUTTLAB_SCREENSHOTS=docs/img`` (a folder, relative to the repository) each saves its first view at a
wide laptop's, a small laptop's and a phone's width (:data:`SCREEN_WIDTHS`) as ``<audience>-<width>.png`` there:
the pictures of docs/dashboard.md's "First views"; the researcher also saves the landing grid's first block, as
``researcher-grid.png`` (the README's picture; the reviewer's landing grid is the same shipped grid). Without it
no file is written outside ``test-artifacts/``.
"""
from __future__ import annotations

import os
import re
from contextlib import contextmanager

import pytest

from muttlab.access.roles import local_operator
from muttlab.access.users import UserStore
from muttlab.pairs.store import open_store
from muttlab.settings import load_settings
from muttlab.sources import load_sample
from tests.conftest import REPO, SERVERS
from tests.dashboard.conftest import run_ended
from tests.dashboard.test_browser import EXCEPTION, MARGINS_TITLE, NOTHING, require_chromium, sample_env, serving

pytestmark = pytest.mark.browser

VIEWPORT = {"width": 1280, "height": 800}
PASSWORD = "a long enough password"
CELL = 'drilldown?metric=ROUGE-L&corruption=neg_subj&refs=5'


# The widths of the pictures in docs (a wide laptop, a small laptop, a phone), with each one's window height.
SCREEN_WIDTHS = {1400: 900, 1024: 768, 390: 844}


def first_view(page, audience: str, grid: bool = False) -> None:
    """Save what ``audience`` sees first at each of :data:`SCREEN_WIDTHS` (and with ``grid``, the accuracy grid's
    first block, as ``<audience>-grid.png``), when MUTTLAB_SCREENSHOTS names the folder for it; the tab goes back to
    its own size after."""
    folder = os.environ.get("MUTTLAB_SCREENSHOTS")
    if not folder:
        return
    (REPO / folder).mkdir(parents=True, exist_ok=True)
    for width, height in SCREEN_WIDTHS.items():
        page.set_viewport_size({"width": width, "height": height})
        # Streamlit lays a narrow window out again in the browser (no rerun): wait for the layout to settle.
        page.wait_for_timeout(1500)
        page.screenshot(path=str(REPO / folder / f"{audience}-{width}.png"))
    page.set_viewport_size(VIEWPORT)
    if grid:  # last: the element's picture scrolls the page to it
        page.locator(".mutt-grid .mutt-scroll").first.screenshot(path=str(REPO / folder / f"{audience}-grid.png"))


def new_tab(context):
    from playwright.sync_api import expect

    page = context.new_page()
    page.set_default_timeout(300_000)
    expect.set_options(timeout=300_000)
    return page


def landing(page, url: str, read_only: bool, sample: bool) -> None:
    """The Run page as it opens: the precomputed grid with its legend, the notes a first visitor needs."""
    from playwright.sync_api import expect

    page.goto(url)
    expect(page.get_by_role("heading", name="Accuracy (precomputed)")).to_be_visible()
    page.locator(".mutt-grid td a").first.wait_for()
    expect(page.locator(".mutt-legend")).to_contain_text("0% (red)")
    expect(page.locator(".mutt-legend")).to_contain_text("click a cell: its trials")
    expect(page.get_by_role("link", name=re.compile(r"^Published vs measured: the MUTT paper"))).to_be_visible()
    expect(page.get_by_text(re.compile(r"^Glossary: signature"))).to_be_visible()
    # The grid is sent before the form and the sample banner above it: count the notices once the form is drawn.
    expect(page.get_by_role("button", name="Run")).to_be_visible()
    run_ended(page)
    assert (page.get_by_text("Read-only demo.").count() > 0) == read_only
    assert (page.get_by_text("Sample data.").count() > 0) == sample
    assert page.locator(EXCEPTION).count() == 0


def open_glossary(page) -> None:
    from playwright.sync_api import expect

    page.get_by_text(re.compile(r"^Glossary: signature")).click()
    expect(page.get_by_text(re.compile(r"The 95% confidence interval of an accuracy")).first).to_be_visible()


def drill_down(page, cell: str, title: str) -> None:
    """Click the grid's cell link ``cell``, then show all its trials (a cell may have no failing one)."""
    from playwright.sync_api import expect

    # Click once the page's script run has ended: a grid still being redrawn may swap the link under the click.
    run_ended(page)
    page.locator(f'.mutt-grid a[href="{cell}"]').first.click()
    page.wait_for_url(re.compile(r"/drilldown\?"))
    expect(page.get_by_role("heading", name="Drill-down")).to_be_visible()
    expect(page.locator(MARGINS_TITLE).first).to_contain_text(title)
    assert "metric=" in page.url
    page.goto(page.url + "&show=all")
    page.locator(".mutt-diff").first.wait_for()
    expect(page.get_by_text("trials shown")).to_be_visible()
    assert page.locator(EXCEPTION).count() == 0


def first_minute(browser, url: str, audience: str, read_only: bool, sample: bool, cell: str, title: str,
                 grid: bool = False):
    """A new visitor's landing, saved as ``audience``'s first view (and its grid, with ``grid``), then the glossary
    and a cell's drill-down; returns the tab."""
    page = new_tab(browser.new_context(viewport=VIEWPORT))
    landing(page, url, read_only=read_only, sample=sample)
    first_view(page, audience, grid=grid)
    open_glossary(page)
    drill_down(page, cell, title)
    return page


# --------------------------------------------------------------------------- reviewer

@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The hosted demo: read-only, no data dir."""
    require_chromium()
    tmp = tmp_path_factory.mktemp("demo")
    env = sample_env(tmp / "cache", MUTTLAB_READ_ONLY="1", MUTTLAB_WARM_UP=NOTHING)
    with serving(env, tmp / "serve.log") as url:
        yield url


def test_a_reviewer_on_the_read_only_demo(demo, browser):
    from playwright.sync_api import expect

    page = first_minute(browser, demo, "reviewer", read_only=True, sample=True, cell=CELL,
                        title="ROUGE-L on Negated Subject, 5 references")
    expect(page.get_by_text(re.compile(r"bundled sample's \d+ Negated Subject trials instead"))).to_be_visible()
    page.goto(demo)
    page.get_by_role("link", name=re.compile(r"^Published vs measured: the MUTT paper")).click()
    expect(page.get_by_role("heading", name="Published vs measured")).to_be_visible()
    expect(page.get_by_text("published numbers", exact=True)).to_be_visible()
    page.goto(f"{demo}/annotate")
    expect(page.get_by_role("heading", name="Annotate")).to_be_visible()
    run_ended(page)
    assert page.get_by_role("link", name="Sign in to edit").count() == 0
    assert page.get_by_role("button", name="Save edit").count() == 0
    assert page.locator(EXCEPTION).count() == 0


# --------------------------------------------------------------------------- researcher

@pytest.fixture(scope="module")
def research_server(tmp_path_factory, data_dir):
    """The real data (the researcher's first minute; the Meta-evaluation page's texts): the served attacks'
    server (tests/attacks/test_served.py), one per work unit of tests/conftest.py's "served" group. Its pair store
    is unreachable, which no researcher's page here reads; a server of its own cost the group a start."""
    from tests.attacks.test_served import shared_server

    return shared_server(tmp_path_factory, data_dir).url


def test_a_researcher_with_the_data(research_server, browser):
    from playwright.sync_api import expect

    page = first_minute(browser, research_server, "researcher", read_only=False, sample=False,
                        cell="drilldown?metric=BLEU-4&corruption=neg_subj&refs=5",
                        title="BLEU-4 on Negated Subject, 5 references", grid=True)
    # The cell's own trials: the MUTT set, not the sample.
    expect(page.get_by_text(re.compile(r"source: mutt:neg_subj#\d+")).first).to_be_visible()
    assert page.get_by_text("bundled sample").count() == 0


# --------------------------------------------------------------------------- annotator

@pytest.fixture(scope="module")
def annotation_server(tmp_path_factory):
    """The sample with an annotator account and a few pairs in the store, one per work unit (the sign-in tests
    change no pair)."""
    require_chromium()

    @contextmanager
    def start():
        tmp = tmp_path_factory.mktemp("annotation")
        env = sample_env(tmp / "cache", MUTTLAB_USERS_FILE=str(tmp / "secret" / "users.json"), MUTTLAB_WARM_UP=NOTHING)
        settings = load_settings(env)
        UserStore(tmp / "secret" / "users.json").add(local_operator(), settings, "ann", "annotator", PASSWORD)
        with open_store(settings) as store:
            store.add([t for t in load_sample().trials if t.corruption == "neg_subj"][:3], author="loader",
                      status="proposed")
        with serving(env, tmp / "serve.log") as url:
            yield url

    return SERVERS.get("annotation", start)


def test_an_annotator_signs_in_once_for_every_tab(annotation_server, browser):
    from playwright.sync_api import expect

    url = annotation_server
    context = browser.new_context(viewport=VIEWPORT)
    page = new_tab(context)
    landing(page, url, read_only=False, sample=True)
    page.goto(f"{url}/annotate?pair=1")
    href = page.get_by_role("link", name="Sign in to edit").get_attribute("href")
    assert href.startswith("/_muttlab/signin?next=%2Fannotate")  # the server's sign-in address
    page.goto(url + href)
    page.get_by_label("Your name").fill("ann")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{url}/annotate*")
    signed_in = page.get_by_text("Signed in as ann (annotator)")
    expect(signed_in).to_be_visible()
    expect(page.get_by_label("Corruption", exact=True)).to_be_visible()
    first_view(page, "annotator")

    session = [c for c in context.cookies() if c["name"] == "muttlab_session"]
    assert len(session) == 1 and session[0]["httpOnly"] and session[0]["sameSite"] == "Strict"
    assert session[0]["value"] not in page.evaluate("document.cookie")
    assert "muttlab_session" not in page.evaluate("document.cookie")
    assert session[0]["value"] not in page.url

    page.reload()
    expect(page.get_by_text("Signed in as ann (annotator)")).to_be_visible()
    other = new_tab(context)
    other.goto(f"{url}/annotate?pair=2")
    expect(other.get_by_role("heading", name="Pair #2")).to_be_visible()
    expect(other.get_by_text("Signed in as ann (annotator)")).to_be_visible()
    expect(other.get_by_label("Corruption", exact=True)).to_be_visible()
    assert session[0]["value"] not in other.evaluate("document.cookie")
    # A cell's drill-down, signed in as on any page.
    other.goto(url)
    other.locator(".mutt-grid td a").first.wait_for()
    drill_down(other, CELL, "ROUGE-L on Negated Subject, 5 references")
    assert page.locator(EXCEPTION).count() == 0 and other.locator(EXCEPTION).count() == 0

    # Signing out revokes the session on the server: the other tabs are signed out on their next load.
    other.goto(f"{url}/annotate?pair=2")
    other.get_by_role("button", name="Sign out").click()
    expect(other.get_by_role("link", name="Sign in to edit")).to_be_visible()
    page.reload()
    expect(page.get_by_role("link", name="Sign in to edit")).to_be_visible()
    context.close()
