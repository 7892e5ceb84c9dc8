"""A server judging by other rules never shows the shipped numbers as its own (real Chromium).

`muttlab serve` with ``MUTTLAB_TIE_RULE=exact``: the landing grid, shipped under the default rules
(tie:1e-9), is labelled as computed under another stamp with what differs, never as "the same numbers a Run
gives"; the glossary prints the server's tie rule; the Severity page's shipped first curve and Published vs
measured say the same of theirs.
"""
from __future__ import annotations

import pytest

from tests.dashboard.conftest import new_page, run_ended
from tests.dashboard.test_browser import EXCEPTION, NOTHING, require_chromium, sample_env, serving

pytestmark = pytest.mark.browser

OTHER_RULES = "judged under other rules: tol:0.15|tie:1e-9, this server's are tol:0.15|tie:exact"


@pytest.fixture(scope="module")
def exact_server(tmp_path_factory):
    require_chromium()
    tmp = tmp_path_factory.mktemp("exact")
    env = sample_env(tmp / "cache", MUTTLAB_TIE_RULE="exact", MUTTLAB_WARM_UP=NOTHING)
    with serving(env, tmp / "serve.log") as url:
        yield url


def test_a_server_under_the_exact_rule_never_shows_the_shipped_grid_as_current(exact_server, browser):
    from playwright.sync_api import expect

    page = new_page(browser)
    page.goto(exact_server)
    expect(page.get_by_role("heading", name="Accuracy precomputed under another stamp")).to_be_visible()
    expect(page.get_by_text("Not this server's numbers.")).to_be_visible()
    expect(page.get_by_text(OTHER_RULES).first).to_be_visible()
    expect(page.locator(".mutt-grid a").first).to_be_visible()  # the grid is still there, as what it is
    body = page.locator("body").inner_text()
    assert "the same numbers a Run gives" not in body
    assert page.get_by_role("heading", name="Accuracy (precomputed)", exact=True).count() == 0
    run_ended(page)  # a click while the page still runs can be lost
    page.get_by_text("Glossary: signature, tie").click()
    expect(page.get_by_text("two scores tie only when they are exactly equal (tie:exact").first).to_be_visible()
    assert "1e-9 × max(1, |s_orig|)" not in page.locator("body").inner_text()
    assert page.locator(EXCEPTION).count() == 0


def test_the_other_shipped_views_say_their_rules(exact_server, browser):
    from playwright.sync_api import expect

    page = new_page(browser)
    page.goto(f"{exact_server}/severity")
    expect(page.get_by_text("These precomputed curves are not this server's numbers")).to_be_visible()
    expect(page.get_by_text(OTHER_RULES).first).to_be_visible()
    page.goto(f"{exact_server}/published")
    expect(page.get_by_text("ties judged exactly, as the paper did").first).to_be_visible()
    expect(page.get_by_text("These shipped numbers are not this server's")).to_be_visible()
    assert page.locator(EXCEPTION).count() == 0
