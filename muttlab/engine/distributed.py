"""Scoring a run on a Dask cluster: ``muttlab run --scheduler tcp://host:8786`` or ``MUTTLAB_SCHEDULER``.

This module is imported only when a scheduler address is set, so a local run never imports Dask.

How the work is cut (docs/scale.md has the whole picture):

* **metric x trial block.** The client looks every item up in its own score cache first, exactly as a
  local run does (same keys), and sends only the misses. Each metric's misses are cut into blocks of
  :data:`BLOCK` candidates; one task scores one block with one metric. All metrics of a run are submitted
  at once, so a slow metric (METEOR, ReVal) and fast ones (BLEU) fill the cluster together.
* **Corpus-level statistics stay whole.** A corpus-dependent metric (CIDEr-D) computes its batch
  statistics (document frequencies of the cell's references) once, on the client, with
  :meth:`~muttlab.metrics.base.Metric.corpus_stats`; they are scattered to the cluster once and every
  block of that cell is scored with them, which gives the scores the whole cell gets locally.
  A corpus-dependent metric without shareable statistics is sent as one task per cell.
* **Workers rebuild metrics by registry name** (same outside metric paths, same model folder) and check
  that the signature is the client's, so a worker with another muttlab version or model is refused.
  Metrics the registry cannot rebuild (a metric object added in code) are scored on the client.

Scores come back to the client, go into the local cache and into the same :class:`~muttlab.engine.runner.Results`
as a local run: results are identical (the tests compare them metric kind by metric kind).
"""
from __future__ import annotations

import threading
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Sequence

import numpy as np

from muttlab.engine import runner
from muttlab.engine.runner import Batch, Results, _Scorer, cache_for
from muttlab.trials import Suite
from muttlab.errors import MuttlabError
from muttlab.metrics.base import Metric, MetricUnavailable
from muttlab.metrics.registry import Registry
from muttlab.settings import Settings

try:
    from distributed import Client
except ImportError:  # pragma: no cover - depends on the installation
    Client = None

# Candidates per task. Small enough that two workers share even one cell of one metric, large enough that
# the per-task overhead (~1 ms scheduling, pickling the strings) is small next to the scoring.
BLOCK = 1000


# --------------------------------------------------------------------------- worker side

_REGISTRIES: dict[tuple, Registry] = {}
_REGISTRY_LOCK = threading.Lock()
_METRIC_LOCKS: dict[str, threading.Lock] = {}


def _worker_metric(name: str, extra_paths: tuple[str, ...], model_dir: Path | None,
                   signature: str) -> tuple[Metric, threading.Lock]:
    """The worker process's own instance of a metric (built once, kept: the JVM, the model stay loaded)
    and the lock that serialises its use."""
    with _REGISTRY_LOCK:
        key = (tuple(extra_paths), model_dir)
        if key not in _REGISTRIES:
            _REGISTRIES[key] = Registry(extra_paths=extra_paths, model_dir=model_dir)
        metric = _REGISTRIES[key].get(name)
        lock = _METRIC_LOCKS.setdefault(name, threading.Lock())
    if metric.signature() != signature:
        raise MuttlabError(f"a Dask worker builds {name} as {metric.signature()!r} but the client has "
                           f"{signature!r}: install the same muttlab version and models on every worker")
    return metric, lock


def _identity(value):
    return value


def score_block(name: str, extra_paths: tuple[str, ...], model_dir: Path | None, signature: str,
                candidates: list[str], references: list[list[str]], stats=None) -> np.ndarray:
    """One task: score one block with one metric on a worker (``stats``: the whole cell's, if any)."""
    metric, lock = _worker_metric(name, extra_paths, model_dir, signature)
    # A worker may run several tasks in threads; metric objects (a JVM pipe, a model) are used by one at a time.
    with lock:
        return metric.score(candidates, references, stats=stats)


# --------------------------------------------------------------------------- client side

_CLIENTS: dict[str, "Client"] = {}
_CLIENTS_LOCK = threading.Lock()


def client_for(address: str) -> "Client":
    """One client per scheduler address for this process (the dashboard's sessions share it)."""
    if Client is None:
        raise MuttlabError("a Dask scheduler is set but Dask is not installed: pip install 'muttlab[scale]' "
                           "(or unset MUTTLAB_SCHEDULER / drop --scheduler to score on this machine)")
    with _CLIENTS_LOCK:
        client = _CLIENTS.get(address)
        if client is None or client.status in ("closed", "closing"):
            try:
                client = Client(address, timeout="10s", set_as_default=False)
            except (OSError, TimeoutError) as exc:
                raise MuttlabError(f"cannot reach the Dask scheduler at {address!r} ({exc}); start one with "
                                   "`dask scheduler` and workers with `dask worker ADDRESS`, or score on this "
                                   "machine without --scheduler / MUTTLAB_SCHEDULER") from None
            _CLIENTS[address] = client
    return client


class DaskScorer(_Scorer):
    """The runner's scorer, with the misses of every metric of a run scored as tasks on a cluster.

    ``metrics`` are the run's metrics: on the first call their work is submitted together (each metric's
    cache look-up and collection runs in its own client thread), later calls collect.
    """

    def __init__(self, cache, registry: Registry, client: "Client", metrics: Sequence[Metric] = (),
                 block: int = BLOCK):
        super().__init__(cache, workers=1, registry=registry)
        self.client = client
        self.block = block
        self.metrics = list(metrics)
        self._batches: Sequence[Batch] | None = None
        self._pending: dict[str, Future] = {}
        self._threads: ThreadPoolExecutor | None = None
        # Client-side scoring and corpus statistics share process-wide state (the n-gram vocabulary).
        self._local_lock = threading.RLock()
        self.tasks = 0  # tasks submitted, for benchmarks

    def remote(self, metric: Metric) -> bool:
        """Whether a worker rebuilding ``metric`` by name gets the same metric (same signature)."""
        if metric.name not in self.registry.names:
            return False
        try:
            return self.registry.get(metric.name).signature() == metric.signature()
        except MetricUnavailable:
            return False

    def _blocks(self, metric: Metric, job: Batch) -> list:
        cands, refs = job
        args = (metric.name, self.registry.extra_paths, self.registry.model_dir, metric.signature())
        # The key names the metric, so the cluster's task stream (and bench_dask) can say what each task was.
        key = f"muttlab-{metric.name}-{uuid.uuid4().hex}"
        stats = None
        if metric.corpus_dependent:
            with self._local_lock:
                stats = metric.corpus_stats(refs)
            if stats is None:
                self.tasks += 1
                return [self.client.submit(score_block, *args, cands, refs, key=f"{key}-0")]
            # Shipped once as a task of its own that the cell's blocks depend on (Dask moves it between
            # workers). Not client.scatter: scattered data mixed with queued tasks from several client
            # threads trips the scheduler's task priorities.
            stats = self.client.submit(_identity, stats, key=f"{key}-stats")
        futures = []
        for s in range(0, len(cands), self.block):
            futures.append(self.client.submit(score_block, *args, cands[s:s + self.block], refs[s:s + self.block],
                                              stats, key=f"{key}-{s}"))
        self.tasks += len(futures)
        return futures

    def _parallel(self, metric: Metric, jobs: list[Batch]) -> list[np.ndarray]:
        if not self.remote(metric):
            with self._local_lock:
                return [metric.score(c, r) for c, r in jobs]
        planned = [self._blocks(metric, job) for job in jobs]
        gathered = self.client.gather([f for futures in planned for f in futures])
        out, at = [], 0
        for futures in planned:
            part = gathered[at:at + len(futures)]
            at += len(futures)
            out.append(np.concatenate(part) if part else np.zeros(0))
        return out

    def _submit_all(self, batches: Sequence[Batch]) -> None:
        self._batches = batches
        remote = [m for m in self.metrics if self.remote(m)]
        if not remote:
            return
        self._threads = ThreadPoolExecutor(len(remote), thread_name_prefix="muttlab-dask")
        for metric in remote:
            self._pending[metric.signature()] = self._threads.submit(super().score, metric, batches)

    def score(self, metric: Metric, batches: Sequence[Batch]) -> list[np.ndarray]:
        if self._batches is None and self.metrics:
            self._submit_all(batches)
        pending = self._pending.pop(metric.signature(), None) if batches is self._batches else None
        if pending is not None:
            return pending.result()
        return super().score(metric, batches)

    def close(self) -> None:
        if self._threads is not None:
            for future in self._pending.values():
                future.cancel()
            self._threads.shutdown(wait=True)
            self._threads = None
        super().close()


def scorer_for(settings: Settings, registry: Registry, metrics: Sequence[Metric]) -> DaskScorer:
    """A :class:`DaskScorer` on the cluster at ``settings.scheduler``, writing to the settings' cache."""
    return DaskScorer(cache_for(settings), registry, client_for(settings.scheduler), metrics)


def run(suite: Suite, metrics: Sequence[str] | str, ref_counts: Sequence[int] | None, settings: Settings,
        registry: Registry | None = None, progress: runner.ProgressFn | None = None) -> Results:
    """:func:`muttlab.engine.runner.run` with the scoring done on the cluster at ``settings.scheduler``."""
    registry = registry or runner.registry_for(settings)
    metric_objs = runner.resolve_metrics(metrics, registry)
    return runner.run(suite, metrics, ref_counts, settings, registry, progress=progress,
                      scorer=scorer_for(settings, registry, metric_objs))
