"""What a link, a form or a message can make the dashboard server do: each test is one attack that worked,
run against the app as a visitor runs it (Streamlit AppTest on the real data, the report download's own
function, `muttlab serve`'s start-up), and the behaviour that must hold instead."""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.runtime.app_session import AppSession, AppSessionState
from streamlit.runtime.state import SessionState

import muttlab
from muttlab.dashboard import signin
from muttlab import api
from muttlab.cli import build_parser, main
from muttlab.cli import serve as serve_module
from muttlab.dashboard import services
from muttlab.dashboard.report import build_report
from muttlab.engine import queue as work_queue
from muttlab.errors import MuttlabError
from muttlab.settings import load_settings
from tests.dashboard.conftest import app_env, app_settings, html_bodies, open_link  # noqa: F401 (fixtures)

MARKDOWN_ELEMENTS = ("markdown", "caption", "warning", "error", "info", "success", "title", "subheader")
PASSWORD = "S3cretPW"
DATABASE_URL = f"postgresql://mutt:{PASSWORD}@127.0.0.1:1/pairs"


def markdown_values(at) -> list[str]:
    """What the page hands Streamlit as Markdown (these elements render links and images)."""
    return [e.value for kind in MARKDOWN_ELEMENTS for e in at.get(kind)]


def page_text(at) -> str:
    """Everything the page shows as text: Markdown sources, plain text, code boxes, HTML bodies and tables."""
    parts = markdown_values(at) + [e.value for kind in ("text", "code") for e in at.get(kind)]
    tables = [frame.value.to_csv() for frame in at.dataframe]
    return "\n".join(parts + html_bodies(at) + tables + [e.value for e in at.exception])


# --------------------------------------------------------------------------- a link opens a server file

def test_a_report_link_cannot_make_the_server_read_a_file_outside_its_views(app_settings, tmp_path, monkeypatch):
    secret = tmp_path / "outside" / "secret.jsonl"
    secret.parent.mkdir()
    secret.write_text('{"text": "TOP SECRET LINE", "references": ["TOP SECRET LINE"]}\n', encoding="utf-8")
    opened = []
    import muttlab.suites
    real = muttlab.suites.read_suite
    monkeypatch.setattr(muttlab.suites, "read_suite", lambda source, *a, **k: opened.append(source) or real(
        source, *a, **k))
    for link in (f"metrics=BLEU-4&refs=5&run=1&suite={secret}", "metrics=BLEU-4&refs=5&run=1&suite=/etc/shadow",
                 f"/drilldown?metric=BLEU-4&corruption=neg_subj&refs=5&suite={secret}"):
        with pytest.raises(MuttlabError, match="this view cannot be read: suite=: .* is not one of default, store"):
            build_report(app_settings, link)
    assert opened == []


def test_the_dashboards_report_and_link_carry_only_the_checked_view(app_env, tmp_path):
    at = open_link("run", {"metrics": "BLEU-4", "refs": "5", "suite": "/etc/shadow", "evil": "1"})
    at.session_state["link-run"] = True  # open "Link to this view": its code box and report command
    at.run()
    assert not at.exception
    left_out = " ".join(w.value for w in at.warning)
    assert "Left out of this link: suite=: '/etc/shadow' is not one of default, store" in left_out.replace("\\", "")
    assert "evil= is not a parameter MUTT Lab reads" in left_out.replace("\\", "")
    shown = page_text(at)
    assert "muttlab report --view" in shown and "metrics=BLEU-4" in shown
    assert "shadow" not in shown.replace(left_out, "") and "evil" not in shown.replace(left_out, "")


# --------------------------------------------------------------------------- Markdown from a link

def test_a_drilldown_links_corruption_name_is_never_rendered_as_markdown(app_env):
    payload = "x` ![pixel](https://attacker.example/p.png) [click](https://attacker.example) `"
    at = open_link("drilldown", {"metric": "BLEU-4", "corruption": payload, "refs": "5"})
    assert not at.exception
    for value in markdown_values(at):
        assert "](https://attacker" not in value and "![" not in value, value
    assert any("corruption=: no corruption type is called" in w.value.replace("\\", "") for w in at.warning)


# --------------------------------------------------------------------------- a NUL byte in a path

@pytest.mark.parametrize("path", ["challenge/a\x00b.tsv", "../../etc/passwd", "/etc/passwd"])
def test_a_challenge_link_with_a_bad_path_gets_a_message_not_a_traceback(app_env, path):
    at = open_link("challenge", {"file": path, "metrics": "BLEU-4"})
    assert not at.exception
    assert any("file=: " in w.value.replace("\\", "") for w in at.warning)
    assert "root:" not in page_text(at)


# --------------------------------------------------------------------------- secrets and server paths

def test_a_database_password_is_never_shown_on_a_page(app_env, monkeypatch):
    monkeypatch.setenv("MUTTLAB_DATABASE_URL", DATABASE_URL)
    at = open_link("annotate", {})
    assert not at.exception
    assert any("pair store" in e.value for e in at.error)  # it cannot be reached, and the page says so
    assert PASSWORD not in page_text(at)


def test_a_database_password_is_never_shown_by_the_cli(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("MUTTLAB_DATABASE_URL", DATABASE_URL)
    monkeypatch.setenv("MUTTLAB_CACHE_DIR", str(tmp_path))
    assert main(["pairs", "list"]) == 2
    err = capsys.readouterr().err
    assert "cannot" in err and "mutt:***@127.0.0.1" in err and PASSWORD not in err


def test_anonymous_pages_name_no_server_folder(app_env, app_settings):
    folders = [str(app_settings.data_dir), str(app_settings.cache_dir), str(app_env),
               str(__import__("pathlib").Path(muttlab.__file__).parent)]
    learned = open_link("learned", {})  # the bundled ReVal checkpoint is described
    assert not learned.exception and any("checkpoint:" in body for body in html_bodies(learned))
    missing = open_link("challenge", {"file": "challenge/no-such-set.tsv", "metrics": "BLEU-4"})
    assert any("challenge/no-such-set.tsv: no such file" in e.value.replace("\\", "") for e in missing.error)
    run = open_link("run", {})
    run.session_state["run-catalogue-open"] = True  # the metric table, with why a metric is unavailable
    run.run()
    assert any("W2V-AVG-corpus" in frame.value["metric"].tolist() for frame in run.dataframe)
    for at in (learned, missing, run):
        shown = page_text(at)
        for folder in folders:
            assert folder not in shown and folder.replace("/", "\\/") not in shown


# --------------------------------------------------------------------------- a link starts no heavy work

def test_run_1_in_a_link_starts_no_run(app_env, monkeypatch):
    calls = []
    monkeypatch.setattr(api, "run_grid", lambda *a, **k: calls.append(a) or pytest.fail("a link started a run"))
    at = open_link("run", {"metrics": "BADGER-like,TERp", "corruptions": "passive,det_sub", "refs": "10,20", "run": "1"})
    assert not at.exception and calls == []
    assert any("press **Run**" in i.value for i in at.info)
    assert at.multiselect(key="run-metrics").value == ["BADGER-like", "TERp"]  # the link only fills the form


def test_a_slow_drilldown_cell_from_a_link_waits_for_a_click(app_env, monkeypatch):
    calls = []
    monkeypatch.setattr(api, "run_grid", lambda *a, **k: calls.append(a) or pytest.fail("a link scored a cell"))
    at = open_link("drilldown", {"metric": "BADGER-like", "corruption": "passive", "refs": "20"})
    assert not at.exception and calls == []
    assert at.button(key="dd-score").label == "Score BADGER-like on this cell"


def test_work_nobody_waits_for_is_cancelled():
    queue = work_queue.FairQueue(workers=1)
    release, ran = threading.Event(), []

    def job(name):
        def run():
            if name == "first":
                release.wait(10)
            ran.append(name)
            return name
        return run

    futures = [queue.submit("visitor", job(name), cost=5000) for name in ("first", "second", "third")]
    asked = []

    def gone() -> None:  # the visitor's tab closed while the first chunk ran
        asked.append(1)
        release.set()
        raise RuntimeError("session gone")

    with pytest.raises(RuntimeError, match="session gone"):
        work_queue.gather(futures, gone, poll_s=0.05)
    deadline = time.monotonic() + 10
    while queue.running or queue.pending():
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert asked and ran == ["first"]
    assert futures[1].cancelled() and futures[2].cancelled()
    queue.close()


def test_a_grid_run_stops_scoring_when_its_session_goes(app_settings, monkeypatch):
    """A grid of nine cells is queued; the visitor closes the tab while the first piece is scored: the pieces
    not yet started are never scored."""
    from muttlab.dashboard.services import grid
    from muttlab.engine import runner

    scored = []

    def slow_piece(self, metric, jobs):  # one piece (at most a cell's side) that takes a while to score
        scored.append(len(jobs[0][0]))
        time.sleep(0.5)
        return [np.zeros(len(cands)) for cands, _ in jobs]

    polls = []

    def gone() -> None:  # asked while the first piece is being scored: the visitor has closed the tab
        polls.append(1)
        raise RuntimeError("session gone")

    monkeypatch.setattr(runner._Scorer, "_parallel", slow_piece)
    monkeypatch.setattr(grid, "still_wanted", gone)
    selection = services.Selection(("BLEU-1",), ("neg_subj", "neg_verb", "sem_opps"), (5, 10, 20))
    with pytest.raises(RuntimeError, match="session gone"):
        services.run_grid(app_settings, selection)
    time.sleep(1.5)  # time for the queue to have run more pieces, had they not been cancelled
    assert polls and len(scored) == 1  # many pieces queued; only the one under way when the visitor left ran


# --------------------------------------------------------------------------- sizes

def test_an_oversized_playground_candidate_is_refused_before_parsing(app_env, monkeypatch):
    at = open_link("playground", {})  # the example sentence is parsed and scored
    parsed = []
    monkeypatch.setattr(api, "corrupt", lambda *a, **k: parsed.append(1) or pytest.fail("parsed"))
    # The widget state sent holds all 1,000,000 characters; the server keeps the box's limit in characters
    # (the text area's max_chars), which is still over the limit in words.
    at.text_area(key="pg-candidate").set_value("word " * 200_000)
    at.get("form_submit_button")[0].click().run()
    assert not at.exception and parsed == []
    assert len(at.session_state["pg-candidate"]) == 2_000
    assert any("the candidate has 400 words, over the limit of 200" in e.value.replace("\\", "") for e in at.error)


def test_api_corrupt_refuses_an_oversized_sentence_naming_the_limit():
    started = time.perf_counter()
    with pytest.raises(MuttlabError, match=r"over the limit of 2,000 .*MUTTLAB_MAX_CHARS"):
        api.corrupt("word " * 200_000, ["A man rides a bike."], ["double_PP"], seed=13)
    with pytest.raises(MuttlabError, match=r"reference 1 has 1,000,000 characters"):
        api.corrupt("A man rides a bike.", ["word " * 200_000], ["double_PP"], seed=13)
    print(f"refused in {time.perf_counter() - started:.4f} s")


# --------------------------------------------------------------------------- the clear-cache message

def test_a_fresh_served_app_refuses_the_clear_cache_message(tmp_path, monkeypatch):
    """`muttlab serve` refuses the message before its first connection, not once a page has run."""
    import os

    from streamlit.web import bootstrap

    cleared = []
    # Streamlit's own handler (what a server does before app.py has ever run): it clears every cache.
    monkeypatch.setattr(AppSession, "_handle_clear_cache_request", lambda self: cleared.append(1))
    monkeypatch.setattr(os, "environ", {k: v for k, v in os.environ.items()
                                        if k not in serve_module.SETTINGS_VARIABLES})
    state = services.WarmState(started=0.0, ready=[], failed={})
    state.quick.set()
    monkeypatch.setattr(services, "warm_start", lambda settings: state)

    def first_message(script, app_target, args, options):
        # The server is up and no page has run: a browser's first message asks to clear the caches.
        session = object.__new__(AppSession)
        session._session_state = SessionState()
        session._state = AppSessionState.SHUTDOWN_REQUESTED
        session.handle_backmsg(BackMsg(clear_cache=True))

    monkeypatch.setattr(bootstrap, "run_asgi_app", first_message)
    monkeypatch.setattr(serve_module, "leave_soon", lambda: None)
    # serve() mounts the sign-in routes for its process; later tests in this process run pages without them.
    monkeypatch.setattr(signin, "_MOUNTED", signin._MOUNTED)
    args = build_parser().parse_args(["serve", "--port", "8767", "--cache-dir", str(tmp_path)])
    assert args.handler(args) == 0
    assert cleared == []
    assert load_settings().cache_dir == tmp_path.resolve()
