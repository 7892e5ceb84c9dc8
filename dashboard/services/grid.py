"""Grid runs on the Run and Drill-down pages: the engine's run (:func:`muttlab.engine.runner.run`) with the
server's fair queue as its executor (:class:`muttlab.engine.queue.QueuedScorer`).

The runner plans the grid (what to score, what the score cache already has), judges and merges, exactly as
for ``muttlab run``; the queue receives the scoring one grid cell at a time (metric x corruption type x
reference count; CIDEr-D's document frequencies are per cell, so its numbers do not change), interleaved
with other sessions' small requests: a Playground request waits for at most one cell. With
``MUTTLAB_SCHEDULER`` set, each cell is scored on that Dask cluster.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from muttlab import api
from muttlab.dashboard.services.core import memoised, registry, session_id, still_wanted, suite_named
from muttlab.dashboard.shared import region
from muttlab.api import Results, installed_state
from muttlab.settings import Settings


@dataclass(frozen=True)
class Selection:
    """What a grid run scores: metric names, corruption types and reference counts, in display order."""

    metrics: tuple[str, ...]
    corruptions: tuple[str, ...]
    ref_counts: tuple[int, ...]

    @property
    def empty(self) -> bool:
        return not (self.metrics and self.corruptions and self.ref_counts)


def _scorer(settings: Settings):
    """The queue's executor for one session's grid; with a scheduler, each piece is scored on the cluster."""
    return api.queued_scorer(settings, registry(settings), session_id(), still_wanted)


def run_grid(settings: Settings, selection: Selection,
             progress: Callable[[int, int, str], None] | None = None, suite_name: str = "default") -> Results:
    """``muttlab.engine.runner.run`` on the selected part of the suite; a repeated request is served from memory.

    Kept by :func:`memoised` (not ``st.cache_data``: the progress callback draws a progress bar).
    Callers treat the returned Results as read-only (they are shared between sessions).

    Raises:
      MuttlabError: unknown or unavailable metric, impossible reference count, empty selection; DemoLimit (on the
        public demo: over the visitor's share or the server's cap, a slow metric).
    """
    chosen = suite_named(settings, suite_name)

    def compute() -> Results:
        part = api.select_corruptions(chosen, list(selection.corruptions))
        return api.run_suite(part, list(selection.metrics), list(selection.ref_counts), settings, registry(settings),
                             progress=progress, scorer=_scorer(settings))

    results = memoised(_run_key(settings, selection, suite_name, chosen), compute, settings,
                       costly="the grid run", metrics=selection.metrics)
    if progress is not None:  # a run served from memory ends its progress bar too
        progress(len(selection.metrics), len(selection.metrics), "done")
    return results


def _run_key(settings: Settings, selection: Selection, suite_name: str, chosen) -> tuple:
    # The installed models are part of the key: after an install, ReVal and DREEM are scored again. The
    # store's suite is named after its latest revision, so an edit is scored again too; a visitor's suite is
    # told apart by its mine:<id>, whatever name its author gave it.
    return (("run", settings, installed_state(settings.model_dir), selection)
            + (() if suite_name == "default" else (suite_name, chosen.name)))


def cell_cached(settings: Settings, metric: str, corruption: str, refs: int, suite_name: str = "default") -> bool:
    """Whether the score cache holds every score of ``metric`` on this grid cell (someone scored it before, in a
    grid, a drill-down or ``muttlab run`` on this cache): opening it then scores nothing (:func:`api.fully_cached`).
    """
    part = api.select_corruptions(suite_named(settings, suite_name), [corruption])
    return api.fully_cached(settings, part, metric, [int(refs)], registry(settings))


def finished_run(settings: Settings, selection: Selection, suite_name: str = "default") -> Results | None:
    """The results of this run if the server has them already (someone ran it), else None; nothing is scored."""
    return region("results").get(_run_key(settings, selection, suite_name, suite_named(settings, suite_name)))
