"""End to end: `muttlab serve` on a free port, driven in headless Debian chromium through Playwright.

Runs a small grid on the bundled sample, opens a drill-down from it, and saves screenshots in
test-artifacts/. It fails if any page shows a Python exception (Streamlit's ``stException`` element).
"""
from __future__ import annotations

import csv
import io
import os
from contextlib import contextmanager
from dataclasses import dataclass
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from muttlab.settings import Settings
from tests.conftest import REPO
from tests.dashboard.conftest import SETTINGS_VARIABLES, run_ended

pytestmark = pytest.mark.browser

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-quic",
                 "--no-first-run", "--disable-component-update", "--disable-sync"]
ARTIFACTS = REPO / "test-artifacts"
MUTTLAB = Path(sys.executable).with_name("muttlab")
EXCEPTION = '[data-testid="stException"]'
# A line of a plotly figure (a severity curve's), as plotly.js draws it into the figure's SVG.
CURVE_LINE = ".js-plotly-plot .scatterlayer .js-line"
# The title of a plotly figure: on the Drill-down, the first is the margins histogram's (above the trial cards).
MARGINS_TITLE = ".js-plotly-plot .gtitle"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_healthy(url: str, proc: subprocess.Popen, log: Path, seconds: float = 180) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"muttlab serve exited with {proc.returncode}:\n{log.read_text()}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    pytest.fail(f"the dashboard did not come up in {seconds:.0f} s:\n{log.read_text()}")


def require_chromium() -> None:
    if not Path(CHROMIUM).is_file():
        pytest.skip("Debian chromium is not installed (apt-get install chromium)")


# The warm-up of a server whose tests score nothing and corrupt nothing (MUTTLAB_WARM_UP=none): no METEOR JVM and no
# spaCy, 8-9 of a quick start's 11 CPU seconds on the sample.
NOTHING = "none"


def sample_env(cache: Path, **extra: str) -> dict[str, str]:
    """The environment of a `muttlab serve` on the sample: no outer MUTTLAB_* setting, a private cache, one worker,
    and the quick warm-up (``MUTTLAB_WARM_UP=quick``): the neural metrics' models and the rest of the full warm-up
    cost a server 8-9 CPU seconds after it opens, in competition with the tests, for pages few of them visit. A
    server whose tests need the full warm-up says so in ``extra`` (the shared sample server does)."""
    env = {k: v for k, v in os.environ.items() if k not in SETTINGS_VARIABLES}
    env.update(MUTTLAB_CACHE_DIR=str(cache), MUTTLAB_WORKERS="1", MUTTLAB_WARM_UP="quick")
    env.update(extra)
    return env


@dataclass(frozen=True)
class SampleServer:
    """The shared `muttlab serve` on the sample (the ``sample_server`` fixture of tests/conftest.py)."""

    url: str
    log: Path
    settings: Settings  # where its cache and pair store are


@contextmanager
def serving(env: dict, log: Path):
    """`muttlab serve` with ``env`` on a free port until the block ends; yields its URL."""
    if not MUTTLAB.is_file() and shutil.which("muttlab") is None:
        pytest.fail("the muttlab console script is not installed (pip install -e .)")
    port = _free_port()
    with open(log, "wb") as out:
        proc = subprocess.Popen([str(MUTTLAB if MUTTLAB.is_file() else shutil.which("muttlab")), "serve",
                                 "--port", str(port)], env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    url = f"http://localhost:{port}"
    try:
        _wait_healthy(url, proc, log)
        yield url
    finally:
        stop_server(proc)


def stop_server(proc: subprocess.Popen) -> None:
    """Stop a server started in its own process group (``start_new_session``), by force after 20 s."""
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def test_small_grid_and_drilldown_in_chromium(sample_server, browser):
    from playwright.sync_api import expect

    server = sample_server.url
    ARTIFACTS.mkdir(exist_ok=True)
    page = browser.new_page(viewport={"width": 1400, "height": 2200})
    page.set_default_timeout(180_000)
    expect.set_options(timeout=180_000)
    # The address bar preselects two fast metrics; the run itself is started with the button.
    page.goto(f"{server}/?metrics=BLEU-4,ROUGE-L&refs=5")
    expect(page.get_by_role("heading", name="Run the metric unit tests")).to_be_visible()
    expect(page.get_by_text("Sample data.")).to_be_visible()
    run_ended(page)  # a click while the page still runs can land on a button the run then replaces
    page.get_by_role("button", name="Run").click()
    page.locator(".mutt-grid td a").first.wait_for()
    expect(page.get_by_text("mean accuracy")).to_be_visible()
    run_ended(page)  # the buttons below are drawn by the run's last steps
    assert page.locator(EXCEPTION).count() == 0
    page.screenshot(path=str(ARTIFACTS / "dashboard-run.png"), full_page=True)
    # The table under the grid downloads as CSV (written when clicked).
    with page.expect_download() as download:
        page.get_by_role("button", name="Download CSV").first.click()
    # Text cells are quoted (formula neutralisation, docs/security.md): read it as a CSV reader would.
    rows = list(csv.reader(io.StringIO(Path(download.value.path()).read_text(encoding="utf-8"))))
    assert rows[0][0] == "metric" and {row[0] for row in rows[1:]} == {"BLEU-4", "ROUGE-L"}

    page.get_by_role("button", name="Open trials").click()
    expect(page.get_by_role("heading", name="Drill-down")).to_be_visible()
    page.locator(".mutt-diff").first.wait_for()
    expect(page.get_by_text("trials shown")).to_be_visible()
    assert page.locator(EXCEPTION).count() == 0
    page.screenshot(path=str(ARTIFACTS / "dashboard-drilldown.png"), full_page=True)

    # A deep link opens its page inside the app's navigation.
    page.goto(f"{server}/human")
    expect(page.get_by_role("heading", name="Human judgments")).to_be_visible()
    expect(page.get_by_role("link", name="Correlation studies")).to_be_visible()
    assert page.locator(EXCEPTION).count() == 0
    assert (ARTIFACTS / "dashboard-drilldown.png").stat().st_size > 10_000
