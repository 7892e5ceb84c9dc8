"""Challenge-set files on the Challenge and Drill-down pages: uploads and data-dir files read within the size
and pair limits (the command line's ``MUTTLAB_MAX_UPLOAD_MB`` and ``MUTTLAB_MAX_PAIRS``), the uploads the server
holds for links (``suite=upload:<sha256>``, in the process cache's ``uploads`` region, capped in bytes), and their scoring, once per file and
metrics for the whole server."""
from __future__ import annotations

import hashlib
from typing import Callable

from muttlab import api
from muttlab.dashboard.cell_view import read_data_file
from muttlab.dashboard.services import budget
from muttlab.dashboard.services.core import memoised, queued_with_progress, registry
from muttlab.dashboard.shared import region
from muttlab.errors import DataError, MuttlabError
from muttlab.api import installed_state
from muttlab.settings import Settings


# A challenge set's content: one file's bytes, or a folder's (MSLC24-B's) files' bytes keyed <pair>/<file name>.
Content = bytes | dict[str, bytes]


def read_challenge(settings: Settings, data: Content, name: str, format: str | None,
                   progress: Callable[[int, int, str], None] | None = None) -> tuple[object, tuple]:
    """A challenge set's content as a :class:`muttlab.suites.SuiteFile` (``muttlab.api.read_suite``), kept for
    the whole server by content, format and name; with that key, for :func:`challenge`. ``progress`` (a page's
    bar) is told the lines read, when it is read here.

    Raises:
      MuttlabError (DataError): over the upload size limit (a folder's files together) or the pair limit, not
        UTF-8, no known format, no readable row; DemoLimit (the public demo's share: reading is the visitor's
        computation too).
    """
    from muttlab.settings import active_limits

    limits = active_limits()
    size = len(data) if isinstance(data, bytes) else sum(len(v) for v in data.values())
    if size > limits.max_upload_bytes:
        raise DataError(name, limits.exceeded("max_upload_mb", size / 2 ** 20,
                                              "the file" if isinstance(data, bytes) else "the set"))
    _check_pairs(limits, _records_at_most(data), name, "the file" if isinstance(data, bytes) else "the set")
    key = ("challenge-file", content_digest(data), name, format)

    def lines_read(done: int, total: int) -> None:
        progress(done, total, f"reading {name}: {done:,} of {total:,} lines")

    def read():
        suite_file = api.read_suite(data, format=format, name=name, progress=lines_read if progress else None)
        _check_pairs(limits, len(suite_file.suite.trials) + sum(suite_file.not_applied.values()), name,
                     "the file" if isinstance(data, bytes) else "the set")
        return suite_file

    return memoised(key, read, settings, costly="reading the challenge set"), key


def content_digest(data: Content) -> str:
    """The sha256 of a challenge set's content: of a file's bytes; of a folder's files, of each name and content
    in name order, each preceded by its length (so no two different folders give the same bytes to hash)."""
    if isinstance(data, bytes):
        return hashlib.sha256(data).hexdigest()
    digest = hashlib.sha256(b"muttlab-folder\0")
    for key in sorted(data):
        for part in (key.encode("utf-8", "surrogatepass"), data[key]):
            digest.update(len(part).to_bytes(8, "big") + part)
    return digest.hexdigest()


def _records_at_most(data: Content) -> int:
    """How many records a file can hold at most, counted before it is decoded: a line-based file (TSV, JSON
    lines) one per line after the first (a header, or a record: one too many is harmless); a JSON document
    (DEMETR's, a ``[`` first) cannot be told before it is parsed, so 0 here and its records are counted after.
    A folder's files (MSLC24-B): the lines of its pairs' ``types.tsv``, one or two pairs each, counted after."""
    if not isinstance(data, bytes):
        return sum(v.count(b"\n") for k, v in data.items() if k.rpartition("/")[2] == "types.tsv")
    if data.lstrip()[:1] == b"[":
        return 0
    return data.count(b"\n") + (0 if data.endswith(b"\n") else 1) - 1


def _check_pairs(limits, count: int, name: str, what: str = "the file") -> None:
    if count > limits.max_pairs:
        raise DataError(name, limits.exceeded("max_pairs", count, what) + "; split it into smaller files")


def challenge(settings: Settings, suite_file, file_key: tuple, metrics: tuple[str, ...],
              progress: Callable[[int, int, str], None] | None = None):
    """``muttlab.api.run_challenge`` of a read challenge set, once per file and metrics for the whole server;
    ``progress`` gets its reports (per metric, each side of the pairs).

    Returns:
      :class:`muttlab.suites.contrastive.ChallengeResults` (``.summary()``, ``.aces()``).
    Raises:
      MuttlabError: unknown or unavailable metric, an empty set.
    """
    def compute():
        def score(report):
            return api.run_challenge(budget.scoring_settings(settings), suite_file, list(metrics), progress=report,
                                     registry=registry(settings))
        return queued_with_progress(score, 2 * len(metrics) * len(suite_file.suite.trials), progress)

    return memoised(challenge_key(settings, file_key, metrics), compute, settings,
                    costly="the challenge set's scores", metrics=metrics)


def challenge_key(settings: Settings, file_key: tuple, metrics: tuple[str, ...]) -> tuple:
    """The cache key of :func:`challenge`'s results (``services.is_memoised`` tells whether the server has them)."""
    return ("challenge", settings, installed_state(settings.model_dir), file_key, metrics)


def remember_upload(data: Content, name: str) -> str:
    """Keep an uploaded file, or a pair's uploaded files (content and name), while the server runs; returns the
    id a link names it by, ``upload:<sha256 of the content>`` (:func:`content_digest`): only someone who has the
    file, or the link, can name it."""
    digest = content_digest(data)
    region("uploads").put(("upload", digest), (data, name))
    return f"upload:{digest}"


def challenge_source(settings: Settings, suite_name: str) -> tuple[Content, str]:
    """The content and name of the challenge set a link names: ``file:<path in the data dir>`` or
    ``upload:<sha256>`` of a file uploaded to this server.

    Raises:
      MuttlabError: a path that may not be read (:func:`muttlab.dashboard.cell_view.read_data_file`); an upload this
        server does not hold (it was never uploaded here, the server restarted, or newer uploads pushed it out).
    """
    kind, _, rest = suite_name.partition(":")
    if kind == "file":
        return read_data_file(settings, rest)
    found = region("uploads").get(("upload", rest)) if kind == "upload" else None
    if found is None:
        raise MuttlabError("this server holds no such uploaded file (uploads are kept only while the server runs, "
                           "the newest that fit its memory for them); upload the file again on the Challenge page "
                           "and use its new links")
    return found
