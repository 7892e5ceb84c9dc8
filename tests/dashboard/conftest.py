"""Fixtures for the dashboard: AppTest on the real data with a private cache and pair store."""
from __future__ import annotations

import html
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import parse_qs

import pytest
from streamlit.testing.v1 import AppTest

from muttlab.dashboard.ui import PLOTLY_READY_KEY
from muttlab.resources.bundled import dashboard_dir
from muttlab.settings import load_settings

APP = dashboard_dir() / "app.py"
TIMEOUT = 180  # first runs start spaCy or Java on a busy machine
SETTINGS_VARIABLES = ("MUTTLAB_DATA_DIR", "MUTTLAB_CACHE_DIR", "MUTTLAB_NO_CACHE", "MUTTLAB_DATABASE_URL",
                      "MUTTLAB_READ_ONLY", "MUTTLAB_ANNOTATOR_TOKEN", "MUTTLAB_WORKERS", "MUTTLAB_METRICS",
                      "MUTTLAB_USERS_FILE", "MUTTLAB_SESSION_TTL", "MUTTLAB_MODEL_DIR", "MUTTLAB_TIE_RULE",
                      "MUTTLAB_CALIBRATIONS", "MUTTLAB_DEMO_CACHE_DIR", "MUTTLAB_VISITOR_COMPUTE_S",
                      "MUTTLAB_ANONYMOUS_JOBS", "MUTTLAB_MEMO_MB", "MUTTLAB_DEMO_CACHE_MB", "MUTTLAB_TRUSTED_PROXIES",
                      "MUTTLAB_WARM_UP")


@pytest.fixture
def app_env(monkeypatch, data_dir, tmp_path) -> Path:
    """The environment `muttlab serve` would give the app: real data, a fresh cache dir, one worker."""
    for name in SETTINGS_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    cache = tmp_path / "cache"
    monkeypatch.setenv("MUTTLAB_DATA_DIR", str(data_dir))
    monkeypatch.setenv("MUTTLAB_CACHE_DIR", str(cache))
    monkeypatch.setenv("MUTTLAB_WORKERS", "1")
    # A read-only configuration's own score cache, private to the test (never the home folder's).
    monkeypatch.setenv("MUTTLAB_DEMO_CACHE_DIR", str(tmp_path / "demo-cache"))
    # Each test is a fresh demo: no visitor's share spent by an earlier test (they all come from no address).
    from muttlab.dashboard.services import budget
    monkeypatch.setattr(budget, "_BUDGETS", {})
    return cache


@pytest.fixture
def app_settings(app_env):
    """The settings the app sees under ``app_env``."""
    return load_settings()


def open_page(page: str, secrets: dict | None = None, state: dict | None = None,
              plotly_ready: bool = True) -> AppTest:
    """Run the app, switch to ``views/<page>.py`` and run it; ``state`` is put in session state first. With
    ``plotly_ready`` the session's browser has drawn a figure before, so figures come with the page's first run
    (ui.chart; AppTest runs no browser timer to bring them in a second)."""
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    for key, value in (secrets or {}).items():
        at.secrets[key] = value
    at.run()
    for key, value in {**({PLOTLY_READY_KEY: True} if plotly_ready else {}), **(state or {})}.items():
        at.session_state[key] = value
    at.switch_page(f"views/{page}.py").run()
    return at


def open_link(page: str, query: dict, plotly_ready: bool = True) -> AppTest:
    """A fresh session opening the address ``/<page>?<query>`` (``run`` is the default page); ``plotly_ready``
    as for :func:`open_page`."""
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    for key, value in query.items():
        at.query_params[key] = value
    if plotly_ready:
        at.session_state[PLOTLY_READY_KEY] = True
    if page == "run":
        return at.run()
    at.run()
    return at.switch_page(f"views/{page}.py").run()


@pytest.fixture(scope="module")
def browser():
    """Headless Debian chromium through Playwright, one per test module (browser tests). Not one per session:
    while it is open, Playwright's sync API keeps an asyncio loop running in this thread, and every later test
    that calls ``asyncio.run`` would fail; a launch costs about 2 s."""
    from playwright.sync_api import expect, sync_playwright

    from tests.dashboard.test_browser import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, require_chromium
    require_chromium()
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        expect.set_options(timeout=300_000)
        try:
            yield chromium
        finally:
            chromium.close()


def new_page(browser, height: int = 2000):
    page = browser.new_page(viewport={"width": 1400, "height": height})
    page.set_default_timeout(300_000)
    return page


# The page's root while no script run goes on (Streamlit marks it with the run's state).
SCRIPT_NOT_RUNNING = '[data-testid="stApp"][data-test-script-state="notRunning"]'


def run_ended(page) -> None:
    """Wait until the page's script run has ended. Streamlit marks its root with the run's state, "rerunRequested"
    from the moment a widget asks for a rerun: a click while a run goes on can land on an element the run then
    replaces, and be lost. (The status widget is no sign: it is absent too before a requested run starts.)"""
    page.wait_for_selector(SCRIPT_NOT_RUNNING)


# True once the fonts are in and the page's layout, charts included, is what it was at the previous poll.
LAID_OUT = """() => {
  if (document.fonts.status !== 'loaded') return false;
  const root = document.documentElement;
  const charts = [...document.querySelectorAll('.js-plotly-plot')].map(c => {
    const r = c.getBoundingClientRect(); return `${r.width}x${r.height}`; });
  const now = [root.scrollWidth, root.scrollHeight, document.getElementsByTagName('*').length, ...charts].join();
  const same = window.__muttLaidOut === now;
  window.__muttLaidOut = now;
  return same;
}"""


def settle(page) -> None:
    """Wait until the page is drawn to its end (the footer every page ends with), its script run has ended, a
    figure held back for the page's second run has come (``ui.chart``'s paint pass), and its layout has stopped
    moving (fonts, charts resizing to their column) over a tenth of a second."""
    page.get_by_text(re.compile(r"^muttlab \d+\.\d+")).first.wait_for()
    run_ended(page)
    if page.get_by_text("Drawing the chart…").count():
        page.get_by_text("Drawing the chart…").first.wait_for(state="detached")
        run_ended(page)
    page.wait_for_function(LAID_OUT, polling=100)


def press(at: AppTest, key: str) -> AppTest:
    """``at`` once its button ``key`` is pressed: a link fills a page's form, its button starts the work."""
    return at.button(key=key).click().run()


def shown_errors(at: AppTest) -> list[str]:
    """Exceptions and error boxes on the page (a healthy page has none)."""
    return [e.value for e in at.exception] + [e.value for e in at.error]


def html_bodies(at: AppTest) -> list[str]:
    return [element.proto.body for element in at.get("html")]


class _Tables(HTMLParser):
    """Each <table> of a document, by the last word of its class, as rows of cell texts."""

    def __init__(self):
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self._rows: list[list[str]] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            classes = (dict(attrs).get("class") or "").split()
            self._rows = self.tables.setdefault(classes[-1] if classes else "", [])
        elif tag == "tr" and self._rows is not None:
            self._rows.append([])
        elif tag in ("td", "th") and self._rows is not None:
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._rows[-1].append("".join(self._cell))
            self._cell = None
        elif tag == "table":
            self._rows = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def html_tables(document: str) -> dict[str, list[list[str]]]:
    parser = _Tables()
    parser.feed(document)
    return parser.tables


def html_start_tags(document: str) -> list[tuple[str, dict]]:
    """Every start tag of an HTML fragment and its attributes, as a browser's parser reads them."""
    found = []

    class Tags(HTMLParser):
        def handle_starttag(self, tag, attrs):
            found.append((tag, dict(attrs)))

    Tags().feed(document)
    return found


def _plain(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def trial_cards(at: AppTest) -> list[dict]:
    """The Drill-down's trial cards in page order, read from their HTML: trial, verdict, numbers {label: text},
    vs (the compared metric's name, verdict and margin, or None), edit (the pair editor's address, or None),
    notes, references."""
    cards = []
    for body in html_bodies(at):
        if not body.startswith('<div class="mutt-card"'):
            continue
        dls = dict(re.findall(r'<dl class="(mutt-\w+)">(.*?)</dl>', body))
        pairs = {css: [(_plain(k), _plain(v)) for k, v in re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", inner)]
                 for css, inner in dls.items()}
        vs = pairs.get("mutt-vs")
        edit = re.search(r'<a class="mutt-edit" href="([^"]+)"', body)
        notes = re.search(r'<p class="mutt-notes">(.*?)</p>', body)
        cards.append({
            "trial": html.unescape(re.match(r'<div class="mutt-card" data-trial="([^"]*)"', body).group(1)),
            "verdict": re.search(r'<p><span class="mutt-(\w+)">', body).group(1),
            "numbers": dict(pairs["mutt-numbers"]),
            "vs": None if vs is None else {"metric": vs[0][0], "verdict": vs[0][1].split()[-1], "margin": vs[1][1]},
            "edit": html.unescape(edit.group(1)) if edit else None,
            "notes": _plain(notes.group(1)) if notes else "",
            "references": [_plain(li) for li in re.findall(r"<li>(.*?)</li>", body)],
            "diff": re.search(r'<div class="mutt-diff">.*?</div></div>', body).group(0)})
    return cards


@pytest.fixture
def downloads(monkeypatch):
    """What each download button (by key) would hand the browser when pressed."""
    import streamlit

    kept = {}
    real = streamlit.download_button

    def keep(label, data, *args, **kwargs):
        kept[kwargs.get("key")] = data
        return real(label, data, *args, **kwargs)

    monkeypatch.setattr(streamlit, "download_button", keep)
    return lambda key: (lambda d: d() if callable(d) else d)(kept[key])


def grid_html(at: AppTest) -> str:
    """The body of the page's accuracy grid (one st.html element)."""
    grids = [body for body in html_bodies(at) if 'class="mutt-grid"' in body]
    assert len(grids) == 1, f"{len(grids)} grids on the page"
    return grids[0]


# What an accuracy cell's tooltip (the grid's) or hover (the heatmap's) says: number_format.cell_lines.
CELL_TOOLTIP = re.compile(r"(?P<metric>.+) · (?P<label>.+) · (?P<refs>\d+) refs\n"
                          r"accuracy (?P<accuracy>[0-9.]+)% \((?P<passed>\d+)/(?P<n>\d+)\)\n"
                          r"95% CI (?P<ci_low>[0-9.]+)–(?P<ci_high>[0-9.]+)%(?:\nties (?P<tie_rate>[0-9.]+)%)?")


def grid_tooltips(body: str) -> dict[tuple[str, str, int], str]:
    """Each cell of an accuracy grid's HTML: (metric, corruption, refs) from its link, and its tooltip."""
    return {(q["metric"][0], q["corruption"][0], int(q["refs"][0])): attrs["title"]
            for tag, attrs in html_start_tags(body) if tag == "a" and attrs.get("href", "").startswith("drilldown?")
            for q in [parse_qs(attrs["href"].partition("?")[2])]}


def assert_says_the_export(said: str, row) -> None:
    """A cell's tooltip or hover ``said`` gives the numbers of ``row``, the cell's row of the exported CSV, at
    the precision it writes them: accuracy, its interval and the tie rate to one decimal (all in percent, as
    exported), passed and n exactly."""
    found = CELL_TOOLTIP.match(said)
    assert found, said
    for column in ("accuracy", "ci_low", "ci_high", "tie_rate"):
        if found[column] is None:
            assert column == "tie_rate" and row.get(column) != row.get(column), (said, row)
        else:
            assert float(found[column]) == round(float(row[column]), 1), (column, said, dict(row))
    assert (int(found["passed"]), int(found["n"])) == (int(row["passed"]), int(row["n"])), said


def grid_cells(at: AppTest) -> list[tuple[str, str, int]]:
    """(metric, corruption, refs) of every cell link of the page's grid, in page order."""
    links = re.findall(r'href="drilldown\?([^"]+)"', grid_html(at))
    cells = [parse_qs(html.unescape(link)) for link in links]
    return [(c["metric"][0], c["corruption"][0], int(c["refs"][0])) for c in cells]


def builders_called(monkeypatch, *names: str) -> list[str]:
    """The names of ``muttlab.dashboard.charts``' builders ``names`` as each is called, in order, while each still
    builds its figure: what a page built, to tell a figure built anew from one the server kept."""
    from muttlab.dashboard import charts

    called: list[str] = []
    for name in names:
        real = getattr(charts, name)
        monkeypatch.setattr(charts, name,
                            lambda *a, _real=real, _name=name, **k: called.append(_name) or _real(*a, **k))
    return called


def figures_drawn(at: AppTest) -> list:
    """Each plotly figure on the page (``st.plotly_chart``), as the figure object the page sent: its traces' arrays
    decoded (plotly sends numbers as typed arrays), its text as sent (escaped for plotly)."""
    import json

    import plotly.graph_objects as go

    return [go.Figure(_typed_arrays(json.loads(element.proto.spec)), skip_invalid=True)
            for element in at.get("plotly_chart")]


def _typed_arrays(node):
    """A figure's JSON with plotly's typed arrays (``{"dtype": "f8", "bdata": <base64>, "shape": "2, 3"}``, as
    plotly.py writes numpy arrays) read back into lists."""
    import base64

    import numpy as np

    if isinstance(node, dict):
        if set(node) >= {"dtype", "bdata"}:
            values = np.frombuffer(base64.b64decode(node["bdata"]), dtype=np.dtype(node["dtype"]))
            if "shape" in node:
                values = values.reshape([int(n) for n in str(node["shape"]).split(",")])
            return values.tolist()
        return {key: _typed_arrays(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_typed_arrays(value) for value in node]
    return node


def figures_in_html(document: str) -> list:
    """Each plotly figure an HTML file draws (a chart download, a report): the data and layout handed to
    ``Plotly.newPlot``, as figures."""
    import json

    import plotly.graph_objects as go

    decoder, found = json.JSONDecoder(), []
    for match in re.finditer(r'Plotly\.newPlot\(\s*"[^"]+",\s*', document):
        data, end = decoder.raw_decode(document, match.end())
        layout, _ = decoder.raw_decode(document, document.index("{", end))
        found.append(go.Figure({"data": _typed_arrays(data), "layout": _typed_arrays(layout)}, skip_invalid=True))
    return found


def figure_title(figure) -> str:
    """A figure's title as it reads (plotly's entities decoded)."""
    return html.unescape(figure.layout.title.text or "")


def read_as_plotly_shows(value: str) -> str:
    """Text of a figure as plotly draws it: its ``<br>`` a line break, its entities decoded (the only markup
    :func:`muttlab.dashboard.charts.text` lets through is the hovers' own line breaks)."""
    return html.unescape(value.replace("<br>", "\n"))


class Calls:
    """The engine calls a page made, written down in a file: the ΔBLEU unit study runs in a forked child of the
    server (``services.apart``), whose memory is not this test's."""

    def __init__(self, folder):
        self.path = folder / "calls"
        self.path.touch()

    def append(self, name) -> None:
        with self.path.open("a") as out:
            out.write(f"{name}\n")

    def __eq__(self, other) -> bool:
        return self.path.read_text().splitlines() == [str(x) for x in other]

    def __repr__(self) -> str:
        return repr(self.path.read_text().splitlines())


@pytest.fixture
def calls(tmp_path) -> Calls:
    """What a page computed (an engine function the test replaced appends its name), seen across processes."""
    return Calls(tmp_path)
