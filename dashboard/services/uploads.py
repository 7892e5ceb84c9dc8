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


def read_challenge(settings: Settings, data: bytes, name: str, format: str | None) -> tuple[object, tuple]:
    """A challenge-set file's content as a :class:`muttlab.suites.SuiteFile` (``muttlab.suites.read_suite``),
    kept for the whole server by content, format and name; with that key, for :func:`challenge`.

    Raises:
      MuttlabError (DataError): over the upload size limit or the pair limit, not UTF-8, no known format, no
        readable row; DemoLimit (the public demo's share: reading is the visitor's computation too).
    """
    from muttlab.settings import active_limits

    limits = active_limits()
    if len(data) > limits.max_upload_bytes:
        raise DataError(name, limits.exceeded("max_upload_mb", len(data) / 2 ** 20, "the file"))
    _check_pairs(limits, _records_at_most(data), name)
    key = ("challenge-file", hashlib.sha256(data).hexdigest(), name, format)

    def read():
        suite_file = api.read_suite(data, format=format, name=name)
        _check_pairs(limits, len(suite_file.suite.trials) + sum(suite_file.not_applied.values()), name)
        return suite_file

    return memoised(key, read, settings, costly="reading the challenge set"), key


def _records_at_most(data: bytes) -> int:
    """How many records a file can hold at most, counted before it is decoded: a line-based file (TSV, JSON
    lines) one per line after the first (a header, or a record: one too many is harmless); a JSON document
    (DEMETR's, a ``[`` first) cannot be told before it is parsed, so 0 here and its records are counted after."""
    if data.lstrip()[:1] == b"[":
        return 0
    return data.count(b"\n") + (0 if data.endswith(b"\n") else 1) - 1


def _check_pairs(limits, count: int, name: str) -> None:
    if count > limits.max_pairs:
        raise DataError(name, limits.exceeded("max_pairs", count, "the file") + "; split it, or score it with "
                        "`muttlab run --suite FILE` on your own machine")


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


def remember_upload(data: bytes, name: str) -> str:
    """Keep an uploaded file (content and name) while the server runs; returns the id a link names it by,
    ``upload:<sha256 of the content>``: only someone who has the file, or the link, can name it."""
    digest = hashlib.sha256(data).hexdigest()
    region("uploads").put(("upload", digest), (data, name))
    return f"upload:{digest}"


def challenge_source(settings: Settings, suite_name: str) -> tuple[bytes, str]:
    """The bytes and name of the challenge-set file a link names: ``file:<path in the data dir>`` or
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
