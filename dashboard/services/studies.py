"""The human-judgment studies as they ship (the ``human`` snapshot, :func:`muttlab.api.snapshot`), and whether
this server may show them in place of its own computation."""
from __future__ import annotations

from muttlab.dashboard.services.core import shipped, shipped_differences
from muttlab.settings import Settings


def shipped_studies():
    """The shipped studies' snapshot (read once per version of the file; its ``content`` is a
    ``muttlab.snapshots.human.HumanStudies``), or None when the package has none.

    Raises:
      DataError: the shipped file is malformed.
    """
    return shipped("human")


def shipped_studies_current(settings: Settings) -> bool:
    """Whether the shipped studies are what this server would compute: the same data files, studies' code and
    metric signatures (the one staleness rule of :mod:`muttlab.snapshots`). The files are hashed once per
    server."""
    snapshot = shipped_studies()
    return snapshot is not None and not shipped_differences(settings, snapshot)


def published_titles() -> dict[str, str]:
    """Each published-numbers name (``published.csv``'s study column, ``mutt_accuracy``) -> the paper and table
    its numbers come from, what the Published page shows instead of the name."""
    from muttlab import api

    return {p.name: p.description for study in api.studies() for p in study.published}
