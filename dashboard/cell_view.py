"""One drill-down cell as the Drill-down page and its offline report show it, whatever the suite: the trials
with their texts and verdicts, filtered by verdict and search, failing first by margin. No Streamlit here, so
the page (through :mod:`muttlab.dashboard.services`) and ``muttlab report`` build the same list.

A cell comes from one of two engine tables, both judged by :func:`muttlab.engine.verdict.judge`:

* a grid run's table (:func:`muttlab.engine.runner.run`: the MUTT sets or the sample, the pair store, a
  visitor's suite), one metric x corruption type x reference count;
* a challenge set's per-pair table (:func:`muttlab.api.run_challenge`), one metric x phenomenon: "original" is
  the good translation, "corrupted" the incorrect one, each pair with its own expectation and references.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from muttlab.dashboard.number_format import accuracy_text, fmt_score, margin_text
from muttlab.errors import MuttlabError

COLUMNS = ["trial", "passed", "unsupported", "margin", "s_orig", "s_corr", "expected", "original", "corrupted",
           "references", "human_score", "source"]
# Suites named by a link whose trials are a challenge-set file (muttlab.dashboard.view.SUITE_FORMS).
CHALLENGE_KINDS = ("file", "upload")
# What a challenge pair expects (muttlab.trials.Expectation values), in words for its card.
EXPECTED_TEXT = {"first better": "expects the good text to score better",
                 "second better": "expects the second text to score better (the pair's own expectation)",
                 "about the same": "expects both texts to score about the same"}


def suite_kind(name: str) -> str:
    """``default``, ``store``, or the prefix of a ``file:``/``upload:``/``mine:`` suite name."""
    return name.partition(":")[0] if ":" in name else name


def is_challenge(name: str) -> bool:
    return suite_kind(name) in CHALLENGE_KINDS


def read_data_file(settings, relative: str) -> tuple[bytes | dict[str, bytes], str]:
    """The content and name of a challenge set inside the data dir (a visitor may not read elsewhere): a file's
    bytes, or for a folder (MSLC24-B's, :func:`muttlab.api.mslc_folder_files`) its files' bytes keyed
    ``<pair>/<file name>``, each file checked as a link's path is and their sizes summed before any is read.

    Raises:
      MuttlabError: no data dir, a path that may lead outside it (ViewError), a file missing, unreadable or over
        the size limit (DataError, naming the file as given, not where the server keeps it).
    """
    from pathlib import Path

    from muttlab.dashboard.view import data_file
    from muttlab.errors import DataError
    from muttlab.api import read_bytes

    try:
        path = data_file(settings, relative)
        if not path.is_dir():
            return read_bytes(path), Path(relative).stem
        return _read_folder(settings, relative.rstrip("/"), path), Path(relative.rstrip("/")).name
    except DataError as exc:  # named as the visitor gave it: where the data dir is stays on the server
        raise DataError(relative, exc.problem, line=exc.line) from None


def _read_folder(settings, relative: str, path) -> dict[str, bytes]:
    from muttlab.dashboard.view import data_file
    from muttlab.errors import DataError
    from muttlab.settings import active_limits
    from muttlab.api import mslc_folder_files, read_bytes

    # Each file through the link check: a symlink inside the folder may not lead out of the data dir either.
    paths = {key: data_file(settings, f"{relative}/{inner}") for key, inner in mslc_folder_files(path).items()}
    limits = active_limits()
    try:
        size = sum(p.stat().st_size for p in paths.values())
    except OSError:
        missing = next((key for key, p in paths.items() if not p.is_file()), "one of its files")
        raise DataError(relative, f"{missing} cannot be read: a pair's folder holds all four files") from None
    if size > limits.max_upload_bytes:
        raise DataError(relative, limits.exceeded("max_upload_mb", size / 2 ** 20, "the folder"))
    return {key: read_bytes(p) for key, p in paths.items()}


def require_contrastive(suite_file, name: str) -> None:
    """Raises MuttlabError when the file a challenge-set suite name stands for is a trial suite instead (the page
    and the report open only contrastive files per phenomenon)."""
    if not suite_file.contrastive:
        raise MuttlabError(f"{name} is a trial suite ({suite_file.format}), not a contrastive challenge set: open it "
                           "on the Challenge sets page, which scores it into the accuracy grid whose cells open here")


def _ordered(cell: pd.DataFrame) -> pd.DataFrame:
    """Failing first, the closest calls at the top; trials the metric cannot score last."""
    return cell.sort_values(["passed", "margin"], kind="stable", na_position="last").reset_index(drop=True)


def from_grid(table: pd.DataFrame, metric: str, corruption: str, refs: int, by_id: dict) -> pd.DataFrame:
    """The cell ``metric`` x ``corruption`` x ``refs`` of a runner table, with each trial's texts from ``by_id``
    (trial id -> :class:`muttlab.trials.Trial`) and, where the trials carry it, the SICK pair id and split."""
    cell = table[(table["metric"] == metric) & (table["corruption"] == corruption)
                 & (table["refs"] == int(refs))].copy()
    trials = [by_id[t] for t in cell["trial"]]
    cell["unsupported"] = cell["margin"].isna()
    cell["expected"] = None
    cell["original"] = [t.original for t in trials]
    cell["corrupted"] = [t.corrupted for t in trials]
    cell["references"] = [t.refs(int(refs)) for t in trials]
    cell["human_score"] = [t.human_score for t in trials]
    cell["source"] = [t.source for t in trials]
    extra = [a for a in ("sick_pair_id", "sick_split") if any(hasattr(t, a) for t in by_id.values())]
    for attr in extra:
        cell[attr] = [getattr(t, attr, None) for t in trials]
    return _ordered(cell[COLUMNS + extra])


def from_challenge(table: pd.DataFrame, suite_file, metric: str, phenomenon: str) -> pd.DataFrame:
    """The pairs of ``phenomenon`` as ``metric`` was judged on them in a challenge set's per-pair table
    (:attr:`muttlab.suites.contrastive.ChallengeResults.table`), with their texts from ``suite_file``."""
    part = table[(table["metric"] == metric) & (table["phenomenon"] == phenomenon)]
    by_id = {t.id: t for t in suite_file.suite.trials}
    trials = [by_id[t] for t in part["trial"]]
    cell = pd.DataFrame({
        "trial": part["trial"].to_numpy(), "passed": part["passed"].to_numpy(dtype=bool),
        "unsupported": (part["outcome"] == "unsupported").to_numpy(), "margin": part["margin"].to_numpy(),
        "s_orig": part["s_good"].to_numpy(), "s_corr": part["s_incorrect"].to_numpy(),
        "expected": part["expected"].to_numpy(), "original": [t.original for t in trials],
        "corrupted": [t.corrupted for t in trials], "references": [tuple(t.references) for t in trials],
        "human_score": None, "source": [suite_file.sources.get(t.id, "") for t in trials]})
    return _ordered(cell[COLUMNS])


@dataclass(frozen=True)
class Counts:
    """What the page's header counts: every trial, the passed, the failed (ties included) and the ones the
    metric cannot score (in no accuracy)."""

    trials: int
    passed: int
    failed: int
    unsupported: int

    @property
    def judged(self) -> int:
        return self.passed + self.failed


def counts(cell: pd.DataFrame) -> Counts:
    passed, unsupported = int(cell["passed"].sum()), int(cell["unsupported"].sum())
    return Counts(len(cell), passed, len(cell) - passed - unsupported, unsupported)


def header_numbers(found: Counts) -> list[tuple[str, str]]:
    """The numbers above a cell's trials, label and text, as the page's metrics and the report's table show them."""
    return [("trials", str(found.trials)), ("passed", str(found.passed)), ("failed", str(found.failed)),
            ("accuracy", accuracy_text(found.passed, found.judged))]


def trial_numbers(row) -> list[tuple[str, str]]:
    """A trial's scores and margin as its card and the report's row write them."""
    return [("original", fmt_score(row.s_orig)), ("corruption", fmt_score(row.s_corr)),
            ("margin", margin_text(row.s_orig, row.s_corr, row.margin))]


def vs_margin_text(row) -> str:
    """The compared metric's margin of a trial of :attr:`muttlab.dashboard.compare.Comparison.joined`."""
    return margin_text(row.vs_s_orig, row.vs_s_corr, row.vs_margin)


def verdict_word(passed: bool, unsupported: bool) -> str:
    return "unsupported" if unsupported else "passes" if passed else "fails"


def shown_text(shown_count: int, found: Counts) -> str:
    """The page writes the first number in bold: ``**12** of 214 trials shown``."""
    return f"{shown_count} of {found.trials} trials shown"


def effective_show(show: str, comparison) -> str:
    """The list a view shows: ``only-metric``/``only-vs`` need a comparison, without one the failures."""
    return "fails" if show.startswith("only-") and comparison is None else show


def shown(cell: pd.DataFrame, show: str, query: str = "", comparison=None) -> pd.DataFrame:
    """The trials a view lists, in the cell's order: by verdict (``fails``, ``passes``, ``all``) or, with a
    comparison (:class:`muttlab.dashboard.compare.Comparison`), the trials where only one of the two metrics
    does the right thing; then those whose original or corruption holds ``query`` (any case)."""
    show = effective_show(show, comparison)
    rows = cell if comparison is None else comparison.joined
    if show == "fails":
        rows = rows[~rows["passed"] & ~rows["unsupported"]]
    elif show == "passes":
        rows = rows[rows["passed"]]
    elif show == "only-metric":
        rows = rows[comparison.only_metric_mask]
    elif show == "only-vs":
        rows = rows[comparison.only_other_mask]
    needle = query.strip().lower()
    if needle:
        rows = rows[rows["original"].str.lower().str.contains(needle, regex=False)
                    | rows["corrupted"].str.lower().str.contains(needle, regex=False)]
    return rows
