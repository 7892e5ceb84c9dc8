"""Roles, accounts, the sign-in rate limit and session expiry: each attack tried as a role that must fail."""
from __future__ import annotations

import io
import json
import stat
from argparse import Namespace

import pytest

from muttlab.access.roles import ANONYMOUS, Action, Identity, Role, can, local_operator, require
from muttlab.access.sessions import Authenticator, RateLimiter, SignInRefused
from muttlab.access.users import UserStore
from muttlab.cli import main
from muttlab.cli.users import read_password
from muttlab.errors import MuttlabError, PermissionDenied
from muttlab.settings import Settings, load_settings

PASSWORD = "correct horse battery"
ANNOTATOR = Identity("ann", Role.ANNOTATOR)
MAINTAINER = Identity("max", Role.MAINTAINER)


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def settings(tmp_path) -> Settings:
    return Settings(cache_dir=tmp_path / "cache", users_file=tmp_path / "secret" / "users.json", session_ttl=3600)


@pytest.fixture
def users(settings) -> UserStore:
    store = UserStore.of(settings)
    store.add(local_operator(), settings, "max", "maintainer", PASSWORD)
    store.add(local_operator(), settings, "ann", "annotator", PASSWORD + "!")
    return store


def test_permission_table():
    assert [a for a in Action if can(Role.VIEWER, a)] == [Action.READ, Action.SCORE]
    assert [a for a in Action if can(Role.ANNOTATOR, a)] == [Action.READ, Action.SCORE, Action.EDIT_PAIRS]
    assert all(can(Role.MAINTAINER, a) for a in Action)


@pytest.mark.parametrize("identity", [None, ANONYMOUS, ANNOTATOR])
@pytest.mark.parametrize("action", [Action.TRAIN, Action.INSTALL_MODEL, Action.CLEAR_CACHES, Action.MANAGE_USERS])
def test_viewers_and_annotators_cannot_change_shared_state(identity, action, settings):
    with pytest.raises(PermissionDenied, match="needs the maintainer role"):
        require(identity, action, settings)


def test_read_only_refuses_writes_even_for_maintainers(settings):
    read_only = settings.with_overrides(read_only=True)
    for action in (Action.EDIT_PAIRS, Action.TRAIN, Action.INSTALL_MODEL, Action.MANAGE_USERS):
        with pytest.raises(PermissionDenied, match="read-only"):
            require(MAINTAINER, action, read_only)
    assert require(ANONYMOUS, Action.SCORE, read_only) is ANONYMOUS
    assert read_only.model_dir is None and settings.model_dir == settings.cache_dir / "models"


def test_users_file_holds_argon2_hashes_only(settings, users):
    raw = settings.users_file.read_text()
    assert PASSWORD not in raw
    entries = json.loads(raw)["users"]
    assert entries["max"]["hash"].startswith("$argon2id$") and entries["max"]["role"] == "maintainer"
    assert stat.S_IMODE(settings.users_file.stat().st_mode) == 0o600
    assert users.verify("max", PASSWORD) == MAINTAINER
    assert users.verify("max", PASSWORD + "!") is None and users.verify("nobody", PASSWORD) is None


@pytest.mark.parametrize("actor", [ANONYMOUS, ANNOTATOR])
def test_only_maintainers_manage_users(actor, settings, users):
    with pytest.raises(PermissionDenied):
        users.add(actor, settings, "eve", "maintainer", PASSWORD)
    with pytest.raises(PermissionDenied):
        users.set_password(actor, settings, "max", "owned by eve now")
    with pytest.raises(PermissionDenied):
        users.remove(actor, settings, "max")
    assert users.verify("max", PASSWORD) == MAINTAINER and [u.name for u in users.users()] == ["ann", "max"]


def test_bad_names_and_short_passwords_are_refused(settings, users):
    with pytest.raises(MuttlabError, match="not allowed"):
        users.add(MAINTAINER, settings, "![x](http://127.0.0.1:9/x.png)", "annotator", PASSWORD)
    with pytest.raises(MuttlabError, match="at least 10"):
        users.add(MAINTAINER, settings, "bob", "annotator", "short")


def test_rate_limit_backs_off_the_guessing_client_not_the_account_owner(settings, users):
    clock = Clock()
    auth = Authenticator(settings, RateLimiter(free=3, base=2.0, cap=60.0, clock=clock, client_free=3), clock=clock)
    for _ in range(3):
        with pytest.raises(SignInRefused, match="do not match"):
            auth.sign_in("max", "guess", client="10.0.0.1")
    # backing off: even the right password is refused from the guessing client...
    with pytest.raises(SignInRefused, match="too many") as refused:
        auth.sign_in("max", PASSWORD, client="10.0.0.1")
    assert refused.value.retry_after == pytest.approx(2.0)
    # ...for other names too, while the owner signs in from elsewhere (no lock-out a guesser can cause)
    with pytest.raises(SignInRefused, match="too many"):
        auth.sign_in("ann", PASSWORD + "!", client="10.0.0.1")
    assert auth.sign_in("max", PASSWORD, client="10.0.0.2").identity == MAINTAINER
    clock.now += 2.1
    with pytest.raises(SignInRefused, match="do not match"):
        auth.sign_in("max", "guess again", client="10.0.0.1")
    with pytest.raises(SignInRefused, match="too many") as refused:  # the back-off doubled
        auth.sign_in("max", PASSWORD, client="10.0.0.1")
    assert refused.value.retry_after == pytest.approx(4.0)
    clock.now += 4.1
    assert auth.sign_in("max", PASSWORD, client="10.0.0.1").identity == MAINTAINER
    assert auth.limiter.wait(*RateLimiter.keys("max", "10.0.0.1")) == 0


def test_a_shared_client_address_tolerates_more_failures_than_one_name():
    clock = Clock()
    limiter = RateLimiter(free=2, client_free=4, clock=clock)
    for name in ("a", "b", "c"):  # three people behind one proxy, each mistyping once
        limiter.failed(f"user:{name}", "client:proxy")
    assert limiter.wait("client:proxy") == 0 and limiter.wait("user:a") == 0
    limiter.failed("user:d", "client:proxy")
    assert limiter.wait("client:proxy") == pytest.approx(2.0)


def test_rate_limit_is_shared_between_authenticators_of_one_server(settings, users):
    # Every browser session builds its own Authenticator; the limiter is the server's.
    clock = Clock()
    limiter = RateLimiter(free=2, clock=clock, client_free=2)
    for _ in range(2):
        with pytest.raises(SignInRefused):
            Authenticator(settings, limiter, clock=clock).sign_in("max", "guess", client="c")
    with pytest.raises(SignInRefused, match="too many"):  # a new tab: same client, same limiter
        Authenticator(settings, limiter, clock=clock).sign_in("max", PASSWORD, client="c")


def test_sessions_expire(settings, users):
    clock = Clock()
    auth = Authenticator(settings, clock=clock)
    session = auth.sign_in("ann", PASSWORD + "!", client="c")
    assert auth.current(session) == ANNOTATOR
    clock.now += settings.session_ttl - 1
    assert auth.current(session) == ANNOTATOR
    clock.now += 2
    assert auth.current(session) is None


def test_token_sign_in_gives_annotators_only_and_is_rate_limited(settings):
    clock = Clock()
    auth = Authenticator(settings, RateLimiter(free=2, clock=clock, client_free=2), clock=clock)
    assert auth.sign_in_with_token("ann", "s3cret-token", "s3cret-token", "c").identity == ANNOTATOR
    for _ in range(2):
        with pytest.raises(SignInRefused):
            auth.sign_in_with_token("ann", "wrong", "s3cret-token", "c")
    with pytest.raises(SignInRefused, match="too many"):
        auth.sign_in_with_token("ann", "s3cret-token", "s3cret-token", "c")


def test_read_only_server_has_no_sign_in(settings, users):
    with pytest.raises(SignInRefused, match="read-only"):
        Authenticator(settings.with_overrides(read_only=True)).sign_in("max", PASSWORD, "c")


def test_settings_from_the_environment(tmp_path):
    loaded = load_settings({"MUTTLAB_USERS_FILE": str(tmp_path / "u.json"), "MUTTLAB_SESSION_TTL": "600",
                            "MUTTLAB_MODEL_DIR": str(tmp_path / "m")})
    assert (loaded.users_file, loaded.session_ttl, loaded.model_dir) == (tmp_path / "u.json", 600, tmp_path / "m")
    assert load_settings({"MUTTLAB_READ_ONLY": "1", "MUTTLAB_MODEL_DIR": str(tmp_path)}).model_dir is None
    with pytest.raises(MuttlabError, match="MUTTLAB_SESSION_TTL='8h'"):
        load_settings({"MUTTLAB_SESSION_TTL": "8h"})


# --------------------------------------------------------------------------- muttlab users

def test_cli_users_round_trip(settings, monkeypatch, capsys):
    monkeypatch.setenv("MUTTLAB_USERS_FILE", str(settings.users_file))
    monkeypatch.setattr("sys.stdin", io.StringIO(PASSWORD + "\n"))
    assert main(["users", "add", "carol", "--role", "annotator", "--password-stdin"]) == 0
    monkeypatch.setattr("sys.stdin", io.StringIO("another long password\n"))
    assert main(["users", "passwd", "carol", "--role", "maintainer", "--password-stdin"]) == 0
    assert main(["users", "list"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].split("\t")[:2] == ["carol", "maintainer"]
    assert UserStore.of(settings).verify("carol", "another long password") == Identity("carol", Role.MAINTAINER)
    assert main(["users", "remove", "carol"]) == 0
    assert UserStore.of(settings).users() == []


def test_cli_users_never_waits_without_a_terminal(settings, monkeypatch, capsys):
    monkeypatch.setenv("MUTTLAB_USERS_FILE", str(settings.users_file))
    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # not a TTY, and nothing to read
    assert main(["users", "add", "dave"]) == 2
    assert "--password-stdin" in capsys.readouterr().err
    with pytest.raises(MuttlabError, match="no password"):
        read_password(Namespace(password_stdin=True), io.StringIO(""))


def test_cli_users_needs_a_users_file(monkeypatch, capsys):
    monkeypatch.delenv("MUTTLAB_USERS_FILE", raising=False)
    assert main(["users", "list"]) == 2
    assert "MUTTLAB_USERS_FILE" in capsys.readouterr().err




def _fail_in_another_process(path, key: str, times: int) -> None:
    """``times`` failures of ``key`` recorded by a separate interpreter (another server process)."""
    import subprocess
    import sys

    code = ("import sys; from pathlib import Path; from muttlab.access.sessions import RateLimiter\n"
            "limiter = RateLimiter(free=3, client_free=3, path=Path(sys.argv[1]))\n"
            "assert limiter.shared\n"
            "for _ in range(int(sys.argv[3])): limiter.failed(sys.argv[2])\n")
    subprocess.run([sys.executable, "-c", code, str(path), key, str(times)], check=True, timeout=120)


def test_rate_limit_is_shared_between_server_processes(settings, users):
    path = settings.cache_dir / "signin-failures.sqlite"
    here = RateLimiter.for_settings(settings, free=3, client_free=3)
    assert here.shared and path.is_file()
    _fail_in_another_process(path, "user:max|c", 3)
    # This process never saw a failure, yet the name is locked here too: right password refused.
    with pytest.raises(SignInRefused, match="too many") as refused:
        Authenticator(settings, here).sign_in("max", PASSWORD, client="c")
    assert 0 < refused.value.retry_after <= 2.0
    # Counts add up across processes: two more failures elsewhere double the back-off seen here.
    _fail_in_another_process(path, "user:max|c", 2)
    assert 4.0 < here.wait("user:max|c") <= 8.0
    # A success in one process clears the name for all of them.
    RateLimiter(path=path).succeeded("user:max|c")
    assert here.wait("user:max|c") == 0
    assert Authenticator(settings, here).sign_in("max", PASSWORD, client="c").identity == MAINTAINER


def test_two_limiters_on_one_file_share_failures_from_threads(tmp_path):
    import threading

    path = tmp_path / "state" / "signin.sqlite"
    a, b = RateLimiter(free=1000, client_free=1000, path=path), RateLimiter(free=1000, client_free=1000, path=path)
    threads = [threading.Thread(target=lambda lim=lim: [lim.failed("user:x", "client:c") for _ in range(50)])
               for lim in (a, b, a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert a._call("get", ("user:x",))["user:x"].count == 200  # no failure lost between the two


def test_unusable_state_file_falls_back_to_memory_with_one_warning(tmp_path):
    damaged = tmp_path / "signin.sqlite"
    damaged.write_bytes(b"this is not a SQLite database" * 100)
    with pytest.warns(RuntimeWarning, match="counted in this process's memory"):
        limiter = RateLimiter(free=2, client_free=2, path=damaged)
    assert not limiter.shared
    limiter.failed("user:max|c")
    limiter.failed("user:max|c")
    assert limiter.wait("user:max|c") > 0  # still limited, in memory


def test_state_file_that_goes_away_keeps_limiting(tmp_path):
    import shutil

    folder = tmp_path / "state"
    limiter = RateLimiter(free=2, client_free=2, path=folder / "signin.sqlite")
    limiter.failed("user:max|c")
    shutil.rmtree(folder)  # SQLite does not create a missing folder
    with pytest.warns(RuntimeWarning, match="counted in this process's memory"):
        limiter.failed("user:max|c")
    limiter.failed("user:max|c")
    assert not limiter.shared and limiter.wait("user:max|c") > 0
