"""The dashboard's cached doorway to the engine. Pages call these helpers; none of them computes a score.

Two caches:
  * :func:`muttlab.dashboard.shared.singleton` for heavy objects shared by every session of the server: the
    settings-bound metric registry (which holds the metric objects, the METEOR Java process, GloVe vectors,
    ReVal models), the loaded suite, the pair store, the memo of finished runs. Not ``st.cache_resource``,
    which any browser can empty for everyone (see :mod:`muttlab.dashboard.shared`);
  * ``st.cache_data`` for engine results (playground scores, study tables), keyed by what was asked;
    runs that draw a progress bar use :func:`memoised`, a shared memo.
Below both sits the engine's on-disk score cache, so a rerun after a server restart is fast as well.
All scoring goes through the fair work queue (:func:`muttlab.engine.queue.shared_queue`, a module-level
singleton no client can clear): small requests first, sessions in turn, grids cut into chunks; with
``MUTTLAB_SCHEDULER`` set, grid chunks are scored on that Dask cluster (small requests stay here).

Settings come from :func:`muttlab.settings.load_settings` (the environment ``muttlab serve`` sets); they
are passed explicitly to every cached helper so that two configurations never share an entry.
"""
from __future__ import annotations

import contextlib
import importlib
import sys
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Callable, Sequence

import pandas as pd
import streamlit as st

from muttlab import api
from muttlab.corruptions import catalog
from muttlab.dashboard.shared import singleton
from muttlab.engine import queue as work_queue
from muttlab import sources
from muttlab.engine import runner
from muttlab.errors import MuttlabError
from muttlab.redact import scrub
from muttlab.metrics.reval.installed import installed_state
from muttlab.settings import Settings, load_settings
from muttlab.trials import Suite, Trial
from muttlab.metrics.registry import MetricInfo, Registry

# The metrics a fresh Run page proposes: the study's classic ones that need no training.
DEFAULT_METRICS = api.DEFAULT_METRICS
# Learned metrics need a trained model; the registry reports them unavailable until one exists.
LEARNED_METRICS = ("ReVal-LSTM", "ReVal-TreeLSTM", "ML-METEOR", "DREEM", "ML-DREEM")
RESULTS_KEPT = 64  # finished runs kept in memory, across sessions
PAGES_KEPT = 16  # pieces of pages that every visitor gets alike (the landing grid per filter)


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

def registry(settings: Settings) -> Registry:
    """One registry per configuration and set of installed models, shared by all sessions: metric objects are
    built once, and installing a model (a maintainer's action) gives a new registry instead of changing the
    metric objects other sessions are scoring with."""
    return _registry(settings, installed_state(settings.model_dir))


@singleton
def _registry(settings: Settings, installed: str) -> Registry:
    return runner.registry_for(settings)


def session_id() -> str:
    """The browser session asking (the fair queue takes sessions in turn); one id outside a Streamlit run."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx(suppress_warning=True)
    return ctx.session_id if ctx is not None else "script"


def still_wanted() -> None:
    """Raises (Streamlit's stop or rerun signal) when the session waiting here has gone or asked for something
    else; nothing outside a page. Reading session state is where Streamlit delivers those signals."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    if get_script_run_ctx(suppress_warning=True) is not None:
        st.session_state.get("muttlab-waiting")


def queued(fn: Callable[[], object], cost: int):
    """Run ``fn`` through the server's fair scoring queue (:mod:`muttlab.engine.queue`) and wait for it;
    if the session goes away first, the job is cancelled unless it has started.

    Every use of metric objects goes through the queue: they are shared by all sessions and are not
    thread-safe (the METEOR pipe); the queue runs one job at a time, small ones first, sessions in turn.
    """
    return work_queue.gather([work_queue.shared_queue().submit(session_id(), fn, cost)], still_wanted)[0]


def metric_catalogue(settings: Settings) -> list[MetricInfo]:
    """What the registry knows about every metric: available or not, and why."""
    return _metric_catalogue(settings, installed_state(settings.model_dir))


def _spinner(text: str):
    """``st.spinner`` in a page; nothing in the warm-up thread, which has no page to draw on."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    return st.spinner(text) if get_script_run_ctx(suppress_warning=True) is not None else contextlib.nullcontext()


@singleton
def _metric_catalogue(settings: Settings, installed: str) -> list[MetricInfo]:
    with _spinner("Checking which metrics are available…"):
        return queued(lambda: api.metric_catalogue(settings, registry(settings)), cost=1)


def available_metrics(settings: Settings) -> list[str]:
    return [info.name for info in metric_catalogue(settings) if info.available]


def catalogue_frame(settings: Settings) -> pd.DataFrame:
    """The catalogue as a table for display (name, available, reason or description, signature)."""
    rows = [{"metric": i.name, "available": i.available,
             "requires": ", ".join(i.requires),
             "note": i.description if i.available else scrub(i.reason, settings),
             "signature": i.signature} for i in metric_catalogue(settings)]
    return pd.DataFrame(rows, columns=["metric", "available", "requires", "note", "signature"])


@singleton
def suite(settings: Settings) -> Suite:
    """The suite the app works on: the MUTT experiment sets, or the bundled sample without a data dir.

    Raises:
      MuttlabError (DataError): the data dir or the sample is missing or malformed.
    """
    with _spinner("Loading trials…"):
        return sources.load_default_suite(settings)


@singleton
def trials_by_id(settings: Settings) -> dict[str, Trial]:
    return {t.id: t for t in suite(settings).trials}


# Suites a page can run on: the default one (MUTT experiment sets or the sample) and the pair store's
# current state, whose edits then reach the Run and Drill-down scores.
SUITES = {"default": "shipped trial sets", "store": "pair store (current state, edits included)"}


def store_revision(settings: Settings) -> int:
    """The pair store's newest revision id (0 when there is no store or it is empty): a store suite's key."""
    pairs = store(settings)
    return 0 if pairs is None else pairs.latest_revision()


@st.cache_resource(show_spinner="Reading the pair store…", max_entries=4)
def _store_suite(settings: Settings, revision: int) -> Suite:
    base = api.load_suite(settings, "store")
    # The revision id goes into the suite's name, so results and exports say which state was scored.
    return Suite(f"store@rev{revision}", base.trials, base.is_sample)


def suite_named(settings: Settings, name: str = "default") -> Suite:
    """``default`` (:func:`suite`) or ``store`` (the pair store as of its latest revision).

    Raises:
      MuttlabError: unknown name, empty store, unreadable data.
    """
    if name == "store":
        return _store_suite(settings, store_revision(settings))
    if name != "default":
        raise MuttlabError(f"unknown suite {name!r}; choose {' or '.join(SUITES)}")
    return suite(settings)


@st.cache_resource(show_spinner=False, max_entries=4)
def _trials_by_id_of(settings: Settings, suite_key: str) -> dict[str, Trial]:
    name = "store" if suite_key.startswith("store@") else "default"
    return {t.id: t for t in suite_named(settings, name).trials}


@singleton
def shipped_grid():
    """The precomputed grid that ships with the package (:mod:`muttlab.dashboard.shipped`), or None."""
    from muttlab.dashboard import shipped
    return shipped.load()


def shipped_grid_html(metrics: tuple[str, ...], corruptions: tuple[str, ...], ref_counts: tuple[int, ...]) -> str:
    """The shipped grid's cells for this filter as the Run page's HTML table, built once per filter for the
    whole server: it is the same for every visitor and the landing page's largest piece of work."""
    def build() -> str:
        from muttlab.dashboard import shipped
        from muttlab.dashboard.grid_table import accuracy_grid_html

        grid = shipped_grid()
        return accuracy_grid_html(shipped.select(grid, metrics, corruptions, ref_counts),
                                  corruption_labels(grid.corruptions), metrics, corruptions)

    # A memo of its own: a visitor trying many filters must not push the finished runs out of theirs.
    return memoised(("shipped grid html", metrics, corruptions, ref_counts), build, memo=_pages_memo())


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


@singleton
def _memo() -> _Memo:
    return _Memo(RESULTS_KEPT)


@singleton
def _pages_memo() -> _Memo:
    return _Memo(PAGES_KEPT)


_KEY_LOCKS: dict[tuple, threading.Lock] = {}
_KEY_LOCKS_GUARD = threading.Lock()


def memoised(key: tuple, compute: Callable[[], object], settings: Settings | None = None,
             memo: _Memo | None = None):
    """``compute()`` once per ``key`` for the whole server (two sessions asking at once compute it once),
    kept in ``memo`` (by default the memo of finished runs).

    Used instead of ``st.cache_data`` where the computation reports progress to a Streamlit element,
    which ``st.cache_data``'s element replay forbids. Callers treat the value as read-only. ``compute``
    sends its scoring through the fair queue itself; the lock here is per key, never global.
    """
    memo = memo or _memo()
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
    """One Results from the chunks of a grid (each chunk: one cell, metric x corruption type x reference count)."""
    first = parts[0]
    return runner.Results(table=pd.concat([p.table for p in parts], ignore_index=True),
                          signatures={k: v for p in parts for k, v in p.signatures.items()},
                          suite=first.suite, is_sample=first.is_sample, tolerance=first.tolerance,
                          warnings=list(dict.fromkeys(w for p in parts for w in p.warnings)))


def run_grid(settings: Settings, selection: Selection,
             progress: Callable[[int, int, str], None] | None = None, suite_name: str = "default") -> runner.Results:
    """``muttlab.engine.runner.run`` on the selected part of the suite; a repeated request is served from memory.

    Kept by :func:`memoised` (not ``st.cache_data``: the progress callback draws a progress bar).
    Callers treat the returned Results as read-only (they are shared between sessions).

    Raises:
      MuttlabError: unknown or unavailable metric, impossible reference count, empty selection.
    """
    chosen = suite_named(settings, suite_name)

    def chunk(metric: str, corruption: str, refs: int) -> Callable[[], runner.Results]:
        return lambda: api.run_grid(settings, (metric,), (corruption,), (refs,), suite=chosen,
                                    registry=registry(settings))

    def compute() -> runner.Results:
        # Cut into chunks, one cell each (metric x corruption type x reference count; CIDEr-D's document
        # frequencies are per cell, so its numbers do not change), that the fair queue interleaves with other
        # sessions' small requests: a Playground request waits for at most one cell, not three.
        by_type = {c: len(chosen.of(c)) for c in selection.corruptions}
        shared = work_queue.shared_queue()
        chunks = [(m, c, k) for m in selection.metrics for c in selection.corruptions for k in selection.ref_counts]
        futures = [shared.submit(session_id(), chunk(m, c, k), cost=2 * by_type[c]) for m, c, k in chunks]

        def done(i: int) -> None:
            if progress is not None:
                m, c, k = chunks[i]
                progress(i, len(futures), f"scoring {m} on {c} with {k} references")

        # A run nobody waits for (the tab closed) stops: its chunks not yet started are cancelled.
        return _merge(work_queue.gather(futures, still_wanted, done))

    results = memoised(_run_key(settings, selection, suite_name, chosen), compute, settings)
    if progress is not None:
        progress(len(selection.metrics), len(selection.metrics), "done")
    return results


def _run_key(settings: Settings, selection: Selection, suite_name: str, chosen: Suite) -> tuple:
    # The installed models are part of the key: after an install, ReVal and DREEM are scored again. The
    # store's suite is named after its latest revision, so an edit is scored again too.
    return (("run", settings, installed_state(settings.model_dir), selection)
            + (() if suite_name == "default" else (chosen.name,)))


def finished_run(settings: Settings, selection: Selection, suite_name: str = "default") -> runner.Results | None:
    """The results of this run if the server has them already (someone ran it), else None; nothing is scored."""
    return _memo().get(_run_key(settings, selection, suite_name, suite_named(settings, suite_name)))


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
    by_id = trials_by_id(settings) if suite_name == "default" else _trials_by_id_of(settings, results.suite)
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


# --------------------------------------------------------------------------- playground

def score_sentences(settings: Settings, metrics: tuple[str, ...], candidates: tuple[str, ...],
                    references: tuple[str, ...]) -> pd.DataFrame:
    """Every chosen metric's score of each candidate against the same references, through the engine cache.

    Returns:
      columns metric, candidate (index into ``candidates``), score (NaN when the metric failed),
      higher_is_better, problem (the metric's message when it failed).
    """
    return _score_sentences(settings, installed_state(settings.model_dir), metrics, candidates, references)


@st.cache_data(show_spinner=False, max_entries=256)
def _score_sentences(settings: Settings, installed: str, metrics: tuple[str, ...], candidates: tuple[str, ...],
                     references: tuple[str, ...]) -> pd.DataFrame:
    return queued(lambda: api.score(settings, metrics, candidates, [references] * len(candidates),
                                    registry(settings)), cost=len(metrics) * len(candidates))


# --------------------------------------------------------------------------- the pair store

@singleton
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



# --------------------------------------------------------------------------- footer, published numbers

@st.cache_resource(show_spinner=False)
def facts():
    """Version, commit and data checksums for the footer (:mod:`muttlab.dashboard.facts`), once per process."""
    from muttlab.dashboard import facts as _facts
    return _facts.collect()


def reproduce_available() -> bool:
    """Whether this installation has :mod:`muttlab.human.reproduce` (published numbers beside ours)."""
    return optional_module("muttlab.human.reproduce") is not None


@st.cache_data(show_spinner="Computing every published number we can…", max_entries=4)
def reproduction(settings: Settings) -> pd.DataFrame:
    """``muttlab.api.reproduce(settings)`` as its frame (study, source, metric, subset, refs, published,
    measured, difference, tolerance, within, reason)."""
    # The whole report is one long job: it waits behind the small requests of other sessions.
    return report_frame(queued(lambda: api.reproduce(settings), cost=10 ** 9))


def report_frame(report) -> pd.DataFrame:
    """The table of a ReproductionReport, whatever its attribute is called (``frame``, ``table``...)."""
    if isinstance(report, pd.DataFrame):
        return report
    for name in ("frame", "table", "df", "rows"):
        value = getattr(report, name, None)
        value = value() if callable(value) else value
        if isinstance(value, pd.DataFrame):
            return value
    for value in vars(report).values() if hasattr(report, "__dict__") else ():
        if isinstance(value, pd.DataFrame):
            return value
    raise MuttlabError("the reproduction report has no table this page can show")


# --------------------------------------------------------------------------- warm start

# Metrics that score a sentence in well under a second once loaded: the Playground shows them first.
QUICK_PREFIXES = ("BLEU", "ROUGE", "CIDEr", "METEOR", "chrF", "sentBLEU")


def is_quick(name: str) -> bool:
    return name == "TER" or name.startswith(QUICK_PREFIXES)


WARM_SENTENCE = "A man is riding a bicycle down the street."
WARM_REFERENCES = ("A man rides a bike on the road.", "Someone is cycling along a street.")


@dataclass
class WarmState:
    """What the background warm-up has loaded so far (for a status line) and when it finished."""

    started: float = 0.0
    ready: list[str] = None
    failed: dict[str, str] = None
    done: float | None = None
    # Set once what a first page needs is loaded (the grid, the catalogue, the quick metrics, spaCy).
    quick: threading.Event = field(default_factory=threading.Event)


def _freeze_heap() -> None:
    """Move everything loaded so far (the suite, models, spaCy: ~400k objects) out of the garbage collector's
    reach. A full collection walks every tracked object and holds the GIL while it does; with the warm heap that
    was 0.25-0.35 s, paid by every visitor waiting at that moment. Nothing loaded here is ever freed, so
    freezing it loses nothing."""
    import gc

    gc.collect()
    gc.freeze()


@singleton
def warm_start(settings: Settings) -> WarmState:
    """Load what pages need in a background thread, once per server process and configuration, so that no
    visitor waits for it: ``muttlab serve`` calls this before the server accepts connections and starts the
    server when ``quick`` is set (the slower metrics go on loading while it serves).

    First what the landing page draws (the shipped grid, the metric catalogue), then the quick metrics
    (n-gram, METEOR) so the Playground answers while slower ones still load, spaCy, the trials for a
    drill-down, and the rest. Each metric is scored once on a short sentence through the scoring queue,
    which is what starts its process or loads its model; a visitor's request in the meantime is served
    between two of these.
    """
    import time

    state = WarmState(started=time.monotonic(), ready=[], failed={})

    def step(name: str, load: Callable[[], object]) -> None:
        try:
            load()
            state.ready.append(name)
        except Exception as exc:  # a warm-up problem must never take the server down; pages report it
            state.failed[name] = str(exc)

    def work() -> None:
        try:
            step("shipped grid", shipped_grid)
            names = []
            step("metric catalogue", lambda: names.extend(
                i.name for i in metric_catalogue(settings) if i.available and i.name not in LEARNED_METRICS))
            reg = registry(settings)
            quick = [n for n in names if is_quick(n)]

            def load(batch: list[str]) -> None:
                for name in batch:
                    frame = queued(lambda: api.score(settings, [name], [WARM_SENTENCE], [WARM_REFERENCES], reg),
                                   cost=1)
                    problem = frame["problem"].iloc[0] if len(frame) else ""
                    (state.failed.__setitem__(name, problem) if problem else state.ready.append(name))

            load(quick)
            types = generator_types()
            if types:
                step("spaCy", lambda: api.corrupt(WARM_SENTENCE, WARM_REFERENCES, tuple(types), settings.seed))
            _freeze_heap()
            state.quick.set()
            step("trials", lambda: trials_by_id(settings))
            load([n for n in names if n not in quick])
        except Exception as exc:  # as above: reported, never raised
            state.failed["warm-up"] = str(exc)
        finally:
            _freeze_heap()
            state.quick.set()
            state.done = time.monotonic()
            # For the operator's log (and the benchmark, which waits for it before timing a warm server).
            print(f"muttlab: warm-up done in {state.done - state.started:.1f} s: {len(state.ready)} loaded"
                  + (f", not loaded: {', '.join(sorted(state.failed))}" if state.failed else ""),
                  file=sys.stderr, flush=True)

    threading.Thread(target=work, name="muttlab-warm-start", daemon=True).start()
    return state


# --------------------------------------------------------------------------- research views

def study_warnings(settings: Settings, study) -> list[str]:
    """The runner's warnings for a SICK study (:func:`muttlab.engine.runner.sick_overlap_warning`): a metric
    learned from SICK that scored pairs it saw measures memory there, not generalisation."""
    from types import SimpleNamespace

    reg = registry(settings)
    if study.reading == "paper":  # SICK pairs themselves, each with its SemEval split
        items = [SimpleNamespace(sick_splits=(split,)) for split in study.pairs["split"] if split]
    else:
        by_id = trials_by_id(settings)
        items = [by_id[t] for t in study.pairs["trial"] if t in by_id]
    found = (runner.sick_overlap_warning(reg.get(name), items) for name in study.metrics)
    return [w for w in found if w]


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
    from muttlab.sources import read_bytes
    from muttlab.errors import DataError

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


def severity(settings: Settings, corruption: str, metrics: tuple[str, ...], strengths: tuple[int, ...],
             refs: int) -> pd.DataFrame:
    """``muttlab.api.severity`` on the bundled sample scenes, once per request for the whole server.

    Raises:
      MuttlabError: a type without strength, no sentence taking every strength, unknown metric.
    """
    def compute() -> pd.DataFrame:
        return queued(lambda: api.severity(settings, corruption, list(metrics), list(strengths), refs=refs,
                                           registry=registry(settings)), cost=len(metrics) * len(strengths) * 50)

    return memoised(("severity", settings, installed_state(settings.model_dir), corruption, metrics, strengths,
                     refs), compute, settings)


def paired_comparison(settings: Settings, metric_a: str, metric_b: str, corruption: str, refs: int,
                      suite_name: str = "default"):
    """McNemar's test of two metrics on the same trials of one cell (:func:`muttlab.stats.mcnemar`).

    Returns:
      (McNemarResult, accuracy of A in %, accuracy of B in %).
    """
    from muttlab.stats import mcnemar

    a = cell_trials(settings, metric_a, corruption, refs, suite_name).set_index("trial")["passed"]
    b = cell_trials(settings, metric_b, corruption, refs, suite_name).set_index("trial")["passed"]
    b = b.reindex(a.index)
    return mcnemar(a.to_numpy(), b.to_numpy()), 100.0 * a.mean(), 100.0 * b.mean()
