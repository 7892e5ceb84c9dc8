"""The dashboard's doorway to the engine: the shared heavy objects, the suites, the Playground's scoring,
the pair store and the published numbers. Pages call these helpers (through :mod:`muttlab.dashboard.services`);
none of them computes a score.

What the server keeps for all its sessions is in the dashboard's one process cache,
:mod:`muttlab.dashboard.shared` (not Streamlit's caches, which any browser can empty for everyone):
  * pinned entries (:func:`~muttlab.dashboard.shared.singleton`) for heavy objects: the settings-bound metric
    registry (which holds the metric objects, the METEOR Java process, GloVe vectors, ReVal models), the loaded
    suite, the pair store, the footer's facts;
  * byte-capped regions for what was asked, through :func:`memoised`: finished runs, studies and the pair store's
    suites (``results``), pieces of pages (``pages``), the Playground's scores and corruptions (``playground``).
    A computation that draws a progress bar is kept there too (``st.cache_data``'s element replay forbids it).
Below both sits the engine's on-disk score cache, so a rerun after a server restart is fast as well.
All scoring goes through the fair work queue (:func:`muttlab.engine.queue.shared_queue`, a module-level
singleton no client can clear): small requests first, sessions in turn, grids one cell at a time
(:mod:`muttlab.dashboard.services.grid`).

Settings come from :func:`muttlab.settings.load_settings` (the environment ``muttlab serve`` sets); they
are passed explicitly to every cached helper and are part of every key, so that two configurations never share
an entry.
"""
from __future__ import annotations

import contextlib
from typing import Callable, Sequence, TypeVar

import pandas as pd
import streamlit as st

from muttlab import api
from muttlab.dashboard.services import budget, user_suites
from muttlab.dashboard.services.budget import session_id
from muttlab.dashboard.shared import region, singleton
from muttlab.redact import scrub
from muttlab.api import MetricInfo, Registry, Suite, Trial, installed_state
from muttlab.errors import MuttlabError
from muttlab.settings import Settings, load_settings

T = TypeVar("T")

# The metrics a fresh Run page proposes: the study's classic ones that need no training.
DEFAULT_METRICS = api.DEFAULT_METRICS
# A study's whole scoring as one job of the fair queue: far above its small jobs (engine.queue.SMALL_COST).
STUDY_COST = 10 ** 6
# How much lower than the server's threads a computation apart runs (:func:`apart`): visitors' pages come first.
APART_NICENESS = 10
# Learned metrics need a trained model; the registry reports them unavailable until one exists.
LEARNED_METRICS = ("ReVal-LSTM", "ReVal-TreeLSTM", "ML-METEOR", "DREEM", "ML-DREEM")


def settings() -> Settings:
    """The server's settings (cheap: reads ``MUTTLAB_*`` variables each rerun)."""
    return load_settings()


def memoised(key: tuple, compute: Callable[[], object], settings: Settings | None = None, kept_in: str = "results",
             costly: str | None = None, metrics: Sequence[str] = ()):
    """``compute()`` once per ``key`` for the whole server, kept in the process cache's byte-capped region
    ``kept_in`` (:data:`muttlab.dashboard.shared.SHARES`; two sessions asking at once compute it once).

    ``costly`` names work a visitor asks for (a grid run, a study, a challenge set's scores): on a read-only
    server it runs only within that visitor's share (:func:`muttlab.dashboard.services.budget.governed`, which
    also refuses ``metrics`` that are slow to compute there); a value the server has costs nothing.

    ``compute`` may draw a progress bar (which ``st.cache_data``'s element replay forbids) and sends its scoring
    through the fair queue itself. Callers treat the value as read-only.
    """
    work = compute if costly is None else lambda: budget.governed(settings, costly, compute, metrics)
    return region(kept_in).computed(key, work)


def kept_figure(key: tuple, build: Callable[[], T]) -> T:
    """``build()`` once per ``key`` for the whole server, in the process cache's ``pages`` region: the figure of
    numbers the server keeps (a shipped snapshot, a memoised study), the same for every visitor of that view. Each
    open built it anew before: plotly checks every property it is given, 0.06 s of the Correlation page's 0.1 s
    run. Callers treat the figure as read-only (``ui.chart`` draws and downloads a copy)."""
    return memoised(("figure", *key), build, kept_in="pages")


def snapshot_key(snapshot) -> tuple:
    """A shipped snapshot in a key (:func:`kept_figure`): its kind, when it was made and its stamp."""
    return ("shipped", snapshot.kind, snapshot.created, snapshot.stamp.digest())


def is_memoised(key: tuple, kept_in: str = "results") -> bool:
    """Whether :func:`memoised` has ``key``'s value in region ``kept_in``: nothing is computed."""
    return key in region(kept_in)


def _spinner(text: str):
    """``st.spinner`` in a page; nothing in the warm-up thread, which has no page to draw on."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    return st.spinner(text) if get_script_run_ctx(suppress_warning=True) is not None else contextlib.nullcontext()


# --------------------------------------------------------------------------- shared heavy objects

def registry(settings: Settings) -> Registry:
    """One registry per configuration and set of installed models, shared by all sessions: metric objects are
    built once, and installing a model (a maintainer's action) gives a new registry instead of changing the
    metric objects other sessions are scoring with."""
    return _registry(settings, installed_state(settings.model_dir))


@singleton
def _registry(settings: Settings, installed: str) -> Registry:
    return api.registry_for(settings)


def still_wanted() -> None:
    """Raises (Streamlit's stop or rerun signal) when the session waiting here has gone or asked for something
    else, and DemoLimit when the computation under way has used up its visitor's share of the demo
    (:mod:`~muttlab.dashboard.services.budget`); nothing outside a page. Reading session state is where Streamlit
    delivers those signals."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    if get_script_run_ctx(suppress_warning=True) is not None:
        st.session_state.get("muttlab-waiting")
        budget.check()


def apart(fn: Callable[[Callable[[int, int, str], None]], object],
          progress: Callable[[int, int, str], None] | None = None):
    """``fn(report)``, a long computation over data that uses none of the server's metric objects (the ΔBLEU unit
    study), in a forked child at :data:`APART_NICENESS` (:func:`muttlab.api.computed_apart`): its pure Python
    neither holds the server's interpreter lock nor takes the CPU from the visitors' page runs. Its reports are
    drawn with ``progress`` here, and between them :func:`still_wanted` stops the child once its visitor has gone
    or used up their share. Only for a small answer: a large one (an uploaded file's 100,000 pairs) would come
    back as a pickle whose loading holds the interpreter lock in one piece (docs/deploy.md)."""
    return api.computed_apart(fn, progress, still_wanted, niceness=APART_NICENESS)


def queued(fn: Callable[[], object] | api.Joinable, cost: int):
    """Run ``fn`` (or a :class:`~muttlab.engine.queue.Joinable`) through the server's fair scoring queue
    (:mod:`muttlab.engine.queue`) and wait for it; if the session goes away first, the job is cancelled unless
    it has started.

    Every use of metric objects goes through the queue: they are shared by all sessions and are not
    thread-safe (the METEOR pipe); the queue runs one job at a time, small ones first, sessions in turn.
    """
    return api.gather_queued([api.shared_queue().submit(session_id(), fn, cost)], still_wanted)[0]


def queued_with_progress(fn: Callable[[Callable[[int, int, str], None]], object], cost: int,
                         progress: Callable[[int, int, str], None] | None):
    """:func:`queued` for ``fn(report)``, a job that reports ``(step, total, message)``: its latest report is drawn
    with ``progress`` from this session's thread, at each poll of the queue (a Streamlit element cannot be updated
    from the queue's thread). Each report is also where the job stops once nobody waits for it
    (:func:`muttlab.engine.queue.checkpoint`): a closed tab's study does not run on.

    Within a step the job reports, the items its metric has scored are drawn too (the engine's item reports,
    :func:`muttlab.engine.progress.items_reported_to`): ``message · step/total · n of N items · time left``."""
    latest: list[tuple[int, int, str]] = []
    items: list[tuple[int, int, str]] = []

    def poll() -> None:
        still_wanted()
        if progress is not None and latest:
            progress(*_within(latest[-1], items[-1] if items else None))

    def report(*step) -> None:
        api.queue_checkpoint()
        items.clear()  # a new step: the items of the last one are done
        latest.append(step)

    def report_items(*counted) -> None:
        api.queue_checkpoint()
        items.append(counted)

    def job_fn():
        with api.items_reported_to(report_items):
            return fn(report)

    job = api.shared_queue().submit(session_id(), job_fn, cost)
    return api.gather_queued([job], poll)[0]


def _within(step: tuple[int, int, str], counted: tuple[int, int, str] | None) -> tuple[int, int, str]:
    """A job's step report with the items of the step scored so far: the bar moves within the step."""
    done, total, message = step
    if counted is None or not total:
        return step
    n, of, text = counted
    # A step counts 1 of ``total``; its items fill it.
    scale = max(1, of)
    return done * scale + min(n, scale), total * scale, f"{message} · {done + 1}/{total} · {text}"


def queued_study(fn: Callable[[Callable[[int, int, str], None]], object],
                 progress: Callable[[int, int, str], None] | None):
    """A study's scoring, ``fn(report)``, as one big job on the fair queue (:func:`queued_with_progress`): the
    metric objects are used by the queue's thread only, and small requests pass at each of its reports."""
    return queued_with_progress(fn, STUDY_COST, progress)


def metric_catalogue(settings: Settings) -> list[MetricInfo]:
    """What the registry knows about every metric: available or not, and why."""
    return _metric_catalogue(settings, installed_state(settings.model_dir))


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
        return api.load_suite(settings)


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


def _store_suite(settings: Settings, revision: int) -> Suite:
    def read() -> Suite:
        with _spinner("Reading the pair store…"):
            base = api.load_suite(settings, "store")
        # The revision id goes into the suite's name, so results and exports say which state was scored.
        return Suite(f"store@rev{revision}", base.trials, base.is_sample)

    # Kept by revision like a finished run (each edit makes a new one), not pinned.
    return memoised(("store suite", settings, revision), read)


def suite_named(settings: Settings, name: str = "default") -> Suite:
    """``default`` (:func:`suite`), ``store`` (the pair store as of its latest revision) or ``mine:<id>`` (a
    visitor's own sentences, :mod:`~muttlab.dashboard.services.user_suites`).

    Raises:
      MuttlabError: unknown name, a ``mine:`` suite the server does not hold, empty store, unreadable data.
    """
    if name == "store":
        return _store_suite(settings, store_revision(settings))
    if name.startswith(user_suites.PREFIX):
        found = user_suites.lookup(name)
        if found is None:
            raise MuttlabError("this server holds no such suite of your own sentences (any more): such suites "
                               "live in the server's memory until a restart or until newer ones replace them; "
                               "build it again on the Your sentences page, or score its suite download with "
                               "`muttlab run --suite FILE`")
        return found
    if name != "default":
        raise MuttlabError(f"unknown suite {name!r}; choose {' or '.join(SUITES)}")
    return suite(settings)


def trials_by_id_of(settings: Settings, suite_key: str) -> dict[str, Trial]:
    """The trials of the suite a result names (``results.suite``) by id: the pair store's (kept by its key, as its
    suite is) or the default suite's (:func:`trials_by_id`)."""
    if not suite_key.startswith("store@"):
        return trials_by_id(settings)
    return memoised(("store trials", settings, suite_key),
                    lambda: {t.id: t for t in suite_named(settings, "store").trials})


def shipped(kind: str):
    """The shipped snapshot of ``kind`` (``grid``, ``human``, ``published``, ``severity``:
    :func:`muttlab.api.snapshot`), or None in a build without it.

    Raises:
      DataError: the shipped file is malformed.
    """
    return api.snapshot(kind)


def shipped_grid():
    """The precomputed grid's snapshot (its ``content`` is a ``muttlab.snapshots.grid.Grid``), or None."""
    return shipped("grid")


def shipped_differences(settings: Settings, snapshot, signatures: bool = True) -> list[str]:
    """What differs between a shipped snapshot (:func:`shipped`) and this server's numbers (data, code, metric
    signatures, rules: :func:`muttlab.api.snapshot_differences`), in words; empty when they are this server's.
    ``signatures=False`` compares no metric signature, so it needs no metric loaded (a fresh server may still be
    loading the catalogue). The data files are hashed once per server."""
    current = {}
    if signatures:
        catalogue = {i.name: i.signature for i in metric_catalogue(settings) if i.available}
        current = {m: catalogue[m] for m in snapshot.stamp.signatures if m in catalogue}
    key = ("snapshot differences", snapshot.kind, settings, tuple(sorted(current.items())), snapshot.stamp.digest())
    return memoised(key, lambda: api.snapshot_differences(settings, snapshot, current), settings, kept_in="pages")


def shipped_grid_html(metrics: tuple[str, ...], corruptions: tuple[str, ...], ref_counts: tuple[int, ...]) -> str:
    """The shipped grid's cells for this filter as the Run page's HTML table, built once per filter for the
    whole server: it is the same for every visitor and the landing page's largest piece of work."""
    def build() -> str:
        from muttlab.dashboard.grid_table import accuracy_grid_html

        grid = shipped_grid().content
        return accuracy_grid_html(grid.select(metrics, corruptions, ref_counts),
                                  corruption_labels(grid.corruptions), metrics, corruptions)

    # A region of its own: a visitor trying many filters must not push the finished runs out of theirs.
    return memoised(("shipped grid html", metrics, corruptions, ref_counts), build, kept_in="pages")


def corruption_label(name: str) -> str:
    return api.corruption_label(name)


def corruption_labels(names: Sequence[str]) -> dict[str, str]:
    return {n: api.corruption_label(n) for n in names}


# --------------------------------------------------------------------------- playground

def score_sentences(settings: Settings, metrics: tuple[str, ...], candidates: tuple[str, ...],
                    references: tuple[str, ...]) -> pd.DataFrame:
    """Every chosen metric's score of each candidate against the same references, through the engine cache.

    Returns:
      columns metric, candidate (index into ``candidates``), score (NaN when the metric failed),
      higher_is_better, problem (the metric's message when it failed).
    """
    def run_all(batches: list[tuple[tuple[str, ...], list[tuple[str, ...]]]]) -> list[pd.DataFrame]:
        return api.score_together(settings, metrics, batches, registry(settings))

    # Scored together with the other visitors' requests for the same metrics waiting at the same time.
    together = api.Joinable(("score", settings, installed_state(settings.model_dir), metrics),
                            (candidates, [references] * len(candidates)), run_all)
    return queued(together, cost=len(metrics) * len(candidates))


# --------------------------------------------------------------------------- the pair store

@singleton
def store(settings: Settings):
    """The pair store of these settings (read-only when the server is)."""
    return api.open_store(settings)


# --------------------------------------------------------------------------- playground corruptions

def generator_types() -> list[str]:
    """Corruption types with a generator (they apply to any parsed sentence)."""
    return api.generator_types()


def corrupt_sentence(sentence: str, references: tuple[str, ...], types: tuple[str, ...],
                     seed: int) -> pd.DataFrame:
    """Every chosen generator applied to ``sentence`` (``muttlab.engine.suites.generated_trials``), kept for the
    whole server by what was asked (the ``playground`` region).

    Returns:
      columns corruption, label, family, rule, corrupted: one row per type that applies.
    Raises:
      MuttlabError: the sentence or a reference over the length limits (nothing is kept).
    """
    def parse() -> pd.DataFrame:
        with _spinner("Parsing and corrupting…"):
            return api.corrupt(sentence, references, types, seed)

    return memoised(("corruptions", sentence, references, types, seed), parse, kept_in="playground")


# --------------------------------------------------------------------------- footer, published numbers

@singleton
def facts():
    """Version, commit and data checksums for the footer (:mod:`muttlab.dashboard.facts`), once per process."""
    from muttlab.dashboard import facts as _facts
    return _facts.collect()


def shipped_reproduction():
    """Published vs measured as it ships with the package (a snapshot whose ``content`` is a
    ``muttlab.snapshots.published.Reproduction``), or None."""
    return shipped("published")


def _reproduction_key(settings: Settings) -> tuple:
    return ("reproduce", settings, installed_state(settings.model_dir))


def reproduction(settings: Settings, progress: Callable[[int, int, str], None] | None = None) -> pd.DataFrame:
    """``muttlab.api.reproduce(settings)`` as its frame (study, source, metric, subset, refs, published,
    measured, difference, tolerance, within, reason), computed once for the whole server (:func:`memoised`).

    The whole report is one long job on the fair queue (it waits behind the small requests of other sessions),
    its progress drawn by :func:`queued_with_progress`. Not on the public demo, where it would hold the server
    for minutes.

    Raises:
      DemoLimit: on a read-only server.
    """
    budget.refuse_on_demo(settings, "Recomputing the published numbers",
                          "The shipped numbers above were measured on the same data; `muttlab reproduce` measures "
                          "them again on your own machine.")

    def compute() -> pd.DataFrame:
        return report_frame(queued_with_progress(lambda report: api.reproduce(settings, progress=report), 10 ** 9,
                                                 progress))

    return memoised(_reproduction_key(settings), compute, settings)


def finished_reproduction(settings: Settings) -> pd.DataFrame | None:
    """The reproduction's frame if this server has computed it already, else None; nothing is computed."""
    return region("results").get(_reproduction_key(settings))


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


def reval_evaluation(settings: Settings, model: str, split: str, checkpoint,
                     progress: Callable[[int, int, str], None] | None = None):
    """``api.evaluate_reval`` of the model the
    metric uses, on a SICK split, once per checkpoint (its path and modification time) for the whole server;
    ``progress`` gets its reports (each step, the sentences encoded). Not on the public demo: about a minute of the
    server's time in the page's own thread, outside the fair queue.

    Raises:
      MuttlabError: no such model or split; DemoLimit on a read-only server.
    """
    from pathlib import Path

    budget.refuse_on_demo(settings, "Evaluating ReVal on SICK",
                          "Its published numbers are on the Published vs measured page; `muttlab reval eval` "
                          "runs it on your own machine.")
    stamp = Path(checkpoint).stat().st_mtime
    return memoised(("reval-eval", settings, model, split, str(checkpoint), stamp),
                    lambda: api.evaluate_reval(settings, model=model, split=split, progress=progress), settings)


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
    found = (api.sick_overlap_warning(reg.get(name), items) for name in study.metrics)
    return [w for w in found if w]


def severity(settings: Settings, corruption: str, metrics: tuple[str, ...], strengths: tuple[int, ...],
             refs: int, progress: Callable[[int, int, str], None] | None = None) -> pd.DataFrame:
    """``muttlab.api.severity`` on its default sentences (every MUTT original with a data dir, the sample's
    scenes without), once per request for the whole server; its progress is drawn from this session's thread
    at each poll of the queue, as :func:`reproduction`'s.

    Raises:
      MuttlabError: a type without strength, no sentence taking every strength, unknown metric; DemoLimit.
    """
    def compute() -> pd.DataFrame:
        # A big job whatever its metrics: every default sentence (the MUTT originals with a data dir) at every
        # strength. As a small one it held the queue for seconds, with no piece and no checkpoint letting a
        # Playground request pass.
        return queued_study(lambda report: api.severity(
            budget.scoring_settings(settings), corruption, list(metrics), list(strengths), refs=refs,
            registry=registry(settings), progress=report), progress)

    return memoised(severity_key(settings, corruption, metrics, strengths, refs), compute, settings,
                    costly="the severity curves", metrics=metrics)


def severity_key(settings: Settings, corruption: str, metrics: tuple[str, ...], strengths: tuple[int, ...],
                 refs: int) -> tuple:
    """The cache key of :func:`severity`'s curves (``services.is_memoised`` tells whether the server has them)."""
    return ("severity", settings, installed_state(settings.model_dir), corruption, metrics, strengths, refs)
