"""Each audience's path in real Chromium against `muttlab serve` on the bundled sample.

Reviewer: the landing page shows the precomputed grid at once; a shared drill-down link lands on its cell.
Annotator: text typed during a conflict survives an Accept and a refused save. Researcher/annotator: an
edited pair's new scores appear in the drill-down of the store suite.
"""
from __future__ import annotations

import re

import pytest

from muttlab.sources import load_sample
from muttlab.pairs.store import open_store
from muttlab.settings import load_settings
from tests.dashboard.conftest import new_page, run_ended
from tests.dashboard.test_browser import (ARTIFACTS, EXCEPTION, MARGINS_TITLE, NOTHING, require_chromium, sample_env,
                                          serving)

pytestmark = pytest.mark.browser
TOKEN = "browser-secret"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """`muttlab serve` on the sample with a private cache whose pair store holds the sample's trials."""
    require_chromium()
    tmp = tmp_path_factory.mktemp("served")
    env = sample_env(tmp / "cache", MUTTLAB_ANNOTATOR_TOKEN=TOKEN, MUTTLAB_WARM_UP=NOTHING)
    settings = load_settings(env)
    trials = load_sample().trials
    with open_store(settings) as store:
        store.add([t for t in trials if t.corruption == "neg_subj"][:4], author="loader", status="proposed")
    with serving(env, tmp / "serve.log") as url:
        yield url, settings


def test_reviewer_sees_the_grid_and_a_shared_link_lands_on_its_cell(served, browser):
    from playwright.sync_api import expect
    url, _ = served
    page = new_page(browser)
    page.goto(url)
    expect(page.get_by_role("heading", name="Accuracy (precomputed)")).to_be_visible()
    page.locator(".mutt-grid td a").first.wait_for()
    expect(page.get_by_text("CC BY-NC-SA 3.0").first).to_be_attached()  # the footer's licences
    assert page.locator(EXCEPTION).count() == 0
    page.screenshot(path=str(ARTIFACTS / "dashboard-landing-grid.png"), full_page=True)
    # A cell of the grid is a link to its drill-down.
    cell = page.locator('.mutt-grid a[href="drilldown?metric=ROUGE-L&corruption=neg_subj&refs=5"]')
    expect(cell).to_have_attribute("title", re.compile(r"accuracy [0-9.]+% \(\d+/\d+\)\n95% CI .*\nties"))
    cell.click()
    expect(page.get_by_role("heading", name="Drill-down")).to_be_visible()
    expect(page.locator(MARGINS_TITLE).first).to_contain_text("ROUGE-L on Negated Subject, 5 references")
    assert "metric=ROUGE-L" in page.url
    link = f"{url}/drilldown?metric=ROUGE-L&corruption=neg_subj&refs=5&show=all"
    page.goto(link)
    expect(page.get_by_role("heading", name="Drill-down")).to_be_visible()
    page.locator(".mutt-diff").first.wait_for()
    expect(page.get_by_text("trials shown")).to_be_visible()
    title = page.locator(MARGINS_TITLE).first
    expect(title).to_contain_text("ROUGE-L on Negated Subject, 5 references")
    expect(page.get_by_text("signature: ROUGE-L|")).to_be_visible()
    assert "metric=ROUGE-L" in page.url and "show=all" in page.url  # the address still names the view
    page.reload()
    page.locator(".mutt-diff").first.wait_for()
    expect(page.locator(MARGINS_TITLE).first).to_contain_text("ROUGE-L on Negated Subject, 5 references")
    page.screenshot(path=str(ARTIFACTS / "dashboard-shared-link.png"), full_page=True)
    assert page.locator(EXCEPTION).count() == 0


def test_annotator_keeps_text_typed_during_a_conflict(served, browser):
    from playwright.sync_api import expect
    url, settings = served
    page = new_page(browser)
    page.goto(f"{url}/annotate?pair=1")
    # `muttlab serve` signs in on its own page, which sets the session cookie and comes back to the pair.
    page.goto(url + page.get_by_role("link", name="Sign in to edit").get_attribute("href"))
    page.get_by_label("Your name").fill("Ada")
    page.get_by_label("Annotator credential").fill(TOKEN)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{url}/annotate*")
    corrupted = page.get_by_label("Corruption", exact=True)
    corrupted.wait_for()
    with open_store(settings) as store:  # Bob saves first, while Ada types
        store.edit(1, 1, {"corrupted": "Bob was here"}, author="Bob")
    corrupted.fill("Ada typed this")
    page.get_by_role("button", name="Accept").click()  # on the outdated version: refused
    expect(page.get_by_text("Not saved").first).to_be_visible()
    assert page.get_by_label("Corruption", exact=True).input_value() == "Ada typed this"
    page.get_by_role("button", name="Save edit").click()
    expect(page.get_by_text("Conflict on pair #1")).to_be_visible()
    expect(page.get_by_test_id("stText").filter(has_text="Bob was here")).to_be_visible()
    # Read once the conflict's run has ended: while it draws the panel above, the form below is still the last
    # run's (once in a whole-suite run, a text area read mid-run was empty).
    run_ended(page)
    expect(page.get_by_label("Corruption", exact=True)).to_have_value("Ada typed this")
    page.screenshot(path=str(ARTIFACTS / "dashboard-conflict.png"), full_page=True)
    page.get_by_role("button", name="Save edit").click()
    expect(page.get_by_text("Saved pair #1 as version 3")).to_be_visible()
    with open_store(settings) as store:
        assert store.get(1).corrupted == "Ada typed this"
    assert page.locator(EXCEPTION).count() == 0


def test_an_edited_pair_is_scored_in_the_drilldown(served, browser):
    from playwright.sync_api import expect
    url, settings = served
    with open_store(settings) as store:
        pair = store.get(2)
        # The corruption made identical to the original: any metric must give both the same score.
        store.edit(2, pair.version, {"corrupted": pair.original}, author="Ada")
    page = new_page(browser)
    page.goto(f"{url}/drilldown?metric=BLEU-4&corruption=neg_subj&refs=5&suite=store&show=all&trial={pair.key}")
    expect(page.get_by_text(f"Trial {pair.key}")).to_be_visible()
    # The pinned card comes first; its numbers read "original X / corruption Y / margin Z".
    card = page.locator(".mutt-card").first
    assert card.get_attribute("data-trial") == pair.key
    labels = card.locator("dl.mutt-numbers dt").all_inner_texts()
    values = card.locator("dl.mutt-numbers dd").all_inner_texts()
    assert labels == ["original", "corruption", "margin"]
    assert values[0] == values[1], values
    assert page.locator(EXCEPTION).count() == 0
    page.screenshot(path=str(ARTIFACTS / "dashboard-edited-pair.png"), full_page=True)
