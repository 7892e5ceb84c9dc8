"""The on-disk score cache, shared by every user of a server.

One SQLite file (WAL mode, so readers never block the writer) maps a key to a score. The key hashes
the metric's signature (name + parameters + version), the batch context for corpus-dependent metrics,
the candidate and its references: a re-run, or an edited pair whose text did not change, costs nothing,
and any change of text or settings is a different key.
"""
from __future__ import annotations

import hashlib
import sqlite3
import threading
from pathlib import Path
from typing import Iterable, Sequence

_SEP_FIELD = "\x1f"
_SEP_REF = "\x1e"
_CHUNK = 900  # below SQLite's default limit of host parameters


def refs_digest(references: Sequence[str]) -> str:
    """A short digest of one reference list; computed once per list and shared by every metric."""
    return hashlib.blake2b(_SEP_REF.join(references).encode("utf-8"), digest_size=16).hexdigest()


def item_key(signature: str, context: str, candidate: str, refs_key: str) -> bytes:
    """The cache key of one score: metric signature, batch context, candidate, references' digest."""
    text = _SEP_FIELD.join((signature, context, candidate, refs_key))
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


def context_key(references: Iterable[Sequence[str]]) -> str:
    """A digest of a whole batch's references, for metrics whose scores depend on the batch."""
    h = hashlib.blake2b(digest_size=16)
    for refs in references:
        h.update(_SEP_REF.join(refs).encode("utf-8"))
        h.update(_SEP_FIELD.encode())
    return h.hexdigest()


class ScoreCache:
    """``get_many`` / ``put_many`` over a SQLite table. ``ScoreCache(None)`` caches nothing.

    Keys are 16-byte digests (:func:`item_key`); values are floats.
    """

    def __init__(self, path: Path | None):
        self.path = path
        self._local = threading.local()
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            with self._connect() as conn:
                conn.execute("CREATE TABLE IF NOT EXISTS scores (key BLOB PRIMARY KEY, value REAL NOT NULL) "
                             "WITHOUT ROWID")

    def _connect(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn = conn
        return conn

    def get_many(self, keys: Sequence[bytes]) -> dict[bytes, float]:
        if self.path is None or not keys:
            return {}
        conn = self._connect()
        found: dict[bytes, float] = {}
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), _CHUNK):
            chunk = unique[start:start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            found.update(conn.execute(f"SELECT key, value FROM scores WHERE key IN ({marks})", chunk).fetchall())
        return found

    def put_many(self, items: dict[bytes, float]) -> None:
        if self.path is None or not items:
            return
        with self._connect() as conn:
            conn.executemany("INSERT OR REPLACE INTO scores (key, value) VALUES (?, ?)",
                             [(k, float(v)) for k, v in items.items()])

    def __len__(self) -> int:
        if self.path is None:
            return 0
        return self._connect().execute("SELECT COUNT(*) FROM scores").fetchone()[0]
