"""One drill-down cell's trials, whatever suite a link names (the MUTT sets or the sample, the pair store, a
visitor's ``mine:`` suite, a challenge-set ``file:`` or ``upload:``), as
:mod:`muttlab.dashboard.cell_view` frames; and which trials are pairs of the pair store."""
from __future__ import annotations

from typing import Callable

import pandas as pd

from muttlab.dashboard import cell_view
from muttlab.dashboard.services.core import store, suite_named, trials_by_id, trials_by_id_of
from muttlab.dashboard.services.grid import Selection, run_grid
from muttlab.dashboard.services.uploads import challenge, challenge_source, read_challenge
from muttlab.errors import MuttlabError
from muttlab.settings import Settings


def challenge_file(settings: Settings, suite_name: str, format: str | None = None,
                   progress: Callable[[int, int, str], None] | None = None):
    """The read challenge set a ``file:``/``upload:`` suite name stands for, with its key for
    :func:`~muttlab.dashboard.services.uploads.challenge` (``progress``: a page's bar, told the lines read).

    Raises:
      MuttlabError: the file may not be read or is not held (:func:`challenge_source`), cannot be read as a
        challenge set, or is a trial suite rather than a contrastive challenge set.
    """
    data, name = challenge_source(settings, suite_name)
    suite_file, key = read_challenge(settings, data, name, format, progress)
    cell_view.require_contrastive(suite_file, name)
    return suite_file, key


def cell_trials(settings: Settings, metric: str, corruption: str, refs: int | None,
                suite_name: str = "default", format: str | None = None,
                progress: Callable[[int, int, str], None] | None = None) -> pd.DataFrame:
    """The trials of one cell with their texts and verdicts, failing first by margin
    (:func:`muttlab.dashboard.cell_view.from_grid` / :func:`~muttlab.dashboard.cell_view.from_challenge`).

    For a challenge set ``corruption`` is the phenomenon and ``refs`` is ignored (each pair has its own
    references); the verdicts are those of ``muttlab.api.run_challenge``, the Challenge page's. ``progress``
    gets the scoring's reports (the runner's, or the challenge set's per side of the pairs).

    Raises:
      MuttlabError: unknown or unavailable metric, a suite the server does not hold, an unreadable file.
    """
    if cell_view.is_challenge(suite_name):
        suite_file, key = challenge_file(settings, suite_name, format)
        results = challenge(settings, suite_file, key, (metric,), progress)
        return cell_view.from_challenge(results.table, suite_file, metric, corruption)
    results = run_grid(settings, Selection((metric,), (corruption,), (int(refs),)), progress, suite_name)
    if suite_name == "default":
        by_id = trials_by_id(settings)
    elif suite_name == "store":
        by_id = trials_by_id_of(settings, results.suite)
    else:
        by_id = {t.id: t for t in suite_named(settings, suite_name).trials}
    return cell_view.from_grid(results.table, metric, corruption, int(refs), by_id)


def held(settings: Settings, suite_name: str):
    """What only this server holds for a link's suite name, for the view's report
    (:func:`muttlab.dashboard.report.build_report`): an upload's (bytes, name), a visitor's suite.

    Raises:
      MuttlabError: the server does not hold it, or the name is neither ``upload:`` nor ``mine:``.
    """
    kind = cell_view.suite_kind(suite_name)
    if kind == "upload":
        return challenge_source(settings, suite_name)
    if kind == "mine":
        return suite_named(settings, suite_name)
    raise MuttlabError(f"the server holds nothing called {suite_name!r}")


def pair_ids(settings: Settings, trial_ids) -> dict[str, int]:
    """Of ``trial_ids`` (the cards on show), those that are keys of the pair store, each with its pair's number
    (the Annotate page's ``pair=``); empty without a store or when it cannot be reached (the Annotate page says
    why)."""
    from muttlab.api import PairNotFound

    found = {}
    try:
        pairs = store(settings)
        for trial_id in trial_ids if pairs is not None else ():
            try:
                found[trial_id] = pairs.get_by_key(trial_id).id
            except PairNotFound:
                continue
    except MuttlabError:  # a store that cannot be reached: the cards go without the link, the page says nothing
        return {}
    return found


def cell_slices(cell: pd.DataFrame, trials: dict) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A cell's trial properties (:func:`muttlab.api.slice_properties`; ``trials`` id -> Trial give severity
    and phenomenon) and the slices where the metric's accuracy is lowest (:func:`muttlab.api.worst_slices`)."""
    from muttlab import api

    properties = api.slice_properties(cell, trials)
    return properties, api.worst_slices(properties)


def parse_slice(text: str | None):
    """The slice a link's checked ``slice=`` names (:func:`muttlab.api.parse_slice`); every trial for None."""
    from muttlab import api

    return api.parse_slice(text or "")
