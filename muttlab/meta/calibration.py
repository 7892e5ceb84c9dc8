"""Tie calibrations: the ε a metric earns on expert judgments, for judging unit tests with it.

The item-grouped acc*_eq's ε (:func:`muttlab.meta.statistics.tie_calibrated_accuracy`) is the largest score
difference between two outputs of one source that best matches where experts see no difference. The
calibrated tie rule (``calibrated:<study>:<pair>``) reads these records to call two scores within ε of each
other a tie. A record names what it holds:

``study``, ``pair``, ``target_language``  where ε was earned (``mqm-ted``, ``en-de``, ``de``)
``metric``, ``signature``                  the metric and its exact settings (:meth:`Metric.signature`)
``data_digest``                            sha256 of the judgment files read
``epsilon``                                ε, an absolute difference in the metric's own units
``informative``, ``reason``                whether the metric has earned ε, and why: ε must leave pairs untied and
                                           the metric's acc*_eq beat the constant baseline's (which ties every pair)
                                           on the same pairs, significantly where tested
                                           (:func:`muttlab.meta.evaluate.calibration_verdict`)
``acc_eq``, ``n_pairs``                    the acc*_eq reached and the item-grouped pairs it was measured on

The file is ``{"version": 1, "calibrations": [record, ...]}`` (``data/results/calibrations.json`` ships the
TED pairs', written by ``scripts/precompute_meta_eval.py``).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

from muttlab.errors import MuttlabError
from muttlab.rules import CALIBRATION_FIELDS, CALIBRATIONS_VERSION, Calibrations
from muttlab.meta.result import MetaEvaluation

STATISTIC = "acc_eq_item"
FIELDS = CALIBRATION_FIELDS


def calibration_records(result: MetaEvaluation, study: str | None = None) -> list[dict]:
    """One record per metric of ``result`` (baselines left out) from its item-grouped acc*_eq.

    Args:
      study: the study's name (default: what ``result.name`` says before ``:``, ``mqm-ted`` for
        ``mqm-ted:en-de``).
    Raises:
      MuttlabError: the result has no item-grouped acc*_eq, or no language pair.
    """
    if STATISTIC not in result.statistics:
        raise MuttlabError(f"a calibration is the ε of {STATISTIC}; evaluate with that statistic")
    study = study or result.name.partition(":")[0]
    if not result.pair:
        raise MuttlabError(f"{result.name}: a calibration names its language pair, and these judgments do not say "
                           "it (give a judgments file a lang field such as en-de)")
    return [{"study": study, "pair": result.pair, "target_language": result.target_language, "metric": metric,
             "signature": result.metrics[metric], "data_digest": result.data_digest,
             "epsilon": result.epsilons[metric][STATISTIC], "informative": result.informative[metric][STATISTIC],
             "reason": result.reasons[metric][STATISTIC], "acc_eq": result.values[metric][STATISTIC],
             "n_pairs": result.pairs[STATISTIC]}
            for metric in result.metrics if metric not in result.baselines]


def calibrations_document(records: Sequence[dict]) -> dict:
    """The calibrations file's JSON document, written by the reader of the calibrated tie rule
    (:meth:`muttlab.rules.Calibrations.document`), so the file is always one it reads."""
    document = {"version": CALIBRATIONS_VERSION, "calibrations": [dict(record) for record in records]}
    return Calibrations.parse(document, "the meta-evaluation's calibrations").document()


def write_calibrations(path: Path, records: Sequence[dict]) -> None:
    Path(path).write_text(json.dumps(calibrations_document(records), indent=1, ensure_ascii=False) + "\n",
                          encoding="utf-8")
