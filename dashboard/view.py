"""A dashboard view: the query parameters of a link, checked once, the only form in which pages, links, report
downloads and ``muttlab report --view`` read them.

A link is written by anyone, so nothing in it is trusted: only the keys below are kept; metric names must be
the registry's, corruption names the catalogue's (any short text when the suite names its own: a challenge
set's phenomena), the suite a named one or of a checked form (``file:`` a data-dir path, ``upload:`` /
``mine:`` an id), reference counts and strengths small whole numbers, a study's settings (correlation
method, reading, ratings, unit size, resamples...) their fixed names or bounded numbers, a file a path
inside the data dir (no NUL, no absolute path, no ``..``, no symlink that leads out), free text short and
without control characters. No Streamlit here, so the CLI uses it.

:func:`check` keeps what is valid and lists what is not (a page shows the list and carries on with the
rest); :func:`strict` raises :class:`ViewError` naming every problem (the report command).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Collection, Mapping
from urllib.parse import parse_qs, urlencode, urlsplit

from muttlab import api
from muttlab.errors import MuttlabError
from muttlab.settings import Settings, active_limits
from muttlab.api import CONTRASTIVE_FORMATS

SUITES = ("default", "store")
# A suite a link may also name: a challenge-set file in the data dir, an upload the server holds (by the sha256
# of its content), a visitor's own suite (services.user_suites). Only the form is checked here; whether the
# server holds the upload or suite is the page's question.
SUITE_FORMS = "default, store, file:<path in the data dir>, upload:<sha256>, mine:<id>"
_SUITE_IDS = {"upload": re.compile(r"[0-9a-f]{64}"), "mine": re.compile(r"[0-9a-f]{32}")}
# The trial lists of a drill-down; the last two compare with the metric of vs=: the trials where only the
# page's metric, or only the vs= metric, does the right thing.
SHOWS = ("fails", "passes", "all", "only-metric", "only-vs")
MAX_TEXT = 200  # characters of a free-text value (a search, a trial id, a study name)
MAX_ITEMS = 64  # values of one list parameter
MAX_STRENGTH = 10
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class ViewError(MuttlabError):
    """A link's query string asks for something that does not exist or may not be read."""


def _metric(value: str, ctx: "_Context") -> str:
    if value not in ctx.metric_names:
        raise ViewError(f"no metric is called {value!r}")
    return value


def _corruption(value: str, ctx: "_Context") -> str:
    if ctx.own_names:  # a challenge set's phenomenon or a visitor's own type: any short text, shown as text
        return value
    try:
        api.corruption_type(value)
    except KeyError:
        raise ViewError(f"no corruption type is called {value!r}") from None
    return value


def _refs(value: str, ctx: "_Context") -> str:
    return str(_whole(value, 1, active_limits().max_refs, "reference count"))


def _strength(value: str, ctx: "_Context") -> str:
    return str(_whole(value, 1, MAX_STRENGTH, "strength"))


_LANGUAGE_PAIR = re.compile(r"[a-z]{2,3}-[a-z]{2,3}")


def _pair(value: str, ctx: "_Context") -> str:
    """A pair store's pair id (the Annotate page), or a language pair (``en-de``: the Meta-evaluation page)."""
    if _LANGUAGE_PAIR.fullmatch(value):
        return value
    if not value.isdigit():
        raise ViewError(f"{value!r} is neither a pair id (a whole number) nor a language pair such as en-de")
    return str(_whole(value, 1, 2 ** 63 - 1, "pair id"))


def _whole(value: str, low: int, high: int, what: str) -> int:
    if not value.isdigit() or not low <= int(value) <= high:
        raise ViewError(f"{what} {value!r} is not a whole number from {low} to {high}")
    return int(value)


def _choice(*allowed: str):
    def check(value: str, ctx: "_Context") -> str:
        if value not in allowed:
            raise ViewError(f"{value!r} is not one of {', '.join(allowed)}")
        return value
    return check


def _text(value: str, ctx: "_Context") -> str:
    return value


def _suite(value: str, ctx: "_Context") -> str:
    if value in SUITES:
        return value
    kind, _, rest = value.partition(":")
    if kind == "file" and rest:
        data_file(ctx.settings, rest)
        return value
    if kind in _SUITE_IDS and _SUITE_IDS[kind].fullmatch(rest):
        return value
    raise ViewError(f"{value!r} is not one of {SUITE_FORMS}")


def _file(value: str, ctx: "_Context") -> str:
    data_file(ctx.settings, value)
    return value


def _slice(value: str, ctx: "_Context") -> str:
    """A drill-down slice (``length:5..8,severity=major``), read by the engine's one grammar, written back in
    its order (imported here only when a link names a slice)."""
    from muttlab.api import parse_slice

    try:
        return parse_slice(value).key
    except MuttlabError as exc:
        raise ViewError(getattr(exc, "problem", str(exc))) from None


# The Playground's form in a link: a candidate of at most the server's sentence length, and the references as
# a JSON list of sentences (a reference may hold any character but a control character) within this many
# characters, so that a link stays a link; a longer form is not written into the address.
LINK_REFERENCES = 8_000


def _candidate(value: str, ctx: "_Context") -> str:
    limit = active_limits().max_chars
    if len(value) > limit:
        raise ViewError(f"the candidate is {len(value):,} characters long, over {limit:,}")
    return value


def _references(value: str, ctx: "_Context") -> str:
    """A JSON list of 1 to ``max_refs`` sentences, each within ``max_chars`` and free of control characters and
    lone surrogates once its escapes are read; written back as compact JSON."""
    import json

    from muttlab.errors import DataError
    from muttlab.api import parse_json

    limits = active_limits()
    try:
        refs = parse_json(value, "references=")
    except DataError:
        raise ViewError("is not a JSON list of sentences") from None
    if not isinstance(refs, list) or not refs or not all(isinstance(r, str) for r in refs):
        raise ViewError("is not a JSON list of sentences")
    if len(refs) > limits.max_refs:
        raise ViewError(f"{len(refs)} references, over {limits.max_refs}")
    for i, ref in enumerate(refs, start=1):
        if len(ref) > limits.max_chars:
            raise ViewError(f"reference {i} is {len(ref):,} characters long, over {limits.max_chars:,}")
        if _CONTROL.search(ref) or not ref.encode("utf-8", "ignore").decode("utf-8") == ref:
            raise ViewError(f"reference {i} holds a control character or a lone surrogate")
    return json.dumps(refs, ensure_ascii=False, separators=(",", ":"))


# Keys whose one value may be longer than MAX_TEXT: a first bound here, the exact one in their checker (the
# candidate's is the server's sentence length, a setting).
LONG_VALUES = {"candidate": 20_000, "references": LINK_REFERENCES}

# key -> (checker of one value, whether it holds a comma-separated list)
KEYS = {
    "page": (_choice("run", "drilldown", "severity", "published", "human", "correlation", "meta_eval", "profile"),
             False),
    "metrics": (_metric, True), "metric": (_metric, False), "vs": (_metric, False),
    "corruptions": (_corruption, True), "corruption": (_corruption, False), "types": (_corruption, True),
    "refs": (_refs, True), "strengths": (_strength, True),
    "suite": (_suite, False), "run": (_choice("1"), False), "off": (_choice("1"), False),
    "show": (_choice(*SHOWS), False), "format": (_choice(*CONTRASTIVE_FORMATS), False),
    "q": (_text, False), "trial": (_text, False), "study": (_text, True), "status": (_text, True),
    "pair": (_pair, False), "file": (_file, False), "slice": (_slice, False),
    "candidate": (_candidate, False), "references": (_references, False),
}


# Human judgments (SICK) and Correlation studies (Flickr8K, ΔBLEU units); the pages offer a subset. The names
# are the engine's (muttlab.human.sick.READINGS, REFERENCE_SOURCES, muttlab.human.flickr.DATASETS), kept
# here so that reading a link imports no engine; tests/attacks/test_study_links.py keeps them equal.
READINGS = ("trials", "paper")
REFERENCES = ("pool", "sentence")
RATINGS = ("expert", "crowdflower")
MAX_BOOT = 2000
MAX_ASSIGNMENTS = 2000
_NUMBER = re.compile(r"-?\d{1,3}(\.\d{1,3})?")


def _boot(value: str, ctx: "_Context") -> str:
    return str(_whole(value, 0, MAX_BOOT, "bootstrap resamples"))


def _unit(value: str, ctx: "_Context") -> str:
    return str(_whole(value, 1, 10_000, "unit size"))


def _order(value: str, ctx: "_Context") -> str:
    return str(_whole(value, 1, 4, "n-gram order"))


def _assignments(value: str, ctx: "_Context") -> str:
    return str(_whole(value, 1, MAX_ASSIGNMENTS, "random assignments"))


def _threshold(value: str, ctx: "_Context") -> str:
    if not _NUMBER.fullmatch(value) or not -1 <= float(value) <= 1:
        raise ViewError(f"reference weight threshold {value!r} is not a number from -1 to 1")
    return str(float(value))


# The meta-evaluation's statistics (muttlab.meta.result.STATISTICS, which api.meta_statistics() returns), kept
# here so that reading a link imports no engine; tests/attacks/test_meta_links.py keeps them equal.
META_STATISTICS = ("acc_eq_item", "acc_eq", "pairwise_acc_item", "pairwise_acc", "kendall_item", "kendall",
                   "pearson_item", "pearson", "pairwise_acc_sys", "pearson_sys")
MAX_SEGMENT = 1_000_000


def _segment(value: str, ctx: "_Context") -> str:
    return str(_whole(value, 0, MAX_SEGMENT, "segment"))


KEYS.update({
    "statistic": (_choice(*META_STATISTICS), False), "segment": (_segment, False),
    "method": (_choice(*api.CORRELATION_METHODS), False), "reading": (_choice(*READINGS), False),
    "reference": (_choice(*REFERENCES), False), "ratings": (_choice(*RATINGS), True), "boot": (_boot, False),
    "unit": (_unit, False), "order": (_order, False), "threshold": (_threshold, False),
    "assignments": (_assignments, False), "sweeps": (_choice("0", "1"), False),
})


@dataclass(frozen=True)
class _Context:
    settings: Settings | None
    metric_names: Collection[str]
    own_names: bool = False  # the link's suite names its own corruption types (suite=file:, upload:, mine:)


@dataclass(frozen=True)
class View:
    """The checked parameters of a link (each value a string; lists comma-joined) and what was left out."""

    params: Mapping[str, str] = field(default_factory=dict)
    problems: tuple[str, ...] = ()

    @property
    def page(self) -> str:
        return self.params.get("page", "run")

    def value(self, name: str, default: str | None = None) -> str | None:
        return self.params.get(name, default)

    def values(self, name: str) -> list[str]:
        """A list parameter's values; ``all`` is kept as the one value ``all``."""
        raw = self.params.get(name, "")
        return [v for v in raw.split(",") if v] if raw else []

    def query(self) -> str:
        """The view as a query string (what a link to it carries)."""
        return urlencode(dict(self.params))


def _one(name: str, raw: object, ctx: _Context) -> str:
    """The checked value of ``name`` (raises ViewError)."""
    if isinstance(raw, (list, tuple)):  # a key given twice: the last one counts, as in the address bar
        raw = raw[-1] if raw else ""
    text = str(raw)
    if len(text) > LONG_VALUES.get(name, MAX_TEXT * (MAX_ITEMS if KEYS[name][1] else 1)):
        raise ViewError(f"the value is {len(text):,} characters long")
    if _CONTROL.search(text):
        raise ViewError("the value holds a control character")
    checker, is_list = KEYS[name]
    if not is_list:
        if len(text) > LONG_VALUES.get(name, MAX_TEXT):
            raise ViewError(f"the value is {len(text):,} characters long, over {MAX_TEXT}")
        return checker(text, ctx)
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if len(parts) > MAX_ITEMS:
        raise ViewError(f"{len(parts)} values, over {MAX_ITEMS}")
    if parts == ["all"] and name in ("metrics", "corruptions"):
        return "all"
    if any(len(p) > MAX_TEXT for p in parts):
        raise ViewError(f"a value is over {MAX_TEXT} characters long")
    return ",".join(dict.fromkeys(checker(p, ctx) for p in parts))


def check(params: Mapping[str, object], settings: Settings | None = None,
          metric_names: Collection[str] = ()) -> View:
    """The valid part of ``params`` (a query-parameter mapping); each left-out key gets a line in ``problems``.

    ``metric_names`` are the registry's names; ``settings`` locates the data dir for ``file``.
    """
    ctx = _Context(settings, frozenset(metric_names))
    if "suite" in params:
        try:
            ctx = _Context(settings, ctx.metric_names, _one("suite", params["suite"], ctx) not in SUITES)
        except ViewError:
            pass  # named among the problems below
    kept, problems = {}, []
    for name, raw in params.items():
        shown = _CONTROL.sub("?", str(name))[:40]
        if name not in KEYS:
            problems.append(f"{shown}= is not a parameter MUTT Lab reads")
            continue
        try:
            value = _one(name, raw, ctx)
        except ViewError as exc:
            problems.append(f"{shown}=: {exc}")
            continue
        if value:
            kept[name] = value
    return View(kept, tuple(problems))


def strict(params: Mapping[str, object], settings: Settings | None = None,
           metric_names: Collection[str] = ()) -> View:
    """:func:`check` that raises :class:`ViewError` naming every problem instead of leaving values out."""
    view = check(params, settings, metric_names)
    if view.problems:
        raise ViewError("this view cannot be read: " + "; ".join(view.problems)
                        + " (copy the link from the dashboard page)")
    return view


def parse_link(text: str) -> dict[str, str]:
    """The query parameters of a dashboard link, a path with a query string, or a bare query string; the page
    named by the path (``/drilldown?...``) becomes ``page`` unless the query names one."""
    text = (text or "").strip()
    parts = urlsplit(text if ("?" in text or "://" in text or text.startswith("/")) else "?" + text)
    params = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=False).items()}
    page = parts.path.strip("/").split("/")[-1]
    if page and "page" not in params:
        params["page"] = page
    return params


def data_file(settings: Settings | None, relative: str) -> Path:
    """The file ``relative`` names inside the data dir, resolved; a link may name nothing outside it.

    Raises:
      ViewError: no data dir; a NUL or control character, an absolute path, a ``..`` part, or a path
        (symlinks followed) that leads out of the data dir.
    """
    if settings is None or settings.data_dir is None:
        raise ViewError("there is no data dir to read from; upload the file instead")
    if _CONTROL.search(relative):
        raise ViewError("the path holds a control character")
    candidate = Path(relative)
    if candidate.is_absolute() or relative.startswith(("/", "\\")) or ".." in candidate.parts or ":" in relative:
        raise ViewError(f"{relative!r} is not a path relative to the data dir (no leading /, no ..)")
    root = Path(settings.data_dir).resolve()
    path = (root / candidate).resolve()
    if not path.is_relative_to(root):
        raise ViewError(f"{relative!r} leads outside the data dir")
    return path
