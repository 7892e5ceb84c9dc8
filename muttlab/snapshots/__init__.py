"""Results computed ahead and shipped with the package: one format, one stamp, one staleness rule
(:mod:`muttlab.snapshots.snapshot`) for every kind in :data:`KINDS`::

    from muttlab.snapshots import KINDS, load
    grid = load(KINDS["grid"])            # a Snapshot, or None in a build without data/results
    grid.content.select(["BLEU-4"])       # the kind's content: muttlab.snapshots.grid.Grid

Front-ends reach them through :mod:`muttlab.api` (``api.snapshot``, ``api.snapshot_differences``).
"""
from __future__ import annotations

from muttlab.snapshots import grid, human, meta_eval, profiles, published, severity
from muttlab.snapshots.snapshot import (FORMAT, Kind, Snapshot, Stamp, code_digests, current_stamp, load, parse,
                                        path_of, sha256_file, write)

# Every kind of shipped snapshot, by name: data/results/<name>.json. A new kind: a module beside these with its
# content, and its Kind here (muttlab/snapshots/snapshot.py says what a kind needs).
KINDS: dict[str, Kind] = {kind.name: kind for kind in (
    Kind("grid", "scripts/precompute_grid.py", ("muttlab.engine.verdict", "muttlab.engine.accuracy"),
         grid.data_files, True, grid.to_document, grid.parse),
    Kind("human", "scripts/precompute_human.py", human.CODE_MODULES, human.data_files, False,
         human.to_document, human.parse),
    Kind("published", "scripts/precompute_published.py", ("muttlab.human.reproduce", "muttlab.engine.verdict"),
         published.data_files, True, published.to_document, published.parse),
    Kind("severity", "scripts/precompute_severity.py",
         ("muttlab.severity", "muttlab.corruptions.generate", "muttlab.engine.verdict"),
         severity.data_files, True, severity.to_document, severity.parse),
    Kind("meta_eval", "scripts/precompute_meta_eval.py", meta_eval.CODE_MODULES, meta_eval.data_files, False,
         meta_eval.to_document, meta_eval.parse),
    Kind("profiles", "scripts/precompute_profiles.py", profiles.CODE_MODULES, profiles.data_files, True,
         profiles.to_document, profiles.parse),
)}

__all__ = ["FORMAT", "KINDS", "Kind", "Snapshot", "Stamp", "code_digests", "current_stamp", "load", "parse",
           "path_of", "sha256_file", "write"]
