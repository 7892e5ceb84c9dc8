"""The human-judgment studies as they ship (``human.json``), so that the Human judgments and Correlation
studies pages show results at once: on a server without a data dir (the hosted demo, where the datasets do not
ship) and on a fresh server before anything is scored (written by ``scripts/precompute_human.py``).

What ships, all derived numbers: per SICK-derived corruption type and reading, the pair counts, the summary
statistics and 20-bin histograms of gold relatedness and each study metric's scores, and the pairwise
correlation matrix for every method (MUTT §5); the Flickr8K-Expert and CrowdFlower Kendall τ table with its
bootstrap intervals; the ΔBLEU observation-unit study with its sweeps. No sentence, caption or per-pair
score ships: SICK and the MUTT sets derived from it are CC BY-NC-SA 3.0, and the Flickr8k captions and
judgments are distributed for research use only; the content says so in its ``licence`` field.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

LICENCE = ("Derived numbers only (counts, summary statistics, histogram counts, correlations); no sentence, "
           "caption or per-pair score. SICK and the MUTT sets derived from it: CC BY-NC-SA 3.0 (Marelli et al. "
           "2014; Boag et al. 2016). Flickr8k captions and judgments: research use (Hodosh et al. 2013).")
# The SICK-derived corruption types (muttlab.human.sick.SICK_CORRUPTIONS; a test keeps the two equal).
SICK_TYPES = ("neg_subj", "neg_verb", "sem_opps", "shuffled", "passive", "near_syms", "det_sub")
# The code behind the numbers: a change to any of these can change them.
CODE_MODULES = ("muttlab.human.sick", "muttlab.human.flickr", "muttlab.human.dbleu", "muttlab.human.scoring",
                "muttlab.judged", "muttlab.stats", "muttlab.metrics.delta_bleu")


@dataclass(frozen=True)
class StudyDefaults:
    """What ships is each page's default selection: the Flickr8K metrics and resamples, the ΔBLEU unit
    study's settings."""

    flickr_metrics: tuple[str, ...] = ("BLEU-1", "BLEU-4", "ROUGE-L", "METEOR-1.5", "CIDEr-D", "TER", "BADGER-like",
                                       "W2V-AVG")
    flickr_boot: int = 200
    unit: int = 100
    order: int = 4
    threshold: float = -1.0
    assignments: int = 200
    sweeps: bool = True

    @property
    def units(self) -> dict:
        """The ΔBLEU unit study's settings as the page and the script name them."""
        return {"unit": self.unit, "order": self.order, "threshold": self.threshold,
                "assignments": self.assignments, "sweeps": self.sweeps}


DEFAULTS = StudyDefaults()


def data_files(root: Path) -> list[str]:
    """The files under the data dir ``root`` that the shipped studies read, relative, sorted."""
    files = ["sick/SICK.txt", "flickr8k/Flickr8k.token.txt", "flickr8k/ExpertAnnotations.txt",
             "flickr8k/CrowdFlowerAnnotations.txt"]
    files += [f"mutt/corruptions/{c}.txt" for c in SICK_TYPES]
    files += [p.relative_to(root).as_posix() for c in SICK_TYPES
              for p in (root / "mutt" / "experiments").glob(f"{c}_*.json")]
    return sorted(files)


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
class HumanStudies:
    sick: dict[tuple[str, str], SickNumbers]  # (corruption, reading) -> numbers
    flickr: FlickrNumbers
    units: UnitNumbers
    licence: str = LICENCE

    def sick_study(self, corruption: str, reading: str) -> SickNumbers | None:
        return self.sick.get((corruption, reading))


def sick_numbers(study, correlations: dict[str, pd.DataFrame] | None = None) -> SickNumbers:
    """The shippable part of a :class:`muttlab.human.sick.SickStudy` (no sentence, no per-pair score), with
    the correlation matrix of each method in ``correlations`` (default: the study's own method)."""
    return SickNumbers(study.corruption, study.reading, study.reference, list(study.metrics), len(study.pairs),
                       study.listed, study.unmatched, study.notes(), study.summary, study.histograms(),
                       correlations or {study.method: study.correlations})


def from_studies(sick: list[SickNumbers], flickr, units, unit_settings: dict) -> HumanStudies:
    """The content from the SICK studies' :func:`sick_numbers`, a ``FlickrStudy`` and a ``DbleuStudy`` (run with
    ``unit_settings``)."""
    return HumanStudies({(s.corruption, s.reading): s for s in sick},
                        FlickrNumbers(flickr.table, flickr.n_boot, flickr.seed, dict(flickr.skipped)),
                        UnitNumbers(dict(unit_settings), units.main, units.sweeps, list(units.notes)))


def _records(frame: pd.DataFrame) -> list[dict]:
    """JSON-ready rows: NaN as null, numpy numbers as plain ones."""
    return json.loads(frame.to_json(orient="records", double_precision=15))


def _sick_document(numbers: SickNumbers) -> dict:
    return {"corruption": numbers.corruption, "reading": numbers.reading, "reference": numbers.reference,
            "metrics": numbers.metrics, "pairs": numbers.pairs, "listed": numbers.listed,
            "unmatched": numbers.unmatched, "notes": numbers.notes, "summary": _records(numbers.summary),
            "histograms": _records(numbers.histograms),
            "correlations": {method: {"variables": list(matrix.index), "values": matrix.to_numpy().tolist()}
                             for method, matrix in numbers.correlations.items()}}


def to_document(studies: HumanStudies) -> dict:
    flickr, units = studies.flickr, studies.units
    return {"licence": studies.licence, "sick": [_sick_document(numbers) for numbers in studies.sick.values()],
            "flickr": {"n_boot": flickr.n_boot, "seed": flickr.seed, "skipped": flickr.skipped,
                       "table": _records(flickr.table)},
            "units": {"settings": units.settings, "notes": list(units.notes), "main": _records(units.main),
                      "sweeps": _records(units.sweeps)}}


def _sick(part: dict) -> SickNumbers:
    correlations = {}
    for method, matrix in (part.get("correlations") or {}).items():
        names = list(matrix["variables"])
        correlations[method] = pd.DataFrame(matrix["values"], index=names, columns=names, dtype=float)
    return SickNumbers(str(part["corruption"]), str(part["reading"]), str(part["reference"]), list(part["metrics"]),
                       int(part["pairs"]), int(part["listed"]), int(part["unmatched"]), list(part.get("notes") or []),
                       pd.DataFrame(part["summary"]), pd.DataFrame(part["histograms"]), correlations)


def parse(document: dict, where: str) -> HumanStudies:
    missing = [k for k in ("sick", "flickr", "units") if not document.get(k)]
    if missing:
        raise ValueError(f"it lacks {', '.join(missing)}")
    sick = {(s.corruption, s.reading): s for s in (_sick(part) for part in document["sick"])}
    flickr, units = document["flickr"], document["units"]
    return HumanStudies(sick, FlickrNumbers(pd.DataFrame(flickr["table"]), int(flickr["n_boot"]), int(flickr["seed"]),
                                            dict(flickr.get("skipped") or {})),
                        UnitNumbers(dict(units["settings"]), pd.DataFrame(units["main"]),
                                    pd.DataFrame(units["sweeps"]), list(units.get("notes") or [])),
                        str(document.get("licence", "")))
