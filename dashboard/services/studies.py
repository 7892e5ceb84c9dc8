"""The human-judgment studies as they ship (:mod:`muttlab.dashboard.shipped_human`), and whether this server
may show them in place of its own computation."""
from __future__ import annotations

from muttlab.dashboard import shipped_human
from muttlab.dashboard.services.core import metric_catalogue
from muttlab.dashboard.services.memo import memoised
from muttlab.settings import Settings


def shipped_studies() -> shipped_human.ShippedHuman | None:
    """The shipped studies (read once per process), or None when the package has none.

    Raises:
      DataError: the shipped file is malformed.
    """
    return shipped_human.shipped()


def shipped_studies_current(settings: Settings, shipped: shipped_human.ShippedHuman) -> bool:
    """Whether ``shipped`` is what this server would compute: the same data files, studies' code and metric
    signatures (a metric this server cannot load counts as changed). The files are hashed once per server."""
    signatures = {i.name: i.signature for i in metric_catalogue(settings) if i.available}
    mine = tuple(sorted((m, signatures[m]) for m in shipped.stamp.signatures if m in signatures))
    current = memoised(("human-stamp", settings, mine), lambda: shipped_human.current_stamp(settings, dict(mine)),
                       settings)
    return not shipped.stamp.differences(current)
