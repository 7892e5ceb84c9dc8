"""Scoring a contrastive challenge set and reporting it the way the challenge-set papers do.

Each pair has a good and an incorrect translation of one source, a reference and a phenomenon. A metric
*ranks the pair correctly* when it scores the good translation strictly better than the incorrect one
(sign-aware for error rates) — or, for a pair whose expectation is the second text (DEMETR's reference
baseline, where the "perturbed" side is the reference itself, :attr:`~muttlab.trials.Trial.expectation`), the
second strictly better; a tie (the tie rule of the settings, :mod:`muttlab.engine.verdict`) counts as a failure.
Per phenomenon (and, for DEMETR, per severity) we report

* accuracy: concordant / scored pairs (ties are failures), and
* the Kendall-τ-like statistic of the WMT challenge-set task and ACES (Amrhein et al., WMT 2022, §6):
  τ = (concordant − discordant) / (concordant + discordant), where discordant counts the pairs scored
  equal *or* in the wrong order — so τ = 2·accuracy − 1.

For ACES files, :func:`aces_summary` adds the paper's weighted summary: the τ of each top-level error
category is the mean of its phenomena's τ, and the ACES score weights the categories by the severity of
the error (major accuracy errors 5, minor 1, punctuation 0.1; §6, "ACES-Score").

Metrics whose ``languages`` do not include a pair's target language, and metrics that cannot score empty
text (``scores_empty_text`` False) given a pair with an empty text, mark the pair ``unsupported`` instead of
scoring it; unsupported pairs count in no statistic but are counted in every summary, beside the records the
data set marks as not applied (DEMETR's ``pert_check`` false), which are no pairs at all.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from muttlab.corruptions.base import Rule
from muttlab.engine import runner, verdict
from muttlab.errors import MetricError, MuttlabError
from muttlab.metrics.base import Metric
from muttlab.metrics.registry import Registry
from muttlab.rules import DEFAULT_RULES, Rules
from muttlab.settings import Settings
from muttlab.suites.model import ACES_TSV, SuiteFile

CONCORDANT, DISCORDANT, TIE, UNSUPPORTED = "concordant", "discordant", "tie", "unsupported"
TABLE_COLUMNS = ["trial", "phenomenon", "severity", "expected", "lang", "metric", "s_good", "s_incorrect", "margin",
                 "outcome", "passed"]
SUMMARY_COUNTS = ["n", "concordant", "discordant", "ties", "unsupported", "not_applied"]

# ACES' top-level categories and their weights in the ACES score (Amrhein et al. 2022, §6).
ACES_WEIGHTS = {"addition": 5.0, "omission": 5.0, "mistranslation": 5.0, "untranslated": 1.0,
                "do not translate": 1.0, "overtranslation": 5.0, "undertranslation": 5.0,
                "real-world knowledge": 1.0, "wrong language": 1.0, "punctuation": 0.1}
# Phenomenon name prefix -> category (ACES' taxonomy, Table 1 of the paper; MQM accuracy errors).
_ACES_PREFIXES = (
    ("addition", "addition"), ("omission", "omission"),
    ("ambiguous-translation", "mistranslation"), ("anaphoric", "mistranslation"),
    ("coreference", "mistranslation"), ("hallucination", "mistranslation"), ("lexical-overlap", "mistranslation"),
    ("modal_verb", "mistranslation"), ("nonsense", "mistranslation"), ("ordering-mismatch", "mistranslation"),
    ("overly-literal", "mistranslation"), ("pleonastic", "mistranslation"), ("xnli-", "mistranslation"),
    ("copy-source", "untranslated"), ("untranslated", "untranslated"), ("do-not-translate", "do not translate"),
    ("hyponym-replacement", "overtranslation"), ("hypernym-replacement", "undertranslation"),
    ("antonym-replacement", "real-world knowledge"), ("commonsense", "real-world knowledge"),
    ("real-world-knowledge", "real-world knowledge"), ("similar-language", "wrong language"),
    ("punctuation", "punctuation"),
)


def aces_category(phenomenon: str) -> str | None:
    """ACES' top-level category of a phenomenon, or None for a name ACES does not use."""
    for prefix, category in _ACES_PREFIXES:
        if phenomenon.startswith(prefix):
            return category
    return None


def supports(metric: Metric, language: str) -> bool:
    """Whether a metric handles a target language (``languages`` None = any language)."""
    langs = getattr(metric, "languages", None)
    return langs is None or language in langs


@dataclass
class ChallengeResults:
    """Per-pair outcomes of a challenge set (``table``), with the metrics' signatures, the rules the pairs were
    judged by (the run's, and each metric's bound to it) and, per phenomenon, the records the data set marks
    as not applied (no pairs, never scored)."""

    table: pd.DataFrame
    format: str
    signatures: dict[str, str] = field(default_factory=dict)
    suite: str = ""
    rules: Rules = DEFAULT_RULES
    metric_rules: dict[str, Rules] = field(default_factory=dict)
    not_applied: dict[str, int] = field(default_factory=dict)

    def signature(self, metric: str) -> str:
        """A metric's results signature: its own signature, then the rules it was judged by (its noise floor
        where that decided ties, its calibration under a calibrated tie rule)."""
        return f"{self.signatures[metric]}|{self.metric_rules.get(metric, self.rules).signature()}"

    def summary(self) -> pd.DataFrame:
        """Per metric x phenomenon: n scored, concordant, discordant (ties included), ties, unsupported,
        not applied, accuracy (%, ties as failures) and the Kendall-τ-like statistic."""
        return phenomenon_summary(self.table, self.not_applied)

    def by_severity(self) -> pd.DataFrame:
        """The same statistics per metric x severity (DEMETR's base / minor / major / critical)."""
        return severity_summary(self.table, self.not_applied)

    def aces(self) -> pd.DataFrame:
        """ACES' per-category τ and weighted score per metric (meaningful for ACES files)."""
        return aces_summary(self.summary())


def _counts(part: pd.DataFrame) -> dict:
    outcome = part["outcome"]
    conc = int((outcome == CONCORDANT).sum())
    ties = int((outcome == TIE).sum())
    disc = int((outcome == DISCORDANT).sum()) + ties
    n = conc + disc
    return {"n": n, "concordant": conc, "discordant": disc, "ties": ties,
            "unsupported": int((outcome == UNSUPPORTED).sum()),
            "accuracy": 100.0 * conc / n if n else np.nan, "tau": (conc - disc) / n if n else np.nan}


def phenomenon_summary(table: pd.DataFrame, not_applied: dict[str, int] | None = None) -> pd.DataFrame:
    not_applied = not_applied or {}
    rows = [{"metric": metric, "phenomenon": phenomenon, **_counts(part), "not_applied": not_applied.get(phenomenon, 0)}
            for (metric, phenomenon), part in table.groupby(["metric", "phenomenon"], sort=False)]
    return pd.DataFrame(rows, columns=["metric", "phenomenon", *SUMMARY_COUNTS, "accuracy", "tau"])


def severity_summary(table: pd.DataFrame, not_applied: dict[str, int] | None = None) -> pd.DataFrame:
    """Per metric x severity; a phenomenon's not-applied records count under its pairs' severity."""
    rated = table.dropna(subset=["severity"])
    severity_of = dict(zip(rated["phenomenon"], rated["severity"]))
    skipped: dict[str, int] = {}
    for phenomenon, count in (not_applied or {}).items():
        if phenomenon in severity_of:
            skipped[severity_of[phenomenon]] = skipped.get(severity_of[phenomenon], 0) + count
    rows = [{"metric": metric, "severity": severity, **_counts(part), "not_applied": skipped.get(severity, 0)}
            for (metric, severity), part in rated.groupby(["metric", "severity"], sort=False)]
    return pd.DataFrame(rows, columns=["metric", "severity", *SUMMARY_COUNTS, "accuracy", "tau"])


def aces_summary(summary: pd.DataFrame) -> pd.DataFrame:
    """One row per metric: the τ of each ACES category (mean over its phenomena) and the ACES score.

    The score sums weight x category τ over the categories present in the file; ``categories`` says how
    many of the ten were present (the published score uses all ten).
    """
    rows = []
    for metric, part in summary.groupby("metric", sort=False):
        cats = part.assign(category=part["phenomenon"].map(aces_category)).dropna(subset=["category", "tau"])
        by_cat = cats.groupby("category")["tau"].mean()
        row = {"metric": metric}
        row.update({c: float(by_cat[c]) if c in by_cat else np.nan for c in ACES_WEIGHTS})
        row["categories"] = int(len(by_cat))
        row["aces_score"] = float(sum(ACES_WEIGHTS[c] * t for c, t in by_cat.items())) if len(by_cat) else np.nan
        rows.append(row)
    return pd.DataFrame(rows, columns=["metric", *ACES_WEIGHTS, "categories", "aces_score"])


def _scores(metric: Metric, cands: list[str], refs: list[list[str]], sources: list[str] | None,
            settings: Settings, registry: Registry) -> np.ndarray:
    if not cands:
        return np.zeros(0)
    if metric.uses_source:
        # The cache is keyed on candidate and references only; a source-reading metric is scored directly.
        return metric.score(cands, refs, sources)
    return runner.score_batches(metric, [(cands, refs)], settings, registry)[0]


# The verdict's outcomes (muttlab.engine.verdict.OUTCOMES, by code) as the challenge-set papers name them.
_OUTCOME = np.array([CONCORDANT, TIE, DISCORDANT, UNSUPPORTED], dtype=object)


def run_challenge(settings: Settings, suite_file: SuiteFile, metrics, registry: Registry | None = None,
                  progress=None) -> ChallengeResults:
    """Score every pair of a contrastive suite with each metric.

    Good and incorrect translations are scored as two batches (as the runner scores originals and
    corruptions), so a corpus-level metric sees the same statistics on both sides.
    """
    reg = registry or runner.registry_for(settings)
    trials = suite_file.suite.trials
    if not trials:
        raise MuttlabError(f"suite {suite_file.suite.name!r} has no pairs")
    try:
        verdict.check_rules(settings)
        metric_objs = runner.resolve_metrics(metrics, reg)
        langs = [suite_file.language(t.id) for t in trials]
        # Bound before anything is scored; a calibration is checked against the languages the metric scores.
        bound = {m.name: verdict.rules_for(settings, m.name, m.signature(), m.noise_floor,
                                           {lang for lang in langs if supports(m, lang)})
                 for m in metric_objs}
        # A pair that names no expectation expects the good translation to score better (orig > corr).
        expected = verdict.expectations(trials, Rule.ORIG_BETTER)
        expected_names = ([expected.value] * len(trials) if isinstance(expected, verdict.Expectation)
                          else [e.value for e in expected])
        frames = []
        steps = 2 * len(metric_objs)  # each metric scores the good side, then the incorrect side
        for step, metric in enumerate(metric_objs):
            keep = [i for i, lang in enumerate(langs) if supports(metric, lang)]
            kept = [trials[i] for i in keep]
            refs = [list(t.references) for t in kept]
            sources = [suite_file.sources.get(t.id, "") for t in kept]

            def report(half: int, side: str) -> None:
                if progress:
                    progress(2 * step + half, steps, f"scoring {metric.name} ({step + 1} of {len(metric_objs)} "
                                                     f"metrics): the {side} texts of {len(kept):,} pairs")
            try:
                report(0, "better")
                good = _scores(metric, [t.original for t in kept], refs, sources, settings, reg)
                report(1, "worse")
                bad = _scores(metric, [t.corrupted for t in kept], refs, sources, settings, reg)
            except MetricError as exc:
                raise MuttlabError(str(exc)) from None
            s_good = np.full(len(trials), np.nan)
            s_bad = np.full(len(trials), np.nan)
            s_good[keep], s_bad[keep] = good, bad
            judged = verdict.judge(s_good, s_bad, expected, metric.higher_is_better, bound[metric.name])
            frames.append(pd.DataFrame({
                "trial": [t.id for t in trials], "phenomenon": [t.corruption for t in trials],
                "severity": [t.severity for t in trials], "expected": expected_names, "lang": langs,
                "metric": metric.name, "s_good": s_good, "s_incorrect": s_bad, "margin": judged.margin,
                "outcome": _OUTCOME[judged.code], "passed": judged.passed}))
        if progress:
            progress(steps, steps, "done")
    finally:
        if registry is None:
            reg.close()
    return ChallengeResults(pd.concat(frames, ignore_index=True)[TABLE_COLUMNS], suite_file.format,
                            {m.name: m.signature() for m in metric_objs}, suite_file.suite.name, settings.rules,
                            bound, dict(suite_file.not_applied))


def is_aces(results: ChallengeResults) -> bool:
    return results.format == ACES_TSV
