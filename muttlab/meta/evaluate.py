"""Meta-evaluation of metrics against human judgments: which judgments, which metrics can score them, their
scores through the score cache, the baseline rows, every statistic, significance and clusters.

The statistics themselves are :mod:`muttlab.meta.statistics`' (pure functions of the matrices); this module
only decides what goes in and collects what comes out into a :class:`~muttlab.meta.result.MetaEvaluation`.
"""
from __future__ import annotations

import math
import zlib
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from muttlab import checks
from muttlab.engine.runner import registry_for, score_batches
from muttlab.errors import DataError, InvalidArgument, MetricError, MetricUnavailable, MuttlabError
from muttlab.meta import generic, mqm
from muttlab.meta import statistics as st
from muttlab.meta.corpus import system_corpus_scores
from muttlab.meta.judgments import Judgments
from muttlab.meta.result import STATISTICS, SYSTEM_LEVEL, TIE_CALIBRATED, MetaEvaluation, Significance
from muttlab.metrics.base import Metric, signature_of
from muttlab.metrics.registry import Registry
from muttlab.settings import Settings
from muttlab.stats import bootstrap_ci

ProgressFn = Callable[[int, int, str], None]

# The rows every table carries, so that a metric's number can be read against what no metric at all gets:
# experts tie about half of en-de TED's item-grouped pairs, so a metric that ties everything reaches
# acc*_eq ≈ 0.48 there (data README).
CONSTANT = "constant baseline"
RANDOM = "random baseline"
BASELINES = (CONSTANT, RANDOM)
# The statistics WMT22-24 rank metrics by, with significance clusters by default.
DEFAULT_SIGNIFICANCE = ("acc_eq_item", "acc_eq", "pairwise_acc_sys", "pearson_sys")
# How two metrics are compared: their pair outcomes swapped (ε fixed), or their scores permuted. Kendall's τ
# has no vectorised resampling here: significance for it is not offered.
SIGNIFICANCE_METHOD = {"acc_eq_item": "pairs", "acc_eq": "pairs", "pairwise_acc_item": "pairs",
                       "pairwise_acc": "pairs", "pearson_item": "scores", "pearson": "scores",
                       "pairwise_acc_sys": "scores", "pearson_sys": "scores"}
MAX_RESAMPLES = 100_000
# Keyword options of meta_evaluate, and those that say how to read the judgments (load_judgments).
OPTIONS = ("significance", "n_resamples", "seed", "alpha", "max_exact_pairs", "keep_scores")
READING = ("reference", "pair", "target_language")


# --------------------------------------------------------------------------- what to evaluate

def study_pairs() -> list[str]:
    """The shipped studies' pairs as ``study:pair`` names (``mqm-ted:en-de``)."""
    return [f"{mqm.STUDY}:{pair}" for pair in mqm.TED_PAIRS]


def load_judgments(settings: Settings, data, reference: str | None = None, pair: str | None = None,
                   target_language: str | None = None, where: str = "meta_evaluate") -> Judgments:
    """The judgments ``data`` names: a :class:`Judgments` as it is; a study's pair (``mqm-ted:en-de``, read from
    the data dir); a language pair's folder of MQM files (:func:`muttlab.meta.mqm.read_mqm_folder`); a file in
    the generic format (:func:`muttlab.meta.generic.read_judgments`); the bytes of an uploaded file. ``where``
    names the public function in an InvalidArgument."""
    for argument, value in (("reference", reference), ("pair", pair), ("target_language", target_language)):
        if value is not None:
            checks.name(value, where, argument)
            if argument != "reference" and not generic.LANGUAGE.fullmatch(value.strip().lower()):
                raise InvalidArgument(where, argument, f"must be a language code such as de or a pair such as "
                                                       f"en-de, got {value[:20]!r}")
    if isinstance(data, Judgments):
        return data
    if isinstance(data, (bytes, bytearray)):
        return generic.parse_judgments(bytes(data), target_language=target_language)
    if not isinstance(data, (str, Path)) or not str(data).strip() or "\0" in str(data):
        raise InvalidArgument(where, "data", f"must be a study's pair ({', '.join(study_pairs())}), "
                                                       f"a folder or file path, or Judgments; got {checks.shown(data)}")
    text = str(data)
    study, sep, name = text.partition(":")
    path = Path(text).expanduser()
    try:
        exists, is_dir, is_file = path.exists(), path.is_dir(), path.is_file()
    except OSError as exc:  # a name longer than the file system takes, ...
        raise DataError(text[:80], f"not a usable file name ({exc.strerror})") from None
    if sep and study == mqm.STUDY and not exists:
        return mqm.load_ted(settings, name)
    if is_dir:
        return mqm.read_mqm_folder(path, reference=reference, pair=pair)
    if is_file and _is_mqm_error_file(path):
        raise DataError(path, "is an MQM error file", fix="give its folder, which also holds the "
                                                          "*.avg_seg_scores.tsv file with the segment scores")
    if not exists and not sep:
        raise DataError(path, "no such file or folder",
                        fix=f"give a judgments file, an MQM pair's folder, or one of {', '.join(study_pairs())}")
    if sep and study != mqm.STUDY and not exists:
        raise MuttlabError(f"unknown study {study[:60]!r}; the studies with judgments are {mqm.STUDY} (pairs "
                           f"{', '.join(study_pairs())}), or give a file or folder")
    return generic.read_judgments(path, target_language=target_language)


def _is_mqm_error_file(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            first = handle.readline(4096)
    except OSError:
        return False
    return first.split(b"\t")[:4] == [c.encode() for c in mqm.ERROR_COLUMNS[:4]]


def choose_statistics(spec: Sequence[str] | str | None, allowed: Sequence[str] = tuple(STATISTICS),
                      what: str = "statistics") -> list[str]:
    """The statistics asked for (all by default), in the order given; unknown names are an error."""
    if spec is None:
        return list(allowed)
    names = [n.strip() for n in spec.split(",")] if isinstance(spec, str) else checks.names(spec, "meta_evaluate",
                                                                                           what)
    names = list(dict.fromkeys(n for n in names if n))
    if names == ["all"]:
        return list(allowed)
    unknown = [n for n in names if n not in allowed]
    if unknown or not names:
        raise MuttlabError(f"unknown {what} {', '.join(repr(n[:40]) for n in unknown) or '(none named)'}; "
                           f"choose from {', '.join(allowed)}")
    return names


def language_reason(metric: Metric, language: str) -> str | None:
    """Why ``metric`` cannot score outputs in ``language``, or None when it can (``languages`` None: any)."""
    languages = metric.languages
    if languages is None or language in languages:
        return None
    why = getattr(metric, "language_reason", "") or "its resources are for those languages"
    return f"scores {', '.join(languages)} only ({why}); these outputs are in {language!r}"


# --------------------------------------------------------------------------- scoring

def _score(metric: Metric, judgments: Judgments, settings: Settings, registry: Registry) -> np.ndarray:
    """The metric's scores of every judged output, (systems, items), NaN where not judged."""
    systems, items = judgments.cells()
    candidates = [judgments.hypotheses[s][i] for s, i in zip(systems, items)]
    references = [list(judgments.references[i]) for i in items]
    if metric.uses_source:  # the cache is keyed on candidate and references: a source-reading metric is scored directly
        flat = metric.score(candidates, references, [judgments.sources[i] for i in items])
    else:
        flat = score_batches(metric, [(candidates, references)], settings, registry)[0]
    out = np.full(judgments.shape, np.nan)
    out[systems, items] = flat
    return out


def score_metrics(settings: Settings, judgments: Judgments, metrics: Sequence[str] | str, registry: Registry,
                  progress: ProgressFn) -> tuple[dict[str, Metric], dict[str, np.ndarray], dict[str, str]]:
    """(metric objects, their score matrices, skipped metric -> why) for the metrics named (``all``: every
    registered one). A metric that is unavailable, cannot score the target language, or cannot score some
    output is skipped with its reason, never scored as if it could; an unknown name is an error."""
    names = registry.names if isinstance(metrics, str) and metrics.strip() == "all" else registry.resolve(metrics)
    clash = [n for n in names if n in BASELINES]
    if clash:
        raise MuttlabError(f"a metric named {clash[0]!r} would be confused with the baseline row; rename it")
    chosen: dict[str, Metric] = {}
    scores: dict[str, np.ndarray] = {}
    skipped: dict[str, str] = {}
    for step, name in enumerate(names):
        progress(step, len(names), f"scoring {name}")
        try:
            metric = registry.get(name)
        except MetricUnavailable as exc:
            skipped[name] = str(exc)
            continue
        reason = language_reason(metric, judgments.target_language)
        if reason is not None:
            skipped[name] = reason
            continue
        try:
            matrix = _score(metric, judgments, settings, registry)
        except MetricError as exc:
            skipped[name] = f"cannot score these outputs: {exc}"
            continue
        unscored = int(np.isnan(matrix[judgments.rated]).sum())
        if unscored:
            skipped[name] = f"cannot score {unscored} of {judgments.n_outputs} outputs (empty text)"
            continue
        chosen[name], scores[name] = metric, matrix
    progress(len(names), len(names), "scored")
    return chosen, scores, skipped


# --------------------------------------------------------------------------- statistics

def item_interval(gold: np.ndarray, oriented: np.ndarray, epsilon: float, n_resamples: int,
                  seed: int) -> list[float]:
    """95% percentile bootstrap interval of an item-grouped acc_eq at a fixed ε: the items (source segments)
    resampled with replacement, each keeping its pairs (:func:`muttlab.stats.bootstrap_ci`). The ε is the one
    the search found on all items, so the interval leaves out the search's own uncertainty."""
    right, valid = st.grouped_outcomes(gold, oriented, epsilon)
    sizes = valid.sum(axis=0)
    per_item = right.sum(axis=0)[sizes > 0] / sizes[sizes > 0]
    found = bootstrap_ci(lambda v: v.mean(axis=-1), (per_item,), n_boot=n_resamples, seed=seed)
    return [found.ci_low, found.ci_high]


def _statistics_of(gold: np.ndarray, oriented: np.ndarray, system_gold: np.ndarray, system_oriented: np.ndarray,
                   wanted: list[str], max_exact_pairs: int, seed: int, n_resamples: int,
                   ) -> tuple[dict, dict, dict, dict, dict]:
    values, epsilons, informative, search, intervals = {}, {}, {}, {}, {}
    for statistic in wanted:
        if statistic in TIE_CALIBRATED:
            found = st.tie_calibrated_accuracy(gold, oriented, grouped=statistic == "acc_eq_item",
                                               max_exact_pairs=max_exact_pairs, seed=seed)
            values[statistic], epsilons[statistic], informative[statistic] = (found.accuracy, found.epsilon,
                                                                            found.informative)
            search[statistic] = {"candidates": found.candidates, "sample_rate": found.sample_rate,
                                 "estimate": found.estimate, "pairs": found.n_pairs, "groups": found.n_groups,
                                 "untied": found.untied, "constant": found.constant}
            if statistic == "acc_eq_item":
                intervals[statistic] = item_interval(gold, oriented, found.epsilon, n_resamples, seed)
        elif statistic == "pairwise_acc_item":
            values[statistic] = st.accuracy_with_ties(gold, oriented, 0.0, grouped=True).accuracy
            intervals[statistic] = item_interval(gold, oriented, 0.0, n_resamples, seed)
        elif statistic == "pairwise_acc":
            values[statistic] = st.accuracy_with_ties(gold, oriented, 0.0, grouped=False).accuracy
        elif statistic in ("kendall_item", "kendall"):
            values[statistic] = st.kendall(gold, oriented, grouped=statistic == "kendall_item")
        elif statistic in ("pearson_item", "pearson"):
            values[statistic] = st.pearson(gold, oriented, grouped=statistic == "pearson_item")
        elif statistic == "pairwise_acc_sys":
            values[statistic] = st.pairwise_accuracy(system_gold, system_oriented)
        elif statistic == "pearson_sys":
            values[statistic] = st.pearson_vector(system_gold, system_oriented)
    return values, epsilons, informative, search, intervals


def calibration_verdict(metric: str, beats: bool, accuracy: float, epsilon: float, search: dict,
                        significance: Significance | None, alpha: float, n_resamples: int) -> tuple[bool, str]:
    """Whether a tie-calibrated ε is informative, and why, in words.

    Informative: ε leaves some pair untied AND the metric's acc*_eq beats the constant baseline's (which ties
    every pair) on the same pairs — significantly, where the statistic was tested (the swap test of its
    clusters, each metric keeping its ε). A metric that does no better than tying everything has earned no ε:
    judged with it, every strict trial would be a tie, or its verdicts no better than calling everything one.
    ``beats``: the search's exact comparison (:attr:`muttlab.meta.statistics.TieCalibration.informative`)."""
    pairs, untied, constant = search["pairs"], search["untied"], search["constant"]
    at = f"acc*_eq {accuracy:.4f} at ε = {epsilon:.4g}"
    if metric == CONSTANT:
        return False, "ties every pair: the baseline a calibration has to beat"
    if not untied:
        return False, f"ε = {epsilon:.4g} ties every one of the {pairs:,} pairs: every strict trial would be a tie"
    left = f"{untied:,} of {pairs:,} pairs left untied"
    if not beats:
        return False, (f"{at} does not beat the constant baseline's {constant:.4f} on the same pairs ({left}): a "
                       "metric that does no better than tying everything earns no ε")
    p = None
    if significance is not None and metric in significance.ranking and CONSTANT in significance.ranking:
        k, c = significance.ranking.index(metric), significance.ranking.index(CONSTANT)
        p = significance.p_values[k][c] if k < c else 1.0
    if p is None:
        return True, f"{at} beats the constant baseline's {constant:.4f} ({left}; not tested for significance)"
    shown = f"p < {1 / n_resamples:g}" if p == 0 else f"p = {p:.3g}"
    if p >= alpha:
        return False, (f"{at} beats the constant baseline's {constant:.4f} only by chance ({shown} ≥ {alpha:g}, "
                       f"{n_resamples:,} resamples; {left})")
    return True, f"{at} beats the constant baseline's {constant:.4f} ({shown}, {n_resamples:,} resamples; {left})"


def _rng(seed: int, statistic: str, first: str, second: str) -> np.random.Generator:
    """One generator per comparison, named by what it compares: a p-value does not depend on which other
    metrics were evaluated beside the two."""
    return np.random.default_rng([seed, zlib.crc32(f"{statistic}\0{first}\0{second}".encode("utf-8"))])


def _pair_tests(statistic: str, ranking: list[str], gold: np.ndarray, oriented: dict[str, np.ndarray],
                epsilons: dict[str, float], n_resamples: int, seed: int) -> np.ndarray:
    p = np.full((len(ranking), len(ranking)), np.nan)
    if statistic.endswith("_item"):
        right = {m: st.grouped_outcomes(gold, oriented[m], epsilons[m])[0] for m in ranking}
        sizes = st.item_pairs(gold, gold).per_item
        groups = np.flatnonzero(sizes)
        weights, _ = st.item_weights(sizes[groups])
        counts = {m: right[m].sum(axis=0)[groups] for m in ranking}
        for k, first in enumerate(ranking):
            for i in range(k + 1, len(ranking)):
                second = ranking[i]
                disagree = (right[first] ^ right[second]).sum(axis=0)[groups]
                p[k, i] = st.swap_test(disagree, counts[first] - counts[second], weights, n_resamples,
                                       _rng(seed, statistic, first, second))
        return p
    bits = st.ungrouped_outcomes(gold, {m: oriented[m] for m in ranking}, epsilons)
    for k, first in enumerate(ranking):
        for i in range(k + 1, len(ranking)):
            second = ranking[i]
            disagree, delta = st.outcome_difference(bits[first], bits[second])
            p[k, i] = st.swap_test(np.array([disagree]), np.array([delta]), np.array([1]), n_resamples,
                                   _rng(seed, statistic, first, second))
    return p


def _score_statistic(statistic: str, gold: np.ndarray, system_gold: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """The statistic of a stack of resampled score arrays (resamples first), one value each."""
    if statistic == "pairwise_acc_sys":
        return lambda stack: st.agreement_rows(system_gold, stack)
    if statistic == "pearson_sys":
        return lambda stack: st.pearson_rows(system_gold[:, None], stack[:, :, None])
    if statistic == "pearson_item":
        return lambda stack: st.pearson_rows(gold, stack)
    rated = ~np.isnan(gold)
    return lambda stack: st.pearson_rows(gold[rated][:, None], stack[:, rated][:, :, None])


def _score_tests(statistic: str, ranking: list[str], units: dict[str, np.ndarray], gold: np.ndarray,
                 system_gold: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    p = np.full((len(ranking), len(ranking)), np.nan)
    function = _score_statistic(statistic, gold, system_gold)
    for k, first in enumerate(ranking):
        for i in range(k + 1, len(ranking)):
            second = ranking[i]
            p[k, i] = st.permutation_test(function, units[first], units[second], n_resamples,
                                          _rng(seed, statistic, first, second))
    return p


def meta_evaluate(settings: Settings, judgments: Judgments, metrics: Sequence[str] | str = "all",
                  statistics: Sequence[str] | str | None = None, significance: Sequence[str] | str | None = None,
                  n_resamples: int = st.DEFAULT_RESAMPLES, seed: int | None = None, alpha: float = st.DEFAULT_ALPHA,
                  registry: Registry | None = None, progress: ProgressFn | None = None,
                  max_exact_pairs: int = st.DEFAULT_MAX_EXACT_PAIRS, keep_scores: bool = False) -> MetaEvaluation:
    """Every statistic of every metric that can score ``judgments``' target language, with baseline rows.

    Args:
      metrics: registry names, a comma-separated string, or ``all`` (every registered metric; those that
        cannot score these outputs are listed in ``skipped`` with why).
      statistics: names of :data:`muttlab.meta.result.STATISTICS` (default all).
      significance: the statistics to test for significance and cluster (default :data:`DEFAULT_SIGNIFICANCE`
        among those computed; ``[]`` or ``none`` for none). Not offered for Kendall's τ, nor for the ungrouped
        pairwise accuracies beyond ``max_exact_pairs`` pairs (the outcomes of every pair would not fit).
      n_resamples, seed, alpha: the resampling tests' draws (default 1,000), seed (default the settings'),
        and the p-value under which one metric is significantly better (clusters).
      max_exact_pairs: ungrouped acc*_eq is searched exactly up to this many pairs of outputs, else over sampled
        thresholds (:func:`muttlab.meta.statistics.tie_calibrated_accuracy`); beyond it the ungrouped pairwise
        accuracies are not tested for significance.
      keep_scores: keep each metric's segment scores in the result (``scores``), and the human ones (``gold``).
    Returns:
      :class:`~muttlab.meta.result.MetaEvaluation`.
    """
    report = progress or (lambda *a: None)
    wanted = choose_statistics(statistics)
    default = [s for s in DEFAULT_SIGNIFICANCE if s in wanted]
    if significance is None:
        tested = default
    elif (significance.strip() == "none" if isinstance(significance, str)
          else not checks.names(significance, "meta_evaluate", "significance")):
        tested = []
    else:
        tested = choose_statistics(significance, [s for s in wanted if s in SIGNIFICANCE_METHOD],
                                   "significance statistic")
    n_resamples = checks.whole(n_resamples, "meta_evaluate", "n_resamples", 1, MAX_RESAMPLES)
    seed = settings.seed if seed is None else checks.whole(seed, "meta_evaluate", "seed", 0, checks.MAX_SEED)
    alpha = checks.real(alpha, "meta_evaluate", "alpha", 0.0, 1.0)
    max_exact_pairs = checks.whole(max_exact_pairs, "meta_evaluate", "max_exact_pairs", 1, 10 ** 12)
    keep_scores = checks.instance(keep_scores, "meta_evaluate", "keep_scores", bool, "True or False")
    registry = registry or registry_for(settings)
    chosen, raw, skipped = score_metrics(settings, judgments, metrics, registry, report)

    gold = judgments.gold
    rated = judgments.rated
    system_gold = st.system_means(gold, gold)
    oriented: dict[str, np.ndarray] = {}
    system_raw: dict[str, np.ndarray] = {}
    system_level: dict[str, str] = {}
    signatures: dict[str, str] = {}
    higher: dict[str, bool] = {}
    for name, metric in chosen.items():
        sign = 1.0 if metric.higher_is_better else -1.0
        oriented[name] = sign * raw[name]
        corpus = None
        if any(s in SYSTEM_LEVEL for s in wanted):
            corpus = system_corpus_scores(metric, judgments.hypotheses, judgments.references, rated, raw[name],
                                          settings)
        system_raw[name] = corpus if corpus is not None else st.system_means(raw[name], gold)
        system_level[name] = "corpus" if corpus is not None else "mean"
        signatures[name], higher[name] = signature_of(metric), metric.higher_is_better
    random_scores = np.where(rated, np.random.default_rng(seed).random(judgments.shape), np.nan)
    for name, matrix, signature in ((CONSTANT, np.where(rated, 0.0, np.nan), "constant:0"),
                                    (RANDOM, random_scores, f"random:uniform(0,1)|seed:{seed}")):
        oriented[name], system_raw[name], system_level[name] = matrix, st.system_means(matrix, gold), "mean"
        signatures[name], higher[name] = signature, True

    values, epsilons, informative, search, intervals = {}, {}, {}, {}, {}
    names = list(oriented)
    for step, name in enumerate(names):
        report(step, len(names), f"statistics of {name}")
        sign = 1.0 if higher[name] else -1.0
        values[name], epsilons[name], informative[name], search[name], intervals[name] = _statistics_of(
            gold, oriented[name], system_gold, sign * system_raw[name], wanted, max_exact_pairs, seed, n_resamples)

    notes = list(judgments.notes)
    outputs = judgments.n_outputs
    if outputs * (outputs - 1) // 2 > max_exact_pairs:
        # Comparing two metrics pair by pair would hold a bit per pair and metric (625 MB per metric at 100k).
        untested = [s for s in tested if s in ("acc_eq", "pairwise_acc")]
        if any(search[m].get("acc_eq", {}).get("sample_rate", 1.0) < 1.0 for m in names):
            notes.append("ungrouped acc*_eq searched over sampled thresholds (sample rate in `search`)")
        if untested:
            notes.append(f"more than {max_exact_pairs:,} pairs of outputs: no significance for {', '.join(untested)}")
        tested = [s for s in tested if s not in untested]
    tested_results: dict[str, Significance] = {}
    for step, statistic in enumerate(tested):
        report(step, len(tested), f"significance of {statistic} ({n_resamples} resamples)")
        ranking = sorted((m for m in names if not math.isnan(values[m][statistic])),
                         key=lambda m: (-values[m][statistic], m))
        if SIGNIFICANCE_METHOD[statistic] == "pairs":
            eps = {m: epsilons[m].get(statistic, 0.0) for m in ranking}
            p = _pair_tests(statistic, ranking, gold, oriented, eps, n_resamples, seed)
        else:
            if statistic in SYSTEM_LEVEL:
                units = {m: (1.0 if higher[m] else -1.0) * np.asarray(system_raw[m]) for m in ranking}
            else:
                units = oriented
            p = _score_tests(statistic, ranking, units, gold, system_gold, n_resamples, seed)
        tested_results[statistic] = Significance(
            statistic, SIGNIFICANCE_METHOD[statistic], ranking,
            [[None if math.isnan(v) else float(v) for v in row] for row in p],
            st.clusters(np.nan_to_num(p, nan=1.0), alpha))
    report(1, 1, "done")
    reasons: dict[str, dict[str, str]] = {name: {} for name in names}
    for statistic in (s for s in wanted if s in TIE_CALIBRATED):
        for name in names:
            informative[name][statistic], reasons[name][statistic] = calibration_verdict(
                name, informative[name][statistic], values[name][statistic], epsilons[name][statistic],
                search[name][statistic], tested_results.get(statistic), alpha, n_resamples)
    pairs_counted = {s: next(iter(search.values()))[s]["pairs"] for s in wanted if s in TIE_CALIBRATED}
    pairs_counted.update({s: len(judgments.systems) * (len(judgments.systems) - 1) // 2
                          for s in wanted if s in SYSTEM_LEVEL})
    return MetaEvaluation(
        name=judgments.name, pair=judgments.pair, target_language=judgments.target_language, human=judgments.human,
        data_digest=judgments.data_digest, systems=list(judgments.systems), items=len(judgments.items),
        outputs=judgments.n_outputs, statistics=wanted, metrics=signatures, baselines=list(BASELINES),
        higher_is_better=higher, values=values, epsilons=epsilons, informative=informative, reasons=reasons,
        intervals=intervals, pairs=pairs_counted,
        search=search, system_gold=[float(v) for v in system_gold],
        system_scores={m: [float(v) for v in system_raw[m]] for m in names}, system_level=system_level,
        significance=tested_results, n_resamples=n_resamples, seed=seed, alpha=alpha, skipped=skipped,
        notes=notes, scores={m: raw[m] for m in chosen} if keep_scores else None,
        gold=gold.copy() if keep_scores else None)
