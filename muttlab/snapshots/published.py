"""Published vs measured as it ships (``published.json``), so that the page shows every number at once, with
or without a data dir, instead of minutes of reproduction (written by ``scripts/precompute_published.py`` from
:func:`muttlab.api.reproduce` on the real data). Only numbers ship (no sentences).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from muttlab.human import reproduce
from muttlab.snapshots import grid, human

NUMBER_COLUMNS = ("published", "measured", "measured_lab", "difference", "tolerance")


@dataclass(frozen=True)
class Reproduction:
    """The precomputed report: its frame (the columns of :data:`muttlab.human.reproduce.COLUMNS`)."""

    frame: pd.DataFrame
    studies: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    summary: str = ""

    def measured_metrics(self) -> list[str]:
        """The registry names of every metric the report measured (both of a correlation ``A~B``)."""
        return measured_metrics(self.frame)


def measured_metrics(frame: pd.DataFrame) -> list[str]:
    names = (part for name in frame["metric_ours"] if name for part in str(name).split("~"))
    return sorted({n for n in names if n != reproduce.sick.GOLD})


def data_files(root: Path) -> list[str]:
    """The published numbers and every data file the studies measuring them read."""
    return sorted({reproduce.PUBLISHED_FILE, *grid.data_files(root), *human.data_files(root)})


def from_report(report: reproduce.ReproductionReport) -> Reproduction:
    return Reproduction(report.frame, list(report.studies), list(report.notes), report.summary())


def _json_value(value):
    if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)):
        return None  # JSON has no NaN
    return value.item() if hasattr(value, "item") else value


def to_document(content: Reproduction) -> dict:
    return {"summary": content.summary, "studies": content.studies, "notes": content.notes,
            "numbers": [{k: _json_value(v) for k, v in row.items()} for row in content.frame.to_dict("records")]}


def parse(document: dict, where: str) -> Reproduction:
    frame = pd.DataFrame(document.get("numbers") or [])
    missing = [c for c in reproduce.COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"numbers lack {', '.join(missing)}")
    frame = frame[reproduce.COLUMNS].copy()
    for column in NUMBER_COLUMNS:
        frame[column] = pd.to_numeric(frame[column]).astype(float)
    frame["refs"] = pd.to_numeric(frame["refs"]).astype("Int64")
    frame["within"] = [None if w is None else bool(w) for w in frame["within"]]
    frame = frame.fillna({"reason": "", "metric_ours": "", "rule_note": ""})
    return Reproduction(frame, list(document.get("studies") or []), list(document.get("notes") or []),
                        str(document.get("summary", "")))
