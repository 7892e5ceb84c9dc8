"""The rules a trial is judged by: one value, :class:`Rules`, taken by :func:`muttlab.engine.verdict.judge`.

What decides a verdict besides the two scores and the trial's expectation:

* the **tie rule** (:class:`TieRule`): when two scores count as tied (a tie fails the strict expectations):

  - ``relative`` (the default, ``1e-9``): |s_first − s_second| ≤ t · max(1, |s_first|): a difference in the last
    bits of a float is rounding, not a judgement (ACES counts such a tie as a failure, Amrhein et al. 2022);
  - ``exact``: only equal scores tie, the papers' comparison (MUTT, Boag et al. 2016);
  - ``calibrated:<study>:<pair>``: each metric's own ε, earned on expert judgments of real MT output (the
    smallest ε reaching the best pairwise accuracy with tie calibration, acc*_eq, Deutsch et al. 2023), an
    ABSOLUTE difference in the metric's own units: |s_first − s_second| ≤ ε is a tie. The calibrations are a
    file the meta-evaluation writes (:class:`Calibrations`);

* the metric's **noise floor** (:attr:`muttlab.metrics.base.Metric.noise_floor`): a relative difference below
  it is the metric's own numerical noise and always a tie;
* the **Difference tolerance** of MUTT's meaning-preserving rule (0.15, Boag et al. 2016 §3).

A run holds one :class:`Rules` (from :class:`muttlab.settings.Settings`); each metric is judged by it *bound*
to that metric (:meth:`Rules.for_metric`: its noise floor and, for a calibrated rule, its calibration). Every
result, snapshot and signature carries the rules' :meth:`~Rules.signature`.

A leaf below the settings: no numpy, no file of the package is located here (the engine finds the shipped
calibrations, :func:`muttlab.engine.verdict.calibrations`).
"""
from __future__ import annotations

import json
import math
import numbers
import re
from dataclasses import dataclass, replace
from decimal import Decimal, InvalidOperation
from pathlib import Path

from muttlab.errors import DataError, MuttlabError

# MUTT (Boag et al. 2016, §3): a meaning-preserving trial passes when |s_orig - s_corr| / s_orig <= 0.15.
DEFAULT_TOLERANCE = 0.15
DEFAULT_TIE_TOLERANCE = 1e-9
RELATIVE, EXACT, CALIBRATED = "relative", "exact", "calibrated"
# One range for the relative tie rule, wherever it is set (MUTTLAB_TIE_RULE, --tie-rule, load_settings):
# 0 is the exact rule; below MIN a tolerance is smaller than float64's own rounding of the scores it is meant
# to absorb (2.2e-16 relative), and 1e-400 is no number at all (it underflows to 0); at or above MAX it would
# call most real differences ties: a typo, not a rule.
MIN_TIE_TOLERANCE = 1e-15
MAX_TIE_TOLERANCE = 0.01
CALIBRATIONS_VERSION = 1
# A study or language pair in a calibrated tie rule is a plain name, never a path or a pattern.
_PLAIN_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")


def number_text(value: float) -> str:
    """Shortest readable form of a setting: 0.15, 1e-9 (not 1e-09)."""
    mantissa, _, exponent = f"{value:g}".partition("e")
    return f"{mantissa}e{int(exponent)}" if exponent else mantissa


def _range_text() -> str:
    return (f"'exact' (the papers' exact comparison), a relative tolerance from {number_text(MIN_TIE_TOLERANCE)} "
            f"to below {number_text(MAX_TIE_TOLERANCE)} (e.g. 1e-9, the default), or "
            "'calibrated:<study>:<pair>' (each metric's ε calibrated on expert judgments, e.g. "
            "calibrated:mqm-ted:zh-en)")


@dataclass(frozen=True)
class TieRule:
    """When two scores are tied: ``relative`` (``tolerance``), ``exact``, or ``calibrated`` on a study's
    language pair (``study``, ``pair``). Written as in ``--tie-rule``: ``1e-9``, ``exact``,
    ``calibrated:mqm-ted:zh-en``."""

    kind: str = RELATIVE
    tolerance: float = DEFAULT_TIE_TOLERANCE
    study: str = ""
    pair: str = ""

    def __str__(self) -> str:
        if self.kind == CALIBRATED:
            return f"{CALIBRATED}:{self.study}:{self.pair}"
        return EXACT if self.kind == EXACT else number_text(self.tolerance)

    @property
    def calibrated(self) -> bool:
        return self.kind == CALIBRATED


EXACT_RULE = TieRule(EXACT, 0.0)


def relative_tie_rule(value: float, where: str) -> TieRule:
    """The relative tie rule of tolerance ``value`` (0: the exact rule); a MuttlabError naming ``where``
    when it is out of the one range (:data:`MIN_TIE_TOLERANCE` … :data:`MAX_TIE_TOLERANCE`)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) \
            or not (value == 0 or MIN_TIE_TOLERANCE <= value < MAX_TIE_TOLERANCE):
        raise MuttlabError(f"{where}={value!r}: give 0 (the papers' exact comparison) or a relative tolerance from "
                           f"{number_text(MIN_TIE_TOLERANCE)} to below {number_text(MAX_TIE_TOLERANCE)} (e.g. 1e-9, "
                           "the default)")
    return EXACT_RULE if value == 0 else TieRule(RELATIVE, float(value))


def parse_tie_rule(text: str, where: str) -> TieRule:
    """The tie rule ``text`` names (``exact``, a relative tolerance, ``calibrated:<study>:<pair>``); ``where``
    names the variable or flag in the error. Whether the study and pair have calibrations is checked when a
    metric is bound to them (:meth:`Calibrations.find`)."""
    value = text.strip().lower()
    if value == EXACT:
        return EXACT_RULE
    if value.startswith(CALIBRATED):
        parts = value.split(":")
        if len(parts) != 3 or parts[0] != CALIBRATED:
            raise MuttlabError(f"{where}={text[:80]!r}: a calibrated tie rule is written calibrated:<study>:<pair>, "
                               "e.g. calibrated:mqm-ted:zh-en")
        for what, name in (("study", parts[1]), ("language pair", parts[2])):
            if not _PLAIN_NAME.fullmatch(name):
                raise MuttlabError(f"{where}={text[:80]!r}: the {what} must be a plain name (lower-case letters, "
                                   "digits, '-' and '_'), not a path or a pattern; e.g. calibrated:mqm-ted:zh-en")
        return TieRule(CALIBRATED, 0.0, parts[1], parts[2])
    try:
        exact = Decimal(value)
    except InvalidOperation:
        raise MuttlabError(f"{where}={text[:80]!r}: give {_range_text()}") from None
    low, high = Decimal(str(MIN_TIE_TOLERANCE)), Decimal(str(MAX_TIE_TOLERANCE))
    if not exact.is_finite() or not (exact == 0 or low <= exact < high):
        raise MuttlabError(f"{where}={text[:80]!r}: give {_range_text()}")
    return relative_tie_rule(float(exact), where)


@dataclass(frozen=True)
class Calibration:
    """One metric's tie calibration on one study's language pair, as the meta-evaluation writes it.

    Attributes:
      epsilon: the absolute score difference (in the metric's units) experts do not tell apart: the smallest
        ε reaching the maximum acc*_eq on the study (Deutsch, Foster & Freitag 2023, §3).
      informative: whether the metric earned ε: it leaves pairs of the study untied and the metric's acc*_eq
        beats the constant baseline's (which ties every pair) on them; judged with an ε that is not, every
        strict trial would be a tie, or no better than one.
      reason: why it is (or is not) informative, in words; quoted when the rule refuses it.
      signature: the metric's ``signature()`` when calibrated: a changed metric is not calibrated.
      data_digest: sha256 of the judgments the calibration was computed on.
    """

    study: str
    pair: str
    target_language: str
    metric: str
    signature: str
    data_digest: str
    epsilon: float
    informative: bool
    acc_eq: float
    n_pairs: int
    reason: str = ""

    @property
    def name(self) -> str:
        return f"{self.study}:{self.pair}"


_CALIBRATION_FIELDS = {"study": str, "pair": str, "target_language": str, "metric": str, "signature": str,
                       "data_digest": str, "epsilon": float, "informative": bool, "acc_eq": float, "n_pairs": int}
# A record's fields in the order the file writes them; ``reason`` may be missing from a file written before it.
CALIBRATION_FIELDS = ("study", "pair", "target_language", "metric", "signature", "data_digest", "epsilon",
                      "informative", "reason", "acc_eq", "n_pairs")


def _field(entry: dict, name: str, kind: type, where: str, index: int):
    value = entry.get(name)
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)) \
            or (kind is float and not math.isfinite(value)) or (kind is str and not value):
        expected = "a non-empty string" if kind is str else "a finite number" if kind is float else kind.__name__
        raise DataError(where, f"calibration {index}: field {name!r} must be {expected}, got {repr(value)[:60]}",
                        fix="write the file again with the meta-evaluation")
    return value


@dataclass(frozen=True)
class Calibrations:
    """The calibrations of one file (``{"version": 1, "calibrations": [...]}``), and where they came from."""

    entries: tuple[Calibration, ...]
    where: str

    @classmethod
    def parse(cls, document, where: str) -> "Calibrations":
        """The calibrations of a parsed JSON document; a DataError naming the entry and field when malformed."""
        if not isinstance(document, dict) or document.get("version") != CALIBRATIONS_VERSION \
                or not isinstance(document.get("calibrations"), list):
            raise DataError(where, f'not a version-{CALIBRATIONS_VERSION} calibrations file ({{"version": 1, '
                                   '"calibrations": [...]}})', fix="write the file again with the meta-evaluation")
        entries = []
        for i, entry in enumerate(document["calibrations"]):
            if not isinstance(entry, dict):
                raise DataError(where, f"calibration {i} is not an object", fix="write the file again")
            values = {name: _field(entry, name, kind, where, i) for name, kind in _CALIBRATION_FIELDS.items()}
            values["reason"] = entry.get("reason", "")
            if not isinstance(values["reason"], str):
                raise DataError(where, f"calibration {i}: field 'reason' must be a string, got "
                                       f"{repr(values['reason'])[:60]}", fix="write the file again with the "
                                                                          "meta-evaluation")
            if values["epsilon"] < 0:
                raise DataError(where, f"calibration {i}: epsilon {values['epsilon']} is negative")
            entries.append(Calibration(**values))
        return cls(tuple(entries), where)

    @classmethod
    def read(cls, path: Path) -> "Calibrations":
        """The calibrations in ``path``; a DataError when it is missing, not JSON or malformed."""
        path = Path(path)
        if path.exists() and not path.is_file():  # a folder, a pipe that would block, a device
            raise DataError(path, "is not a regular file", fix="point MUTTLAB_CALIBRATIONS at the calibrations file")
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise DataError(path, "no calibrations file: a calibrated tie rule needs the meta-evaluation's "
                                  "calibrations", fix="run the meta-evaluation, or set MUTTLAB_CALIBRATIONS to "
                                                      "its calibrations file") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise DataError(path, f"cannot be read ({exc})") from None
        except json.JSONDecodeError as exc:
            raise DataError(path, f"malformed JSON: {exc.msg}", line=exc.lineno) from None
        except RecursionError:
            raise DataError(path, "malformed JSON: nested too deeply") from None
        return cls.parse(document, str(path))

    def document(self) -> dict:
        """The JSON document of these calibrations (what :meth:`parse` reads): the meta-evaluation writes its
        calibrations with it, so the file is always in the format this module reads."""
        return {"version": CALIBRATIONS_VERSION,
                "calibrations": [{name: getattr(c, name) for name in CALIBRATION_FIELDS} for c in self.entries]}

    def studies(self) -> list[str]:
        return sorted({c.study for c in self.entries})

    def pairs(self, study: str) -> list[str]:
        return sorted({c.pair for c in self.entries if c.study == study})

    def check(self, rule: TieRule) -> None:
        """A MuttlabError when ``rule``'s study or pair has no calibrations here (the known ones listed)."""
        if rule.study not in self.studies():
            raise MuttlabError(f"tie rule {rule}: unknown study {rule.study!r}; the calibrations have "
                               f"{', '.join(self.studies()) or 'no study'}")
        if rule.pair not in self.pairs(rule.study):
            raise MuttlabError(f"tie rule {rule}: unknown language pair {rule.pair!r} of {rule.study}; it has "
                               f"{', '.join(self.pairs(rule.study))}")

    def find(self, rule: TieRule, metric: str, signature: str, languages=()) -> Calibration:
        """The calibration ``rule`` gives a metric of this signature, judging trials in ``languages`` (target
        languages, ISO 639-1).

        Raises:
          MuttlabError: unknown study or pair; no calibration of the metric under its current signature;
          a target language other than the trials'; a calibration that is not informative.
        """
        self.check(rule)
        mine = [c for c in self.entries if c.study == rule.study and c.pair == rule.pair and c.metric == metric]
        found = next((c for c in mine if c.signature == signature), None)
        if found is None:
            if mine:
                raise MuttlabError(f"tie rule {rule}: {metric} was calibrated as {mine[0].signature}, not as it is "
                                   f"now ({signature}); calibrate it again with the meta-evaluation")
            calibrated = sorted({c.metric for c in self.entries if c.study == rule.study and c.pair == rule.pair})
            raise MuttlabError(f"tie rule {rule}: {metric} has no calibration there; calibrated metrics: "
                               f"{', '.join(calibrated)}")
        # The language first: an ε of other outputs says nothing of these trials, informative or not.
        other = sorted({lang for lang in languages if lang != found.target_language})
        if other:
            raise MuttlabError(f"tie rule {rule}: calibrated on translations into {found.target_language!r}, but "
                               f"the trials' target language is {', '.join(map(repr, other))} (MUTT and the sample "
                               "are English); choose a calibration whose target language is theirs")
        if not found.informative:
            why = found.reason or (f"its ε = {found.epsilon!r} ties every pair of the study, so every strict trial "
                                   "would fail")
            raise MuttlabError(f"tie rule {rule}: {metric}'s calibration is not informative ({why}); judge it with "
                               "another tie rule")
        return found


@dataclass(frozen=True)
class Rules:
    """Everything that decides a verdict besides the scores and the expectation (module doc).

    ``noise_floor`` and ``calibration`` are set when the rules are bound to one metric
    (:meth:`for_metric`); a calibrated tie rule judges only when bound.
    """

    tie: TieRule = TieRule()
    tolerance: float = DEFAULT_TOLERANCE
    noise_floor: float = 0.0
    calibration: Calibration | None = None

    def for_metric(self, noise_floor: float = 0.0, calibration: Calibration | None = None) -> "Rules":
        """These rules bound to one metric: its noise floor and (calibrated rule) its calibration."""
        if self.tie.calibrated and calibration is None:
            raise MuttlabError(f"tie rule {self.tie}: a metric judged by it needs its calibration")
        return replace(self, noise_floor=float(noise_floor), calibration=calibration)

    @property
    def bound(self) -> bool:
        """Whether these rules can judge: not calibrated, or calibrated with the metric's calibration."""
        return not self.tie.calibrated or self.calibration is not None

    @property
    def relative_tolerance(self) -> float:
        """The relative tie tolerance: the tie rule's (0 when exact or calibrated), or the noise floor when
        that is larger (a difference below a metric's own noise is no evidence either way)."""
        return max(0.0 if self.tie.calibrated else self.tie.tolerance, self.noise_floor)

    @property
    def epsilon(self) -> float | None:
        """The absolute tie ε of a calibrated rule bound to its metric; None otherwise."""
        return None if self.calibration is None else self.calibration.epsilon

    def signature(self) -> str:
        """The rules as signature fields: ``tol:0.15|tie:1e-9``; a metric's noise floor (``floor:1e-6``) when it
        decides ties; a calibration's study and pair, data digest and ε
        (``tie:calibrated:mqm-ted:zh-en|data:4f2a…|eps:0.0123``)."""
        text = f"tol:{number_text(self.tolerance)}|tie:{self.tie}"
        if self.calibration is not None:
            text += f"|data:{self.calibration.data_digest[:12]}|eps:{self.calibration.epsilon!r}"
        if self.noise_floor > (0.0 if self.tie.calibrated else self.tie.tolerance):
            text += f"|floor:{number_text(self.noise_floor)}"
        return text

    def describe(self) -> str:
        """The tie rule in words, for a page or a report."""
        if self.tie.kind == EXACT:
            return "two scores tie only when they are exactly equal (tie:exact, the papers' comparison)"
        if self.tie.calibrated:
            return (f"two scores tie when they differ by no more than the metric's ε calibrated on expert "
                    f"judgments ({self.tie.study}, {self.tie.pair}; tie:{self.tie}), an absolute difference in "
                    "the metric's own units")
        return (f"two scores tie when |s_orig − s_corr| ≤ {number_text(self.tie.tolerance)} × max(1, |s_orig|) "
                f"(tie:{self.tie})")


DEFAULT_RULES = Rules()
