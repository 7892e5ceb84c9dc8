"""The pair store as one caller may use it: reads pass through, writes need the annotator role.

The dashboard wraps the shared store with :func:`guarded` for each session, so an edit is refused below the
page (PermissionDenied) when the session is not an annotator or maintainer, whatever the page shows, and
every revision is recorded under the caller's own name rather than one the page passes along.
"""
from __future__ import annotations

from muttlab.access.roles import Action, Identity, require
from muttlab.settings import Settings

WRITES = ("add", "edit", "accept", "reject", "import_jsonl")


class GuardedStore:
    """A view of a :class:`~muttlab.pairs.store.PairStore` for ``identity``."""

    def __init__(self, store, identity: Identity, settings: Settings):
        self._store = store
        self.identity = identity
        self._settings = settings

    def __getattr__(self, name: str):
        if name in WRITES:  # not reachable: each write is defined below; kept so a new one cannot slip by
            raise AttributeError(name)
        return getattr(self._store, name)

    def _author(self) -> str:
        return require(self.identity, Action.EDIT_PAIRS, self._settings).name

    def add(self, trials, author: str | None = None, status: str | None = None):
        return self._store.add(trials, self._author(), status=status)

    def edit(self, pair_id: int, base_version: int, changes: dict, author: str | None = None):
        return self._store.edit(pair_id, base_version, changes, self._author())

    def accept(self, pair_id: int, author: str | None = None, base_version: int | None = None):
        return self._store.accept(pair_id, self._author(), base_version=base_version)

    def reject(self, pair_id: int, author: str | None = None, base_version: int | None = None):
        return self._store.reject(pair_id, self._author(), base_version=base_version)

    def import_jsonl(self, path, author: str | None = None, status: str | None = None):
        return self._store.import_jsonl(path, self._author(), status=status)


def guarded(store, identity: Identity, settings: Settings) -> GuardedStore:
    """``store`` for ``identity``: PermissionDenied on any write unless they may edit pairs here."""
    return GuardedStore(store, identity, settings)
