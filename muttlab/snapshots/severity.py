"""The Severity page's default curve as it ships (``severity.json``): the page draws it on a first visit, like
the Run page's grid, instead of asking for a computation (written by ``scripts/precompute_severity.py`` with
:data:`muttlab.severity.DEFAULT_CURVE` on every MUTT original of the real data).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from muttlab.severity import COLUMNS, CurveRequest
from muttlab.snapshots import grid


@dataclass(frozen=True)
class Curve:
    """One severity curve table (the columns of :data:`muttlab.severity.COLUMNS`), the request it answers and
    how many sentences were offered and kept."""

    request: CurveRequest
    frame: pd.DataFrame
    sentences: int
    kept: int

    def table(self) -> pd.DataFrame:
        """The curve as :func:`muttlab.api.severity` returns it (its ``attrs`` included)."""
        frame = self.frame.copy()
        frame.attrs.update(sentences=self.sentences, kept=self.kept)
        return frame


def data_files(root: Path) -> list[str]:
    """The MUTT experiment files the default sentences (every distinct original) come from."""
    return grid.data_files(root)


def from_curve(request: CurveRequest, frame: pd.DataFrame) -> Curve:
    return Curve(request, frame[COLUMNS].reset_index(drop=True), int(frame.attrs["sentences"]),
                 int(frame.attrs["kept"]))


def to_document(curve: Curve) -> dict:
    request = curve.request
    return {"request": {"corruption": request.corruption, "metrics": list(request.metrics),
                        "strengths": list(request.strengths), "refs": request.refs},
            "sentences": curve.sentences, "kept": curve.kept,
            "rows": json.loads(curve.frame.to_json(orient="records", double_precision=15))}


def parse(document: dict, where: str) -> Curve:
    asked = document["request"]
    request = CurveRequest(str(asked["corruption"]), tuple(str(m) for m in asked["metrics"]),
                           tuple(int(k) for k in asked["strengths"]), int(asked["refs"]))
    frame = pd.DataFrame(document["rows"])
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"rows lack {', '.join(missing)}")
    return Curve(request, frame[COLUMNS], int(document["sentences"]), int(document["kept"]))
