"""The one exception tree of MUTT Lab. Every error a user can fix derives from :class:`MuttlabError`.

The CLI prints any of them as one line on stderr and exits with status 2; the dashboard shows the message.
Each subclass also derives from the built-in exception it refines (``ValueError``, ``KeyError``,
``RuntimeError``), so code that catches those keeps working.

* :class:`DataError` — a data file is missing or malformed (names the file and line).
* :class:`MetricError` — a metric cannot score this input (empty batch, a candidate without references...).
* :class:`MetricPathError` — ``--metric-path`` / ``MUTTLAB_METRICS`` names nothing that builds a metric;
  :class:`ReservedName` — an outside metric takes a built-in metric's name.
* :class:`MetricUnavailable` — a metric's requirement (Java, a model, a package) is missing.
* :class:`ResourceMissing` — a language resource (spaCy pipeline, GloVe vectors, WordNet) is not installed.
* :class:`InvalidArgument` — a public function (:mod:`muttlab.api`, ``load_settings``) was given a value of the
  wrong kind or range (names the function, the argument and what it takes; :mod:`muttlab.validation`).
* :class:`UnknownName` — a metric, corruption type or study name that does not exist (lists the known ones).
* :class:`PermissionDenied` — the caller's role may not do this (or the server is read-only).
* The pair store adds :class:`~muttlab.pairs.store.ConflictError`, ``ReadOnlyError`` and ``PairNotFound``.
"""
from __future__ import annotations

from typing import Iterable


class MuttlabError(Exception):
    """A problem with the user's input or setup: the message names it and says how to fix it."""


class DataError(MuttlabError):
    """A data file is missing or malformed. The message names the file, the line and what was expected."""

    def __init__(self, path, problem: str, line: int | None = None, fix: str | None = None):
        where = f"{path}" if line is None else f"{path}, line {line}"
        message = f"{where}: {problem}"
        if fix:
            message += f" ({fix})"
        super().__init__(message)
        self.path = path
        self.line = line
        self.problem = problem
        self.fix = fix

    def __reduce__(self):  # a worker process's error reaches the caller whole
        return type(self), (self.path, self.problem, self.line, self.fix), self.__dict__


class MetricError(MuttlabError, ValueError):
    """The input cannot be scored (an empty candidate list, a candidate without references...)."""


class MetricPathError(MuttlabError, ValueError):
    """An outside metric's import path (``package.module:callable``) cannot be imported or does not give a metric."""


class ReservedName(MetricPathError):
    """An outside metric under a built-in metric's name (or one that reads like it); it needs a name of its own."""


class MetricUnavailable(MuttlabError, RuntimeError):
    """A requirement is missing (Java, a model, a package). The message says how to install it."""


class ResourceMissing(MuttlabError, RuntimeError):
    """A language resource is not installed; the message says how to install it."""


class InvalidArgument(MuttlabError, ValueError, TypeError):
    """An argument of a public function has the wrong kind or range: None where a string belongs, a string where
    a list belongs, NaN where a whole number belongs. Both a ValueError and a TypeError, as Python would raise."""

    def __init__(self, function: str, argument: str, problem: str):
        super().__init__(f"{function}: {argument} {problem}")
        self.function = function
        self.argument = argument
        self.problem = problem

    def __reduce__(self):  # a worker process's error reaches the caller whole
        return type(self), (self.function, self.argument, self.problem), self.__dict__


class UnknownName(MuttlabError, KeyError):
    """A name that is not registered; the message lists the known ones."""

    kind = "name"
    hint = ""

    def __init__(self, name: str, known: Iterable[str]):
        self.name = name
        self.known = tuple(known)
        message = f"unknown {self.kind} {name!r}; known: {', '.join(self.known)}"
        super().__init__(message + (f" ({self.hint})" if self.hint else ""))

    def __str__(self) -> str:  # KeyError would quote the message
        return self.args[0]

    def __reduce__(self):  # a worker process's error reaches the caller whole
        return type(self), (self.name, self.known), self.__dict__


class UnknownMetric(UnknownName):
    kind = "metric"
    hint = "or register one with --metric-path package.module:callable"

    def __init__(self, name: str, known: Iterable[str]):
        super().__init__(name, sorted(known))


class UnknownCorruption(UnknownName):
    kind = "corruption type"


class PermissionDenied(MuttlabError, PermissionError):
    """The caller may not do this: their role lacks the permission, or the server is read-only.

    Raised below the user interface (:func:`muttlab.access.roles.require`), so a page that forgot to hide a
    control still changes nothing.
    """
