"""Process-wide objects shared by every session of the server, out of the reach of browser messages.

Streamlit's ``st.cache_resource`` can be emptied by any client: the browser's "clear cache" message
(``BackMsg.clear_cache``) calls ``st.cache_resource.clear()`` for the whole server, dropping the metric
registry, the pair store and locks that other sessions hold. The objects here live in a module-level table
keyed by the function and its arguments (the settings among them), which no client message touches; only
:func:`clear_all`, a maintainer's action, empties it.

:func:`refuse_client_cache_clearing` also turns the message itself into a no-op, so that the
``st.cache_data`` results (study tables, playground scores) cannot be thrown away by a visitor either.
"""
from __future__ import annotations

import functools
import logging
import threading
from typing import Callable, TypeVar

from muttlab.api import Action, Identity, require
from muttlab.settings import Settings

T = TypeVar("T")
LOG = logging.getLogger(__name__)

_TABLE: dict[tuple, object] = {}
_TABLE_LOCK = threading.Lock()
_KEY_LOCKS: dict[tuple, threading.Lock] = {}
_CLEARERS: list[Callable[[], None]] = []


def singleton(func: Callable[..., T]) -> Callable[..., T]:
    """``func(*args)`` computed once per argument tuple for the whole process (arguments must be hashable).

    Two sessions asking at once for the same missing value compute it once: each key has its own lock, so a
    slow value (loading the suite) does not hold up others. ``.clear()`` forgets this function's values.
    """
    name = f"{func.__module__}.{func.__qualname__}"

    @functools.wraps(func)
    def wrapper(*args):
        key = (name, args)
        with _TABLE_LOCK:
            if key in _TABLE:
                return _TABLE[key]
            lock = _KEY_LOCKS.setdefault(key, threading.Lock())
        with lock:
            with _TABLE_LOCK:
                if key in _TABLE:
                    return _TABLE[key]
            value = func(*args)
            with _TABLE_LOCK:
                _TABLE[key] = value
            return value

    def clear() -> None:
        with _TABLE_LOCK:
            for key in [k for k in _TABLE if k[0] == name]:
                del _TABLE[key]

    wrapper.clear = clear
    _CLEARERS.append(clear)
    return wrapper


def size() -> int:
    """How many shared values the process holds (for tests and the maintainer panel)."""
    with _TABLE_LOCK:
        return len(_TABLE)


def clear_all(actor: Identity, settings: Settings) -> None:
    """Empty every shared value and Streamlit's caches: a maintainer's action (PermissionDenied otherwise).

    Sessions that hold an object keep using it; the next request builds a new one.
    """
    require(actor, Action.CLEAR_CACHES, settings)
    import streamlit as st

    for clear in _CLEARERS:
        clear()
    st.cache_data.clear()
    st.cache_resource.clear()
    LOG.warning("caches cleared by %s", actor.name)


def refuse_client_cache_clearing() -> None:
    """Make the browser's clear-cache message do nothing on this server (idempotent).

    Streamlit handles it in ``AppSession._handle_clear_cache_request``, which clears every cache for every
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
