"""The public demo's share per visitor: on a read-only server, where every visitor is anonymous, nobody can tie
the server up.

What it answers from the memo, the shipped results or the score caches costs a visitor nothing. Work it has to
compute for a visitor (a grid, a drill-down cell, a study, a severity curve, a challenge set's scores: every
``services.memoised(..., costly=...)``) runs within

* **the visitor's share**: ``MUTTLAB_VISITOR_COMPUTE_S`` seconds (default 120) of such work in any
  :data:`WINDOW_S` (15 minutes), measured as the time its computations run; a computation that reaches the end
  of the share is stopped at its next progress report or queue poll, and what it scored stays in the cache;
* **one computation at a time per visitor**, whatever the number of tabs;
* **a cap for the whole server**: at most ``MUTTLAB_ANONYMOUS_JOBS`` (default 1) visitors' computations at once;
  a request past it is refused with a message, never queued behind the others;
* **the quick metrics only** (:func:`is_quick`): a neural, learned, TERp or
  BADGER computation takes minutes of a cold server and is refused (the shipped grid and studies have them);

and the Published page's recomputation and the Learned page's evaluation, which run for minutes as one piece,
are switched off there (:func:`refuse_on_demo`).

**Who is a visitor.** The client address the server saw (``st.context.ip_address``, the WebSocket's peer, read by
:func:`muttlab.dashboard.auth.client_address`; forwarded headers only as the server's proxy settings allow), an
IPv6 address by its /64 network (one household's or one machine's block). Not the browser session, which each new
tab renews, nor a cookie, which a private window or a cleared cookie jar renews for free: another share takes
another address (in IPv6, another /64 network). Behind a proxy that the server does not trust for forwarded
headers, every visitor has the proxy's address and they share one share; the server-wide cap holds either way.
"""
from __future__ import annotations

import ipaddress
import math
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Callable, Sequence

from muttlab.errors import MuttlabError
from muttlab.settings import Settings, load_settings

WINDOW_S = 15 * 60.0
OWN_MACHINE = ("or run it on your own machine, where nothing is shared (`pip install muttlab`; "
               "docs/deploy.md)")


class DemoLimit(MuttlabError):
    """The demo refused or stopped a computation: over the visitor's share or the server's cap, a slow metric,
    or an action it does not offer."""


@dataclass
class Lease:
    """One visitor's computation under way: it may run ``allowed`` seconds from ``started``."""

    visitor: str
    what: str
    started: float
    allowed: float
    clock: Callable[[], float]
    seconds: float  # the share, for messages
    window_s: float

    def elapsed(self) -> float:
        return self.clock() - self.started

    def check(self) -> None:
        """Raises DemoLimit once the computation has used the rest of the visitor's share."""
        if self.elapsed() > self.allowed:
            raise DemoLimit(f"{self.what} was stopped: this public demo gives each visitor {self.seconds:g} s of "
                            f"computing in {self.window_s / 60:g} minutes, and yours is used up. What was scored "
                            "stays in the cache, so asking again later continues from there; " + OWN_MACHINE + ".")


class Budget:
    """Each visitor's computing time in the last ``window_s`` seconds, the computations running, and the limits
    on both (see the module's doc)."""

    def __init__(self, seconds: float, jobs: int, window_s: float = WINDOW_S,
                 clock: Callable[[], float] = time.monotonic):
        self.seconds = float(seconds)
        self.jobs = max(1, int(jobs))
        self.window_s = float(window_s)
        self.clock = clock
        self._lock = threading.Lock()
        self._charges: dict[str, deque[tuple[float, float]]] = {}
        self._running: dict[str, Lease] = {}

    def _spent(self, visitor: str, now: float) -> float:
        charges = self._charges.get(visitor)
        if not charges:
            return 0.0
        while charges and charges[0][0] <= now - self.window_s:
            charges.popleft()
        return sum(seconds for _, seconds in charges)

    def left(self, visitor: str) -> float:
        """Seconds of the visitor's share not used in the last window."""
        with self._lock:
            return max(0.0, self.seconds - self._spent(visitor, self.clock()))

    def running(self) -> int:
        with self._lock:
            return len(self._running)

    def take(self, visitor: str, what: str) -> Lease:
        """A lease for ``what``, or DemoLimit saying why not (the visitor's other computation, the server's cap,
        the share used up)."""
        with self._lock:
            now = self.clock()
            mine = self._running.get(visitor)
            if mine is not None:
                raise DemoLimit(f"Your other tab (or another visitor at your address) is computing {mine.what}: "
                                "this public demo runs one computation at a time per visitor. Wait for it to end, "
                                "or cancel it there, then ask again.")
            if len(self._running) >= self.jobs:
                raise DemoLimit(f"This public demo is computing for {len(self._running)} other visitor"
                                f"{'s' if len(self._running) != 1 else ''} right now, as many as it takes at once: "
                                f"nothing was started. Try again in a minute, {OWN_MACHINE}.")
            left = self.seconds - self._spent(visitor, now)
            if left <= 0:
                charges = self._charges[visitor]
                # When enough of the window's charges have aged out to give back a second of share.
                wait, freed = self.window_s, -left
                for end, seconds in charges:
                    freed -= seconds
                    if freed < 1:
                        wait = end + self.window_s - now
                        break
                raise DemoLimit(f"This public demo gives each visitor {self.seconds:g} s of computing in "
                                f"{self.window_s / 60:g} minutes, and yours is used up: nothing was started. More "
                                f"in about {max(1, math.ceil(wait / 60))} min; what you computed before is kept, "
                                f"so a repeated request is answered at once; {OWN_MACHINE}.")
            lease = Lease(visitor, what, now, left, self.clock, self.seconds, self.window_s)
            self._running[visitor] = lease
            return lease

    def give_back(self, lease: Lease) -> None:
        """End ``lease`` and charge its visitor the time it ran."""
        with self._lock:
            if self._running.get(lease.visitor) is lease:
                del self._running[lease.visitor]
            now = self.clock()
            self._charges.setdefault(lease.visitor, deque()).append((now, max(0.0, now - lease.started)))


def visitor_key(address: str) -> str:
    """The visitor a client address belongs to: ``ip:<IPv4>``, ``ip:<IPv6 /64 network>``, or the address text as
    given when it is no IP address (``ip:unknown``: every such session is one visitor)."""
    text = address.removeprefix("ip:")
    try:
        ip = ipaddress.ip_address(text.split("%")[0])
    except ValueError:
        return f"ip:{text}"
    mapped = getattr(ip, "ipv4_mapped", None)
    if ip.version == 6 and mapped is None:
        return f"ip:{ipaddress.ip_network(f'{ip}/64', strict=False)}"
    return f"ip:{mapped or ip}"


def governs(settings: Settings) -> bool:
    """Whether these settings serve the public demo, where every visitor's computations are governed here."""
    return settings.read_only


_BUDGETS: dict[tuple[int, int], Budget] = {}
_BUDGETS_LOCK = threading.Lock()


def demo_budget(settings: Settings) -> Budget:
    """The server's one budget for these limits (process-wide, out of every browser's reach)."""
    limits = settings.limits
    key = (limits.visitor_compute_s, limits.anonymous_jobs)
    with _BUDGETS_LOCK:
        if key not in _BUDGETS:
            _BUDGETS[key] = Budget(limits.visitor_compute_s, limits.anonymous_jobs)
        return _BUDGETS[key]


_CURRENT = threading.local()


def _in_page() -> bool:
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    return get_script_run_ctx(suppress_warning=True) is not None


def session_id() -> str:
    """The browser session asking (the fair queue takes sessions in turn); one id outside a Streamlit run."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx(suppress_warning=True)
    return ctx.session_id if ctx is not None else "script"


def current_visitor() -> str:
    """This page's visitor (see the module's doc)."""
    from muttlab.dashboard.auth import client_address

    return visitor_key(client_address())


# Metrics that score a sentence in well under a second once loaded: the Playground shows them first.
QUICK_PREFIXES = ("BLEU", "ROUGE", "CIDEr", "METEOR", "chrF", "sentBLEU")


def is_quick(name: str) -> bool:
    return name == "TER" or name.startswith(QUICK_PREFIXES)


def slow_metrics(settings: Settings, metrics: Sequence[str]) -> list[str]:
    """Of ``metrics``, those the demo does not compute live (outside ``is_quick``); none elsewhere."""
    return [m for m in metrics if not is_quick(m)] if governs(settings) else []


def governed(settings: Settings | None, what: str, compute: Callable[[], object], metrics: Sequence[str] = (),
             visitor: str | None = None):
    """``compute()``, on the demo within the visitor's share (a lease held while it runs; :func:`check` stops it
    once the share is used up) and the server's cap, and never with a slow metric; elsewhere, or outside a page
    (the warm-up), or inside a computation already under a lease, simply ``compute()``. ``visitor`` names the
    visitor where no page run is there to ask (a download button's file, made in a thread of Streamlit's own).

    Raises:
      DemoLimit: refused before anything ran (the other tab's computation, the cap, the share, a slow metric),
        or stopped on the way.
    """
    settings = settings or load_settings()
    if not governs(settings) or (visitor is None and not _in_page()) or getattr(_CURRENT, "lease", None) is not None:
        return compute()
    slow = slow_metrics(settings, metrics)
    if slow:
        raise DemoLimit(f"{', '.join(slow)} take{'s' if len(slow) == 1 else ''} minutes of a cold server's time, "
                        "so this public demo computes only the quick metrics live (BLEU, ROUGE, CIDEr, METEOR, "
                        "chrF, sentence BLEU, TER); the precomputed grid and the shipped studies have the others. "
                        f"Choose quick metrics, {OWN_MACHINE}.")
    budget = demo_budget(settings)
    lease = budget.take(visitor or current_visitor(), what)
    _CURRENT.lease = lease
    try:
        return compute()
    finally:
        _CURRENT.lease = None
        budget.give_back(lease)


def scoring_settings(settings: Settings) -> Settings:
    """The settings a visitor's big job scores with: on the demo, in this process only (``workers=1``), where its
    progress reports stop it once its visitor has gone; scoring workers of their own (a METEOR process each)
    would run on after it, out of the queue's reach. Elsewhere ``settings`` as they are."""
    return settings.with_overrides(workers=1) if governs(settings) else settings


def check() -> None:
    """In a page's thread: raises DemoLimit when the computation under way has used up its visitor's share."""
    lease = getattr(_CURRENT, "lease", None)
    if lease is not None:
        lease.check()


def refuse_on_demo(settings: Settings, what: str, instead: str) -> None:
    """Raises DemoLimit on the demo for ``what``, an action it does not offer (``instead``: where to get it)."""
    if governs(settings):
        raise DemoLimit(f"{what} is switched off on this public demo: it keeps the server busy for minutes. "
                        f"{instead}")
