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

import pandas as pd

from muttlab import api
from muttlab.dashboard.services.core import (registry, session_id, still_wanted, suite_named, trials_by_id,
                                             trials_by_id_of)
from muttlab.dashboard.services.memo import memoised, results_memo
from muttlab.engine import queue as work_queue
from muttlab.engine import runner
from muttlab.metrics.reval.installed import installed_state
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


def _scorer(settings: Settings) -> work_queue.QueuedScorer:
    """The queue's executor for one session's grid; with a scheduler, each piece is scored on the cluster."""
    reg = registry(settings)
    where = None
    if settings.scheduler:
        # Imported only here: a server without a scheduler never loads Dask.
        from muttlab.engine import distributed
        where = distributed.scorer_for(settings, reg, ())
    return work_queue.QueuedScorer(runner.cache_for(settings), reg, work_queue.shared_queue(), session_id(), where,
                                   still_wanted)


def run_grid(settings: Settings, selection: Selection,
             progress: Callable[[int, int, str], None] | None = None, suite_name: str = "default") -> runner.Results:
    """``muttlab.engine.runner.run`` on the selected part of the suite; a repeated request is served from memory.

    Kept by :func:`memoised` (not ``st.cache_data``: the progress callback draws a progress bar).
    Callers treat the returned Results as read-only (they are shared between sessions).

    Raises:
      MuttlabError: unknown or unavailable metric, impossible reference count, empty selection.
    """
    chosen = suite_named(settings, suite_name)

    def compute() -> runner.Results:
        part = api.select_corruptions(chosen, list(selection.corruptions))
        return runner.run(part, list(selection.metrics), list(selection.ref_counts), settings, registry(settings),
                          progress=progress, scorer=_scorer(settings))

    results = memoised(_run_key(settings, selection, suite_name, chosen), compute, settings)
    if progress is not None:  # a run served from memory ends its progress bar too
        progress(len(selection.metrics), len(selection.metrics), "done")
    return results


def _run_key(settings: Settings, selection: Selection, suite_name: str, chosen) -> tuple:
    # The installed models are part of the key: after an install, ReVal and DREEM are scored again. The
    # store's suite is named after its latest revision, so an edit is scored again too.
    return (("run", settings, installed_state(settings.model_dir), selection)
            + (() if suite_name == "default" else (chosen.name,)))


def finished_run(settings: Settings, selection: Selection, suite_name: str = "default") -> runner.Results | None:
    """The results of this run if the server has them already (someone ran it), else None; nothing is scored."""
    return results_memo().get(_run_key(settings, selection, suite_name, suite_named(settings, suite_name)))


def cell_trials(settings: Settings, metric: str, corruption: str, refs: int,
                suite_name: str = "default") -> pd.DataFrame:
    """The trials of one metric x corruption x refs cell with their texts, failing first, by margin.

    Returns:
      columns trial, passed, margin, s_orig, s_corr, original, corrupted, references (tuple),
      human_score, source.
    """
    results = run_grid(settings, Selection((metric,), (corruption,), (int(refs),)), suite_name=suite_name)
    table = results.table
    cell = table[(table["metric"] == metric) & (table["corruption"] == corruption)
                 & (table["refs"] == int(refs))].copy()
    by_id = trials_by_id(settings) if suite_name == "default" else trials_by_id_of(settings, results.suite)
    cell["original"] = [by_id[t].original for t in cell["trial"]]
    cell["corrupted"] = [by_id[t].corrupted for t in cell["trial"]]
    cell["references"] = [by_id[t].refs(int(refs)) for t in cell["trial"]]
    cell["human_score"] = [by_id[t].human_score for t in cell["trial"]]
    cell["source"] = [by_id[t].source for t in cell["trial"]]
    # The SICK join (pair id, split), where the trials carry it.
    extra = [a for a in ("sick_pair_id", "sick_split") if any(hasattr(t, a) for t in by_id.values())]
    for attr in extra:
        cell[attr] = [getattr(by_id[t], attr, None) for t in cell["trial"]]
    cell = cell.sort_values(["passed", "margin"], kind="stable").reset_index(drop=True)
    return cell[["trial", "passed", "margin", "s_orig", "s_corr", "original", "corrupted", "references",
                 "human_score", "source"] + extra]
