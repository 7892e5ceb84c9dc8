"""A metric's robustness profile and the comparison of two, as values with a lossless JSON form.

A :class:`Profile` puts side by side, each with its interval, what the lab measures of one metric:

* ``mutt``: accuracy per MUTT corruption type × reference count (95% Wilson interval, tie rate);
* ``demetr``: DEMETR accuracy per perturbation (with its severity) and ``demetr_severity`` per severity;
* ``mslc``: MSLC24-B's edge cases (:mod:`muttlab.profile.mslc`), per language pair and case;
* ``mqm``: the meta-evaluation against expert MQM judgments of WMT21 TED, per language pair and statistic:
  value, 95% interval where there is one, ε, rank and significance cluster among the metrics evaluated,
  whether the ε is informative; ``mqm_skipped`` says why a pair has no numbers (a metric that cannot score
  German).

Each unit-test section can carry its :class:`TrialOutcomes` (every trial's pass/fail, packed as bits), which is
what a comparison of two metrics pairs trial by trial (McNemar). ``origin`` says where each section's numbers
come from (shipped, the score cache, computed), ``unavailable`` why a section is missing.
"""
from __future__ import annotations

import base64
import math
import zlib
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from muttlab.errors import DataError

FORMAT = 1
SECTIONS = ("mutt", "demetr", "demetr_severity", "mslc")
# The unit-test suites whose trials a profile can carry (demetr_severity is demetr's trials grouped otherwise).
TRIAL_SECTIONS = ("mutt", "demetr", "mslc")
MQM_COLUMNS = ["pair", "statistic", "value", "ci_low", "ci_high", "epsilon", "informative", "informative_reason",
               "rank", "of", "cluster", "clusters", "constant"]


def pack_array(values: np.ndarray, dtype: str) -> str:
    """An array's values as one text: little-endian ``dtype`` bytes, zlib-compressed, base64-encoded."""
    return base64.b64encode(zlib.compress(np.ascontiguousarray(values, dtype=dtype).tobytes(), 9)).decode("ascii")


def unpack_array(text: str, dtype: str, count: int) -> np.ndarray:
    """The ``count`` values :func:`pack_array` wrote; a ValueError when there are more or fewer (never
    inflating more than they take)."""
    size = np.dtype(dtype).itemsize * count
    inflate = zlib.decompressobj()
    data = inflate.decompress(base64.b64decode(text, validate=True), size + 1)
    if len(data) != size:
        raise ValueError(f"expected {count} values of {dtype}")
    return np.frombuffer(data, dtype=dtype).copy()


@dataclass(frozen=True, eq=False)
class TrialOutcomes:
    """Every trial of one suite for one metric: which cell (row of the section's table) it counts in, whether
    the metric scored it and passed it. ``keys`` (sha256 of the trials in order) says whether two metrics'
    outcomes pair trial by trial."""

    keys: str
    cell: np.ndarray  # int, row of the section's table
    passed: np.ndarray  # bool
    supported: np.ndarray  # bool

    def to_dict(self) -> dict:
        return {"keys": self.keys, "n": int(len(self.cell)), "cell": pack_array(self.cell, "<u2"),
                "passed": pack_array(np.packbits(self.passed), "u1"),
                "supported": pack_array(np.packbits(self.supported), "u1")}

    @classmethod
    def from_dict(cls, data: dict) -> "TrialOutcomes":
        n = int(data["n"])
        if not 0 <= n <= 10_000_000:
            raise ValueError(f"{n} trials")
        bits = (n + 7) // 8
        return cls(str(data["keys"]), unpack_array(data["cell"], "<u2", n).astype(np.int64),
                   np.unpackbits(unpack_array(data["passed"], "u1", bits))[:n].astype(bool),
                   np.unpackbits(unpack_array(data["supported"], "u1", bits))[:n].astype(bool))


def frame_document(frame: pd.DataFrame) -> dict:
    """A frame as {columns, dtypes, rows}, NaN and None as null: :func:`frame_from` reads back an equal one."""
    rows = [[None if (isinstance(v, float) and math.isnan(v)) or v is None or v is pd.NA
             else (v.item() if isinstance(v, np.generic) else v) for v in row]
            for row in frame.itertuples(index=False, name=None)]
    return {"columns": [str(c) for c in frame.columns], "dtypes": [str(t) for t in frame.dtypes], "rows": rows}


def frame_from(document: dict) -> pd.DataFrame:
    columns, dtypes = list(document["columns"]), list(document["dtypes"])
    if len(columns) != len(dtypes) or any(len(row) != len(columns) for row in document["rows"]):
        raise ValueError("a table's rows do not match its columns")
    frame = pd.DataFrame(document["rows"], columns=columns, dtype=object)
    for column, dtype in zip(columns, dtypes):
        if dtype.startswith(("float", "int", "bool")):
            values = frame[column].map(lambda v: np.nan if v is None else v)
            frame[column] = values.astype(dtype)
        elif dtype in ("Int64", "str"):  # nullable integers; text, missing where null (pandas' string dtype)
            frame[column] = frame[column].astype(dtype)
    return frame


@dataclass(eq=False)
class Profile:
    """One metric's robustness profile (module doc). Accuracies are in percent; MQM values are fractions or
    correlations, as the meta-evaluation gives them."""

    metric: str
    signature: str
    rules: str
    sections: dict[str, pd.DataFrame] = field(default_factory=dict)
    trials: dict[str, TrialOutcomes] = field(default_factory=dict)
    mqm: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=MQM_COLUMNS))
    mqm_skipped: dict[str, str] = field(default_factory=dict)
    origin: dict[str, str] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def section(self, name: str) -> pd.DataFrame | None:
        return self.sections.get(name)

    def to_dict(self) -> dict:
        """A JSON-ready dict; :meth:`from_dict` gives back an equal profile."""
        return {"format": FORMAT, "metric": self.metric, "signature": self.signature, "rules": self.rules,
                "sections": {k: frame_document(v) for k, v in self.sections.items()},
                "trials": {k: v.to_dict() for k, v in self.trials.items()},
                "mqm": frame_document(self.mqm), "mqm_skipped": dict(self.mqm_skipped), "origin": dict(self.origin),
                "unavailable": dict(self.unavailable), "notes": list(self.notes)}

    @classmethod
    def from_dict(cls, data: dict, where: str = "profile") -> "Profile":
        """The profile :meth:`to_dict` wrote; a DataError naming what is wrong."""
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise DataError(where, f"not a format-{FORMAT} profile")
        try:
            sections = {str(k): frame_from(v) for k, v in data["sections"].items()}
            unknown = [k for k in sections if k not in SECTIONS] + [k for k in data["trials"] if k not in sections]
            if unknown:
                raise ValueError(f"unknown section {unknown[0]!r}")
            return cls(str(data["metric"]), str(data["signature"]), str(data["rules"]), sections,
                       {str(k): TrialOutcomes.from_dict(v) for k, v in data["trials"].items()}, frame_from(data["mqm"]),
                       {str(k): str(v) for k, v in data["mqm_skipped"].items()},
                       {str(k): str(v) for k, v in data["origin"].items()},
                       {str(k): str(v) for k, v in data["unavailable"].items()}, [str(n) for n in data["notes"]])
        except (KeyError, TypeError, ValueError, AttributeError, zlib.error) as exc:
            raise DataError(where, f"malformed: {type(exc).__name__}: {exc}") from None

    def __eq__(self, other) -> bool:
        if not isinstance(other, Profile):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    def tables(self) -> dict[str, pd.DataFrame]:
        """Every table of the profile, by name (``mutt``, ``demetr``, ``demetr_severity``, ``mslc``, ``mqm``)."""
        return {**self.sections, "mqm": self.mqm}

    def long(self) -> pd.DataFrame:
        """Every number of the profile in one long table (:data:`LONG_COLUMNS`), one row per unit-test cell
        (``statistic`` accuracy, in %) and per MQM statistic: what ``muttlab profile --format csv`` writes."""
        parts = []
        for name, table in self.sections.items():
            part = table.rename(columns={"accuracy": "value"}).assign(section=name, statistic="accuracy")
            if "severity" in table.columns and name == "demetr_severity":
                part = part.rename(columns={"severity": "group"})
            parts.append(part)
        if not self.mqm.empty:
            parts.append(self.mqm.rename(columns={"pair": "group"}).assign(section="mqm"))
        frame = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
        frame = frame.reindex(columns=LONG_COLUMNS).assign(metric=self.metric)
        whole = ["refs", "n", "unsupported", "not_applied", "rank", "of", "cluster", "clusters"]
        return frame.astype({c: "Int64" for c in whole})


LONG_COLUMNS = ["metric", "section", "group", "refs", "severity", "statistic", "n", "value", "ci_low", "ci_high",
                "tie_rate", "unsupported", "not_applied", "epsilon", "informative", "rank", "of", "cluster", "clusters"]
COMPARISON_COLUMNS = ["suite", "group", "refs", "n", "first_accuracy", "second_accuracy", "difference",
                      "first_only", "second_only", "p_value", "significant", "first", "second", "reading"]
MQM_COMPARISON_COLUMNS = ["pair", "statistic", "first_value", "second_value", "difference", "p_value", "significant",
                          "method"]


@dataclass(eq=False)
class ProfileComparison:
    """Two metrics' profiles side by side.

    ``cells``: per unit-test cell both accuracies on the trials both metrics scored, the trials only one passed
    (``first_only``, ``second_only``), McNemar's p-value (:func:`muttlab.stats.mcnemar`), whether it is below
    ``alpha``, each metric's reading of the cell (``caught``: its 95% interval lies above 50 %; ``missed``:
    below; ``unclear``) and the comparison's reading in words. ``mqm``: per pair and statistic both values, their
    difference and the meta-evaluation's own p-value (its swap or permutation test), where both were evaluated
    together. ``profiles``: the two profiles compared (their JSON form is part of this one's)."""

    first: str
    second: str
    rules: str
    alpha: float
    cells: pd.DataFrame
    mqm: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    profiles: tuple[Profile, Profile] | None = None  # the two profiles compared

    def caught_by_one(self) -> pd.DataFrame:
        """The cells one metric catches and the other misses."""
        return self.cells[((self.cells["first"] == "caught") & (self.cells["second"] == "missed"))
                          | ((self.cells["first"] == "missed") & (self.cells["second"] == "caught"))]

    def long(self) -> pd.DataFrame:
        """The unit-test cells and the MQM rows in one table (``section`` says which): ``muttlab profile --vs
        --format csv``."""
        mqm = self.mqm.rename(columns={"pair": "group", "first_value": "first_accuracy",
                                       "second_value": "second_accuracy"}).assign(suite="mqm")
        parts = [p for p in (self.cells, mqm) if not p.empty]
        frame = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=COMPARISON_COLUMNS)
        frame = frame.rename(columns={"suite": "section", "first_accuracy": "first_value",
                                      "second_accuracy": "second_value"}).assign(first_metric=self.first,
                                                                                 second_metric=self.second)
        return frame.astype({c: "Int64" for c in ("refs", "n", "first_only", "second_only") if c in frame})

    def to_dict(self) -> dict:
        return {"format": FORMAT, "first": self.first, "second": self.second, "rules": self.rules,
                "alpha": self.alpha, "cells": frame_document(self.cells), "mqm": frame_document(self.mqm),
                "notes": list(self.notes),
                "profiles": None if self.profiles is None else [p.to_dict() for p in self.profiles]}

    @classmethod
    def from_dict(cls, data: dict, where: str = "profile comparison") -> "ProfileComparison":
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise DataError(where, f"not a format-{FORMAT} profile comparison")
        try:
            profiles = data.get("profiles")
            if profiles is not None:
                first, second = (Profile.from_dict(p, where) for p in profiles)
                profiles = (first, second)
            return cls(str(data["first"]), str(data["second"]), str(data["rules"]), float(data["alpha"]),
                       frame_from(data["cells"]), frame_from(data["mqm"]), [str(n) for n in data["notes"]], profiles)
        except (KeyError, TypeError, ValueError, zlib.error) as exc:
            raise DataError(where, f"malformed: {type(exc).__name__}: {exc}") from None

    def __eq__(self, other) -> bool:
        if not isinstance(other, ProfileComparison):
            return NotImplemented
        return self.to_dict() == other.to_dict()
