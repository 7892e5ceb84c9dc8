"""The verdict of a trial: the one place MUTT Lab decides whether a metric did the right thing.

Every path that judges (the runner, and through it the Dask cluster and the dashboard's queue; the API's
sentence verdicts, severity curves, reproduction of published numbers, contrastive challenge sets) calls
:func:`judge` through this module, so a trial means the same thing everywhere.

A trial compares a metric's scores of two texts, s_first (original, good translation) and s_second
(corruption, incorrect translation), under the trial's :class:`~muttlab.trials.Expectation` and the
:class:`~muttlab.rules.Rules` bound to the metric (:func:`rules_for`):

* FIRST_BETTER passes when s_first is strictly better than s_second; SECOND_BETTER when s_second is.
  "Better" is sign-aware: for error rates (TER, TERp) lower is better. Two scores are *tied* under the rules'
  tie rule: |s_first - s_second| <= t * max(1, |s_first|) for the relative rule of tolerance t (raised to the
  metric's noise floor; t = 0 is the papers' exact comparison), |s_first - s_second| <= ε for a calibrated
  rule (the metric's absolute ε). A tie fails both (as in ACES, Amrhein et al. 2022): a difference the rule
  cannot tell from none is not a judgement.
* ABOUT_SAME passes when MUTT's Difference formula holds (Boag et al. 2016, §3):
  |s_first - s_second| / (|s_first| + 1e-9) <= tolerance (0.15), on the scores as reported.
* A NaN score is a metric saying it cannot score that text: the trial is *unsupported*, neither passed
  nor failed, and counts in no accuracy.

The margin is how far a trial is from the decision boundary: the oriented score difference (0 for a tie)
for the strict expectations, tolerance minus the relative change for ABOUT_SAME; NaN when unsupported.

Importable without pandas: ``muttlab run`` judges without it.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from muttlab.corruptions.base import Rule
from muttlab.errors import MuttlabError
from muttlab.resources.bundled import results_dir
from muttlab.rules import DEFAULT_RULES, Calibrations, Rules
from muttlab.settings import Settings
from muttlab.trials import Expectation

EPS = 1e-9
# Outcome codes (Verdicts.code) index this tuple.
PASSED, TIE, FAILED, UNSUPPORTED = "passed", "tie", "failed", "unsupported"
OUTCOMES = (PASSED, TIE, FAILED, UNSUPPORTED)
_OUTCOME_NAMES = np.array(OUTCOMES, dtype=object)

# The expectation of a trial that names none: its corruption type's rule.
EXPECTATION_OF_RULE = {Rule.ORIG_BETTER: Expectation.FIRST_BETTER, Rule.DIFFERENCE: Expectation.ABOUT_SAME}
_CODE = {Expectation.FIRST_BETTER: 0, Expectation.SECOND_BETTER: 1, Expectation.ABOUT_SAME: 2}


@dataclass(frozen=True)
class Verdicts:
    """The verdicts of n trials, as arrays.

    Attributes:
      margin: float64; positive (or zero, for ABOUT_SAME) = passed; NaN when unsupported.
      code: int8 index into :data:`OUTCOMES`.
      tied: the two scores are tied under the tie tolerance, whatever the expectation (the tie rate).
    """

    margin: np.ndarray
    code: np.ndarray
    tied: np.ndarray

    @property
    def passed(self) -> np.ndarray:
        return self.code == 0

    @property
    def unsupported(self) -> np.ndarray:
        return self.code == 3

    @property
    def outcome(self) -> np.ndarray:
        """The outcome of each trial by name (:data:`OUTCOMES`)."""
        return _OUTCOME_NAMES[self.code]


def expectations(trials: Sequence, rule: Rule) -> Expectation | np.ndarray:
    """What each trial expects: its own :attr:`~muttlab.trials.Trial.expectation`, else the expectation
    of its corruption type's ``rule``. One Expectation when all trials share it (the common, fast case)."""
    default = EXPECTATION_OF_RULE[rule]
    own = [t.expectation for t in trials]
    if all(e is None or e is default for e in own):
        return default
    return np.array([e or default for e in own], dtype=object)


# The target language of a suite that names none: MUTT, the sample and the pair store are English.
ENGLISH = ("en",)
CALIBRATIONS_FILE = "calibrations.json"


def calibrations_path(settings: Settings) -> Path:
    """The calibrations file a calibrated tie rule reads: ``MUTTLAB_CALIBRATIONS``, else the one the package
    ships (``data/results/calibrations.json``, written by the meta-evaluation)."""
    return settings.calibrations_file or results_dir() / CALIBRATIONS_FILE


@lru_cache(maxsize=8)
def _calibrations(path: Path, modified: int) -> Calibrations:
    return Calibrations.read(path)


def calibrations(settings: Settings) -> Calibrations:
    """The calibrations of :func:`calibrations_path`, read once per version of the file.

    Raises:
      DataError: the file is missing or malformed.
    """
    path = calibrations_path(settings)
    try:
        modified = os.stat(path).st_mtime_ns
    except OSError:
        modified = -1  # read() says what is wrong
    return _calibrations(path, modified)


def check_rules(settings: Settings) -> None:
    """Refuse, before anything is scored, a calibrated tie rule whose study or language pair has no
    calibrations (MuttlabError naming the known ones); nothing for the other rules."""
    if settings.rules.tie.calibrated:
        calibrations(settings).check(settings.rules.tie)


def rules_for(settings: Settings, metric: str, signature: str, noise_floor: float,
              languages: Iterable[str] = ENGLISH) -> Rules:
    """The settings' rules bound to one metric (its name, current signature and noise floor) judging trials
    whose target languages are ``languages``: the rules :func:`judge` takes.

    Raises:
      MuttlabError: a calibrated tie rule without a usable calibration of this metric (unknown study or pair,
      no calibration under this signature, not informative, another target language).
    """
    rules = settings.rules
    if not rules.tie.calibrated:
        return rules.for_metric(noise_floor)
    found = calibrations(settings).find(rules.tie, metric, signature, tuple(languages))
    return rules.for_metric(noise_floor, found)


def judge(s_first, s_second, expectation: Expectation | Sequence[Expectation], higher_is_better: bool,
          rules: Rules = DEFAULT_RULES) -> Verdicts:
    """The verdict of each trial from its two scores (module doc).

    Args:
      s_first, s_second: the metric's scores of the two texts (NaN: the metric cannot score the text).
      expectation: one for all trials, or one per trial.
      higher_is_better: False for error rates: "better" means lower.
      rules: the rules bound to the metric (:func:`rules_for`): tie rule, noise floor, Difference tolerance.
    Raises:
      MuttlabError: a calibrated tie rule not bound to the metric's calibration.
    """
    if not rules.bound:
        raise MuttlabError(f"tie rule {rules.tie}: judging needs the metric's calibration (verdict.rules_for)")
    tolerance = rules.tolerance
    s_first = np.asarray(s_first, dtype=np.float64)
    s_second = np.asarray(s_second, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        delta = s_first - s_second
        bound = rules.relative_tolerance * np.maximum(1.0, np.abs(s_first))
        if rules.epsilon is not None:  # calibrated: the metric's absolute ε (the noise floor still applies)
            bound = np.maximum(rules.epsilon, bound)
        tied = np.abs(delta) <= bound
        oriented = delta if higher_is_better else -delta
        if isinstance(expectation, Expectation):
            if expectation is Expectation.ABOUT_SAME:
                margin = tolerance - np.abs(delta) / (np.abs(s_first) + EPS)
                passed = margin >= 0
                tie_fails = None
            else:
                margin = np.where(tied, 0.0, oriented if expectation is Expectation.FIRST_BETTER else -oriented)
                passed = margin > 0
                tie_fails = tied
        else:
            kind = np.fromiter((_CODE[Expectation(e)] for e in expectation), np.int8, len(s_first))
            about = kind == 2
            strict_margin = np.where(tied, 0.0, np.where(kind == 0, oriented, -oriented))
            margin = np.where(about, tolerance - np.abs(delta) / (np.abs(s_first) + EPS), strict_margin)
            passed = np.where(about, margin >= 0, margin > 0)
            tie_fails = tied & ~about
    # 0 passed, 2 failed; a failed strict trial whose scores tie: 1.
    code = (~passed).view(np.int8) * np.int8(2)
    if tie_fails is not None:
        code -= tie_fails.view(np.int8)
    unsupported = np.isnan(delta)
    if unsupported.any():
        code[unsupported] = 3
        margin = np.where(unsupported, np.nan, margin)
    return Verdicts(margin=margin, code=code, tied=tied)
