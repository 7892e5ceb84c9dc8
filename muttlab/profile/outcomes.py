"""Every trial of a unit-test suite judged for a metric: the one table a profile and a comparison of rules read.

The suites (:data:`SUITES`, or a suite file's path):

* ``mutt``: the MUTT experiment sets (Boag et al. 2016), through the runner, at 5, 10 and 20 references;
* ``demetr``: DEMETR's 35 perturbation files (Karpinska et al. 2022), each scored as ``muttlab run --suite
  FILE`` scores it (:func:`muttlab.suites.contrastive.run_challenge`, one file a batch);
* ``mslc``: MSLC24-B's edge cases as trials (:mod:`muttlab.profile.mslc`);
* a suite file (trials JSONL, or a contrastive challenge set), as ``muttlab run --suite PATH`` reads it.

Scores come from the score cache when they are there (a second rule, a second visit: no metric runs again).
Nothing here decides a verdict: the runner and the challenge-set scorer judge through
:func:`muttlab.engine.verdict.judge` under the settings' rules.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from muttlab import sources
from muttlab.engine import runner, verdict
from muttlab.engine.accuracy import accuracy_cells
from muttlab.errors import DataError, MuttlabError
from muttlab.metrics.base import Metric
from muttlab.metrics.registry import Registry
from muttlab.profile import mslc
from muttlab.profile.mslc import read_mslc
from muttlab.settings import Settings
from muttlab.suites import read_suite
from muttlab.suites.contrastive import TIE, UNSUPPORTED, run_challenge, supports
from muttlab.suites.model import SuiteFile

ProgressFn = Callable[[int, int, str], None]

SUITES = ("mutt", "demetr", "mslc")
DEMETR_FOLDER = "demetr/dataset"
DEMETR_FILES = 35
# The columns of an outcome table: one row per trial (and reference count).
COLUMNS = ["trial", "group", "refs", "severity", "passed", "tied", "supported"]
CELL_COLUMNS = ["n", "passed", "accuracy", "ci_low", "ci_high", "tie_rate", "unsupported"]


@dataclass(frozen=True)
class Outcomes:
    """One metric's verdicts on every trial of one suite under one set of rules.

    ``frame`` has :data:`COLUMNS`: ``group`` is the corruption type or phenomenon, ``refs`` the number of
    references (0 for a challenge set, whose trials bring their own), ``severity`` the data set's label (DEMETR)
    or None, ``supported`` False where the metric could not score a text (no verdict). ``signature`` is the
    metric's results signature (its own, then the rules it was judged by); ``not_applied`` counts, per group, the
    records the data set marks as no test item (DEMETR's ``pert_check`` false)."""

    suite: str
    metric: str
    signature: str
    frame: pd.DataFrame
    not_applied: dict[str, int] = field(default_factory=dict)

    def cells(self, by: str = "group") -> pd.DataFrame:
        """Accuracy (%) per ``group`` (with ``refs`` for MUTT) or per ``severity``: n scored, passed, a 95%
        Wilson interval, the tie rate (%) and the trials left unscored; groups in order of appearance."""
        frame = self.frame if by != "severity" else self.frame.dropna(subset=["severity"])
        keys = frame[by].astype(str).tolist()
        refs = frame["refs"].to_numpy() if by == "group" else np.zeros(len(frame), dtype=np.int64)
        supported = frame["supported"].to_numpy(dtype=bool)
        # An unsupported trial has no margin: it counts in no cell's n (engine.accuracy).
        cells = accuracy_cells([self.metric] * len(frame), keys, refs, frame["passed"].to_numpy(dtype=bool),
                               frame["tied"].to_numpy(dtype=bool), np.where(supported, 0.0, np.nan))
        out = pd.DataFrame({by: cells["corruption"], "refs": cells["refs"], "n": cells["n"],
                            "passed": cells["passed"], "accuracy": cells["accuracy"], "ci_low": cells["ci_low"],
                            "ci_high": cells["ci_high"], "tie_rate": cells["tie_rate"]})
        unscored = pd.Series(~supported).groupby([keys, refs.tolist()], sort=False).sum()
        out["unsupported"] = [int(unscored[(g, r)]) for g, r in zip(out[by], out["refs"])]
        if by == "severity" or not (out["refs"] > 0).any():
            out = out.drop(columns="refs")
        return out

    def keys(self) -> str:
        """sha256 of the trials in order (id and reference count): two outcome tables pair trial by trial only
        when their keys are equal."""
        text = "\n".join(f"{t}@{r}" for t, r in zip(self.frame["trial"], self.frame["refs"]))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _from_results(results, suite: str) -> dict[str, Outcomes]:
    table = results.table
    out = {}
    for metric, part in table.groupby("metric", sort=False):
        frame = pd.DataFrame({"trial": part["trial"].to_numpy(), "group": part["corruption"].to_numpy(),
                              "refs": part["refs"].to_numpy(dtype=np.int64), "severity": None,
                              "passed": part["passed"].to_numpy(dtype=bool),
                              "tied": part["tied"].to_numpy(dtype=bool),
                              "supported": ~np.isnan(part["margin"].to_numpy(dtype=np.float64))})
        out[metric] = Outcomes(suite, metric, results.signature(metric), frame)
    return out


def _from_challenge(tables: list[pd.DataFrame], signatures: dict[str, str], not_applied: dict[str, int],
                    suite: str) -> dict[str, Outcomes]:
    table = pd.concat(tables, ignore_index=True)
    out = {}
    for metric, part in table.groupby("metric", sort=False):
        frame = pd.DataFrame({"trial": part["trial"].to_numpy(), "group": part["phenomenon"].to_numpy(),
                              "refs": np.zeros(len(part), dtype=np.int64),
                              "severity": part["severity"].to_numpy(dtype=object),
                              "passed": part["passed"].to_numpy(dtype=bool),
                              "tied": (part["outcome"] == TIE).to_numpy(),
                              "supported": (part["outcome"] != UNSUPPORTED).to_numpy()})
        out[metric] = Outcomes(suite, metric, signatures[metric], frame, dict(not_applied))
    return out


@lru_cache(maxsize=4)
def _demetr_files(folder: Path, stamp: tuple) -> tuple[SuiteFile, ...]:
    return tuple(read_suite(path) for path in sorted(folder.glob("*.json")))


def demetr_files(settings: Settings) -> tuple[SuiteFile, ...]:
    """DEMETR's 35 files as read by the DEMETR reader, once per version of the folder in this process."""
    first = sources.data_file(settings, f"{DEMETR_FOLDER}/base_id35_reference.json")
    folder = first.parent
    paths = sorted(folder.glob("*.json"))
    if len(paths) != DEMETR_FILES:
        raise DataError(folder, f"expected DEMETR's {DEMETR_FILES} perturbation files, found {len(paths)}",
                        fix="copy demetr/dataset/*.json again from the DEMETR repository")
    return _demetr_files(folder, tuple((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in paths))


def data_files(root: Path, suite: str) -> list[str]:
    """The data files (relative to the data dir ``root``) a built-in suite's trials come from."""
    if suite == "mutt":
        return [f"mutt/experiments/{name}_{end}.json" for name in sources.MUTT_SETS
                for end in ("a", "b", f"r{max(sources.MUTT_REF_COUNTS)}")]
    if suite == "demetr":
        return sorted(p.relative_to(root).as_posix() for p in (root / DEMETR_FOLDER).glob("*.json"))
    return mslc.data_files(root)


def suite_file(path: str) -> SuiteFile:
    """A user's suite file (:func:`muttlab.suites.read_suite`), its trials with their target languages."""
    read = read_suite(path)
    if not read.contrastive:
        read = replace(read, suite=replace(read.suite, languages=read.target_languages()))
    return read


def judge(settings: Settings, suite: str, metrics: Sequence[str], registry: Registry,
          progress: ProgressFn | None = None) -> dict[str, Outcomes]:
    """Each metric's :class:`Outcomes` on ``suite`` (a name of :data:`SUITES`, or a suite file's path) under the
    settings' rules.

    Raises:
      MuttlabError: no data dir for a built-in suite, an unreadable suite file, an unknown metric, rules that
        cannot judge one of the metrics (a calibration refused: its message says why).
    """
    metrics = list(metrics)
    if suite == "mutt":
        results = runner.run(sources.load_mutt_experiments(settings), metrics, None, settings, registry,
                             progress=progress)
        return _from_results(results, suite)
    if suite in ("demetr", "mslc"):
        files = demetr_files(settings) if suite == "demetr" else (read_mslc(settings),)
    else:
        read = suite_file(suite)
        if not read.contrastive:
            return _from_results(runner.run(read.suite, metrics, None, settings, registry, progress=progress),
                                 read.suite.name)
        files, suite = (read,), read.suite.name
    tables, signatures, not_applied = [], {}, {}
    for step, file in enumerate(files):
        if progress:
            progress(step, len(files), f"{suite}: {file.suite.name} ({step + 1} of {len(files)} files)")
        judged = run_challenge(settings, file, metrics, registry=registry)
        tables.append(judged.table)
        signatures.update({m: judged.signature(m) for m in judged.signatures})
        not_applied.update(judged.not_applied)
    if progress:
        progress(len(files), len(files), f"{suite}: judged")
    return _from_challenge(tables, signatures, not_applied, suite)


def refusal(settings: Settings, suite: str, metric: Metric) -> str | None:
    """Why the settings' rules cannot judge ``metric`` on ``suite`` (a calibrated tie rule whose calibration is
    missing, not informative, or of another target language than the trials the metric scores), or None."""
    if not settings.rules.tie.calibrated:
        return None
    if suite in ("mutt", "demetr"):
        languages = {"en"}  # MUTT's captions; DEMETR translates into English
    else:
        read = read_mslc(settings) if suite == "mslc" else suite_file(suite)
        languages = ({read.language(t.id) for t in read.suite.trials} if read.contrastive
                     else set(read.suite.languages))
        languages = {lang for lang in languages if supports(metric, lang)}
    try:
        verdict.rules_for(settings, metric.name, metric.signature(), metric.noise_floor, sorted(languages))
    except MuttlabError as exc:
        return str(exc)
    return None
