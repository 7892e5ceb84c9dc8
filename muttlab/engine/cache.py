"""The on-disk score cache, shared by every user of a server.

One SQLite file (WAL mode, so readers never block the writer) maps a key to a score. The key hashes
the metric's signature (name + parameters + version), the batch context for corpus-dependent metrics,
the candidate and its references: a re-run, or an edited pair whose text did not change, costs nothing,
and any change of text or settings is a different key.

A read-only server (``MUTTLAB_READ_ONLY``) opens the file read-only (SQLite's ``mode=ro``): it serves the
scores a writer stored there and keeps its own in a cache of its own, capped in size
(:mod:`muttlab.engine.private_cache`, the ``overflow``), so nothing a visitor runs reaches the file.

A cache is an optimisation, never a reason for a run to fail. A cache file that cannot be opened for
writing (a read-only folder or file, as on a hosted demo; a file locked by another process; a truncated
file or one that is not SQLite) gives one warning per process and path, and the run goes on with a
private in-memory cache. A file that can still be read but not written keeps serving its scores; new
ones are kept in memory. An entry that cannot be a score (not a finite float, a key of the wrong length)
is treated as missing, so it is recomputed and overwritten rather than returned.
"""
from __future__ import annotations

import hashlib
import math
import os
import sqlite3
import threading
import warnings
from pathlib import Path
from typing import Iterable, Sequence

_SEP_FIELD = "\x1f"
_SEP_REF = "\x1e"
_CHUNK = 900  # below SQLite's default limit of host parameters
KEY_BYTES = 16
# How long opening waits for another process's lock before giving up on the file for this process; a
# held lock must not stall a run (the writer's own busy timeout is longer: it only waits for commits).
OPEN_TIMEOUT_S = 2.0
BUSY_TIMEOUT_S = 30.0

_warned: set[str] = set()
_warned_lock = threading.Lock()


class CacheUnavailable(RuntimeWarning):
    """The score cache file cannot be used; scores are kept in memory for this process."""


def _warn_once(path: Path, problem: str, consequence: str = "scores are kept in memory for this process") -> None:
    key = str(path)
    with _warned_lock:
        if key in _warned:
            return
        _warned.add(key)
    warnings.warn(f"score cache {path}: {problem}; {consequence} "
                  "(set MUTTLAB_CACHE_DIR to a writable folder, or MUTTLAB_NO_CACHE=1)", CacheUnavailable,
                  stacklevel=3)


def refs_digest(references: Sequence[str]) -> str:
    """A short digest of one reference list; computed once per list and shared by every metric."""
    return hashlib.blake2b(_encode(_SEP_REF.join(references)), digest_size=16).hexdigest()


def _encode(text: str) -> bytes:
    # A lone surrogate is not UTF-8; keep it distinct from every real text instead of failing the key.
    return text.encode("utf-8", "surrogatepass")


def item_key(signature: str, context: str, candidate: str, refs_key: str) -> bytes:
    """The cache key of one score: metric signature, batch context, candidate, references' digest."""
    text = _SEP_FIELD.join((signature, context, candidate, refs_key))
    return hashlib.blake2b(_encode(text), digest_size=KEY_BYTES).digest()


def item_keys(signature: str, context: str, candidates: Sequence[str], refs_keys: Sequence[str]) -> list[bytes]:
    """:func:`item_key` of each (candidate, references' digest) of one batch: the same keys, with the
    batch's common prefix hashed once (a grid asks for ~80,000 keys)."""
    head = hashlib.blake2b(_encode(_SEP_FIELD.join((signature, context, ""))), digest_size=KEY_BYTES)
    keys = []
    for candidate, refs_key in zip(candidates, refs_keys):
        h = head.copy()
        h.update(_encode(candidate + _SEP_FIELD + refs_key))
        keys.append(h.digest())
    return keys


def context_key(references: Iterable[Sequence[str]]) -> str:
    """A digest of a whole batch's references, for metrics whose scores depend on the batch."""
    h = hashlib.blake2b(digest_size=16)
    for refs in references:
        h.update(_encode(_SEP_REF.join(refs)))
        h.update(_SEP_FIELD.encode())
    return h.hexdigest()


def _valid(key, value) -> bool:
    """Whether a stored row can be a score: a 16-byte key and a finite float (SQLite hands back text,
    blobs or integers from a damaged or hand-edited row as they are)."""
    return (isinstance(key, bytes) and len(key) == KEY_BYTES and isinstance(value, float)
            and math.isfinite(value))


class ScoreCache:
    """``get_many`` / ``put_many`` over a SQLite table. ``ScoreCache(None)`` caches nothing.

    Keys are 16-byte digests (:func:`item_key`); values are finite floats. ``mode`` says where scores go:
    ``disk``, ``read-only`` (hits from the file, new scores in memory), ``memory`` (the file could not be
    used) or ``off``.
    """

    def __init__(self, path: Path | None, read_only: bool = False, overflow=None):
        self.path = path
        # Where scores go that the file may not take (a read-only server's own capped cache), instead of memory.
        self._overflow = overflow
        self._local = threading.local()
        self._memory: dict[bytes, float] = {}
        self._lock = threading.Lock()
        self.mode = "off" if path is None else "disk"
        self._ro_query = "mode=ro"
        if path is not None and read_only:
            self._open_read_only(None)
        elif path is not None:
            self._open()

    # -- opening

    def _open(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = self._connect()
            conn.execute("CREATE TABLE IF NOT EXISTS scores (key BLOB PRIMARY KEY, value REAL NOT NULL) "
                         "WITHOUT ROWID")
            # Take and release the write lock: a read-only or locked file fails here, not in the middle of a run.
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("SELECT key, value FROM scores LIMIT 1").fetchall()
            conn.execute("ROLLBACK")
            conn.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
        except (sqlite3.Error, OSError) as exc:
            self._drop_connection()
            self._open_read_only(exc)

    def _open_read_only(self, cause: Exception | None) -> None:
        """Keep the file's scores when only writing is impossible (a read-only copy of a shared cache), or
        when writing is not wanted (``cause`` None: a read-only server)."""
        if cause is None and not self.path.is_file():
            self._fall_back("it does not exist, and a read-only server never creates it")
            return
        problem = _describe(cause, self.path) if cause is not None else ""
        if cause is not None and (self.path.is_file() and not isinstance(cause, sqlite3.OperationalError)
                                  or "lock" in problem):
            self._fall_back(problem)  # damaged or locked: nothing on disk can be trusted or reached
            return
        for query in self._read_only_queries():
            try:
                conn = sqlite3.connect(f"{self.path.resolve().as_uri()}?{query}", uri=True, timeout=OPEN_TIMEOUT_S)
                conn.execute("SELECT key, value FROM scores LIMIT 1").fetchall()
                conn.close()
            except (sqlite3.Error, OSError, ValueError) as exc:
                problem = problem or _describe(exc, self.path)
                continue
            self._ro_query = query
            break
        else:
            self._fall_back(problem)
            return
        self.mode = "read-only"
        if cause is not None:
            where = ("go to this server's own cache" if self._overflow is not None
                     else "are kept in memory for this process")
            _warn_once(self.path, problem, f"its scores are used, new ones {where}")

    def _read_only_queries(self) -> list[str]:
        queries = ["mode=ro"]
        # A WAL file in a folder we cannot write cannot be opened even for reading (SQLite needs its -shm
        # index). When neither the folder nor the file is writable for us, the deployment made it read-only
        # on purpose (a hosted demo's shipped cache), so it is read as an immutable file.
        effective = os.access in os.supports_effective_ids
        if not any(os.access(p, os.W_OK, effective_ids=effective) for p in (self.path.parent, self.path)):
            queries.append("mode=ro&immutable=1")
        return queries

    def _fall_back(self, problem: str) -> None:
        self._drop_connection()
        if self.mode != "memory":
            self.mode = "memory"
            _warn_once(self.path, problem, "new scores go to this server's own cache" if self._overflow is not None
                       else "scores are kept in memory for this process")

    def _connect(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            if self.mode == "read-only":
                conn = sqlite3.connect(f"{self.path.resolve().as_uri()}?{self._ro_query}", uri=True,
                                       timeout=BUSY_TIMEOUT_S)
            else:
                conn = sqlite3.connect(self.path, timeout=OPEN_TIMEOUT_S, isolation_level=None)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn = conn
        return conn

    def _drop_connection(self) -> None:
        conn = getattr(self._local, "conn", None)
        self._local.conn = None
        if conn is not None:
            try:
                conn.close()
            except sqlite3.Error:
                pass

    # -- reads and writes

    def get_many(self, keys: Sequence[bytes]) -> dict[bytes, float]:
        if self.path is None or not keys:
            return {}
        unique = list(dict.fromkeys(keys))
        with self._lock:
            found = {k: self._memory[k] for k in unique if k in self._memory}
        if self.mode in ("disk", "read-only"):
            rest = sorted(k for k in unique if k not in found)  # in key order, each B-tree page is read once
            try:
                conn = self._connect()
                # A fresh cache answers at once: a cold grid asks it for ~80,000 keys.
                if rest and not conn.execute("SELECT EXISTS (SELECT 1 FROM scores)").fetchone()[0]:
                    rest = []
                for start in range(0, len(rest), _CHUNK):
                    chunk = rest[start:start + _CHUNK]
                    marks = ",".join("?" * len(chunk))
                    rows = conn.execute(f"SELECT key, value FROM scores WHERE key IN ({marks})", chunk).fetchall()
                    found.update((k, v) for k, v in rows if _valid(k, v))
            except sqlite3.Error as exc:
                # Damage found while reading (a truncated page...): what was read is still checked above.
                self._fall_back(_describe(exc, self.path))
        if self._overflow is not None and len(found) < len(unique):
            found.update(self._overflow.get_many([k for k in unique if k not in found]))
        return found

    def put_many(self, items: dict[bytes, float], shared: bool = True) -> None:
        """Store scores: in the file when ``shared`` (and the file can be written), else in this object's
        memory only, where they serve this cache's later look-ups but reach no other process."""
        if self.path is None or not items:
            return
        # The check of _valid, inlined: a grid writes ~80,000 scores. Sorted by key, the rows go into the
        # table's B-tree in order, touching each page once.
        isfinite = math.isfinite
        rows = sorted((k, v) for k, v in zip(items, map(float, items.values()))
                      if isfinite(v) and k.__class__ is bytes and len(k) == KEY_BYTES)
        if self.mode == "disk" and shared:
            try:
                conn = self._connect()
                conn.execute("BEGIN")
                try:
                    conn.executemany("INSERT OR REPLACE INTO scores (key, value) VALUES (?, ?)", rows)
                    conn.execute("COMMIT")
                except sqlite3.Error:
                    if conn.in_transaction:
                        conn.rollback()
                    raise
                return
            except sqlite3.Error as exc:
                # Writing failed (the folder or file became read-only for us): the file's scores are still
                # served when it can be read.
                self._drop_connection()
                self._open_read_only(exc)
        if self._overflow is not None:
            self._overflow.put_many(dict(rows))
            return
        with self._lock:
            self._memory.update(rows)

    def __len__(self) -> int:
        if self.path is None:
            return 0
        if self.mode == "memory":
            return len(self._memory)
        try:
            return self._connect().execute("SELECT COUNT(*) FROM scores").fetchone()[0] + len(self._memory)
        except sqlite3.Error as exc:
            self._fall_back(_describe(exc, self.path))
            return len(self._memory)


def _describe(exc: Exception, path: Path | None = None) -> str:
    """What is wrong with the cache file, from what can be checked (may this process write there; is the
    file SQLite at all) before SQLite's own words: a file that only cannot be written is never "damaged"."""
    if isinstance(exc, OSError):
        return f"cannot create it ({exc.strerror or exc})"
    text = str(exc)
    if "locked" in text or "busy" in text:
        return f"locked by another process ({text})"
    if path is not None and _not_sqlite(path) or "malformed" in text or "not a database" in text:
        return f"damaged or not a SQLite database ({text})"
    if path is not None and not _writable(path) or "readonly" in text or "read-only" in text \
            or "unable to open" in text:
        return f"not writable by this process ({text})"
    return f"cannot be used ({text})"


def _writable(path: Path) -> bool:
    effective = os.access in os.supports_effective_ids
    return all(os.access(p, os.W_OK, effective_ids=effective) for p in (path.parent, path) if p.exists())


_SQLITE_HEADER = b"SQLite format 3\x00"


def _not_sqlite(path: Path) -> bool:
    """Whether ``path`` is a file whose first bytes are not SQLite's (an empty file is a new database)."""
    try:
        with open(path, "rb") as f:
            head = f.read(len(_SQLITE_HEADER))
    except OSError:
        return False  # unreadable or missing: nothing says it is damaged
    return bool(head) and head != _SQLITE_HEADER
