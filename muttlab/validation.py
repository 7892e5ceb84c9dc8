"""Checks of what a caller hands the public API (:mod:`muttlab.api`).

Each public function states its arguments once, at its top: ``validation.arguments("run_grid", settings=...,
ref_counts=...)``. An argument's name means the same thing in every function (``metrics`` is always metric
names, ``references`` a list of sentences), so :data:`CHECKS` holds one checker per name. A value of the wrong
kind raises :class:`~muttlab.errors.InvalidArgument` naming the function, the argument and what was expected,
before it reaches a library that would fail on it with an exception of its own (spaCy given bytes, numpy given
NaN reference counts, a character-by-character reading of a string where a list belongs).

Mostly the kind and range of a value are checked here: whether a metric name exists is the registry's answer
(:class:`~muttlab.errors.UnknownMetric`) and whether a suite has enough references is the runner's. The
corruption types of ``corrupt`` are the exception: each must have a generator, or spaCy's parse is wasted on
a KeyError.
"""
from __future__ import annotations

import os
from collections.abc import Mapping

from muttlab.checks import (MAX_SEED, fail, instance, items, name, names, path, path_or_bytes, shown, text, texts,
                            whole, wholes)
from muttlab.errors import InvalidArgument


def _settings(value, where, argument):
    from muttlab.settings import Settings
    return instance(value, where, argument, Settings, "a Settings (muttlab.api.load_settings())")


def _registry(value, where, argument):
    from muttlab.metrics.registry import Registry
    return instance(value, where, argument, Registry, "None or a metric Registry", optional=True)


def _progress(value, where, argument):
    if value is not None and not callable(value):
        raise fail(where, argument, "None or a function progress(done, total, message)", value)
    return value


def _metrics(value, where, argument):
    """Metric names, at least one: a list, or one string (``"all"``, ``"BLEU-4,CIDEr-D"``)."""
    given = value.split(",") if isinstance(value, str) else names(value, where, argument)
    if not any(n.strip() for n in given):
        raise InvalidArgument(where, argument, f"names no metric (got {shown(value)}); name at least one "
                                               "(`muttlab metrics` lists them) or all")
    return text(value, where, argument) if isinstance(value, str) else given


def _corruptions(value, where, argument):
    return None if value is None else names(value, where, argument)


def _ref_counts(value, where, argument):
    return None if value is None else wholes(value, where, argument, 1, 10 ** 6)


def _generated_types(value, where, argument):
    """Names of corruption types that have a generator (the others are extracted from SICK pairs)."""
    from muttlab.corruptions import catalog
    from muttlab.errors import UnknownCorruption

    values = names(value, where, argument)
    known = catalog.generated_types()
    for item in values:
        if item not in known:
            raise UnknownCorruption(item, known)
    return values


def _suite_name(value, where, argument):
    if not isinstance(value, (str, os.PathLike)) or not str(value).strip() or "\0" in str(value):
        raise fail(where, argument, "a built-in suite's name (default, mutt, sample, store) or a suite file's "
                    "path", value)
    return str(path(value, where, argument))


def _suite(value, where, argument):
    from muttlab.trials import Suite
    return value if isinstance(value, Suite) else _suite_name(value, where, argument)


def _suite_file(value, where, argument):
    from muttlab.suites.model import SuiteFile
    return instance(value, where, argument, SuiteFile, "a SuiteFile (muttlab.api.read_suite(path))")


def _frame(columns: tuple[str, ...], source: str):
    def check(value, where, argument):
        import pandas as pd
        instance(value, where, argument, pd.DataFrame, f"a DataFrame from {source}")
        missing = [c for c in columns if c not in value.columns]
        if missing:
            raise InvalidArgument(where, argument, f"lacks the column(s) {', '.join(missing)}; pass the frame "
                                                   f"{source} returns")
        return value
    return check


def _batches(value, where, argument):
    """Batches of (candidates, references), at least one; each batch is checked as a metric checks its input."""
    from muttlab.errors import MetricError
    from muttlab.metrics.base import check_batch

    batches = items(value, where, argument, "a list of (candidates, references) pairs")
    if not batches:
        raise InvalidArgument(where, argument, "holds no batch; pass at least one (candidates, references) pair")
    checked = []
    for i, batch in enumerate(batches):
        pair = items(batch, where, f"{argument}[{i}]", "a (candidates, references) pair")
        if len(pair) != 2:
            raise fail(where, f"{argument}[{i}]", "a (candidates, references) pair", batch)
        try:
            checked.append(check_batch(*pair, who=f"{argument}[{i}]"))
        except MetricError as exc:
            raise InvalidArgument(where, f"{argument}[{i}]", str(exc)) from None
    return checked


def _format(value, where, argument):
    return None if value is None else name(value, where, argument)


# One checker per argument name of the public functions; each returns the value in the form the engine uses.
CHECKS = {
    "settings": _settings,
    "registry": _registry,
    "progress": _progress,
    "metrics": _metrics,
    "corruptions": _corruptions,
    "names": _corruptions,
    "ref_counts": _ref_counts,
    "suite": _suite,
    "name": _suite_name,
    "suite_file": _suite_file,
    "sentence": text,
    "references": texts,
    "types": _generated_types,
    "seed": lambda value, where, argument: whole(value, where, argument, 0, MAX_SEED),
    "study": name,
    "user": name,
    "split": name,
    "corruption": name,
    "metric": name,
    "strengths": lambda value, where, argument: wholes(value, where, argument, 1, 1000),
    "path_or_bytes": path_or_bytes,
    "format": _format,
    "batches": _batches,
    "scores": _frame(("metric", "candidate", "score", "higher_is_better", "noise_floor", "signature"),
                     "muttlab.api.score"),
    "corrupted": _frame(("corruption", "label", "corrupted"), "muttlab.api.corrupt"),
}


def arguments(where: str, **values) -> tuple:
    """Every named argument of the public function ``where`` checked by its name's checker, in order.

    Returns the checked values (lists where any list-like was given), so ``a, b = arguments("f", a=a, b=b)``.
    """
    checked = tuple(CHECKS[argument](value, where, argument) for argument, value in values.items())
    return checked[0] if len(checked) == 1 else checked


def options(where: str, function, given: Mapping) -> None:
    """The keyword ``options`` a public function hands on to ``function`` are ones it takes."""
    import inspect

    accepted = [p.name for p in inspect.signature(function).parameters.values()
                if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)]
    unknown = [key for key in given if key not in accepted]
    if unknown:
        raise InvalidArgument(where, unknown[0], f"is not an option of {function.__name__}; it takes "
                                                 f"{', '.join(accepted) or 'none'}")
