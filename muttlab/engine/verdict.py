"""The verdict of a trial: the one place MUTT Lab decides whether a metric did the right thing.

Every path that judges (the runner, and through it the Dask cluster and the dashboard's queue; the API's
sentence verdicts, severity curves, reproduction of published numbers, contrastive challenge sets) calls
:func:`judge` through this module, so a trial means the same thing everywhere.

A trial compares a metric's scores of two texts, s_first (original, good translation) and s_second
(corruption, incorrect translation), under the trial's :class:`~muttlab.trials.Expectation`:

* FIRST_BETTER passes when s_first is strictly better than s_second; SECOND_BETTER when s_second is.
  "Better" is sign-aware: for error rates (TER, TERp) lower is better. Two scores are *tied* when
  |s_first - s_second| <= tie_tolerance * max(1, |s_first|); a tie fails both (as in ACES, Amrhein et al.
  2022), because a difference in the last bits of a float is rounding, not a judgement. A tie tolerance
  of 0 is the papers' exact comparison.
* ABOUT_SAME passes when MUTT's Difference formula holds (Boag et al. 2016, §3):
  |s_first - s_second| / (|s_first| + 1e-9) <= tolerance (0.15), on the scores as reported.
* A NaN score is a metric saying it cannot score that text: the trial is *unsupported*, neither passed
  nor failed, and counts in no accuracy.

The margin is how far a trial is from the decision boundary: the oriented score difference (0 for a tie)
for the strict expectations, tolerance minus the relative change for ABOUT_SAME; NaN when unsupported.

Importable without pandas: ``muttlab run`` judges without it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from muttlab.corruptions.base import Rule
from muttlab.trials import Expectation
from muttlab.settings import DEFAULT_TIE_TOLERANCE, DEFAULT_TOLERANCE

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


def tie_tolerance(setting: float, noise_floor: float) -> float:
    """The tie tolerance a metric is judged with: the setting, or the metric's
    :attr:`~muttlab.metrics.base.Metric.noise_floor` when that is larger."""
    return max(setting, float(noise_floor))


def judge(s_first, s_second, expectation: Expectation | Sequence[Expectation], higher_is_better: bool,
          tie_tolerance: float = DEFAULT_TIE_TOLERANCE, tolerance: float = DEFAULT_TOLERANCE) -> Verdicts:
    """The verdict of each trial from its two scores (module doc).

    Args:
      s_first, s_second: the metric's scores of the two texts (NaN: the metric cannot score the text).
      expectation: one for all trials, or one per trial.
      higher_is_better: False for error rates: "better" means lower.
      tie_tolerance: relative size of a difference that is a tie (0: exact comparison).
      tolerance: the Difference formula's tolerance for ABOUT_SAME.
    """
    s_first = np.asarray(s_first, dtype=np.float64)
    s_second = np.asarray(s_second, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        delta = s_first - s_second
        tied = np.abs(delta) <= tie_tolerance * np.maximum(1.0, np.abs(s_first))
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
