"""The one interface every metric implements.

A metric sees only strings: a batch of candidates, each with its list of references, and returns one
score per candidate. It knows nothing of corruptions, trials or caches.
"""
from __future__ import annotations

import hashlib
import importlib.util
import inspect
import re
import secrets
import sys
import weakref
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Set
from functools import lru_cache
from itertools import chain
from pathlib import Path
from typing import Callable, ClassVar, Sequence

import numpy as np


# The errors a metric raises belong to the one tree in muttlab.errors; they are re-exported here for metric authors.
from muttlab.errors import MetricError, MetricUnavailable, MuttlabError  # noqa: F401  (re-export)
from muttlab.settings import Limits, active_limits


def require_module(module: str, hint: str) -> None:
    """Raise :class:`MetricUnavailable` with ``hint`` unless ``module`` is installed.

    The module is found, not imported: the catalogue checks every metric, and importing the neural stack to do
    so (torch, transformers, sentence-transformers: 5 s) held back a server's opening and ``muttlab metrics``.
    A metric imports its module when it loads, and a module that is installed but broken fails there, reported
    like any scoring problem."""
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package missing; a module blocked in sys.modules
        found = False
    if not found:
        raise MetricUnavailable(hint)


def _shown(value) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text[:40] + '...' if len(text) > 40 else text}"


def check_batch(candidates, references, who: str = "input") -> tuple[list[str], list[list[str]]]:
    """The checked batch as lists; the one validation of what a metric may be asked to score.

    ``candidates`` is a list (or tuple, array...) of strings; ``references`` holds one non-empty list of
    strings per candidate. An empty or blank candidate or reference is text to score, not an error: an empty
    output is what some challenge sets test (MSLC24's empty hypotheses, DEMETR's full-stop-only translation),
    and some of the study's pools hold a blank reference. A metric scores it as its reference implementation
    does, or declares ``scores_empty_text = False`` (:meth:`Metric.score` then gives it NaN). A bare string
    where a list is expected is an error, never a list of characters. No sentence is over the active
    :class:`~muttlab.settings.Limits` (words, characters), no candidate has more references than allowed,
    and no sentence holds a lone surrogate (not text).

    Raises:
      MetricError: naming ``who`` (the metric), the candidate, the reference and, for a limit, the setting.
    """
    limits = active_limits()
    candidates = _as_list(candidates, who, "candidates", "a list of candidate sentences")
    references = _as_list(references, who, "references", "one list of reference sentences per candidate")
    if len(candidates) != len(references):
        raise MetricError(f"{who}: got {len(candidates)} candidates but {len(references)} reference lists; "
                          "pass one list of references per candidate")
    # A grid repeats its sentences (a pool's references under every item, at 5, 10 and 20 references), so
    # each distinct sentence is checked once; only a batch with a problem is walked item by item, so that
    # the error names the problem's first occurrence.
    try:
        return candidates, _checked_distinct(candidates, references, limits)
    except (MetricError, TypeError):  # TypeError: an unhashable value where a string should be
        return candidates, _checked_in_order(candidates, references, who, limits)


def _checked_distinct(candidates: list, references: list, limits: Limits) -> list[list[str]]:
    """The reference lists, when the batch is valid; a MetricError without details when it is not."""
    checked = [_as_list(refs, "", "", "") for refs in references]
    if not all(checked) or max(map(len, checked), default=0) > limits.max_refs:
        raise MetricError("")
    known = _valid_sentences(limits)
    distinct_candidates = set(candidates)
    for text in distinct_candidates - known:
        _check_sentence(text, "", "", limits)
    new = set(chain.from_iterable(checked)) - known
    for text in new:
        _check_sentence(text, "", "", limits)
    known |= new
    known |= distinct_candidates
    return checked


# Sentences found valid under the active limits: every metric of a run is handed the same sentences.
_VALID: tuple[Limits, set[str]] | None = None
_VALID_MAX = 1_000_000  # a long-lived server starts over past this many


def _valid_sentences(limits: Limits) -> set[str]:
    global _VALID
    if _VALID is None or _VALID[0] != limits or len(_VALID[1]) > _VALID_MAX:
        _VALID = (limits, set())
    return _VALID[1]


def _checked_in_order(candidates: list, references: list, who: str, limits: Limits) -> list[list[str]]:
    for i, cand in enumerate(candidates):
        _check_sentence(cand, who, f"candidate {i}", limits)
    checked = []
    for i, refs in enumerate(references):
        refs = _as_list(refs, who, f"references[{i}]", f"a list of reference sentences for candidate {i}, "
                                                       f"e.g. [[\"a cat sits\"]] for one candidate")
        if not refs:
            raise MetricError(f"{who}: candidate {i} has an empty reference list; give it at least one reference")
        if len(refs) > limits.max_refs:
            raise MetricError(f"{who}: " + limits.exceeded("max_refs", len(refs), f"candidate {i}"))
        for j, ref in enumerate(refs):
            _check_sentence(ref, who, f"reference {j} of candidate {i}", limits)
        checked.append(refs)
    return checked


def _as_list(value, who: str, what: str, expected: str) -> list:
    if value.__class__ is list or value.__class__ is tuple:  # the common case, without the ABC checks below
        return list(value)
    # A string is iterable, but scoring its characters as sentences is never what was meant.
    if isinstance(value, (str, bytes, bytearray, Mapping, Set)) or not isinstance(value, Iterable):
        raise MetricError(f"{who}: {what} must be {expected}, got {_shown(value)}")
    return list(value)


def _check_sentence(text, who: str, what: str, limits: Limits) -> None:
    if not isinstance(text, str):
        raise MetricError(f"{who}: {what} must be a string, got {_shown(text)}")
    if len(text) > limits.max_chars:
        raise MetricError(f"{who}: " + limits.exceeded("max_chars", len(text), what))
    words = len(text.split())
    if words > limits.max_words:
        raise MetricError(f"{who}: " + limits.exceeded("max_words", words, what))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise MetricError(f"{who}: {what} holds a lone surrogate (U+{ord(text[exc.start]):04X} at "
                          f"character {exc.start}), which is not text; decode the input as UTF-8") from None


BUILT_IN = "built-in"
# Metric classes defined in this package's own modules are the built-in ones.
_PACKAGE_DIRS = tuple({Path(__file__).resolve().parent, Path(sys.modules["muttlab"].__file__).resolve().parent})
_ORIGINS: "weakref.WeakKeyDictionary[type, str]" = weakref.WeakKeyDictionary()
# Code with no source to hash (typed into an interpreter) is keyed to this process: no other process can
# share its cached scores.
_PROCESS_TOKEN = secrets.token_hex(16)
_SIGNATURE_SPECIALS = "|\\"


def escape_field(text: str, specials: str = "") -> str:
    """``text`` as one signature field: ``\\``, ``|`` and any of ``specials`` are escaped with a backslash and
    control characters are written ``\\xNN``, so fields never run into each other (a name ``BLEU-4|n:4`` is
    ``BLEU-4\\|n:4``, never two fields)."""
    return _escapable(specials).sub(_escape_one, text)


@lru_cache(maxsize=None)
def _escapable(specials: str) -> re.Pattern:
    return re.compile(f"[{re.escape(_SIGNATURE_SPECIALS + specials)}\\x00-\\x1f\\x7f]")


def _escape_one(match: re.Match) -> str:
    ch = match.group()
    return f"\\x{ord(ch):02x}" if ch < " " or ch == "\x7f" else "\\" + ch


def plain_text(value) -> str:
    """``value`` as a plain ``str`` when it is a string of any class: the characters it holds, whatever its
    class says of itself (a ``str`` subclass's own ``__str__``, ``casefold`` or ``__eq__`` is never asked)."""
    return value if value.__class__ is str else str.__str__(value)


def class_origin(cls: type) -> str:
    """The origin of a metric class, worked out once per class: ``built-in`` for a class of this package,
    else its import path and the SHA-256 of its module's source."""
    found = _ORIGINS.get(cls)
    if found is None:
        found = _ORIGINS[cls] = _find_origin(cls)
    return found


def _find_origin(cls: type) -> str:
    module = sys.modules.get(cls.__module__)
    file = getattr(module, "__file__", None)
    # The class must be the one its module holds under its name: a class that only claims a built-in
    # module in its ``__module__`` is not that module's class.
    if file and cls.__module__.startswith("muttlab.") and getattr(module, cls.__qualname__, None) is cls \
            and any(Path(file).resolve().is_relative_to(d) for d in _PACKAGE_DIRS):
        return BUILT_IN
    where = f"{cls.__module__}:{cls.__qualname__}"
    try:
        source = Path(file).read_bytes() if file else inspect.getsource(cls).encode("utf-8", "surrogatepass")
    except (OSError, TypeError):
        return f"{where}@process:{_PROCESS_TOKEN}"
    return f"{where}@sha256:{hashlib.sha256(source).hexdigest()}"


# Origins the registry assigned to metric objects of its own (an outside metric's stand-in in this process,
# muttlab.metrics.outside): id -> (weak reference, origin). Never set from anything the metric reports.
_ASSIGNED: dict[int, tuple[weakref.ref, str]] = {}


def assign_origin(metric, origin: str) -> None:
    """Record where ``metric``'s code was loaded from, as the registry found it (never ``built-in``)."""
    if origin == BUILT_IN:
        raise ValueError("an assigned origin names outside code")
    key = id(metric)
    _ASSIGNED[key] = (weakref.ref(metric, lambda _, key=key: _ASSIGNED.pop(key, None)), origin)


def modified(metric) -> bool:
    """Whether ``metric`` holds, as its own attribute, a callable in place of one its class defines (a
    built-in ``Bleu`` whose ``_score`` was replaced): such an object no longer computes what its class does."""
    own = getattr(metric, "__dict__", None)
    if not isinstance(own, dict):
        return False
    cls = type(metric)
    return any(callable(value) and any(key in vars(k) for k in cls.__mro__) for key, value in list(own.items()))


def metric_origin(metric) -> str:
    """Where ``metric``'s code comes from, decided from where it was loaded, never from what it reports:
    the origin the registry assigned it; else ``built-in`` for an unmodified object of a class of this
    package; else its class's import path and source digest (:func:`class_origin`). A built-in object that
    was modified (:func:`modified`) is keyed to this process: no other process can share its scores."""
    entry = _ASSIGNED.get(id(metric))
    if entry is not None and entry[0]() is metric:
        return entry[1]
    cls = type(metric)
    origin = class_origin(cls)
    if origin == BUILT_IN and modified(metric):
        return f"modified {cls.__module__}:{cls.__qualname__}@process:{_PROCESS_TOKEN}"
    return origin


def signature_of(metric) -> str:
    """``metric``'s signature as :class:`Metric` builds it, whatever its class or the object itself defines
    under the name ``signature``: what the runner keys the score cache with."""
    return Metric.signature(metric)


def _label(metric) -> str:
    """How an error names a metric: its name, and for an outside metric its class."""
    name = _quietly(lambda: metric.name)
    cls = type(metric)
    shown = name if isinstance(name, str) and name else cls.__qualname__
    return shown if metric_origin(metric) == BUILT_IN else f"{shown} ({cls.__module__}.{cls.__qualname__})"


def _quietly(get):
    """``get()``, or None when it raises: describing a failure must not fail in its turn (an outside
    exception's ``__str__`` or metric's ``name`` may raise anything)."""
    try:
        return get()
    except KeyboardInterrupt:
        raise
    except BaseException:
        return None


def _exception_text(exc: BaseException) -> str:
    text = _quietly(lambda: str(exc).strip())
    text = text.splitlines()[0] if isinstance(text, str) and text else ""
    text = text if len(text) <= 200 else text[:200] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def contained(metric, doing: str, call: Callable, *args, **kwargs):
    """``call(*args, **kwargs)`` on behalf of ``metric``. Whatever else it raises (an outside metric's own
    exception, RecursionError, SystemExit...) becomes one MetricError naming the metric and what it was
    doing; a MuttlabError and a real Ctrl-C (KeyboardInterrupt) go through as they are."""
    try:
        return call(*args, **kwargs)
    except (MuttlabError, KeyboardInterrupt):
        raise
    except BaseException as exc:
        raise MetricError(f"{_label(metric)} failed while {doing}: {_exception_text(exc)}") from exc


def _text(metric, value, what) -> str:
    if isinstance(value, str):
        return plain_text(value)
    return plain_text(contained(metric, f"giving its {what} as text", str, value))


def _as_scores(metric, raw, count: int) -> np.ndarray:
    """What ``_score`` returned as float64 scores, or a MetricError: one number per candidate, none NaN."""
    scores = contained(metric, "scoring (its scores are no array)", np.asarray, raw)
    if scores.dtype.kind not in "biuf":
        raise MetricError(f"{_label(metric)}: returned {type(raw).__name__} of {scores.dtype} values for {count} "
                          "candidates; return one number per candidate")
    if scores.shape != (count,):
        raise MetricError(f"{_label(metric)}: returned {scores.shape} scores for {count} candidates")
    scores = scores.astype(np.float64, copy=False)
    nan = np.flatnonzero(np.isnan(scores))
    if nan.size:
        raise MetricError(f"{_label(metric)}: returned NaN for candidate {nan[0]}; return a number for every "
                          "candidate")
    return scores


def empty_items(candidates: Sequence[str], references: Sequence[Sequence[str]]) -> np.ndarray:
    """Which items hold empty text: a blank candidate, or references that are all blank."""
    return np.fromiter((not c.strip() or not any(r.strip() for r in refs) for c, refs in zip(candidates, references)),
                       dtype=bool, count=len(candidates))


class Metric(ABC):
    """Base class of all metrics.

    Subclasses set the class attributes, take their parameters as keyword arguments in ``__init__``,
    return them from :meth:`params`, and implement :meth:`_score`.

    Attributes:
      name: registry name, following the paper (``BLEU-4``, ``CIDEr-D``, ``METEOR-1.5``).
      version: bumped whenever the numbers a metric produces change; part of the cache key.
      higher_is_better: False for error rates (TER, TERp); accuracy rules flip the sign.
      requires: human-readable requirements (``java``, ``glove-6B-50d``...), shown by ``muttlab metrics``.
      corpus_dependent: True when a sentence's score depends on the rest of the batch (CIDEr's document
        frequencies come from the batch's references); the runner then caches per batch context.
      parallel: False when the runner must score the metric in-process rather than rebuild it by name in
        worker processes (a JVM behind it, a model that is slow to load, code vectorised over the batch).
      forkable: True when the metric holds only Python and numpy state (no JVM, model, thread or open file),
        so that a forked copy of the process can score with it: the runner then scores it on a second core
        beside the others (:meth:`muttlab.engine.runner._Scorer.score_each`).
      languages: ISO 639-1 codes of the target languages the metric handles (``("en",)`` for metrics built on
        English resources); None for a language-independent metric. Pairs in another language are reported
        as unsupported rather than scored.
      language_reason: why ``languages`` is limited (the English resources it is built on), shown beside a pair
        it does not score.
      uses_source: True when the metric reads the source sentence (COMET); ``_score`` then takes ``sources``.
      score_range: (lowest, highest) score the metric can give (``inf`` for unbounded), or None when not
        declared; ``muttlab check-metric`` checks scores against it.
      noise_floor: the size of a score difference that is numeric noise for this metric (float32 encoders:
        ~1e-6, relative to max(1, |score|)); two scores closer than this are tied whatever the tie setting
        (:meth:`muttlab.rules.Rules.for_metric`). 0 for metrics computed exactly in float64.
      reports_progress: True when ``_score`` takes a ``progress`` keyword, a callable it calls with
        ``(parts done, parts)`` as the parts of a long call finish (a model's encoding passes, a JVM's batches),
        so that a caller can show a batch's progress before the batch is done. The metric knows nothing of who
        listens; it reports ``(parts, parts)`` last.
      scores_empty_text: True when the metric scores an empty (or blank) candidate, and a candidate whose
        references are all empty, as its reference implementation does (sacreBLEU's BLEU and chrF give 0);
        False when it cannot score such an item (a model with nothing to encode): :meth:`score` then gives
        that item NaN, which reports count as unsupported, and scores the rest.
    """

    name: ClassVar[str]
    version: ClassVar[str] = "1"
    higher_is_better: ClassVar[bool] = True
    requires: ClassVar[tuple[str, ...]] = ()
    corpus_dependent: ClassVar[bool] = False
    parallel: ClassVar[bool] = True
    forkable: ClassVar[bool] = False
    description: ClassVar[str] = ""
    languages: ClassVar[tuple[str, ...] | None] = None
    language_reason: ClassVar[str] = ""
    uses_source: ClassVar[bool] = False
    score_range: ClassVar[tuple[float, float] | None] = None
    noise_floor: ClassVar[float] = 0.0
    scores_empty_text: ClassVar[bool] = True
    reports_progress: ClassVar[bool] = False

    def params(self) -> dict[str, object]:
        """The parameters that change the numbers, by name. Listed explicitly by each metric."""
        return {}

    def signature(self) -> str:
        """``name|key:value|...|v:version``, then ``|origin:...`` for a metric from outside this package: every
        setting that changes a score; the cache key's prefix.

        Each field is escaped (:func:`escape_field`), so no name or parameter value can stand for other
        fields; the origin (:meth:`origin`) keeps an outside metric's signature apart from every built-in's.
        Built by this class alone: a subclass that defines ``signature`` or ``origin`` is refused.
        """
        params = contained(self, "listing its parameters", self.params)
        if not isinstance(params, Mapping):
            raise MetricError(f"{_label(self)}: params() returned {_shown(params)}; return a dict of the "
                              "parameters that change the scores")
        fields = [escape_field(_text(self, self.name, "name"))]
        fields += [f"{escape_field(_text(self, k, 'parameter name'), ':')}:{escape_field(_text(self, v, k))}"
                   for k, v in params.items()]
        fields.append(f"v:{escape_field(_text(self, self.version, 'version'))}")
        origin = metric_origin(self)
        if origin != BUILT_IN:
            fields.append(f"origin:{escape_field(origin)}")
        return "|".join(fields)

    def origin(self) -> str:
        """Where the metric's code comes from (:func:`metric_origin`): ``built-in`` for an unmodified metric of
        this package, else the class's import path and the SHA-256 of its module's source
        (``pkg.mod:Class@sha256:<hex>``), or the origin the registry found for an outside metric's worker."""
        return metric_origin(self)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for attr in ("signature", "origin"):
            if attr in vars(cls):
                raise TypeError(f"{cls.__module__}.{cls.__qualname__} defines {attr}(); a metric's signature is "
                                "built by muttlab.metrics.base.Metric from name, params() and version")

    def sick_splits_seen(self) -> dict[str, str]:
        """The SICK splits a learned metric saw before scoring (split -> how: ``training``, ``model
        selection``). The runner warns when such a metric scores trials taken from those SICK pairs: there
        it measures memory, not generalisation. Empty for metrics that learned nothing from SICK."""
        return {}

    def check_available(self) -> None:
        """Raise :class:`MetricUnavailable` with an install hint when a requirement is missing."""

    def prepare(self) -> None:
        """Start now what the first score would start (a model read, a JVM started), so that a caller can say
        it is loading rather than scoring while it happens. Nothing for most metrics."""

    def close(self) -> None:
        """Release external resources (processes, models). Safe to call twice."""

    def corpus_stats(self, references: list[list[str]]) -> object | None:
        """The batch-level statistics of a corpus-dependent metric (CIDEr-D: document frequencies), or None
        when the metric has none it can share. Scoring any slice of the batch with them (``score(...,
        stats=...)``) gives the scores of the whole batch, so a batch can be split across machines."""
        return None

    def _score_with_stats(self, candidates: list[str], references: list[list[str]], stats) -> np.ndarray:
        raise MetricError(f"{self.name} has no shareable corpus statistics; score the whole batch instead")

    def score(self, candidates: Sequence[str], references: Sequence[Sequence[str]],
              sources: Sequence[str] | None = None, stats=None,
              progress: Callable[[int, int], None] | None = None) -> np.ndarray:
        """Score each candidate against its references (and, for a metric that reads it, its source sentence).

        ``sources`` is optional (challenge sets carry one, MUTT trials do not) and ignored by metrics whose
        ``uses_source`` is False. ``stats`` comes from :meth:`corpus_stats` of the whole batch when this is a
        slice of it. ``progress(done, total)`` is told as the call's parts finish, by a metric that
        :attr:`reports_progress` (others ignore it).

        The batch is checked first, once for every metric, by :func:`check_batch` (lists of strings, no bare
        string for a list, no None/NaN, at least one reference per candidate, within the
        :class:`~muttlab.settings.Limits`); :meth:`_score` only ever sees a valid batch. A metric that does not
        score empty text never sees it either: such an item (see :func:`empty_items`) is NaN.

        Returns:
          float64 array with one score per candidate, in the metric's own orientation (NaN: unsupported).
        Raises:
          MetricError: the batch is malformed or over a limit; the message names the candidate, the
            reference and, for a limit, the setting that raises it.
        """
        candidates, references = check_batch(candidates, references, self.name)
        if self.uses_source and sources is not None and len(sources) != len(candidates):
            raise MetricError(f"{self.name}: got {len(sources)} sources for {len(candidates)} candidates; "
                              "pass one source per candidate (or none)")
        if not self.scores_empty_text:
            empty = empty_items(candidates, references)
            if empty.any():
                keep = np.flatnonzero(~empty)
                scores = np.full(len(candidates), np.nan)
                if len(keep):
                    scores[keep] = self.score([candidates[i] for i in keep], [references[i] for i in keep],
                                              None if sources is None else [sources[i] for i in keep], stats,
                                              progress)
                return scores
        if not candidates:
            return np.zeros(0, dtype=np.float64)
        if self.uses_source:
            raw = contained(self, "scoring", self._score, candidates, references,
                            None if sources is None else list(sources))
        elif stats is not None:
            raw = contained(self, "scoring", self._score_with_stats, candidates, references, stats)
        elif progress is not None and self.reports_progress:
            raw = contained(self, "scoring", self._score, candidates, references, progress=progress)
        else:
            raw = contained(self, "scoring", self._score, candidates, references)
        return _as_scores(self, raw, len(candidates))

    @abstractmethod
    def _score(self, candidates: list[str], references: list[list[str]]) -> np.ndarray:
        """Score a validated, non-empty batch."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.signature()}>"
