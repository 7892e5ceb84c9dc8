"""The pair store as one caller may use it: a named list of reads, and the writes an annotator may make.

Nothing passes by default. A method of :class:`~muttlab.pairs.store.PairStore` that is not named here
(its engine, its URL, a write added later) is not reachable through the guard, and an attribute lookup
for one raises PermissionDenied. Reads need :attr:`Action.READ`; every write needs :attr:`Action.EDIT_PAIRS`
and is made under the name :func:`~muttlab.access.roles.require` returns at the moment of the write: the
caller's sign-in is checked again then (account, role, session), and no write takes an author from the
caller.
"""
from __future__ import annotations

from typing import Any

from muttlab.access.roles import Action, Identity, require
from muttlab.errors import PermissionDenied
from muttlab.settings import Settings

# The reads a viewer may make; export_jsonl is offered without its path (no file written on the server).
READS = ("list", "iter_all", "get", "get_by_key", "resolve", "history", "version_at", "latest_revision",
         "counts", "trials")


class GuardedStore:
    """A view of a :class:`~muttlab.pairs.store.PairStore` for ``identity``."""

    def __init__(self, store, identity: Identity, settings: Settings):
        self._store = store
        self.identity = identity
        self._settings = settings

    def __getattr__(self, name: str):
        if name in READS:
            require(self.identity, Action.READ, self._settings)
            return getattr(self._store, name)
        if name.startswith("__"):  # Python's own probes (copy, pickle, hasattr of protocols)
            raise AttributeError(name)
        raise PermissionDenied(f"the pair store offers no {name!r} here; reads: {', '.join(READS)}, export_jsonl; "
                               "writes: add, edit, accept, reject, revert (importing a server file is the command "
                               "line's: `muttlab pairs import`)")

    def export_jsonl(self, **filters) -> str:
        require(self.identity, Action.READ, self._settings)
        return self._store.export_jsonl(None, **filters)  # a path among the filters is refused (TypeError)

    def _author(self) -> str:
        return require(self.identity, Action.EDIT_PAIRS, self._settings).name

    def add(self, trials, status: str | None = None, imported_from: str | None = None):
        return self._store.add(trials, self._author(), status=status, imported_from=imported_from)

    def edit(self, pair_id: int, base_version: int, changes: dict[str, Any]):
        return self._store.edit(pair_id, base_version, changes, self._author())

    def accept(self, pair_id: int, base_version: int | None = None):
        return self._store.accept(pair_id, self._author(), base_version=base_version)

    def reject(self, pair_id: int, base_version: int | None = None):
        return self._store.reject(pair_id, self._author(), base_version=base_version)

    def revert(self, pair_id: int, to_version: int, base_version: int | None = None):
        return self._store.revert(pair_id, to_version, self._author(), base_version=base_version)


def guarded(store, identity: Identity, settings: Settings) -> GuardedStore:
    """``store`` for ``identity``: PermissionDenied on anything but the named reads, and on any write unless
    they may edit pairs here when they make it."""
    return GuardedStore(store, identity, settings)
