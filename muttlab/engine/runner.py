"""The scoring runner: trials x metrics x reference counts -> a tidy results table.

Scores come from the on-disk cache when they can (:mod:`muttlab.engine.cache`); what is missing is scored in
batches, split over worker processes when there is enough of it, and written back to the cache.
"""
from __future__ import annotations

import multiprocessing
import os
import threading
import time
from collections import OrderedDict
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from muttlab.corruptions import catalog
from muttlab.engine.accuracy import ACCURACY_COLUMNS, accuracy_cells
from muttlab.engine import forked, verdict
from muttlab.engine.progress import RunProgress, items_report, metric_call, pieces
from muttlab.allocation import collections_paused
from muttlab.engine.cache import ScoreCache, context_key, item_keys, refs_digest
from muttlab.errors import MuttlabError
from muttlab.rules import DEFAULT_RULES, Rules
from muttlab.settings import Settings
from muttlab.trials import Suite, count_in_splits
from muttlab.metrics.base import Metric, MetricError, MetricUnavailable, contained, signature_of
from muttlab.metrics.registry import Registry, shares_scores

if TYPE_CHECKING:  # `muttlab run --format csv/json` never needs a frame: pandas is imported when one is asked for
    import pandas as pd

ProgressFn = Callable[[int, int, str], None]
Batch = tuple[list[str], list[list[str]]]  # candidates, one reference list per candidate

# Below this many uncached items a worker pool costs more (process start-up, imports) than it saves.
PARALLEL_MIN_ITEMS = 4000

RESULT_COLUMNS = ["trial", "corruption", "metric", "refs", "s_orig", "s_corr", "margin", "passed", "tied"]


class NotComputedHere(MuttlabError):
    """A run under :func:`cached_scores_only` needed a score the score cache does not hold."""


# What to tell the caller when a run inside ``cached_scores_only`` would score; None: runs score what they need.
_CACHED_ONLY: ContextVar[str | None] = ContextVar("muttlab_cached_scores_only", default=None)


@contextmanager
def cached_scores_only(instead: str):
    """Within the block (this thread), every run takes its scores from the score cache and scores nothing: one
    that needs a score the cache does not hold raises :class:`NotComputedHere` before any metric scores, its
    message ending with ``instead`` (what to do to get the scores). A dashboard's report download is built so:
    it shows what the server has computed and never starts a computation outside the page's door."""
    token = _CACHED_ONLY.set(instead)
    try:
        yield
    finally:
        _CACHED_ONLY.reset(token)


class Results:
    """What a run produced. ``table`` is tidy: one row per trial x metric x reference count.

    The runner hands over the table's columns (:data:`RESULT_COLUMNS`); the frame is made on first use of
    ``table``, so that a caller that wants only the accuracy cells (``muttlab run --format csv``) never
    imports pandas. ``rules`` are the run's :class:`~muttlab.rules.Rules`, ``metric_rules`` each metric's,
    bound to it (noise floor, calibration): what its trials were judged by.
    """

    def __init__(self, columns: dict[str, list | np.ndarray], signatures: dict[str, str] | None = None,
                 suite: str = "", is_sample: bool = False, rules: Rules = DEFAULT_RULES,
                 metric_rules: dict[str, Rules] | None = None, warnings: list[str] | None = None):
        self._table: pd.DataFrame | None = None
        self._columns = columns
        self.signatures = signatures if signatures is not None else {}
        self.suite = suite
        self.is_sample = is_sample
        self.rules = rules
        self.metric_rules = metric_rules if metric_rules is not None else {}
        self.warnings = warnings if warnings is not None else []

    @property
    def table(self) -> pd.DataFrame:
        if self._table is None:
            import pandas as pd
            self._table = pd.DataFrame(self._columns, columns=RESULT_COLUMNS)
        return self._table

    def signature(self, metric: str) -> str:
        """A metric's results signature: its own signature, then the rules it was judged by (its noise floor
        where that decided ties, its calibration under a calibrated tie rule: :meth:`muttlab.rules.Rules.signature`).
        """
        return f"{self.signatures[metric]}|{self.metric_rules.get(metric, self.rules).signature()}"

    def accuracy_cells(self, intervals: bool = True) -> dict[str, list | np.ndarray]:
        """:meth:`accuracy` as columns (:func:`~muttlab.engine.accuracy.accuracy_cells`, plus ``signature``)."""
        columns = self._columns
        cells = accuracy_cells(columns["metric"], columns["corruption"], columns["refs"], columns["passed"],
                               columns.get("tied"), columns.get("margin"), intervals=intervals)
        by_metric = {m: self.signature(m) for m in dict.fromkeys(cells["metric"])}
        cells["signature"] = [by_metric[m] for m in cells["metric"]]
        return cells

    def accuracy(self, intervals: bool = True) -> pd.DataFrame:
        """Accuracy and tie rate per metric x corruption x refs with counts and 95% CIs (none with
        ``intervals=False``: :func:`~muttlab.engine.accuracy.accuracy_cells`); each cell's signature is its
        metric's signature followed by the rules' settings."""
        import pandas as pd
        cells = self.accuracy_cells(intervals)
        return pd.DataFrame(cells, columns=[c for c in (*ACCURACY_COLUMNS, "signature") if c in cells])


# A job scored in pieces (muttlab.engine.progress.in_pieces) starts with this many items, then sizes each
# piece by the pace of the one before.
FIRST_PIECE_ITEMS = 16
# Scores a big job of the dashboard's queue writes to the cache at once (see :meth:`_Scorer._store`).
STORE_PIECE_ROWS = 1000

# The caches this process has opened, by configuration (see cache_for).
_OPENED: OrderedDict[tuple, tuple[ScoreCache, tuple | None]] = OrderedDict()
_OPENED_LOCK = threading.Lock()
_OPENED_KEPT = 8
os.register_at_fork(after_in_child=_OPENED.clear)  # a forked copy must not use its parent's SQLite connections


def cache_for(settings: Settings) -> ScoreCache:
    """The score cache of these settings; a read-only server's new scores go to its own capped cache.

    The same configuration gets the same cache object in this process while its file is the same file (or
    still absent) and the object still uses it (not fallen back to memory). Opening one takes a dozen SQLite
    statements and a connection per thread, each giving up the interpreter's lock; in a busy server every
    scoring request (a Playground answer scores four metrics) opened two and waited for the lock again after
    each statement (docs/deploy.md, "Waiting for the interpreter's lock")."""
    path = settings.cache_dir / "scores.sqlite" if settings.use_cache else None
    key = (path, settings.read_only, settings.demo_cache_dir, settings.limits.demo_cache_mb)
    with _OPENED_LOCK:
        kept = _OPENED.get(key)
    identity = _file_identity(path)
    # A file that could not be used (locked, damaged) is tried again; one that is not there yet, once it is.
    if kept is not None and kept[1] == identity and (kept[0].mode in ("disk", "read-only") or identity is None):
        return kept[0]
    cache = _open_cache(settings, path)
    with _OPENED_LOCK:
        _OPENED[key] = (cache, _file_identity(path))
        _OPENED.move_to_end(key)
        while len(_OPENED) > _OPENED_KEPT:
            _OPENED.popitem(last=False)
    return cache


def _file_identity(path: Path | None) -> tuple | None:
    """The file at ``path`` (device and inode), or None when there is none: a file replaced or removed since
    its cache object was opened is opened again."""
    try:
        found = os.stat(path) if path is not None else None
    except OSError:
        return None
    return None if found is None else (found.st_dev, found.st_ino)


def _open_cache(settings: Settings, path: Path | None) -> ScoreCache:
    from muttlab.engine.private_cache import PrivateCache

    own = (PrivateCache(settings.demo_cache_dir, settings.limits.demo_cache_mb * 2 ** 20)
           if settings.read_only and settings.use_cache else None)
    return ScoreCache(path, read_only=settings.read_only, overflow=own)


def model_dir(settings: Settings) -> Path | None:
    """Where trained checkpoints and tuned parameters of learned metrics are kept; None on a read-only
    server, whose metrics use the shipped models only."""
    return settings.model_dir


def writable_model_dir(settings: Settings) -> Path:
    """The model folder, for writing a trained model or tuned parameters; a MuttlabError on a read-only server."""
    folder = settings.model_dir
    if folder is None:
        raise MuttlabError("this server is read-only (MUTTLAB_READ_ONLY): it has no model folder, so nothing "
                           "can be trained or tuned here")
    return folder


def protected_paths(settings: Settings) -> list[Path]:
    """What the worker process of outside metrics must never be able to write: the cache dir (scores,
    sessions, the pair store's SQLite file), the model folder, the users file, the data dir and a SQLite pair
    store elsewhere (:mod:`muttlab.metrics.outside` adds the package and its Python)."""
    paths = [settings.cache_dir, settings.model_dir, settings.users_file, settings.data_dir]
    if settings.store_url.startswith("sqlite:///"):
        paths.append(Path(settings.store_url[len("sqlite:///"):]))
    return [Path(p) for p in paths if p is not None]


def registry_for(settings: Settings) -> Registry:
    """The metric registry for these settings: outside metrics registered (scored by a worker process that
    cannot write what :func:`protected_paths` names), learned metrics' model folder set."""
    return Registry(extra_paths=settings.metric_paths, model_dir=model_dir(settings), isolate=True,
                    protect=protected_paths(settings))


# --------------------------------------------------------------------------- scoring with the cache

_WORKER_REGISTRY: Registry | None = None


def _init_worker(metric_paths: tuple[str, ...], models: Path | None, entry_points: bool) -> None:
    global _WORKER_REGISTRY
    _WORKER_REGISTRY = Registry(extra_paths=metric_paths, model_dir=models, use_entry_points=entry_points)


def _score_in_worker(name: str, candidates: list[str], references: list[list[str]]) -> tuple[str, np.ndarray]:
    metric = _WORKER_REGISTRY.get(name)
    return signature_of(metric), metric.score(candidates, references)


@dataclass
class _Plan:
    """What scoring one metric's batches takes: each batch's cache keys, the scores found in the cache, and
    the jobs (batches of what is missing) with the keys of their items in order."""

    keys: list[list[bytes]]
    cached: dict[bytes, float]
    jobs: list[Batch]
    job_keys: list[list[bytes]]


def _size(batches: Sequence[Batch]) -> tuple[int, int]:
    """(candidates, candidate-reference pairs) of ``batches``: items for the count a run shows, pairs for its pace
    (a candidate's cost grows with its references: a 20-reference cell is four 5-reference ones)."""
    return sum(len(c) for c, _ in batches), sum(len(r) for _, refs in batches for r in refs)


def _score_jobs(metric: Metric, jobs: list[Batch]) -> list[np.ndarray]:
    """A forkable metric's scores of each job, in this process (no worker pool: it scores in-process)."""
    return [metric.score(c, r) for c, r in jobs]


class _Scorer:
    """Scores batches for one run, sharing a cache and (lazily) one worker pool."""

    def __init__(self, cache: ScoreCache, workers: int, registry: Registry):
        self.cache = cache
        self.workers = workers
        self.registry = registry
        self._pool: ProcessPoolExecutor | None = None
        self.progress: RunProgress | None = None  # told per piece scored, when a run reports progress
        self._refs_keys: dict[tuple[str, ...], str] = {}
        self._batch_refs_keys: dict[int, tuple[list[list[str]], list[str]]] = {}

    def _refs_key(self, refs: Sequence[str]) -> str:
        key = tuple(refs)
        if key not in self._refs_keys:
            self._refs_keys[key] = refs_digest(key)
        return self._refs_keys[key]

    def _refs_keys_of(self, references: list[list[str]]) -> list[str]:
        """The digests of a batch's reference lists; every metric of a run asks for the same batches' (the
        batch's list is kept with them, so its id cannot be reused for another list during the run)."""
        found = self._batch_refs_keys.get(id(references))
        if found is None or found[0] is not references:
            found = self._batch_refs_keys[id(references)] = (references, [self._refs_key(r) for r in references])
        return found[1]

    def _parallel(self, metric: Metric, jobs: list[Batch],
                  on_partial: Callable[[float], None] | None = None) -> list[np.ndarray]:
        """Score each job, in worker processes when it pays off and the metric can be rebuilt by name. A job
        scored in this process tells ``on_partial`` (default: this run's progress) the fraction of it done as
        its metric reports it (:meth:`score_piece`)."""
        total = sum(len(c) for c, _ in jobs)
        if self.workers <= 1 or total < PARALLEL_MIN_ITEMS or not self._rebuildable(metric):
            out = []
            for c, r in jobs:
                # The job's size once: a metric reports after each of its parts, and a big job has thousands.
                size = _size([(c, r)])
                out.append(self._score_in_pieces(metric, c, r,
                                                 on_partial or (lambda f, size=size: self._partial([(size, f)]))))
                self._scored([(c, r)])
            return out
        if self._pool is None:
            self._pool = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"),
                                             initializer=_init_worker,
                                             initargs=self._worker_registry())
        futures = [self._pool.submit(_score_in_worker, metric.name, c, r) for c, r in jobs]
        done = []
        for future, job in zip(futures, jobs):
            done.append(future.result())
            self._scored([job])
        if any(signature != signature_of(metric) for signature, _ in done):
            # A worker built another model (one was installed meanwhile): its scores would be cached under
            # this metric's key, so they are dropped and the jobs scored here instead.
            return [metric.score(c, r) for c, r in jobs]
        return [scores for _, scores in done]

    def _rebuildable(self, metric: Metric) -> bool:
        """Whether a worker rebuilding ``metric`` by name gets the same metric (same signature)."""
        if not metric.parallel or metric.name not in self.registry.names:
            return False
        try:
            return signature_of(self.registry.get(metric.name)) == signature_of(metric)
        except MetricUnavailable:
            return False

    def scores_here(self, metric: Metric) -> bool:
        """Whether ``metric`` is scored in this process (a cluster's scorer sends some away): only then is it
        prepared here before its first piece."""
        return True

    def _planned(self, metric: Metric, batches: Sequence[Batch], plan: _Plan) -> None:
        if self.progress is not None:
            items, work = _size(batches)
            todo_items, todo_work = _size(plan.jobs)
            self.progress.planned(metric.name, items - todo_items, work, work - todo_work)

    def _scored(self, jobs: Sequence[Batch]) -> None:
        """``jobs`` have been scored."""
        if self.progress is not None:
            self.progress.scored(*_size(jobs))

    def _partial(self, parts: Sequence[tuple[tuple[int, int], float]]) -> None:
        """The pieces being scored, each as its :func:`_size` with the fraction of it done."""
        if self.progress is not None:
            self.progress.partial(sum(int(n * f) for (n, _), f in parts), sum(w * f for (_, w), f in parts))

    def _score_in_pieces(self, metric: Metric, candidates: list[str], references: list[list[str]],
                         on_partial: Callable[[float], None]) -> np.ndarray:
        """:meth:`score_piece` of one job, cut as the enclosing :func:`muttlab.engine.progress.in_pieces` asks
        when the metric scores each item on its own (a corpus-dependent metric's scores depend on the whole
        job, so it is scored whole); ``on_partial`` is told the fraction of the whole job done."""
        plan = pieces()
        if plan is None or metric.corpus_dependent or len(candidates) <= FIRST_PIECE_ITEMS:
            return self.score_piece(metric, candidates, references, on_partial)
        seconds, between = plan
        parts, n, start, size = [], len(candidates), 0, FIRST_PIECE_ITEMS
        while start < n:
            if start:
                between()
            end = min(n, start + size)
            began = time.perf_counter()
            parts.append(self.score_piece(metric, candidates[start:end], references[start:end],
                                          lambda f, start=start, end=end: on_partial((start + f * (end - start)) / n)))
            # The next piece takes about ``seconds`` at this one's pace (METEOR: tens of items; BLEU: the rest).
            size = max(1, int((end - start) * seconds / max(time.perf_counter() - began, 1e-3)))
            start = end
        return np.concatenate(parts)

    @staticmethod
    def score_piece(metric: Metric, candidates: list[str], references: list[list[str]],
                    on_partial: Callable[[float], None] | None = None) -> np.ndarray:
        """``metric``'s scores of one piece, in this thread. A metric that reports within a call
        (:attr:`~muttlab.metrics.base.Metric.reports_progress`) tells ``on_partial`` the fraction of the piece
        done, as its parts (encoding passes, JVM batches) finish."""
        if on_partial is None or not getattr(metric, "reports_progress", False):
            return metric.score(candidates, references)
        with metric_call():
            return metric.score(candidates, references,
                                progress=lambda done, total: on_partial(done / total if total else 1.0))

    def score(self, metric: Metric, batches: Sequence[Batch]) -> list[np.ndarray]:
        """One score array per batch, from the cache where possible. Before a metric scores anything in a run
        that reports progress, it is prepared (its model read, its JVM started) under a *loading* report: only
        when something is to be scored, so a warm run starts no JVM."""
        plan = self._plan(metric, batches)
        instead = _CACHED_ONLY.get()
        if plan.jobs and instead is not None:
            missing = _size(plan.jobs)[0]
            raise NotComputedHere(f"{missing:,} score{'s' if missing != 1 else ''} of {metric.name} that this view "
                                  f"needs {'are' if missing != 1 else 'is'} not computed on this server; {instead}")
        if plan.jobs and self.progress is not None and self.scores_here(metric) \
                and getattr(type(metric), "prepare", Metric.prepare) is not Metric.prepare:
            self.progress.loading_named(metric.name)
            contained(metric, "starting", metric.prepare)
        self._planned(metric, batches, plan)
        return self._store(plan, self._parallel(metric, plan.jobs), self.shares(metric))

    def score_each(self, metrics: Sequence[Metric], batches: Sequence[Batch], fork: bool = False):
        """:meth:`score` of each metric, in order (a generator: each metric is scored when its turn comes).

        With ``fork``, the last quarter of the metrics (at least one; when all are :attr:`~Metric.forkable`)
        is scored in a forked copy of this process while this one scores the others. A quarter, because this
        process also writes every score to the cache, and the copy tokenises and counts the sentences again
        (measured on the grid: CIDEr-D alone in the copy beside BLEU-1..4 and ROUGE-L here is the best split).
        Cache lookups stay here, before the fork; the copy only scores, and hands each metric's scores over as
        soon as it has them.
        """
        n_child = max(1, len(metrics) // 4) if fork and forked.AVAILABLE and len(metrics) > 1 else 0
        while n_child and not all(m.forkable for m in metrics[len(metrics) - n_child:]):
            n_child -= 1
        here, in_child = metrics[:len(metrics) - n_child], metrics[len(metrics) - n_child:]
        plans = [self._plan(m, batches) for m in in_child]
        calls = [partial(_score_jobs, m, plan.jobs) for m, plan in zip(in_child, plans)]
        # Below PARALLEL_MIN_ITEMS a fork does not pay off: those metrics are scored here, last.
        child = forked.ForkedCalls(calls) if sum(len(c) for p in plans for c, _ in p.jobs) >= PARALLEL_MIN_ITEMS \
            else None
        try:
            for metric in here:
                yield self.score(metric, batches)
            results = child.results() if child else (call() for call in calls)
            for metric, plan in zip(in_child, plans):
                self._planned(metric, batches, plan)
                job_scores = next(results)
                self._scored(plan.jobs)
                yield self._store(plan, job_scores, self.shares(metric))
        finally:
            if child is not None:
                child.close()

    def _plan(self, metric: Metric, batches: Sequence[Batch]) -> _Plan:
        """The cache keys of every item, the scores the cache has, and the jobs that score the rest."""
        signature = signature_of(metric)
        contexts = [context_key(refs) if metric.corpus_dependent else "" for _, refs in batches]
        keys = [item_keys(signature, ctx, cands, self._refs_keys_of(refs))
                for (cands, refs), ctx in zip(batches, contexts)]
        cached = self.cache.get_many([k for ks in keys for k in ks])
        if metric.corpus_dependent:
            # A sentence's score depends on the whole batch: rescore any batch with a miss, whole.
            todo = [i for i, ks in enumerate(keys) if any(k not in cached for k in ks)]
            return _Plan(keys, cached, [batches[i] for i in todo], [keys[i] for i in todo])
        missing: dict[bytes, tuple[str, list[str]]] = {}
        for (cands, refs), ks in zip(batches, keys):
            for k, c, r in zip(ks, cands, refs):
                if k not in cached and k not in missing:
                    missing[k] = (c, r)
        if not missing:
            return _Plan(keys, cached, [], [])
        items, item_keys_ = list(missing.values()), list(missing)
        # Split only for worker processes: a metric scored here is fastest over the whole batch at once.
        n_jobs = max(1, self.workers) if metric.parallel and len(items) >= PARALLEL_MIN_ITEMS else 1
        size = -(-len(items) // n_jobs)
        starts = range(0, len(items), size)
        return _Plan(keys, cached, [([c for c, _ in items[s:s + size]], [r for _, r in items[s:s + size]])
                                    for s in starts], [item_keys_[s:s + size] for s in starts])

    def shares(self, metric: Metric) -> bool:
        """Whether ``metric``'s new scores go into the shared cache, or only into this run's memory
        (:func:`muttlab.metrics.registry.shares_scores`: a process that loaded outside code stores no built-in
        metric's scores)."""
        return shares_scores(metric)

    def _worker_registry(self) -> tuple:
        """How a worker of the pool builds its registry: an isolated registry's outside metrics are scored by
        its own worker process only, so the pool's registry holds the built-in metrics alone."""
        if self.registry.isolated:
            return (), self.registry.model_dir, False
        return self.registry.extra_paths, self.registry.model_dir, True

    def _store(self, plan: _Plan, job_scores: list[np.ndarray], shared: bool = True) -> list[np.ndarray]:
        """The plan's jobs' scores into the cache (the shared file, or this run's memory only when not
        ``shared``); one score array per batch, cached scores filled in."""
        new: dict[bytes, float] = {}
        for ks, scores in zip(plan.job_keys, job_scores):
            new.update(zip(ks, scores.tolist()))
        # In a big job of the dashboard's queue, thousands of rows are written in pieces, with the small jobs
        # waiting let through between them (each row gives up the interpreter's lock: seconds under load).
        cut = pieces()
        if cut is None or len(new) <= STORE_PIECE_ROWS:
            self.cache.put_many(new, shared=shared)
        else:
            rows = list(new.items())
            for start in range(0, len(rows), STORE_PIECE_ROWS):
                if start:
                    cut[1]()
                self.cache.put_many(dict(rows[start:start + STORE_PIECE_ROWS]), shared=shared)
        cached = plan.cached
        return [np.array([new[k] if k in new else cached[k] for k in ks], dtype=np.float64) for ks in plan.keys]

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None


def score_batches(metric: Metric, batches: Sequence[Batch], settings: Settings,
                  registry: Registry | None = None, progress: RunProgress | None = None) -> list[np.ndarray]:
    """Score batches of (candidates, references) with one metric, through the cache; one score array per batch.
    ``progress`` (its ``items`` the batches' candidates) is told what the cache had and each part scored; without
    it, the report of an enclosing :func:`muttlab.engine.progress.items_reported_to` is."""
    scorer = _Scorer(cache_for(settings), settings.workers, registry or registry_for(settings))
    ambient = items_report()
    if progress is None and ambient is not None:
        progress = RunProgress(ambient, [metric.name], sum(len(c) for c, _ in batches), named=False)
    scorer.progress = progress
    try:
        return scorer.score(metric, batches)
    finally:
        scorer.close()


# --------------------------------------------------------------------------- the run

def resolve_metrics(names: Sequence[str] | str, registry: Registry,
                    loading: Callable[[int], None] | None = None) -> list[Metric]:
    """Metric objects for the names (or ``all``): UnknownMetric or MetricUnavailable (both MuttlabErrors).
    ``loading(i)`` is called before the ``i``-th is built (a model loaded, a JVM started)."""
    try:
        out = []
        for i, name in enumerate(registry.resolve(names)):
            if loading is not None:
                loading(i)
            out.append(registry.get(name))
        return out
    except MetricUnavailable as exc:
        raise MetricUnavailable(f"{exc} (run `muttlab metrics` to see what is available)") from None


def resolve_ref_counts(suite: Suite, ref_counts: Sequence[int] | None, settings: Settings) -> list[int]:
    """The requested reference counts, or the configured ones the suite has enough references for."""
    available = suite.max_refs()
    if ref_counts is None:
        counts = [k for k in settings.ref_counts if k <= available] or [available]
        return counts
    counts = sorted(set(int(k) for k in ref_counts))
    bad = [k for k in counts if k < 1 or k > available]
    if bad:
        raise MuttlabError(f"reference count(s) {bad} not possible: suite {suite.name!r} has {available} "
                           f"references per trial; choose counts from 1 to {available}")
    return counts


def sick_overlap_warning(metric: Metric, trials) -> str | None:
    """A warning when a metric learned from SICK scores trials taken from the SICK pairs it saw."""
    seen = metric.sick_splits_seen()
    counts = {split: n for split, n in count_in_splits(trials, seen).items() if n}
    if not counts:
        return None
    parts = ", ".join(f"{n} in {split} ({seen[split]})" for split, n in counts.items())
    total = sum(any(s in seen for s in t.sick_splits) for t in trials)
    return (f"{metric.name} was trained on SICK and scores {total} of {len(trials)} trials taken "
            f"from SICK pairs it saw: {parts}; restrict the run to unseen pairs with --split test")


def _grid_batches(suite: Suite, counts: Sequence[int]) -> tuple[list[tuple[str, int, str]], list[Batch]]:
    """The batches a grid scores, with each one's (corruption, reference count, side): per corruption type and
    reference count, its originals and its corruptions with the same references."""
    # Originals and corruptions are separate batches, as in the study (coco-caption was run on each
    # file), so corpus-dependent metrics see the same document frequencies for both.
    batch_index: list[tuple[str, int, str]] = []
    batches: list[Batch] = []
    for name in suite.corruptions():
        trials = suite.of(name)
        for k in counts:
            refs = [list(t.refs(k)) for t in trials]
            for side in ("orig", "corr"):
                cands = [t.original if side == "orig" else t.corrupted for t in trials]
                batch_index.append((name, k, side))
                batches.append((cands, refs))
    return batch_index, batches


def fully_cached(suite: Suite, metric: str, ref_counts: Sequence[int] | None, settings: Settings,
                 registry: Registry | None = None) -> bool:
    """Whether the score cache of ``settings`` (with a read-only server's own cache) holds every score that
    :func:`run` of ``suite`` with ``metric`` at ``ref_counts`` needs: True when that run would score nothing.
    Nothing is scored here; an empty suite, an impossible reference count or a metric that cannot be loaded
    give False (the run itself says what is wrong)."""
    if not suite.trials:
        return False
    reg = registry or registry_for(settings)
    try:
        counts = resolve_ref_counts(suite, ref_counts, settings)
        scorer = _Scorer(cache_for(settings), 1, reg)
        try:
            return not scorer._plan(reg.get(metric), _grid_batches(suite, counts)[1]).jobs
        finally:
            scorer.close()
    except MuttlabError:
        return False
    finally:
        if registry is None:
            reg.close()


def run(suite: Suite, metrics: Sequence[str] | str, ref_counts: Sequence[int] | None = None,
        settings: Settings | None = None, registry: Registry | None = None,
        progress: ProgressFn | None = None, split: str | None = None, scorer: _Scorer | None = None) -> Results:
    """Score every trial of ``suite`` with every metric at every reference count.

    ``split`` (``test``, ``train``, ``trial``) keeps only the trials taken from SICK pairs of that SemEval
    split (:meth:`Suite.in_split`). ``scorer`` replaces the local one (:mod:`muttlab.engine.distributed`
    passes one that scores on a cluster).

    Returns:
      :class:`Results` whose table has one row per trial x metric x refs: the two scores, the margin
      (positive = the metric did the right thing) and ``passed``; ``warnings`` names learned metrics that
      scored trials from the SICK pairs they were trained on.
    Raises:
      MuttlabError: unknown or unavailable metric, unknown corruption or split, impossible reference count,
      empty suite.
    """
    with collections_paused():
        return _run(suite, metrics, ref_counts, settings, registry, progress, split, scorer)


def _run(suite: Suite, metrics: Sequence[str] | str, ref_counts: Sequence[int] | None, settings: Settings | None,
         registry: Registry | None, progress: ProgressFn | None, split: str | None, scorer: _Scorer | None) -> Results:
    settings = settings or Settings()
    registry = registry or registry_for(settings)
    if split is not None:
        suite = suite.in_split(split)
    if not suite.trials:
        raise MuttlabError(f"suite {suite.name!r} has no trials for the chosen corruption types")
    counts = resolve_ref_counts(suite, ref_counts, settings)
    groups = {}
    for name in suite.corruptions():
        try:
            groups[name] = (catalog.get(name), suite.of(name))
        except KeyError as exc:
            raise MuttlabError(str(exc)) from None

    batch_index, batches = _grid_batches(suite, counts)
    names = registry.resolve(metrics)
    verdict.check_rules(settings)
    tracker = RunProgress(progress, names, sum(len(c) for c, _ in batches)) if progress else None
    metric_objs = resolve_metrics(names, registry, tracker.loading if tracker else None)
    # Bound before anything is scored: a metric the rules cannot judge (no calibration) is refused at once.
    bound = {m.name: verdict.rules_for(settings, m.name, signature_of(m), m.noise_floor, suite.languages)
             for m in metric_objs}
    # A scorer built here may fork to score some metrics on a second core (a cluster's scorer does not).
    fork = scorer is None and settings.workers > 1
    scorer = scorer or _Scorer(cache_for(settings), settings.workers, registry)
    scorer.progress = tracker
    each = scorer.score_each(metric_objs, batches, fork=fork)
    # The table's columns, gathered as lists and arrays and made into one frame at the end (a frame per
    # cell costs more than the scoring of a cell).
    columns: dict[str, list] = {c: [] for c in RESULT_COLUMNS}
    trial_ids = {name: [t.id for t in trials] for name, (_, trials) in groups.items()}
    expected = {name: verdict.expectations(trials, ctype.rule) for name, (ctype, trials) in groups.items()}
    try:
        for metric in metric_objs:
            try:
                scored = next(each)
            except MetricError as exc:
                raise MuttlabError(str(exc)) from None
            by_key = dict(zip(batch_index, scored))
            for name, (ctype, trials) in groups.items():
                for k in counts:
                    s_orig, s_corr = by_key[(name, k, "orig")], by_key[(name, k, "corr")]
                    judged = verdict.judge(s_orig, s_corr, expected[name], metric.higher_is_better,
                                           bound[metric.name])
                    n = len(trials)
                    columns["trial"] += trial_ids[name]
                    columns["corruption"] += [name] * n
                    columns["metric"] += [metric.name] * n
                    columns["refs"].append(np.full(n, k, np.int64))
                    columns["s_orig"].append(s_orig)
                    columns["s_corr"].append(s_corr)
                    columns["margin"].append(judged.margin)
                    columns["passed"].append(judged.passed)
                    columns["tied"].append(judged.tied)
        if progress:
            progress(tracker.total, tracker.total, "done")
    finally:
        each.close()  # stops a forked child whose scores are no longer wanted
        scorer.close()
    table = {c: np.concatenate(v) if v and isinstance(v[0], np.ndarray) else np.array(v, dtype=object)
             for c, v in columns.items()}
    warnings = [w for w in (sick_overlap_warning(m, suite.trials) for m in metric_objs) if w]
    return Results(columns=table, signatures={m.name: signature_of(m) for m in metric_objs}, suite=suite.name,
                   is_sample=suite.is_sample, rules=settings.rules, metric_rules=bound, warnings=warnings)
