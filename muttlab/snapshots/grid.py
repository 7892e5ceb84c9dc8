"""The accuracy grid as it ships (``grid.json``): every shipped metric on the MUTT experiment sets, so a visitor
sees results before running anything (written by ``scripts/precompute_grid.py``).

Only cell-level numbers ship (accuracy, counts, 95% intervals, tie rates): the sentences stay out, as the
MUTT and SICK licences forbid redistributing them. Every shipped metric is in it, the learned and neural ones
included, computed with the models the package ships (named by content hash in their signatures): where an
operator has installed a trained model, that metric's signature differs and its cells are outdated there.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import pandas as pd

from muttlab import sources

# Columns a cell carries (those of Results.accuracy(), its signature aside).
CELL_COLUMNS = ["metric", "corruption", "refs", "n", "passed", "accuracy", "ci_low", "ci_high", "tie_rate"]
_WHOLE = ("refs", "n", "passed")


@dataclass(frozen=True)
class Grid:
    """The precomputed grid: its cells, the suite, the metrics left out with why, and each metric's results
    signature (its signature and the rules it was judged by, as ``Results.signature`` gives it)."""

    cells: pd.DataFrame
    suite: str
    signatures: dict[str, str] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)

    @property
    def metrics(self) -> list[str]:
        return list(dict.fromkeys(self.cells["metric"]))

    @property
    def corruptions(self) -> list[str]:
        return list(dict.fromkeys(self.cells["corruption"]))

    @property
    def ref_counts(self) -> list[int]:
        return sorted({int(k) for k in self.cells["refs"]})

    def select(self, metrics: Sequence[str] | None = None, corruptions: Sequence[str] | None = None,
               ref_counts: Sequence[int] | None = None) -> pd.DataFrame:
        """The cells for the chosen metrics, corruptions and reference counts (all when None), with the
        signature column a run's accuracy table has (the metric's and the rules')."""
        cells = self.cells
        if metrics:
            cells = cells[cells["metric"].isin(list(metrics))]
        if corruptions:
            cells = cells[cells["corruption"].isin(list(corruptions))]
        if ref_counts:
            cells = cells[cells["refs"].isin([int(k) for k in ref_counts])]
        return cells.assign(signature=cells["metric"].map(self.signatures)).reset_index(drop=True)


def data_files(root: Path) -> list[str]:
    """The MUTT experiment files the grid reads (originals, corruptions, the 20-reference pools), relative."""
    return [f"mutt/experiments/{name}_{suffix}.json" for name in sources.MUTT_SETS
            for suffix in ("a", "b", f"r{max(sources.MUTT_REF_COUNTS)}")]


def from_results(accuracy: pd.DataFrame, signatures: dict[str, str], suite: str,
                 skipped: dict[str, str] | None = None) -> Grid:
    """The grid of ``Results.accuracy()`` frames (concatenated) and the runs' results signatures."""
    return Grid(accuracy[CELL_COLUMNS].reset_index(drop=True), suite, dict(signatures), dict(skipped or {}))


def to_document(grid: Grid) -> dict:
    records = [{k: (int(v) if k in _WHOLE else round(float(v), 4) if isinstance(v, float) else v)
                for k, v in row.items()} for row in grid.cells[CELL_COLUMNS].to_dict("records")]
    return {"suite": grid.suite, "signatures": dict(grid.signatures), "skipped": dict(grid.skipped),
            "cells": records}


def parse(document: dict, where: str) -> Grid:
    cells = pd.DataFrame(document.get("cells") or [])
    missing = [c for c in CELL_COLUMNS if c not in cells.columns]
    if missing:
        raise ValueError(f"cells lack {', '.join(missing)}")
    return Grid(cells[CELL_COLUMNS], str(document["suite"]), dict(document["signatures"]),
                dict(document.get("skipped") or {}))
