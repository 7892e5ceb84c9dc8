"""In real Chromium against `muttlab serve` on the bundled sample: the warm-up starts with the server, and the
Severity curves and Challenge sets pages work from a link and from an upload, showing users' text as text."""
from __future__ import annotations

import re
import sqlite3
import time

import pytest

from tests.conftest import REPO
from tests.dashboard.conftest import new_page, run_ended
from tests.dashboard.test_browser import ARTIFACTS, CURVE_LINE, EXCEPTION

pytestmark = pytest.mark.browser
ACES = REPO / "tests" / "suites" / "files" / "aces.tsv"
INJECTED = '<img src="x" onerror="document.title=1">'


def test_the_warm_up_starts_with_the_server_not_with_a_visitor(sample_server, browser):
    from playwright.sync_api import expect
    url, log = sample_server.url, sample_server.log
    text = log.read_text()
    # Begun before the server listened, in the serving process...
    assert text.index("warm-up started") < text.index("You can now view")
    # ...and finished by the server itself, whatever its visitors do.
    deadline = time.monotonic() + 600
    while "warm-up done" not in log.read_text() and time.monotonic() < deadline:
        time.sleep(1)
    done = re.search(r"warm-up done in [0-9.]+ s: (\d+) loaded", log.read_text())
    assert done and int(done.group(1)) >= 5, log.read_text()[-2000:]
    scores = sqlite3.connect(sample_server.settings.cache_dir / "scores.sqlite")
    scored = scores.execute("SELECT count(*) FROM scores").fetchone()[0]
    page = new_page(browser, 1800)
    page.goto(f"{url}/playground")
    expect(page.get_by_role("heading", name="Scores")).to_be_visible()
    page.locator(".mutt-card").first.wait_for()  # the corruptions, scored and judged
    assert page.locator(EXCEPTION).count() == 0
    # The warm-up loaded each metric by scoring the Playground's example and its corruptions: a first visit
    # is answered from the score cache, nothing is scored for it.
    assert scores.execute("SELECT count(*) FROM scores").fetchone()[0] == scored


def test_a_severity_link_draws_its_curves(sample_server, browser):
    from playwright.sync_api import expect
    url = sample_server.url
    page = new_page(browser, 1800)
    page.goto(f"{url}/severity?metrics=BLEU-4,ROUGE-L&corruption=drop_content&strengths=1,2,3&refs=5")
    expect(page.get_by_role("heading", name="Severity curves")).to_be_visible()
    run_ended(page)  # a click while the page still runs can land on a button the run then replaces
    page.get_by_role("button", name="Draw the curves of this link").click()  # a link fills the form
    page.locator(CURVE_LINE).first.wait_for(state="attached")  # a flat line has no height: never "visible"
    expect(page.get_by_text(re.compile(r"sentences? takes? "))).to_be_visible()
    expect(page.get_by_text(re.compile(r"is not monotone|Every curve is monotone")).first).to_be_visible()
    assert page.locator(EXCEPTION).count() == 0
    page.screenshot(path=str(ARTIFACTS / "dashboard-severity.png"), full_page=True)


def test_an_uploaded_challenge_set_is_reported_and_its_text_stays_text(sample_server, browser, tmp_path):
    from playwright.sync_api import expect
    url = sample_server.url
    lines = ACES.read_text(encoding="utf-8").rstrip("\n").split("\n")
    cells = lines[2].split("\t")
    upload = tmp_path / "mine.tsv"
    upload.write_text("\n".join(lines + ["77\tonly three\tcolumns", "\t".join(cells[:5] + [INJECTED] + cells[6:])])
                      + "\n", encoding="utf-8")
    page = new_page(browser, 1800)
    page.goto(f"{url}/challenge?metrics=BLEU-4,chrF")
    expect(page.get_by_role("heading", name="Challenge sets")).to_be_visible()
    page.locator('input[type="file"]').set_input_files(str(upload))
    page.get_by_role("button", name="Score the challenge set").click()  # reading is the upload's, scoring the button's
    expect(page.get_by_role("heading", name="Per phenomenon")).to_be_visible()
    # The test file's own malformed row (line 6) and the one added here (line 9).
    expect(page.get_by_text("2 malformed row(s) left out")).to_be_visible()
    expect(page.get_by_role("heading", name="ACES summary")).to_be_visible()
    assert page.locator('img[src="x"]').count() == 0 and page.title() != "1"
    assert page.locator(EXCEPTION).count() == 0
    page.screenshot(path=str(ARTIFACTS / "dashboard-challenge.png"), full_page=True)
