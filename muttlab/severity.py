"""Severity curves: how a metric's verdicts change as a corruption gets stronger.

A generated corruption type with a natural strength (:data:`muttlab.corruptions.generate.STRENGTHS`: content
words dropped, words misspelt, chunk transpositions, PP copies, prepositions removed) is applied at each
strength to the same sentences — only sentences where every requested strength applies are used, so the
points of a curve differ in strength alone. By default the sentences are every distinct original of the MUTT
experiment sets with its references (with a data dir), else the bundled sample's scenes. Per metric and
strength we report the pass rate (the type's MUTT rule) with its 95% Wilson interval and the mean score drop
s_orig − s_corr in the metric's "better" direction.

A good metric penalises a stronger corruption at least as much as a weaker one: its curves do not fall.
``monotone`` names the first pair of strengths where one does. A pass rate falls only when the drop is beyond
the tie rule *and* beyond sampling noise — the two strengths' Wilson intervals do not overlap — since a few
hundred sentences give each rate an interval of several points; a mean drop falls when it is lower beyond the
tie rule (0.4448493795 to 0.4448493787 is rounding, not a weaker penalty).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from muttlab import stats
from muttlab.corruptions import catalog
from muttlab.corruptions.generate import GENERATORS, STRENGTHS
from muttlab.engine import runner, verdict
from muttlab.errors import MuttlabError
from muttlab.metrics.base import signature_of
from muttlab.metrics.registry import Registry
from muttlab.rules import DEFAULT_RULES, Rules
from muttlab.settings import Settings
from muttlab.trials import Expectation

COLUMNS = ["metric", "strength", "n", "pass_rate", "pass_ci_low", "pass_ci_high", "mean_drop", "monotone",
           "signature"]
Item = tuple[str, str, tuple[str, ...]]  # (id, clean sentence, references)


@dataclass(frozen=True)
class CurveRequest:
    """What a curve is asked for: a corruption type with a strength, the metrics, the strengths and the
    references per sentence (its default sentences: :func:`default_sentences`)."""

    corruption: str
    metrics: tuple[str, ...]
    strengths: tuple[int, ...]
    refs: int = 5


# The curve the Severity page opens on, shipped precomputed (muttlab.snapshots.severity): a typo at strengths
# 1-3, which every sample scene and most MUTT originals take (dropped content words at all three fit one sample
# sentence only, where a mean is that sentence), by the study's classic metrics.
DEFAULT_CURVE = CurveRequest("typo", ("BLEU-4", "METEOR-1.5", "CIDEr-D"), (1, 2, 3), 5)


def default_sentences(settings: Settings) -> list[Item]:
    """What a curve is drawn on when no sentences are given: every distinct MUTT original with its references
    when the settings have a data dir, else the bundled sample's scenes."""
    from muttlab import sources

    if settings.data_dir is not None:
        return sources.mutt_originals(settings)
    return [(str(s["id"]), s["original"], tuple(s["references"])) for s in sources.load_sample_scenes()]


def strength_items(sentences: Sequence[Item], corruption: str, strengths: Sequence[int],
                   seed: int) -> tuple[list[Item], dict[int, list[str]]]:
    """The (id, sentence, references) items every strength applies to, and the corruption per strength."""
    if corruption not in STRENGTHS:
        raise MuttlabError(f"{corruption!r} has no strength parameter; choose one of {', '.join(STRENGTHS)}")
    bad = [k for k in strengths if k < 1]
    if bad or not strengths:
        raise MuttlabError(f"strengths must be whole numbers >= 1, got {list(strengths)}")
    items = [(str(i), str(s), tuple(r)) for i, s, r in sentences]
    made = {k: _corrupted(tuple(s for _, s, _ in items), corruption, k, seed) for k in strengths}
    kept = [i for i, (_, sentence, _) in enumerate(items)
            if all(made[k][i] and made[k][i] != sentence.strip() for k in strengths)]
    return [items[i] for i in kept], {k: [made[k][i] for i in kept] for k in strengths}


@lru_cache(maxsize=4)
def parsed(sentences: tuple[str, ...]) -> tuple:
    """The sentences' spaCy parses, kept for the process: parsing every MUTT original (about 1.5 s) is most of a
    curve's time, and every corruption type and strength starts from the same parses (a generator reads a
    parse, it never changes it). A server parses the default sentences while it warms up."""
    from muttlab.resources.spacy_nlp import ModelMissing, parse

    try:
        return tuple(parse(list(sentences)))
    except ModelMissing as exc:
        raise MuttlabError(str(exc)) from None


def parse_default_sentences(settings: Settings, corruption: str | None = None, strengths: Sequence[int] = ()) -> int:
    """Parse :func:`default_sentences` now, for every later curve of this process, and make ``corruption``'s
    corruptions of them at ``strengths``; how many sentences there are."""
    sentences = tuple(s for _, s, _ in default_sentences(settings))
    parsed(sentences)
    if corruption is not None:
        strength_items([("", s, ()) for s in sentences], corruption, strengths, settings.seed)
    return len(sentences)


@lru_cache(maxsize=64)
def _corrupted(sentences: tuple[str, ...], corruption: str, strength: int, seed: int) -> tuple[str | None, ...]:
    """Each sentence corrupted at one strength (None where the type does not apply), kept for the process:
    generating them is most of a curve's time on a warm score cache (0.5 s of 0.7 s for typos of the MUTT
    originals at three strengths), and curves of one type share their strengths (1-2-3 and 2-3-4 share two);
    a server makes its page's default curve's while it warms up."""
    generator = GENERATORS[corruption]
    return tuple(generator(doc, seed, strength=strength) for doc in parsed(sentences))


def _above(earlier: float, later: float, rules: Rules) -> bool:
    """The earlier value strictly above the later one under the tie rule: the verdict's "first better"."""
    return bool(verdict.judge([earlier], [later], Expectation.FIRST_BETTER, True, rules).passed[0])


def _relative(rules: Rules) -> Rules:
    """The rules a pass rate (%) or a mean drop is compared by: a calibrated ε is in a metric's score units,
    which neither is, so those two compare by the relative rule of the metric's noise floor."""
    return Rules(tolerance=rules.tolerance).for_metric(rules.noise_floor) if rules.tie.calibrated else rules


def pass_rate_fall(passed: Sequence[int], n: Sequence[int], strengths: Sequence[int],
                   rules: Rules = DEFAULT_RULES) -> str:
    """"" when the pass rate never falls, else the first pair of strengths where it does: the rate at the
    stronger corruption lower beyond the tie rule and its 95% Wilson interval entirely below the weaker's."""
    passed, n = np.asarray(passed, dtype=float), np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = 100.0 * passed / n
    low, high = (100.0 * side for side in stats.wilson_interval(passed, n))
    for i, j in combinations(range(len(strengths)), 2):
        if _above(rates[i], rates[j], rules) and low[i] > high[j]:
            return (f"no: pass rate falls from strength {strengths[i]} to {strengths[j]} "
                    f"(95% CI {low[i]:.1f}–{high[i]:.1f}% vs {low[j]:.1f}–{high[j]:.1f}%)")
    return ""


def mean_drop_fall(values: Sequence[float], strengths: Sequence[int], rules: Rules = DEFAULT_RULES) -> str:
    """"" when the mean drop never falls, else the first pair of strengths where the stronger corruption's
    is lower beyond the tie rule."""
    for i, j in combinations(range(len(strengths)), 2):
        if _above(values[i], values[j], rules):
            return f"no: mean drop falls from strength {strengths[i]} to {strengths[j]}"
    return ""


def severity_curve(settings: Settings, corruption: str, metrics: Sequence[str] | str, strengths: Sequence[int],
                   sentences: Sequence[Item] | None = None, refs: int = 5, registry: Registry | None = None,
                   progress: Callable[[int, int, str], None] | None = None) -> pd.DataFrame:
    """Pass rate and mean score drop against strength, per metric.

    Args:
      corruption: a type with a strength (:data:`STRENGTHS`).
      sentences: (id, clean sentence, references) items; default :func:`default_sentences`.
      refs: references per sentence (the first ``refs``).
      progress: ``(step, total, message)`` before the parsing, before each metric and at the end.
    Returns:
      columns metric, strength, n (sentences the metric could score), pass_rate (%), pass_ci_low and
      pass_ci_high (its 95% Wilson interval, %), mean_drop, monotone ("yes", or where the curve falls),
      signature (the metric's and the rules' it was judged by). ``attrs["sentences"]`` is how many sentences
      were offered, ``attrs["kept"]`` how many take the type at every strength.
    """
    report = progress or (lambda step, total, message: None)
    if sentences is None:
        sentences = default_sentences(settings)
    strengths = sorted(set(int(k) for k in strengths))
    reg = registry or runner.registry_for(settings)
    try:
        names = reg.resolve(metrics)
        total = 1 + len(names)
        report(0, total, f"parsing and corrupting {len(sentences)} sentences")
        items, corrupted = strength_items(sentences, corruption, strengths, settings.seed)
        if not items:
            raise MuttlabError(f"no sentence takes {corruption} at every strength {strengths}; try lower strengths")
        verdict.check_rules(settings)
        expected = verdict.EXPECTATION_OF_RULE[catalog.get(corruption).rule]
        pools = [list(r[:refs]) for _, _, r in items]
        originals = [s for _, s, _ in items]
        rows = []
        for i, metric in enumerate(runner.resolve_metrics(names, reg)):
            report(1 + i, total, f"scoring {metric.name} ({i + 1} of {len(names)} metrics) on {len(items)} "
                                 f"sentences x {len(strengths)} strengths")
            rows += _curve(metric, settings, reg, expected, originals, pools, corrupted, strengths)
        report(total, total, "done")
    finally:
        if registry is None:
            reg.close()
    frame = pd.DataFrame(rows, columns=COLUMNS)
    frame.attrs.update(sentences=len(sentences), kept=len(items))
    return frame


def _curve(metric, settings: Settings, registry: Registry, expected: Expectation, originals: list[str],
           pools: list[list[str]], corrupted: dict[int, list[str]], strengths: list[int]) -> list[dict]:
    """One metric's rows of the curve table."""
    batches = [(originals, pools)] + [(corrupted[k], pools) for k in strengths]
    scored = runner.score_batches(metric, batches, settings, registry)
    sign = 1.0 if metric.higher_is_better else -1.0
    # The default sentences are English (MUTT originals, the sample's scenes).
    rules = verdict.rules_for(settings, metric.name, signature_of(metric), metric.noise_floor)
    signature = f"{signature_of(metric)}|{rules.signature()}"
    curve = []
    for k, s_corr in zip(strengths, scored[1:]):
        judged = verdict.judge(scored[0], s_corr, expected, metric.higher_is_better, rules)
        scored_here = ~judged.unsupported
        n, passed = int(scored_here.sum()), int(judged.passed[scored_here].sum())
        low, high = stats.wilson_interval(passed, n)
        curve.append({"metric": metric.name, "strength": k, "n": n, "passed": passed,
                      "pass_rate": 100.0 * passed / n if n else float("nan"),
                      "pass_ci_low": 100.0 * float(low), "pass_ci_high": 100.0 * float(high),
                      "mean_drop": float(np.mean(sign * (scored[0] - s_corr)[scored_here])) if n else float("nan"),
                      "signature": signature})
    shape = (pass_rate_fall([c["passed"] for c in curve], [c["n"] for c in curve], strengths, _relative(rules))
             or mean_drop_fall([c["mean_drop"] for c in curve], strengths, _relative(rules)) or "yes")
    return [dict(c, monotone=shape) for c in curve]
