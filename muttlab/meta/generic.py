"""Reader of one's own human judgments (``judgments-tsv``, ``judgments-jsonl``): the same matrices as expert
MQM, from a study of one's own (docs/meta_eval.md, "Your own judgments").

One row (TSV) or one JSON object per line (JSONL) per judged output:

=============  ========  ======================================================================================
field          required  what
=============  ========  ======================================================================================
``item``       yes       the id of the source segment (a string; a whole number in JSONL is read as its text)
``system``     yes       the system that produced the output
``hypothesis`` yes       the output (empty text is an output)
``score``      yes       the human score, a finite number within ±1e15, higher is better (negate error counts
                         such as MQM)
``reference``  yes       the reference translation; JSONL may give ``references`` (a list) instead, TSV more
                         columns ``reference2``, ``reference3``, …
``source``     no        the source segment (for metrics that read it)
``lang``       no        the target language's ISO 639-1 code (``de``) or the pair (``en-de``, which a
                         calibration names), the same on every row
=============  ========  ======================================================================================

Every row of an item must give it the same references and source. A missing or malformed field, an unknown
field, a repeated (item, system), a score that is not a finite number or a text over the limits is a
:class:`~muttlab.errors.DataError` naming the file, the line and the field; nothing is skipped. The limits are
the uploads' (``MUTTLAB_MAX_UPLOAD_MB``, ``MUTTLAB_MAX_PAIRS`` rows, ``MUTTLAB_MAX_WORDS``/``_CHARS`` per text,
``MUTTLAB_MAX_REFS``).
"""
from __future__ import annotations

import hashlib
import math
import re
from pathlib import Path

import numpy as np

from muttlab.errors import DataError, MuttlabError
from muttlab.meta.judgments import MAX_SCORE, Judgments
from muttlab.settings import active_limits
from muttlab.sources import decode_text, parse_json, read_bytes

TSV, JSONL = "judgments-tsv", "judgments-jsonl"
FORMATS = (TSV, JSONL)
REQUIRED = ("item", "system", "hypothesis", "score")
OPTIONAL = ("source", "lang")
_EXTRA_REFERENCE = re.compile(r"reference([2-9]|[1-9][0-9])")
EXTENSIONS = {".tsv": TSV, ".txt": TSV, ".jsonl": JSONL, ".ndjson": JSONL, ".json": JSONL}
# A target language (de) or a language pair (en-de), as lang fields and options give them.
LANGUAGE = re.compile(r"[a-z]{2,3}(-[a-z]{2,3})?")


class _Rows:
    """The rows read so far, checked as they come."""

    def __init__(self, label: str, target_language: str | None):
        self.label = label
        self.limits = active_limits()
        self.language = target_language
        self.language_line: int | None = None
        self.pair = ""
        self.cells: dict[tuple[str, str], tuple[str, float, int]] = {}
        self.items: dict[str, tuple[tuple[str, ...], str, int]] = {}
        self.systems: dict[str, None] = {}

    def fail(self, line: int, problem: str):
        raise DataError(self.label, problem, line=line)

    def text(self, line: int, field: str, value, allow_empty: bool = True) -> str:
        if not isinstance(value, str):
            self.fail(line, f"field {field}: must be a string, got {type(value).__name__}")
        if not allow_empty and not value.strip():
            self.fail(line, f"field {field}: empty")
        try:
            self.limits.check_text(value, f"field {field}")
            value.encode("utf-8")
        except MuttlabError as exc:
            self.fail(line, str(exc))
        except UnicodeEncodeError as exc:  # a JSON escape such as \ud800: no text
            self.fail(line, f"field {field}: holds a lone surrogate (U+{ord(value[exc.start]):04X}), which is not text")
        return value

    def add(self, line: int, item, system, hypothesis, references, score, source, lang) -> None:
        if len(self.cells) >= self.limits.max_pairs:
            self.fail(line, self.limits.exceeded("max_pairs", len(self.cells) + 1, "the file"))
        if isinstance(item, int) and not isinstance(item, bool):
            item = str(item)
        item = self.text(line, "item", item, allow_empty=False)
        system = self.text(line, "system", system, allow_empty=False)
        hypothesis = self.text(line, "hypothesis", hypothesis)
        if not references:
            self.fail(line, "field reference: missing; give the reference translation")
        if len(references) > self.limits.max_refs:
            self.fail(line, "field references: " + self.limits.exceeded("max_refs", len(references), "the row"))
        refs = tuple(self.text(line, "reference", r) for r in references)
        source = "" if source is None else self.text(line, "source", source)
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
            self.fail(line, f"field score: {str(score)[:40]!r} is not a finite number")
        if abs(score) > MAX_SCORE:
            self.fail(line, f"field score: {score:g} is outside ±{MAX_SCORE:g}; rescale the scores")
        if lang is not None:
            code = self.text(line, "lang", lang).strip().lower()
            if not LANGUAGE.fullmatch(code):
                self.fail(line, f"field lang: {code[:20]!r} is not a language code such as de or en-de")
            pair, code = (code if "-" in code else ""), code.rsplit("-", 1)[-1]
            if self.language is not None and code != self.language:
                where = f"line {self.language_line}" if self.language_line else "the target language asked for"
                self.fail(line, f"field lang: {code!r} differs from {where} ({self.language!r}); one file holds "
                                "one target language")
            self.language, self.language_line = code, self.language_line or line
            self.pair = self.pair or pair
        key = (item, system)
        if key in self.cells:
            self.fail(line, f"fields item, system: {system}'s output for item {item!r} is given twice (first on "
                            f"line {self.cells[key][2]})")
        known = self.items.setdefault(item, (refs, source, line))
        if known[0] != refs:
            self.fail(line, f"field reference: item {item!r} has other references on line {known[2]}")
        if known[1] != source:
            self.fail(line, f"field source: item {item!r} has another source on line {known[2]}")
        self.cells[key] = (hypothesis, float(score), line)
        self.systems.setdefault(system)


def _read_tsv(text: str, rows: _Rows) -> None:
    lines = text.split("\n")
    header = [h.strip() for h in (lines[0].rstrip("\r").split("\t") if lines else [""])]
    known = set(REQUIRED) | set(OPTIONAL) | {"reference"}
    unknown = [h for h in header if h not in known and not _EXTRA_REFERENCE.fullmatch(h)]
    missing = [c for c in (*REQUIRED, "reference") if c not in header]
    if unknown or missing or len(set(header)) != len(header):
        problem = (f"unknown column {unknown[0][:40]!r}" if unknown else f"missing column(s) {', '.join(missing)}"
                   if missing else "a column is named twice")
        rows.fail(1, f"{problem}; a {TSV} file has the tab-separated columns {', '.join(REQUIRED)}, reference "
                     f"(then reference2, ...) and optionally {', '.join(OPTIONAL)}")
    references = [i for i, h in enumerate(header) if h == "reference" or _EXTRA_REFERENCE.fullmatch(h)]
    col = {h: i for i, h in enumerate(header)}
    for line, raw in enumerate(lines[1:], start=2):
        raw = raw.rstrip("\r")
        if not raw.strip():
            continue
        cells = raw.split("\t")
        if len(cells) != len(header):
            rows.fail(line, f"expected {len(header)} tab-separated fields, found {len(cells)}")
        score_text = cells[col["score"]].strip()
        try:
            score: object = float(score_text)
        except ValueError:
            score = score_text
        rows.add(line, cells[col["item"]], cells[col["system"]], cells[col["hypothesis"]],
                 [cells[i] for i in references if cells[i] or i == col["reference"]], score,
                 cells[col["source"]] if "source" in col else None, cells[col["lang"]] if "lang" in col else None)


def _read_jsonl(text: str, rows: _Rows) -> None:
    known = set(REQUIRED) | set(OPTIONAL) | {"reference", "references"}
    # JSON Lines ends a record at \n only (json.dumps writes U+2028 and its kind as they are).
    for line, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        record = parse_json(raw, rows.label, line=line)
        if not isinstance(record, dict):
            rows.fail(line, "each line must be a JSON object")
        unknown = [k for k in record if k not in known]
        if unknown:
            rows.fail(line, f"unknown field {str(unknown[0])[:40]!r}; the fields are {', '.join(sorted(known))}")
        missing = [k for k in REQUIRED if k not in record]
        if missing:
            rows.fail(line, f"field {missing[0]}: missing")
        if "references" in record and "reference" in record:
            rows.fail(line, "fields reference, references: give one of them")
        refs = record.get("references", record.get("reference"))
        if isinstance(refs, str):
            refs = [refs]
        if not isinstance(refs, list):
            rows.fail(line, "field references: must be a list of strings (or reference: one string)")
        rows.add(line, record["item"], record["system"], record["hypothesis"], refs, record["score"],
                 record.get("source"), record.get("lang"))


def detect_format(text: str, suffix: str = "") -> str:
    """``judgments-jsonl`` or ``judgments-tsv``: by the extension, else by the first character."""
    return EXTENSIONS.get(suffix.lower()) or (JSONL if text.lstrip().startswith("{") else TSV)


def read_judgments(path: str | Path, format: str | None = None, target_language: str | None = None) -> Judgments:
    """Judgments from a file of one's own in one of :data:`FORMATS` (told by the extension, else the first
    character); see :func:`parse_judgments`."""
    path = Path(path)
    return parse_judgments(read_bytes(path), str(path), path.suffix, format, target_language)


def parse_judgments(data: bytes, label: str = "upload", suffix: str = "", format: str | None = None,
                    target_language: str | None = None) -> Judgments:
    """Judgments from the bytes of a file in one of :data:`FORMATS` (an upload).

    Args:
      label: how errors name the file.
      suffix: its extension, which tells the format when ``format`` is None.
      target_language: the outputs' language when the file has no ``lang`` field (default English, with a
        note in the judgments' ``notes``); a ``lang`` that differs from it is an error.
    Returns:
      :class:`Judgments`: systems and items in the order they first appear; an (item, system) without a row
      is not judged (NaN gold).
    Raises:
      DataError: naming the file, the line and the field (module docstring).
    """
    limits = active_limits()
    if len(data) > limits.max_upload_bytes:
        raise DataError(label, limits.exceeded("max_upload_mb", len(data) / 2 ** 20, "the file"))
    if format is not None and format not in FORMATS:
        raise DataError(label, f"unknown judgments format {str(format)[:40]!r}; choose one of {', '.join(FORMATS)}")
    text = decode_text(data, label)
    fmt = format or detect_format(text, suffix)
    language = None if target_language is None else str(target_language).strip().lower().rsplit("-", 1)[-1]
    rows = _Rows(label, language)
    (_read_jsonl if fmt == JSONL else _read_tsv)(text, rows)
    if not rows.cells:
        raise DataError(label, f"no judged output: a {fmt} file needs a row per output (see docs/meta_eval.md)")
    if len(rows.systems) < 2:
        raise DataError(label, f"judges {len(rows.systems)} system; comparing a metric with humans needs the "
                               "outputs of at least two systems")
    systems, items = list(rows.systems), list(rows.items)
    s_index, i_index = {s: k for k, s in enumerate(systems)}, {i: k for k, i in enumerate(items)}
    gold = np.full((len(systems), len(items)), np.nan)
    hypotheses = [[""] * len(items) for _ in systems]
    for (item, system), (hypothesis, score, _) in rows.cells.items():
        gold[s_index[system], i_index[item]] = score
        hypotheses[s_index[system]][i_index[item]] = hypothesis
    return Judgments(name=Path(label).name, pair=rows.pair, target_language=rows.language or "en",
                     systems=tuple(systems), items=tuple(items), gold=gold, hypotheses=tuple(tuple(h) for h in hypotheses),
                     references=tuple(rows.items[i][0] for i in items),
                     sources=tuple(rows.items[i][1] for i in items), human="human", files=(label,),
                     data_digest=hashlib.sha256(data).hexdigest(),
                     notes=() if rows.language else ("the target language is not given (a lang field, or "
                                                     "--target-language): English assumed",))
