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

Scores come back to the client and into the same :class:`~muttlab.engine.runner.Results` as a local run:
results are identical (the tests compare them metric kind by metric kind).

**Whom the client believes.** A Dask scheduler without TLS lets anyone who reaches its port join as a worker,
and such a worker's results are whatever it chooses. So the client stores scores computed on the cluster in
the shared score cache only when the cluster is reached by mutual TLS (``tls://`` and the CA, certificate and
key of ``MUTTLAB_DASK_TLS_*``: only a worker holding a certificate of that CA can join); otherwise they serve
the run that asked for them and are kept in its memory only (docs/scale.md). The scheduler's address is
checked before any connection (:func:`check_address`), and a peer that does not open with Dask's handshake
is refused with one line (:func:`probe`), never read as a frame length.
"""
from __future__ import annotations

import ipaddress
import re
import socket
import struct
import threading
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Sequence
from urllib.parse import urlsplit

import numpy as np

from muttlab.engine import runner
from muttlab.engine.runner import Batch, Results, _Scorer, cache_for
from muttlab.trials import Suite
from muttlab.errors import MuttlabError
from muttlab.metrics.base import Metric, MetricUnavailable, signature_of
from muttlab.metrics.outside import OutsideMetric
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
    if signature_of(metric) != signature:
        raise MuttlabError(f"a Dask worker builds {name} as {signature_of(metric)!r} but the client has "
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
DEFAULT_PORT = 8786
SCHEMES = ("tcp", "tls")
_HOST_NAME = re.compile(r"(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}"
                        r"[A-Za-z0-9])?)*\.?")
# How long the scheduler has to send its handshake, which it writes as soon as it accepts a connection.
PROBE_TIMEOUT_S = 5.0
# A Dask handshake (a msgpack dict of versions and options) is a few hundred bytes.
MAX_HANDSHAKE_BYTES = 1 << 20
_FIX = ("give the scheduler's address as tcp://HOST:PORT (or tls://HOST:PORT with MUTTLAB_DASK_TLS_*), "
        "e.g. tcp://10.0.0.5:8786, or drop --scheduler / MUTTLAB_SCHEDULER to score on this machine")


def check_address(address: str) -> str:
    """``address`` as ``scheme://host:port`` when it names a Dask scheduler over TCP or TLS (no port: 8786);
    a MuttlabError naming what is wrong otherwise (another scheme such as ``inproc://`` or ``file://``, a path,
    user or query, a malformed IPv6 address, a port out of range, a host name that is none)."""
    text = (address or "").strip()
    shown = repr(text[:100])
    if not text or any(ord(c) < 33 for c in text):
        raise MuttlabError(f"scheduler address {shown} is empty or holds spaces or control characters; {_FIX}")
    if "://" not in text:
        text = f"tcp://{text}"
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise MuttlabError(f"scheduler address {shown} is malformed ({exc}); {_FIX}") from None
    if parts.scheme not in SCHEMES:
        raise MuttlabError(f"scheduler address {shown}: {parts.scheme!r} is not a network address of a scheduler "
                           f"(only {' and '.join(s + '://' for s in SCHEMES)}); {_FIX}")
    host = parts.hostname
    if parts.path not in ("", "/") or parts.query or parts.fragment or parts.username or parts.password or not host:
        raise MuttlabError(f"scheduler address {shown} must be only scheme://HOST:PORT; {_FIX}")
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        ip = None
        if not _HOST_NAME.fullmatch(host) or host.replace(".", "").isdigit():
            raise MuttlabError(f"scheduler address {shown}: {host!r} is no host name or IP address; {_FIX}") from None
    port = port or DEFAULT_PORT
    if port == 0:
        raise MuttlabError(f"scheduler address {shown}: port 0 is no scheduler's port; {_FIX}")
    where = f"[{ip}]" if ip is not None and ip.version == 6 else host
    return f"{parts.scheme}://{where}:{port}"


def probe(address: str, timeout: float = PROBE_TIMEOUT_S) -> None:
    """Check that a ``tcp://`` address is a Dask scheduler before Dask reads from it: a scheduler opens every
    connection with its handshake, an 8-byte length and that many bytes of frames. A peer that sends nothing,
    closes, or whose first bytes are no such length (an SSH or HTTP server's banner, which Dask would read as a
    frame of exbibytes) is refused with a MuttlabError."""
    parts = urlsplit(address)
    try:
        with socket.create_connection((parts.hostname, parts.port), timeout=timeout) as conn:
            head = _receive(conn, 8)
            (size,) = struct.unpack("<Q", head) if head is not None else (None,)
            body = _receive(conn, size) if size is not None and 0 < size <= MAX_HANDSHAKE_BYTES else None
    except socket.timeout:
        raise MuttlabError(f"the peer at {address} sent nothing within {timeout:g} s: it is not a Dask scheduler "
                           f"(a scheduler opens with its handshake); {_FIX}") from None
    except OSError as exc:
        raise MuttlabError(f"cannot reach the Dask scheduler at {address} ({exc.strerror or exc}); start one with "
                           "`dask scheduler` and workers with `dask worker ADDRESS`, or score on this machine "
                           "without --scheduler / MUTTLAB_SCHEDULER") from None
    if body is None or not _frames(body):
        raise MuttlabError(f"the peer at {address} does not speak Dask's protocol (its first bytes are no Dask "
                           f"handshake): another service listens on that port; {_FIX}")


def _receive(conn: socket.socket, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        chunk = conn.recv(min(65536, size - len(data)))
        if not chunk:
            return None
        data += chunk
    return data


def _frames(body: bytes) -> bool:
    """Whether ``body`` is a frame list as Dask writes it: a count, that many lengths, frames that fit."""
    if len(body) < 8:
        return False
    (count,) = struct.unpack_from("<Q", body)
    if not 0 < count <= 64 or len(body) < 8 * (count + 1):
        return False
    lengths = struct.unpack_from(f"<{count}Q", body, 8)
    return sum(lengths) + 8 * (count + 1) <= len(body)


def security_for(settings: Settings):
    """``distributed.security.Security`` for the cluster: mutual TLS from ``MUTTLAB_DASK_TLS_CA`` / ``_CERT`` /
    ``_KEY`` (all three, readable files), encryption required; None when none is set."""
    if not settings.dask_tls:
        return None
    files = {"MUTTLAB_DASK_TLS_CA": settings.dask_tls_ca, "MUTTLAB_DASK_TLS_CERT": settings.dask_tls_cert,
             "MUTTLAB_DASK_TLS_KEY": settings.dask_tls_key}
    missing = [name for name, path in files.items() if path is None]
    if missing:
        raise MuttlabError(f"Dask TLS needs the CA, a certificate and its key: set {', '.join(missing)} too")
    for name, path in files.items():
        if not Path(path).is_file():
            raise MuttlabError(f"{name}={path}: no such file; give the PEM file it names")
    from distributed.security import Security

    return Security(tls_ca_file=str(settings.dask_tls_ca), tls_client_cert=str(settings.dask_tls_cert),
                    tls_client_key=str(settings.dask_tls_key), require_encryption=True)


def trusted(settings: Settings) -> bool:
    """Whether scores from the cluster may go into the shared cache: only over mutual TLS (docs/scale.md)."""
    return settings.dask_tls and (settings.scheduler or "").strip().startswith("tls://")


def client_for(address: str, settings: Settings | None = None) -> "Client":
    """One client per scheduler address for this process (the dashboard's sessions share it); the address is
    checked (:func:`check_address`), a ``tcp://`` peer probed (:func:`probe`) and, with ``settings`` that name
    TLS files, the cluster reached by mutual TLS."""
    if Client is None:
        raise MuttlabError("a Dask scheduler is set but Dask is not installed: pip install 'muttlab[scale]' "
                           "(or unset MUTTLAB_SCHEDULER / drop --scheduler to score on this machine)")
    address = check_address(address)
    security = security_for(settings) if settings is not None else None
    if (security is None) == address.startswith("tls://"):
        raise MuttlabError(f"scheduler address {address}: a tls:// address needs MUTTLAB_DASK_TLS_CA, _CERT and _KEY, "
                           "and with them the address must be tls://")
    with _CLIENTS_LOCK:
        client = _CLIENTS.get(address)
        if client is None or client.status in ("closed", "closing"):
            if address.startswith("tcp://"):
                probe(address)
            try:
                client = Client(address, timeout="10s", set_as_default=False, security=security)
            except (OSError, TimeoutError) as exc:
                raise MuttlabError(f"cannot reach the Dask scheduler at {address!r} ({exc}); start one with "
                                   "`dask scheduler` and workers with `dask worker ADDRESS`, or score on this "
                                   "machine without --scheduler / MUTTLAB_SCHEDULER") from None
            except Exception as exc:  # Dask's own errors for a peer that is not a scheduler of this version
                raise MuttlabError(f"cannot use the Dask scheduler at {address!r} ({type(exc).__name__}: "
                                   f"{str(exc)[:200]}); {_FIX}") from None
            _CLIENTS[address] = client
    return client


class DaskScorer(_Scorer):
    """The runner's scorer, with the misses of every metric of a run scored as tasks on a cluster.

    ``metrics`` are the run's metrics: on the first call their work is submitted together (each metric's
    cache look-up and collection runs in its own client thread), later calls collect.
    """

    def __init__(self, cache, registry: Registry, client: "Client", metrics: Sequence[Metric] = (),
                 block: int = BLOCK, trusted: bool = False):
        super().__init__(cache, workers=1, registry=registry)
        self.client = client
        self.trusted = trusted  # the cluster's scores may go into the shared cache (mutual TLS)
        self.block = block
        self.metrics = list(metrics)
        self._batches: Sequence[Batch] | None = None
        self._pending: dict[str, Future] = {}
        self._threads: ThreadPoolExecutor | None = None
        # Client-side scoring and corpus statistics share process-wide state (the n-gram vocabulary).
        self._local_lock = threading.RLock()
        self.tasks = 0  # tasks submitted, for benchmarks

    def remote(self, metric: Metric) -> bool:
        """Whether a worker rebuilding ``metric`` by name gets the same metric (same signature). An outside
        metric of an isolated registry is scored by the registry's own worker process only."""
        if metric.name not in self.registry.names or isinstance(metric, OutsideMetric):
            return False
        try:
            return signature_of(self.registry.get(metric.name)) == signature_of(metric)
        except MetricUnavailable:
            return False

    def shares(self, metric: Metric) -> bool:
        """Scores computed on an untrusted cluster serve this run only (see the module docstring)."""
        if self.remote(metric) and not self.trusted:
            return False
        return super().shares(metric)

    def _blocks(self, metric: Metric, job: Batch) -> list:
        cands, refs = job
        args = (metric.name, self.registry.extra_paths, self.registry.model_dir, signature_of(metric))
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

    def scores_here(self, metric: Metric) -> bool:
        return not self.remote(metric)

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
            self._pending[signature_of(metric)] = self._threads.submit(super().score, metric, batches)

    def score(self, metric: Metric, batches: Sequence[Batch]) -> list[np.ndarray]:
        if self._batches is None and self.metrics:
            self._submit_all(batches)
        pending = self._pending.pop(signature_of(metric), None) if batches is self._batches else None
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
    """A :class:`DaskScorer` on the cluster at ``settings.scheduler``, with the settings' cache (written with
    the cluster's scores only when it is reached by mutual TLS, :func:`trusted`)."""
    return DaskScorer(cache_for(settings), registry, client_for(settings.scheduler, settings), metrics,
                      trusted=trusted(settings))


def run(suite: Suite, metrics: Sequence[str] | str, ref_counts: Sequence[int] | None, settings: Settings,
        registry: Registry | None = None, progress: runner.ProgressFn | None = None) -> Results:
    """:func:`muttlab.engine.runner.run` with the scoring done on the cluster at ``settings.scheduler``."""
    registry = registry or runner.registry_for(settings)
    metric_objs = runner.resolve_metrics(metrics, registry)
    return runner.run(suite, metrics, ref_counts, settings, registry, progress=progress,
                      scorer=scorer_for(settings, registry, metric_objs))
