"""The human-judgment studies as they ship with the package (``muttlab/data/results/human.json``), so that the
Human judgments and Correlation studies pages show results at once: on a server without a data dir (the
hosted demo, where the datasets do not ship) and on a fresh server before anything is scored.

What ships, all derived numbers: per SICK-derived corruption type and reading, the pair counts, the summary
statistics and 20-bin histograms of gold relatedness and each study metric's scores, and the pairwise
correlation matrix for every method (MUTT §5); the Flickr8K-Expert and CrowdFlower Kendall τ table with its
bootstrap intervals; the ΔBLEU observation-unit study with its sweeps. No sentence, caption or per-pair
score ships: SICK and the MUTT sets derived from it are CC BY-NC-SA 3.0, and the Flickr8k captions and
judgments are distributed for research use only; the file says so in its ``licence`` field.

The file is written by ``scripts/precompute_human.py`` and stamped with the sha256 of every data file the
studies read, of the studies' code and the signature of every metric scored; ``tests/dashboard/
test_shipped_human.py`` compares that stamp with the current one. A server with the data shows the shipped
numbers only while their stamp matches its own (:func:`current_stamp`). This module does not import
Streamlit.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import json
from dataclasses import dataclass, field
from importlib.util import find_spec
from pathlib import Path

import pandas as pd

from muttlab.dashboard.shared import singleton
from muttlab.dashboard.shipped import read_document, sha256_file
from muttlab.errors import DataError
from muttlab.resources.bundled import data_dir
from muttlab.settings import Settings

FORMAT = 1
RELATIVE_PATH = "results/human.json"
REGENERATE = ("MUTTLAB_DATA_DIR=/path/to/data python scripts/precompute_human.py "
              "(then commit data/results/human.json)")
LICENCE = ("Derived numbers only (counts, summary statistics, histogram counts, correlations); no sentence, "
           "caption or per-pair score. SICK and the MUTT sets derived from it: CC BY-NC-SA 3.0 (Marelli et al. "
           "2014; Boag et al. 2016). Flickr8k captions and judgments: research use (Hodosh et al. 2013).")
# The SICK-derived corruption types (muttlab.human.sick.SICK_CORRUPTIONS; a test keeps the two equal).
SICK_TYPES = ("neg_subj", "neg_verb", "sem_opps", "shuffled", "passive", "near_syms", "det_sub")
# The code behind the numbers: a change to any of these can change them.
# What ships is each page's default selection: the Flickr8K metrics and resamples, the ΔBLEU study's settings.
FLICKR_METRICS = ("BLEU-1", "BLEU-4", "ROUGE-L", "METEOR-1.5", "CIDEr-D", "TER", "BADGER-like", "W2V-AVG")
FLICKR_BOOT = 200
UNIT_DEFAULTS = {"unit": 100, "order": 4, "threshold": -1.0, "assignments": 200, "sweeps": True}
CODE_MODULES = ("muttlab.human.sick", "muttlab.human.flickr", "muttlab.human.dbleu", "muttlab.human.scoring",
                "muttlab.judged", "muttlab.stats", "muttlab.metrics.delta_bleu")


def human_path() -> Path:
    return data_dir() / RELATIVE_PATH


def data_files(root: Path) -> list[str]:
    """The files under the data dir ``root`` that the shipped studies read, relative, sorted."""
    files = ["sick/SICK.txt", "flickr8k/Flickr8k.token.txt", "flickr8k/ExpertAnnotations.txt",
             "flickr8k/CrowdFlowerAnnotations.txt"]
    files += [f"mutt/corruptions/{c}.txt" for c in SICK_TYPES]
    files += [p.relative_to(root).as_posix() for c in SICK_TYPES
              for p in (root / "mutt" / "experiments").glob(f"{c}_*.json")]
    return sorted(files)


@dataclass(frozen=True)
class Stamp:
    """What the shipped studies were computed from: sha256 per data file and per code module, and the
    signature of every metric scored."""

    data: dict[str, str] = field(default_factory=dict)
    code: dict[str, str] = field(default_factory=dict)
    signatures: dict[str, str] = field(default_factory=dict)

    def differences(self, current: "Stamp") -> list[str]:
        """What differs from ``current``, in words (empty when the shipped numbers are current)."""
        out = []
        for what, ours, theirs in (("data files", self.data, current.data), ("code", self.code, current.code),
                                   ("metrics", self.signatures, current.signatures)):
            changed = sorted(k for k in ours.keys() | theirs.keys() if ours.get(k) != theirs.get(k))
            if changed:
                out.append(f"{what} changed: {', '.join(changed)}")
        return out

    def digest(self) -> str:
        """One short sha256 over the stamp, for a page's caption."""
        text = json.dumps([sorted(self.data.items()), sorted(self.code.items()), sorted(self.signatures.items())])
        return hashlib.sha256(text.encode()).hexdigest()[:12]


def code_digests() -> dict[str, str]:
    return {name: sha256_file(Path(find_spec(name).origin)) for name in CODE_MODULES}


def current_stamp(settings: Settings, signatures: dict[str, str]) -> Stamp:
    """The stamp the studies computed now on ``settings``' data dir would carry; ``signatures`` are the
    current signatures of the metrics to compare (a metric absent here is left out)."""
    root = Path(settings.data_dir)
    return Stamp({f: sha256_file(root / f) for f in data_files(root) if (root / f).is_file()}, code_digests(),
                 dict(signatures))


@dataclass(frozen=True)
class SickNumbers:
    """One SICK study (corruption type × reading) as it ships; ``correlations`` per method, each a square
    frame indexed like :attr:`muttlab.human.sick.SickStudy.correlations`."""

    corruption: str
    reading: str
    reference: str
    metrics: list[str]
    pairs: int
    listed: int
    unmatched: int
    notes: list[str]
    summary: pd.DataFrame
    histograms: pd.DataFrame
    correlations: dict[str, pd.DataFrame]


@dataclass(frozen=True)
class FlickrNumbers:
    table: pd.DataFrame  # the columns of muttlab.human.flickr.COLUMNS
    n_boot: int
    seed: int
    skipped: dict[str, str]


@dataclass(frozen=True)
class UnitNumbers:
    """The ΔBLEU unit study with the settings it was run with."""

    settings: dict
    main: pd.DataFrame
    sweeps: pd.DataFrame
    notes: list[str]


@dataclass(frozen=True)
class ShippedHuman:
    sick: dict[tuple[str, str], SickNumbers]  # (corruption, reading) -> numbers
    flickr: FlickrNumbers
    units: UnitNumbers
    created: str
    muttlab_version: str
    stamp: Stamp
    licence: str

    def sick_study(self, corruption: str, reading: str) -> SickNumbers | None:
        return self.sick.get((corruption, reading))

    def label(self) -> str:
        """The caption every shipped view carries: shipped, when, from what."""
        return (f"Shipped results, computed {self.created} with muttlab {self.muttlab_version} on the real data "
                f"(stamp {self.stamp.digest()}: {len(self.stamp.data)} data files, the studies' code and "
                f"{len(self.stamp.signatures)} metric signatures).")


def _records(frame: pd.DataFrame) -> list[dict]:
    """JSON-ready rows: NaN as null, numpy numbers as plain ones."""
    return json.loads(frame.to_json(orient="records", double_precision=15))


def sick_numbers(study, correlations: dict[str, pd.DataFrame] | None = None) -> SickNumbers:
    """The shippable part of a :class:`muttlab.human.sick.SickStudy` (no sentence, no per-pair score), with
    the correlation matrix of each method in ``correlations`` (default: the study's own method)."""
    return SickNumbers(study.corruption, study.reading, study.reference, list(study.metrics), len(study.pairs),
                       study.listed, study.unmatched, study.notes(), study.summary, study.histograms(),
                       correlations or {study.method: study.correlations})


def _sick_document(numbers: SickNumbers) -> dict:
    return {"corruption": numbers.corruption, "reading": numbers.reading, "reference": numbers.reference,
            "metrics": numbers.metrics, "pairs": numbers.pairs, "listed": numbers.listed,
            "unmatched": numbers.unmatched, "notes": numbers.notes, "summary": _records(numbers.summary),
            "histograms": _records(numbers.histograms),
            "correlations": {method: {"variables": list(matrix.index), "values": matrix.to_numpy().tolist()}
                             for method, matrix in numbers.correlations.items()}}


def build(sick: list[SickNumbers], flickr, units, unit_settings: dict, stamp: Stamp, version: str,
          created: str | None = None) -> dict:
    """The JSON document for ``human.json`` from the SICK studies' :func:`sick_numbers`, a ``FlickrStudy`` and
    a ``DbleuStudy`` (run with ``unit_settings``)."""
    return {"format": FORMAT, "created": created or _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%MZ"),
            "muttlab_version": version, "licence": LICENCE,
            "stamp": {"data": dict(sorted(stamp.data.items())), "code": dict(sorted(stamp.code.items())),
                      "signatures": dict(sorted(stamp.signatures.items()))},
            "sick": [_sick_document(numbers) for numbers in sick],
            "flickr": {"n_boot": flickr.n_boot, "seed": flickr.seed, "skipped": flickr.skipped,
                       "table": _records(flickr.table)},
            "units": {"settings": unit_settings, "notes": list(units.notes), "main": _records(units.main),
                      "sweeps": _records(units.sweeps)}}


def _fail(where: str, what: str):
    return DataError(where, what, fix=f"regenerate it: {REGENERATE}")


def _sick(part: dict, where: str) -> SickNumbers:
    correlations = {}
    for method, matrix in (part.get("correlations") or {}).items():
        names = list(matrix["variables"])
        correlations[method] = pd.DataFrame(matrix["values"], index=names, columns=names, dtype=float)
    return SickNumbers(str(part["corruption"]), str(part["reading"]), str(part["reference"]), list(part["metrics"]),
                       int(part["pairs"]), int(part["listed"]), int(part["unmatched"]), list(part.get("notes") or []),
                       pd.DataFrame(part["summary"]), pd.DataFrame(part["histograms"]), correlations)


def parse(document: dict, where: str = RELATIVE_PATH) -> ShippedHuman:
    """A :class:`ShippedHuman` from the JSON document, or a DataError naming what is wrong."""
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise _fail(where, f"not a format-{FORMAT} human-studies file")
    missing = [k for k in ("stamp", "sick", "flickr", "units") if not document.get(k)]
    if missing:
        raise _fail(where, f"it lacks {', '.join(missing)}")
    try:
        sick = {(s.corruption, s.reading): s for s in (_sick(part, where) for part in document["sick"])}
        flickr, units, stamp = document["flickr"], document["units"], document["stamp"]
        shipped_flickr = FlickrNumbers(pd.DataFrame(flickr["table"]), int(flickr["n_boot"]), int(flickr["seed"]),
                                       dict(flickr.get("skipped") or {}))
        shipped_units = UnitNumbers(dict(units["settings"]), pd.DataFrame(units["main"]),
                                    pd.DataFrame(units["sweeps"]), list(units.get("notes") or []))
        shipped_stamp = Stamp(dict(stamp["data"]), dict(stamp["code"]), dict(stamp["signatures"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise _fail(where, f"a part is malformed ({type(exc).__name__}: {exc})") from None
    return ShippedHuman(sick, shipped_flickr, shipped_units, str(document.get("created", "")),
                        str(document.get("muttlab_version", "")), shipped_stamp, str(document.get("licence", "")))


def load(path: Path | None = None) -> ShippedHuman | None:
    """The shipped studies, or None when the package has none."""
    path = path or human_path()
    document = read_document(path, REGENERATE)
    return None if document is None else parse(document, str(path))


@singleton
def shipped() -> ShippedHuman | None:
    """:func:`load` once per server process (the pages read it on every visit)."""
    return load()
