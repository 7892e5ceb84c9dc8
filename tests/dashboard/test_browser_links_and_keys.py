"""In Chromium against `muttlab serve` on the sample: a Drill-down link with a slice opens the cell with the
slice's filter set and only its trials listed, and a reload keeps it; the accuracy grid is one tab stop whose
cells the arrow keys reach, each named by metric, type, references and value."""
from __future__ import annotations

import re

import pytest

from muttlab.sources import load_sample
from tests.dashboard.conftest import new_page, settle
from tests.dashboard.test_browser import EXCEPTION, require_chromium

pytestmark = pytest.mark.browser


@pytest.fixture
def served(sample_server):
    """The shared bundled-sample server (tests/conftest.py): these tests need no setting of their own."""
    require_chromium()
    return sample_server.url


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


def _focused(page) -> dict:
    return page.evaluate("""() => {
      const a = document.activeElement, td = a.closest("td"), tr = a.closest("tr"), table = a.closest("table");
      const column = td ? [...tr.children].indexOf(td) : -1;
      const header = table ? table.querySelectorAll("thead tr")[1].children[column] : null;
      return {inGrid: !!a.closest(".mutt-grid"), name: a.getAttribute("aria-label"), text: a.textContent,
              metric: tr && tr.querySelector("th") ? tr.querySelector("th").textContent : null,
              type: header ? header.textContent : null, row: tr ? tr.rowIndex : -1, column};
    }""")


def _walk_right_then_down(page) -> tuple[dict, dict, dict] | None:
    """Focus the grid's tab stop, press ArrowRight then ArrowDown: the focused cell before and after each key.
    None when the grid was drawn anew meanwhile (a mark set on it before the keys is gone): focus is lost with
    the element it was on, which says nothing about the keys (once in a whole-suite run on a loaded machine,
    the cell reached read as no cell at all)."""
    page.evaluate("() => { document.querySelector('.mutt-grid').dataset.walked = '1'; }")
    page.locator('.mutt-grid td a[tabindex="0"]').focus()
    start = _focused(page)
    page.keyboard.press("ArrowRight")
    right = _focused(page)
    page.keyboard.press("ArrowDown")
    down = _focused(page)
    if not page.evaluate("() => !!document.querySelector('.mutt-grid[data-walked]')"):
        return None
    return start, right, down


def test_the_grid_is_one_tab_stop_walked_with_the_arrow_keys(served, browser):
    from playwright.sync_api import expect

    page = new_page(browser)
    page.goto(served)
    page.locator(".mutt-grid td a").first.wait_for()  # the shipped grid, whatever its stamp
    # Keys once the page's run has ended: a grid redrawn by a run still going on forgets the cell last reached.
    settle(page)
    first = page.locator('.mutt-grid td a[tabindex="0"]')
    expect(first).to_have_count(1)
    # Every other cell is out of the tab order.
    cells = page.locator(".mutt-grid td a").count()
    expect(page.locator('.mutt-grid td a[tabindex="-1"]')).to_have_count(cells - 1)
    walked = _walk_right_then_down(page)
    if walked is None:  # drawn anew under the keys: once more on the grid now shown
        settle(page)
        walked = _walk_right_then_down(page)
    assert walked is not None, "the grid was drawn anew twice while its keys were pressed"
    start, right, down = walked
    assert right["inGrid"] and (right["row"], right["column"]) == (start["row"], start["column"] + 1)
    assert (down["row"], down["column"]) == (right["row"] + 1, right["column"])
    # Its accessible name says the row's metric, the column's type, the table's reference count and the value
    # the cell shows (read from the page's own headers).
    named = re.fullmatch(r"(.+), (.+), (\d+) references: accuracy (\d+\.\d)% \((\d+)/(\d+)\)", down["name"])
    assert named and named.group(1, 2) == (down["metric"], down["type"]), down
    assert f"{float(named.group(4)):.0f}" == down["text"]  # the number the cell shows, to the whole percent
    # Tab leaves the grid in one step; Shift+Tab comes back to the cell last reached.
    page.keyboard.press("Tab")
    assert not _focused(page)["inGrid"]
    page.keyboard.press("Shift+Tab")
    back = _focused(page)
    assert (back["row"], back["column"]) == (down["row"], down["column"])
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Drill-down")).to_be_visible()
    assert "metric=" in page.url
    assert page.locator(EXCEPTION).count() == 0
