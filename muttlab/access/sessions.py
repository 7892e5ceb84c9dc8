"""Signing in: the rate limit on failed attempts, the cap on password checks at once, and server-side
sessions that expire and can be revoked.

The limiter is server-side state shared by every session of the process (not a browser session's state,
which a visitor resets by opening a new tab). Attempts are counted per name from one client and per client,
never per name alone, so that no client's failures can lock a name's owner out from another client; after
``free`` failures of a name from one client (``client_free`` of a client address, which a reverse proxy or a
campus NAT shares between many people) the key backs off for ``base`` seconds, doubling with each further
failure up to ``cap`` (exponential back-off, as RFC 6238 §5.2 and NIST SP 800-63B §5.2.2 recommend for
guessable secrets). Checking and counting an attempt is one step (:meth:`RateLimiter.attempt`), taken before
the password is verified, so simultaneous guesses cannot all pass the check. A correct sign-in clears the
counts. Who the client is comes from the connection (or from a proxy the operator listed; see
``muttlab.dashboard.signin``), never from what a request says of itself.

A session is bound to the credential it was opened with: an account's id and credential version
(:mod:`muttlab.access.users`), or, for the shared annotator credential, a keyed digest of that credential. It
ends when the account is removed, added again or given a new password, when the shared credential changes or
the server switches to accounts, and for every session of a name at once on :meth:`SessionStore.end_all`
(``muttlab users signout NAME``). The two files here are made readable by their owner only (0600).

The counts live in a small SQLite file in the cache dir (:data:`STATE_FILE`), so every server process that
shares it (several ``muttlab serve`` workers behind one proxy, a restarted server) sees the same lock-outs;
a guesser cannot reset them by landing on another process. When that file cannot be used (read-only
folder, damaged file), the counts are kept in the process's memory with one warning: still limited, per
process.
"""
from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import sqlite3
import stat
import threading
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from muttlab.access.roles import Action, Identity, Role, require
from muttlab.access.users import User, UserStore
from muttlab.errors import MuttlabError, PermissionDenied
from muttlab.settings import Settings


class SignInRefused(MuttlabError):
    """The sign-in was refused: wrong credentials, or too many failures (then ``retry_after`` is set)."""

    def __init__(self, message: str, retry_after: float = 0.0):
        super().__init__(message)
        self.retry_after = retry_after


STATE_FILE = "signin-failures.sqlite"
# A sign-in waits at most this long for another process's write; the counts are tiny, writes are instant.
BUSY_TIMEOUT_S = 5.0


def private_file(path: Path) -> None:
    """Make ``path`` (a SQLite file of this module) exist with mode 0600, or narrow it to that: SQLite creates
    its files with the process's umask (0644 by default), and it gives its journal the database's mode."""
    path.parent.mkdir(parents=True, exist_ok=True)
    os.close(os.open(path, os.O_CREAT | os.O_RDWR | getattr(os, "O_CLOEXEC", 0), 0o600))
    info = path.stat()
    if stat.S_IMODE(info.st_mode) & 0o077 and info.st_uid == os.geteuid():
        os.chmod(path, 0o600)


@contextlib.contextmanager
def _transaction(path: Path) -> Iterator[sqlite3.Connection]:
    """One IMMEDIATE transaction on a short-lived connection: sign-ins are rare, a connection must not cross
    threads, and no other process writes between its reads and its writes."""
    db = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    try:
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
    finally:
        db.close()


class LimiterStateUnavailable(RuntimeWarning):
    """The shared sign-in counts cannot be used; this process counts failures in memory."""


@dataclass
class _Failures:
    count: int = 0
    locked_until: float = 0.0


class _MemoryCounts:
    """Failure counts of this process only."""

    def __init__(self, max_keys: int):
        self.max_keys = max_keys
        self._failures: dict[str, _Failures] = {}

    def get(self, keys: tuple[str, ...]) -> dict[str, _Failures]:
        return {k: self._failures[k] for k in keys if k in self._failures}

    def update(self, keys: tuple[str, ...], change: Callable[[str, _Failures], _Failures], now: float) -> None:
        if len(self._failures) >= self.max_keys:
            # Forget unlocked keys first: a flood of fresh client ids must not grow memory without bound.
            self._failures = {k: f for k, f in self._failures.items() if f.locked_until > now}
        for key in keys:
            self._failures[key] = change(key, self._failures.get(key, _Failures()))

    def forget(self, keys: tuple[str, ...]) -> None:
        for key in keys:
            self._failures.pop(key, None)

    def reserve(self, keys: tuple[str, ...], change: Callable[[str, _Failures], _Failures], now: float) -> float:
        wait = _longest_wait(self.get(keys), now)
        if wait <= 0:
            self.update(keys, change, now)
        return wait


def _longest_wait(found: dict[str, _Failures], now: float) -> float:
    return max([0.0] + [f.locked_until - now for f in found.values()])


class _SharedCounts:
    """Failure counts in a SQLite file, read and changed in one transaction per call, so that processes
    sharing the file never lose each other's failures."""

    def __init__(self, path: Path, max_keys: int):
        self.path, self.max_keys = path, max_keys
        private_file(path)
        with self._connection() as db:
            db.execute("CREATE TABLE IF NOT EXISTS failures (key TEXT PRIMARY KEY, count INTEGER NOT NULL, "
                       "locked_until REAL NOT NULL)")
            db.execute("SELECT count(*) FROM failures").fetchone()

    def _connection(self):
        return _transaction(self.path)

    def get(self, keys: tuple[str, ...]) -> dict[str, _Failures]:
        with self._connection() as db:
            rows = db.execute(f"SELECT key, count, locked_until FROM failures WHERE key IN "
                              f"({','.join('?' * len(keys))})", keys).fetchall()
        return {k: _Failures(int(c), float(t)) for k, c, t in rows}

    def update(self, keys: tuple[str, ...], change: Callable[[str, _Failures], _Failures], now: float) -> None:
        with self._connection() as db:
            self._update(db, keys, change, now)

    def _update(self, db: sqlite3.Connection, keys: tuple[str, ...], change: Callable[[str, _Failures], _Failures],
                now: float) -> None:
        (size,) = db.execute("SELECT count(*) FROM failures").fetchone()
        if size >= self.max_keys:
            db.execute("DELETE FROM failures WHERE locked_until <= ?", (now,))
        for key in keys:
            row = db.execute("SELECT count, locked_until FROM failures WHERE key = ?", (key,)).fetchone()
            entry = change(key, _Failures(int(row[0]), float(row[1])) if row else _Failures())
            db.execute("INSERT OR REPLACE INTO failures (key, count, locked_until) VALUES (?, ?, ?)",
                       (key, entry.count, entry.locked_until))

    def reserve(self, keys: tuple[str, ...], change: Callable[[str, _Failures], _Failures], now: float) -> float:
        # One IMMEDIATE transaction: no other process counts between this check and this count.
        with self._connection() as db:
            rows = db.execute(f"SELECT key, count, locked_until FROM failures WHERE key IN "
                              f"({','.join('?' * len(keys))})", keys).fetchall()
            wait = _longest_wait({k: _Failures(int(c), float(t)) for k, c, t in rows}, now)
            if wait <= 0:
                self._update(db, keys, change, now)
        return wait

    def forget(self, keys: tuple[str, ...]) -> None:
        with self._connection() as db:
            db.executemany("DELETE FROM failures WHERE key = ?", [(k,) for k in keys])


class RateLimiter:
    """Failed attempts by key, with exponential back-off. Thread-safe; ``clock`` is injectable for tests.

    Two kinds of key: ``user:NAME|CLIENT`` (one name from one client, ``free`` failures) and ``client:CLIENT``
    (every name from one client, ``client_free``). There is no key of a name alone: a guesser's failures,
    from however many addresses, delay those addresses, never the account's owner at hers.

    With ``path`` the counts are shared with every process using that file (``clock`` must then be a wall
    clock, the same in every process); without, or when the file cannot be used, they are this process's.
    """

    def __init__(self, free: int = 5, base: float = 2.0, cap: float = 900.0, max_keys: int = 100_000,
                 clock: Callable[[], float] = time.time, client_free: int | None = None,
                 path: Path | None = None):
        self.free, self.base, self.cap, self.max_keys = free, base, cap, max_keys
        self.client_free = client_free if client_free is not None else 4 * free
        self.clock = clock
        self._lock = threading.Lock()
        self._counts: _MemoryCounts | _SharedCounts = _MemoryCounts(max_keys)
        if path is not None:
            try:
                self._counts = _SharedCounts(Path(path), max_keys)
            except (OSError, sqlite3.Error) as exc:
                self._fall_back(Path(path), exc)

    @classmethod
    def for_settings(cls, settings: Settings, **kwargs) -> "RateLimiter":
        """The limiter every process of a server shares: its counts in the cache dir."""
        return cls(path=Path(settings.cache_dir) / STATE_FILE, **kwargs)

    @staticmethod
    def keys(name: str, client: str) -> tuple[str, str]:
        """The keys one sign-in of ``name`` from ``client`` counts against."""
        name = name.strip().lower()
        return f"user:{name}|{client}", f"client:{client}"  # "|" is in no user name

    @property
    def shared(self) -> bool:
        return isinstance(self._counts, _SharedCounts)

    def _fall_back(self, path: Path, exc: Exception) -> None:
        warnings.warn(f"sign-in limits {path}: cannot be used ({exc}); failed sign-ins are counted in this "
                      "process's memory only (set MUTTLAB_CACHE_DIR to a writable folder)",
                      LimiterStateUnavailable, stacklevel=3)
        self._counts = _MemoryCounts(self.max_keys)

    def _call(self, method: str, *args):
        with self._lock:
            try:
                return getattr(self._counts, method)(*args)
            except (OSError, sqlite3.Error) as exc:
                if not isinstance(self._counts, _SharedCounts):
                    raise
                # The file went bad under us (deleted folder, disk full, damaged): keep limiting in memory.
                self._fall_back(self._counts.path, exc)
                return getattr(self._counts, method)(*args)

    def _free(self, key: str) -> int:
        return self.client_free if key.startswith("client:") else self.free

    def _count(self, now: float) -> Callable[[str, _Failures], _Failures]:
        def change(key: str, entry: _Failures) -> _Failures:
            count = entry.count + 1
            free = self._free(key)
            locked_until = entry.locked_until
            if count >= free:
                locked_until = max(locked_until, now + min(self.cap, self.base * 2 ** min(count - free, 64)))
            return _Failures(count, locked_until)

        return change

    def wait(self, *keys: str) -> float:
        """Seconds before any of ``keys`` may try again (0 when all may)."""
        now = self.clock()
        return _longest_wait(self._call("get", keys), now)

    def attempt(self, *keys: str) -> float:
        """Check and count one attempt in one step: 0 when ``keys`` may try now (the attempt is counted as a
        failure until :meth:`succeeded` clears it), else the seconds to wait (nothing counted). Two
        simultaneous attempts can never both pass a check that only one of them may pass."""
        now = self.clock()
        return self._call("reserve", keys, self._count(now), now)

    def failed(self, *keys: str) -> None:
        now = self.clock()
        self._call("update", keys, self._count(now), now)

    def succeeded(self, *keys: str) -> None:
        self._call("forget", keys)


# Password verifications running at once in this process (argon2id holds 64 MiB each); a sign-in waits at
# most VERIFY_WAIT_S for a slot, then is told to retry.
MAX_VERIFICATIONS = 4
VERIFY_WAIT_S = 10.0
_VERIFY_SLOTS = threading.BoundedSemaphore(MAX_VERIFICATIONS)

SESSIONS_FILE = "sessions.sqlite"
TOKEN_BYTES = 32


class SignInEnded(PermissionDenied):
    """The sign-in an identity came from no longer holds (signed out, expired, its credential no longer valid)."""

    def __init__(self):
        super().__init__("this sign-in has ended (signed out, expired, its account removed, disabled, added again "
                         "or given a new password, or the shared credential changed); sign in again")


SharedCredential = Callable[[Settings], "str | None"]


def _settings_credential(settings: Settings) -> str | None:
    return settings.annotator_token


def _bound(token: str, shared: str) -> str:
    """What a shared-credential session records of that credential: an HMAC keyed by the session's own token,
    so that the sessions file tells nothing about the credential to someone without the token."""
    return hmac.new(token.encode("utf-8", "surrogatepass"), shared.encode("utf-8", "surrogatepass"),
                    hashlib.sha256).hexdigest()


_COLUMNS = ("digest", "name", "role", "account", "account_id", "credential", "expires_at", "revoked")


class SessionStore:
    """Server-side sessions in a SQLite file of the cache dir (mode 0600), shared by every process of a server:
    a session is found by its token (only the token's SHA-256 is stored), records the account's id and
    credential version (or a keyed digest of the shared credential), expires ``session_ttl`` seconds after the
    sign-in and is revoked by signing out, or with every other session of its name by :meth:`end_all`."""

    _ready: set[Path] = set()  # files whose table this process has made (a lookup then takes no write lock)

    def __init__(self, path: Path, clock: Callable[[], float] = time.time):
        self.path, self.clock = Path(path), clock
        if self.path in self._ready and self.path.is_file():
            return
        try:
            private_file(self.path)
            with self._connection() as db:
                found = [row[1] for row in db.execute("PRAGMA table_info(sessions)")]
                if found and tuple(found) != _COLUMNS:
                    # Sessions of an older version were bound to nothing but a name: they all end here.
                    db.execute("DROP TABLE sessions")
                db.execute("CREATE TABLE IF NOT EXISTS sessions (digest TEXT PRIMARY KEY, name TEXT NOT NULL, "
                           "role TEXT NOT NULL, account INTEGER NOT NULL, account_id TEXT NOT NULL, "
                           "credential TEXT NOT NULL, expires_at REAL NOT NULL, revoked INTEGER NOT NULL DEFAULT 0)")
        except (OSError, sqlite3.Error) as exc:
            raise MuttlabError(f"sessions {self.path}: cannot be used ({exc}); set MUTTLAB_CACHE_DIR to a "
                               "writable folder") from None
        self._ready.add(self.path)

    @classmethod
    def for_settings(cls, settings: Settings, clock: Callable[[], float] = time.time) -> "SessionStore":
        return cls(Path(settings.cache_dir) / SESSIONS_FILE, clock)

    def _connection(self):
        return _transaction(self.path)

    @staticmethod
    def _digest(token: str) -> str:
        return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()

    def create(self, identity: Identity, ttl: float, account: User | None = None, shared: str | None = None,
               shared_credential: SharedCredential = _settings_credential) -> "Session":
        """A new session for ``identity``, bound to ``account`` (its id and credential version, as they were
        when the password was checked) or, without one, to the shared credential ``shared``."""
        if (account is None) == (shared is None):
            raise ValueError("a session is bound to an account or to the shared credential")
        token = secrets.token_urlsafe(TOKEN_BYTES)
        now = self.clock()
        bound = (account.id, account.credential) if account is not None else ("", _bound(token, shared))
        with self._connection() as db:
            db.execute("DELETE FROM sessions WHERE expires_at <= ?", (now,))
            db.execute("INSERT INTO sessions (digest, name, role, account, account_id, credential, expires_at) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?)", (self._digest(token), identity.name, identity.role.value,
                                                        int(account is not None), *bound, now + ttl))
        credential = SignedIn(token, self.path, self.clock, shared_credential)
        return Session(Identity(identity.name, identity.role, credential), now + ttl, token)

    def identity(self, token: str, settings: Settings,
                 shared_credential: SharedCredential = _settings_credential) -> Identity | None:
        """The identity of a live session as it stands now: None when the token names no session, or an
        expired or revoked one, or one whose credential no longer holds (its account removed, disabled, added
        again or given a new password; the shared credential changed, or replaced by accounts); the account's
        current role otherwise. ``shared_credential`` gives the shared annotator credential as it is now."""
        if not isinstance(token, str) or not token or len(token) > 4 * TOKEN_BYTES:
            return None
        try:
            db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S)
            try:
                row = db.execute("SELECT name, role, account, account_id, credential, expires_at, revoked "
                                 "FROM sessions WHERE digest = ?", (self._digest(token),)).fetchone()
            finally:
                db.close()
        except sqlite3.Error:
            return None
        if row is None:
            return None
        name, role, account, account_id, credential, expires_at, revoked = row
        if revoked or self.clock() >= expires_at:
            return None
        role = Role(role)
        if account:
            if settings.users_file is None:
                return None
            user = UserStore.of(settings).account(name)
            if user is None or not hmac.compare_digest(f"{user.id}|{user.credential}", f"{account_id}|{credential}"):
                return None
            role = user.role
        else:
            shared = shared_credential(settings)
            if settings.users_file is not None or not shared or \
                    not hmac.compare_digest(_bound(token, shared), credential):
                return None
        return Identity(name, role, SignedIn(token, self.path, self.clock, shared_credential))

    def revoke(self, token: str) -> None:
        with self._connection() as db:
            db.execute("UPDATE sessions SET revoked = 1 WHERE digest = ?", (self._digest(token),))

    def end_all(self, name: str) -> int:
        """Sign ``name`` out everywhere: revoke every live session of that name (an account's, or one opened
        with the shared credential under that name); returns how many were live."""
        with self._connection() as db:
            cursor = db.execute("UPDATE sessions SET revoked = 1 WHERE name = ? AND revoked = 0 AND expires_at > ?",
                                (name, self.clock()))
            return cursor.rowcount


def end_sessions(actor: Identity, settings: Settings, name: str) -> int:
    """Sign ``name`` out everywhere on this server (:meth:`SessionStore.end_all`): asked by a maintainer (the
    command line's local operator is one), or by ``name`` itself while its sign-in holds. Returns how many
    sessions ended."""
    from muttlab.access.users import check_name

    name = check_name(name)
    own = actor is not None and actor.credential is not None and actor.name == name
    if own:
        actor.credential.recheck(settings)  # SignInEnded when it no longer holds
    else:
        require(actor, Action.MANAGE_USERS, settings)
    path = Path(settings.cache_dir) / SESSIONS_FILE
    return SessionStore(path).end_all(name) if path.is_file() else 0


@dataclass(frozen=True)
class SignedIn:
    """The credential of a signed-in identity: its session, looked up again at each write."""

    token: str = field(repr=False)
    path: Path
    clock: Callable[[], float] = field(default=time.time, repr=False, compare=False)
    shared_credential: SharedCredential = field(default=_settings_credential, repr=False, compare=False)

    def recheck(self, settings: Settings) -> Identity:
        identity = SessionStore(self.path, self.clock).identity(self.token, settings, self.shared_credential)
        if identity is None:
            raise SignInEnded()
        return identity


@dataclass(frozen=True)
class Session:
    """A sign-in: its identity (with the credential that re-checks it), when it ends, and its token (the
    secret the browser holds; empty for a session that lives only in one page's state)."""

    identity: Identity
    expires_at: float
    token: str = field(default="", repr=False)

    def current(self, now: float) -> Identity | None:
        return self.identity if now < self.expires_at else None


class Authenticator:
    """Sign-in for one server: the limiter, a slot among :data:`MAX_VERIFICATIONS`, then the users file (or
    the annotator token); a correct sign-in opens a server-side session.

    ``shared_credential`` gives the shared annotator credential as it is now (the dashboard's reads its
    secrets too); a session opened with it ends as soon as it changes."""

    def __init__(self, settings: Settings, limiter: RateLimiter | None = None,
                 clock: Callable[[], float] = time.time, shared_credential: SharedCredential | None = None):
        self.settings = settings
        self.limiter = limiter or RateLimiter.for_settings(settings)
        self.clock = clock
        self.shared_credential = shared_credential or _settings_credential

    @property
    def sessions(self) -> SessionStore:
        return SessionStore.for_settings(self.settings, self.clock)

    def _guarded(self, name: str, client: str, check: Callable[[], "tuple[Identity, dict] | None"]) -> Session:
        keys = RateLimiter.keys(name, client)
        if not _VERIFY_SLOTS.acquire(timeout=VERIFY_WAIT_S):
            raise SignInRefused("the server is busy checking other sign-ins; try again in a few seconds",
                                retry_after=VERIFY_WAIT_S)
        try:
            wait = self.limiter.attempt(*keys)
            if wait > 0:
                raise SignInRefused(f"too many failed sign-ins; try again in {int(wait) + 1} s", retry_after=wait)
            identity = check()
        finally:
            _VERIFY_SLOTS.release()
        if identity is None:
            raise SignInRefused("that name and password do not match an account")
        self.limiter.succeeded(*keys)
        identity, binding = identity
        return self.sessions.create(identity, self.settings.session_ttl, shared_credential=self.shared_credential,
                                    **binding)

    def sign_in(self, name: str, password: str, client: str) -> Session:
        """A session for a correct name and password, bound to the account as it was checked;
        :class:`SignInRefused` otherwise or when backing off."""
        if self.settings.read_only:
            raise SignInRefused("this server is read-only: there is nothing to sign in for")
        store = UserStore.of(self.settings)

        def check():
            user = store.verify_account(name, password)
            return (Identity(user.name, user.role), {"account": user}) if user is not None else None

        return self._guarded(name, client, check)

    def sign_in_with_token(self, name: str, token: str, expected: str | None, client: str) -> Session:
        """The older shared annotator credential: a correct token makes ``name`` an annotator (no other role); the
        session ends when the credential changes or accounts replace it."""
        from muttlab.access.users import check_name

        if self.settings.read_only:
            raise SignInRefused("this server is read-only: there is nothing to sign in for")
        name = check_name(name)

        def check():
            if expected and token and hmac.compare_digest(token.encode("utf-8"), expected.encode("utf-8")):
                return Identity(name, Role.ANNOTATOR), {"shared": expected}
            return None

        return self._guarded(name, client, check)

    def current(self, session: Session | None) -> Identity | None:
        """The session's identity as it stands now; None once it has expired, been revoked or lost its account."""
        if session is None:
            return None
        if not session.token:
            return session.current(self.clock())
        return self.sessions.identity(session.token, self.settings, self.shared_credential)

    def resume(self, token: str | None) -> Identity | None:
        """The identity of the session a browser's cookie names, if it is live."""
        return self.sessions.identity(token, self.settings, self.shared_credential) if token else None

    def sign_out(self, token: str | None) -> None:
        """Revoke the session: its token no longer names anyone, in any tab or process."""
        if token:
            self.sessions.revoke(token)
