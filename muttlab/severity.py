"""Severity curves: how a metric's verdicts change as a corruption gets stronger.

A generated corruption type with a natural strength (:data:`muttlab.corruptions.generate.STRENGTHS`: content
words dropped, words misspelt, chunk transpositions, PP copies, prepositions removed) is applied at each
strength to the same sentences — only sentences where every requested strength applies are used, so the
points of a curve differ in strength alone. Per metric and strength we report the pass rate (the type's
MUTT rule) and the mean score drop s_orig − s_corr in the metric's "better" direction. A good metric
penalises a stronger corruption at least as much as a weaker one: its curves are monotone (non-decreasing);
``monotone`` names the first step where a curve falls.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from muttlab.corruptions import catalog
from muttlab.corruptions.generate import GENERATORS, STRENGTHS
from muttlab.engine import runner, verdict
from muttlab.errors import MuttlabError
from muttlab.metrics.registry import Registry
from muttlab.settings import DEFAULT_TIE_TOLERANCE, Settings
from muttlab.trials import Expectation

COLUMNS = ["metric", "strength", "n", "pass_rate", "mean_drop", "monotone", "signature"]


def strength_items(sentences: Sequence[tuple[str, str, tuple[str, ...]]], corruption: str, strengths: Sequence[int],
                   seed: int) -> tuple[list[tuple[str, str, tuple[str, ...]]], dict[int, list[str]]]:
    """The (id, sentence, references) items every strength applies to, and the corruption per strength."""
    from muttlab.resources.spacy_nlp import ModelMissing, parse

    if corruption not in STRENGTHS:
        raise MuttlabError(f"{corruption!r} has no strength parameter; choose one of {', '.join(STRENGTHS)}")
    bad = [k for k in strengths if k < 1]
    if bad or not strengths:
        raise MuttlabError(f"strengths must be whole numbers >= 1, got {list(strengths)}")
    try:
        docs = parse([s for _, s, _ in sentences])
    except ModelMissing as exc:
        raise MuttlabError(str(exc)) from None
    generator = GENERATORS[corruption]
    kept, corrupted = [], {k: [] for k in strengths}
    for item, doc in zip(sentences, docs):
        made = {k: generator(doc, seed, strength=k) for k in strengths}
        if all(m and m != item[1].strip() for m in made.values()):
            kept.append(item)
            for k in strengths:
                corrupted[k].append(made[k])
    return kept, corrupted


def _monotone(values: Sequence[float], strengths: Sequence[int], label: str,
              tie_tolerance: float = DEFAULT_TIE_TOLERANCE) -> str:
    """"" when the curve never falls, else where it first does; a step within the tie rule is not a fall
    (0.4448493795 to 0.4448493787 is rounding, not a weaker penalty)."""
    for (a, va), (b, vb) in zip(zip(strengths, values), list(zip(strengths, values))[1:]):
        # A fall is the earlier value strictly above the later one: the verdict's "first better", ties and all.
        if verdict.judge([va], [vb], Expectation.FIRST_BETTER, True, tie_tolerance).passed[0]:
            return f"no: {label} falls from strength {a} to {b}"
    return ""


def severity_curve(settings: Settings, corruption: str, metrics: Sequence[str] | str, strengths: Sequence[int],
                   sentences: Sequence[tuple[str, str, tuple[str, ...]]] | None = None, refs: int = 5,
                   registry: Registry | None = None) -> pd.DataFrame:
    """Pass rate and mean score drop against strength, per metric.

    Args:
      corruption: a type with a strength (:data:`STRENGTHS`).
      sentences: (id, clean sentence, references) items; default the bundled sample scenes.
      refs: references per sentence (the first ``refs``).
    Returns:
      columns metric, strength, n (sentences the metric could score), pass_rate (%), mean_drop, monotone
      ("yes", or where the curve falls), signature (the metric's and the rules' it was judged by).
    """
    if sentences is None:
        from muttlab.sources import load_sample_scenes
        sentences = [(str(s["id"]), s["original"], tuple(s["references"])) for s in load_sample_scenes()]
    strengths = sorted(set(int(k) for k in strengths))
    items, corrupted = strength_items(sentences, corruption, strengths, settings.seed)
    if not items:
        raise MuttlabError(f"no sentence takes {corruption} at every strength {strengths}; try lower strengths")
    expected = verdict.EXPECTATION_OF_RULE[catalog.get(corruption).rule]
    reg = registry or runner.registry_for(settings)
    pools = [list(r[:refs]) for _, _, r in items]
    originals = [s for _, s, _ in items]
    rows = []
    try:
        for metric in runner.resolve_metrics(metrics, reg):
            batches = [(originals, pools)] + [(corrupted[k], pools) for k in strengths]
            scored = runner.score_batches(metric, batches, settings, reg)
            sign = 1.0 if metric.higher_is_better else -1.0
            ties = verdict.tie_tolerance(settings.tie_tolerance, metric.noise_floor)
            signature = f"{metric.signature()}|{settings.rule_signature(metric.noise_floor)}"
            curve = []
            for k, s_corr in zip(strengths, scored[1:]):
                judged = verdict.judge(scored[0], s_corr, expected, metric.higher_is_better, ties, settings.tolerance)
                scored_here = ~judged.unsupported
                curve.append({"metric": metric.name, "strength": k, "n": int(scored_here.sum()),
                              "pass_rate": 100.0 * float(np.mean(judged.passed[scored_here])),
                              "mean_drop": float(np.mean(sign * (scored[0] - s_corr)[scored_here])),
                              "signature": signature})
            shape = (_monotone([c["pass_rate"] for c in curve], strengths, "pass rate", ties)
                     or _monotone([c["mean_drop"] for c in curve], strengths, "mean drop", ties) or "yes")
            rows += [dict(c, monotone=shape) for c in curve]
    finally:
        if registry is None:
            reg.close()
    return pd.DataFrame(rows, columns=COLUMNS)
