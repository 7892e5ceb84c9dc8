"""Memos shared by every session of the server: finished runs, and pieces of pages that every visitor gets
alike. Not ``st.cache_data``: a computation that draws a progress bar cannot be replayed from it, and no
browser can empty these."""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Callable

from muttlab.dashboard.shared import singleton
from muttlab.settings import Settings

RESULTS_KEPT = 64  # finished runs kept in memory, across sessions
PAGES_KEPT = 16  # pieces of pages that every visitor gets alike (the landing grid per filter)


class Memo:
    """Finished engine results by key, oldest dropped first; shared by all sessions of the server."""

    def __init__(self, size: int):
        self.size = size
        self.lock = threading.Lock()
        self.items: OrderedDict[tuple, object] = OrderedDict()

    def get(self, key: tuple):
        with self.lock:
            if key in self.items:
                self.items.move_to_end(key)
            return self.items.get(key)

    def put(self, key: tuple, value) -> None:
        with self.lock:
            self.items[key] = value
            while len(self.items) > self.size:
                self.items.popitem(last=False)


@singleton
def results_memo() -> Memo:
    return Memo(RESULTS_KEPT)


@singleton
def pages_memo() -> Memo:
    return Memo(PAGES_KEPT)


_KEY_LOCKS: dict[tuple, threading.Lock] = {}
_KEY_LOCKS_GUARD = threading.Lock()


def memoised(key: tuple, compute: Callable[[], object], settings: Settings | None = None,
             memo: Memo | None = None):
    """``compute()`` once per ``key`` for the whole server (two sessions asking at once compute it once),
    kept in ``memo`` (by default the memo of finished runs).

    Used instead of ``st.cache_data`` where the computation reports progress to a Streamlit element,
    which ``st.cache_data``'s element replay forbids. Callers treat the value as read-only. ``compute``
    sends its scoring through the fair queue itself; the lock here is per key, never global.
    """
    memo = memo or results_memo()
    value = memo.get(key)
    if value is None:
        with _KEY_LOCKS_GUARD:
            lock = _KEY_LOCKS.setdefault(key, threading.Lock())
        with lock:
            value = memo.get(key)
            if value is None:
                value = compute()
                memo.put(key, value)
        with _KEY_LOCKS_GUARD:
            _KEY_LOCKS.pop(key, None)
    return value
