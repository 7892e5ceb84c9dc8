"""Honest progress in Chromium: during a cold Run with a neural metric the bar says what is being done and its
done count ("n of N items") advances at least every 5 s, and the precomputed grid stays on the page until the
run's grid replaces it. Against its own `muttlab serve` on the bundled sample with an empty cache (a run is cold
only once per cache).

The 5 s bound is the issue's requirement of the page (a reviewer watching the bar), so it is read off the page's
own clock; the work per report is a grid cell or one encoding pass of 16 sentences, well under it."""
from __future__ import annotations

import re
import time

import pytest

from tests.dashboard.conftest import new_page
from tests.dashboard.test_browser import EXCEPTION, require_chromium, sample_env, serving

pytestmark = pytest.mark.browser
COUNT = re.compile(r"scoring (\S+) \(1 of 1 metrics\): ([\d,]+) of ([\d,]+) items")
LONGEST_WAIT_S = 5.0


@pytest.fixture(scope="module")
def cold_server(tmp_path_factory):
    require_chromium()
    tmp = tmp_path_factory.mktemp("cold")
    with serving(sample_env(tmp / "cache"), tmp / "serve.log") as url:
        yield url


def test_a_cold_neural_run_counts_its_items_at_least_every_5_s(cold_server, browser):
    from playwright.sync_api import expect

    page = new_page(browser)
    # The link fills the form; Run starts it.
    page.goto(f"{cold_server}/?metrics=EmbeddingCosine&corruptions=all&refs=5,10&run=1")
    page.locator(".mutt-grid").first.wait_for()  # the precomputed grid
    page.get_by_role("button", name="Run").click()
    bar = page.locator('[data-testid="stProgress"]')
    bar.first.wait_for()
    seen: list[tuple[float, int, int]] = []  # (seconds since the click, done, total)
    grid_kept = True
    start = time.monotonic()
    while time.monotonic() - start < 600:
        texts = bar.all_inner_texts()
        if not texts:
            break  # the run ended: the bar is gone
        found = COUNT.search(" ".join(texts))
        if found:
            seen.append((time.monotonic() - start, int(found.group(2).replace(",", "")),
                         int(found.group(3).replace(",", ""))))
            grid_kept &= page.locator(".mutt-grid").count() > 0
        page.wait_for_timeout(250)
    assert page.locator(EXCEPTION).count() == 0
    expect(page.get_by_role("heading", name="Accuracy", exact=True)).to_be_visible()  # the run's grid
    assert len({done for _, done, _ in seen}) >= 3, seen
    assert grid_kept  # the precomputed grid was on the page under the bar all along
    advances = [seen[0][0]] + [t for (_, a, _), (t, b, _) in zip(seen, seen[1:]) if b > a]
    gaps = [b - a for a, b in zip(advances, advances[1:])]
    assert max(gaps) <= LONGEST_WAIT_S, (gaps, seen)
