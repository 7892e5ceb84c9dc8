"""The accuracy grid that ships with the package (``muttlab/data/results/grid.json``), so that a visitor
sees every metric's results before running anything.

Only cell-level numbers ship (accuracy, counts, 95% intervals, tie rates where the results have them):
the sentences stay out, as the MUTT and SICK licences forbid redistributing them. The file is written
by ``scripts/precompute_grid.py`` and stamped with the date, the sha256 of each experiment file it read
and every metric's signature; a test compares those signatures with the registry's, so a changed metric
cannot leave stale numbers on the landing page. Every shipped metric is in it, the learned and neural ones
included, computed with the models the package ships (named by content hash in their signatures): where an
operator has installed a trained model, that metric's signature differs and :meth:`ShippedGrid.stale` flags
its cells as outdated. This module does not import Streamlit.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import pandas as pd

from muttlab.errors import DataError
from muttlab.resources.bundled import data_dir

FORMAT = 1
RELATIVE_PATH = "results/grid.json"
REGENERATE = ("MUTTLAB_DATA_DIR=/path/to/data python scripts/precompute_grid.py "
              "(then commit data/results/grid.json)")
# Columns a cell may carry; ``ties``/``tie_rate`` only when the results table has them.
CELL_COLUMNS = ["metric", "corruption", "refs", "n", "passed", "accuracy", "ci_low", "ci_high", "ties", "tie_rate"]


def grid_path() -> Path:
    return data_dir() / RELATIVE_PATH


@dataclass(frozen=True)
class ShippedGrid:
    """The precomputed grid: cells as a frame plus what it was computed from."""

    cells: pd.DataFrame
    signatures: dict[str, str]
    created: str
    suite: str
    data_files: dict[str, str] = field(default_factory=dict)  # relative path -> sha256
    muttlab_version: str = ""
    tolerance: float = 0.15
    skipped: dict[str, str] = field(default_factory=dict)  # metric -> why it is not in the file

    @property
    def metrics(self) -> list[str]:
        return list(dict.fromkeys(self.cells["metric"]))

    @property
    def corruptions(self) -> list[str]:
        return list(dict.fromkeys(self.cells["corruption"]))

    @property
    def ref_counts(self) -> list[int]:
        return sorted({int(k) for k in self.cells["refs"]})

    @property
    def data_checksum(self) -> str:
        """One sha256 over the per-file checksums (sorted by path), for a footer."""
        digest = hashlib.sha256()
        for path, sha in sorted(self.data_files.items()):
            digest.update(f"{path}:{sha}\n".encode())
        return digest.hexdigest()

    def stale(self, current: dict[str, str]) -> dict[str, tuple[str, str]]:
        """Metrics whose shipped signature differs from ``current`` (name -> (shipped, current))."""
        return {m: (s, current[m]) for m, s in self.signatures.items() if m in current and current[m] != s}


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def cells_frame(accuracy: pd.DataFrame) -> pd.DataFrame:
    """The shippable columns of ``Results.accuracy()`` (tie columns kept when present)."""
    keep = [c for c in CELL_COLUMNS if c in accuracy.columns]
    return accuracy[keep].reset_index(drop=True)


def build(accuracy: pd.DataFrame, signatures: dict[str, str], suite: str, data_files: dict[str, str],
          version: str, tolerance: float, skipped: dict[str, str] | None = None,
          created: str | None = None) -> dict:
    """The JSON document for ``grid.json``."""
    cells = cells_frame(accuracy)
    records = []
    for row in cells.to_dict("records"):
        records.append({k: (int(v) if k in ("refs", "n", "passed", "ties") else
                            round(float(v), 4) if isinstance(v, float) else v) for k, v in row.items()})
    return {"format": FORMAT, "created": created or _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%MZ"),
            "muttlab_version": version, "suite": suite, "tolerance": tolerance,
            "data_files": dict(sorted(data_files.items())), "signatures": signatures,
            "skipped": skipped or {}, "cells": records}


def parse(document: dict, where: str = RELATIVE_PATH) -> ShippedGrid:
    """A :class:`ShippedGrid` from the JSON document, or a DataError naming what is wrong."""
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise DataError(where, f"not a format-{FORMAT} grid file", fix=f"regenerate it: {REGENERATE}")
    cells = pd.DataFrame(document.get("cells") or [])
    missing = [c for c in CELL_COLUMNS[:8] if c not in cells.columns]
    if missing:
        raise DataError(where, f"cells lack {', '.join(missing)}", fix=f"regenerate it: {REGENERATE}")
    return ShippedGrid(cells=cells, signatures=dict(document.get("signatures") or {}),
                       created=str(document.get("created", "")), suite=str(document.get("suite", "")),
                       data_files=dict(document.get("data_files") or {}),
                       muttlab_version=str(document.get("muttlab_version", "")),
                       tolerance=float(document.get("tolerance", 0.15)), skipped=dict(document.get("skipped") or {}))


def read_document(path: Path, regenerate: str) -> dict | None:
    """A shipped results file's JSON, or None when the package has none (a build without ``data/results``).

    Raises:
      DataError: the file is not JSON; the message says how to ``regenerate`` it.
    """
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(path, f"malformed JSON: {exc.msg}", line=exc.lineno,
                        fix=f"regenerate it: {regenerate}") from None


def load(path: Path | None = None) -> ShippedGrid | None:
    """The shipped grid, or None when the package has none."""
    path = path or grid_path()
    document = read_document(path, REGENERATE)
    return None if document is None else parse(document, str(path))


def select(grid: ShippedGrid, metrics: Sequence[str] | None = None, corruptions: Sequence[str] | None = None,
           ref_counts: Sequence[int] | None = None) -> pd.DataFrame:
    """The cells of ``grid`` for the chosen metrics, corruptions and reference counts (all when None),
    with the signature column the run's accuracy table has."""
    cells = grid.cells
    if metrics:
        cells = cells[cells["metric"].isin(list(metrics))]
    if corruptions:
        cells = cells[cells["corruption"].isin(list(corruptions))]
    if ref_counts:
        cells = cells[cells["refs"].isin([int(k) for k in ref_counts])]
    cells = cells.assign(signature=cells["metric"].map(grid.signatures))
    return cells.reset_index(drop=True)
