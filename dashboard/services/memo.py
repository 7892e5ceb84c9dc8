"""Memos shared by every session of the server: finished runs, pieces of pages that every visitor gets alike, and
the files visitors uploaded. Not ``st.cache_data``: a computation that draws a progress bar cannot be replayed
from it, and no browser can empty these.

Each memo is capped in bytes, not in entries (``MUTTLAB_MEMO_MB``): one upload's results can weigh more than
sixty small runs, and a cap by count let a few big uploads keep gigabytes resident after their tabs closed.
What a value weighs is :func:`footprint`; the oldest used values go first, and a value over a memo's whole cap is
computed for its request but not kept.
"""
from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from typing import Callable

import numpy as np
import pandas as pd

from muttlab.dashboard.services.budget import governed
from muttlab.dashboard.shared import singleton
from muttlab.settings import Settings, load_settings

# Shares of MUTTLAB_MEMO_MB: finished runs and studies take the cap; the landing grid's HTML per filter and the
# uploaded files a link can name take parts of it on top.
PAGES_SHARE = 1 / 16
UPLOADS_SHARE = 1 / 4


def footprint(value, seen: set[int] | None = None) -> int:
    """Bytes ``value`` holds, followed through containers, dataclasses and objects' attributes (each object
    counted once): pandas objects by ``memory_usage(deep=True)``, arrays by their buffer (and the items of an
    object array), everything else by ``sys.getsizeof``. An estimate, within the allocator's overhead: what a
    memo's cap is checked against.

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


class Memo:
    """Finished values by key, the least recently used dropped first once they weigh more than ``max_bytes``;
    shared by all sessions of the server."""

    def __init__(self, max_bytes: int):
        self.max_bytes = int(max_bytes)
        self.lock = threading.Lock()
        self.items: OrderedDict[tuple, tuple[object, int]] = OrderedDict()
        self.bytes = 0

    def get(self, key: tuple):
        with self.lock:
            if key not in self.items:
                return None
            self.items.move_to_end(key)
            return self.items[key][0]

    def __contains__(self, key: tuple) -> bool:
        with self.lock:
            return key in self.items

    def put(self, key: tuple, value) -> bool:
        """Keep ``value`` (weighed once, here); False when it alone is over the cap and is not kept."""
        size = footprint(value)
        with self.lock:
            old = self.items.pop(key, None)
            if old is not None:
                self.bytes -= old[1]
            if size > self.max_bytes:
                return False
            self.items[key] = (value, size)
            self.bytes += size
            while self.bytes > self.max_bytes:
                _, (_, dropped) = self.items.popitem(last=False)
                self.bytes -= dropped
            return True


def _memo_bytes() -> int:
    return load_settings().limits.memo_mb * 2 ** 20


@singleton
def results_memo() -> Memo:
    return Memo(_memo_bytes())


@singleton
def pages_memo() -> Memo:
    return Memo(int(_memo_bytes() * PAGES_SHARE))


@singleton
def uploads_memo() -> Memo:
    return Memo(int(_memo_bytes() * UPLOADS_SHARE))


_KEY_LOCKS: dict[tuple, threading.Lock] = {}
_KEY_LOCKS_GUARD = threading.Lock()


def memoised(key: tuple, compute: Callable[[], object], settings: Settings | None = None,
             memo: Memo | None = None, costly: str | None = None, metrics=()):
    """``compute()`` once per ``key`` for the whole server (two sessions asking at once compute it once),
    kept in ``memo`` (by default the memo of finished runs).

    ``costly`` names work a visitor asks for (a grid run, a study, a challenge set's scores): on a read-only
    server it runs only within that visitor's share (:func:`muttlab.dashboard.services.budget.governed`, which
    also refuses ``metrics`` that are slow to compute there); a value the memo has costs nothing.

    Used instead of ``st.cache_data`` where the computation reports progress to a Streamlit element,
    which ``st.cache_data``'s element replay forbids. Callers treat the value as read-only. ``compute``
    sends its scoring through the fair queue itself; the lock here is per key, never global.
    """
    memo = memo or results_memo()
    value = memo.get(key)
    if value is None:
        with _KEY_LOCKS_GUARD:
            lock = _KEY_LOCKS.setdefault(key, threading.Lock())
        try:
            with lock:
                value = memo.get(key)
                if value is None:
                    value = compute() if costly is None else governed(settings, costly, compute, metrics)
                    memo.put(key, value)
        finally:
            with _KEY_LOCKS_GUARD:
                _KEY_LOCKS.pop(key, None)
    return value


def is_memoised(key: tuple, memo: Memo | None = None) -> bool:
    """Whether ``key``'s value is in ``memo`` (by default the memo of finished runs): nothing is computed."""
    return key in (memo or results_memo())
