"""The dashboard's cached doorway to the engine. Pages call these helpers; none of them computes a score.

Two caches, as Streamlit intends them:
  * ``st.cache_resource`` for heavy objects shared by every session of the server: the settings-bound
    metric registry (which holds the metric objects, the METEOR Java process, GloVe vectors, ReVal models),
    the loaded suite, the pair store;
  * ``st.cache_data`` for engine results (playground scores, study tables), keyed by what was asked;
    runs that draw a progress bar use :func:`memoised`, a memo held by ``st.cache_resource``.
Below both sits the engine's on-disk score cache, so a rerun after a server restart is fast as well.
All scoring goes through the fair work queue (:func:`muttlab.engine.queue.shared_queue`, a module-level
singleton no client can clear): small requests first, sessions in turn, grids cut into chunks; with
``MUTTLAB_SCHEDULER`` set, grid chunks are scored on that Dask cluster (small requests stay here).

Settings come from :func:`muttlab.settings.load_settings` (the environment ``muttlab serve`` sets); they
are passed explicitly to every cached helper so that two configurations never share an entry.
"""
from __future__ import annotations

import importlib
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable, Sequence

import pandas as pd
import streamlit as st

from muttlab import api
from muttlab.corruptions import catalog
from muttlab.engine import queue as work_queue
from muttlab.engine import runner, sources
from muttlab.settings import Settings, load_settings
from muttlab.engine.trials import Suite, Trial
from muttlab.metrics.registry import MetricInfo, Registry

# The metrics a fresh Run page proposes: the study's classic ones that need no training.
DEFAULT_METRICS = api.DEFAULT_METRICS
# Learned metrics need a trained model; the registry reports them unavailable until one exists.
LEARNED_METRICS = ("ReVal-LSTM", "ReVal-TreeLSTM", "ML-METEOR", "DREEM", "ML-DREEM")
RESULTS_KEPT = 64  # finished runs kept in memory, across sessions


def settings() -> Settings:
    """The server's settings (cheap: reads ``MUTTLAB_*`` variables each rerun)."""
    return load_settings()


def optional_module(name: str):
    """The engine module ``name`` when it is installed in this checkout, else None.

    Pages use this for parts of the project that may be absent (the pair store, the studies, ReVal
    training) and tell the user what is missing instead of failing.
    """
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name and (name == exc.name or name.startswith(exc.name + ".")):
            return None
        raise


# --------------------------------------------------------------------------- shared heavy objects

@st.cache_resource(show_spinner=False)
def registry(settings: Settings) -> Registry:
    """One registry per configuration, shared by all sessions: metric objects are built once."""
    return runner.registry_for(settings)


def session_id() -> str:
    """The browser session asking (the fair queue takes sessions in turn); one id outside a Streamlit run."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else "script"


def queued(fn: Callable[[], object], cost: int):
    """Run ``fn`` through the server's fair scoring queue (:mod:`muttlab.engine.queue`) and wait for it.

    Every use of metric objects goes through the queue: they are shared by all sessions and are not
    thread-safe (the METEOR pipe); the queue runs one job at a time, small ones first, sessions in turn.
    """
    return work_queue.shared_queue().run(session_id(), fn, cost)


@st.cache_resource(show_spinner="Checking which metrics are available…")
def metric_catalogue(settings: Settings) -> list[MetricInfo]:
    """What the registry knows about every metric: available or not, and why."""
    return queued(lambda: api.metric_catalogue(settings, registry(settings)), cost=1)


def available_metrics(settings: Settings) -> list[str]:
    return [info.name for info in metric_catalogue(settings) if info.available]


def catalogue_frame(settings: Settings) -> pd.DataFrame:
    """The catalogue as a table for display (name, available, reason or description, signature)."""
    rows = [{"metric": i.name, "available": i.available,
             "requires": ", ".join(i.requires),
             "note": i.description if i.available else i.reason,
             "signature": i.signature} for i in metric_catalogue(settings)]
    return pd.DataFrame(rows, columns=["metric", "available", "requires", "note", "signature"])


@st.cache_resource(show_spinner="Loading trials…")
def suite(settings: Settings) -> Suite:
    """The suite the app works on: the MUTT experiment sets, or the bundled sample without a data dir.

    Raises:
      MuttlabError (DataError): the data dir or the sample is missing or malformed.
    """
    return sources.load_default_suite(settings)


@st.cache_resource(show_spinner=False)
def trials_by_id(settings: Settings) -> dict[str, Trial]:
    return {t.id: t for t in suite(settings).trials}


def corruption_label(name: str) -> str:
    try:
        return catalog.get(name).label
    except KeyError:
        return name


def corruption_labels(names: Sequence[str]) -> dict[str, str]:
    return {n: corruption_label(n) for n in names}


# --------------------------------------------------------------------------- runs

@dataclass(frozen=True)
class Selection:
    """What a grid run scores: metric names, corruption types and reference counts, in display order."""

    metrics: tuple[str, ...]
    corruptions: tuple[str, ...]
    ref_counts: tuple[int, ...]

    @property
    def empty(self) -> bool:
        return not (self.metrics and self.corruptions and self.ref_counts)


class _Memo:
    """Finished engine results by key, oldest dropped first; shared by all sessions of the server."""

    def __init__(self, size: int):
        self.size = size
        self.lock = threading.Lock()
        self.items: OrderedDict[tuple, object] = OrderedDict()

    def get(self, key: tuple):
        with self.lock:
            if key in self.items:
                self.items.move_to_end(key)
            return self.items.get(key)

    def put(self, key: tuple, value) -> None:
        with self.lock:
            self.items[key] = value
            while len(self.items) > self.size:
                self.items.popitem(last=False)


@st.cache_resource(show_spinner=False)
def _memo() -> _Memo:
    return _Memo(RESULTS_KEPT)


_KEY_LOCKS: dict[tuple, threading.Lock] = {}
_KEY_LOCKS_GUARD = threading.Lock()


def memoised(key: tuple, compute: Callable[[], object], settings: Settings):
    """``compute()`` once per ``key`` for the whole server (two sessions asking at once compute it once).

    Used instead of ``st.cache_data`` where the computation reports progress to a Streamlit element,
    which ``st.cache_data``'s element replay forbids. Callers treat the value as read-only. ``compute``
    sends its scoring through the fair queue itself; the lock here is per key, never global.
    """
    memo = _memo()
    value = memo.get(key)
    if value is None:
        with _KEY_LOCKS_GUARD:
            lock = _KEY_LOCKS.setdefault(key, threading.Lock())
        with lock:
            value = memo.get(key)
            if value is None:
                value = compute()
                memo.put(key, value)
        with _KEY_LOCKS_GUARD:
            _KEY_LOCKS.pop(key, None)
    return value


def _merge(parts: list[runner.Results]) -> runner.Results:
    """One Results from the chunks of a grid (each chunk: one metric x one corruption type)."""
    first = parts[0]
    return runner.Results(table=pd.concat([p.table for p in parts], ignore_index=True),
                          signatures={k: v for p in parts for k, v in p.signatures.items()},
                          suite=first.suite, is_sample=first.is_sample, tolerance=first.tolerance)


def run_grid(settings: Settings, selection: Selection,
             progress: Callable[[int, int, str], None] | None = None) -> runner.Results:
    """``muttlab.engine.runner.run`` on the selected part of the suite; a repeated request is served from memory.

    Kept by :func:`memoised` (not ``st.cache_data``: the progress callback draws a progress bar).
    Callers treat the returned Results as read-only (they are shared between sessions).

    Raises:
      MuttlabError: unknown or unavailable metric, impossible reference count, empty selection.
    """
    def chunk(metric: str, corruption: str) -> Callable[[], runner.Results]:
        return lambda: api.run_grid(settings, (metric,), (corruption,), selection.ref_counts,
                                    suite=suite(settings), registry=registry(settings))

    def compute() -> runner.Results:
        # Cut into chunks (metric x corruption type; CIDEr-D's batches are per corruption type, so its numbers
        # do not change) that the fair queue interleaves with other sessions' small requests.
        by_type = {c: len(suite(settings).of(c)) for c in selection.corruptions}
        shared = work_queue.shared_queue()
        chunks = [(m, c) for m in selection.metrics for c in selection.corruptions]
        futures = [shared.submit(session_id(), chunk(m, c), cost=2 * by_type[c] * len(selection.ref_counts))
                   for m, c in chunks]
        parts = []
        for done, future in enumerate(futures):
            parts.append(future.result())
            if progress is not None:
                progress(done, len(futures), f"scoring {chunks[done][0]} on {chunks[done][1]}")
        return _merge(parts)

    results = memoised(("run", settings, selection), compute, settings)
    if progress is not None:
        progress(len(selection.metrics), len(selection.metrics), "done")
    return results


def cell_trials(settings: Settings, metric: str, corruption: str, refs: int) -> pd.DataFrame:
    """The trials of one metric x corruption x refs cell with their texts, failing first, by margin.

    Returns:
      columns trial, passed, margin, s_orig, s_corr, original, corrupted, references (tuple),
      human_score, source.
    """
    results = run_grid(settings, Selection((metric,), (corruption,), (int(refs),)))
    table = results.table
    cell = table[(table["metric"] == metric) & (table["corruption"] == corruption)
                 & (table["refs"] == int(refs))].copy()
    by_id = trials_by_id(settings)
    cell["original"] = [by_id[t].original for t in cell["trial"]]
    cell["corrupted"] = [by_id[t].corrupted for t in cell["trial"]]
    cell["references"] = [by_id[t].refs(int(refs)) for t in cell["trial"]]
    cell["human_score"] = [by_id[t].human_score for t in cell["trial"]]
    cell["source"] = [by_id[t].source for t in cell["trial"]]
    cell = cell.sort_values(["passed", "margin"], kind="stable").reset_index(drop=True)
    return cell[["trial", "passed", "margin", "s_orig", "s_corr", "original", "corrupted", "references",
                 "human_score", "source"]]


# --------------------------------------------------------------------------- playground

@dataclass(frozen=True)
class SentenceScore:
    """One metric's score of one candidate, or why there is none."""

    metric: str
    candidate: str
    score: float | None
    higher_is_better: bool
    problem: str = ""


@st.cache_data(show_spinner=False, max_entries=256)
def score_sentences(settings: Settings, metrics: tuple[str, ...], candidates: tuple[str, ...],
                    references: tuple[str, ...]) -> pd.DataFrame:
    """Every chosen metric's score of each candidate against the same references, through the engine cache.

    Returns:
      columns metric, candidate (index into ``candidates``), score (NaN when the metric failed),
      higher_is_better, problem (the metric's message when it failed).
    """
    return queued(lambda: api.score(settings, metrics, candidates, [references] * len(candidates),
                                    registry(settings)), cost=len(metrics) * len(candidates))


# --------------------------------------------------------------------------- the pair store

@st.cache_resource(show_spinner=False)
def store(settings: Settings):
    """The pair store of these settings (read-only when the server is), or None when not installed."""
    module = optional_module("muttlab.pairs.store")
    return None if module is None else module.open_store(settings)


# --------------------------------------------------------------------------- playground corruptions

def generator_types() -> list[str]:
    """Corruption types with a generator (they apply to any parsed sentence); empty when not installed."""
    generate = optional_module("muttlab.corruptions.generate")
    return list(generate.GENERATORS) if generate is not None else []


@st.cache_data(show_spinner="Parsing and corrupting…", max_entries=256)
def corrupt_sentence(sentence: str, references: tuple[str, ...], types: tuple[str, ...],
                     seed: int) -> pd.DataFrame:
    """Every chosen generator applied to ``sentence`` (``muttlab.engine.suites.generated_trials``).

    Returns:
      columns corruption, label, family, rule, corrupted: one row per type that applies.
    """
    if optional_module("muttlab.engine.suites") is None:
        return api.corrupt(sentence, references, (), seed)
    return api.corrupt(sentence, references, types, seed)

