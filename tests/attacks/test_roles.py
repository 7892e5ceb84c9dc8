"""Roles and sign-in under attack, each attack tried as the role (or the visitor) that must fail.

* the pair store through its guard: anything not named as a read is refused to a viewer (``revert``, the
  engine), and no write takes an author from its caller;
* a write is checked against the sign-in as it stands when it is made: a removed account's callback, a
  demoted one's and an expired or signed-out session's write nothing (also through the Annotate page);
* 30 simultaneous wrong sign-ins verify at most ``free`` passwords, never more than the cap at once, and
  the account's owner still signs in (from elsewhere at once, from the guessing client after the back-off);
* an unknown name costs one password verification, as a known one does (counted, not timed);
* in Chromium, a sign-in through the server's sign-in address holds across a reload, a new tab and an
  ``/annotate?pair=`` link, and the page's scripts never see the session id (``document.cookie``).
"""
from __future__ import annotations

import json

import inspect
import threading

import pytest

from muttlab.access import users as users_module
from muttlab.access.roles import ANONYMOUS, Identity, Role, local_operator
from muttlab.access.sessions import MAX_VERIFICATIONS, Authenticator, RateLimiter, SignInRefused
from muttlab.access.users import UserStore
from muttlab.trials import Trial
from muttlab.errors import PermissionDenied
from muttlab.pairs.guard import GuardedStore, guarded
from muttlab.pairs.store import open_store
from tests.access.test_access import Clock, settings  # noqa: F401 (a fixture)
from tests.dashboard.conftest import app_env, open_page  # noqa: F401 (a fixture)

PASSWORD = "correct horse battery"
WRONG = "wrong horse battery!"


class CountingHasher:
    """The real argon2 hasher, counting what it does: verifications, hashes, and verifications at once."""

    def __init__(self, inner):
        self.inner = inner
        self.verified = self.hashed = self.running = self.peak = 0
        self._lock = threading.Lock()

    def verify(self, hashed, password):
        with self._lock:
            self.verified += 1
            self.running += 1
            self.peak = max(self.peak, self.running)
        try:
            return self.inner.verify(hashed, password)
        finally:
            with self._lock:
                self.running -= 1

    def hash(self, password):
        with self._lock:
            self.hashed += 1
        return self.inner.hash(password)


@pytest.fixture
def accounts(settings) -> UserStore:
    store = UserStore.of(settings)
    store.add(local_operator(), settings, "ann", "annotator", PASSWORD)
    store.add(local_operator(), settings, "max", "maintainer", PASSWORD)
    return store


@pytest.fixture
def pairs(settings):
    with open_store(settings) as store:
        store.add([Trial("neg_subj/1", "neg_subj", "A man plays a guitar", "There is no man playing a guitar",
                         ("A man is playing a guitar",))], author="loader")
        store.edit(1, 1, {"corrupted": "No man plays a guitar"}, author="loader")
        yield store


@pytest.fixture
def counting(monkeypatch):
    hasher = CountingHasher(users_module._hasher())
    monkeypatch.setattr(users_module, "_HASHER", hasher)
    return hasher


# --------------------------------------------------------------------------- the guard denies by default

def test_a_viewer_cannot_revert_or_reach_any_store_method_not_named_as_a_read(settings, pairs):
    view = guarded(pairs, ANONYMOUS, settings)
    with pytest.raises(PermissionDenied):
        view.revert(1, 1, base_version=2)
    for name in ("engine", "url", "import_jsonl", "close", "_change", "_insert", "_writable", "add", "edit"):
        with pytest.raises((PermissionDenied, TypeError)):
            getattr(view, name)(1, 1, {"corrupted": "x y"})
    with pytest.raises(PermissionDenied):
        view.engine  # noqa: B018 (an attribute read is the attack: raw SQL through the engine)
    assert [r.action for r in pairs.history(1)] == ["create", "edit"]
    assert pairs.get(1).corrupted == "No man plays a guitar"


def test_no_write_of_the_guard_takes_an_author_from_its_caller(settings, pairs):
    # Every public method of the store that changes it is a method of the guard, without an author.
    writes = ("add", "edit", "accept", "reject", "revert")
    for name in writes:
        assert "author" not in inspect.signature(getattr(GuardedStore, name)).parameters, name
    view = guarded(pairs, Identity("ann", Role.ANNOTATOR), settings)
    with pytest.raises(TypeError):
        view.revert(1, 1, author="someone-else")
    saved = view.revert(1, 1, base_version=2)
    assert saved.corrupted == "There is no man playing a guitar" and pairs.history(1)[-1].author == "ann"


# --------------------------------------------------------------------------- re-checked at each write

def test_a_removed_accounts_stale_callback_writes_nothing(settings, accounts, pairs):
    session = Authenticator(settings).sign_in("ann", PASSWORD, client="c")
    view = guarded(pairs, session.identity, settings)  # what the page drew the Accept button with
    accounts.remove(local_operator(), settings, "ann")
    with pytest.raises(PermissionDenied, match="ended"):
        view.accept(1, base_version=2)
    assert pairs.get(1).status != "accepted" and len(pairs.history(1)) == 2


def test_a_demoted_accounts_stale_callback_writes_nothing(settings, accounts, pairs):
    session = Authenticator(settings).sign_in("ann", PASSWORD, client="c")
    view = guarded(pairs, session.identity, settings)
    # A maintainer edits the role in the users file, the password unchanged: the session holds, as a viewer.
    raw = json.loads(settings.users_file.read_text())
    raw["users"]["ann"]["role"] = "viewer"
    settings.users_file.write_text(json.dumps(raw))
    with pytest.raises(PermissionDenied, match="viewer"):
        view.reject(1, base_version=2)
    assert len(pairs.history(1)) == 2


def test_an_expired_sessions_write_is_refused(settings, accounts, pairs):
    clock = Clock()
    session = Authenticator(settings, clock=clock).sign_in("ann", PASSWORD, client="c")
    view = guarded(pairs, session.identity, settings)
    assert view.accept(1, base_version=2).version == 3  # while it lasts
    clock.now += settings.session_ttl + 1
    with pytest.raises(PermissionDenied, match="ended"):
        view.reject(1, base_version=3)
    assert pairs.get(1).status == "accepted" and len(pairs.history(1)) == 3


def test_a_signed_out_sessions_write_is_refused(settings, accounts, pairs):
    auth = Authenticator(settings)
    session = auth.sign_in("ann", PASSWORD, client="c")
    view = guarded(pairs, session.identity, settings)
    auth.sign_out(session.token)  # from another tab: the same session
    with pytest.raises(PermissionDenied, match="ended"):
        view.accept(1, base_version=2)
    assert auth.current(session) is None and len(pairs.history(1)) == 2


def test_the_annotate_pages_accept_button_drawn_for_a_removed_account_saves_nothing(app_env, tmp_path, monkeypatch):
    from muttlab.settings import load_settings

    monkeypatch.setenv("MUTTLAB_USERS_FILE", str(tmp_path / "secret" / "users.json"))
    settings = load_settings()
    UserStore.of(settings).add(local_operator(), settings, "ann", "annotator", PASSWORD)
    with open_store(settings) as store:
        store.add([Trial("neg_subj/1", "neg_subj", "A man plays a guitar", "There is no man playing a guitar",
                         ("A man is playing a guitar",))], author="loader", status="proposed")
    at = open_page("annotate")
    at.text_input(key="signin-name").input("ann")
    at.text_input(key="signin-token").input(PASSWORD)
    next(b for b in at.get("form_submit_button") if b.label == "Sign in").click().run()
    accept = next(b for b in at.button if b.key == "accept-1")
    assert not accept.disabled  # drawn for an annotator
    UserStore.of(settings).remove(local_operator(), settings, "ann")
    accept.click().run()
    assert any("Not saved" in e.value and "cannot edit corruption pairs" in e.value for e in at.error)
    with open_store(settings) as store:
        assert [r.action for r in store.history(1)] == ["create"]


# --------------------------------------------------------------------------- sign-in under attack

def test_thirty_simultaneous_wrong_sign_ins_verify_at_most_free_passwords(settings, accounts, counting):
    clock = Clock()
    limiter = RateLimiter(free=5, base=2.0, cap=60.0, clock=clock)
    barrier = threading.Barrier(30)
    outcomes: list[str] = []

    def guess(i: int) -> None:
        barrier.wait()
        try:
            Authenticator(settings, limiter, clock=clock).sign_in("ann", f"{WRONG}{i}", client="ip:6.6.6.6")
        except SignInRefused as exc:
            outcomes.append("backing off" if exc.retry_after else "wrong")

    threads = [threading.Thread(target=guess, args=(i,)) for i in range(30)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(outcomes) == 30 and outcomes.count("wrong") == limiter.free
    assert counting.verified == limiter.free  # 25 guesses never reached argon2 (64 MiB each)
    assert counting.peak <= MAX_VERIFICATIONS
    # The owner is not locked out: from her own address at once...
    assert Authenticator(settings, limiter, clock=clock).sign_in("ann", PASSWORD, "ip:10.0.0.7").identity.name == "ann"
    # ...and from the guessing address once its back-off has run out.
    with pytest.raises(SignInRefused, match="too many"):
        Authenticator(settings, limiter, clock=clock).sign_in("ann", PASSWORD, client="ip:6.6.6.6")
    clock.now += limiter.base + 0.1
    assert Authenticator(settings, limiter, clock=clock).sign_in("ann", PASSWORD, "ip:6.6.6.6").identity.name == "ann"


def test_an_unknown_name_costs_what_a_known_one_costs(settings, accounts, counting):
    Authenticator(settings).sign_in("ann", PASSWORD, client="warm-up")  # the process's first sign-in
    costs = {}
    for name in ("ann", "nobody-here"):
        before = (counting.hashed, counting.verified)
        with pytest.raises(SignInRefused, match="do not match"):
            Authenticator(settings).sign_in(name, WRONG, client=f"ip:{name}")
        costs[name] = (counting.hashed - before[0], counting.verified - before[1])
    assert costs["nobody-here"] == costs["ann"] == (0, 1)
