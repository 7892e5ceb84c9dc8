"""Checks of a value's kind and range, each raising :class:`~muttlab.errors.InvalidArgument` that names the
function, the argument and what was expected. A leaf: :mod:`muttlab.settings` checks its environment and
overrides with them, :mod:`muttlab.validation` the public API's arguments.
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


def fail(where: str, argument: str, expected: str, value) -> InvalidArgument:
    return InvalidArgument(where, argument, f"must be {expected}, got {shown(value)}")


def text(value, where: str, argument: str) -> str:
    """A string that is text: no lone surrogate, which no encoder or parser accepts."""
    if not isinstance(value, str):
        raise fail(where, argument, "a string", value)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidArgument(where, argument, f"holds a lone surrogate (U+{ord(value[exc.start]):04X} at character "
                                               f"{exc.start}), which is not text; decode the input as UTF-8") from None
    return value


def name(value, where: str, argument: str) -> str:
    """A non-blank string."""
    if not isinstance(value, str) or not value.strip():
        raise fail(where, argument, "a non-empty name", value)
    return text(value, where, argument)


def items(value, where: str, argument: str, expected: str) -> list:
    """The items of a list, tuple or array; a string, bytes, mapping, set or one-pass iterator is refused (a
    string would be read character by character, an iterator would be used up by the check)."""
    if value.__class__ is list or value.__class__ is tuple:
        return list(value)
    if isinstance(value, (str, bytes, bytearray, memoryview, Mapping, Set, Iterator)) \
            or not isinstance(value, Iterable):
        raise fail(where, argument, expected, value)
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
        raise fail(where, argument, f"a whole number from {low} to {high:,}", value)
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
        raise fail(where, argument, f"a number from {low} to {high}", value)
    return float(value)


def path(value, where: str, argument: str) -> Path:
    """A file system path: a non-empty string or path object without NUL characters."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str) or not value.strip() or "\0" in value:
        raise fail(where, argument, "a path (a non-empty string or pathlib.Path without NUL characters)", value)
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
        raise fail(where, argument, expected, value)
    return value


def environment(env) -> Mapping:
    """The environment ``load_settings`` reads: a mapping whose MUTTLAB_* values are strings."""
    if not isinstance(env, Mapping):
        raise fail("load_settings", "environ", "None or a mapping of variable names to strings", env)
    for key, value in env.items():
        if isinstance(key, str) and key.startswith("MUTTLAB_") and not isinstance(value, str):
            raise fail("load_settings", f"environ[{key!r}]", "a string", value)
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
