"""A read-only server's own score cache: a SQLite file of its own, capped in bytes, oldest scores out first.

The public demo opens the shared score cache read-only (a writer's pre-warmed scores; nothing a visitor runs may
reach it). What its visitors' requests compute goes here instead, so that a repeated request is answered from
disk, across restarts too, while the file never grows past its cap: after each write, the oldest rows go until
the pages in use fit (``PRAGMA page_count`` less ``freelist_count``; SQLite reuses the freed pages, so the file
stays near the cap instead of shrinking and growing again).

When the folder cannot be written, the scores are kept in this process's memory instead, capped the same way
(:data:`ROW_BYTES` a score), with one warning.
"""
from __future__ import annotations

import sqlite3
import threading
import warnings
from collections import OrderedDict
from pathlib import Path
from typing import Sequence

from muttlab.engine.cache import KEY_BYTES, CacheUnavailable, _valid

FILE_NAME = "private-scores.sqlite"
# What one score takes in the file (key, value, write order and the index's copy, with SQLite's overhead):
# measured at 46-52 bytes a row on 200,000 rows; used to size what one trim removes and the memory fallback.
ROW_BYTES = 56
_CHUNK = 900
# ``written`` orders the rows for eviction (the shared cache's table has no such column: it never evicts).
SCHEMA = """CREATE TABLE IF NOT EXISTS scores (key BLOB PRIMARY KEY, value REAL NOT NULL, written INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS scores_written ON scores (written);"""

_MEMORY: dict[Path, "OrderedDict[bytes, float]"] = {}
_MEMORY_LOCK = threading.Lock()


class PrivateCache:
    """``get_many`` / ``put_many`` over ``<folder>/private-scores.sqlite``, at most ``max_bytes`` of it in use."""

    def __init__(self, folder: Path, max_bytes: int):
        self.path = Path(folder) / FILE_NAME
        self.max_bytes = max(ROW_BYTES * 64, int(max_bytes))
        self._local = threading.local()
        self._lock = threading.Lock()
        self.mode = "disk"
        try:
            self._connect()
        except (sqlite3.Error, OSError) as exc:
            self._local.conn = None
            self.mode = "memory"
            warnings.warn(f"the read-only server's own score cache {self.path} cannot be used ({exc}); its scores "
                          f"are kept in memory, at most {self.max_bytes // 2 ** 20} MiB (set MUTTLAB_DEMO_CACHE_DIR "
                          "to a folder this server may write)", CacheUnavailable, stacklevel=2)

    def _connect(self) -> sqlite3.Connection:
        """This thread's connection, the folder and table made on first use."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            conn.executescript("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;" + SCHEMA)
            self._local.conn = conn
        return conn

    def _memory(self) -> "OrderedDict[bytes, float]":
        with _MEMORY_LOCK:
            return _MEMORY.setdefault(self.path, OrderedDict())

    def get_many(self, keys: Sequence[bytes]) -> dict[bytes, float]:
        """The scores of ``keys`` this cache holds."""
        unique = list(dict.fromkeys(keys))
        if self.mode == "memory":
            memory = self._memory()
            with _MEMORY_LOCK:
                return {k: memory[k] for k in unique if k in memory}
        found: dict[bytes, float] = {}
        conn = self._connect()
        for start in range(0, len(unique), _CHUNK):
            chunk = unique[start:start + _CHUNK]
            rows = conn.execute(f"SELECT key, value FROM scores WHERE key IN ({','.join('?' * len(chunk))})",
                                chunk).fetchall()
            found.update((k, v) for k, v in rows if _valid(k, v))
        return found

    def put_many(self, items: dict[bytes, float]) -> None:
        """Keep ``items`` (finite scores under 16-byte keys), then drop the oldest until the cap holds."""
        rows = [(k, float(v)) for k, v in items.items() if isinstance(k, bytes) and len(k) == KEY_BYTES
                and _valid(k, float(v))]
        if not rows:
            return
        if self.mode == "memory":
            memory = self._memory()
            with _MEMORY_LOCK:
                memory.update(rows)
                while len(memory) * ROW_BYTES > self.max_bytes:
                    memory.popitem(last=False)
            return
        with self._lock:
            conn = self._connect()
            conn.execute("BEGIN IMMEDIATE")
            try:
                start = conn.execute("SELECT COALESCE(MAX(written), 0) FROM scores").fetchone()[0] + 1
                conn.executemany("INSERT OR REPLACE INTO scores (key, value, written) VALUES (?, ?, ?)",
                                 [(k, v, start + i) for i, (k, v) in enumerate(rows)])
                self._trim(conn)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.rollback()
                raise

    def used_bytes(self) -> int:
        """Bytes of the file's pages in use (or the memory fallback's estimate)."""
        if self.mode == "memory":
            return len(self._memory()) * ROW_BYTES
        return _used(self._connect())

    def _trim(self, conn: sqlite3.Connection) -> None:
        used = _used(conn)
        while used > self.max_bytes:
            rows = conn.execute("SELECT COUNT(*) FROM scores").fetchone()[0]
            if not rows:
                return
            # Enough of the oldest rows to get a tenth below the cap, so that a trim is not needed at every write.
            drop = min(rows, max(64, (used - int(self.max_bytes * 0.9)) // ROW_BYTES))
            conn.execute("DELETE FROM scores WHERE written IN "
                         "(SELECT written FROM scores ORDER BY written LIMIT ?)", (drop,))
            used = _used(conn)

    def __len__(self) -> int:
        if self.mode == "memory":
            return len(self._memory())
        return self._connect().execute("SELECT COUNT(*) FROM scores").fetchone()[0]


def _used(conn: sqlite3.Connection) -> int:
    pages = conn.execute("PRAGMA page_count").fetchone()[0] - conn.execute("PRAGMA freelist_count").fetchone()[0]
    return pages * conn.execute("PRAGMA page_size").fetchone()[0]
