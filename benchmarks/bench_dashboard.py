"""Time from opening the dashboard's Run page to a full accuracy grid on the MUTT experiment set, warm cache.

What is measured (headless Debian chromium through Playwright, against `muttlab serve`):
  1. engine warm-up: ``muttlab.engine.runner.run`` over every available metric, corruption and reference count,
     which fills the score cache as ``muttlab run --metrics all`` does (cold the first time, then cached);
  2. baseline: the same ``runner.run`` again in this process (warm score cache, no UI);
  3. first visit of a freshly started server: open the Run page (the address bar preselects all metrics,
     all corruption types, 5/10/20 references), press Run, wait until the heatmap is drawn;
  4. a second visit in a new browser session (the server keeps finished runs in memory);
  5. the server's share of 3 and 4: the same page script under Streamlit's AppTest (no browser), first
     and second session in one process.
Each UI time is printed with its ratio to the baseline of step 2.

    .venv/bin/python benchmarks/bench_dashboard.py --data-dir ../shared/data --cache-dir .muttlab-cache/bench

With ``--views`` it measures what a visitor waits for instead (no full live run), on two freshly started
servers: (A) the Playground opened the moment ``/_stcore/health`` says ok (the warm-up that ``muttlab
serve`` starts racing the visitor): its first answer (n-gram metrics and METEOR) and its full answer;
(B) the first grid (the precomputed one) of the first visit, then — once the warm-up is done — the first grid
in new tabs of the warm server, a drill-down link and a page switch. ``--muttlab`` starts another
installation's ``muttlab serve`` (e.g. the main checkout's) for a before/after comparison in the same run;
``--rounds`` repeats the whole measurement alternating the installations; ``--floor`` also times, once per
round, a bare Streamlit app (one ``st.write``) served with the same flags and timed the same way: the part
of the first grid that is Streamlit's own page boot.

    .venv/bin/python benchmarks/bench_dashboard.py --views --data-dir ../shared/data \
        --cache-dir $(mktemp -d) --muttlab ../main/.venv/bin/muttlab --muttlab .venv/bin/muttlab

With ``--waits`` it measures the long waits on a freshly started server with an empty score cache: the first
progress of a cold Run (press Run with 5 metrics x 3 corruption types x 5/20 references, until the progress bar
shows text; then until it names a metric being loaded or scored), Cancel (until the page says the run is
cancelled), and the first paint of Published vs measured (until its numbers are shown).

    .venv/bin/python benchmarks/bench_dashboard.py --waits --data-dir ../shared/data --cache-dir $(mktemp -d)

With ``--paints`` it measures, in one run on one freshly started server with an empty score cache, the long waits
above, then, once the server's warm-up is done (so that nothing but the visits runs), the first paint of every
page of the navigation: from the navigation to the page's main element (its numbers and cards: the grid, the
trials, the statistics...; :data:`PAINTS`) and to its plotly figure drawn and answering the pointer, each page
opened in turn as a new visit (a browser that has never been to the server, so it fetches and compiles
Streamlit's scripts, plotly's 4.7 MB among them, first), then each once more, then each in a new tab of a
browser that has opened the app once (its cache holds the scripts, as a returning visitor's does); a page
without an entry there (a new one) is timed to its title with its first script run finished; a view of a page
with an entry of its own (the Drill-down's comparison) is visited after the pages. Prints one table.

    .venv/bin/python benchmarks/bench_dashboard.py --paints --data-dir ../shared/data --cache-dir $(mktemp -d)
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from muttlab.engine import runner
from muttlab.cli.serve import environment, flag_options
from muttlab.settings import Settings
from muttlab.sources import load_mutt_experiments

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-quic",
                 "--no-first-run", "--disable-component-update", "--disable-sync"]
VIEWPORT = {"width": 1500, "height": 1400}
MUTTLAB = Path(sys.executable).with_name("muttlab")
# The first grid: the HTML table of this version, or the plotly heatmap of versions before it.
GRID = ".mutt-grid td a, .js-plotly-plot .heatmaplayer"



def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(settings: Settings, port: int, log: Path, muttlab: Path = MUTTLAB,
                 command: list[str] | None = None) -> subprocess.Popen:
    """``muttlab serve`` (or ``command``) on ``port``, once ``/_stcore/health`` says ok."""
    env = environment(settings, os.environ)
    with open(log, "wb") as out:
        proc = subprocess.Popen(command or [str(muttlab), "serve", "--port", str(port)], env=env, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"muttlab serve exited:\n{log.read_text()}")
        try:
            with urllib.request.urlopen(f"http://localhost:{port}/_stcore/health", timeout=2):
                return proc
        except OSError:
            time.sleep(0.3)
    raise SystemExit("the server did not start in 300 s")


def stop_server(proc: subprocess.Popen) -> None:
    os.killpg(proc.pid, signal.SIGTERM)  # the server's own process group, started above
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def visit(browser, url: str, shot: Path | None) -> tuple[float, float]:
    """Seconds until the Run button is shown, and until the full grid is drawn after pressing it."""
    page = browser.new_page(viewport=VIEWPORT)
    page.set_default_timeout(1_800_000)
    start = time.perf_counter()
    page.goto(url)
    button = page.get_by_role("button", name="Run")
    button.wait_for()
    opened = time.perf_counter() - start
    button.click()
    page.locator(GRID).first.wait_for()
    page.get_by_text("mean accuracy").wait_for()
    total = time.perf_counter() - start
    if page.locator('[data-testid="stException"]').count():
        raise SystemExit("the page shows a Python exception")
    if shot:
        page.screenshot(path=str(shot), full_page=True)
    page.close()
    return opened, total


def timed(page, url: str, selector: str | None = None, text: str | None = None) -> float:
    start = time.perf_counter()
    page.goto(url)
    if selector:
        page.locator(selector).first.wait_for()
    if text:
        page.get_by_text(text, exact=True).first.wait_for()
    if page.locator('[data-testid="stException"]').count():
        raise SystemExit(f"{url} shows a Python exception")
    return time.perf_counter() - start


WARM_DONE = re.compile(r"warm-up done in ([0-9.]+) s")


def load() -> str:
    return "load " + " ".join(f"{x:.1f}" for x in os.getloadavg())


def first_answer(browser, url: str) -> tuple[float, float]:
    """Seconds from opening the Playground to its first scores (the quick metrics' early table, or the full
    table when every chosen metric is quick) and to the full table."""
    page = browser.new_page(viewport=VIEWPORT)
    page.set_default_timeout(600_000)
    start = time.perf_counter()
    page.goto(f"{url}/playground")
    full = page.get_by_role("heading", name="Scores")
    page.get_by_text(re.compile(r"^First scores \(")).or_(full).first.wait_for()
    first = time.perf_counter() - start
    full.wait_for()
    total = time.perf_counter() - start
    if page.locator('[data-testid="stException"]').count():
        raise SystemExit("the Playground shows a Python exception")
    page.close()
    return first, total


def wait_warm(log: Path, settle: float) -> str:
    """Wait until the server's log says the warm-up is done; a version that does not report its warm-up (one
    that starts it with the first session) gets ``settle`` seconds. Returns what was waited for."""
    start = time.monotonic()
    while time.monotonic() - start < 900:
        text = log.read_text(errors="replace")
        found = WARM_DONE.search(text)
        if found:
            return f"warm-up done in {found.group(1)} s"
        if "warm-up started" not in text and time.monotonic() - start > settle:
            return f"waited {settle:.0f} s: this version does not report its warm-up"
        time.sleep(1)
    return "warm-up not done after 900 s"


def views(settings: Settings, muttlab: Path, settle: float, new_tabs: int) -> dict[str, float]:
    """Visitor-facing timings on two fresh servers of ``muttlab`` (see the module docstring)."""
    from playwright.sync_api import sync_playwright

    out: dict[str, float] = {}
    tmp = Path(os.environ.get("TMPDIR", "/tmp"))
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            # A: the Playground the moment the server is healthy.
            port = free_port()
            proc = start_server(settings, port, tmp / f"bench-dashboard-views-{port}.log", muttlab)
            try:
                out["playground first answer"], out["playground full answer"] = first_answer(
                    browser, f"http://localhost:{port}")
                print(f"  A. Playground opened at health: first answer {out['playground first answer']:6.2f} s, "
                      f"all metrics {out['playground full answer']:6.2f} s  ({load()})")
            finally:
                stop_server(proc)
            # B: grids, drill-down, page switch.
            port = free_port()
            log = tmp / f"bench-dashboard-views-{port}.log"
            start = time.perf_counter()
            proc = start_server(settings, port, log, muttlab)
            url = f"http://localhost:{port}"
            try:
                out["server start"] = time.perf_counter() - start
                page = browser.new_page(viewport=VIEWPORT)
                page.set_default_timeout(600_000)
                out["first grid, fresh server"] = timed(page, url, GRID)
                print(f"  B. server start {out['server start']:6.2f} s; first grid, first visit of the fresh server "
                      f"{out['first grid, fresh server']:6.2f} s  ({load()})")
                waited = wait_warm(log, settle)
                grids = []
                for _ in range(new_tabs):
                    tab = browser.new_page(viewport=VIEWPORT)
                    tab.set_default_timeout(600_000)
                    grids.append(timed(tab, url, GRID))
                    tab.close()
                out["first grid, new tab, warm server"] = statistics.median(grids)
                print(f"     ({waited}) first grid in a new tab of the warm server: median "
                      f"{out['first grid, new tab, warm server']:6.2f} s of {', '.join(f'{g:.2f}' for g in grids)}"
                      f"  ({load()})")
                link = f"{url}/drilldown?metric=METEOR-1.5&corruption=neg_subj&refs=5"
                out["drill-down link"] = timed(page, link, ".mutt-diff")
                start = time.perf_counter()
                page.get_by_role("link", name="Run").first.click()
                page.locator(GRID).first.wait_for()
                out["page switch"] = time.perf_counter() - start
                out["playground, warm server"] = first_answer(browser, url)[1]
                print(f"     drill-down link METEOR-1.5 x neg_subj x 5 {out['drill-down link']:6.2f} s; page switch "
                      f"Drill-down -> Run (grid drawn) {out['page switch']:6.2f} s; Playground on the warm server "
                      f"{out['playground, warm server']:6.2f} s  ({load()})")
            finally:
                stop_server(proc)
        finally:
            browser.close()
    return out


FLOOR_APP = 'import streamlit as st\nst.set_page_config(page_title="floor", layout="wide")\nst.write("bare page")\n'


def floor(settings: Settings, tabs: int) -> float:
    """Median seconds to a bare Streamlit page (one ``st.write``) in a new tab, served with the dashboard's
    flags and timed as the first grid is: Streamlit's own page boot, what no page script can take away."""
    from playwright.sync_api import sync_playwright

    tmp = Path(os.environ.get("TMPDIR", "/tmp"))
    port = free_port()
    app = tmp / f"bench-dashboard-floor-{port}.py"
    app.write_text(FLOOR_APP)
    flags = [arg for name, value in flag_options(port).items()
             for arg in (f"--{name}", str(value).lower() if isinstance(value, bool) else str(value))]
    proc = start_server(settings, port, tmp / f"bench-dashboard-floor-{port}.log",
                        command=[sys.executable, "-m", "streamlit", "run", str(app), *flags])
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                times = []
                for i in range(tabs + 1):  # the first tab is the server's first session, like B's first visit
                    tab = browser.new_page(viewport=VIEWPORT)
                    tab.set_default_timeout(600_000)
                    took = timed(tab, f"http://localhost:{port}", text="bare page")
                    tab.close()
                    if i:
                        times.append(took)
            finally:
                browser.close()
    finally:
        stop_server(proc)
        app.unlink()
    print(f"  floor: a bare Streamlit app in a new tab: median {statistics.median(times):6.2f} s of "
          f"{', '.join(f'{t:.2f}' for t in times)}  ({load()})")
    return statistics.median(times)


def compare(settings: Settings, installations: list[Path], rounds: int, settle: float, tabs: int,
            with_floor: bool = False) -> None:
    """--views for each installation, alternating, then the medians side by side with their ratio to the first."""
    # The drill-down's cell is scored into the cache first, so that no installation pays for filling it.
    runner.run(load_mutt_experiments(settings, names=("neg_subj",)), ["METEOR-1.5"], [5], settings)
    results: dict[Path, list[dict[str, float]]] = {m: [] for m in installations}
    floors: list[float] = []
    for round_ in range(1, rounds + 1):
        for muttlab in installations:
            print(f"round {round_}: {muttlab}")
            results[muttlab].append(views(settings, muttlab.resolve(), settle, tabs))
        if with_floor:
            floors.append(floor(settings, tabs))
    keys = list(results[installations[0]][0])
    medians = {m: {k: statistics.median(r[k] for r in runs) for k in keys} for m, runs in results.items()}
    base = installations[0]
    print(f"\nmedians over {rounds} round(s), seconds" + (f"; ratio = this / {base}" if len(installations) > 1 else ""))
    for key in keys:
        cells = [f"{medians[m][key]:7.2f}" + (f" ({medians[m][key] / medians[base][key]:4.2f}x)" if m != base else "")
                 for m in installations]
        print(f"  {key:36s} " + "   ".join(cells))
    if floors:
        bare = statistics.median(floors)
        key = "first grid, new tab, warm server"
        print(f"  {'floor: bare Streamlit app, new tab':36s} {bare:7.2f}; first grid in a new tab / floor: "
              + "   ".join(f"{medians[m][key] / bare:4.2f}x" for m in installations))
    landing_script(settings)


def landing_script(settings: Settings) -> None:
    """The server's share of the first grid: the Run page script under AppTest, three sessions of one process."""
    from streamlit.testing.v1 import AppTest

    os.environ.update(environment(settings, {}))
    app = Path(__file__).resolve().parents[1] / "dashboard" / "app.py"
    for session in range(1, 4):
        at = AppTest.from_file(str(app), default_timeout=600)
        start = time.perf_counter()
        at.run()
        if at.exception or not any('class="mutt-grid"' in e.proto.body for e in at.get("html")):
            raise SystemExit("the Run page drew no grid")
        print(f"Run page script with the precomputed grid, session {session}: {time.perf_counter() - start:6.2f} s"
              " (includes AppTest's own start-up)")


WAIT_METRICS = "BLEU-4,METEOR-1.5,CIDEr-D,ROUGE-L,TERp"
WAIT_CORRUPTIONS = "neg_subj,det_sub,passive"


def waits(settings: Settings) -> None:
    """The long waits of a cold server (see the module docstring); ``settings.cache_dir`` should be empty."""
    from playwright.sync_api import sync_playwright

    port = free_port()
    log = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench-dashboard-waits-{port}.log"
    proc = start_server(settings, port, log)
    print(load())
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            cold_waits(browser, f"http://localhost:{port}")
            print(load())
            browser.close()
    finally:
        stop_server(proc)


def cold_waits(browser, url: str) -> None:
    """On a server with an empty score cache: a cold Run's first progress, Cancel, Published's first paint."""
    page = browser.new_page(viewport=VIEWPORT)
    page.set_default_timeout(600_000)
    page.goto(f"{url}/?metrics={WAIT_METRICS}&corruptions={WAIT_CORRUPTIONS}&refs=5,20")
    button = page.get_by_role("button", name="Run")
    button.wait_for()
    start = time.perf_counter()
    button.click()
    page.get_by_text(re.compile(r"^preparing the run|^loading |^scoring ")).first.wait_for()
    first = time.perf_counter() - start
    page.get_by_text(re.compile(r"^loading |^scoring ")).first.wait_for()
    named = time.perf_counter() - start
    page.get_by_text(re.compile(r"^scoring .* items")).first.wait_for()
    scoring = time.perf_counter() - start
    print(f"first progress of a cold Run (click -> progress text):  {first:6.2f} s")
    print(f"  ... -> a metric named (loading / scoring):              {named:6.2f} s")
    print(f"  ... -> scoring n of N items:                            {scoring:6.2f} s")
    start = time.perf_counter()
    page.get_by_role("button", name="Cancel").click()
    page.get_by_text(re.compile(r"^Run cancelled")).wait_for()
    print(f"Cancel -> the page says the run is cancelled:            {time.perf_counter() - start:6.2f} s")
    start = time.perf_counter()
    page.goto(f"{url}/published")
    page.get_by_text("published numbers", exact=True).wait_for()
    painted = time.perf_counter() - start
    if page.locator('[data-testid="stException"]').count():
        raise SystemExit("a page shows a Python exception")
    print(f"Published first paint (cold cache, shipped numbers):     {painted:6.2f} s")
    page.close()


def studies(settings: Settings, installations: list[Path], tabs: int, settle: float) -> None:
    """First paint of Human judgments (and Correlation studies) on a freshly started server, per installation:
    the server's first visit (at health), then, once the warm-up is done, ``tabs`` new tabs (median), until the page
    shows its gold statistics (the Correlation page: the τ table, when the installation shows one before a click).
    Use a warm score cache (``scripts/precompute_human.py`` or ``muttlab correlate sick`` with the same cache dir),
    so that a version that scores the default view pays cache look-ups, not scoring."""
    from playwright.sync_api import sync_playwright

    for muttlab in installations:
        port = free_port()
        log = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench-dashboard-studies-{port}.log"
        proc = start_server(settings, port, log, muttlab)
        url = f"http://localhost:{port}"
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                times = []
                for tab in range(1 + tabs):
                    page = browser.new_page(viewport=VIEWPORT)
                    page.set_default_timeout(600_000)
                    times.append(timed(page, f"{url}/human", text="gold: mean ± sd"))
                    page.close()
                    if tab == 0:  # new tabs are timed on a warm server
                        warm = wait_warm(log, settle)
                page = browser.new_page(viewport=VIEWPORT)
                page.set_default_timeout(120_000)
                try:
                    correlation = f"{timed(page, f'{url}/correlation', text='τ × 100 by metric'):6.2f} s"
                except Exception:  # a version that draws the table only after a click
                    correlation = "no table before a click"
                browser.close()
        finally:
            stop_server(proc)
        print(f"{muttlab}: {load()}")
        print(f"  Human judgments, first visit of a fresh server: {times[0]:6.2f} s")
        print(f"  Human judgments, new tab (median of {tabs}, {warm}): {statistics.median(times[1:]):6.2f} s")
        print(f"  Correlation studies, new tab, τ table:         {correlation}")


# Per page of the navigation (its file's stem): the address's query, its main element (a Playwright selector, or
# several of which the first drawn counts: the page's numbers and cards) and what that element is, and its figure
# once plotly has drawn it and answers the pointer (its drag layer), or None for a page that draws no figure.
INTERACTIVE = ".js-plotly-plot .draglayer .nsewdrag"
PAINTS = {
    "run": ("", ".mutt-grid td a", "the accuracy grid", None),
    "drilldown": ("?metric=BLEU-4&corruption=neg_subj&refs=5", ".mutt-diff", "a trial's word diff", INTERACTIVE),
    # A view of a page beside its own: "<page> <what>". Its figure: the comparison's, the page's second.
    "drilldown vs": ("?metric=BLEU-4&corruption=neg_subj&refs=5&vs=ROUGE-L", 'text="McNemar p"',
                     "the comparison's numbers", f".js-plotly-plot >> nth=1 >> {INTERACTIVE.split(' ', 1)[1]}"),
    "published": ("", 'text="published numbers"', "the published numbers", None),
    "playground": ("", "role=heading[name='Scores']", "the scores", INTERACTIVE),
    # A link only fills Severity's form; a first visit shows the shipped default curve.
    "severity": ("", "text=/at every strength/", "the shipped curves' n and verdicts", INTERACTIVE),
    "challenge": ("", '[data-testid="stFileUploader"]', "the upload box", None),
    "mine": ("", '[data-testid="stFileUploader"]', "the upload box", None),
    "human": ("", 'text="gold: mean ± sd"', "the gold statistics", INTERACTIVE),
    "correlation": ("", '[data-testid="stFormSubmitButton"]', "the study form", INTERACTIVE),
    "meta_eval": ("", "role=heading[name='Ranking']", "the ranking", INTERACTIVE),
    "profile": ("", "role=heading[name=/^MUTT: accuracy/]", "the MUTT section", INTERACTIVE),
    "learned": ("", "role=heading[name='Models']", "the models", INTERACTIVE),
    "annotate": ("", ('[data-testid="stDataFrame"]', 'text="The pair store is empty."'), "the pair list (or: empty)",
                 None),
}
# How long a page's figure is waited for after its main element: a page may draw none (no model installed, no
# shipped study current), and then it is timed as "–". A main element that never comes ends the run with the page
# named, rather than leaving the benchmark waiting.
CHART_WAIT_S = 30.0
MAIN_WAIT_S = 300.0


def paints(settings: Settings, settle: float) -> None:
    """First paint of every page on one fresh server (see the module docstring)."""
    from playwright.sync_api import sync_playwright

    from muttlab.dashboard.app import page_stems

    stems = page_stems()
    stems += [view for view in PAINTS if view.split()[0] in stems and view not in stems]
    port = free_port()
    log = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench-dashboard-paints-{port}.log"
    started = time.perf_counter()
    proc = start_server(settings, port, log)
    print(f"muttlab serve until healthy: {time.perf_counter() - started:.2f} s ({load()})")
    url = f"http://localhost:{port}"
    times: dict[str, list[tuple[float, float | None]]] = {stem: [] for stem in stems}
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            cold_waits(browser, url)
            print(f"{wait_warm(log, settle)}; the pages are visited now ({load()})")
            for _ in range(2):  # each visit a browser that has never been to the server
                for stem in stems:
                    times[stem].append(_paint(browser.new_page(viewport=VIEWPORT), url, stem))
            # A visitor who has opened the app before: one browser context, its HTTP cache holding the scripts
            # Streamlit serves as immutable (plotly's among them), each page in a new tab of it.
            returning = browser.new_context(viewport=VIEWPORT)
            _paint(returning.new_page(), url, "drilldown")
            for stem in stems:
                times[stem].append(_paint(returning.new_page(), url, stem))
            browser.close()
    finally:
        stop_server(proc)
    print(f"first paint, navigation -> main element / figure interactive, seconds ({load()}):")
    print("| page | main element | first visit, fresh server | second visit | new tab of a returning visitor |\n"
          "| --- | --- | --- | --- | --- |")
    for stem in stems:
        what = what_of(stem)
        print(f"| {stem} | {what} | " + " | ".join(
            f"{main:.2f}" + ("" if chart is None and PAINTS.get(stem, (0, 0, 0, None))[3] is None
                             else f" / {'–' if chart is None else f'{chart:.2f}'}")
            for main, chart in times[stem]) + " |")


def what_of(stem: str) -> str:
    return PAINTS.get(stem, ("", None, "title, script run finished", None))[2]


def _paint(page, url: str, stem: str) -> tuple[float, float | None]:
    """Seconds from opening ``stem``'s address in ``page`` to its main element (:data:`PAINTS`), and to its figure
    drawn and answering the pointer (None when the page has no figure or shows none); closes the page."""
    query, main, _, chart = PAINTS.get(stem, ("", None, "", None))
    page.set_default_timeout(MAIN_WAIT_S * 1000)
    start = time.perf_counter()
    page.goto(f"{url}/{'' if stem == 'run' else stem.split()[0]}{query}")
    if main is None:
        page.locator("h1").first.wait_for()
        page.wait_for_selector('[data-testid="stStatusWidget"]', state="detached")
    else:
        mains = (main,) if isinstance(main, str) else main
        found = page.locator(mains[0])
        for other in mains[1:]:
            found = found.or_(page.locator(other))
        try:
            found.first.wait_for()
        except Exception as exc:  # Playwright's TimeoutError
            raise SystemExit(f"{stem}: its main element ({what_of(stem)}) did not appear in {MAIN_WAIT_S:.0f} s "
                             "- has the page changed? Update PAINTS.") from exc
    painted = time.perf_counter() - start
    drawn = None
    if chart is not None:
        try:
            page.locator(chart).first.wait_for(state="attached", timeout=CHART_WAIT_S * 1000)
            drawn = time.perf_counter() - start
        except Exception:  # Playwright's TimeoutError: this view shows no figure
            drawn = None
    if page.locator('[data-testid="stException"]').count():
        raise SystemExit(f"{stem} shows a Python exception")
    page.close()
    return painted, drawn


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--cache-dir", type=Path, default=Path(".muttlab-cache/bench"))
    parser.add_argument("--metrics", default="all")
    parser.add_argument("--screenshot", type=Path, default=Path("test-artifacts/bench-dashboard-grid.png"))
    parser.add_argument("--views", action="store_true", help="visitor timings only (first grid, drill-down, "
                                                             "Playground, page switch)")
    parser.add_argument("--muttlab", type=Path, action="append", default=None,
                        help="with --views: the muttlab executable whose `serve` is timed; repeat it to compare "
                             "installations in one run (default: this one's)")
    parser.add_argument("--rounds", type=int, default=1, help="with --views: measurements per installation")
    parser.add_argument("--tabs", type=int, default=3, help="with --views: new tabs timed on the warm server")
    parser.add_argument("--floor", action="store_true",
                        help="with --views: also time a bare Streamlit app (one st.write) in new tabs, served with "
                             "the same flags, once per round: Streamlit's own share of the first grid")
    parser.add_argument("--settle", type=float, default=90.0,
                        help="with --views: seconds to wait for the warm-up of a version that does not report it")
    parser.add_argument("--waits", action="store_true",
                        help="the long waits of a cold server: first progress of a Run, Cancel, Published")
    parser.add_argument("--studies", action="store_true",
                        help="first paint of Human judgments and Correlation studies on a fresh server, per --muttlab")
    parser.add_argument("--paints", action="store_true",
                        help="first paint of every page on one fresh server, navigation to its main element")
    args = parser.parse_args()
    settings = Settings(data_dir=args.data_dir.resolve(), cache_dir=args.cache_dir.resolve(), workers=1)
    if args.studies:
        studies(settings, args.muttlab or [MUTTLAB], args.tabs, args.settle)
        return
    if args.paints:
        paints(settings, args.settle)
        return
    if args.waits:
        waits(settings)
        return
    if args.views:
        compare(settings, args.muttlab or [MUTTLAB], args.rounds, args.settle, args.tabs, args.floor)
        return
    suite = load_mutt_experiments(settings)
    registry = runner.registry_for(settings)

    start = time.perf_counter()
    results = runner.run(suite, args.metrics, None, settings, registry)
    warm_up = time.perf_counter() - start
    metrics = list(results.signatures)
    start = time.perf_counter()
    runner.run(suite, metrics, None, settings, registry)
    baseline = time.perf_counter() - start
    registry.close()
    cells = results.accuracy().shape[0]
    print(f"grid: {len(metrics)} metrics x {len(suite.corruptions())} corruption types x 3 reference counts "
          f"= {cells} cells, {len(results.table):,} trial rows, {2 * len(results.table):,} scores")
    print(f"metrics: {', '.join(metrics)}")
    print(f"engine warm-up (fills the cache; cold only the first time): {warm_up:8.2f} s")
    print(f"baseline: runner.run with a warm score cache, no UI:       {baseline:8.2f} s")

    from playwright.sync_api import sync_playwright

    port = free_port()
    log = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench-dashboard-{port}.log"
    server_start = time.perf_counter()
    proc = start_server(settings, port, log)
    print(f"server start (muttlab serve until healthy):                {time.perf_counter() - server_start:8.2f} s")
    url = (f"http://localhost:{port}/?metrics={','.join(metrics)}&corruptions=all&refs=5,10,20")
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                args.screenshot.parent.mkdir(parents=True, exist_ok=True)
                first_open, first_total = visit(browser, url, args.screenshot)
                second_open, second_total = visit(browser, url, None)
            finally:
                browser.close()
    finally:
        stop_server(proc)
    print(f"first visit, fresh server: page open {first_open:6.2f} s, open -> full grid {first_total:6.2f} s "
          f"({first_total / baseline:5.2f} x baseline)")
    print(f"second visit (new session): page open {second_open:6.2f} s, open -> full grid {second_total:6.2f} s "
          f"({second_total / baseline:5.2f} x baseline)")
    script_times = server_side(settings, metrics)
    for label, (opened, ran) in zip(("first session", "second session"), script_times):
        print(f"page script only (AppTest, {label}): open {opened:6.2f} s, Run -> grid drawn {ran:6.2f} s "
              f"({(opened + ran) / baseline:5.2f} x baseline)")
    print(f"screenshot: {args.screenshot}")


def server_side(settings: Settings, metrics: list[str]) -> list[tuple[float, float]]:
    """Script time of opening the Run page and of the run, for two sessions of one server process."""
    from streamlit.testing.v1 import AppTest

    os.environ.update(environment(settings, {}))
    app = Path(__file__).resolve().parents[1] / "dashboard" / "app.py"
    times = []
    for _ in range(2):
        at = AppTest.from_file(str(app), default_timeout=1800)
        at.query_params.update({"metrics": ",".join(metrics), "corruptions": "all", "refs": "5,10,20"})
        start = time.perf_counter()
        at.run()
        opened = time.perf_counter() - start
        start = time.perf_counter()
        at.get("form_submit_button")[0].click().run()
        ran = time.perf_counter() - start
        if at.exception:
            raise SystemExit(f"the page raised: {at.exception[0].value}")
        times.append((opened, ran))
    return times


if __name__ == "__main__":
    main()
