"""Readers of suite files: MUTT Lab's own trial JSONL and the published contrastive challenge-set formats.

* ``trials-jsonl`` — one trial per line, the schema :mod:`muttlab.suites.schema` documents (written by
  ``muttlab corrupt --input ... --output``).
* ``contrastive-jsonl`` — one pair per line: ``good``, ``incorrect``, ``references`` (a list; ``reference``
  as one string is read too), ``phenomenon``, optional ``source``, ``lp`` (``de-en``) and ``id``.
* ``wmt-tsv`` — the WMT metrics-task challenge-set TSV, header ``lp source good incorrect reference phenomena``.
* ``aces-tsv`` — ACES (Amrhein et al., WMT 2022): ``source good-translation incorrect-translation reference
  phenomena langpair`` (a leading id column is allowed).
* ``mslc24-b`` — MSLC24-B (Knowles, Larkin and Lo, WMT 2024): a folder per language pair of ``source.txt``,
  ``reference.txt``, ``hypothesis.txt`` and ``types.tsv``, read from the folder (MSLC-B's root, or one pair's
  folder) or from the files' contents (:mod:`muttlab.suites.mslc`, which says what each line becomes).
* ``demetr-json`` — DEMETR (Karpinska et al., EMNLP 2022), read as its datasheet defines the fields: a JSON
  list of records with ``src_sent``, ``eng_sent`` (the human reference), ``mt_sent`` (the good translation),
  ``pert_sent`` (the perturbed one), ``pert_check`` (False: the perturbation could not be applied, so the
  record is no test item — it is counted in ``SuiteFile.not_applied``, never scored), ``severity`` (base /
  minor / major / critical, kept on the trial), ``pert_id`` and ``pert_name``; the target language is English.
  In the reference baseline (``pert_id`` 35, ``base_id35_reference``) the "perturbed" side is the reference
  itself, so there the second text must win (:attr:`Expectation.SECOND_BETTER`).

An empty text (a good or incorrect translation, a reference) is a test item and is kept: an empty output is
what some challenge sets test. A malformed row (a missing field, a value that is not a string, a missing
label, JSON nested too deeply or holding a number too long: :func:`muttlab.sources.parse_json`) is left out and
reported with its line number (``SuiteFile.problems``); the good rows are kept. A file with no readable row,
more rows than ``MUTTLAB_MAX_PAIRS`` (counted before any row is read), or that is not UTF-8 / not the format,
raises :class:`DataError` naming the file and the line.
These data sets are not redistributable: the lab reads the user's own copy.
"""
from __future__ import annotations

import math
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, Mapping

from muttlab.settings import active_limits
from muttlab.sources import parse_json, read_bytes
from muttlab.trials import Expectation, Suite, Trial
from muttlab.errors import DataError, MuttlabError
from muttlab.suites.decoding import decode
from muttlab.suites import mslc
from muttlab.suites.model import (ACES_TSV, CONTRASTIVE_JSONL, DEMETR_JSON, FOLDER_FORMATS, FORMATS, TRIALS_JSONL,
                                  WMT_TSV, RowProblem, SuiteFile)

WMT_COLUMNS = ("lp", "source", "good", "incorrect", "reference", "phenomena")
ACES_COLUMNS = ("source", "good-translation", "incorrect-translation", "reference", "phenomena", "langpair")
EXTENSIONS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".tsv": "tsv", ".txt": "tsv"}

# A reader tells its progress every this many lines (a 100,000-row upload takes 1-2 s to read).
REPORT_EVERY = 5_000
_REPORT = threading.local()


@contextmanager
def rows_reported_to(report: Callable[[int, int], None]) -> Iterator[None]:
    """Within the block, in this thread, a reader of one file tells ``report(lines read, lines)`` every
    :data:`REPORT_EVERY` lines (records of a DEMETR file) and once at its end: a page reading a large upload
    counts its lines instead of spinning."""
    outer = getattr(_REPORT, "fn", None)
    _REPORT.fn = report
    try:
        yield
    finally:
        _REPORT.fn = outer


def _reported(items: list, first: int = 1) -> Iterator[tuple[int, object]]:
    """``enumerate(items, start=first)``, telling the enclosing :func:`rows_reported_to` how far it has come."""
    report = getattr(_REPORT, "fn", None)
    if report is None:
        yield from enumerate(items, start=first)
        return
    total = len(items)
    for i, item in enumerate(items):
        if i and i % REPORT_EVERY == 0:
            report(i, total)
        yield i + first, item
    report(total, total)


class _RowError(ValueError):
    """A row is malformed; the message says what is wrong."""


def _text(value, field: str, required: bool = True) -> str:
    """A text field: an empty string is a text (a test item); a missing one is an error where required."""
    if value is None:
        if required:
            raise _RowError(f"'{field}' is missing")
        return ""
    if not isinstance(value, str):
        raise _RowError(f"'{field}' must be a string, got {type(value).__name__}")
    return value.strip()


def _label(value, field: str) -> str:
    """A label (phenomenon, corruption type): it names a group, so it cannot be empty."""
    label = _text(value, field)
    if not label:
        raise _RowError(f"'{field}' is empty; every row names its phenomenon")
    return label


def _references(record: dict) -> tuple[str, ...]:
    refs = record.get("references", record.get("reference"))
    if isinstance(refs, str):
        refs = [refs]
    if not isinstance(refs, list) or not refs:
        raise _RowError("'references' must be a non-empty list of strings")
    return tuple(_text(r, "references") for r in refs)


def _finite_number(value) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:  # an integer beyond any float
        return False


def _expectation(value) -> Expectation | None:
    if value is None:
        return None
    try:
        return Expectation(value)
    except ValueError:
        raise _RowError(f"'expectation' must be one of {', '.join(repr(e.value) for e in Expectation)}") from None


def target_language(lp: str) -> str:
    """The target language of a language pair (``en-de`` -> ``de``); a bare code is itself. A value that is no
    string is a malformed row (a ValueError)."""
    if lp is not None and not isinstance(lp, str):
        raise _RowError(f"the language pair must be a string such as 'de-en', got {type(lp).__name__}")
    lp = (lp or "").strip().lower()
    return lp.rsplit("-", 1)[-1] if lp else "en"


def _builder(fmt: str, name: str):
    trials: list[Trial] = []
    out = SuiteFile(Suite(name, trials), fmt)
    seen: set[str] = set()

    limits = active_limits()

    def add(line: int, trial_id: str | None, phenomenon: str, good: str, incorrect: str, refs, source: str,
            lang: str, **extra) -> None:
        # A row no metric may score (a sentence over the limits) is left out here, with its line, rather than
        # failing the run that scores the file.
        try:
            for text, what in ((good, "the good text"), (incorrect, "the incorrect text"),
                               *((r, f"reference {i + 1}") for i, r in enumerate(refs))):
                limits.check_text(text, what)
        except MuttlabError as exc:
            raise _RowError(str(exc)) from None
        if len(refs) > limits.max_refs:
            raise _RowError(limits.exceeded("max_refs", len(refs), "the row"))
        trial_id = trial_id or f"{phenomenon}/{line}"
        if trial_id in seen:
            raise _RowError(f"id {trial_id!r} is used twice; ids must be unique")
        seen.add(trial_id)
        trials.append(Trial(id=trial_id, corruption=phenomenon, original=good, corrupted=incorrect,
                            references=tuple(refs), source=f"{fmt}:{name}#{line}", **extra))
        if source:
            out.sources[trial_id] = source
        out.languages[trial_id] = lang
    return out, add


# --------------------------------------------------------------------------- JSON lines

def check_rows(lines: list[str], name: str, first: int = 1) -> None:
    """Refuse, before any row is read, a file of more non-blank ``lines`` (the first on line ``first``) than
    ``MUTTLAB_MAX_PAIRS``: the DataError names the file and the first line over the cap."""
    limits = active_limits()
    if len(lines) <= limits.max_pairs:
        return
    seen = 0
    for number, raw in enumerate(lines, start=first):
        if raw.strip():
            seen += 1
            if seen > limits.max_pairs:
                raise DataError(name, limits.exceeded("max_pairs", sum(1 for x in lines if x.strip()), "the file")
                                + "; split it into smaller files", line=number)


def jsonl_records(text: str, name: str = "suite"):
    """(line, record or None, problem or None) for each non-blank line of a JSON-lines text (at most
    ``MUTTLAB_MAX_PAIRS`` of them: :func:`check_rows`)."""
    # JSON Lines ends a record at \n only: splitlines() would also cut a sentence at U+2028, U+0085...,
    # which json.dumps(ensure_ascii=False) writes as they are.
    lines = text.split("\n")
    check_rows(lines, name)
    for line, raw in _reported(lines):
        if not raw.strip():
            continue
        try:
            record = parse_json(raw, name, line=line)
        except DataError as exc:
            yield line, None, exc.problem
            continue
        if not isinstance(record, dict):
            yield line, None, "each line must be a JSON object"
            continue
        yield line, record, None


def _read_trials_jsonl(text: str, name: str, label: str = "") -> SuiteFile:
    out, add = _builder(TRIALS_JSONL, name)
    for line, record, problem in jsonl_records(text, label or name):
        try:
            if problem:
                raise _RowError(problem)
            human = record.get("human_score")
            if human is not None and not _finite_number(human):
                raise _RowError("'human_score' must be a finite number")
            severity = _text(record.get("severity"), "severity", required=False) or None
            add(line, _text(record.get("id"), "id", required=False) or None, _label(record.get("corruption"),
                "corruption"), _text(record.get("original"), "original"), _text(record.get("corrupted"),
                "corrupted"), _references(record), _text(record.get("src"), "src", required=False),
                target_language(record.get("lang") or "en"), human_score=human,
                expectation=_expectation(record.get("expectation")), severity=severity)
        except _RowError as exc:
            out.problems.append(RowProblem(line, str(exc)))
    return out


def _read_contrastive_jsonl(text: str, name: str, label: str = "") -> SuiteFile:
    out, add = _builder(CONTRASTIVE_JSONL, name)
    for line, record, problem in jsonl_records(text, label or name):
        try:
            if problem:
                raise _RowError(problem)
            add(line, _text(record.get("id"), "id", required=False) or None,
                _label(record.get("phenomenon", record.get("phenomena")), "phenomenon"),
                _text(record.get("good"), "good"), _text(record.get("incorrect"), "incorrect"), _references(record),
                _text(record.get("source"), "source", required=False),
                target_language(record.get("lp") or record.get("lang") or "en"))
        except _RowError as exc:
            out.problems.append(RowProblem(line, str(exc)))
    return out


# --------------------------------------------------------------------------- TSV

def _tsv_rows(text: str, name: str, columns: tuple[str, ...], fmt: str):
    lines = text.splitlines()
    if not lines:
        raise DataError(name, f"empty file; a {fmt} file starts with the header {' '.join(columns)}", line=1)
    header = [h.strip() for h in lines[0].split("\t")]
    missing = [c for c in columns if c not in header]
    if missing:
        raise DataError(name, f"header lacks {', '.join(missing)}; a {fmt} file has the tab-separated columns "
                              f"{', '.join(columns)}", line=1)
    check_rows(lines[1:], name, first=2)
    # Sentences carry quotes of their own: a tab is the only separator.
    for line, raw in _reported(lines[1:], first=2):
        if not raw.strip():
            continue
        cells = raw.split("\t")  # no quoting: the csv module would also cap a field at 128 KiB
        if len(cells) != len(header):
            yield line, None, f"expected {len(header)} tab-separated columns, found {len(cells)}"
            continue
        yield line, dict(zip(header, cells)), None


# Which column holds each field, per TSV format.
_WMT_FIELDS = {"good": "good", "incorrect": "incorrect", "reference": "reference", "source": "source",
               "phenomenon": "phenomena", "lp": "lp"}
_ACES_FIELDS = {"good": "good-translation", "incorrect": "incorrect-translation", "reference": "reference",
                "source": "source", "phenomenon": "phenomena", "lp": "langpair"}


def _read_tsv(text: str, name: str, fmt: str, columns: tuple[str, ...], col: dict[str, str],
              label: str = "") -> SuiteFile:
    out, add = _builder(fmt, name)
    for line, row, problem in _tsv_rows(text, label or name, columns, fmt):
        try:
            if problem:
                raise _RowError(problem)
            add(line, None, _label(row[col["phenomenon"]], col["phenomenon"]), _text(row[col["good"]], col["good"]),
                _text(row[col["incorrect"]], col["incorrect"]), (_text(row[col["reference"]], col["reference"]),),
                _text(row[col["source"]], col["source"], required=False), target_language(row[col["lp"]]))
        except _RowError as exc:
            out.problems.append(RowProblem(line, str(exc)))
    return out


def _read_wmt_tsv(text: str, name: str, label: str = "") -> SuiteFile:
    return _read_tsv(text, name, WMT_TSV, WMT_COLUMNS, _WMT_FIELDS, label)


def _read_aces_tsv(text: str, name: str, label: str = "") -> SuiteFile:
    return _read_tsv(text, name, ACES_TSV, ACES_COLUMNS, _ACES_FIELDS, label)


# --------------------------------------------------------------------------- DEMETR JSON

# The datasheet's perturbation whose "perturbed" side is the human reference: the metric should prefer it.
DEMETR_REFERENCE_BASELINE = 35
DEMETR_SEVERITIES = ("base", "minor", "major", "critical")


def _read_demetr_json(text: str, name: str, label: str = "") -> SuiteFile:
    records = parse_json(text, label or name)
    if not isinstance(records, list):
        raise DataError(label or name, "a DEMETR file is a JSON list of records with src_sent, eng_sent, mt_sent, pert_sent",
                        line=1)
    limits = active_limits()
    if len(records) > limits.max_pairs:
        raise DataError(label or name, limits.exceeded("max_pairs", len(records), "the file") + "; split it into smaller "
                        f"files (record {limits.max_pairs + 1:,} is the first over it)", line=1)
    out, add = _builder(DEMETR_JSON, name)
    for number, record in _reported(records):
        try:
            if not isinstance(record, dict):
                raise _RowError("each record must be a JSON object")
            pert_id = record.get("pert_id")
            phenomenon = _label(record.get("pert_name") or (f"id{pert_id}" if pert_id is not None else None),
                                "pert_name")
            applied = record.get("pert_check", True)
            if not isinstance(applied, bool):
                raise _RowError(f"'pert_check' must be true or false, got {applied!r}")
            severity = _text(record.get("severity"), "severity", required=False) or None
            if severity is not None and severity not in DEMETR_SEVERITIES:
                raise _RowError(f"'severity' must be one of {', '.join(DEMETR_SEVERITIES)}, got {severity!r}")
            texts = (_text(record.get("mt_sent"), "mt_sent"), _text(record.get("pert_sent"), "pert_sent"),
                     (_text(record.get("eng_sent"), "eng_sent"),))
            if not applied:
                out.not_applied[phenomenon] = out.not_applied.get(phenomenon, 0) + 1
                continue
            record_id = record.get("id")
            add(number, f"{phenomenon}/{record_id}" if record_id is not None else None, phenomenon, *texts,
                _text(record.get("src_sent"), "src_sent", required=False), "en", severity=severity,
                expectation=Expectation.SECOND_BETTER if pert_id == DEMETR_REFERENCE_BASELINE else None)
        except _RowError as exc:
            out.problems.append(RowProblem(number, f"record {number}: {exc}"))
    return out


# (text, suite name, what errors call the file) -> SuiteFile
READERS: dict[str, Callable[[str, str, str], SuiteFile]] = {
    TRIALS_JSONL: _read_trials_jsonl,
    CONTRASTIVE_JSONL: _read_contrastive_jsonl,
    WMT_TSV: _read_wmt_tsv,
    ACES_TSV: _read_aces_tsv,
    DEMETR_JSON: _read_demetr_json,
}


def detect_format(text: str, name: str = "", suffix: str = "") -> str:
    """The format of a suite file: told by the extension, then by the header / first record."""
    kind = EXTENSIONS.get(suffix.lower())
    stripped = text.lstrip()
    if kind is None:
        kind = "json" if stripped.startswith("[") else "jsonl" if stripped.startswith("{") else "tsv"
    if kind == "json" and not stripped.startswith("["):
        kind = "jsonl"  # a .json file holding one object per line
    if kind == "json":
        return DEMETR_JSON
    if kind == "tsv":
        header = {h.strip() for h in (text.splitlines() or [""])[0].split("\t")}
        if "good-translation" in header:
            return ACES_TSV
        if {"good", "incorrect"} <= header:
            return WMT_TSV
        raise DataError(name or "suite", "cannot tell the format: a TSV header must be the WMT challenge-set columns "
                        f"({' '.join(WMT_COLUMNS)}) or ACES' ({' '.join(ACES_COLUMNS)})", line=1,
                        fix="or pass --format-in")
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            first = parse_json(line, name or "suite", line=number, fix="or pass --format-in")
            if isinstance(first, dict) and "good" in first and "incorrect" in first:
                return CONTRASTIVE_JSONL
            if isinstance(first, dict) and "original" in first and "corrupted" in first:
                return TRIALS_JSONL
            break
    first_line = next((n for n, line in enumerate(text.split("\n"), start=1) if line.strip()), 1)
    raise DataError(name or "suite", "cannot tell the format: JSONL records need either original/corrupted "
                    "(a trial suite) or good/incorrect (a contrastive set)", line=first_line, fix="or pass --format-in")


def _parquet_as_jsonl(path: Path) -> bytes:
    import pyarrow.parquet as pq
    limits = active_limits()
    try:
        parquet = pq.ParquetFile(path)
        rows = parquet.metadata.num_rows
        if rows > limits.max_pairs:  # told by the file's footer, before any row is read
            raise DataError(path, limits.exceeded("max_pairs", rows, "the file") + "; split it into smaller files")
        records = parquet.read().to_pylist()
    except DataError:
        raise
    except Exception as exc:  # pyarrow raises several types for a damaged file
        raise DataError(path, f"cannot read as Parquet: {exc}") from None
    import json

    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")


def read_suite(path_or_bytes: str | Path | bytes | Mapping[str, bytes], format: str | None = None,
               name: str | None = None) -> SuiteFile:
    """Read a suite (a file's path or an upload's bytes; a folder's path or its files' contents) in any of
    :data:`FORMATS`.

    Args:
      path_or_bytes: the file's path, or its content; for a folder format (MSLC24-B, :mod:`muttlab.suites.mslc`)
        the folder's path, or its files' contents keyed ``<pair>/<file name>`` (an upload of a pair's files).
      format: one of :data:`FORMATS`; None tells it from the extension, then the header (a folder, or files
        keyed by name, are MSLC24-B).
      name: the suite's name (default: the file's stem or the folder's name, ``upload`` for bytes).
    Returns:
      a :class:`SuiteFile`; rows that could not be read are in ``problems`` with their line numbers.
    Raises:
      DataError: the file is missing, not UTF-8, of no known format, or has no readable row; a folder or files
        in a format that is not read from a folder, a single file in one that is.
    """
    if isinstance(path_or_bytes, Mapping):
        label = name or "upload"
        _check_folder_format(format, label, folder=True)
        return mslc.read_mslc(path_or_bytes, name or "upload")
    if isinstance(path_or_bytes, (bytes, bytearray)):
        data, label, suffix = bytes(path_or_bytes), name or "upload", ""
        _check_folder_format(format, label, folder=False)
    else:
        path = Path(path_or_bytes)
        if path.is_dir() or format in FOLDER_FORMATS:
            _check_folder_format(format, path, folder=True)  # a folder given, or asked for
            return mslc.read_mslc(mslc.read_folder(path), name or path.name)
        _check_folder_format(format, path, folder=False)
        # The one reader of users' files: missing, unreadable, a folder, a pipe or over the size limit is a DataError.
        data, label, suffix = read_bytes(path), str(path), path.suffix
        name = name or path.stem
        if suffix == ".parquet":  # an exported suite (muttlab.suites.export): the same records as its JSONL
            data, suffix = _parquet_as_jsonl(path), ".jsonl"
    text = decode(data, label)
    fmt = format or detect_format(text, label, suffix)
    result = READERS[fmt](text, name or "upload", label)
    if not result.suite.trials:
        first = f"; first problem: {result.problems[0]}" if result.problems else ""
        skipped = f"; {sum(result.not_applied.values())} record(s) not applied" if result.not_applied else ""
        raise DataError(label, f"no readable {fmt} row{first}{skipped}",
                        line=result.problems[0].line if result.problems else 1)
    return result


def _check_folder_format(format: str | None, label, folder: bool) -> None:
    """Refuse an unknown format, a folder (or files keyed by name) in a format read from one file, and one file
    in a format read from a folder."""
    if format is not None and format not in FORMATS:
        raise DataError(label, f"unknown suite format {str(format)[:40]!r}; choose one of {', '.join(FORMATS)}")
    if folder and format not in (None, *FOLDER_FORMATS):
        raise DataError(label, f"is a folder of files, read as {' or '.join(FOLDER_FORMATS)}, not as {format}")
    if not folder and format in FOLDER_FORMATS:
        raise DataError(label, f"is one file, but {format} is read from a folder: a pair's "
                               "source.txt, reference.txt, hypothesis.txt and types.tsv together")
