"""In Chromium against `muttlab serve` with an annotator account: Sign in opens the server's sign-in page in the
same tab (a second tab used to sign in while the first stayed signed out), styled like the app, and brings that
tab back to the page signed in."""
from __future__ import annotations

import pytest

from tests.dashboard.test_browser import EXCEPTION
from tests.dashboard.test_browser_audiences import PASSWORD, VIEWPORT, annotation_server  # noqa: F401 (fixture)

pytestmark = pytest.mark.browser


def test_sign_in_happens_in_the_same_tab(annotation_server, browser):  # noqa: F811
    from playwright.sync_api import expect

    url = annotation_server
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.set_default_timeout(300_000)
    page.goto(f"{url}/annotate?pair=1")
    link = page.get_by_role("link", name="Sign in to edit")
    assert link.get_attribute("href").startswith("/_muttlab/signin?next=%2Fannotate")
    link.click()
    page.wait_for_url(f"{url}/_muttlab/signin*")
    assert len(context.pages) == 1  # no second tab
    # Styled: the button is filled with the app's blue (#0072B2), not the browser's grey default.
    assert page.evaluate("getComputedStyle(document.querySelector('button')).backgroundColor") == "rgb(0, 114, 178)"
    page.get_by_label("Your name").fill("ann")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{url}/annotate*")
    expect(page.get_by_text("Signed in as ann (annotator)")).to_be_visible()
    assert len(context.pages) == 1 and page.locator(EXCEPTION).count() == 0
    context.close()
