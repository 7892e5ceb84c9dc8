"""Published vs measured as it ships with the package (``muttlab/data/results/published.json``), so that the
page shows every number at once, with or without a data dir, instead of minutes of reproduction.

The file is written by ``scripts/precompute_published.py`` from :func:`muttlab.api.reproduce` on the real
data and stamped with what produced it: the sha256 of the data dir's ``published/published.csv``, the sha256
of the reproduction code (:mod:`muttlab.human.reproduce`) and the signature of every metric it measured.
``tests/dashboard/test_shipped_published.py`` compares that stamp with the current one, so a changed metric,
reproduction or published file cannot leave stale numbers on the page. Only numbers ship (no sentences).
This module does not import Streamlit.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from muttlab.dashboard.shipped import read_document, sha256_file
from muttlab.errors import DataError
from muttlab.human import reproduce
from muttlab.metrics.registry import Registry
from muttlab.resources.bundled import data_dir
from muttlab.settings import Settings

FORMAT = 1
RELATIVE_PATH = "results/published.json"
REGENERATE = ("MUTTLAB_DATA_DIR=/path/to/data python scripts/precompute_published.py "
              "(then commit data/results/published.json)")


def published_path() -> Path:
    return data_dir() / RELATIVE_PATH


@dataclass(frozen=True)
class Stamp:
    """What a reproduction was computed from."""

    published_csv: str  # sha256 of the data dir's published/published.csv
    code: str  # sha256 of muttlab/human/reproduce.py
    signatures: dict[str, str] = field(default_factory=dict)  # every metric measured

    def differences(self, current: "Stamp") -> list[str]:
        """What differs from ``current``, in words (empty when the numbers are current)."""
        out = []
        if self.published_csv != current.published_csv:
            out.append("the published file (published/published.csv) changed")
        if self.code != current.code:
            out.append("the reproduction code (muttlab/human/reproduce.py) changed")
        changed = sorted(m for m, s in self.signatures.items() if current.signatures.get(m) != s)
        if changed:
            out.append("metrics changed: " + ", ".join(changed))
        return out


@dataclass(frozen=True)
class ShippedReproduction:
    """The precomputed report: its frame (the columns of :data:`muttlab.human.reproduce.COLUMNS`) and stamp."""

    frame: pd.DataFrame
    studies: list[str]
    notes: list[str]
    created: str
    muttlab_version: str
    stamp: Stamp


def code_digest() -> str:
    return sha256_file(Path(reproduce.__file__))


def measured_metrics(frame: pd.DataFrame) -> list[str]:
    """The registry names of every metric the report measured (both of a correlation ``A~B``)."""
    names = (part for name in frame["metric_ours"] if name for part in str(name).split("~"))
    return sorted({n for n in names if n != reproduce.sick.GOLD})


def current_stamp(settings: Settings, registry: Registry, metrics: list[str]) -> Stamp:
    """The stamp a reproduction of ``metrics`` computed now, on ``settings``' data dir, would carry."""
    return Stamp(sha256_file(settings.data_dir / reproduce.PUBLISHED_FILE), code_digest(),
                 {m: registry.info(m).signature for m in metrics if m in registry.names})


def _json_value(value):
    if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)):
        return None  # JSON has no NaN
    return value.item() if hasattr(value, "item") else value


def build(report: reproduce.ReproductionReport, stamp: Stamp, version: str, created: str | None = None) -> dict:
    """The JSON document for ``published.json``."""
    return {"format": FORMAT, "created": created or _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%MZ"),
            "muttlab_version": version,
            "stamp": {"published_csv": stamp.published_csv, "code": stamp.code,
                      "signatures": dict(sorted(stamp.signatures.items()))},
            "summary": report.summary(), "studies": report.studies, "notes": report.notes,
            "numbers": [{k: _json_value(v) for k, v in row.items()} for row in report.frame.to_dict("records")]}


def parse(document: dict, where: str = RELATIVE_PATH) -> ShippedReproduction:
    """A :class:`ShippedReproduction` from the JSON document, or a DataError naming what is wrong."""
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise DataError(where, f"not a format-{FORMAT} published-numbers file", fix=f"regenerate it: {REGENERATE}")
    frame = pd.DataFrame(document.get("numbers") or [])
    missing = [c for c in reproduce.COLUMNS if c not in frame.columns]
    stamp = document.get("stamp")
    if missing or not isinstance(stamp, dict):
        what = f"numbers lack {', '.join(missing)}" if missing else "no stamp"
        raise DataError(where, what, fix=f"regenerate it: {REGENERATE}")
    frame = frame[reproduce.COLUMNS]
    for column in ("published", "measured", "difference", "tolerance"):
        frame[column] = pd.to_numeric(frame[column]).astype(float)
    frame["refs"] = pd.to_numeric(frame["refs"]).astype("Int64")
    frame["within"] = [None if w is None else bool(w) for w in frame["within"]]
    frame = frame.fillna({"reason": "", "metric_ours": ""})
    return ShippedReproduction(frame, list(document.get("studies") or []), list(document.get("notes") or []),
                               str(document.get("created", "")), str(document.get("muttlab_version", "")),
                               Stamp(str(stamp.get("published_csv", "")), str(stamp.get("code", "")),
                                     dict(stamp.get("signatures") or {})))


def load(path: Path | None = None) -> ShippedReproduction | None:
    """The shipped reproduction, or None when the package has none."""
    path = path or published_path()
    document = read_document(path, REGENERATE)
    return None if document is None else parse(document, str(path))


def stamp_digest(stamp: Stamp) -> str:
    """One short sha256 over the stamp, for the page's caption."""
    digest = hashlib.sha256(json.dumps([stamp.published_csv, stamp.code, sorted(stamp.signatures.items())])
                            .encode()).hexdigest()
    return digest[:12]
