"""In Chromium against `muttlab serve` on the sample: a Drill-down link with a slice opens the cell with the
slice's filter set and only its trials listed, and a reload keeps it."""
from __future__ import annotations

import re

import pytest

from muttlab.sources import load_sample
from tests.dashboard.conftest import new_page
from tests.dashboard.test_browser import EXCEPTION, require_chromium, sample_env, serving

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    require_chromium()
    tmp = tmp_path_factory.mktemp("served-slices")
    with serving(sample_env(tmp / "cache"), tmp / "serve.log") as url:
        yield url


def test_a_slice_link_restores_its_slice(served, browser):
    from playwright.sync_api import expect

    # The sample's Negated Subject trials whose original has 10 to 11 words (counted as the slice counts them,
    # \w+ runs): the link's slice, with show=all, lists exactly these.
    trials = [t for t in load_sample().trials if t.corruption == "neg_subj"]
    inside = sum(10 <= len(re.findall(r"\w+", t.original.lower())) <= 11 for t in trials)
    assert 0 < inside < len(trials)
    page = new_page(browser)
    page.goto(f"{served}/drilldown?metric=BLEU-4&corruption=neg_subj&refs=5&show=all&slice=length:10..11")
    expect(page.get_by_role("heading", name="Drill-down")).to_be_visible()
    expect(page.get_by_text(f"{inside} of {len(trials)} trials shown")).to_be_visible()
    slider = page.get_by_role("slider").first
    expect(slider).to_have_attribute("aria-valuetext", "10")  # the start thumb of the range
    assert "slice=length%3A10..11" in page.url or "slice=length:10..11" in page.url
    page.reload()
    expect(page.get_by_text(f"{inside} of {len(trials)} trials shown")).to_be_visible()
    assert page.locator(EXCEPTION).count() == 0
