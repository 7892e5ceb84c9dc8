"""What a message may not show: the password of a database URL (anywhere: CLI errors, pages) and, on a page
that anyone can open, where the server keeps its files. :func:`scrub` is the one function every shown message
goes through (the CLI's error line, the dashboard's Markdown and caption text).
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from muttlab.settings import Settings

# scheme://user:password@host — the password is whatever stands between the first ":" after the user and
# the last "@" before the host (a password may itself hold "@" or ":").
_URL_CREDENTIALS = re.compile(r"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*://[^:/@\s'\"]*):(?P<password>[^\s'\"/]*)@"
                              r"(?=[^@\s'\"]*(?:[\s'\"/]|$))")
# key=value forms of a password (libpq connection strings, query strings).
_KEY_PASSWORD = re.compile(r"(?i)\b(?P<key>password|passwd|pwd)=(?P<value>[^\s&;'\"]+)")
HIDDEN = "***"


def secrets(text: object) -> str:
    """``text`` with the password of every URL (``postgresql://user:secret@host`` → ``user:***@host``) and every
    ``password=...`` replaced."""
    out = _URL_CREDENTIALS.sub(lambda m: f"{m.group('head')}:{HIDDEN}@", str(text))
    return _KEY_PASSWORD.sub(lambda m: f"{m.group('key')}={HIDDEN}", out)


def server_paths(text: str, settings: Settings) -> str:
    """``text`` with the server's folders (data dir, cache dir, model dir, the installed package) replaced by
    their names (``<data dir>``...), longest first so that a folder inside another keeps its own name."""
    for form, name in _spelled(settings.data_dir, settings.cache_dir, settings.model_dir_override):
        text = text.replace(form, name)
    return text


@lru_cache(maxsize=64)
def _spelled(data_dir, cache_dir, model_dir) -> tuple[tuple[str, str], ...]:
    """Each folder's spellings (as set, and resolved) with its name, longest first. Kept per set of folders:
    resolving a path asks the file system once per component, and every message of every page run came here."""
    import muttlab

    folders = {"<data dir>": data_dir, "<cache dir>": cache_dir, "<model dir>": model_dir,
               "<muttlab>": Path(muttlab.__file__).parent}
    spelled = []
    for name, folder in folders.items():
        if folder is None:
            continue
        for form in {str(folder), str(Path(folder).expanduser().resolve())}:
            if len(form) > 1:
                spelled.append((form.rstrip("/"), name))
    return tuple(sorted(spelled, key=lambda item: -len(item[0])))


def scrub(text: object, settings: Settings | None = None) -> str:
    """``text`` fit to show: no secret; with ``settings`` (a page anyone can open), no server folder either."""
    out = secrets(text)
    return out if settings is None else server_paths(out, settings)
