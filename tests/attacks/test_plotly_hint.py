"""The paint hint's cookie (:mod:`muttlab.dashboard.plotly_hint`) as an anonymous visitor would attack it: a claim
the browser makes about itself, which must decide nothing but the order of that browser's own page.

Run against the shared sample server (``muttlab serve`` with the hint's route mounted) over raw HTTP and in
headless Chromium."""
from __future__ import annotations

import urllib.error
import urllib.request

import pytest

from muttlab.dashboard import plotly_hint
from tests.dashboard.conftest import browser  # noqa: F401 (fixture)
from tests.dashboard.test_browser import EXCEPTION

pytestmark = pytest.mark.browser

FIGURE = ".js-plotly-plot .draglayer"


def _request(url: str, method: str = "GET", headers: dict | None = None):
    request = urllib.request.Request(url, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, exc.read()


def test_the_route_sets_only_its_own_cookie_and_reads_nothing(sample_server):
    """Whatever a caller sends (a query, cookies, another session's cookie name), the answer is the same empty 204
    with the one hint cookie, HttpOnly and SameSite=Strict, never stored by a cache; other methods are refused."""
    status, headers, body = _request(f"{sample_server.url}{plotly_hint.SEEN}?next=https://attacker.example&v=0",
                                     headers={"Cookie": "muttlab_session=forged; muttlab_plotly=0"})
    assert status == 204 and body == b""
    cookies = headers.get_all("set-cookie")
    assert len(cookies) == 1 and cookies[0].startswith(f"{plotly_hint.COOKIE}=1;")
    assert "httponly" in cookies[0].lower() and "samesite=strict" in cookies[0].lower()
    assert "no-store" in headers.get("cache-control", "")
    assert "location" not in {k.lower() for k in headers}
    for method in ("POST", "PUT", "DELETE"):
        assert _request(f"{sample_server.url}{plotly_hint.SEEN}", method=method)[0] == 405


def test_a_forged_hint_only_moves_its_own_figures_forward(sample_server, browser):  # noqa: F811
    """A first visit whose cookie claims plotly is cached (it is not: a new browser context) gets the page whole,
    cards and figure, in its first run and no exception; a visitor without the cookie still gets the paint pass
    (the figure's place held, then drawn); and the forged cookie gives no other page or visitor anything."""
    from playwright.sync_api import expect

    url = sample_server.url
    forged = browser.new_context()
    forged.add_cookies([{"name": plotly_hint.COOKIE, "value": "1", "url": url}])
    page = forged.new_page()
    page.set_default_timeout(300_000)
    page.goto(f"{url}/severity")
    page.locator(FIGURE).first.wait_for()
    assert page.get_by_text("Drawing the chart…").count() == 0
    assert page.locator(EXCEPTION).count() == 0
    forged.close()

    fresh = browser.new_context()
    page = fresh.new_page()
    page.set_default_timeout(300_000)
    page.goto(f"{url}/severity")
    page.locator(FIGURE).first.wait_for()
    # Drawn by the paint pass, after which the footer asked for the hint: the browser holds it now.
    expect(page.locator(f'img[src="{plotly_hint.SEEN}"]')).to_have_count(1)
    for _ in range(150):  # the image's request is the browser's, not the page's run: poll for its answer
        if any(c["name"] == plotly_hint.COOKIE for c in fresh.cookies()):
            break
        page.wait_for_timeout(200)
    assert any(c["name"] == plotly_hint.COOKIE and c["value"] == "1" for c in fresh.cookies())
    assert page.locator(EXCEPTION).count() == 0
    fresh.close()
