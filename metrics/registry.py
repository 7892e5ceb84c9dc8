"""Where metrics are found: the built-in ones, entry points, and import paths.

A researcher adds a metric without touching this package, by
  * an import path ``package.module:callable`` (``--metric-path`` on the CLI, ``MUTTLAB_METRICS``), or
  * the Python entry-point group ``muttlab.metrics`` in their own package, or
  * :meth:`Registry.add` in code.
The callable returns a :class:`~muttlab.metrics.base.Metric` instance (a Metric subclass works too).
Metrics are never registered from the web page. A registry made from settings (``isolate=True``) imports
outside metrics only in a sandboxed worker process (:mod:`muttlab.metrics.outside`); whether a metric is built
in, its name and its origin are decided here, never by what the metric object says (:func:`is_builtin`).

The built-in names are reserved, however a metric is registered: an outside metric called ``BLEU-4`` (or
``bleu-4``) is refused with :class:`~muttlab.errors.ReservedName`, and so is a built-in class built with other
arguments under its built-in name; it is registered under a name of its own
(``registry.add(BertScore(model=...), name="BERTScore-F1@my-bert")``).
"""
from __future__ import annotations

import importlib
import threading
import unicodedata
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Callable, Iterable

from muttlab.errors import MetricPathError, ReservedName, UnknownMetric  # noqa: F401  (re-export)
from muttlab.metrics.base import (BUILT_IN, Metric, MetricError, MetricUnavailable, class_origin, contained,
                                  metric_origin, modified, plain_text)

ENTRY_POINT_GROUP = "muttlab.metrics"

# A keyword argument with this value is replaced by the registry's model folder (trained checkpoints and
# tuned parameters live there), so metrics never read settings or the environment themselves.
MODEL_DIR = object()

# Packages that come with an optional extra of muttlab (pyproject.toml), for the message when one is missing.
OPTIONAL_EXTRAS = {"torch": "learned"}

# name -> (import path of the factory, keyword arguments). Imported only when asked for, so a
# missing optional dependency of one metric never breaks the others.
BUILTIN: dict[str, tuple[str, dict]] = {
    "BLEU-1": ("muttlab.metrics.bleu:Bleu", {"n": 1}),
    "BLEU-2": ("muttlab.metrics.bleu:Bleu", {"n": 2}),
    "BLEU-3": ("muttlab.metrics.bleu:Bleu", {"n": 3}),
    "BLEU-4": ("muttlab.metrics.bleu:Bleu", {"n": 4}),
    "ROUGE-L": ("muttlab.metrics.rouge:RougeL", {}),
    "CIDEr-D": ("muttlab.metrics.cider:CiderD", {}),
    "sentBLEU": ("muttlab.metrics.sacre:SentenceBleu", {}),
    "chrF": ("muttlab.metrics.sacre:ChrF", {}),
    "TER": ("muttlab.metrics.sacre:Ter", {}),
    "METEOR-1.5": ("muttlab.metrics.meteor:Meteor", {}),
    "TERp": ("muttlab.metrics.terp:TerPlus", {}),
    # Not "BADGER": it does not reproduce the original tool's MUTT accuracies (docs/metrics.md).
    "BADGER-like": ("muttlab.metrics.badger:Badger", {}),
    "W2V-AVG": ("muttlab.metrics.w2v:W2VAvg", {}),
    "W2V-AVG-corpus": ("muttlab.metrics.w2v:W2VAvg", {"vectors": "word2vec-corpus", "model_dir": MODEL_DIR}),
    "DeltaBLEU": ("muttlab.metrics.delta_bleu:DeltaBleu", {}),
    "ReVal-LSTM": ("muttlab.metrics.reval.metric:ReVal", {"model": "lstm", "model_dir": MODEL_DIR}),
    "ReVal-TreeLSTM": ("muttlab.metrics.reval.metric:ReVal", {"model": "treelstm", "model_dir": MODEL_DIR}),
    "ML-METEOR": ("muttlab.metrics.multilevel:MultiLevelMeteor", {"model_dir": MODEL_DIR}),
    "DREEM": ("muttlab.metrics.dreem:Dreem", {"model_dir": MODEL_DIR}),
    "ML-DREEM": ("muttlab.metrics.multilevel:MultiLevelDreem", {"model_dir": MODEL_DIR}),
    "BERTScore-F1": ("muttlab.metrics.neural:BertScore", {}),
    "EmbeddingCosine": ("muttlab.metrics.neural:EmbeddingCosine", {}),
    "COMET": ("muttlab.metrics.comet:Comet", {}),
}


MAX_NAME_CHARS = 100

# The classes the lab ships, fixed when this module is imported: only an unmodified object of one of them is a
# built-in metric (:func:`is_builtin`), whatever a metric object says about itself.
SHIPPED_CLASSES = frozenset(path for path, _ in BUILTIN.values())
_BUILTIN_MODULES = frozenset(path.partition(":")[0] for path in SHIPPED_CLASSES)


def _folded(name: str) -> str:
    """The form two names are compared in: ``BLEU-4``, ``bleu-4`` and ``ＢＬＥＵ-4`` (full-width) are one name."""
    return str.casefold(unicodedata.normalize("NFKC", plain_text(name)))


def is_builtin(metric) -> bool:
    """Whether ``metric`` is one of the lab's own: an object of a class :data:`SHIPPED_CLASSES` names, loaded
    from this package, that nobody modified (:func:`~muttlab.metrics.base.modified`). Decided here, from the
    object's class and where it was loaded, never from its name, its ``origin()`` or any attribute it sets."""
    cls = type(metric)
    return (f"{cls.__module__}:{cls.__qualname__}" in SHIPPED_CLASSES and class_origin(cls) == BUILT_IN
            and not modified(metric) and metric_origin(metric) == BUILT_IN)


# What outside code this process has loaded (import paths, entry points, metric objects added in code). Once
# it holds anything, this process no longer stores a built-in metric's scores in the shared cache: code that
# ran here could have changed what those metrics compute (:func:`shares_scores`).
_OUTSIDE_CODE: list[str] = []
_OUTSIDE_LOCK = threading.Lock()


def loaded_outside_code(what: str) -> None:
    """Record that this process loaded outside code (``what`` says which)."""
    with _OUTSIDE_LOCK:
        if what not in _OUTSIDE_CODE:
            _OUTSIDE_CODE.append(what)


def outside_code_loaded() -> tuple[str, ...]:
    """The outside code this process has loaded, in order; empty when it has loaded none."""
    return tuple(_OUTSIDE_CODE)


def shares_scores(metric) -> bool:
    """Whether this process may store ``metric``'s scores in the shared score cache: a built-in metric's only
    while no outside code was loaded here; another metric's always, under its own origin (a stand-in for an
    outside metric scored in a worker, :mod:`muttlab.metrics.outside`, carries the origin the registry found)."""
    return not (is_builtin(metric) and outside_code_loaded())


# Besides the built-in names, "all": ``--metrics all`` means every metric.
RESERVED = frozenset(map(_folded, [*BUILTIN, "all"]))


def check_name(name, source: str) -> str:
    """``name`` when an outside metric may be registered under it; else a MetricPathError (ReservedName for
    a built-in metric's name) that says how to fix it."""
    if not isinstance(name, str) or not plain_text(name).strip():
        raise MetricPathError(f"{source}: a metric's name must be a non-empty string, got "
                              f"{type(name).__name__}")
    # The characters themselves: a str subclass's own casefold(), __eq__ or __hash__ is never asked.
    name = plain_text(name)
    if name != name.strip() or not name.isprintable() or "," in name or len(name) > MAX_NAME_CHARS:
        raise MetricPathError(f"{source}: metric name {name[:MAX_NAME_CHARS]!r} must be printable, without "
                              f"commas or surrounding spaces, and at most {MAX_NAME_CHARS} characters")
    if _folded(name) in RESERVED:
        raise ReservedName(f"{source}: {name!r} is the name of a built-in metric and cannot be registered again; "
                           f"give the metric a name of its own (e.g. {name + '@mine'!r})")
    return name


@dataclass(frozen=True)
class MetricInfo:
    """What ``muttlab metrics`` and the dashboard show about one metric."""

    name: str
    source: str
    available: bool
    reason: str = ""
    description: str = ""
    requires: tuple[str, ...] = ()
    higher_is_better: bool = True
    signature: str = ""




def load_callable(path: str) -> Callable:
    """Import ``package.module:attr`` and return the attribute, with a message that says what failed.

    Raises MetricPathError (a ValueError) for a malformed path, a module that cannot be imported (whatever
    it raises while importing) and a missing attribute.
    """
    if not isinstance(path, str):
        raise MetricPathError(f"metric path must be a string like package.module:callable, got {path!r}")
    module_name, sep, attr = path.strip().partition(":")
    if not sep or not module_name or not attr or not all(p.isidentifier() for p in module_name.split(".")) \
            or not all(p.isidentifier() for p in attr.split(".")):
        raise MetricPathError(f"metric path {path!r} must look like package.module:callable")
    if module_name not in _BUILTIN_MODULES:
        loaded_outside_code(f"import path {path}")
    try:
        module = importlib.import_module(module_name)
    except (Exception, SystemExit) as exc:  # an outside module may fail in any way while it is imported
        raise MetricPathError(f"cannot import {module_name!r} for metric path {path!r}: "
                              f"{type(exc).__name__}: {exc}") from exc
    target = module
    try:
        for part in attr.split("."):
            target = getattr(target, part)
    except AttributeError:
        raise MetricPathError(f"module {module_name!r} has no attribute {attr!r} (metric path {path!r})") from None
    if not callable(target):
        raise MetricPathError(f"{path!r} is a {type(target).__name__}, not a callable that returns a metric")
    return target


def _extra_hint(exc: BaseException) -> str:
    """How to install the missing package behind ``exc`` when an extra of muttlab brings it; else ''."""
    while exc is not None and not isinstance(exc, ImportError):
        exc = exc.__cause__
    extra = OPTIONAL_EXTRAS.get(((exc.name if exc is not None else None) or "").split(".")[0])
    return f"; install it with: pip install 'muttlab[{extra}]'" if extra else ""


def _instantiate(factory: Callable, origin: str, **kwargs) -> Metric:
    try:
        metric = factory(**kwargs)
    except MetricUnavailable:
        raise
    except (Exception, SystemExit) as exc:
        raise MetricPathError(f"{origin} failed when called to build the metric: {type(exc).__name__}: {exc}") \
            from None
    if not isinstance(metric, Metric):
        raise MetricPathError(f"{origin} returned {type(metric).__name__}, not a muttlab.metrics.base.Metric")
    return metric


def _entry_point_metric(ep: metadata.EntryPoint, source: str) -> Metric:
    """The metric of an entry point; it must call itself by the entry point's name."""
    loaded_outside_code(source)
    try:
        factory = ep.load()
    except (Exception, SystemExit) as exc:
        raise MetricPathError(f"{source} cannot be imported: {type(exc).__name__}: {exc}") from None
    metric = _instantiate(factory, source)
    name = contained(metric, "giving its name", getattr, metric, "name", None)
    if not isinstance(name, str) or plain_text(name) != ep.name:
        shown = plain_text(name) if isinstance(name, str) else type(name).__name__
        raise MetricPathError(f"{source} builds a metric named {shown!r}; name the entry point and the metric "
                              "alike")
    return metric


class Registry:
    """Builds metrics by name. One instance per process is enough; metrics are cached on it.

    With ``isolate``, outside metrics (import paths, entry points) are never imported into this process: a
    worker process of the registry imports and scores them, unable to write anything under ``protect``
    (:mod:`muttlab.metrics.outside`); here each is a stand-in whose signature carries the origin this
    registry found. Without it (the default for code that builds a registry itself), they are imported here,
    and this process stops storing built-in metrics' scores in the shared cache (:func:`shares_scores`).
    """

    def __init__(self, extra_paths: Iterable[str] = (), model_dir: Path | None = None,
                 use_entry_points: bool = True, isolate: bool = False, protect: Iterable[Path] = ()):
        self.extra_paths = tuple(extra_paths)
        self.model_dir = model_dir
        self.isolated = isolate
        self._worker = None
        self._protect = tuple(protect)
        self._factories: dict[str, tuple[str, Callable[[], Metric]]] = {}
        self._errors: dict[str, str] = {}
        self._instances: dict[str, Metric] = {}
        for name, (path, kwargs) in BUILTIN.items():
            kwargs = {k: (model_dir if v is MODEL_DIR else v) for k, v in kwargs.items()}
            self._factories[name] = ("built-in", self._lazy(path, kwargs))
        if use_entry_points:
            for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
                source = f"entry point {ep.name} = {ep.value}"
                self._factories[check_name(ep.name, source)] = (source, self._entry_point_factory(ep, source))
        try:
            for path in self.extra_paths:
                self.add_path(path)
        except BaseException:
            self.close()
            raise

    def _outside_worker(self):
        """The worker process of this registry's outside metrics (started on first use)."""
        if self._worker is None:
            from muttlab.metrics.outside import Worker
            self._worker = Worker(self._protect)
        return self._worker

    def _entry_point_factory(self, ep: metadata.EntryPoint, source: str) -> Callable[[], Metric]:
        if self.isolated:
            return lambda: self._outside_worker().load_entry_point(ep.name, ep.value, ep.group, source)
        return lambda: _entry_point_metric(ep, source)

    @property
    def sandbox(self) -> str:
        """How the worker of outside metrics is kept from writing (``landlock ABI 7``, or why it cannot be);
        empty when no worker was started."""
        return self._worker.sandbox if self._worker is not None else ""

    @staticmethod
    def _lazy(path: str, kwargs: dict) -> Callable[[], Metric]:
        return lambda: _instantiate(load_callable(path), path, **kwargs)

    def add(self, metric: Metric, source: str = "added in code", name: str | None = None) -> str:
        """Register a metric instance under its name, or under ``name`` (which becomes its name), replacing an
        outside metric of that name; returns the name. A built-in metric's name is refused (ReservedName)."""
        if not isinstance(metric, Metric):
            raise MetricPathError(f"{source}: {type(metric).__name__} is not a muttlab.metrics.base.Metric")
        if name is not None:
            contained(metric, "taking a name of its own", setattr, metric, "name", check_name(name, source))
        name = check_name(contained(metric, "giving its name", getattr, metric, "name", None), source)
        # From here on the object is called by the checked, plain name (a str subclass never reaches a signature).
        contained(metric, "taking its checked name", setattr, metric, "name", name)
        if not is_builtin(metric) and not self._stand_in(metric):
            cls = type(metric)
            loaded_outside_code(f"{cls.__module__}.{cls.__qualname__} ({source})")
        self._factories[name] = (source, lambda: metric)
        self._instances.pop(name, None)
        return name

    def _stand_in(self, metric) -> bool:
        return self._worker is not None and getattr(metric, "_worker", None) is self._worker \
            and type(metric).__module__ == "muttlab.metrics.outside"

    def add_path(self, path: str) -> str:
        """Register an outside metric by import path; returns its name. In an isolated registry the path is
        imported by the worker process, never here."""
        if self.isolated:
            return self.add(self._outside_worker().load_path(path), f"import path {path}")
        return self.add(_instantiate(load_callable(path), path), f"import path {path}")


    @property
    def names(self) -> list[str]:
        return list(self._factories)

    def get(self, name: str) -> Metric:
        """The metric called ``name``, built once. Raises UnknownMetric or MetricUnavailable."""
        if name not in self._factories:
            raise UnknownMetric(name, self._factories)
        source, factory = self._factories[name]
        try:
            if name not in self._instances:
                self._instances[name] = factory()
            metric = self._instances[name]
            contained(metric, "checking its requirements", metric.check_available)
        except (ImportError, ValueError) as exc:
            raise MetricUnavailable(f"{name} ({source}) cannot be loaded: {exc}{_extra_hint(exc)}") from exc
        return metric

    def info(self, name: str) -> MetricInfo:
        source = self._factories[name][0] if name in self._factories else "?"
        try:
            metric = self.get(name)
            signature = metric.signature()
        except (MetricUnavailable, MetricError) as exc:  # one metric's failure never hides the others
            return MetricInfo(name=name, source=source, available=False, reason=str(exc))
        return MetricInfo(name=name, source=source, available=True, description=metric.description,
                          requires=tuple(metric.requires), higher_is_better=metric.higher_is_better,
                          signature=signature)

    def available(self) -> list[str]:
        return [n for n in self.names if self.info(n).available]

    def resolve(self, spec: str | Iterable[str]) -> list[str]:
        """Names from ``all``, a comma-separated string or a list; unknown names raise UnknownMetric."""
        names = [s.strip() for s in spec.split(",")] if isinstance(spec, str) else [s.strip() for s in spec]
        names = [n for n in names if n]
        if names == ["all"]:
            return self.available()
        lower = {n.lower(): n for n in self._factories}
        resolved = []
        for n in names:
            if n not in self._factories and n.lower() not in lower:
                raise UnknownMetric(n, self._factories)
            resolved.append(n if n in self._factories else lower[n.lower()])
        return resolved

    def close(self) -> None:
        try:
            for metric in self._instances.values():
                contained(metric, "closing", metric.close)
        finally:
            if self._worker is not None:
                self._worker.close()
