"""The corruption-pair store: pairs, their review status and every revision, in a real database.

SQLAlchemy 2 over SQLite by default (``Settings.store_url``: a file in the cache dir, WAL mode so readers
never block the writer), or any SQLAlchemy URL (PostgreSQL...) for a shared server.

* A pair carries its type, the two sentences, its ordered references, where it came from (``source``),
  an optional human score, a review status (proposed / accepted / rejected / edited) and a version.
* Every change (creation, edit, accept, reject) is a revision: author, UTC time, the pair's reviewable
  fields before and after. The history therefore rebuilds every earlier version of a pair.
* Optimistic concurrency: a change names the version it was based on. The row is updated only if it is
  still at that version (one ``UPDATE ... WHERE version = :base``); otherwise :class:`ConflictError`
  says who changed it and carries the refused change, so nothing typed is lost.
* Read-only mode (``Settings.read_only``, the hosted demo) refuses every write here, in the store:
  each write method raises :class:`ReadOnlyError`, and below it the database itself refuses writes:
  SQLite is opened with ``mode=ro`` and ``PRAGMA query_only=ON`` on every connection, PostgreSQL with
  ``default_transaction_read_only`` (every transaction is READ ONLY). Nothing depends on reading SQL text.
* Imports check every line on its own (JSON, UTF-8, field types, lone surrogates, NUL characters, the
  :class:`~muttlab.settings.Limits` on sentence length and reference count) and keep every good line; a
  file over the size or pair limit is refused whole, before anything is written.
* Exports escape U+2028, U+2029 and U+0085 inside JSON strings, so no line-splitting reader can break a
  record in two.
* Text is stored exactly as given; escaping it for display is the dashboard's job.
"""
from __future__ import annotations

import json
import math
import os
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from sqlalchemy import (Float, ForeignKey, Integer, String, Text, create_engine, event, func, inspect, or_,
                        select, update)
from sqlalchemy.engine import Engine
from sqlalchemy.exc import OperationalError, SQLAlchemyError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

from muttlab.corruptions import catalog
from muttlab.errors import DataError, MuttlabError
from muttlab.settings import Limits, Settings, active_limits
from muttlab.sources import parse_json, read_bytes
from muttlab.trials import Trial

PROPOSED, ACCEPTED, REJECTED, EDITED = "proposed", "accepted", "rejected", "edited"
STATUSES = (PROPOSED, ACCEPTED, REJECTED, EDITED)
# What an annotator may change with :meth:`PairStore.edit`.
EDITABLE = ("corruption", "original", "corrupted", "references")
# What a revision records (the reviewable state of a pair).
SNAPSHOT_FIELDS = EDITABLE + ("status",)
DEFAULT_PAGE_SIZE = 50
KEY_LENGTH = 200  # the width of the key and source columns
# SQLite's largest INTEGER; a larger "pair number" names no pair rather than overflowing the driver.
MAX_PAIR_ID = 2 ** 63 - 1


class ConflictError(MuttlabError):
    """A change was based on a version that is no longer current.

    Attributes:
      pair_id: the pair; base_version: the version the change was based on; current: the pair as it is
      now (a :class:`PairRecord`); attempted: the refused changes, so the caller can show them again;
      last_author: who made the current version.
    """

    def __init__(self, pair_id: int, base_version: int, current: "PairRecord", attempted: dict,
                 last_author: str | None):
        self.pair_id, self.base_version, self.current, self.attempted = pair_id, base_version, current, attempted
        self.last_author = last_author
        by = f" by {last_author}" if last_author else ""
        super().__init__(
            f"pair {pair_id} was changed{by} since version {base_version} (it is now at version "
            f"{current.version}); your change was not saved. Reload the pair, re-apply your change "
            f"and save it with base version {current.version}")


class ReadOnlyError(MuttlabError):
    """A write was attempted while the store is read-only."""

    def __init__(self, what: str = "change pairs"):
        super().__init__(f"the pair store is read-only and cannot {what}; unset MUTTLAB_READ_ONLY "
                         f"(read_only=False) on an instance meant for editing")


class PairNotFound(MuttlabError):
    def __init__(self, pair_id):
        super().__init__(f"no pair {pair_id!r} in the store; list pairs with `muttlab pairs list`")


# --------------------------------------------------------------------------- schema

class _Base(DeclarativeBase):
    pass


class _Pair(_Base):
    __tablename__ = "pairs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    key: Mapped[str] = mapped_column(String(200), unique=True, index=True)
    corruption: Mapped[str] = mapped_column(String(64), index=True)
    original: Mapped[str] = mapped_column(Text)
    corrupted: Mapped[str] = mapped_column(Text)
    references: Mapped[str] = mapped_column(Text)  # JSON list, in pool order
    source: Mapped[str] = mapped_column(String(200), default="")
    human_score: Mapped[float | None] = mapped_column(Float, nullable=True)
    status: Mapped[str] = mapped_column(String(16), index=True)
    version: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[str] = mapped_column(String(40))
    updated_at: Mapped[str] = mapped_column(String(40))


class _Revision(_Base):
    __tablename__ = "revisions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    pair_id: Mapped[int] = mapped_column(ForeignKey("pairs.id"), index=True)
    version: Mapped[int] = mapped_column(Integer)  # the version this revision produced
    action: Mapped[str] = mapped_column(String(16))
    author: Mapped[str] = mapped_column(String(200))
    at: Mapped[str] = mapped_column(String(40))
    before: Mapped[str | None] = mapped_column(Text, nullable=True)  # JSON snapshot; None on creation
    after: Mapped[str] = mapped_column(Text)


# --------------------------------------------------------------------------- records returned

@dataclass(frozen=True)
class PairRecord:
    """A pair as stored. ``id`` is the store's number; ``key`` the trial id (``neg_subj/sick-12``)."""

    id: int
    key: str
    corruption: str
    original: str
    corrupted: str
    references: tuple[str, ...]
    source: str
    human_score: float | None
    status: str
    version: int
    created_at: str
    updated_at: str

    def snapshot(self) -> dict[str, Any]:
        """The reviewable fields (what a revision records)."""
        return {f: (list(getattr(self, f)) if f == "references" else getattr(self, f)) for f in SNAPSHOT_FIELDS}

    def to_trial(self) -> Trial:
        return Trial(id=self.key, corruption=self.corruption, original=self.original, corrupted=self.corrupted,
                     references=self.references, source=self.source, human_score=self.human_score,
                     status=self.status)

    def to_json(self) -> dict[str, Any]:
        """The export form: the sample-trial fields plus status, score and version."""
        return {"id": self.key, "corruption": self.corruption, "original": self.original,
                "corrupted": self.corrupted, "references": list(self.references), "source": self.source,
                "human_score": self.human_score, "status": self.status, "version": self.version}


@dataclass(frozen=True)
class Revision:
    """One change of a pair: the version it produced, who, when, and the state before and after."""

    pair_id: int
    version: int
    action: str
    author: str
    at: str
    before: dict[str, Any] | None
    after: dict[str, Any]


@dataclass(frozen=True)
class Page:
    """One page of a listing: the pairs, how many match in all, and where the page starts."""

    items: list[PairRecord]
    total: int
    offset: int
    limit: int


@dataclass(frozen=True)
class LineError:
    line: int
    problem: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.problem}"


@dataclass
class ImportReport:
    """What an import did: pairs added, lines naming a pair already stored (left as they are), and
    the rejected lines with their numbers and problems."""

    added: int = 0
    existing: int = 0
    errors: list[LineError] = field(default_factory=list)
    path: str = ""

    @property
    def ok(self) -> bool:
        return not self.errors

    def summary(self) -> str:
        """The totals, then one line per rejected line naming the file, the line and the problem."""
        where = f"{self.path}: " if self.path else ""
        text = f"{where}{self.added} added, {self.existing} already stored, {len(self.errors)} rejected"
        prefix = f"{self.path}, " if self.path else ""
        return text + "".join(f"\n  {prefix}{e}" for e in self.errors)


@dataclass(frozen=True)
class AddReport:
    added: int
    existing: int


# --------------------------------------------------------------------------- helpers

class _StaleVersion(Exception):
    def __init__(self, base: int):
        super().__init__(base)
        self.base = base


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def _record(row: _Pair) -> PairRecord:
    return PairRecord(row.id, row.key, row.corruption, row.original, row.corrupted,
                      tuple(json.loads(row.references)), row.source, row.human_score, row.status, row.version,
                      row.created_at, row.updated_at)


def _check_author(author: str) -> str:
    if not isinstance(author, str) or not author.strip():
        raise MuttlabError("every change needs an author: pass a non-empty author name")
    return author.strip()


def _check_text(text: str, what: str, limits: Limits) -> None:
    """A sentence that every backend can store and every metric can score."""
    if "\x00" in text:
        raise MuttlabError(f"{what} holds a NUL character; remove it")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise MuttlabError(f"{what} holds a lone surrogate (U+{ord(text[exc.start]):04X} at character "
                           f"{exc.start}), which is not text; save the file as UTF-8") from None
    if len(text) > limits.max_chars:
        raise MuttlabError(limits.exceeded("max_chars", len(text), what))
    words = len(text.split())
    if words > limits.max_words:
        raise MuttlabError(limits.exceeded("max_words", words, what))


def validate_fields(values: dict[str, Any]) -> dict[str, Any]:
    """Checked, normalised copies of pair fields; a MuttlabError names the first bad one.

    ``corruption`` must be a known type, ``original``/``corrupted`` non-empty strings, ``references`` a
    list of strings with at least one non-empty, ``status`` one of STATUSES, ``human_score`` a finite number.
    Sentences hold no NUL character or lone surrogate and stay within the active
    :class:`~muttlab.settings.Limits` (words, characters, references per pair).
    Text is kept exactly as given (no stripping, no escaping).
    """
    limits = active_limits()
    out = dict(values)
    if "corruption" in out:
        name = out["corruption"]
        if not isinstance(name, str):
            raise MuttlabError(f"corruption must be a type name, got {name!r:.80}")
        try:
            catalog.get(name)
        except KeyError as exc:
            raise MuttlabError(str(exc)) from None
    for name in ("original", "corrupted"):
        if name in out:
            text = out[name]
            if not isinstance(text, str) or not text.strip():
                raise MuttlabError(f"{name} sentence is empty; give the sentence text")
            _check_text(text, f"{name} sentence", limits)
    if "references" in out:
        refs = out["references"]
        if isinstance(refs, (str, bytes)) or not isinstance(refs, Sequence) or not refs:
            raise MuttlabError("references must be a non-empty list of sentences")
        # A blank reference is kept (one of the study's MSR-Video pools has one, and the k-reference
        # runs must see the same pool), but a pool needs at least one real sentence.
        if any(not isinstance(r, str) for r in refs) or not any(r.strip() for r in refs):
            raise MuttlabError("references must be sentences (strings), at least one of them non-empty")
        if len(refs) > limits.max_refs:
            raise MuttlabError(limits.exceeded("max_refs", len(refs), "the reference list"))
        for i, ref in enumerate(refs):
            _check_text(ref, f"reference {i + 1}", limits)
        out["references"] = list(refs)
    if "status" in out and out["status"] not in STATUSES:
        raise MuttlabError(f"status must be one of {', '.join(STATUSES)}, got {out['status']!r:.80}")
    if out.get("human_score") is not None:
        score = out["human_score"]
        try:
            number = float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None
        except OverflowError:  # an integer with hundreds of digits
            number = None
        if number is None or not math.isfinite(number):
            raise MuttlabError(f"human_score must be a finite number, got {str(score)[:40]!r}")
        out["human_score"] = number
    return out


def _check_key(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise MuttlabError(f"{what} must be a string, got {value!r:.80}")
    if len(value) > KEY_LENGTH:
        raise MuttlabError(f"{what} is {len(value)} characters long; at most {KEY_LENGTH} fit")
    if "\x00" in value:
        raise MuttlabError(f"{what} holds a NUL character; remove it")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise MuttlabError(f"{what} holds a lone surrogate, which is not text") from None
    return value


def _pair_number(pair_id: Any) -> int | None:
    """The store number ``pair_id`` names, or None when it can name no stored pair."""
    try:
        number = int(pair_id)
    except (TypeError, ValueError):
        return None
    return number if 1 <= number <= MAX_PAIR_ID else None


# Characters inside a JSON string that some line readers (str.splitlines, JavaScript) take for line ends.
_LINE_BREAKS = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"}


def jsonl_line(record: dict) -> str:
    """One JSONL line: UTF-8 text kept readable, line-breaking characters escaped."""
    text = json.dumps(record, ensure_ascii=False)
    for char, escaped in _LINE_BREAKS.items():
        if char in text:
            text = text.replace(char, escaped)
    return text + "\n"


def _sqlite_path(url: str) -> Path | None:
    if url.startswith("sqlite:///") and ":memory:" not in url:
        return Path(url[len("sqlite:///"):].split("?", 1)[0])
    return None


def _read_only_uri(path: Path) -> str:
    """SQLite's URI for opening ``path`` so that no statement can write through the connection."""
    uri = f"{path.resolve().as_uri()}?mode=ro"
    # A WAL database in a folder we cannot write cannot even be read (SQLite needs its -shm index). When
    # neither the folder nor the file is writable for us, the deployment froze it on purpose (a hosted
    # demo's shipped store): read it as an immutable file.
    effective = os.access in os.supports_effective_ids
    if path.exists() and not any(os.access(p, os.W_OK, effective_ids=effective) for p in (path.parent, path)):
        uri += "&immutable=1"
    return uri


def _read_only_sqlite(uri: str) -> sqlite3.Connection:
    conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
    # ATTACH would open (and create) another, writable file through this connection.
    conn.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
    return conn


def _engine_options(url: str, read_only: bool) -> dict[str, Any]:
    if read_only and url.startswith(("postgresql", "postgres")):
        # Every transaction of every connection is READ ONLY: PostgreSQL itself refuses writes.
        return {"connect_args": {"options": "-c default_transaction_read_only=on"}}
    return {}


def _read_only_session(dbapi_connection, connection_record) -> None:
    """Make a (PostgreSQL) connection's session read-only, on top of the server-side default."""
    cursor = dbapi_connection.cursor()
    cursor.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
    cursor.close()
    dbapi_connection.commit()


def _reason(exc: Exception) -> str:
    """The driver's own words for a database error, without SQLAlchemy's statement dump."""
    orig = getattr(exc, "orig", None)
    text = str(orig if orig is not None else exc).strip().splitlines()
    return f"{type(orig or exc).__name__}: {text[0] if text else ''}"



# --------------------------------------------------------------------------- the store

class PairStore:
    """The pair store. Open one per process (or per dashboard session) with :func:`open_store`.

    Reads: :meth:`list`, :meth:`get`, :meth:`get_by_key`, :meth:`history`, :meth:`version_at`,
    :meth:`counts`, :meth:`export_jsonl`, :meth:`trials`. Writes: :meth:`add`, :meth:`edit`,
    :meth:`accept`, :meth:`reject`, :meth:`import_jsonl`.
    """

    def __init__(self, url: str, read_only: bool = False):
        self.url = url
        self.read_only = read_only
        path = _sqlite_path(url)
        try:
            if path is not None and not read_only:
                path.parent.mkdir(parents=True, exist_ok=True)
            if path is not None and read_only:
                # The file is opened read-only by SQLite itself: no statement can write through it.
                uri = _read_only_uri(path)
                self.engine: Engine = create_engine("sqlite://", future=True, creator=lambda: _read_only_sqlite(uri))
            else:
                self.engine = create_engine(url, future=True, **_engine_options(url, read_only))
        except (SQLAlchemyError, ImportError, ValueError, OSError) as exc:
            raise MuttlabError(f"cannot open the pair store at {url!r}: {exc}; check MUTTLAB_DATABASE_URL "
                               "(or --cache-dir, where the default store lives)") from None
        if self.engine.dialect.name == "sqlite":
            event.listen(self.engine, "connect", self._sqlite_pragmas)
        elif read_only:
            event.listen(self.engine, "connect", _read_only_session)
        if not read_only:
            try:
                _Base.metadata.create_all(self.engine)
            except (SQLAlchemyError, OSError) as exc:
                raise MuttlabError(f"cannot create the pair store tables at {url!r}: {_reason(exc)}") from None

    # -- connection set-up

    def _sqlite_pragmas(self, dbapi_connection, connection_record) -> None:
        cursor = dbapi_connection.cursor()
        if self.read_only:
            cursor.execute("PRAGMA query_only=ON")
        else:
            cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA busy_timeout=10000")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    def _writable(self, what: str) -> None:
        if self.read_only:
            raise ReadOnlyError(what)

    def _tables_exist(self) -> bool:
        path = _sqlite_path(self.url)
        if self.read_only and path is not None and not path.is_file():
            return False  # connecting would create the file; a read-only store has nothing to show
        try:
            return inspect(self.engine).has_table("pairs")
        except SQLAlchemyError as exc:
            raise MuttlabError(f"cannot read the pair store at {self.url!r}: {_reason(exc)}; "
                               "check MUTTLAB_DATABASE_URL") from None

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> "PairStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- reads

    def list(self, corruption: str | Sequence[str] | None = None, status: str | Sequence[str] | None = None,
             text: str | None = None, source: str | None = None, offset: int = 0,
             limit: int | None = DEFAULT_PAGE_SIZE) -> Page:
        """A page of pairs in store order, filtered by type(s), status(es), a case-insensitive text
        fragment of either sentence, and a source prefix. ``limit=None`` returns every match."""
        if not self._tables_exist():
            return Page([], 0, offset, limit or 0)
        query = select(_Pair)
        if corruption:
            query = query.where(_Pair.corruption.in_([corruption] if isinstance(corruption, str) else corruption))
        if status:
            query = query.where(_Pair.status.in_([status] if isinstance(status, str) else status))
        if text:
            pattern = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            query = query.where(or_(_Pair.original.ilike(pattern, escape="\\"),
                                    _Pair.corrupted.ilike(pattern, escape="\\")))
        if source:
            query = query.where(_Pair.source.startswith(source, autoescape=True))
        with Session(self.engine) as session:
            total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
            page = query.order_by(_Pair.id).offset(max(0, offset))
            if limit is not None:
                page = page.limit(max(0, limit))
            items = [_record(row) for row in session.scalars(page)]
        return Page(items, total, offset, limit if limit is not None else total)

    def iter_all(self, **filters) -> Iterator[PairRecord]:
        yield from self.list(limit=None, **filters).items

    def get(self, pair_id: int) -> PairRecord:
        """The pair with this store number (PairNotFound when there is none)."""
        number = _pair_number(pair_id)
        if number is None or not self._tables_exist():
            raise PairNotFound(pair_id)
        with Session(self.engine) as session:
            row = session.get(_Pair, number)
            if row is None:
                raise PairNotFound(pair_id)
            return _record(row)

    def get_by_key(self, key: str) -> PairRecord:
        if not self._tables_exist():
            raise PairNotFound(key)
        with Session(self.engine) as session:
            row = session.scalar(select(_Pair).where(_Pair.key == key))
            if row is None:
                raise PairNotFound(key)
            return _record(row)

    def resolve(self, ident: int | str) -> PairRecord:
        """A pair by store number or by key (what the CLI accepts)."""
        if isinstance(ident, int) or (isinstance(ident, str) and ident.isascii() and ident.isdigit()):
            return self.get(ident)
        return self.get_by_key(ident)

    def history(self, pair_id: int) -> list[Revision]:
        """Every revision of a pair, oldest first (the first one is its creation)."""
        pair_id = self.get(pair_id).id
        with Session(self.engine) as session:
            rows = session.scalars(select(_Revision).where(_Revision.pair_id == pair_id)
                                   .order_by(_Revision.version, _Revision.id))
            return [Revision(r.pair_id, r.version, r.action, r.author, r.at,
                             json.loads(r.before) if r.before is not None else None, json.loads(r.after))
                    for r in rows]

    def version_at(self, pair_id: int, version: int) -> dict[str, Any]:
        """The reviewable fields of a pair as they were at ``version``, rebuilt from its history."""
        state: dict[str, Any] | None = None
        for revision in self.history(pair_id):
            if revision.version > version:
                break
            state = {**(state or {}), **revision.after}
        if state is None:
            raise MuttlabError(f"pair {pair_id} has no version {version}; versions start at 1")
        return state

    def latest_revision(self) -> int:
        """The id of the newest revision in the store (0 when empty): a suite built from the store is
        the same as long as this number is, so runs and caches key on it."""
        if not self._tables_exist():
            return 0
        with Session(self.engine) as session:
            return int(session.scalar(select(func.max(_Revision.id))) or 0)

    def counts(self) -> dict[tuple[str, str], int]:
        """Number of pairs per (type, status)."""
        if not self._tables_exist():
            return {}
        with Session(self.engine) as session:
            rows = session.execute(select(_Pair.corruption, _Pair.status, func.count()).group_by(
                _Pair.corruption, _Pair.status))
            return {(c, s): n for c, s, n in rows}

    def trials(self, corruptions: Sequence[str] | None = None,
               statuses: Sequence[str] = (PROPOSED, ACCEPTED, EDITED)) -> list[Trial]:
        """The stored pairs as trials (rejected ones left out by default), in store order."""
        return [r.to_trial() for r in self.iter_all(corruption=list(corruptions) if corruptions else None,
                                                   status=list(statuses))]

    # -- writes

    def add(self, trials: Iterable[Trial], author: str, status: str | None = None,
            imported_from: str | None = None) -> AddReport:
        """Store trials as new pairs (key = trial id); a key already stored is left untouched.

        ``status`` overrides each trial's status (e.g. ``proposed`` for freshly extracted pairs).
        ``imported_from`` names the suite the trials are copied from (``suite:default``): nobody here has
        reviewed them, so they start ``proposed`` (unless ``status`` says otherwise), each keeps its own source
        (the suite's name where it has none), and its first revision is an ``import`` by ``author``, the person
        who copied them, not a ``create`` of theirs.
        """
        self._writable("add pairs")
        author = _check_author(author)
        if imported_from is not None:
            imported_from = _check_key(imported_from, "imported_from")
        added = existing = 0
        with Session(self.engine) as session, session.begin():
            known = set(session.scalars(select(_Pair.key)))
            for trial in trials:
                _check_key(trial.id, "trial id")
                if trial.id in known:
                    existing += 1
                    continue
                start = status or (PROPOSED if imported_from else trial.status)
                values = validate_fields({"corruption": trial.corruption, "original": trial.original,
                                          "corrupted": trial.corrupted, "references": list(trial.references),
                                          "status": start, "human_score": trial.human_score})
                self._insert(session, trial.id, values, trial.source or imported_from or "", author,
                             "import" if imported_from else "create")
                known.add(trial.id)
                added += 1
        return AddReport(added, existing)

    def _insert(self, session: Session, key: str, values: dict[str, Any], source: str, author: str,
                action: str) -> _Pair:
        now = _now()
        row = _Pair(key=key, corruption=values["corruption"], original=values["original"],
                    corrupted=values["corrupted"], references=json.dumps(values["references"], ensure_ascii=False),
                    source=source or "", human_score=values.get("human_score"), status=values["status"],
                    version=1, created_at=now, updated_at=now)
        session.add(row)
        session.flush()
        after = {f: values[f] for f in SNAPSHOT_FIELDS}
        session.add(_Revision(pair_id=row.id, version=1, action=action, author=author, at=now, before=None,
                              after=json.dumps(after, ensure_ascii=False)))
        return row

    def _change(self, pair_id: int, base_version: int | None, changes: dict[str, Any], author: str,
                action: str) -> PairRecord:
        """Apply ``changes`` if the pair is still at ``base_version`` (current version when None)."""
        author = _check_author(author)
        number = _pair_number(pair_id)
        if number is None:
            raise PairNotFound(pair_id)
        if base_version is not None and _pair_number(base_version) is None:
            raise MuttlabError(f"base version {base_version!r} is not a version; versions start at 1")
        try:
            return self._try_change(number, base_version, changes, author, action)
        except _StaleVersion as stale:
            # An edit's status change is implied; what comes back is what the editor typed.
            attempted = {k: v for k, v in changes.items() if not (action == "edit" and k == "status")}
            self._raise_conflict(number, stale.base, attempted)
        except OperationalError as exc:
            raise MuttlabError(f"the pair store could not save pair {number} ({_reason(exc)}); nothing was "
                               "changed, try again") from None

    def _try_change(self, pair_id: int, base_version: int | None, changes: dict[str, Any], author: str,
                    action: str) -> PairRecord:
        with Session(self.engine) as session, session.begin():
            row = session.get(_Pair, pair_id)
            if row is None:
                raise PairNotFound(pair_id)
            current = _record(row)
            base = current.version if base_version is None else int(base_version)
            before = current.snapshot()
            after = {**before, **changes}
            now = _now()
            values = {k: (json.dumps(v, ensure_ascii=False) if k == "references" else v)
                      for k, v in changes.items()}
            # The version check and the write are one statement, so two writers cannot both pass it.
            result = session.execute(
                update(_Pair).where(_Pair.id == int(pair_id), _Pair.version == base)
                .values(**values, version=base + 1, updated_at=now)
                .execution_options(synchronize_session=False))
            if result.rowcount != 1:
                raise _StaleVersion(base)  # leaves the transaction, which rolls back
            session.add(_Revision(pair_id=pair_id, version=base + 1, action=action, author=author, at=now,
                                  before=json.dumps(before, ensure_ascii=False),
                                  after=json.dumps(after, ensure_ascii=False)))
            # Read back inside the same transaction, which holds the row: the version returned is the one
            # this change wrote, not whatever a later writer has made of the pair by the time we look.
            saved = session.execute(select(_Pair).where(_Pair.id == pair_id)
                                    .execution_options(populate_existing=True)).scalar_one()
            record = _record(saved)
        return record

    def _raise_conflict(self, pair_id: int, base: int, attempted: dict) -> None:
        current = self.get(pair_id)
        history = self.history(pair_id)
        last = history[-1].author if history else None
        raise ConflictError(pair_id, base, current, attempted, last)

    def edit(self, pair_id: int, base_version: int, changes: dict[str, Any], author: str) -> PairRecord:
        """Change a pair's type, sentences or references; its status becomes ``edited``.

        Args:
          base_version: the version the editor saw; the edit is refused (ConflictError) when the pair
            has changed since.
          changes: any of ``corruption``, ``original``, ``corrupted``, ``references``.
        Returns: the pair as saved (version base_version + 1).
        """
        self._writable("edit pairs")
        unknown = sorted(set(changes) - set(EDITABLE))
        if unknown:
            raise MuttlabError(f"cannot edit {', '.join(unknown)}; editable fields: {', '.join(EDITABLE)}")
        if not changes:
            raise MuttlabError("nothing to change: give at least one of " + ", ".join(EDITABLE))
        if base_version is None:
            raise MuttlabError("an edit needs the version it is based on (base_version)")
        values = validate_fields(changes)
        return self._change(pair_id, base_version, {**values, "status": EDITED}, author, "edit")

    def accept(self, pair_id: int, author: str, base_version: int | None = None) -> PairRecord:
        """Mark a pair accepted (refused like an edit when ``base_version`` is given and stale)."""
        self._writable("accept pairs")
        return self._change(pair_id, base_version, {"status": ACCEPTED}, author, "accept")

    def reject(self, pair_id: int, author: str, base_version: int | None = None) -> PairRecord:
        """Mark a pair rejected (it is then left out of suites built from the store)."""
        self._writable("reject pairs")
        return self._change(pair_id, base_version, {"status": REJECTED}, author, "reject")

    def revert(self, pair_id: int, to_version: int, author: str, base_version: int | None = None) -> PairRecord:
        """Restore a pair's reviewable fields (status included) as they were at ``to_version``.

        The restore is a new revision (action ``revert``), so the history keeps every step; refused like
        an edit when ``base_version`` is given and stale.
        """
        self._writable("revert pairs")
        current = self.get(pair_id)
        if int(to_version) >= current.version:
            raise MuttlabError(f"pair {pair_id} is at version {current.version}; revert to an earlier one "
                               f"(1 to {current.version - 1})")
        state = self.version_at(pair_id, int(to_version))
        changes = {k: state[k] for k in SNAPSHOT_FIELDS if k in state}
        return self._change(pair_id, base_version, changes, author, "revert")

    # -- JSONL

    def import_jsonl(self, path: Path | str, author: str, status: str | None = None) -> ImportReport:
        """Add the pairs of a JSONL file, one object per line.

        Each line needs ``corruption``, ``original``, ``corrupted`` and ``references``; ``id`` (the key;
        default ``<corruption>/import-<line>``), ``source``, ``human_score`` and ``status`` are optional.
        A malformed line (bad JSON, unknown type, empty sentence...) is rejected with its number and the
        problem; every valid line is kept. Keys already stored are left as they are.
        """
        self._writable("import pairs")
        author = _check_author(author)
        records, report = parse_jsonl(path, status)
        with Session(self.engine) as session, session.begin():
            known = set(session.scalars(select(_Pair.key)))
            for number, key, values, source in records:
                if key in known:
                    report.existing += 1
                    continue
                self._insert(session, key, values, source, author, "import")
                known.add(key)
                report.added += 1
        return report

    def export_jsonl(self, path: Path | str | None = None, **filters) -> str:
        """The pairs (filtered like :meth:`list`) as JSONL text, also written to ``path`` when given."""
        text = "".join(jsonl_line(r.to_json()) for r in self.iter_all(**filters))
        if path is not None:
            try:
                Path(path).write_text(text, encoding="utf-8")
            except OSError as exc:
                raise MuttlabError(f"cannot write {path}: {exc.strerror}") from None
        return text


def parse_jsonl(path: Path | str, status: str | None = None,
                raw: bytes | None = None) -> tuple[list[tuple[int, str, dict, str]], ImportReport]:
    """The valid pair records of a JSONL file as (line number, key, checked fields, source), and a report
    holding every rejected line with its number and problem. Lines end with LF (CRLF is accepted); any
    other Unicode line separator is part of the text. ``raw`` gives the file's bytes when already read.
    A file over the pair limit is refused whole (DataError naming the first line over it)."""
    limits = active_limits()
    if raw is None:
        raw = read_bytes(path)
    lines = raw.split(b"\n")
    count = sum(1 for line in lines if line.strip())
    if count > limits.max_pairs:
        first = [number for number, line in enumerate(lines, start=1) if line.strip()][limits.max_pairs]
        raise DataError(path, limits.exceeded("max_pairs", count, "the file") + "; split it into smaller files",
                        line=first)
    report = ImportReport(path=str(path))
    records: list[tuple[int, str, dict, str]] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, start=1):
        line = line.rstrip(b"\r")
        if not line.strip():
            continue
        try:
            key, values, source = _parse_line(line, number, status)
        except MuttlabError as exc:
            report.errors.append(LineError(number, str(exc)))
            continue
        if key in seen:
            report.errors.append(LineError(number, f"id {key!r} appears on an earlier line of this file"))
            continue
        seen.add(key)
        records.append((number, key, values, source))
    return records, report


def _parse_line(line: bytes, number: int, status: str | None) -> tuple[str, dict, str]:
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MuttlabError(f"not valid UTF-8 (byte 0x{line[exc.start]:02x} at column {exc.start + 1}); "
                           "re-save the file as UTF-8") from None
    try:
        rec = parse_json(text, f"line {number}")
    except DataError as exc:
        raise MuttlabError(exc.problem) from None
    if not isinstance(rec, dict):
        raise MuttlabError("each line must be a JSON object")
    missing = [f for f in ("corruption", "original", "corrupted", "references") if f not in rec]
    if missing:
        raise MuttlabError(f"missing field(s): {', '.join(missing)}")
    values = validate_fields({"corruption": rec["corruption"], "original": rec["original"],
                              "corrupted": rec["corrupted"], "references": rec["references"],
                              "status": status or rec.get("status", PROPOSED),
                              "human_score": rec.get("human_score")})
    key = _check_key(rec.get("id") or f"{values['corruption']}/import-{number}", "id")
    source = _check_key(rec.get("source") or "", "source")
    return key, values, source


def open_store(settings: Settings) -> PairStore:
    """The pair store of these settings (``settings.store_url``, read-only when ``settings.read_only``)."""
    return PairStore(settings.store_url, read_only=settings.read_only)


__all__ = ["PairStore", "open_store", "PairRecord", "Revision", "Page", "ImportReport", "LineError", "AddReport",
           "ConflictError", "ReadOnlyError", "PairNotFound", "STATUSES", "EDITABLE", "PROPOSED", "ACCEPTED",
           "REJECTED", "EDITED", "validate_fields", "parse_jsonl", "jsonl_line"]
