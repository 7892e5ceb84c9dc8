"""Outside metrics, scored in a worker process of their own.

A metric registered by import path (``--metric-path``, ``MUTTLAB_METRICS``) or by an entry point of group
``muttlab.metrics`` is code the lab did not ship. A registry made for a command or a server
(:func:`muttlab.engine.runner.registry_for`, ``Registry(isolate=True)``) never imports it. It starts one
worker process (``python -m muttlab.metrics.outside_worker``) which first takes away its own right to write the
score cache, the model folder, the users file, the data dir, the installed package and its Python
(:mod:`muttlab.metrics.sandbox`), and only then imports the outside code and scores with it. The worker's
environment holds no ``MUTTLAB_*`` variable (no database password, credential or cache location).

In this process each outside metric is an :class:`OutsideMetric`: a stand-in built from what the worker
reported (name, parameters, version: plain strings, checked here; the name is checked by the registry like
any other) that carries the origin the registry found for it, :func:`origin_of`: the import path or entry
point and the SHA-256 of the source files it names, found here without running them. Its signature always
ends with that origin, so its scores are cached under keys no built-in metric has, and this process, which
has loaded no outside code, stores them (:func:`muttlab.metrics.registry.shares_scores`).

The two processes talk through two pipes in length-prefixed JSON messages: never pickle, since an answer
from the worker is data to check, not objects to rebuild. What outside code prints goes to stderr.
"""
from __future__ import annotations

import base64
import dataclasses
import hashlib
import importlib.machinery
import importlib.util
import json
import math
import os
import secrets
import stat
import struct
import subprocess
import sys
import threading
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Iterable

import numpy as np

from muttlab import errors
from muttlab.errors import MetricError, MetricPathError
from muttlab.metrics.base import Metric, assign_origin
from muttlab.settings import active_limits, worker_environment

_HEADER = struct.Struct("<Q")
# A message is one batch's sentences or scores: a grid's largest batch is a few MiB.
MAX_MESSAGE_BYTES = 256 * 1024 * 1024
MAX_ERROR_CHARS = 2000
MAX_SOURCE_BYTES = 64 * 1024 * 1024
# Code whose source file cannot be found is keyed to this process: no other process can share its scores.
_PROCESS_TOKEN = secrets.token_hex(16)
# The error classes a worker may name; anything else is a MetricError.
_ERRORS = {cls.__name__: cls for cls in (errors.MetricError, errors.MetricPathError, errors.ReservedName,
                                         errors.MetricUnavailable, errors.ResourceMissing)}


class _Malformed(Exception):
    """An answer that is not a message of the protocol."""


def _send(out: BinaryIO, message: dict) -> None:
    data = json.dumps(message, ensure_ascii=False).encode("utf-8", "surrogatepass")
    out.write(_HEADER.pack(len(data)) + data)
    out.flush()


def _read_exactly(source: BinaryIO, size: int) -> bytes | None:
    data = source.read(size)
    return data if data is not None and len(data) == size else None


def _receive(source: BinaryIO) -> dict | None:
    """The next message, or None at the end of the stream; _Malformed for anything but a JSON object."""
    head = _read_exactly(source, _HEADER.size)
    if head is None:
        return None
    (size,) = _HEADER.unpack(head)
    if size > MAX_MESSAGE_BYTES:
        raise _Malformed(f"a message of {size:,} bytes")
    data = _read_exactly(source, size)
    if data is None:
        return None
    try:
        message = json.loads(data.decode("utf-8", "surrogatepass"))
    except (ValueError, RecursionError) as exc:
        raise _Malformed(type(exc).__name__) from None
    if not isinstance(message, dict):
        raise _Malformed("not an object")
    return message


# --------------------------------------------------------------------------- where outside code comes from

def _module_file(module: str) -> str | None:
    """The file that ``import module`` would load, found without running any of it; None when it cannot be
    found that way (a namespace package, a module of a custom importer)."""
    parts = module.split(".")
    if not all(part.isidentifier() for part in parts):
        return None
    try:
        spec = importlib.util.find_spec(parts[0]) if parts[0] not in sys.modules else sys.modules[parts[0]].__spec__
        for i in range(1, len(parts)):
            if spec is None or not spec.submodule_search_locations:
                return None
            spec = importlib.machinery.PathFinder.find_spec(".".join(parts[:i + 1]),
                                                           list(spec.submodule_search_locations))
    except (ImportError, ValueError, AttributeError):
        return None
    return spec.origin if spec is not None and spec.has_location else None


def _file_digest(path: str | None) -> str | None:
    if not path:
        return None
    try:
        with open(path, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return None
            data = handle.read(MAX_SOURCE_BYTES + 1)
    except OSError:
        return None
    return hashlib.sha256(data).hexdigest() if len(data) <= MAX_SOURCE_BYTES else None


def origin_of(where: str, modules: Iterable[str]) -> str:
    """The origin of an outside metric: ``where`` it was registered (its import path or entry point) and the
    SHA-256 of the source of ``modules`` (the module the registration names, then the module of the metric's
    class), each found by this process (:func:`_module_file`). One file: its SHA-256; several: the SHA-256 of
    their digests. Without any file, ``@process:`` and a token of this process."""
    digests = []
    for module in dict.fromkeys(modules):
        digest = _file_digest(_module_file(module))
        if digest is not None and digest not in digests:
            digests.append(digest)
    if not digests:
        return f"{where}@process:{_PROCESS_TOKEN}"
    digest = digests[0] if len(digests) == 1 else hashlib.sha256("".join(digests).encode()).hexdigest()
    return f"{where}@sha256:{digest}"


# --------------------------------------------------------------------------- this process: the stand-in

@dataclass(frozen=True)
class OutsideInfo:
    """What the worker reported about one outside metric, checked."""

    handle: int
    name: str
    version: str
    params: dict[str, str]
    problem: str | None
    higher_is_better: bool
    requires: tuple[str, ...]
    corpus_dependent: bool
    description: str
    languages: tuple[str, ...] | None
    uses_source: bool
    score_range: tuple[float, float] | None
    noise_floor: float
    scores_empty_text: bool
    sick_splits: dict[str, str]
    class_module: str


def _strings(value, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _Malformed(what)
    return tuple(value)


def _text_map(value, what: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise _Malformed(what)
    return dict(value)


def _checked_info(raw) -> OutsideInfo:
    if not isinstance(raw, dict):
        raise _Malformed("no description")
    kinds = {"handle": int, "name": str, "version": str, "higher_is_better": bool, "corpus_dependent": bool,
             "description": str, "uses_source": bool, "scores_empty_text": bool, "class_module": str}
    for key, kind in kinds.items():
        if type(raw.get(key)) is not kind:
            raise _Malformed(key)
    problem = raw.get("problem")
    if problem is not None and not isinstance(problem, str):
        raise _Malformed("problem")
    languages = raw.get("languages")
    score_range = raw.get("score_range")
    if score_range is not None and (not isinstance(score_range, list) or len(score_range) != 2
                                    or not all(type(v) in (int, float) for v in score_range)):
        raise _Malformed("score_range")
    floor = raw.get("noise_floor")
    if type(floor) not in (int, float) or not math.isfinite(floor) or floor < 0:
        raise _Malformed("noise_floor")
    return OutsideInfo(
        handle=raw["handle"], name=raw["name"], version=raw["version"], params=_text_map(raw.get("params"), "params"),
        problem=problem[:MAX_ERROR_CHARS] if problem else None, higher_is_better=raw["higher_is_better"],
        requires=_strings(raw.get("requires"), "requires"), corpus_dependent=raw["corpus_dependent"],
        description=raw["description"], languages=None if languages is None else _strings(languages, "languages"),
        uses_source=raw["uses_source"], score_range=None if score_range is None else tuple(map(float, score_range)),
        noise_floor=float(floor), scores_empty_text=raw["scores_empty_text"],
        sick_splits=_text_map(raw.get("sick_splits"), "sick_splits"), class_module=raw["class_module"])


class OutsideMetric(Metric):
    """The stand-in of an outside metric that the worker scores: its name, parameters, version and
    properties as the worker reported them, its origin as the registry found it (:func:`origin_of`)."""

    name = "outside"
    parallel = False  # rebuilt by name elsewhere it would be imported there: it is scored by its worker only
    forkable = False

    def __init__(self, worker: "Worker", info: OutsideInfo, origin: str):
        self._worker = worker
        self._info = info
        self.name = info.name
        self.version = info.version
        self.higher_is_better = info.higher_is_better
        self.requires = info.requires
        self.corpus_dependent = info.corpus_dependent
        self.description = info.description
        self.languages = info.languages
        self.uses_source = info.uses_source
        self.score_range = info.score_range
        self.noise_floor = info.noise_floor
        self.scores_empty_text = info.scores_empty_text
        assign_origin(self, origin)

    def params(self) -> dict[str, object]:
        if self._info.problem:
            raise MetricError(self._info.problem)
        return dict(self._info.params)

    def sick_splits_seen(self) -> dict[str, str]:
        return dict(self._info.sick_splits)

    def check_available(self) -> None:
        self._worker.call(self._info.handle, "check_available", self.name)

    def close(self) -> None:
        if self._worker.running:
            self._worker.call(self._info.handle, "close", self.name)

    def _score(self, candidates, references, sources=None) -> np.ndarray:
        return self._worker.score(self._info.handle, self.name, candidates, references, sources)


def _stop(process: subprocess.Popen | None, files: list) -> None:
    for handle in files:
        try:
            handle.close()
        except OSError:
            pass
    if process is not None and process.poll() is None:
        try:
            process.wait(timeout=2)  # its requests' end closed: it leaves on its own
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def lab_paths() -> list[Path]:
    """What a worker may never write, whatever it was asked to protect: the folders of this package (the
    mapped ones of a source checkout too) and the Python it runs on, with its installed packages."""
    import site

    paths = [Path(p) for name in ("muttlab", "muttlab.metrics", "muttlab.corruptions", "muttlab.dashboard",
                                  "muttlab.data")
             for p in (getattr(importlib.util.find_spec(name), "submodule_search_locations", None) or [])]
    paths += [Path(p) for p in {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}]
    paths += [Path(p) for p in site.getsitepackages()]
    return paths


class Worker:
    """The worker process of one registry: started on first use, asked one request at a time (a server's
    sessions share the registry), stopped by :meth:`close` or when the registry is collected.

    ``protect``: the paths the worker must not be able to write (:func:`muttlab.metrics.sandbox.deny_writes`).
    """

    def __init__(self, protect: Iterable[Path] = ()):
        self.protect = tuple(Path(p) for p in protect)
        self.sandbox = ""  # what the worker said of its sandbox ("landlock ABI 7", or why there is none)
        self._lock = threading.Lock()
        self._process: subprocess.Popen | None = None
        self._files: list = []
        self._ended = ""
        self._finalizer = None

    @property
    def running(self) -> bool:
        return self._process is not None and not self._ended

    def _start(self) -> None:
        child_in, to_child = os.pipe()
        from_child, child_out = os.pipe()
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "muttlab.metrics.outside_worker", str(child_in), str(child_out)],
                pass_fds=(child_in, child_out), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                env=worker_environment())
        except OSError as exc:
            for fd in (to_child, from_child):
                os.close(fd)
            raise MetricError(f"cannot start the process that runs outside metrics: {exc}") from None
        finally:
            os.close(child_in)
            os.close(child_out)
        self._files = [os.fdopen(to_child, "wb"), os.fdopen(from_child, "rb")]
        self._finalizer = weakref.finalize(self, _stop, self._process, self._files)
        answer = self._ask({"op": "init", "sys_path": [p for p in sys.path if isinstance(p, str)],
                            "limits": dataclasses.asdict(active_limits()),
                            "protect": [str(p) for p in (*self.protect, *lab_paths())]},
                           "starting the outside metrics' process")
        self.sandbox = str(answer.get("sandbox", ""))[:200]

    def ask(self, message: dict, who: str) -> dict:
        """The worker's answer to ``message``; its error raised as the class it names (``who``: what the
        request is about, for the message when the worker has ended)."""
        with self._lock:
            if self._process is None and not self._ended:
                self._start()
            return self._ask(message, who)

    def _ask(self, message: dict, who: str) -> dict:
        if self._ended:
            raise MetricError(f"{who}: {self._ended}")
        send, receive = self._files
        try:
            _send(send, message)
            answer = _receive(receive)
        except _Malformed as exc:
            self._end(f"the process running outside metrics answered out of protocol ({exc}); it was stopped")
            raise MetricError(f"{who}: {self._ended}") from None
        except (OSError, ValueError):
            answer = None
        if answer is None:
            code = self._process.poll() if self._process is not None else None
            if code is None and self._process is not None:
                try:
                    code = self._process.wait(timeout=2)
                except subprocess.TimeoutExpired:
                    code = None
            self._end(f"the process running outside metrics ended (exit status {code})")
            raise MetricError(f"{who}: {self._ended}")
        if answer.get("ok") is not True:
            text = answer.get("error")
            text = text[:MAX_ERROR_CHARS] if isinstance(text, str) and text else "failed without saying why"
            kind = _ERRORS.get(answer.get("kind"), MetricError) if isinstance(answer.get("kind"), str) else MetricError
            raise kind(text)
        return answer

    def _end(self, why: str) -> None:
        self._ended = why
        if self._finalizer is not None:
            self._finalizer()

    def close(self) -> None:
        with self._lock:
            if self._process is not None and not self._ended:
                self._end("the process running outside metrics was closed")

    def _stand_in(self, answer: dict, where: str, module: str) -> OutsideMetric:
        try:
            info = _checked_info(answer.get("info"))
        except _Malformed as exc:
            raise MetricPathError(f"{where}: the outside metrics' process described the metric out of protocol "
                                  f"({exc})") from None
        return OutsideMetric(self, info, origin_of(where, [module, info.class_module]))

    def load_path(self, path: str) -> OutsideMetric:
        """The stand-in of the metric that the import path ``package.module:callable`` builds."""
        if not isinstance(path, str):
            raise MetricPathError(f"metric path must be a string like package.module:callable, got {path!r}")
        answer = self.ask({"op": "path", "path": path}, f"metric path {path!r}")
        return self._stand_in(answer, f"import path {path.strip()}", path.strip().partition(":")[0])

    def load_entry_point(self, name: str, value: str, group: str, source: str) -> OutsideMetric:
        """The stand-in of an entry point's metric (named as the entry point, or refused)."""
        answer = self.ask({"op": "entry_point", "name": name, "value": value, "group": group, "source": source},
                          source)
        metric = self._stand_in(answer, source, value.partition(":")[0].strip())
        if metric.name != name:
            raise MetricPathError(f"{source} builds a metric named {metric.name!r}; name the entry point and the "
                                  "metric alike")
        return metric

    def call(self, handle: int, method: str, who: str) -> None:
        self.ask({"op": "call", "handle": handle, "method": method}, who)

    def score(self, handle: int, who: str, candidates: list[str], references: list[list[str]],
              sources: list[str] | None) -> np.ndarray:
        # A grid's batches repeat their sentences (a pool's references under every trial of its scene): each
        # distinct text is sent once, and the batch as indices into that table.
        table: dict[str, int] = {}
        index = lambda text: table.setdefault(text, len(table))  # noqa: E731
        message = {"op": "score", "handle": handle, "candidates": [index(c) for c in candidates],
                   "references": [[index(r) for r in refs] for refs in references],
                   "sources": None if sources is None else [index(x) for x in sources]}
        message["texts"] = list(table)
        answer = self.ask(message, who)
        try:
            scores = np.frombuffer(base64.b64decode(answer.get("scores", ""), validate=True), dtype="<f8")
        except (TypeError, ValueError):
            scores = None
        if scores is None or scores.shape != (len(candidates),):
            raise MetricError(f"{who}: the outside metrics' process returned no score per candidate")
        return scores.astype(np.float64)
