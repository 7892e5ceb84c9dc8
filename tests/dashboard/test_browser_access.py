"""Issue 17 in real Chromium: an anonymous visitor gets no training or install control on the Learned page,
and a Markdown image (and an HTML image) written into a pair's key and source is shown as text: the browser
never creates an image or link for it and never requests its address."""
from __future__ import annotations

import pytest

from muttlab.trials import Trial
from muttlab.pairs.store import open_store
from tests.dashboard.test_browser import EXCEPTION

pytestmark = pytest.mark.browser

IMAGE = "![x](http://127.0.0.1:9/x.png)"
TAG = '<img src="http://127.0.0.1:9/y.png">'


@pytest.fixture
def poisoned_pair(sample_server):
    """A pair in the server's store (the SQLite file in its cache dir) with images in its key and source; its id."""
    with open_store(sample_server.settings) as store:
        store.add([Trial(f"k/{IMAGE}", "neg_subj", f"A man plays {TAG}", "There is no man playing",
                         ("A man plays a guitar",), source=f"{IMAGE} {TAG}")], author="loader")
        return store.get_by_key(f"k/{IMAGE}").id


def test_anonymous_visitor_cannot_train_and_sees_injected_markdown_as_text(poisoned_pair, sample_server, browser):
    from playwright.sync_api import expect

    server = sample_server.url
    requested: list[str] = []
    page = browser.new_page(viewport={"width": 1400, "height": 2000})
    page.on("request", lambda request: requested.append(request.url))
    page.set_default_timeout(180_000)
    expect.set_options(timeout=180_000)

    page.goto(f"{server}/learned")
    expect(page.get_by_role("heading", name="Learned metrics")).to_be_visible()
    expect(page.get_by_text("Training is for maintainers")).to_be_visible()
    expect(page.get_by_role("heading", name="Models")).to_be_visible()
    for name in ("Train", "Install", "Use the shipped model", "Clear the server's caches"):
        assert page.get_by_role("button", name=name, exact=True).count() == 0, name
    assert page.locator(EXCEPTION).count() == 0

    page.goto(f"{server}/annotate?pair={poisoned_pair}")
    expect(page.get_by_role("heading", name=f"Pair #{poisoned_pair}")).to_be_visible()
    # The pair list's grid holds the sentence too, in cells its canvas hides from the page: look at the
    # pair's own view, the visible copy.
    expect(page.get_by_text("There is no man playing").filter(visible=True).first).to_be_visible()
    assert page.locator("img[src*='127.0.0.1:9']").count() == 0
    assert page.locator("a[href*='127.0.0.1:9']").count() == 0
    expect(page.get_by_text(f"source: {IMAGE} {TAG}")).to_be_visible(timeout=20_000)  # as characters
    assert page.locator(EXCEPTION).count() == 0
    assert not [url for url in requested if "127.0.0.1:9" in url]
