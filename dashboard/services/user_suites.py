"""Suites that visitors build in the app from their own sentences, kept in the server's memory: one pinned entry
of the dashboard's process cache (:mod:`muttlab.dashboard.shared`), which holds them with their caps below.

A suite is addressed as ``mine:<id>``; the id is 128 random bits, so a link to it is its only way in (a
capability: whoever holds the link may view it, nobody can list or guess it).

Building one is open to every visitor, on a read-only server too: it writes nothing but this memory, and
nothing another visitor sees changes (their suites stay theirs, the shared pair store and models are not
touched). What one visitor may take of the server is capped here, below the page, so a client that skips the
page's widgets meets the same limits (``settings.limits``, docs/security.md):

* the input: its size in bytes (before it is decoded), the number of sentences, references per sentence,
  characters and words per sentence and per reference;
* suites per visitor: a visitor is a browser session (:func:`current_visitor`); its next suite past
  ``max_suites`` replaces its own oldest;
* suites per client address (:data:`ADDRESS_SHARE`, a quarter of the store): however many sessions one
  client opens, its next suite past that replaces its own oldest;
* the store (:data:`KEPT` suites): when it is full, the oldest suite of the client holding the most goes, so
  a client can push out only the suites of clients that hold at least as many as it does.

A maintainer's clearing of the caches (:func:`muttlab.dashboard.shared.clear_all`) empties the store too; a
visitor's message cannot.
"""
from __future__ import annotations

import csv
import io
import json
import re
import secrets
import threading
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from typing import Callable, Sequence

import pandas as pd

from muttlab.dashboard.shared import singleton
from muttlab.errors import MuttlabError
from muttlab.settings import Limits, Settings, active_limits
from muttlab.api import RowProblem, Suite

KEPT = 64
ADDRESS_SHARE = KEPT // 4
PREFIX = "mine:"
EXAMPLE_SENTENCES = 6
EXAMPLE_REFERENCES = 5
PROBLEMS_KEPT = 20  # malformed rows kept with a suite to show; the rest are counted
_NAME = re.compile(r"mine:[0-9a-f]{32}")


@dataclass(frozen=True)
class Visitor:
    """Who builds a suite: the browser session and the client address the server saw (``ip:unknown`` when it
    saw none, e.g. on localhost: then every such session is one client, as for the sign-in limiter)."""

    session: str
    address: str


@dataclass(frozen=True)
class Report:
    """What building a suite found: the number of sentences read; ``coverage``, per chosen type, how many
    sentences it applied to and when it does not apply; ``skipped``, each (sentence, type) that did not apply and
    why; ``problems``, the first rows of the input left out (by line) and ``problem_count``, all of them."""

    sentences: int
    coverage: pd.DataFrame
    skipped: pd.DataFrame
    problems: tuple[RowProblem, ...] = ()
    problem_count: int = 0


@dataclass(frozen=True)
class _Entry:
    visitor: Visitor
    suite: Suite
    report: Report | None


@dataclass
class _Store:
    """The suites by id, oldest first, and the lock every change of them holds. Pages keep only a suite's name in
    their session, so what a visitor holds is here."""

    suites: OrderedDict[str, _Entry] = field(default_factory=OrderedDict)
    lock: threading.Lock = field(default_factory=threading.Lock)


@singleton
def _held() -> _Store:
    """The process's one store (a pinned entry of the process cache)."""
    return _Store()


def current_visitor() -> Visitor:
    """This page's visitor: its Streamlit session and the client address the server saw."""
    from muttlab.dashboard.auth import client_address
    from muttlab.dashboard.services.budget import session_id

    return Visitor(session_id(), client_address())


def add(visitor: Visitor, suite: Suite, max_suites: int | None = None, report: Report | None = None) -> str:
    """Keep ``suite`` (and what building it found) for ``visitor`` and return its new name, ``mine:<id>``; the
    kept suite carries that name, so its results and downloads say which suite they are. The visitor keeps at
    most ``max_suites`` (default: the active limits') per session and :data:`ADDRESS_SHARE` per client."""
    return _keep(visitor, suite, active_limits().max_suites if max_suites is None else max_suites, report)[0]


def _keep(visitor: Visitor, suite: Suite, max_suites: int, report: Report | None) -> tuple[str, tuple[str, ...]]:
    """:func:`add`, also returning the names of this session's own suites dropped to make room (the suites
    another session of the same client loses to :data:`ADDRESS_SHARE` are not named to this one)."""
    suite_id = secrets.token_hex(16)
    name = PREFIX + suite_id
    kept = Suite(name, suite.trials, suite.is_sample, suite.languages)
    store = _held()
    with store.lock:
        suites = store.suites
        own = _drop_oldest(suites, lambda e: e.visitor.session == visitor.session, max(0, max_suites - 1))
        _drop_oldest(suites, lambda e: e.visitor.address == visitor.address, ADDRESS_SHARE - 1)
        while len(suites) >= KEPT:
            held = Counter(e.visitor.address for e in suites.values())
            most = max(held.values())
            del suites[next(i for i, e in suites.items() if held[e.visitor.address] == most)]
        suites[suite_id] = _Entry(visitor, kept, report)
    return name, tuple(PREFIX + i for i in own)


def _drop_oldest(suites: OrderedDict[str, _Entry], belongs, keep: int) -> list[str]:
    """Drop the oldest of ``suites`` for which ``belongs(entry)`` holds until ``keep`` are left; their ids. The
    caller holds the store's lock."""
    ids = [i for i, e in suites.items() if belongs(e)]
    dropped = ids[:max(0, len(ids) - keep)]
    for i in dropped:
        del suites[i]
    return dropped


def _entry(name: str) -> _Entry | None:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        return None
    store = _held()
    with store.lock:
        return store.suites.get(name[len(PREFIX):])


def lookup(name: str) -> Suite | None:
    """The suite called ``mine:<id>``, or None when the server does not (or no longer) hold it."""
    entry = _entry(name)
    return None if entry is None else entry.suite


def report(name: str) -> Report | None:
    """What building the suite ``mine:<id>`` found, or None when the server does not (or no longer) hold it."""
    entry = _entry(name)
    return None if entry is None else entry.report


def build(settings: Settings, visitor: Visitor, data: bytes, label: str, kind: str,
          types: Sequence[str], progress: Callable[[int, int, str], None] | None = None) -> tuple[str, tuple[str, ...]]:
    """A visitor's sentences (the bytes of an upload or of pasted text, in ``kind``: jsonl, csv or tsv) corrupted
    by each chosen generator type that applies, kept with its :class:`Report` under a new ``mine:<id>`` name;
    ``progress`` (a page's bar) is told the sentences parsed and corrupted.

    Returns:
      the name, and the names of this session's own suites that made room for it.

    Raises:
      MuttlabError: the input over a cap (the message names the limit and how to fit), unreadable input, no
        usable sentence, an unknown type, no type that applies.
    """
    from muttlab.dashboard.not_applied import not_applied
    from muttlab import api
    from muttlab.api import parse_user_sentences, user_suite

    limits = settings.limits
    check_size(limits, len(data), label)
    unknown = [t for t in types if t not in api.generator_types()]
    if unknown:
        raise MuttlabError(f"no corruption generator is called {', '.join(map(repr, unknown))}; choose from "
                           f"{', '.join(api.generator_types())}")
    if not types:
        raise MuttlabError("choose at least one corruption type")
    sentences = parse_user_sentences(data, kind, label)
    _check_sentences(sentences.items, limits)
    too_long: list[tuple[str, str, str]] = []  # corruptions over the sentence limits: no trial, with the reason
    suite = user_suite(sentences, list(types), settings.seed, name="mine", not_applied=too_long, progress=progress)
    labels = {t: api.corruption_label(t) for t in types}
    applied: dict[str, set[str]] = {}
    for trial in suite.trials:
        applied.setdefault(trial.id.split("/", 1)[1], set()).add(trial.corruption)
    over = {(ident, labels.get(t, t)): why for ident, t, why in too_long}
    skipped = pd.DataFrame(
        [{"id": ident, "sentence": text, "corruption": label_, "why not": over.get((ident, label_), reason)}
         for ident, text, _ in sentences.items
         for label_, reason in not_applied(types, sorted(applied.get(ident, ())), labels)],
        columns=["id", "sentence", "corruption", "why not"])
    counts = Counter(t.corruption for t in suite.trials)
    when_not = {t: not_applied([t], [], labels)[0][1] for t in types}
    coverage = pd.DataFrame(
        [{"corruption": labels[t], "applied to": counts[t], "did not apply to": len(sentences.items) - counts[t],
          "when it does not apply": when_not[t]} for t in types],
        columns=["corruption", "applied to", "did not apply to", "when it does not apply"])
    if not suite.trials:
        raise MuttlabError("none of the chosen corruption types applies to any of your "
                           f"{len(sentences.items)} sentences: "
                           + "; ".join(f"{labels[t]}: {when_not[t]}" for t in types))
    found = Report(len(sentences.items), coverage, skipped, tuple(sentences.problems[:PROBLEMS_KEPT]),
                   len(sentences.problems))
    return _keep(visitor, suite, limits.max_suites, found)


def check_size(limits: Limits, size: int, label: str) -> None:
    """Raise MuttlabError when an input of ``size`` bytes is over the suite's size cap (an upload is checked by
    its size before it is read)."""
    if size > limits.max_suite_kb * 1024:
        raise MuttlabError(limits.exceeded("max_suite_kb", size / 1024, label)
                         + "; split it into smaller files and build a suite from each")


def _check_sentences(items: Sequence[tuple[str, str, tuple[str, ...]]], limits: Limits) -> None:
    """Raise MuttlabError when the sentences, one sentence or one of its references are over their caps."""
    if len(items) > limits.max_suite_sentences:
        raise MuttlabError(limits.exceeded("max_suite_sentences", len(items), "your input")
                           + f"; split it into parts of at most {limits.max_suite_sentences:,} sentences and build "
                             "a suite from each")
    for ident, text, refs in items:
        if len(refs) > limits.max_refs:
            raise MuttlabError(limits.exceeded("max_refs", len(refs), f"sentence {ident!r}")
                               + f"; keep at most {limits.max_refs:,} references per sentence")
        limits.check_text(text, f"sentence {ident!r}")
        for i, ref in enumerate(refs, start=1):
            limits.check_text(ref, f"reference {i} of sentence {ident!r}")


def example(kind: str) -> str:
    """The input format shown by example, in ``kind`` (csv or jsonl): the first bundled sample scenes, each
    sentence with its first references."""
    from muttlab.api import load_sample_scenes

    scenes = load_sample_scenes()[:EXAMPLE_SENTENCES]
    if kind == "jsonl":
        return "".join(json.dumps({"id": s["id"], "text": s["original"],
                                   "references": s["references"][:EXAMPLE_REFERENCES]}, ensure_ascii=False) + "\n"
                       for s in scenes)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["id", "text"] + ["reference"] * EXAMPLE_REFERENCES)
    for scene in scenes:
        writer.writerow([scene["id"], scene["original"], *scene["references"][:EXAMPLE_REFERENCES]])
    return buffer.getvalue()
