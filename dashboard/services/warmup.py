"""The server's warm-up: what pages need, loaded in a background thread before the first visitor asks."""
from __future__ import annotations

import sys
import threading
from dataclasses import dataclass, field
from typing import Callable

from muttlab import api
from muttlab.dashboard import charts
from muttlab.dashboard import playground_example as example
from muttlab.dashboard.services.core import (LEARNED_METRICS, generator_types, metric_catalogue, queued, registry,
                                             shipped, shipped_differences, shipped_grid, trials_by_id)
from muttlab.dashboard.services.budget import is_quick
from muttlab.dashboard.shared import singleton
from muttlab.settings import Settings

METEOR = "METEOR-1.5"


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


# How often the server's interpreter hands its lock to another thread that waits for it (Python's default: 5 ms).
# A visitor's scoring job gives the lock up at every SQLite statement and pipe read, dozens of times per answer,
# and each time waits for the lock again; while other threads compute (page runs, a study), each wait was a whole
# interval: a Playground answer that takes 0.02 s alone took 2.3 s beside two busy threads, 0.24 s with 1 ms
# (docs/deploy.md, "Waiting for the interpreter's lock").
SWITCH_INTERVAL_S = 0.001


@singleton
def warm_start(settings: Settings) -> WarmState:
    """Load what pages need in a background thread, once per server process and configuration, so that no
    visitor waits for it: ``muttlab serve`` calls this before the server accepts connections and starts the
    server when ``quick`` is set (the slower metrics go on loading while it serves).

    First what the landing page draws (the shipped grid, the metric catalogue), with METEOR's JVM started
    beside it in a thread of its own, then spaCy and the quick metrics (n-gram, METEOR) so the Playground
    answers while slower ones still load, the trials for a drill-down, the rest, plotly's first figure, the
    shipped snapshots' stamps (the data files hashed), and last the severity curves' sentences, parsed and
    corrupted for the page's first curve (after the metrics: while a first visitor's Run waits for its progress
    bar, it competes with them). Each metric is loaded by scoring the Playground's example through the scoring
    queue, which is what starts its process or loads its model; a visitor's request in the meantime is served
    between two of these. With ``settings.warm_up`` ``"quick"`` (``MUTTLAB_WARM_UP=quick``) it stops after the
    quick metrics: a server that holds less at rest, whose first visitor of a slower metric waits for it to load;
    with ``"none"`` it loads nothing, and the first visitor waits for everything a page needs (a server whose
    pages score nothing needs no JVM and no spaCy).
    """
    import time

    sys.setswitchinterval(SWITCH_INTERVAL_S)
    api.keep_a_core_for_pages()
    state = WarmState(started=time.monotonic(), ready=[], failed={})

    def step(name: str, load: Callable[[], object]) -> None:
        try:
            load()
            state.ready.append(name)
        except Exception as exc:  # a warm-up problem must never take the server down; pages report it
            state.failed[name] = str(exc)

    def current_stamps() -> None:
        for kind in ("grid", "human", "published", "severity"):
            snapshot = shipped(kind)
            if snapshot is not None:
                shipped_differences(settings, snapshot)

    def work() -> None:
        try:
            if settings.warm_up == "none":
                return
            step("shipped grid", shipped_grid)
            reg = registry(settings)
            if METEOR in reg.names:
                # METEOR's JVM reads its paraphrase table in a process of its own (6 s): started first, in a
                # thread of its own, it reads while this thread checks the catalogue and loads spaCy, instead
                # of after them; the quick metrics' scoring below waits for it.
                def jvm() -> None:
                    api.prepare_metric(settings, METEOR, reg)

                threading.Thread(target=step, args=(f"{METEOR} JVM", jvm), name="muttlab-warm-jvm",
                                 daemon=True).start()
            names = []
            step("metric catalogue", lambda: names.extend(
                i.name for i in metric_catalogue(settings) if i.available and i.name not in LEARNED_METRICS))
            quick = [n for n in names if is_quick(n)]

            # Each metric is loaded by scoring the Playground's example with its corruptions, the batch the
            # Playground's first visit scores, so that visit is answered from the score cache. spaCy makes the
            # corruptions while METEOR's JVM is still reading.
            candidates = [example.CANDIDATE]
            types = generator_types()
            if types:
                step("spaCy", lambda: candidates.extend(api.corrupt(example.CANDIDATE, example.REFERENCES,
                                                                    tuple(types), settings.seed)["corrupted"]))

            def load(batch: list[str]) -> None:
                for name in batch:
                    frame = queued(lambda: api.score(settings, [name], candidates,
                                                     [example.REFERENCES] * len(candidates), reg),
                                   cost=len(candidates))
                    problems = frame.loc[frame["problem"] != "", "problem"]
                    if len(problems):
                        state.failed[name] = problems.iloc[0]
                    elif name not in state.ready:
                        state.ready.append(name)

            load(quick)
            if settings.warm_up == "quick":
                # The operator asked for no more (MUTTLAB_WARM_UP=quick): the rest loads when first asked. The
                # heap is frozen and the quick point marked once, below.
                return
            _freeze_heap()
            state.quick.set()
            step("scipy.stats", lambda: __import__("scipy.stats"))  # 1-2 s; a Run's intervals and every study need it
            step("trials", lambda: trials_by_id(settings))
            load([n for n in names if n not in quick])
            step("charts", charts.warm)
            if not settings.using_sample:
                step("shipped snapshots' stamps", current_stamps)
            if types:
                # The page's first curve ships precomputed; its corruptions are made for a visitor who redraws it
                # (any other choice is made when asked, 0.2 s per strength on the MUTT originals).
                first = api.severity_default()
                step("severity sentences", lambda: api.prepare_severity(settings, first.corruption, first.strengths))
        except Exception as exc:  # as above: reported, never raised
            state.failed["warm-up"] = str(exc)
        finally:
            _freeze_heap()
            state.quick.set()
            done = time.monotonic()
            # For the operator's log (and the benchmark, which waits for it before timing a warm server); before
            # ``done`` is set, so that whoever waits for it finds the line written.
            print(f"muttlab: warm-up done in {done - state.started:.1f} s: {len(state.ready)} loaded"
                  + {"quick": " (MUTTLAB_WARM_UP=quick: the rest loads when first asked)",
                     "none": " (MUTTLAB_WARM_UP=none: everything loads when first asked)"}.get(settings.warm_up, "")
                  + (f", not loaded: {', '.join(sorted(state.failed))}" if state.failed else ""),
                  file=sys.stderr, flush=True)
            state.done = done

    threading.Thread(target=work, name="muttlab-warm-start", daemon=True).start()
    return state
