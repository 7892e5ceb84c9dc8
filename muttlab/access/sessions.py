"""Signing in: the rate limit on failed attempts and sessions that expire.

The limiter is server-side state shared by every session of the process (not a browser session's state,
which a visitor resets by opening a new tab). Failures are counted per user name and per client; after
``free`` failures a name (``client_free`` failures a client address, which a reverse proxy or a campus NAT
shares between many people) is locked for ``base`` seconds, doubling with each further failure up to
``cap`` (exponential back-off, as RFC 6238 §5.2 and NIST SP 800-63B §5.2.2 recommend for guessable
secrets). A correct sign-in clears the name's and the client's counts.

The counts live in a small SQLite file in the cache dir (:data:`STATE_FILE`), so every server process that
shares it (several ``muttlab serve`` workers behind one proxy, a restarted server) sees the same lock-outs;
a guesser cannot reset them by landing on another process. When that file cannot be used (read-only
folder, damaged file), the counts are kept in the process's memory with one warning: still limited, per
process.
"""
from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from muttlab.access.roles import Identity, Role
from muttlab.access.users import UserStore
from muttlab.errors import MuttlabError
from muttlab.settings import Settings


class SignInRefused(MuttlabError):
    """The sign-in was refused: wrong credentials, or too many failures (then ``retry_after`` is set)."""

    def __init__(self, message: str, retry_after: float = 0.0):
        super().__init__(message)
        self.retry_after = retry_after


STATE_FILE = "signin-failures.sqlite"
# A sign-in waits at most this long for another process's write; the counts are tiny, writes are instant.
BUSY_TIMEOUT_S = 5.0


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


class _SharedCounts:
    """Failure counts in a SQLite file, read and changed in one transaction per call, so that processes
    sharing the file never lose each other's failures."""

    def __init__(self, path: Path, max_keys: int):
        self.path, self.max_keys = path, max_keys
        path.parent.mkdir(parents=True, exist_ok=True)
        with self._connection() as db:
            db.execute("CREATE TABLE IF NOT EXISTS failures (key TEXT PRIMARY KEY, count INTEGER NOT NULL, "
                       "locked_until REAL NOT NULL)")
            db.execute("SELECT count(*) FROM failures").fetchone()

    @contextlib.contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        # One short-lived connection per call: sign-ins are rare and a connection must not cross threads.
        db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
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

    def get(self, keys: tuple[str, ...]) -> dict[str, _Failures]:
        with self._connection() as db:
            rows = db.execute(f"SELECT key, count, locked_until FROM failures WHERE key IN "
                              f"({','.join('?' * len(keys))})", keys).fetchall()
        return {k: _Failures(int(c), float(t)) for k, c, t in rows}

    def update(self, keys: tuple[str, ...], change: Callable[[str, _Failures], _Failures], now: float) -> None:
        with self._connection() as db:
            (size,) = db.execute("SELECT count(*) FROM failures").fetchone()
            if size >= self.max_keys:
                db.execute("DELETE FROM failures WHERE locked_until <= ?", (now,))
            for key in keys:
                row = db.execute("SELECT count, locked_until FROM failures WHERE key = ?", (key,)).fetchone()
                entry = change(key, _Failures(int(row[0]), float(row[1])) if row else _Failures())
                db.execute("INSERT OR REPLACE INTO failures (key, count, locked_until) VALUES (?, ?, ?)",
                           (key, entry.count, entry.locked_until))

    def forget(self, keys: tuple[str, ...]) -> None:
        with self._connection() as db:
            db.executemany("DELETE FROM failures WHERE key = ?", [(k,) for k in keys])


class RateLimiter:
    """Failed attempts by key, with exponential back-off. Thread-safe; ``clock`` is injectable for tests.

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

    def wait(self, *keys: str) -> float:
        """Seconds before any of ``keys`` may try again (0 when all may)."""
        now = self.clock()
        found = self._call("get", keys)
        return max([0.0] + [f.locked_until - now for f in found.values()])

    def failed(self, *keys: str) -> None:
        now = self.clock()

        def change(key: str, entry: _Failures) -> _Failures:
            count = entry.count + 1
            free = self.client_free if key.startswith("client:") else self.free
            locked_until = entry.locked_until
            if count >= free:
                locked_until = max(locked_until, now + min(self.cap, self.base * 2 ** min(count - free, 64)))
            return _Failures(count, locked_until)

        self._call("update", keys, change, now)

    def succeeded(self, *keys: str) -> None:
        self._call("forget", keys)


@dataclass(frozen=True)
class Session:
    """A signed-in identity and when its sign-in stops counting (``clock`` seconds)."""

    identity: Identity
    expires_at: float

    def current(self, now: float) -> Identity | None:
        return self.identity if now < self.expires_at else None


class Authenticator:
    """Sign-in for one server: checks the limiter, then the users file (or the annotator token)."""

    def __init__(self, settings: Settings, limiter: RateLimiter | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self.settings = settings
        self.limiter = limiter or RateLimiter.for_settings(settings)
        self.clock = clock

    def _keys(self, name: str, client: str) -> tuple[str, str]:
        return f"user:{name.strip().lower()}", f"client:{client}"

    def _guarded(self, name: str, client: str, check: Callable[[], Identity | None]) -> Session:
        keys = self._keys(name, client)
        wait = self.limiter.wait(*keys)
        if wait > 0:
            raise SignInRefused(f"too many failed sign-ins; try again in {int(wait) + 1} s", retry_after=wait)
        identity = check()
        if identity is None:
            self.limiter.failed(*keys)
            raise SignInRefused("that name and password do not match an account")
        self.limiter.succeeded(*keys)
        return Session(identity, self.clock() + self.settings.session_ttl)

    def sign_in(self, name: str, password: str, client: str) -> Session:
        """A session for a correct name and password; :class:`SignInRefused` otherwise or when locked out."""
        if self.settings.read_only:
            raise SignInRefused("this server is read-only: there is nothing to sign in for")
        store = UserStore.of(self.settings)
        return self._guarded(name, client, lambda: store.verify(name, password))

    def sign_in_with_token(self, name: str, token: str, expected: str | None, client: str) -> Session:
        """The older shared annotator credential: a correct token makes ``name`` an annotator (no other role)."""
        import hmac

        from muttlab.access.users import check_name

        if self.settings.read_only:
            raise SignInRefused("this server is read-only: there is nothing to sign in for")
        name = check_name(name)

        def check() -> Identity | None:
            if expected and token and hmac.compare_digest(token.encode("utf-8"), expected.encode("utf-8")):
                return Identity(name, Role.ANNOTATOR)
            return None

        return self._guarded(name, client, check)

    def current(self, session: Session | None) -> Identity | None:
        """The session's identity while it lasts; None once it has expired (or without one)."""
        return session.current(self.clock()) if session is not None else None
