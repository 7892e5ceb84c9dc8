"""Signing in: the rate limit on failed attempts and sessions that expire.

The limiter is server-side state shared by every session of the process (not a browser session's state,
which a visitor resets by opening a new tab). Failures are counted per user name and per client; after
``free`` failures a name (``client_free`` failures a client address, which a reverse proxy or a campus NAT
shares between many people) is locked for ``base`` seconds, doubling with each further failure up to
``cap`` (exponential back-off, as RFC 6238 §5.2 and NIST SP 800-63B §5.2.2 recommend for guessable
secrets). A correct sign-in clears the name's and the client's counts.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Callable

from muttlab.access.roles import Identity, Role
from muttlab.access.users import UserStore
from muttlab.errors import MuttlabError
from muttlab.settings import Settings


class SignInRefused(MuttlabError):
    """The sign-in was refused: wrong credentials, or too many failures (then ``retry_after`` is set)."""

    def __init__(self, message: str, retry_after: float = 0.0):
        super().__init__(message)
        self.retry_after = retry_after


@dataclass
class _Failures:
    count: int = 0
    locked_until: float = 0.0


class RateLimiter:
    """Failed attempts by key, with exponential back-off. Thread-safe; ``clock`` is injectable for tests."""

    def __init__(self, free: int = 5, base: float = 2.0, cap: float = 900.0, max_keys: int = 100_000,
                 clock: Callable[[], float] = time.monotonic, client_free: int | None = None):
        self.free, self.base, self.cap, self.max_keys = free, base, cap, max_keys
        self.client_free = client_free if client_free is not None else 4 * free
        self.clock = clock
        self._lock = threading.Lock()
        self._failures: dict[str, _Failures] = {}

    def wait(self, *keys: str) -> float:
        """Seconds before any of ``keys`` may try again (0 when all may)."""
        now = self.clock()
        with self._lock:
            return max([0.0] + [f.locked_until - now for k in keys if (f := self._failures.get(k))])

    def failed(self, *keys: str) -> None:
        now = self.clock()
        with self._lock:
            if len(self._failures) >= self.max_keys:
                # Forget unlocked keys first: a flood of fresh client ids must not grow memory without bound.
                self._failures = {k: f for k, f in self._failures.items() if f.locked_until > now}
            for key in keys:
                entry = self._failures.setdefault(key, _Failures())
                entry.count += 1
                free = self.client_free if key.startswith("client:") else self.free
                if entry.count >= free:
                    delay = min(self.cap, self.base * 2 ** (entry.count - free))
                    entry.locked_until = max(entry.locked_until, now + delay)

    def succeeded(self, *keys: str) -> None:
        with self._lock:
            for key in keys:
                self._failures.pop(key, None)


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
        self.limiter = limiter or RateLimiter(clock=clock)
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
