"""Suites that visitors build in the app from their own sentences, kept in the server's memory.

A suite is addressed as ``mine:<id>``; the id is 128 random bits, so a link to it is its only way in (a
capability: whoever holds the link may view it, nobody can list or guess it). The oldest suites are dropped
first when the server holds :data:`KEPT` of them.
"""
from __future__ import annotations

import secrets
import threading
from collections import OrderedDict

from muttlab.trials import Suite

KEPT = 64
PREFIX = "mine:"

_LOCK = threading.Lock()
_SUITES: OrderedDict[str, tuple[str, Suite]] = OrderedDict()


def add(visitor: str, suite: Suite) -> str:
    """Keep ``suite`` (built by ``visitor``) and return its name, ``mine:<id>``."""
    suite_id = secrets.token_hex(16)
    with _LOCK:
        _SUITES[suite_id] = (visitor, suite)
        while len(_SUITES) > KEPT:
            _SUITES.popitem(last=False)
    return PREFIX + suite_id


def lookup(name: str) -> Suite | None:
    """The suite called ``mine:<id>``, or None when the server does not (or no longer) hold it."""
    if not name.startswith(PREFIX):
        return None
    with _LOCK:
        entry = _SUITES.get(name[len(PREFIX):])
    return None if entry is None else entry[1]
