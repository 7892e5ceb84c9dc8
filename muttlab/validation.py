"""Checks of what a caller hands the public API (:mod:`muttlab.api` and :func:`muttlab.settings.load_settings`).

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

import numbers
import os
from collections.abc import Iterable, Iterator, Mapping, Set
from pathlib import Path

from muttlab.errors import InvalidArgument

# The largest seed every random generator we hand one to accepts (numpy's SeedSequence, random.Random).
MAX_SEED = 2 ** 32 - 1


def shown(value) -> str:
    """A value as an error message shows it: its type and a short repr."""
    text = repr(value)
    return f"{type(value).__name__} {text[:60] + '...' if len(text) > 60 else text}"


def _fail(where: str, argument: str, expected: str, value) -> InvalidArgument:
    return InvalidArgument(where, argument, f"must be {expected}, got {shown(value)}")


def text(value, where: str, argument: str) -> str:
    """A string that is text: no lone surrogate, which no encoder or parser accepts."""
    if not isinstance(value, str):
        raise _fail(where, argument, "a string", value)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidArgument(where, argument, f"holds a lone surrogate (U+{ord(value[exc.start]):04X} at character "
                                               f"{exc.start}), which is not text; decode the input as UTF-8") from None
    return value


def name(value, where: str, argument: str) -> str:
    """A non-blank string."""
    if not isinstance(value, str) or not value.strip():
        raise _fail(where, argument, "a non-empty name", value)
    return text(value, where, argument)


def items(value, where: str, argument: str, expected: str) -> list:
    """The items of a list, tuple or array; a string, bytes, mapping, set or one-pass iterator is refused (a
    string would be read character by character, an iterator would be used up by the check)."""
    if value.__class__ is list or value.__class__ is tuple:
        return list(value)
    if isinstance(value, (str, bytes, bytearray, memoryview, Mapping, Set, Iterator)) \
            or not isinstance(value, Iterable):
        raise _fail(where, argument, expected, value)
    return list(value)


def texts(value, where: str, argument: str) -> list[str]:
    """A list of strings (sentences: an empty one is allowed)."""
    values = items(value, where, argument, "a list of strings")
    for i, item in enumerate(values):
        text(item, where, f"{argument}[{i}]")
    return values


def names(value, where: str, argument: str) -> list[str]:
    """A list of non-empty names."""
    values = items(value, where, argument, "a list of names")
    for i, item in enumerate(values):
        name(item, where, f"{argument}[{i}]")
    return values


def whole(value, where: str, argument: str, low: int, high: int) -> int:
    """A whole number in ``low..high``: an int or numpy integer, never a bool, float or NaN."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise _fail(where, argument, f"a whole number from {low} to {high:,}", value)
    if not low <= value <= high:
        raise InvalidArgument(where, argument, f"must be from {low} to {high:,}, got {value:,}")
    return int(value)


def wholes(value, where: str, argument: str, low: int, high: int) -> list[int]:
    """A non-empty list of whole numbers in ``low..high``."""
    values = items(value, where, argument, f"a list of whole numbers from {low} to {high:,}")
    if not values:
        raise InvalidArgument(where, argument, f"is empty; give whole numbers from {low} to {high:,}")
    return [whole(item, where, f"{argument}[{i}]", low, high) for i, item in enumerate(values)]


def real(value, where: str, argument: str, low: float, high: float) -> float:
    """A finite number in ``low..high`` (no NaN, no infinity, no bool)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not low <= value <= high:
        raise _fail(where, argument, f"a number from {low} to {high}", value)
    return float(value)


def path(value, where: str, argument: str) -> Path:
    """A file system path: a non-empty string or path object without NUL characters."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str) or not value.strip() or "\0" in value:
        raise _fail(where, argument, "a path (a non-empty string or pathlib.Path without NUL characters)", value)
    return Path(text(value, where, argument))


def path_or_bytes(value, where: str, argument: str):
    """A path, or a file's content as bytes."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    return path(value, where, argument)


def instance(value, where: str, argument: str, kind: type, expected: str, optional: bool = False):
    if optional and value is None:
        return value
    if not isinstance(value, kind):
        raise _fail(where, argument, expected, value)
    return value


def _settings(value, where, argument):
    from muttlab.settings import Settings
    return instance(value, where, argument, Settings, "a Settings (muttlab.api.load_settings())")


def _registry(value, where, argument):
    from muttlab.metrics.registry import Registry
    return instance(value, where, argument, Registry, "None or a metric Registry", optional=True)


def _progress(value, where, argument):
    if value is not None and not callable(value):
        raise _fail(where, argument, "None or a function progress(done, total, message)", value)
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
        raise _fail(where, argument, "a built-in suite's name (default, mutt, sample, store) or a suite file's "
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
    "split": name,
    "corruption": name,
    "strengths": lambda value, where, argument: wholes(value, where, argument, 1, 1000),
    "path_or_bytes": path_or_bytes,
    "format": _format,
    "scores": _frame(("metric", "candidate", "score", "higher_is_better"), "muttlab.api.score"),
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


# ----------------------------------------------------------------------------- settings (load_settings)

def environment(env) -> Mapping:
    """The environment ``load_settings`` reads: a mapping whose MUTTLAB_* values are strings."""
    if not isinstance(env, Mapping):
        raise _fail("load_settings", "environ", "None or a mapping of variable names to strings", env)
    for key, value in env.items():
        if isinstance(key, str) and key.startswith("MUTTLAB_") and not isinstance(value, str):
            raise _fail("load_settings", f"environ[{key!r}]", "a string", value)
    return env


def whole_variable(env: Mapping, variable: str, what: str, low: int) -> int | None:
    """The whole number an environment variable holds (None when unset or blank)."""
    value = (env.get(variable) or "").strip()
    if not value:
        return None
    try:
        number = int(value)
    except ValueError:
        number = None
    # isdigit is true of '²', which int() refuses; int() alone takes '-3' and '1_000'.
    if number is None or not value.isdigit() or number < low:
        raise InvalidArgument("load_settings", "environ", f"sets {variable}={value!r}: give a whole number of {what}")
    return number


# Bounds of the whole-number settings; the others need only be non-negative.
_SETTING_RANGES = {"workers": (1, 1024), "seed": (0, MAX_SEED), "session_ttl": (60, 10 ** 9)}


def setting_overrides(overrides: Mapping, fields) -> dict:
    """``load_settings``' keyword overrides, by the annotation of the :class:`~muttlab.settings.Settings` field
    each names: paths become :class:`~pathlib.Path`, lists tuples. None leaves a field as it is."""
    from muttlab.settings import Limits

    annotations = {f.name: str(f.type).replace(" | None", "") for f in fields}
    checked = {}
    for key, value in overrides.items():
        if key not in annotations:
            raise InvalidArgument("load_settings", key, f"is not a setting; the settings are {', '.join(annotations)}")
        kind = annotations[key]
        if value is None:
            checked[key] = value
        elif kind == "Path":
            checked[key] = path(value, "load_settings", key)
        elif kind == "bool":
            checked[key] = instance(value, "load_settings", key, bool, "True or False")
        elif kind == "str":
            checked[key] = text(value, "load_settings", key)
        elif kind == "int":
            checked[key] = whole(value, "load_settings", key, *_SETTING_RANGES.get(key, (0, 10 ** 9)))
        elif kind == "float":
            checked[key] = real(value, "load_settings", key, 0.0, 1e9)
        elif kind == "tuple[int, ...]":
            checked[key] = tuple(wholes(value, "load_settings", key, 1, 10 ** 6))
        elif kind == "tuple[str, ...]":
            checked[key] = tuple(names(value, "load_settings", key))
        elif kind == "Limits":
            checked[key] = instance(value, "load_settings", key, Limits, "a muttlab.settings.Limits")
        else:  # a field of a kind not listed here is the dataclass's to check
            checked[key] = value
    return checked
