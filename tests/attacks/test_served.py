"""Attacks by link and by form against a served dashboard: one server for the module, started with the
``streamlit run`` command line ``muttlab serve`` gives (plus Streamlit's agent API, for this server only), on
the real data, with a database URL holding a password. Each test is one attack an anonymous visitor could
make by opening an address or sending a form, run as that visitor in headless Chromium or through the agent
API, and the behaviour that must hold instead."""
from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

import muttlab
from muttlab.cli import serve
from tests.conftest import SERVERS
from tests.dashboard.conftest import browser, run_ended  # noqa: F401 (fixture)
from tests.dashboard.test_browser import (EXCEPTION, _free_port, _wait_healthy, require_chromium, sample_env,
                                          stop_server)

pytestmark = pytest.mark.browser

PASSWORD = "S3rvedPW-42"
DATABASE_URL = f"postgresql://mutt:{PASSWORD}@127.0.0.1:1/pairs"  # nothing listens there: the store is unreachable
OUTSIDE = "attacker.example"
WAIT_MS = 120_000


@dataclass
class Served:
    url: str
    folders: list[str]  # what no anonymous page may name: data dir, cache dir, the installed package
    cache: Path
    log: Path

    def scores(self) -> int:
        """Rows in the server's score cache: every score the server computes is stored there."""
        path = self.cache / "scores.sqlite"
        if not path.exists():
            return 0
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30) as db:
            return db.execute("SELECT COUNT(*) FROM scores").fetchone()[0]

    def warmed_up(self) -> None:
        """Wait for the server's warm-up to end: it scores the Playground's example with every metric. Under
        ``streamlit run`` the warm-up starts with the first session, which this opens if none has."""
        self.interact({"page": ""})
        deadline = time.monotonic() + 600
        while "warm-up done" not in self.log.read_text(errors="replace"):
            assert time.monotonic() < deadline, "the server's warm-up did not end in 10 minutes"
            time.sleep(1)

    def interact(self, body: dict) -> dict:
        """One agent-API request (``POST /_stcore/agent/interact``): open a page, set widgets, press a button."""
        while True:
            request = urllib.request.Request(self.url + "/_stcore/agent/interact", data=json.dumps(body).encode(),
                                             headers={"Content-Type": "application/json"}, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=300) as answer:
                    reply = json.loads(answer.read())
            except urllib.error.HTTPError as exc:
                reply = json.loads(exc.read() or b"{}")
            if reply.get("error", {}).get("code") != "wait_timed_out":
                assert "error" not in reply, f"the agent API answered {reply}"
                return reply
            body = {"session_id": reply["session_id"]}  # the run goes on: wait for it, not start it again


@pytest.fixture(scope="module")
def served(tmp_path_factory, data_dir):
    """The server, one per work unit: the files of tests/conftest.py's "served" group share it (each
    test counts only the scores it adds)."""
    return shared_server(tmp_path_factory, data_dir)


def shared_server(tmp_path_factory, data_dir) -> Served:
    require_chromium()
    return SERVERS.get("served", lambda: _serve(tmp_path_factory.mktemp("served"), data_dir))


@contextmanager
def _serve(root: Path, data_dir: Path):
    cache = root / "cache"
    # sample_env's quick warm-up: these attacks need no slower metric loaded.
    env = sample_env(cache, MUTTLAB_DATA_DIR=str(data_dir), MUTTLAB_DATABASE_URL=DATABASE_URL)
    port = _free_port()
    argv = serve.command(port, "127.0.0.1") + ["--server.enableAgentApi", "true"]
    log = root / "serve.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    folders = sorted({str(data_dir), str(Path(data_dir).resolve()), str(cache), str(cache.resolve()),
                      str(Path(muttlab.__file__).resolve().parent)})
    try:
        _wait_healthy(url, proc, log)
        yield Served(url, folders, cache, log)
    finally:
        stop_server(proc)


@pytest.fixture(scope="module")
def page(browser):  # noqa: F811 (the module's Chromium)
    from playwright.sync_api import expect

    tab = browser.new_page(viewport={"width": 1400, "height": 2000})
    tab.set_default_timeout(WAIT_MS)
    expect.set_options(timeout=WAIT_MS)
    yield tab
    tab.close()


def visit(page, served: Served, path: str, query: dict, settled_by: str):
    """Open ``/<path>?<query>`` as a new visitor and wait until ``settled_by`` is on the page."""
    from playwright.sync_api import expect

    page.goto(f"{served.url}/{path}?{urllib.parse.urlencode(query)}")
    expect(page.get_by_text(settled_by).first).to_be_visible()
    run_ended(page)  # the script run has ended
    assert page.locator(EXCEPTION).count() == 0
    return page


def page_words(page) -> str:
    """What the visitor's browser holds: the DOM (HTML) and the text shown."""
    return page.content() + "\n" + page.inner_text("body")


# --------------------------------------------------------------------------- a link opens a server file

def test_a_report_download_link_cannot_read_a_server_file(served, page, tmp_path):
    """Attack: a link whose ``suite=`` names a server file (a private file, /etc/shadow, ../../etc/passwd);
    the visitor downloads "this view as a report", hoping the server reads the file into it."""
    from playwright.sync_api import expect

    # A named pipe: a server that opens it to read blocks there, and a writer's non-blocking open then succeeds.
    fifo = tmp_path / "secret.jsonl"
    os.mkfifo(fifo)
    opened, stop = [], threading.Event()

    def watch() -> None:
        while not stop.wait(0.05):
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # the reader now reads end of file
                opened.append(1)
            except OSError:  # no reader: nobody has opened it
                pass

    # What the server would show of the system files it can read (the first line of each; root reads both).
    secrets = [text.splitlines()[0] for text in (_readable("/etc/passwd"), _readable("/etc/shadow")) if text]
    assert secrets
    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        for suite in (str(fifo), "/etc/shadow", "../../etc/passwd"):
            visit(page, served, "", {"metrics": "BLEU-4", "refs": "5", "suite": suite}, "Left out of this link")
            expect(page.get_by_text("is not one of default, store").first).to_be_visible()
            page.get_by_text("Link to this view").click()
            run_ended(page)  # opening the box reruns the page, which draws the button anew
            button = page.get_by_role("button", name="Download this view as a report (HTML, works offline)")
            with page.expect_download() as download:
                button.click()
            report = Path(download.value.path()).read_text(encoding="utf-8")
            assert report.startswith("<!DOCTYPE html>") and "MUTT Lab report" in report
            shown = page_words(page)
            for word in (*secrets, fifo.name, "suite="):
                assert word not in report, word
            assert not [line for line in secrets if line in shown]
    finally:
        stop.set()
        watcher.join()
    assert stat.S_ISFIFO(fifo.stat().st_mode) and opened == []


def _readable(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


# --------------------------------------------------------------------------- Markdown from a link

def test_a_drilldown_links_markdown_loads_nothing_from_outside(served, page):
    """Attack: a drill-down link whose corruption name is Markdown with an image and a link to an outside
    host (the image would be fetched by every visitor's browser, the link would look like the page's own)."""
    payload = f"x ![pixel](https://{OUTSIDE}/p.png) [click](https://{OUTSIDE}/go) <img src=https://{OUTSIDE}/i.png>"
    fetched = []
    page.route(f"**://{OUTSIDE}/**", lambda route: fetched.append(route.request.url) or route.abort())
    visit(page, served, "drilldown", {"metric": "BLEU-4", "corruption": payload, "refs": "5"},
          "no corruption type is called")
    # The figures come with the page's second run, its own (a new visitor's browser has not drawn one yet); by
    # then the address holds the checked link, and the page still says what the link got wrong.
    page.locator(".js-plotly-plot").first.wait_for()
    run_ended(page)
    # The page's own links carry the name in their query string; none may lead to, or load from, the outside host.
    hosts = page.evaluate("() => [...document.querySelectorAll('a[href]')].map(a => a.href)"
                          " .concat([...document.querySelectorAll('img[src], image, source')].map(i => i.src || ''))")
    assert hosts and not [h for h in hosts if urllib.parse.urlsplit(h).hostname == OUTSIDE]
    assert fetched == []
    shown = page.inner_text("body").replace("\u2060", "")  # the word joiner that keeps a URL text is invisible
    assert f"[click](https://{OUTSIDE}/go)" in shown  # shown as the characters it is


# --------------------------------------------------------------------------- a NUL byte in a path

def test_a_nul_byte_in_the_challenge_file_gets_a_message(served, page):
    """Attack: a challenge link whose ``file=`` holds a NUL byte (``open`` raises ValueError on it)."""
    visit(page, served, "challenge", {"file": "challenge/a\x00b.tsv", "metrics": "BLEU-4"}, "file=:")
    shown = page_words(page)
    assert "Traceback" not in shown and "ValueError" not in shown and "embedded null" not in shown


# --------------------------------------------------------------------------- a link starts no heavy work

def test_a_run_1_link_scores_nothing(served, page):
    """Attack: a link with ``run=1`` (sent to many people, or opened in a loop) that would start a grid run
    on the server for every visitor who opens it."""
    served.warmed_up()  # from here on, only a run can add scores
    before = served.scores()
    visit(page, served, "", {"metrics": "BLEU-4,CIDEr-D", "corruptions": "passive,det_sub", "refs": "5,10",
                             "run": "1"}, "press Run")
    time.sleep(5)  # a run the link had started would have stored its first cells by now
    assert served.scores() == before
    assert page.get_by_text("mean accuracy").count() == 0


# --------------------------------------------------------------------------- secrets and server paths

def test_anonymous_pages_show_no_server_path_and_no_database_password(served, page):
    """Attack: read the server's folders (data, cache, checkpoints) and the pair store's password from what
    anonymous pages show: error messages, the metric table's reasons, a checkpoint's description."""
    from playwright.sync_api import expect

    seen = []
    visit(page, served, "learned", {}, "checkpoint:")
    seen.append(page_words(page))
    visit(page, served, "challenge", {"file": "challenge/no-such-set.tsv", "metrics": "BLEU-4"}, "no such file")
    seen.append(page_words(page))
    visit(page, served, "annotate", {}, "pair store")  # the store cannot be reached, and the page says so
    seen.append(page_words(page))
    visit(page, served, "", {}, "Run the metric unit tests")
    page.get_by_text("available", exact=False).first.click()  # the metric table, with why a metric is unavailable
    expect(page.locator('[data-testid="stDataFrame"]').first).to_be_visible()
    seen.append(page_words(page))
    # The metric table is drawn on a canvas: its cells, as the server sends them, through the agent API.
    run = served.interact({"page": ""})
    catalogue = served.interact({"session_id": run["session_id"], "widget_state": {"run-catalogue-open": True}})
    seen.append(json.dumps(catalogue, ensure_ascii=False))
    assert "W2V-AVG-corpus" in seen[-1]
    for shown in seen:
        assert PASSWORD not in shown
        for folder in served.folders:
            assert folder not in shown and folder.replace("/", "\\/") not in shown, folder


# --------------------------------------------------------------------------- sizes

def test_an_oversized_playground_candidate_is_refused_and_the_server_answers_others(served, page):
    """Attack: a Playground request whose candidate is 200,000 words (a crafted form, past the text box's
    limit in the browser), to keep the parser and every metric busy for everyone."""
    session = served.interact({"page": "playground"})
    score = next(a["key"] for a in session["actions"] if a["kind"] == "trigger" and a["label"] == "Score")
    answer = served.interact({"session_id": session["session_id"], "widget_state": {"pg-candidate": "word " * 200_000},
                              "trigger": {"key": score}})
    text = json.dumps(answer)
    assert "over the limit of 200" in text and "Traceback" not in text
    visit(page, served, "playground", {}, "Playground")  # another visitor's page still loads
