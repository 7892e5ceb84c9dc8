"""Errors a user can fix. The CLI prints them without a traceback and exits with code 2."""
from __future__ import annotations


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
