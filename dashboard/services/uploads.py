"""Challenge-set files on the Challenge and Drill-down pages: uploads and data-dir files read within the size
limits, the uploads the server holds for links (``suite=upload:<sha256>``), and their scoring, once per file
and metrics for the whole server."""
from __future__ import annotations

import hashlib
from typing import Callable

from muttlab import api
from muttlab.dashboard.cell_view import read_data_file
from muttlab.dashboard.services.core import queued_with_progress, registry
from muttlab.dashboard.services.memo import Memo, memoised
from muttlab.dashboard.shared import singleton
from muttlab.errors import MuttlabError
from muttlab.metrics.reval.installed import installed_state
from muttlab.settings import Settings


def read_challenge(settings: Settings, data: bytes, name: str, format: str | None) -> tuple[object, tuple]:
    """A challenge-set file's content as a :class:`muttlab.suites.SuiteFile` (``muttlab.suites.read_suite``),
    kept for the whole server by content, format and name; with that key, for :func:`challenge`.

    Raises:
      MuttlabError (DataError): over the upload size limit, not UTF-8, no known format, no readable row.
    """
    from muttlab.sources import active_limits
    from muttlab.errors import DataError

    limits = active_limits()
    if len(data) > limits.max_upload_bytes:
        raise DataError(name, limits.exceeded("max_upload_mb", len(data) / 2 ** 20, "the file"))
    key = ("challenge-file", hashlib.sha256(data).hexdigest(), name, format)
    from muttlab.suites import read_suite  # the reader itself: api.read_suite names no upload

    return memoised(key, lambda: read_suite(data, format=format, name=name), settings), key


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
            return api.run_challenge(settings, suite_file, list(metrics), progress=report, registry=registry(settings))
        return queued_with_progress(score, 2 * len(metrics) * len(suite_file.suite.trials), progress)

    return memoised(("challenge", settings, installed_state(settings.model_dir), file_key, metrics),
                    compute, settings)


UPLOADS_KEPT = 8  # uploaded files a link can name; each may be up to the upload size limit


@singleton
def _uploads() -> Memo:
    return Memo(UPLOADS_KEPT)


def remember_upload(data: bytes, name: str) -> str:
    """Keep an uploaded file (content and name) while the server runs; returns the id a link names it by,
    ``upload:<sha256 of the content>``: only someone who has the file, or the link, can name it."""
    digest = hashlib.sha256(data).hexdigest()
    _uploads().put(("upload", digest), (data, name))
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
    found = _uploads().get(("upload", rest)) if kind == "upload" else None
    if found is None:
        raise MuttlabError("this server holds no such uploaded file (uploads are kept only while the server runs, "
                           f"the newest {UPLOADS_KEPT}); upload the file again on the Challenge page and use its "
                           "new links")
    return found
