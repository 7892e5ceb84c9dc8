"""Challenge-set files on the Challenge page: uploads and data-dir files read within the size limits, and
their scoring, once per file and metrics for the whole server."""
from __future__ import annotations

from muttlab import api
from muttlab.dashboard.services.core import queued, registry
from muttlab.dashboard.services.memo import memoised
from muttlab.metrics.reval.installed import installed_state
from muttlab.settings import Settings


def read_challenge(settings: Settings, data: bytes, name: str, format: str | None) -> tuple[object, tuple]:
    """A challenge-set file's content as a :class:`muttlab.suites.SuiteFile` (``muttlab.suites.read_suite``),
    kept for the whole server by content, format and name; with that key, for :func:`challenge`.

    Raises:
      MuttlabError (DataError): over the upload size limit, not UTF-8, no known format, no readable row.
    """
    import hashlib

    from muttlab.sources import active_limits
    from muttlab.errors import DataError

    limits = active_limits()
    if len(data) > limits.max_upload_bytes:
        raise DataError(name, limits.exceeded("max_upload_mb", len(data) / 2 ** 20, "the file"))
    key = ("challenge-file", hashlib.sha256(data).hexdigest(), name, format)
    from muttlab.suites import read_suite  # the reader itself: api.read_suite names no upload

    return memoised(key, lambda: read_suite(data, format=format, name=name), settings), key


def challenge_file_in_data_dir(settings: Settings, relative: str) -> tuple[bytes, str]:
    """The bytes and name of a challenge-set file inside the data dir (a visitor may not read elsewhere).

    Raises:
      MuttlabError: no data dir, a path that may lead outside it (ViewError), a file missing, unreadable or over
        the size limit (DataError, naming the file as given, not where the server keeps it).
    """
    from pathlib import Path

    from muttlab.dashboard.view import data_file
    from muttlab.errors import DataError
    from muttlab.sources import read_bytes

    try:
        return read_bytes(data_file(settings, relative)), Path(relative).stem
    except DataError as exc:  # named as the visitor gave it: where the data dir is stays on the server
        raise DataError(relative, exc.problem) from None


def challenge(settings: Settings, suite_file, file_key: tuple, metrics: tuple[str, ...]):
    """``muttlab.api.run_challenge`` of a read challenge set, once per file and metrics for the whole server.

    Returns:
      :class:`muttlab.suites.contrastive.ChallengeResults` (``.summary()``, ``.aces()``).
    Raises:
      MuttlabError: unknown or unavailable metric, an empty set.
    """
    def compute():
        return queued(lambda: api.run_challenge(settings, suite_file, list(metrics), registry=registry(settings)),
                      cost=2 * len(metrics) * len(suite_file.suite.trials))

    return memoised(("challenge", settings, installed_state(settings.model_dir), file_key, metrics),
                    compute, settings)
