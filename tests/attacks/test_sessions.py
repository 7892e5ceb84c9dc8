"""Sessions bound to the credential they were opened with, and a client identity the client cannot choose.

Each test plays the one who must fail: the holder of a session cookie whose account has been given a new
password, removed, or removed and added again; the holder of a session opened with the shared annotator
credential after it was rotated or replaced by accounts; a guesser who spreads guesses over invented client
addresses (in a real ``X-Forwarded-For`` against a served dashboard), or over real ones to lock the owner out.
The operator's commands run as ``muttlab users ...`` in a subprocess, as on a server.
"""
from __future__ import annotations

import os
import stat
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request

import pytest

from muttlab.access.roles import Action, Identity, Role, local_operator, require
from muttlab.access.sessions import SESSIONS_FILE, STATE_FILE, Authenticator, RateLimiter, SignInRefused
from muttlab.access.users import UserStore
from muttlab.errors import PermissionDenied
from muttlab.settings import Settings
from tests.access.test_access import settings  # noqa: F401 (a fixture)
from tests.attacks.test_roles import accounts  # noqa: F401 (a fixture: ann, annotator; max, maintainer)
from tests.conftest import muttlab_env, run_muttlab

PASSWORD = "correct horse battery"
NEW_PASSWORD = "another long password"
TOKEN, ROTATED = "shared-annotator-credential", "the rotated credential"



def _users(settings: Settings, *args: str, password: str | None = None) -> subprocess.CompletedProcess:
    """``muttlab users ARGS`` as the operator runs it on the server (the password on standard input)."""
    env = {"MUTTLAB_CACHE_DIR": str(settings.cache_dir), "MUTTLAB_USERS_FILE": str(settings.users_file)}
    extra = ["--password-stdin"] if password is not None else []
    return run_muttlab("users", *args, *extra, env=env, input=f"{password}\n" if password is not None else None)


def _still_signed_in(settings: Settings, token: str) -> Identity | None:
    """What a page makes of the session cookie ``token`` now (``muttlab.dashboard.auth.identity``), on a server
    with ``settings`` (its shared credential is ``settings.annotator_token``)."""
    return Authenticator(settings).resume(token)


def test_a_new_password_ends_the_sessions_of_the_old_one(settings, accounts):
    """Attack (round three): a session cookie still worked after ``muttlab users passwd ann``, so whoever had
    learned the old password (and signed in with it) kept editing. The session records the credential version
    it was opened with: a new password ends it, for pages and for writes alike."""
    session = Authenticator(settings).sign_in("ann", PASSWORD, client="ip:203.0.113.9")
    assert _still_signed_in(settings, session.token) == Identity("ann", Role.ANNOTATOR)
    changed = _users(settings, "passwd", "ann", password=NEW_PASSWORD)
    assert changed.returncode == 0, changed.stderr
    assert _still_signed_in(settings, session.token) is None
    with pytest.raises(PermissionDenied, match="given a new password"):
        require(session.identity, Action.EDIT_PAIRS, settings)
    assert Authenticator(settings).sign_in("ann", NEW_PASSWORD, client="ip:203.0.113.9").identity.name == "ann"


def test_a_name_removed_and_added_again_is_another_account(settings, accounts):
    """Attack: after ``users remove ann`` the cookie stopped working, but ``users add ann`` (a new person, a new
    password, here a maintainer) brought it back, with the new account's role. A session records the account's
    id, made at random when it is added: the old session stays ended."""
    session = Authenticator(settings).sign_in("ann", PASSWORD, client="ip:203.0.113.9")
    assert _users(settings, "remove", "ann").returncode == 0
    assert _still_signed_in(settings, session.token) is None
    added = _users(settings, "add", "ann", "--role", "maintainer", password=NEW_PASSWORD)
    assert added.returncode == 0, added.stderr
    assert _still_signed_in(settings, session.token) is None
    with pytest.raises(PermissionDenied):
        require(session.identity, Action.MANAGE_USERS, settings)


def test_rotating_the_shared_credential_ends_its_sessions(settings):
    """Attack: a session opened with the shared annotator credential survived its rotation. It records a
    digest of the credential keyed by the session's own token: once the credential changes, it has ended."""
    shared = Settings(cache_dir=settings.cache_dir, annotator_token=TOKEN, session_ttl=3600)
    session = Authenticator(shared).sign_in_with_token("mallory", TOKEN, TOKEN, "ip:203.0.113.9")
    assert _still_signed_in(shared, session.token) == Identity("mallory", Role.ANNOTATOR)
    rotated = Settings(cache_dir=shared.cache_dir, annotator_token=ROTATED, session_ttl=3600)
    assert _still_signed_in(rotated, session.token) is None
    with pytest.raises(PermissionDenied, match="shared credential changed"):
        require(session.identity, Action.EDIT_PAIRS, rotated)
    digest = (shared.cache_dir / SESSIONS_FILE).read_bytes()
    assert TOKEN.encode() not in digest and ROTATED.encode() not in digest


def test_switching_to_accounts_ends_the_shared_credentials_sessions(settings, accounts):
    """Attack: the holder of a shared-credential session, under a name of their choosing (here an account's),
    stayed signed in after the server switched to accounts. Such a session ends when a users file is set."""
    shared = Settings(cache_dir=settings.cache_dir, annotator_token=TOKEN, session_ttl=3600)
    session = Authenticator(shared).sign_in_with_token("max", TOKEN, TOKEN, "ip:203.0.113.9")
    switched = settings.with_overrides(annotator_token=TOKEN)  # the token is still set, but accounts are on
    assert _still_signed_in(switched, session.token) is None
    with pytest.raises(PermissionDenied):
        require(session.identity, Action.EDIT_PAIRS, switched)


def test_signing_an_account_out_everywhere(settings, accounts):
    """A maintainer who suspects ann's cookie was copied ends every session of hers, in every browser and
    server process, with ``muttlab users signout ann`` (``api.sign_out_everywhere``); max's stays."""
    anns = [Authenticator(settings).sign_in("ann", PASSWORD, client=f"ip:198.51.100.{i}") for i in (1, 2)]
    maxs = Authenticator(settings).sign_in("max", PASSWORD, client="ip:198.51.100.3")
    ended = _users(settings, "signout", "ann")
    assert ended.returncode == 0 and "2 sessions ended" in ended.stdout, ended.stderr
    assert all(_still_signed_in(settings, s.token) is None for s in anns)
    assert _still_signed_in(settings, maxs.token) == Identity("max", Role.MAINTAINER)
    from muttlab import api
    assert api.sign_out_everywhere(settings, "max") == 1 and _still_signed_in(settings, maxs.token) is None
    # A signed-in annotator may end her own sessions, not another's.
    again = Authenticator(settings).sign_in("ann", PASSWORD, client="ip:198.51.100.1")
    other = Authenticator(settings).sign_in("max", PASSWORD, client="ip:198.51.100.3")
    from muttlab.access.sessions import end_sessions
    with pytest.raises(PermissionDenied):
        end_sessions(again.identity, settings, "max")
    assert end_sessions(again.identity, settings, "ann") == 1 and _still_signed_in(settings, other.token)


def test_session_and_limiter_files_are_readable_by_their_owner_only(settings, accounts):
    """Attack: the session database was created 0644, so any local user could read who is signed in (and the
    token digests); the sign-in counts alike. Both are 0600, also when an older file was wider."""
    Authenticator(settings).sign_in("ann", PASSWORD, client="ip:203.0.113.9")
    with pytest.raises(SignInRefused):
        Authenticator(settings).sign_in("ann", "a wrong password", client="ip:203.0.113.9")
    for name in (SESSIONS_FILE, STATE_FILE):
        assert stat.S_IMODE((settings.cache_dir / name).stat().st_mode) == 0o600, name
    assert stat.S_IMODE(settings.users_file.stat().st_mode) == 0o600
    os.chmod(settings.cache_dir / SESSIONS_FILE, 0o644)
    from muttlab.access.sessions import SessionStore
    SessionStore._ready.clear()
    SessionStore.for_settings(settings)
    assert stat.S_IMODE((settings.cache_dir / SESSIONS_FILE).stat().st_mode) == 0o600


def test_a_guesser_on_many_addresses_never_locks_the_owner_out():
    """Attack: 37 guesses from spoofed addresses locked bob out even with the right password from a fresh
    address (a limit per name from anywhere). Limits are per client and per (name, client) only: after any
    number of failures elsewhere, the owner's first attempt from her own address passes."""
    limiter = RateLimiter(free=5, base=2.0, cap=900.0)
    for i in range(200):
        limiter.attempt(*RateLimiter.keys("max", f"ip:192.0.2.{i % 250}-{i}"))  # counted, never cleared
    assert limiter.attempt(*RateLimiter.keys("max", "ip:198.51.100.7")) == 0


def test_users_add_with_a_folder_as_users_file_is_one_line(tmp_path):
    """Attack: MUTTLAB_USERS_FILE naming a folder made ``muttlab users add`` end in a traceback."""
    folder = tmp_path / "users-folder"
    folder.mkdir()
    result = _users(Settings(cache_dir=tmp_path / "cache", users_file=folder), "add", "ann", password=PASSWORD)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [
        f"muttlab: error: {folder}: is a folder or a special file, not a users file (point MUTTLAB_USERS_FILE at a "
        "file, e.g. /srv/muttlab/secret/users.json)"]


def test_metrics_with_standard_output_closed_is_one_line(tmp_path):
    """Attack: ``muttlab metrics >&-`` ended in a traceback (Python has no sys.stdout then)."""
    env = muttlab_env({"MUTTLAB_CACHE_DIR": str(tmp_path / "cache")})
    result = subprocess.run(["bash", "-c", f"'{sys.executable}' -m muttlab metrics >&-"], env=env,
                            capture_output=False, stderr=subprocess.PIPE, text=True)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == ["muttlab: error: standard output is closed, so nothing can be "
                                                  "printed; write to a file with -o FILE"]


# --------------------------------------------------------------------------- served: X-Forwarded-For

@pytest.fixture(scope="module")
def accounts_server(tmp_path_factory):
    """One `muttlab serve` on the sample with accounts and no trusted proxy (the default); yields its URL and
    its cache dir (where the sign-in counts are)."""
    from tests.dashboard.test_browser import NOTHING, sample_env, serving

    root = tmp_path_factory.mktemp("accounts-server")
    settings = Settings(cache_dir=root / "cache", users_file=root / "secret" / "users.json")
    UserStore.of(settings).add(local_operator(), settings, "bob", "annotator", PASSWORD)
    env = sample_env(root / "cache", MUTTLAB_USERS_FILE=str(settings.users_file), MUTTLAB_WARM_UP=NOTHING)
    with serving(env, root / "serve.log") as url:
        yield url, root / "cache"


def _post_sign_in(url: str, name: str, password: str, forwarded_for: str) -> int:
    body = urllib.parse.urlencode({"name": name, "password": password, "next": "/"}).encode()
    request = urllib.request.Request(f"{url}/_muttlab/signin", data=body, method="POST", headers={
        "Origin": url, "Content-Type": "application/x-www-form-urlencoded", "X-Forwarded-For": forwarded_for})
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(request, timeout=60) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def test_a_forwarded_for_header_from_an_unlisted_proxy_names_no_client(accounts_server):
    """Attack (round three): uvicorn believed X-Forwarded-For from 127.0.0.1, so a client behind a local proxy
    (or on the server) gave each guess an invented address and passed the limiter (8 extra guesses verified).
    With no proxy listed in MUTTLAB_TRUSTED_PROXIES the header is ignored: every guess is counted against the
    connection's address, none against an invented one, and once a name has failed 5 times from it the
    next guess is refused before any check (how many are checked later depends on the back-off's clock)."""
    import sqlite3

    url, cache = accounts_server
    codes = [_post_sign_in(url, "bob", f"guess number {i:02d}", f"203.0.113.{i}") for i in range(8)]
    assert codes[:5] == [401] * 5 and set(codes) <= {401, 429} and 429 in codes, codes
    with sqlite3.connect(cache / STATE_FILE) as db:
        counted = dict(db.execute("SELECT key, count FROM failures"))
    assert counted == {"user:bob|ip:127.0.0.1": codes.count(401), "client:ip:127.0.0.1": codes.count(401)}, counted
