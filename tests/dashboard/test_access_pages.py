"""Issue 17's attacks against the dashboard, below the browser: a client's clear-cache message, edits by a
session that may not edit, sign-in guessing, expired sessions, and Markdown smuggled into pair fields."""
from __future__ import annotations

import re
import time

import pytest
import streamlit as st
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.runtime.app_session import AppSession, AppSessionState
from streamlit.runtime.state import SessionState

from muttlab.engine import queue as work_queue
from muttlab.access.roles import ANONYMOUS, Identity, Role, local_operator
from muttlab.access.sessions import RateLimiter, Session
from muttlab.access.users import UserStore
from muttlab.dashboard import auth, credentials, services, shared
from muttlab.trials import Trial
from muttlab.errors import PermissionDenied
from muttlab.pairs.guard import guarded
from muttlab.pairs.store import open_store
from muttlab.settings import load_settings
from tests.dashboard.conftest import html_bodies, open_page, shown_errors

PASSWORD = "a long enough password"
IMAGE = "![x](http://127.0.0.1:9/x.png)"
TAG = '<img src="http://127.0.0.1:9/y.png">'


@pytest.fixture
def accounts(app_env, tmp_path, monkeypatch):
    path = tmp_path / "secret" / "users.json"
    monkeypatch.setenv("MUTTLAB_USERS_FILE", str(path))
    settings = load_settings()
    UserStore(path).add(local_operator(), settings, "ann", "annotator", PASSWORD)
    return settings


@pytest.fixture
def poisoned(app_env):
    """A pair whose key and source carry a Markdown image and an HTML image."""
    settings = load_settings()
    trial = Trial(f"k/{IMAGE}", "neg_subj", f"A man plays {TAG}", "There is no man playing", ("A man plays",),
                  source=f"{IMAGE} {TAG}")
    with open_store(settings) as store:
        store.add([trial], author="loader")
    return trial


def _markdown_bodies(at) -> list[str]:
    kinds = ("markdown", "caption", "info", "success", "warning", "error", "subheader", "title", "header")
    return [e.value for kind in kinds for e in at.get(kind)]


def test_xsrf_protection_and_the_upload_cap_stay_on():
    import tomllib

    from muttlab.resources.bundled import dashboard_dir

    server = tomllib.loads((dashboard_dir() / "config.toml").read_text())["server"]
    assert server["enableXsrfProtection"] is True and 0 < server["maxUploadSize"] <= 20


def test_a_clients_clear_cache_message_drops_nothing_shared(app_env):
    at = open_page("run")  # builds the shared registry, catalogue and suite, and installs the refusal
    assert not shown_errors(at)
    settings = load_settings()
    registry, suite, queue = services.registry(settings), services.suite(settings), work_queue.shared_queue()
    facts = services.facts()
    kept = {name: list(shared.region(name).items) for name in shared.SHARES}
    held = shared.size()
    assert kept["pages"]  # the landing grid's HTML, a byte-capped entry
    # The message a browser sends, handled by the code path Streamlit's server runs for it.
    session = object.__new__(AppSession)
    session._session_state = SessionState()
    session._state = AppSessionState.SHUTDOWN_REQUESTED  # a bare session: nothing to shut down when collected
    session.handle_backmsg(BackMsg(clear_cache=True))
    # Had the message gone through, it would have called these; the process cache is none of theirs.
    st.cache_resource.clear()
    st.cache_data.clear()
    assert services.registry(settings) is registry and services.suite(settings) is suite
    assert services.facts() is facts and work_queue.shared_queue() is queue
    assert shared.size() == held
    assert {name: list(shared.region(name).items) for name in shared.SHARES} == kept


@pytest.mark.parametrize("actor", [ANONYMOUS, Identity("ann", Role.ANNOTATOR)])
def test_only_maintainers_clear_the_shared_objects(app_env, actor):
    settings = load_settings()
    registry = services.registry(settings)
    services.memoised(("a finished run", settings), lambda: "kept")
    with pytest.raises(PermissionDenied):
        shared.clear_all(actor, settings)
    assert services.registry(settings) is registry and services.is_memoised(("a finished run", settings))
    shared.clear_all(Identity("max", Role.MAINTAINER), settings)
    assert services.registry(settings) is not registry and not services.is_memoised(("a finished run", settings))


def test_pair_writes_need_the_annotator_role_below_the_page(poisoned):
    settings = load_settings()
    with open_store(settings) as store:
        pair_id = store.get_by_key(poisoned.id).id
        for actor in (ANONYMOUS, Identity("viewer-account", Role.VIEWER)):
            view = guarded(store, actor, settings)
            assert view.get(pair_id).key == poisoned.id  # reading is fine
            with pytest.raises(PermissionDenied):
                view.edit(pair_id, 1, {"corrupted": "owned"})
            with pytest.raises(PermissionDenied):
                view.accept(pair_id)
            with pytest.raises(PermissionDenied):
                view.add([Trial("x/1", "neg_subj", "a b", "b a", ("c",))])
        saved = guarded(store, Identity("ann", Role.ANNOTATOR), settings).edit(pair_id, 1, {"corrupted": "x y"})
        assert saved.version == 2 and store.history(pair_id)[-1].author == "ann"  # the caller's own name


def test_markdown_and_html_in_pair_fields_are_shown_as_text(poisoned):
    at = open_page("annotate")
    assert not shown_errors(at)
    bodies = _markdown_bodies(at)
    for body in bodies:
        assert not re.search(r"(?<!\\)!(?<!\\)\[", body) and "<img" not in body, body
    html = "\n".join(html_bodies(at))
    assert "<img" not in html and "&lt;img src=&quot;http://127.0.0.1:9/y.png&quot;&gt;" in html
    assert f"source: {IMAGE}" in html  # the caption shows the characters, escaped as HTML text


def test_sign_in_with_an_account_then_guessing_is_locked_out(accounts, poisoned, monkeypatch):
    # The server's limiter, on a stopped clock: the lock-out cannot run out while the pages load.
    limiter = RateLimiter(clock=lambda: 1000.0)
    monkeypatch.setattr(credentials, "_limiter", lambda settings: limiter)
    at = open_page("annotate")
    for attempt in range(5):
        at.text_input(key="signin-name").input("ann")
        at.text_input(key="signin-token").input(f"guess {attempt}")
        next(b for b in at.get("form_submit_button") if b.label == "Sign in").click().run()
        assert any("do not match" in e.value for e in at.error)
    at.text_input(key="signin-name").input("ann")
    at.text_input(key="signin-token").input(PASSWORD)  # right, but too late
    next(b for b in at.get("form_submit_button") if b.label == "Sign in").click().run()
    assert any("too many failed sign-ins" in e.value for e in at.error)
    assert not [t for t in at.text_area]
    # A fresh browser session (a new tab) is locked out too: the limiter is the server's.
    fresh = open_page("annotate")
    fresh.text_input(key="signin-name").input("ann")
    fresh.text_input(key="signin-token").input(PASSWORD)
    next(b for b in fresh.get("form_submit_button") if b.label == "Sign in").click().run()
    assert any("too many failed sign-ins" in e.value for e in fresh.error)


def test_a_correct_account_sign_in_edits_and_an_expired_one_does_not(accounts, poisoned):
    at = open_page("annotate")
    at.text_input(key="signin-name").input("ann")
    at.text_input(key="signin-token").input(PASSWORD)
    next(b for b in at.get("form_submit_button") if b.label == "Sign in").click().run()
    assert not shown_errors(at)
    assert any("Signed in as ann (annotator)" in s.value for s in at.success)
    assert [t for t in at.text_area]  # the edit form
    expired = Session(Identity("ann", Role.ANNOTATOR), time.time() - 1)
    at = open_page("annotate", state={auth.SESSION_KEY: expired})
    assert any("sign-in has expired" in i.value for i in at.info)
    assert not [t for t in at.text_area]
    assert all(b.disabled for b in at.button if b.label in ("Accept", "Reject"))
