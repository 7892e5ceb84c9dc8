"""The public API: what the CLI, the dashboard and notebooks call.

Every front-end goes through these functions, so a number means the same wherever it is shown::

    from muttlab import api
    settings = api.load_settings()                      # MUTTLAB_* variables; the sample without a data dir
    results = api.run_grid(settings, metrics=["BLEU-4", "CIDEr-D"], corruptions=["neg_subj"], ref_counts=[5])
    results.accuracy()                                  # metric x corruption x refs, with 95% intervals
    api.score(settings, ["BLEU-4"], ["a man rides a bike"], [["a man is riding a bicycle"]])
    api.correlate(settings, "flickr8k", metrics=["BLEU-4"])

Errors a caller can fix raise :class:`muttlab.errors.MuttlabError` (or one of its documented subclasses).
"""
from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

import numpy as np

from muttlab import validation
from muttlab.corruptions import catalog
from muttlab import sources
from muttlab.engine import runner, verdict
from muttlab.engine.runner import NotComputedHere, Results, cached_scores_only, registry_for
from muttlab.engine.slices import LABELS as SLICE_LABELS, NUMBERS as SLICE_NUMBERS
from muttlab.engine.progress import items_reported_to
from muttlab.trials import Suite
from muttlab.errors import InvalidArgument, MuttlabError, UnknownName
from muttlab.metrics.base import check_batch, contained, signature_of
from muttlab.metrics.registry import MetricInfo, Registry
from muttlab.settings import DEFAULT_METRICS, Settings, active_limits, load_settings
# Re-exported for the front-ends, which reach the package through this module only: names from small modules that
# load nothing heavier than numpy. Names of heavier modules are imported when first used (_IMPORTED_WHEN_USED, at
# the end). The groups of functions below say what each is for.
# The learned metrics' checkpoints:
from muttlab.learned.reval_config import TrainConfig
from muttlab.metrics.reval.installed import file_id, installed_state, model_id, short_id
from muttlab.metrics.reval.metric import NAMES as REVAL_NAMES, checkpoint_info, find_checkpoint
# roles (docs/security.md):
from muttlab.access.roles import ANONYMOUS, Action, Identity, allowed, local_operator, require
# trials, corruption types and their strengths, the bundled sample, reading files:
from muttlab.trials import Trial
from muttlab.corruptions.base import Rule
from muttlab.corruptions.generate import STRENGTHS
from muttlab.sources import SAMPLE_TRIALS, load_sample_scenes, parse_json, read_bytes, read_lines
# statistics:
from muttlab.stats import DEFAULT_N_BOOT, METHODS as CORRELATION_METHODS, McNemarResult, mcnemar
# where the dashboard's files are:
from muttlab.resources.bundled import dashboard_dir

if TYPE_CHECKING:  # pandas is imported by the functions that return a frame: `muttlab run` needs none
    import pandas as pd

    from muttlab.human.reproduce import ReproductionReport
    from muttlab.severity import CurveRequest
    from muttlab.snapshots import Snapshot
    from muttlab.snapshots.human import SickNumbers, StudyDefaults

__all__ = ["DEFAULT_METRICS", "Results", "Settings", "load_settings", "metric_catalogue", "load_suite", "run_grid",
           "score", "score_together", "corrupt", "sentence_verdicts", "correlate", "reproduce", "check_rules",
           "snapshot", "snapshot_differences"]


Progress = Callable[[int, int, str], None]


def metric_catalogue(settings: Settings, registry: Registry | None = None) -> list[MetricInfo]:
    """Every registered metric (built in, entry points, import paths) with its availability and reason."""
    validation.arguments("metric_catalogue", settings=settings, registry=registry)
    reg = registry or registry_for(settings)
    return [reg.info(name) for name in reg.names]


def prepare_metric(settings: Settings, metric: str, registry: Registry | None = None) -> None:
    """Start now what ``metric``'s first score would start (METEOR's JVM reading its paraphrase table, a model
    read), and return once it has: a server's warm-up calls it in a thread of its own, so that a load spent
    waiting on another process goes on beside the rest of the warm-up.

    Raises:
      UnknownMetric; MetricUnavailable (the metric cannot run here, and why); MetricError (it failed to start).
    """
    settings, metric, registry = validation.arguments("prepare_metric", settings=settings, metric=metric,
                                                      registry=registry)
    reg = registry or registry_for(settings)
    try:
        found = reg.get(metric)
        contained(found, "starting", found.prepare)
    finally:
        if registry is None:  # as every call that makes its own registry: closed (METEOR's JVM lingers a while)
            reg.close()


def keep_a_core_for_pages() -> int:
    """For a server, before it scores anything: METEOR's JVM, when it starts, aligns with one scorer thread fewer
    than the machine has cores (at least one), so that a study's alignments never take every core from the
    interpreter that runs the visitors' pages (docs/deploy.md, "One core for the pages"). A command-line run keeps
    a thread per core. Returns the number of scorer threads."""
    from muttlab.metrics import meteor

    threads = meteor.serving_threads()
    meteor.process().use_threads(threads)
    return threads


def load_suite(settings: Settings, name: str = "default") -> Suite:
    """A built-in suite: ``default`` (the MUTT experiment sets with a data dir, else the bundled sample),
    ``mutt``, ``sample`` or ``store`` (the pair store's current state); any other name is the path of a trial
    suite file (:func:`muttlab.suites.read_suite`)."""
    settings, name = validation.arguments("load_suite", settings=settings, name=name)
    if name == "default":
        return sources.load_default_suite(settings)
    if name == "mutt":
        return sources.load_mutt_experiments(settings)
    if name == "sample":
        return sources.load_sample()
    if name == "store":
        from muttlab.engine.suites import suite_from_store
        return suite_from_store(settings)
    from muttlab.suites import read_suite  # any other name is a suite file (docs/beyond.md)
    suite_file = read_suite(name)
    if suite_file.contrastive:
        raise MuttlabError(f"{name} is a contrastive challenge set ({suite_file.format}); score it with "
                           "run_challenge (muttlab run --suite reports it per phenomenon)")
    return replace(suite_file.suite, languages=suite_file.target_languages())


def select_corruptions(suite: Suite, names: Sequence[str] | None) -> Suite:
    """The part of ``suite`` with these corruption types (all when None or ``["all"]``)."""
    validation.instance(suite, "select_corruptions", "suite", Suite, "a Suite")
    names = validation.arguments("select_corruptions", names=names)
    names = [n for n in (names or []) if n]
    if not names or names == ["all"]:
        return suite
    for name in names:
        catalog.get(name)
    missing = [n for n in names if n not in suite.corruptions()]
    if missing:
        raise MuttlabError(f"suite {suite.name!r} has no trials of {', '.join(missing)}; it has: "
                           f"{', '.join(suite.corruptions())}")
    return suite.select(names)


def select_split(suite: Suite, split: str) -> Suite:
    """The trials taken from SICK pairs of one SemEval split (``train``, ``trial`` or ``test``)."""
    validation.instance(suite, "select_split", "suite", Suite, "a Suite")
    split = validation.arguments("select_split", split=split)
    chosen = suite.in_split(split)
    if not chosen.trials:
        raise MuttlabError(f"split {split!r}: none of the {len(suite.trials)} trials is taken from a SICK pair of "
                           "that split (generated types have none, and the join needs sick/SICK.txt in the data dir)")
    return chosen


def run_grid(settings: Settings, metrics: Sequence[str] | str | None = None,
             corruptions: Sequence[str] | None = None, ref_counts: Sequence[int] | None = None,
             suite: Suite | str = "default", progress: Progress | None = None,
             registry: Registry | None = None) -> Results:
    """Score the trials of ``suite`` with ``metrics`` (default :data:`DEFAULT_METRICS`; ``"all"`` for every
    available one) at each reference count (default: as many of 5/10/20 as the suite has).

    Returns the runner's :class:`~muttlab.engine.runner.Results`: the tidy per-trial table, the metrics'
    signatures and :meth:`~muttlab.engine.runner.Results.accuracy`.
    """
    settings, metrics, corruptions, ref_counts, suite, progress, registry = validation.arguments(
        "run_grid", settings=settings, metrics=DEFAULT_METRICS if metrics is None else metrics, corruptions=corruptions,
        ref_counts=ref_counts, suite=suite, progress=progress, registry=registry)
    chosen = select_corruptions(load_suite(settings, suite) if isinstance(suite, str) else suite, corruptions)
    if not chosen.trials:
        raise MuttlabError("no trials to score: the chosen corruption types have none in this suite")
    reg = registry or registry_for(settings)
    try:
        if metrics is not None and not reg.resolve(metrics):
            raise MuttlabError("no metric selected; name at least one (`muttlab metrics` lists them) or `all`")
        names = list(DEFAULT_METRICS) if metrics is None else metrics
        if settings.scheduler:
            # Imported only here: a run without a scheduler never loads Dask.
            from muttlab.engine import distributed
            return distributed.run(chosen, names, ref_counts, settings, reg, progress=progress)
        return runner.run(chosen, names, ref_counts, settings, reg, progress=progress)
    finally:
        if registry is None:
            reg.close()


SCORE_COLUMNS = ["metric", "candidate", "score", "higher_is_better", "noise_floor", "signature", "problem"]
UNSUPPORTED_EMPTY = "unsupported: the metric does not score empty text (scores_empty_text = False)"


def score(settings: Settings, metrics: Sequence[str], candidates: Sequence[str], references: Sequence[Sequence[str]],
          registry: Registry | None = None) -> pd.DataFrame:
    """Every metric's score of each candidate against its references, through the engine's cache.

    A metric that cannot score (missing requirement, bad input) is reported, not raised, so one broken
    metric never hides the others.

    An empty candidate or reference is scored like any text (sacreBLEU's BLEU and chrF give 0); a metric that
    declares it cannot score empty text gives that candidate NaN with the problem :data:`UNSUPPORTED_EMPTY`.

    Returns:
      columns metric, candidate (index into ``candidates``), score (NaN when the metric failed or the item is
      unsupported), higher_is_better, noise_floor (:attr:`~muttlab.metrics.base.Metric.noise_floor`) and
      signature (which the verdicts' rules need), problem (the metric's message when it failed, or why it is
      unsupported).
    """
    settings, registry = validation.arguments("score", settings=settings, registry=registry)
    metrics = validation.names(metrics, "score", "metrics")  # a list: each name gets its rows, its problem
    # Checked here, before any cache key is made of them: a malformed batch is wrong for every metric.
    return _scored(settings, metrics, [check_batch(candidates, references)], registry)[0]


def score_together(settings: Settings, metrics: Sequence[str],
                   batches: Sequence[tuple[Sequence[str], Sequence[Sequence[str]]]],
                   registry: Registry | None = None) -> list[pd.DataFrame]:
    """:func:`score` of each batch of (candidates, references): each frame is the one :func:`score` gives for that
    batch alone, but the batches are scored together, with one cache look-up, one cache write and one metric call
    per metric for all their new items. A server answering several visitors' requests at once pays each
    metric's fixed costs (a JVM round trip, a cache transaction) once instead of once per request.

    A corpus-dependent metric (CIDEr-D) scores each batch on its own, as its statistics are the batch's. A
    metric that fails on the batches together is asked again for each batch alone, so that one batch's text
    never costs another batch its scores.

    Raises:
      InvalidArgument: a malformed batch, named by its place in ``batches`` (checked before anything is scored).
    """
    settings, registry, batches = validation.arguments("score_together", settings=settings, registry=registry,
                                                       batches=batches)
    return _scored(settings, validation.names(metrics, "score_together", "metrics"), batches, registry)


def _scored(settings: Settings, metrics: list[str], batches: list[tuple[list[str], list[list[str]]]],
            registry: Registry | None) -> list[pd.DataFrame]:
    """:func:`score_together` of checked arguments."""
    import pandas as pd

    reg = registry or registry_for(settings)
    rows: list[list[dict]] = [[] for _ in batches]

    def failed(b: int, name: str, exc: Exception) -> None:
        rows[b] += [{"metric": name, "candidate": i, "score": np.nan, "higher_is_better": True, "noise_floor": 0.0,
                     "signature": "", "problem": str(exc)} for i in range(len(batches[b][0]))]

    # A metric that cannot score raises a MuttlabError (MetricError, MetricUnavailable, UnknownMetric among them).
    for name in metrics:
        try:
            metric = reg.get(name)
        except MuttlabError as exc:
            for b in range(len(batches)):
                failed(b, name, exc)
            continue
        try:
            scored = runner.score_batches(metric, batches, settings, reg)
        except MuttlabError as exc:
            if len(batches) == 1:
                failed(0, name, exc)
                continue
            scored = []
            for b, batch in enumerate(batches):
                try:
                    scored.append(runner.score_batches(metric, [batch], settings, reg)[0])
                except MuttlabError as alone:
                    failed(b, name, alone)
                    scored.append(None)
        signature = signature_of(metric)
        for b, scores in enumerate(scored):
            if scores is None:
                continue
            # NaN: an empty text the metric declares it cannot score (scores_empty_text), shown, never dropped.
            rows[b] += [{"metric": name, "candidate": i, "score": float(s), "higher_is_better": metric.higher_is_better,
                         "noise_floor": metric.noise_floor, "signature": signature,
                         "problem": UNSUPPORTED_EMPTY if np.isnan(s) else ""} for i, s in enumerate(scores)]
    return [pd.DataFrame(r, columns=SCORE_COLUMNS) for r in rows]


def corrupt(sentence: str, references: Sequence[str], types: Sequence[str], seed: int) -> pd.DataFrame:
    """Every chosen generated corruption type applied to one sentence (types that do not apply are left out).

    Returns:
      columns corruption, label, family, rule, corrupted: one row per type that applies.
    Raises:
      MuttlabError: the sentence or a reference over the length limits (checked before any parsing).
    """
    sentence, references, types, seed = validation.arguments("corrupt", sentence=sentence, references=references,
                                                             types=types, seed=seed)
    limits = active_limits()
    limits.check_text(sentence, "the sentence")
    for i, reference in enumerate(references):
        limits.check_text(reference, f"reference {i + 1}")
    import pandas as pd

    from muttlab.engine.suites import generated_trials

    rows = []
    if types:
        for trial in generated_trials([("sentence", sentence, tuple(references), "user")], list(types), seed):
            ctype = catalog.get(trial.corruption)
            rows.append({"corruption": trial.corruption, "label": ctype.label, "family": ctype.family.value,
                         "rule": ctype.rule.value, "corrupted": trial.corrupted})
    return pd.DataFrame(rows, columns=["corruption", "label", "family", "rule", "corrupted"])


def sentence_verdicts(scores: pd.DataFrame, corrupted: pd.DataFrame, settings: Settings) -> pd.DataFrame:
    """Metric x corruption of one sentence: margin and pass/fail by the corruption's MUTT rule.

    Args:
      scores: :func:`score` of ``[sentence] + corrupted["corrupted"]`` (candidate 0 is the sentence).
      corrupted: :func:`corrupt` of the sentence.
      settings: the rules (:class:`muttlab.rules.Rules`: tie rule, Difference tolerance); the sentence is English.
    Returns:
      columns metric, corruption (its label), s_orig, s_corr, margin, passed, signature (the metric's and the
      rules' it was judged by).
    Raises:
      MuttlabError: a calibrated tie rule without a usable calibration of a metric that scored.
    """
    import pandas as pd

    scores, corrupted, settings = validation.arguments("sentence_verdicts", scores=scores, corrupted=corrupted,
                                                       settings=settings)
    # Each corruption's label and what its family expects, once; each metric's pairs judged in one call.
    kinds = [(i, row.label, verdict.EXPECTATION_OF_RULE[catalog.get(row.corruption).rule])
             for i, row in enumerate(corrupted.itertuples(index=False), start=1)]
    # Each metric's scores by candidate, and its first row's signature, noise floor and direction: read from the
    # columns once (a pandas group-by per metric cost more than the judging).
    by_metric: dict[str, tuple[dict, tuple]] = {}
    for metric, candidate, score, signature, floor, higher in zip(
            scores["metric"], scores["candidate"], scores["score"], scores["signature"], scores["noise_floor"],
            scores["higher_is_better"]):
        by_metric.setdefault(metric, ({}, (signature, floor, higher)))[0][candidate] = score
    rows = []
    for metric, (by_candidate, (signature, floor, higher)) in by_metric.items():
        s_orig = by_candidate.get(0, np.nan)
        pairs = [(label, expected, by_candidate.get(i, np.nan)) for i, label, expected in kinds]
        pairs = [p for p in pairs if not (np.isnan(s_orig) or np.isnan(p[2]))]
        if not pairs:  # a metric that failed has no signature to bind the rules to
            continue
        rules = verdict.rules_for(settings, metric, signature, float(floor))
        judged = verdict.judge([s_orig] * len(pairs), [s_corr for _, _, s_corr in pairs],
                               [expected for _, expected, _ in pairs], bool(higher), rules)
        judged_by = f"{signature}|{rules.signature()}"
        rows += [{"metric": metric, "corruption": label, "s_orig": s_orig, "s_corr": s_corr, "margin": float(margin),
                  "passed": bool(passed), "signature": judged_by}
                 for (label, _, s_corr), margin, passed in zip(pairs, judged.margin, judged.passed)]
    return pd.DataFrame(rows, columns=["metric", "corruption", "s_orig", "s_corr", "margin", "passed", "signature"])


def studies() -> tuple:
    """Every registered study (:class:`muttlab.human.studies.Study`: name, title, whether it computes
    something of its own through :func:`correlate`, the published numbers :func:`reproduce` measures with it)."""
    from muttlab.human.studies import STUDIES
    return STUDIES


def correlate(settings: Settings, study: str, progress: Progress | None = None,
              registry: Registry | None = None, **options):
    """A study of :mod:`muttlab.human.studies` that computes something of its own: ``flickr8k`` (Kendall τ
    with Flickr8K-Expert / CrowdFlower), ``sick`` (MUTT §5 on SICK), ``dbleu`` (ΔBLEU observation units), ….
    ``options`` are the keyword arguments of the study's function (its ``run`` in the registry)."""
    from muttlab.human.studies import get

    settings, study, progress, registry = validation.arguments("correlate", settings=settings, study=study,
                                                               progress=progress, registry=registry)
    run = get(study).runner()
    reg = registry or registry_for(settings)
    try:
        return run(settings, registry=reg, progress=progress, **options)
    finally:
        if registry is None:
            reg.close()


def reproduce(settings: Settings, registry: Registry | None = None, **options) -> "ReproductionReport":
    """Every published number the lab can compute beside ours (:mod:`muttlab.human.reproduce`), measured by
    the registered studies."""
    from muttlab.human.reproduce import reproduce as _reproduce
    settings = validation.arguments("reproduce", settings=settings)
    validation.options("reproduce", _reproduce, options)

    reg = registry or registry_for(settings)
    try:
        return _reproduce(settings, registry=reg, **options)
    finally:
        if registry is None:
            reg.close()


# --------------------------------------------------------------------------- accounts (docs/security.md)

def sign_out_everywhere(settings: Settings, user: str) -> int:
    """End every live session of the account ``user`` (or of that name signed in with the shared annotator
    credential) on the server whose cache dir ``settings`` names: every browser, tab and server process.
    Acts as the local operator, like ``muttlab users signout``. Returns how many sessions ended."""
    from muttlab.access.roles import local_operator
    from muttlab.access.sessions import end_sessions

    settings, user = validation.arguments("sign_out_everywhere", settings=settings, user=user)
    return end_sessions(local_operator(), settings, user)


# --------------------------------------------------------------------------- beyond MUTT (docs/beyond.md)

def read_suite(path_or_bytes, format: str | None = None, name: str | None = None,
               progress: Callable[[int, int], None] | None = None):
    """A suite file (trial JSONL, WMT challenge-set TSV, ACES TSV, DEMETR JSON, contrastive JSONL) or folder
    (MSLC24-B) as a :class:`muttlab.suites.SuiteFile`: trials, sources, target languages and the rows left out by
    line. ``path_or_bytes``: a path, a file's bytes, or a folder's files' bytes keyed ``<pair>/<file name>``
    (:func:`muttlab.suites.read_suite`). ``name``: the suite's name (default: the file's stem, ``upload`` for
    bytes). ``progress(lines read, lines)`` is told how a one-file format's reading goes, every few thousand
    lines (:func:`muttlab.suites.readers.rows_reported_to`)."""
    from muttlab import checks
    from muttlab.suites import read_suite as _read
    if isinstance(path_or_bytes, Mapping):
        if not all(isinstance(k, str) and isinstance(v, (bytes, bytearray)) for k, v in path_or_bytes.items()):
            raise InvalidArgument("read_suite", "path_or_bytes", "must map each file's name (such as "
                                  "'en-de/types.tsv') to its bytes")
        path_or_bytes = {key: bytes(value) for key, value in path_or_bytes.items()}
        format = validation.arguments("read_suite", format=format)
    else:
        path_or_bytes, format = validation.arguments("read_suite", path_or_bytes=path_or_bytes, format=format)
    if name is not None:
        name = checks.name(name, "read_suite", "name")
    if validation.arguments("read_suite", progress=progress) is None:
        return _read(path_or_bytes, format=format, name=name)
    from muttlab.suites.readers import rows_reported_to
    with rows_reported_to(progress):
        return _read(path_or_bytes, format=format, name=name)


def run_challenge(settings: Settings, suite_file, metrics: Sequence[str] | str, progress: Progress | None = None,
                  registry: Registry | None = None):
    """Score a contrastive challenge set; ``.summary()`` per phenomenon (accuracy with ties as failures,
    Kendall-τ-like), ``.aces()`` ACES' weighted summary (:mod:`muttlab.suites.contrastive`)."""
    from muttlab.suites.contrastive import run_challenge as _run
    settings, suite_file, metrics, progress, registry = validation.arguments(
        "run_challenge", settings=settings, suite_file=suite_file, metrics=metrics, progress=progress,
        registry=registry)
    return _run(settings, suite_file, metrics, registry=registry, progress=progress)


def severity(settings: Settings, corruption: str, metrics: Sequence[str] | str, strengths: Sequence[int],
             **options) -> pd.DataFrame:
    """Pass rate and mean score drop against a corruption's strength, per metric
    (:func:`muttlab.severity.severity_curve`)."""
    from muttlab.severity import severity_curve
    settings, corruption, metrics, strengths = validation.arguments(
        "severity", settings=settings, corruption=corruption, metrics=metrics, strengths=strengths)
    validation.options("severity", severity_curve, options)
    return severity_curve(settings, corruption, metrics, strengths, **options)


def prepare_severity(settings: Settings, corruption: str | None = None, strengths: Sequence[int] | None = None) -> int:
    """Parse the sentences :func:`severity` draws its curves on by default (every MUTT original with a data dir,
    the bundled sample's scenes without) and, given a corruption type and strengths, make its corruptions of
    them at each, keeping both for the process: a server's first curve then does not wait for them (1.5 s to
    parse the MUTT originals, 0.2 s per strength). Returns how many sentences were parsed."""
    from muttlab.severity import parse_default_sentences
    settings = validation.arguments("prepare_severity", settings=settings)
    if (corruption is None) != (strengths is None):
        raise InvalidArgument("prepare_severity", "strengths" if corruption else "corruption",
                              "is needed with the other: give a corruption type and its strengths")
    if corruption is None:
        return parse_default_sentences(settings)
    corruption, strengths = validation.arguments("prepare_severity", corruption=corruption, strengths=strengths)
    return parse_default_sentences(settings, corruption, strengths)


# --------------------------------------------------------------------------- meta-evaluation (docs/meta_eval.md)

def meta_evaluate(settings: Settings, data, metrics: Sequence[str] | str = "all",
                  statistics: Sequence[str] | str | None = None, progress: Progress | None = None,
                  registry: Registry | None = None, **options):
    """How metrics agree with human judgments of real system outputs, as WMT's metrics task measures it
    (:func:`muttlab.meta.evaluate.meta_evaluate`): pairwise accuracy with tie calibration (item-grouped and
    ungrouped, with ε), plain pairwise accuracy, Kendall τ_b, Pearson r, system-level accuracy and r, baseline
    rows, significance clusters.

    Args:
      data: a study's language pair (``mqm-ted:en-de``, ``mqm-ted:zh-en``: the data dir's expert MQM
        judgments), a language pair's folder of MQM files, a file of one's own judgments (TSV or JSONL, docs/
        meta_eval.md), its bytes, or :class:`muttlab.meta.judgments.Judgments`.
      metrics: metric names or ``all``; a metric that cannot score the target language is listed in the
        result's ``skipped`` with why.
      statistics: statistic names (:data:`muttlab.meta.result.STATISTICS`), default all.
      options: ``reference``, ``pair`` (an MQM folder that is not a TED pair), ``target_language`` (a file
        without a ``lang`` field), and :func:`muttlab.meta.evaluate.meta_evaluate`'s ``significance``,
        ``n_resamples``, ``seed``, ``alpha``, ``max_exact_pairs``, ``keep_scores``.
    Returns:
      :class:`muttlab.meta.result.MetaEvaluation` (``rows()``, ``table()``, ``to_dict()``).
    """
    from muttlab.meta.evaluate import OPTIONS, READING, load_judgments, meta_evaluate as _evaluate

    settings, metrics, progress, registry = validation.arguments(
        "meta_evaluate", settings=settings, metrics=metrics, progress=progress, registry=registry)
    unknown = [k for k in options if k not in OPTIONS + READING]
    if unknown:
        raise InvalidArgument("meta_evaluate", unknown[0], f"is not an option; the options are "
                                                           f"{', '.join(OPTIONS + READING)}")
    reading = {k: options.pop(k) for k in READING if k in options}
    judgments = load_judgments(settings, data, **reading)
    reg = registry or registry_for(settings)
    try:
        return _evaluate(settings, judgments, metrics, statistics, registry=reg, progress=progress, **options)
    finally:
        if registry is None:
            reg.close()


def load_judgments(settings: Settings, data, **reading):
    """The judged outputs ``data`` names (as :func:`meta_evaluate` reads them) as
    :class:`muttlab.meta.judgments.Judgments`: systems × items of human scores, outputs, references, sources and,
    for MQM, each output's marked error spans. ``reading``: ``reference``, ``pair``, ``target_language``."""
    from muttlab.meta.evaluate import READING, load_judgments as _load

    settings = validation.arguments("load_judgments", settings=settings)
    unknown = [k for k in reading if k not in READING]
    if unknown:
        raise InvalidArgument("load_judgments", unknown[0], f"is not an option; the options are {', '.join(READING)}")
    return _load(settings, data, **reading, where="load_judgments")


def meta_calibrations(result, study: str | None = None) -> dict:
    """The tie calibrations of a meta-evaluation's metrics as the calibrations file's document
    (:mod:`muttlab.meta.calibration`): ``{"version": 1, "calibrations": [...]}``, one record per metric with its
    item-grouped acc*_eq ε, signature, study, pair, target language, data digest and whether it is informative."""
    from muttlab.meta.calibration import calibration_records, calibrations_document
    return calibrations_document(calibration_records(result, study))


# --------------------------------------------------------------------------- rules and shipped snapshots

def check_rules(settings: Settings) -> None:
    """Refuse, before anything is scored, rules that cannot judge: a calibrated tie rule whose study or
    language pair has no calibrations (the known ones are listed; :mod:`muttlab.rules`). Every run checks
    this itself; a front-end calls it to refuse a bad rule when it starts."""
    settings = validation.arguments("check_rules", settings=settings)
    verdict.check_rules(settings)


def snapshot(kind: str) -> "Snapshot | None":
    """The shipped snapshot of ``kind`` (``grid``, ``human``, ``published``, ``severity``, ``meta_eval``, ``profiles``:
    :data:`muttlab.snapshots.KINDS`), read once per version of its file; None in a build without it.

    Its ``content`` is the kind's numbers (``muttlab.snapshots.grid.Grid``…), its ``stamp`` what they were
    computed from; whether they are this server's numbers is :func:`snapshot_differences`.

    Raises:
      UnknownName: not a kind. DataError: the file is malformed (the message says how to regenerate it).
    """
    from muttlab.snapshots import KINDS

    kind = validation.name(kind, "snapshot", "kind")
    if kind not in KINDS:
        raise UnknownName(kind, KINDS)
    return _snapshot(kind, *_modified(KINDS[kind]))


def _modified(kind) -> tuple[int, int]:
    from muttlab.snapshots import path_of

    try:
        info = path_of(kind).stat()
    except OSError:
        return -1, -1
    return info.st_mtime_ns, info.st_size


@lru_cache(maxsize=16)
def _snapshot(kind: str, modified: int, size: int) -> "Snapshot | None":
    from muttlab.snapshots import KINDS, load
    return load(KINDS[kind])


def snapshot_differences(settings: Settings, shipped: "Snapshot", signatures: dict[str, str] | None = None,
                         registry: Registry | None = None) -> list[str]:
    """What differs between a shipped snapshot's stamp and the stamp this server would give the same numbers
    (:meth:`muttlab.snapshots.Stamp.differences`: data files, code, metric signatures, rules), in words;
    empty when the shipped numbers are this server's.

    Args:
      signatures: the current signatures of the metrics to compare (e.g. from :func:`metric_catalogue`);
        None: those of the snapshot's metrics this server can load, from the registry; ``{}``: compare no
        metric (the data, code and rules only, which need no metric loaded).
    """
    from muttlab.snapshots import KINDS, Snapshot, current_stamp

    settings, registry = validation.arguments("snapshot_differences", settings=settings, registry=registry)
    validation.instance(shipped, "snapshot_differences", "shipped", Snapshot, "a muttlab.snapshots.Snapshot")
    validation.instance(signatures, "snapshot_differences", "signatures", dict, "a dict of metric signatures",
                        optional=True)
    if signatures is None:
        reg = registry or registry_for(settings)
        try:
            infos = [reg.info(m) for m in shipped.stamp.signatures if m in reg.names]
        finally:
            if registry is None:
                reg.close()
        signatures = {i.name: i.signature for i in infos if i.available}
    mine = {m: s for m, s in dict(signatures).items() if m in shipped.stamp.signatures}
    return shipped.stamp.differences(current_stamp(KINDS[shipped.kind], settings, mine))


def study_numbers(study) -> "SickNumbers":
    """A SICK study's numbers (:class:`muttlab.human.sick.SickStudy`) as the shipped snapshot holds them (no
    sentence, no per-pair score): one shape for a page, shipped or computed here."""
    from muttlab.snapshots.human import sick_numbers
    return sick_numbers(study)


def study_defaults() -> "StudyDefaults":
    """What the shipped human-judgment studies were computed with: each study page's default selection."""
    from muttlab.snapshots.human import DEFAULTS
    return DEFAULTS


def severity_default() -> "CurveRequest":
    """The Severity page's first curve, shipped precomputed (:data:`muttlab.severity.DEFAULT_CURVE`)."""
    from muttlab.severity import DEFAULT_CURVE
    return DEFAULT_CURVE


# --------------------------------------------------------------------------- tie rules compared, robustness profiles

def compare_rules(settings: Settings, rule: str, metrics: Sequence[str] | str | None = None,
                  suites: Sequence[str] = ("mutt", "demetr", "mslc"), progress: Progress | None = None,
                  registry: Registry | None = None):
    """How each metric's unit-test accuracies move from the settings' tie rule to ``rule`` (``exact``, a
    relative tolerance, above all ``calibrated:<study>:<pair>``: the ε each metric earned on expert judgments),
    per corruption type or phenomenon, with the ties under each (:mod:`muttlab.profile.rule_change`).

    Args:
      rule: a tie rule as ``--tie-rule`` writes it.
      metrics: metric names (default :data:`DEFAULT_METRICS`).
      suites: ``mutt``, ``demetr``, ``mslc`` (MSLC24-B's edge cases) or suite files' paths.
    Returns:
      :class:`muttlab.profile.rule_change.RulesComparison` (``summary``, ``table``, ``refused``, ``rows()``).
    Raises:
      MuttlabError: a malformed rule; a calibrated rule whose study or pair has no calibrations; an unknown
        metric; a suite that cannot be read. A calibration that cannot judge a metric on a suite (not
        informative, another target language) is no error: it is listed in ``refused`` with its reason.
    """
    from muttlab import checks
    from muttlab.profile.outcomes import SUITES
    from muttlab.profile.rule_change import compare_rules as _compare
    from muttlab.rules import parse_tie_rule

    settings, progress, registry = validation.arguments("compare_rules", settings=settings, progress=progress,
                                                        registry=registry)
    tie = parse_tie_rule(checks.name(rule, "compare_rules", "rule"), "rule")
    metrics = list(DEFAULT_METRICS) if metrics is None else metrics
    metrics = validation.arguments("compare_rules", metrics=metrics)
    suites = _suites(suites, "compare_rules", SUITES)
    reg = registry or registry_for(settings)
    try:
        return _compare(settings, tie, reg.resolve(metrics), reg, suites, progress)
    finally:
        if registry is None:
            reg.close()


def _suites(value, where: str, builtin: Sequence[str]) -> list[str]:
    """Suite names (``builtin``) or suite files' paths, at least one."""
    from muttlab import checks

    given = [s.strip() for s in value.split(",")] if isinstance(value, str) else checks.names(value, where, "suites")
    given = list(dict.fromkeys(s for s in given if s))
    if not given:
        raise InvalidArgument(where, "suites", f"names no suite; give {', '.join(builtin)} or a suite file's path")
    return [s if s in builtin else str(checks.path(s, where, "suites")) for s in given]


def _current(kind: str, settings: Settings, signatures: dict[str, str]):
    """The shipped snapshot of ``kind`` and what differs from this server's stamp for these metrics (empty:
    current), or (None, []) in a build without it."""
    shipped = snapshot(kind)
    if shipped is None:
        return None, []
    return shipped, snapshot_differences(settings, shipped, signatures=signatures)


def profile(settings: Settings, metric: str, progress: Progress | None = None, registry: Registry | None = None,
            with_trials: bool = False, suites: Sequence[str] = ("mutt", "demetr", "mslc")):
    """One metric's robustness profile (:mod:`muttlab.profile`): its MUTT grid, DEMETR accuracy per severity and
    perturbation, MSLC24-B edge cases and the MQM meta-evaluation of both TED pairs, side by side with their
    intervals, under the settings' rules.

    What ships and is current on this server is taken as it is (the shipped profile of a default metric; the
    shipped grid's cells, the shipped meta-evaluation); only what is missing is computed, through the score cache,
    with ``progress``. ``with_trials``: every unit-test section with its trials' outcomes (a comparison needs
    them; the shipped grid has none, so MUTT is then judged here). ``suites``: the unit-test suites to include
    (``mutt``, ``demetr``, ``mslc``; all by default).

    Returns:
      :class:`muttlab.profile.result.Profile` (``tables()``, ``to_dict()``; ``Profile.from_dict`` reads it back).
    Raises:
      UnknownMetric, MetricUnavailable; MuttlabError for rules that cannot be used at all.
    """
    from muttlab import checks
    from muttlab.profile.build import build_profile
    from muttlab.profile.outcomes import SUITES

    settings, progress, registry = validation.arguments("profile", settings=settings, progress=progress,
                                                        registry=registry)
    metric = checks.name(metric, "profile", "metric")
    with_trials = checks.instance(with_trials, "profile", "with_trials", bool, "True or False")
    suites = _suites(suites, "profile", SUITES)
    unknown = [s for s in suites if s not in SUITES]
    if unknown:
        raise InvalidArgument("profile", "suites", f"names {unknown[0][:60]!r}; a profile reads "
                                                   f"{', '.join(SUITES)}")
    verdict.check_rules(settings)
    reg = registry or registry_for(settings)
    try:
        signature = reg.get(metric).signature()
        shipped, differences = _current("profiles", settings, {metric: signature})
        if shipped is not None and metric in shipped.content.profiles and not differences \
                and shipped.stamp.signatures.get(metric) == signature and list(suites) == list(SUITES):
            return shipped.content.profiles[metric]
        grid, differences = _current("grid", settings, {metric: signature})
        cells = None
        if grid is not None and not differences and metric in grid.content.metrics:
            cells = grid.content.select([metric])
        meta, differences = _current("meta_eval", settings, {metric: signature})
        results = None if meta is None else dict(meta.content.results)
        if meta is not None and differences and settings.data_dir is not None:
            results = None  # computed again here, where the data are
        built = build_profile(settings, metric, reg, grid=cells, meta=results, with_trials=with_trials,
                              suites=suites, progress=progress)
        if meta is not None and results is not None and differences:
            built.notes.append("MQM: the shipped meta-evaluation, computed under another stamp: "
                               + "; ".join(differences))
        return built
    finally:
        if registry is None:
            reg.close()


def compare_profiles(settings: Settings, first: str, second: str, alpha: float = 0.05,
                     progress: Progress | None = None, registry: Registry | None = None,
                     suites: Sequence[str] = ("mutt", "demetr", "mslc")):
    """Two metrics' profiles compared (:mod:`muttlab.profile.compare`): per MUTT cell, DEMETR perturbation and
    MSLC24-B case both accuracies on the trials both scored, McNemar's test and which one catches what the other
    misses; per TED pair and statistic the meta-evaluation's own significance of their difference.

    Returns:
      :class:`muttlab.profile.result.ProfileComparison`.
    """
    from muttlab import checks
    from muttlab.meta import mqm
    from muttlab.meta.evaluate import meta_evaluate as _evaluate
    from muttlab.profile.compare import compare_profiles as _compare

    settings, progress, registry = validation.arguments("compare_profiles", settings=settings, progress=progress,
                                                        registry=registry)
    first, second = (checks.name(v, "compare_profiles", a) for v, a in ((first, "first"), (second, "second")))
    alpha = checks.real(alpha, "compare_profiles", "alpha", 0.0, 1.0)
    if first == second:
        raise InvalidArgument("compare_profiles", "second", f"is {first!r} again; compare two different metrics")
    reg = registry or registry_for(settings)
    try:
        reg.resolve([first, second])  # an unknown second name is refused before the first profile is computed
        profiles = [profile(settings, m, progress, reg, with_trials=True, suites=suites) for m in (first, second)]
        together = {}
        meta = snapshot("meta_eval")
        for pair in mqm.TED_PAIRS:
            result = None if meta is None else meta.content.results.get(pair)
            if result is not None and first in result.values and second in result.values \
                    and all(result.metrics[m] == p.signature for m, p in zip((first, second), profiles)):
                together[pair] = result
            elif settings.data_dir is not None and all(pair in set(p.mqm["pair"]) for p in profiles):
                together[pair] = _evaluate(settings, mqm.load_ted(settings, pair), [first, second], registry=reg,
                                           progress=progress)
        return _compare(profiles[0], profiles[1], together, alpha)
    finally:
        if registry is None:
            reg.close()


# --------------------------------------------------------------------------- what a meta-evaluation page shows

def shipped_meta_evaluation(pair: str, with_scores: bool = False):
    """The shipped meta-evaluation of a TED pair (``en-de``, ``zh-en``) as
    :class:`muttlab.meta.result.MetaEvaluation`, or None in a build without it; ``with_scores``: holding the
    shipped per-output scores (:data:`muttlab.snapshots.meta_eval.SCORED`). Whether it is this server's numbers:
    :func:`snapshot_differences` of ``snapshot("meta_eval")``."""
    from muttlab import checks

    pair = checks.name(pair, "shipped_meta_evaluation", "pair")
    with_scores = checks.instance(with_scores, "shipped_meta_evaluation", "with_scores", bool, "True or False")
    shipped = snapshot("meta_eval")
    if shipped is None:
        return None
    if pair not in shipped.content.results:
        raise UnknownName(pair, shipped.content.pairs)
    return shipped.content.result(pair, with_scores=with_scores)


def meta_ranking(result) -> pd.DataFrame:
    """The ranking table of a meta-evaluation: one row per metric and baseline, best first by its first
    statistic, each statistic's value, interval, ε and cluster, and a ``baseline`` column; the metrics it could
    not evaluate last, with their ``reason``."""
    from muttlab.meta.result import MetaEvaluation

    validation.instance(result, "meta_ranking", "result", MetaEvaluation, "a MetaEvaluation")
    table = result.table()
    table.insert(1, "baseline", table["metric"].isin(result.baselines))
    table["reason"] = table["metric"].map(lambda m: result.skipped.get(m, ""))
    return table


def meta_pairs(result, metric: str, statistic: str = "acc_eq_item") -> pd.DataFrame:
    """Every item-grouped pair of outputs for a scatter of Δmetric against Δhuman (:mod:`muttlab.meta.pairs`):
    columns item, system_a, system_b, delta_human, delta_metric (oriented: larger is better for the first
    output), tied_human, tied_metric (|Δmetric| ≤ ε, the statistic's ε), right; ``attrs["epsilon"]`` is ε.

    Raises:
      MuttlabError: the result holds no scores of ``metric`` (keep_scores, or the shipped ones of
        :data:`muttlab.snapshots.meta_eval.SCORED`).
    """
    from muttlab import checks
    from muttlab.meta.pairs import item_pair_table
    from muttlab.meta.result import MetaEvaluation

    validation.instance(result, "meta_pairs", "result", MetaEvaluation, "a MetaEvaluation")
    metric = checks.name(metric, "meta_pairs", "metric")
    statistic = checks.name(statistic, "meta_pairs", "statistic")
    return item_pair_table(result, metric, statistic)


def segment_outputs(settings: Settings, data, item: int, **reading) -> pd.DataFrame:
    """One item's judged outputs, as a page shows them when a segment is clicked: columns system, output, human
    (the score), errors (the MQM error spans, each {start, end, category, severity, rater} in the output with
    the ``<v>`` marks removed), and ``attrs`` with the item's id, source, references and the source's spans.

    Args:
      data: what :func:`load_judgments` reads (``mqm-ted:zh-en``…); item: the item's column (0-based).
    """
    from muttlab import checks
    from muttlab.meta.judgments import segment_table

    judgments = load_judgments(settings, data, **reading)
    item = checks.whole(item, "segment_outputs", "item", 0, max(0, len(judgments.items) - 1))
    return segment_table(judgments, item)


def meta_statistics() -> dict[str, str]:
    """The meta-evaluation's statistics, name -> what it measures (:data:`muttlab.meta.result.STATISTICS`), in
    the order tables show them; the tie-calibrated ones (with an ε) are :func:`meta_tie_calibrated`."""
    from muttlab.meta.result import STATISTICS
    return dict(STATISTICS)


def meta_tie_calibrated() -> tuple[str, ...]:
    """The statistics that carry a calibrated ε (``acc_eq_item``, ``acc_eq``)."""
    from muttlab.meta.result import TIE_CALIBRATED
    return tuple(TIE_CALIBRATED)


def parse_judgments(data: bytes, name: str = "upload", target_language: str | None = None):
    """Judgments from the bytes of a file of one's own (an upload) in the generic format (docs/meta_eval.md,
    "Your own judgments"; :func:`muttlab.meta.generic.parse_judgments`), its format told by ``name``'s
    extension or else its first character; every error names ``name``, the line and the field.

    Returns:
      :class:`muttlab.meta.judgments.Judgments`.
    Raises:
      DataError: over the upload limits, malformed, fewer than two systems…
    """
    from pathlib import PurePath

    from muttlab import checks
    from muttlab.meta.generic import parse_judgments as _parse

    data = checks.instance(data, "parse_judgments", "data", bytes, "the file's bytes")
    name = checks.name(name, "parse_judgments", "name")
    return _parse(data, label=PurePath(name).name, suffix=PurePath(name).suffix, target_language=target_language)


# --------------------------------------------------------------------------- learned metrics: ReVal and its models
# (docs/learned.md) Re-exported above: TrainConfig; a checkpoint's model_id(bytes), short_id(id),
# installed_state(model_dir), checkpoint_info(path), find_checkpoint(model, model_dir). Imported when used: the model
# registry's MODEL_SLOTS (slot -> file, metrics), ModelRecord, list_models(settings), install_model(settings, actor,
# id), uninstall_model(settings, actor, slot), model_install_log(settings). Training imports torch when called.

def model_dir(settings: Settings):
    """The folder the learned metrics' models are installed in (None when the settings name none)."""
    return runner.model_dir(settings)


def train_reval(settings: Settings, model: str = "treelstm", train_config: TrainConfig | None = None, *, actor,
                **options):
    """One ReVal model trained on SICK (``muttlab.learned.reval.train_model``, whose options ``progress``,
    ``force``, ``limit``, ``data`` pass through): a ``Trained`` (its path; whether a cached one was reused)."""
    from muttlab.learned import reval
    return reval.train_model(settings, model=model, train_config=train_config, actor=actor, **options)


def train_reval_seeds(settings: Settings, model: str, seeds: list[int], train_config: TrainConfig | None = None, *,
                      actor, **options):
    """One ReVal model per seed, the best by dev Pearson r or (``ensemble=True``) one checkpoint averaging them
    all (``muttlab.learned.reval.train_best_of_seeds``): ``(Trained, every run's Trained)``."""
    from muttlab.learned import reval
    return reval.train_best_of_seeds(settings, model, seeds, train_config, actor=actor, **options)


def evaluate_reval(settings: Settings, model: str = "treelstm", split: str = "test", **options):
    """Pearson r, Spearman rho and MSE of the ReVal model in use on a SICK split, with bootstrap CIs
    (``muttlab.learned.reval.evaluate_model``, Tai et al. 2015 §5.2): an ``Evaluation``."""
    from muttlab.learned import reval
    return reval.evaluate_model(settings, model=model, split=split, **options)


# --------------------------------------------------------------------------- a registered study's choices
# A page runs a study with correlate(settings, name, ...), as the registry (muttlab.human.studies) lists it;
# what it offers in its widgets comes from here.

def study_choices(study: str):
    """The choices a registered study's options take, named as its module names them: ``flickr8k``: DATASETS;
    ``sick``: SICK_CORRUPTIONS, STUDY_METRICS, REFERENCE_SOURCES, READINGS (the first is the default);
    ``dbleu``: UNIT_SIZES, ORDERS, THRESHOLDS, DEFAULT_UNIT, DEFAULT_ASSIGNMENTS, DEFAULT_SWEEP_ASSIGNMENTS,
    RESULT_COLUMNS. A ``types.SimpleNamespace``.

    Raises:
      UnknownName: a study that is not registered or offers no choices.
    """
    from types import SimpleNamespace

    if study == "flickr8k":
        from muttlab.human import flickr
        return SimpleNamespace(DATASETS=flickr.DATASETS)
    if study == "sick":
        from muttlab.human import sick
        return SimpleNamespace(SICK_CORRUPTIONS=sick.SICK_CORRUPTIONS, STUDY_METRICS=sick.STUDY_METRICS,
                               REFERENCE_SOURCES=sick.REFERENCE_SOURCES, READINGS=sick.READINGS)
    if study == "dbleu":
        from muttlab.human import dbleu
        return SimpleNamespace(UNIT_SIZES=dbleu.UNIT_SIZES, ORDERS=dbleu.ORDERS, THRESHOLDS=dbleu.THRESHOLDS,
                               DEFAULT_UNIT=dbleu.DEFAULT_UNIT, DEFAULT_ASSIGNMENTS=dbleu.DEFAULT_ASSIGNMENTS,
                               DEFAULT_SWEEP_ASSIGNMENTS=dbleu.DEFAULT_SWEEP_ASSIGNMENTS,
                               RESULT_COLUMNS=dbleu.RESULT_COLUMNS)
    raise UnknownName(f"no choices for study {study!r}; the studies with choices are dbleu, flickr8k, sick")


# --------------------------------------------------------------------------- names imported when first used
# Types, constants and functions of modules that bring a heavy package with them (SQLAlchemy, pandas, torch) or
# that only one command or page needs: a front-end reads them as ``api.NAME`` (or ``from muttlab.api import
# NAME``), and the module is imported then, so that importing the API stays as cheap as `muttlab run` needs it.
# Module -> the names it gives, each as the API calls it, ``API_NAME=attribute`` where the module calls it otherwise.
_NAMES_OF_MODULES = {
    # the learned metrics' models (docs/learned.md)
    "muttlab.learned.models": ("MODEL_SLOTS=SLOTS", "ModelRecord", "list_models", "install_model=install",
                               "uninstall_model=uninstall", "model_install_log=install_log"),
    # ReVal beyond one training run (muttlab reval)
    "muttlab.learned.reval": ("load_reval_pairs=load_pair_files", "publish_reval=publish",
                              "compare_reval=compare_evaluations"),
    # multi-level metrics: ML-METEOR, DREEM, ML-DREEM (muttlab multilevel)
    "muttlab.learned.multilevel": ("MULTILEVEL_COMPONENTS=COMPONENTS", "MULTILEVEL_DATASETS=DATASETS",
                                   "MULTILEVEL_METRICS=METRICS", "evaluate_multilevel=evaluate",
                                   "multilevel_frame=rows_frame", "tune_multilevel=tune"),
    # word vectors for W2V-AVG (muttlab vectors)
    "muttlab.learned.vectors": ("DEFAULT_DIM", "DEFAULT_EPOCHS", "DEFAULT_MIN_COUNT", "DEFAULT_WINDOW",
                                "train_corpus_vectors"),
    # accounts and sessions (docs/security.md)
    "muttlab.access.sessions": ("Authenticator", "RateLimiter", "Session", "SignInRefused"),
    "muttlab.access.users": ("UserStore",),
    # suite files, written and read back, and a user's own sentences (docs/beyond.md)
    "muttlab.suites.model": ("CONTRASTIVE_FORMATS", "DEMETR_JSON", "FOLDER_FORMATS", "MSLC24_B", "RowProblem"),
    "muttlab.suites.mslc": ("MSLC_FILES=FILES", "mslc_folder_files=folder_files"),
    "muttlab.suites.user": ("parse_user_sentences", "read_user_sentences", "sentences_format", "user_suite"),
    "muttlab.suites.contrastive": ("is_aces",),
    "muttlab.suites.export": ("write_trials_table", "write_suite", "frame_jsonl", "suite_frame"),
    # the pair store (docs/annotate.md), the guard of its every write, building pairs into it (muttlab corrupt)
    "muttlab.pairs.store": ("PairRecord", "ConflictError", "PairNotFound", "STATUSES"),
    "muttlab.pairs.guard": ("guarded",),
    "muttlab.engine.suites": ("SUITE_SOURCES=SOURCES", "STUDY_LIST_COUNTS", "STUDY_MIN_REFS", "build_suite",
                              "count_types", "store_suite", "write_sample_trials", "write_trials"),
    # the fair work queue of a server: shared_queue(), gather_queued(jobs, still_wanted), queue_checkpoint(), and
    # Joinable(kind, item, run_all), a job the queue may run together with others of its kind
    "muttlab.engine.queue": ("Joinable", "shared_queue", "gather_queued=gather", "queue_checkpoint=checkpoint"),
    # a server's long computation over data in a forked child at a lower priority: computed_apart(fn, progress, ...)
    "muttlab.engine.forked": ("computed_apart",),
    # a metric's conformance checks (muttlab check-metric)
    "muttlab.conformance": ("check_metric", "conformance_frame=checks_frame", "conformance_passed=all_passed",
                            "conformance_unavailable=unavailable"),
    # ΔBLEU of a file (muttlab dbleu), of your own judged file (muttlab correlate dbleu --input)
    "muttlab.human.dbleu_io": ("read_weighted_segments",),
    "muttlab.metrics.delta_bleu": ("MAX_N", "SMOOTH_DEFAULTS", "SMOOTHING", "corpus_bleu", "segment_stats",
                                   "sentence_bleu", "smoothing_setting"),
    "muttlab.human.dbleu": ("dbleu_user_set=user_set",),
    # published numbers beside ours (muttlab reproduce)
    "muttlab.human.reproduce": ("REPRODUCE_TOLERANCES=TOLERANCES",),
    # ranking judgments -> similarity training pairs (muttlab ranking)
    "muttlab.human.ranking": ("RANKING_COLUMNS=COLUMNS", "RANKING_MIN_JUDGMENTS=DEFAULT_MIN_JUDGMENTS",
                              "RANKING_TAU=DEFAULT_TAU", "rankings_to_pairs=convert", "is_wmt_rankings=is_wmt_format",
                              "read_rankings", "read_wmt_rankings", "write_ranking_pairs=write_pairs"),
}
# API name -> "module:attribute".
_IMPORTED_WHEN_USED = {entry.partition("=")[0]: f"{module}:{entry.partition('=')[2] or entry}"
                       for module, entries in _NAMES_OF_MODULES.items() for entry in entries}


def __getattr__(name: str):
    if name in _IMPORTED_WHEN_USED:
        import importlib
        module, _, attribute = _IMPORTED_WHEN_USED[name].partition(":")
        return getattr(importlib.import_module(module), attribute)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# --------------------------------------------------------------------------- the pair store and the generators

def open_store(settings: Settings):
    """The pair store of these settings (``settings.store_url``; read-only when ``settings.read_only``): a
    :class:`muttlab.pairs.store.PairStore`."""
    from muttlab.pairs.store import open_store as _open_store
    return _open_store(settings)


def validate_pair_fields(values: dict) -> dict:
    """Checked, normalised copies of a pair's fields, as the store would keep them.

    Raises:
      MuttlabError: the first bad field, and why.
    """
    from muttlab.pairs.store import validate_fields
    return validate_fields(values)


def generator_types() -> list[str]:
    """The corruption types with a generator (they apply to any parsed sentence), in the catalogue's order."""
    from muttlab.corruptions.generate import GENERATORS
    return list(GENERATORS)


def corruption_label(name: str) -> str:
    """A corruption type's label in the catalogue (``neg_subj`` -> "Negated Subject"); an unknown name as it is."""
    try:
        return catalog.get(name).label
    except KeyError:
        return name


# --------------------------------------------------------------------------- the dashboard's grid runs
# Imported when used (_IMPORTED_WHEN_USED): shared_queue() (the server's fair queue), gather_queued(jobs,
# still_wanted), queue_checkpoint() (where a job stops once nobody waits).

def version() -> str:
    """This installation's version (``0+unknown`` in a source tree never installed)."""
    from muttlab import __version__
    return __version__


def queued_scorer(settings: Settings, registry: Registry, session: str, still_wanted: Callable[[], None]):
    """The executor of the grid plan through the server's fair queue for one session, a cell at a time
    (:class:`muttlab.engine.queue.QueuedScorer`); with a scheduler in ``settings``, each piece is scored on the
    Dask cluster (imported only then)."""
    from muttlab.engine.queue import QueuedScorer, shared_queue

    where = None
    if settings.scheduler:
        from muttlab.engine import distributed
        where = distributed.scorer_for(settings, registry, ())
    return QueuedScorer(runner.cache_for(settings), registry, shared_queue(), session, where, still_wanted)


def run_suite(suite: Suite, metrics: Sequence[str], ref_counts: Sequence[int], settings: Settings,
              registry: Registry, progress: Progress | None = None, scorer=None) -> Results:
    """The runner's grid plan (:func:`muttlab.engine.runner.run`) over an already chosen ``suite``, scored by
    ``scorer`` (e.g. :func:`queued_scorer`; None scores in this process): the :class:`Results`."""
    return runner.run(suite, metrics, ref_counts, settings, registry, progress=progress, scorer=scorer)


def fully_cached(settings: Settings, suite: Suite, metric: str, ref_counts: Sequence[int],
                 registry: Registry | None = None) -> bool:
    """Whether the score cache already holds every score a run of ``suite`` (e.g. one cell:
    :func:`select_corruptions`) with ``metric`` at ``ref_counts`` needs, so that the run scores nothing
    (:func:`muttlab.engine.runner.fully_cached`); nothing is scored. A page opens such a cell at once, even for a
    slow metric."""
    validation.instance(suite, "fully_cached", "suite", Suite, "a Suite")
    return runner.fully_cached(suite, metric, ref_counts, settings, registry)


def sick_overlap_warning(metric, trials) -> str | None:
    """Why ``metric``'s scores of these trials measure memory (it was trained on the SICK pairs they come
    from), or None (:func:`muttlab.engine.runner.sick_overlap_warning`)."""
    return runner.sick_overlap_warning(metric, trials)


def corruption_type(name: str):
    """The catalogue's corruption type ``name`` (:class:`muttlab.corruptions.base.CorruptionType`: label,
    family, rule, guideline). Raises KeyError for a name the catalogue does not have."""
    return catalog.get(name)


def corruption_types() -> list:
    """Every corruption type of the catalogue, in its order."""
    return list(catalog.all_types())


# --------------------------------------------------------------------------- slices of a drill-down cell

def slice_properties(cell: "pd.DataFrame", trials=None) -> "pd.DataFrame":
    """Each trial's sentence length, word overlap with its references, corruption size (and severity and
    phenomenon where ``trials``, id -> Trial, give more than one) for a drill-down cell's frame
    (:func:`muttlab.engine.slices.trial_properties`)."""
    from muttlab.engine import slices

    return slices.trial_properties(cell, trials)


def parse_slice(text: str):
    """The :class:`muttlab.engine.slices.Slice` a link's ``slice=`` value names (``length:5..8,edit:1..2``;
    properties in ``SLICE_NUMBERS`` and ``SLICE_LABELS``); raises InvalidArgument."""
    from muttlab.engine import slices

    if not isinstance(text, str):
        raise InvalidArgument("parse_slice", "text", f"is {type(text).__name__}; give the slice as text")
    return slices.parse_slice(text)


def worst_slices(properties: "pd.DataFrame", min_n: int = 20, limit: int = 10) -> "pd.DataFrame":
    """The slices of :func:`slice_properties` with at least ``min_n`` judged trials where the metric's accuracy
    is lowest, with n and a 95% Wilson interval (:func:`muttlab.engine.slices.worst_slices`)."""
    from muttlab.engine import slices

    return slices.worst_slices(properties, min_n=min_n, limit=limit)
