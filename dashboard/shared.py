"""The dashboard's one process cache: every value the server keeps for all its sessions lives here, out of the
reach of browser messages.

Streamlit's own caches can be emptied by any client: the browser's "clear cache" message
(``BackMsg.clear_cache``) calls ``st.cache_resource.clear()`` and ``st.cache_data.clear()`` for the whole server,
which would drop the metric registry, the pair store and locks that other sessions hold, and every result they
wait for. The dashboard uses neither; its values are :class:`Region` tables in this module, which no client
message touches. Two kinds:

* **pinned** (:func:`singleton`): heavy objects, one per function and argument tuple (the settings among the
  arguments), never weighed and never dropped: the metric registry with its METEOR process and models, the loaded
  suite, the pair store, the sign-in limiter, the warm-up, the visitors' suites
  (:mod:`muttlab.dashboard.services.user_suites`, which keeps its own caps inside its entry);
* **byte-capped** (:func:`region`): finished values by key, the least recently used dropped first once they
  weigh more than the region's share of ``MUTTLAB_MEMO_MB`` (:data:`SHARES`; what a value weighs is
  :func:`footprint`). A cap by count let a few big uploads keep gigabytes resident after their tabs closed.

Every entry is computed once per key (:meth:`Region.computed`): two sessions asking at once for the same missing
value compute it once, and each key has its own lock, so one slow value (loading the suite) holds up no other.
A key holds everything the value depends on, the settings included, so two configurations never share an entry.
Only :func:`clear_all`, a maintainer's action, empties the cache; :func:`refuse_client_cache_clearing` also turns
the browser's message itself into a no-op.
"""
from __future__ import annotations

import functools
import logging
import sys
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Callable, Hashable, TypeVar

import numpy as np
import pandas as pd

from muttlab.api import Action, Identity, require
from muttlab.settings import Settings, load_settings

T = TypeVar("T")
LOG = logging.getLogger(__name__)

# Shares of MUTTLAB_MEMO_MB per byte-capped region: finished runs, studies and the pair store's suites take the
# cap; the pieces of pages every visitor gets alike (the landing grid's HTML per filter), the uploaded files a link
# can name, and the Playground's scores and corruptions take parts of it on top, each apart so that a visitor
# trying many filters or sentences cannot push the finished runs out.
SHARES = {"results": 1.0, "pages": 1 / 16, "uploads": 1 / 4, "playground": 1 / 16}

_MISSING = object()


def footprint(value, seen: set[int] | None = None) -> int:
    """Bytes ``value`` holds, followed through containers, dataclasses and objects' attributes (each object
    counted once): pandas objects by ``memory_usage(deep=True)``, arrays by their buffer (and the items of an
    object array), everything else by ``sys.getsizeof``. An estimate, within the allocator's overhead: what a
    region's cap is checked against.

    Not pympler's ``asizeof``: it walks a frame's strings one Python object at a time through its generic
    referents, seconds for a challenge set's results, where pandas counts them in one pass.
    """
    seen = set() if seen is None else seen
    stack, total = [value], 0
    while stack:
        item = stack.pop()
        if id(item) in seen or item is None or isinstance(item, (bool, int, float, type)):
            continue
        seen.add(id(item))
        if isinstance(item, (pd.DataFrame, pd.Series, pd.Index)):
            usage = item.memory_usage(deep=True)
            total += int(usage.sum()) if isinstance(usage, pd.Series) else int(usage)
        elif isinstance(item, np.ndarray):
            total += sys.getsizeof(item)  # with its buffer when it owns one; a view's buffer is its base's
            stack.append(item.base)
            if item.dtype == object:
                stack.extend(item.ravel().tolist())
        elif isinstance(item, (str, bytes, bytearray, memoryview)):
            total += sys.getsizeof(item)
        elif isinstance(item, dict):
            total += sys.getsizeof(item)
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple, set, frozenset)):
            total += sys.getsizeof(item)
            stack.extend(item)
        else:
            total += sys.getsizeof(item)
            attributes = getattr(item, "__dict__", None)
            if attributes is not None:
                stack.append(attributes)
            for name in getattr(type(item), "__slots__", ()):
                stack.append(getattr(item, name, None))
    return total


class Region:
    """Values by key, shared by every session of the process. With ``max_bytes``, the least recently used go
    first once the values weigh more, and a value over the whole cap is not kept; without it (pinned), nothing is
    weighed or dropped. Callers treat the values as read-only."""

    def __init__(self, max_bytes: int | None = None):
        self.max_bytes = None if max_bytes is None else int(max_bytes)
        self.lock = threading.Lock()
        self.items: OrderedDict[Hashable, tuple[object, int]] = OrderedDict()
        self.bytes = 0
        self._computing: dict[Hashable, list] = {}  # key -> [its lock, how many wait on it]

    def _find(self, key: Hashable):
        with self.lock:
            found = self.items.get(key)
            if found is None:
                return _MISSING
            if self.max_bytes is not None:
                self.items.move_to_end(key)
            return found[0]

    def get(self, key: Hashable):
        """The value kept under ``key``, or None; nothing is computed."""
        value = self._find(key)
        return None if value is _MISSING else value

    def __contains__(self, key: Hashable) -> bool:
        with self.lock:
            return key in self.items

    def __len__(self) -> int:
        with self.lock:
            return len(self.items)

    def put(self, key: Hashable, value) -> bool:
        """Keep ``value`` (weighed once, here, in a capped region); False when it alone is over the cap and is
        not kept."""
        size = 0 if self.max_bytes is None else footprint(value)
        with self.lock:
            old = self.items.pop(key, None)
            if old is not None:
                self.bytes -= old[1]
            if self.max_bytes is not None and size > self.max_bytes:
                return False
            self.items[key] = (value, size)
            self.bytes += size
            while self.max_bytes is not None and self.bytes > self.max_bytes:
                _, (_, dropped) = self.items.popitem(last=False)
                self.bytes -= dropped
            return True

    def computed(self, key: Hashable, compute: Callable[[], T]) -> T:
        """The value kept under ``key``, else ``compute()``, kept. Sessions asking at once for one missing key
        compute it once; the lock is per key, never the region's."""
        value = self._find(key)
        if value is not _MISSING:
            return value
        with self.lock:
            waiting = self._computing.setdefault(key, [threading.Lock(), 0])
            waiting[1] += 1
        try:
            with waiting[0]:
                value = self._find(key)
                if value is _MISSING:
                    value = compute()
                    self.put(key, value)
                return value
        finally:
            with self.lock:
                waiting[1] -= 1
                if not waiting[1]:
                    del self._computing[key]

    def drop(self, which: Callable[[Hashable], bool] = lambda key: True) -> None:
        """Forget the values whose key ``which`` accepts (all of them by default)."""
        with self.lock:
            for key in [k for k in self.items if which(k)]:
                self.bytes -= self.items.pop(key)[1]


_PINNED = Region()


def singleton(func: Callable[..., T]) -> Callable[..., T]:
    """``func(*args)`` computed once per argument tuple for the whole process (arguments must be hashable), a
    pinned entry of the cache. ``.clear()`` forgets this function's values."""
    name = f"{func.__module__}.{func.__qualname__}"

    @functools.wraps(func)
    def wrapper(*args):
        return _PINNED.computed((name, args), lambda: func(*args))

    wrapper.clear = lambda: _PINNED.drop(lambda key: key[0] == name)
    return wrapper


@singleton
def region(name: str) -> Region:
    """The byte-capped region ``name`` (a key of :data:`SHARES`), its cap that share of ``MUTTLAB_MEMO_MB`` as
    the process read it first (``region.clear()`` makes them afresh)."""
    return Region(int(load_settings().limits.memo_mb * 2 ** 20 * SHARES[name]))


def size() -> int:
    """How many pinned values the process holds (for tests and the maintainer panel)."""
    return len(_PINNED)


def clear_all(actor: Identity, settings: Settings) -> None:
    """Empty the whole cache, pinned values and regions alike: a maintainer's action (PermissionDenied
    otherwise). Sessions that hold an object keep using it; the next request builds a new one."""
    require(actor, Action.CLEAR_CACHES, settings)
    _PINNED.drop()
    LOG.warning("caches cleared by %s", actor.name)


@functools.lru_cache(maxsize=8)
def same_file(a: str, b: str) -> bool:
    """Whether the paths ``a`` and ``b`` name one file, kept: the main script asks at every run of every page,
    and resolving a path asks the file system once per component."""
    return Path(a).resolve() == Path(b).resolve()


def served() -> bool:
    """True in a Streamlit server, which sets ``sys.argv[0]`` to the app's script (``streamlit run`` by hand,
    and ``muttlab serve``, whose warm-up started before the server, so the app's call finds it running); False
    under AppTest, where a warm-up per test configuration would load every model again for nothing, and where
    no browser fetches scripts for a first paint to wait for."""
    return bool(sys.argv) and same_file(sys.argv[0], str(Path(__file__).with_name("app.py")))


def refuse_client_cache_clearing() -> None:
    """Make the browser's clear-cache message do nothing on this server (idempotent).

    Streamlit handles it in ``AppSession._handle_clear_cache_request``, which clears Streamlit's caches for every
    user; here it only logs. Maintainers clear caches from the Learned metrics page (:func:`clear_all`).
    """
    try:
        from streamlit.runtime.app_session import AppSession
    except ImportError:  # a Streamlit without that module has no such message to refuse
        return
    if getattr(AppSession._handle_clear_cache_request, "_muttlab_refused", False):
        return

    def _refused(self) -> None:
        LOG.warning("a client asked to clear the server's caches; refused (maintainers use the dashboard)")

    _refused._muttlab_refused = True
    AppSession._handle_clear_cache_request = _refused
