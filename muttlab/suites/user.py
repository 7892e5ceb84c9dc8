"""A user's own sentences with references -> a suite of every generated corruption that applies.

Input (``muttlab corrupt --input FILE``):
  * JSONL: one object per line with ``text``, ``references`` (a list of strings) and an optional ``id``;
  * CSV / TSV: a header with ``text``, optional ``id`` and one or more reference columns (``reference``,
    repeated, or ``reference1``, ``reference_2``...).
Rows without text or references are left out and reported with their line number; the rest are kept.
The suite is written with :func:`muttlab.suites.export.write_suite` (the schema is documented there) and
read back by ``muttlab run --suite FILE``. The dashboard's *Your sentences* page reads the same formats from an
upload or pasted text (:func:`parse_user_sentences`).
"""
from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from muttlab.trials import Suite
from muttlab.errors import DataError
from muttlab.suites.model import RowProblem


@dataclass
class UserSentences:
    """Sentences read from a user's file: (id, text, references) items and the rows left out."""

    items: list[tuple[str, str, tuple[str, ...]]] = field(default_factory=list)
    problems: list[RowProblem] = field(default_factory=list)


def _clean_refs(refs) -> tuple[str, ...]:
    if not isinstance(refs, list) or not all(isinstance(r, str) for r in refs):
        raise ValueError("'references' must be a list of strings")
    refs = tuple(r.strip() for r in refs if r.strip())
    if not refs:
        raise ValueError("no non-empty reference")
    return refs


def _add(out: UserSentences, seen: set, line: int, ident, text, refs) -> None:
    try:
        if not isinstance(text, str) or not text.strip():
            raise ValueError("'text' is missing or empty")
        ident = str(ident).strip() if ident not in (None, "") else f"line{line}"
        if ident in seen:
            raise ValueError(f"id {ident!r} is used twice")
        out.items.append((ident, text.strip(), _clean_refs(refs)))
        seen.add(ident)
    except ValueError as exc:
        out.problems.append(RowProblem(line, str(exc)))


FORMATS = ("jsonl", "csv", "tsv")


def sentences_format(name: str, text: str) -> str:
    """``jsonl``, ``csv`` or ``tsv``: by the file name's extension, else by the text (a first line that opens
    a JSON object is JSON lines, a first line with a tab is TSV, anything else CSV)."""
    suffix = Path(name).suffix.lower().lstrip(".")
    if suffix in FORMATS:
        return suffix
    first = next((line for line in text.split("\n") if line.strip()), "")
    return "jsonl" if first.lstrip().startswith("{") else "tsv" if "\t" in first else "csv"


def read_user_sentences(path: str | Path) -> UserSentences:
    """Read a user's sentences (JSONL, CSV or TSV by extension; see the module docstring)."""
    from muttlab.sources import read_bytes

    path = Path(path)
    if not path.exists():
        raise DataError(path, "no such file", fix="give a .jsonl, .csv or .tsv file of sentences with references")
    # The one reader of users' files: a folder, a pipe or a file over the size limit is a DataError.
    return parse_user_sentences(read_bytes(path), "csv" if path.suffix.lower() == ".csv" else
                                "tsv" if path.suffix.lower() == ".tsv" else "jsonl", path)


def parse_user_sentences(data: bytes, kind: str, label: str | Path = "sentences") -> UserSentences:
    """A user's sentences from the bytes of a file or of pasted text, in ``kind`` (one of :data:`FORMATS`);
    ``label`` names the input in errors."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataError(label, f"not valid UTF-8 (byte 0x{data[exc.start]:02x})", line=data[:exc.start].count(b"\n") + 1,
                        fix="re-save the file as UTF-8") from None
    from muttlab.suites.readers import check_rows, jsonl_records

    out, seen = UserSentences(), set()
    if kind in ("csv", "tsv"):
        check_rows(text.split("\n")[1:], str(label), first=2)  # before the csv module reads a row
        reader = csv.reader(io.StringIO(text), delimiter="\t" if kind == "tsv" else ",")
        try:
            rows = list(reader)
        except csv.Error as exc:  # a field over the csv module's size limit, a stray quote at the end
            raise DataError(label, f"not readable as {kind.upper()}: {exc}", line=reader.line_num) from None
        if not rows:
            raise DataError(label, "empty file; the header needs 'text' and at least one 'reference' column", line=1)
        header = [h.strip().lower() for h in rows[0]]
        ref_cols = [i for i, h in enumerate(header) if h.startswith("reference") or h.startswith("ref")]
        if "text" not in header or not ref_cols:
            raise DataError(label, f"header {rows[0]} needs a 'text' column and one or more 'reference' columns",
                            line=1)
        text_col, id_col = header.index("text"), header.index("id") if "id" in header else None
        for line, row in enumerate(rows[1:], start=2):
            if not any(cell.strip() for cell in row):
                continue
            if len(row) != len(header):
                out.problems.append(RowProblem(line, f"expected {len(header)} columns, found {len(row)}"))
                continue
            _add(out, seen, line, row[id_col] if id_col is not None else None, row[text_col],
                 [row[i] for i in ref_cols])
    else:
        for line, record, problem in jsonl_records(text, str(label)):
            if problem:
                out.problems.append(RowProblem(line, problem))
                continue
            _add(out, seen, line, record.get("id"), record.get("text"), record.get("references"))
    if not out.items:
        first = f"; first problem: {out.problems[0]}" if out.problems else ""
        raise DataError(label, f"no usable sentence{first}", line=out.problems[0].line if out.problems else 1)
    return out


def user_suite(sentences: UserSentences, types: Sequence[str] | None = None, seed: int = 13,
               name: str = "user", not_applied: list[tuple[str, str, str]] | None = None,
               progress: Callable[[int, int, str], None] | None = None) -> Suite:
    """Every generated corruption type (or the chosen ones) applied to each sentence that it fits; a corruption
    over the sentence limits is left out and appended to ``not_applied`` as (id, type, reason)
    (:func:`muttlab.engine.suites.generated_trials`, which tells ``progress`` the sentences parsed and
    corrupted)."""
    from muttlab.corruptions import catalog
    from muttlab.engine.suites import generated_trials

    chosen = list(types) if types else catalog.generated_types()
    for t in chosen:
        catalog.get(t)
    chosen = [t for t in chosen if catalog.get(t).generator is not None]
    items = [(ident, text, refs, f"user:{ident}") for ident, text, refs in sentences.items]
    return Suite(name, generated_trials(items, chosen, seed, not_applied, progress))
