"""Reader of MQM error files (``mqm-tsv``): expert MQM judgments of system outputs, as
google/wmt-mqm-human-evaluation publishes them (Freitag et al., "Experts, Errors, and Context", TACL 2021).

A language pair's folder holds two files (the data dir's ``mqm/README.md`` describes them):

* ``<stem>.tsv``: one row per marked error (or one ``No-error`` row) of each rated (system, segment), tab-separated
  with a header and **no quoting** (``system doc doc_id seg_id rater source target category severity`` and, in
  some files, ``comment``). ``target`` is the output with the error span wrapped in ``<v>`` … ``</v>``; the
  output is the target with the marks removed, the same for every row of that (system, segment). ``source`` may
  carry marks too. A mark may be left open (it then runs to the end of the text).
* ``<stem>.avg_seg_scores.tsv``: ``system mqm_avg_score seg_id`` separated by spaces or tabs: each segment's MQM
  score, negated (0 is perfect, higher is better) and averaged over raters; ``None`` where the segment was not
  rated. Unrated segments are not items.

The error files name the human translations ``ref`` and ``refB`` where the score files say ``ref-A`` and
``ref-B`` (:data:`SYSTEM_ALIASES`). One human translation is the reference of a reference-based metric and is not
scored as a system (:class:`PairSpec`; for the TED pairs the data README says which).

Nothing is dropped silently: a malformed or truncated row, an unknown system, a row whose output (or source)
disagrees with another row's of the same segment, a score that is not a number, an error row of an unrated
output and a rated output without error rows are each a :class:`~muttlab.errors.DataError` naming the file,
the line and the field.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from muttlab.errors import DataError, MuttlabError
from muttlab.meta.judgments import MAX_SCORE, ErrorSpan, Judgments
from muttlab.settings import Settings, active_limits
from muttlab.sources import data_file, read_bytes, read_lines

ProgressFn = Callable[[int, int, str], None]

STUDY = "mqm-ted"
FORMAT = "mqm-tsv"
ERROR_COLUMNS = ("system", "doc", "doc_id", "seg_id", "rater", "source", "target", "category", "severity")
OPTIONAL_COLUMNS = ("comment",)
SCORE_COLUMNS = ("system", "mqm_avg_score", "seg_id")
SCORES_SUFFIX = ".avg_seg_scores.tsv"
# The error files' names for the human translations -> the score files' (data README, "quirks").
SYSTEM_ALIASES = {"ref": "ref-A", "refB": "ref-B"}
# MQM weights (Freitag et al. 2021, §3): by severity, with two category exceptions below.
SEVERITY_WEIGHTS = {"Major": 5.0, "Minor": 1.0, "Neutral": 0.0, "No-error": 0.0}
MINOR_PUNCTUATION = ("Fluency/Punctuation", 0.1)
NON_TRANSLATION = ("Non-translation", 25.0)
_MARK = re.compile(r"</?v>")
_SEGMENT_ID = re.compile(r"[0-9]{1,9}")


@dataclass(frozen=True)
class PairSpec:
    """Where a language pair of an MQM study lies in the data dir and which human translation is its
    reference."""

    pair: str
    folder: str
    stem: str
    reference: str

    @property
    def target_language(self) -> str:
        return self.pair.rsplit("-", 1)[-1]

    @property
    def files(self) -> tuple[str, str]:
        return f"{self.folder}/{self.stem}.tsv", f"{self.folder}/{self.stem}{SCORES_SUFFIX}"


# WMT21 TED talks (data README): en-de has one human translation (ref-A); zh-en's ref-A is ranked last of 15 by
# the experts, so ref-B is the reference and ref-A one more system.
TED_PAIRS: dict[str, PairSpec] = {
    "en-de": PairSpec("en-de", "mqm/ted/ende", "mqm_ted_ende", "ref-A"),
    "zh-en": PairSpec("zh-en", "mqm/ted/zhen", "mqm_ted_zhen", "ref-B"),
}


def ted_pair(pair: str) -> PairSpec:
    """The TED pair of that name; a MuttlabError listing the known ones otherwise (a name, never a path)."""
    spec = TED_PAIRS.get(pair) if isinstance(pair, str) else None
    if spec is None:
        raise MuttlabError(f"unknown language pair {str(pair)[:60]!r} of study {STUDY}; choose from "
                           f"{', '.join(TED_PAIRS)}")
    return spec


def load_ted(settings: Settings, pair: str) -> Judgments:
    """The TED judgments of ``pair`` (``en-de``, ``zh-en``) from the data dir's ``mqm/ted/``."""
    spec = ted_pair(pair)
    errors, scores = (data_file(settings, f) for f in spec.files)
    return read_mqm(errors, scores, spec.reference, pair=spec.pair, name=f"{STUDY}:{spec.pair}")


def read_mqm_folder(folder: Path, reference: str | None = None, pair: str | None = None) -> Judgments:
    """The judgments of a language pair's folder: its one ``*.avg_seg_scores.tsv`` and the error file of the
    same stem. A TED pair's folder (``ende``, ``zhen``) knows its pair and reference; any other needs both."""
    folder = Path(folder)
    if not folder.is_dir():
        raise DataError(folder, "is not a folder", fix="give a language pair's folder, e.g. mqm/ted/ende")
    found = sorted(p for p in folder.iterdir() if p.name.endswith(SCORES_SUFFIX))
    if len(found) != 1:
        raise DataError(folder, f"holds {len(found)} files named *{SCORES_SUFFIX}; an MQM pair's folder holds "
                                "exactly one, beside its error file")
    scores = found[0]
    errors = folder / (scores.name[: -len(SCORES_SUFFIX)] + ".tsv")
    known = next((s for s in TED_PAIRS.values() if s.stem == errors.stem), None)
    pair = pair or (known.pair if known else None)
    reference = reference or (known.reference if known else None)
    if not pair or not reference:
        raise DataError(folder, "is not one of the TED pairs, so its language pair and reference are unknown",
                        fix="name them, e.g. --pair en-de --reference ref-A")
    return read_mqm(errors, scores, reference, pair=pair, name=folder.name)


def unmarked(text: str) -> tuple[str, list[tuple[int, int]]]:
    """``text`` without its ``<v>``/``</v>`` marks, and the (start, end) of each marked span in it; a span
    left open ends with the text."""
    pieces, spans, start, length, position = [], [], None, 0, 0
    for match in _MARK.finditer(text):
        piece = text[position:match.start()]
        pieces.append(piece)
        length += len(piece)
        if match.group() == "<v>":
            start = length if start is None else start
        elif start is not None:
            spans.append((start, length))
            start = None
        position = match.end()
    pieces.append(text[position:])
    clean = "".join(pieces)
    if start is not None:
        spans.append((start, len(clean)))
    return clean, spans


def weight(category: str, severity: str) -> float:
    """The MQM weight of one error (Freitag et al. 2021, §3): Major 5, Minor 1, a Minor ``Fluency/Punctuation``
    error 0.1, ``Non-translation`` 25, Neutral and No-error 0; any other category takes its severity's weight."""
    if category == NON_TRANSLATION[0]:
        return NON_TRANSLATION[1]
    if severity == "Minor" and category == MINOR_PUNCTUATION[0]:
        return MINOR_PUNCTUATION[1]
    return SEVERITY_WEIGHTS[severity]


@dataclass
class _Output:
    text: str
    line: int
    raters: dict[str, float]
    spans: list[ErrorSpan]


def _read_scores(path: Path, lines: list[str]) -> tuple[list[str], dict[tuple[str, int], tuple[float, int]]]:
    """Systems in file order and (system, segment) -> (score or NaN for ``None``, line)."""
    if not lines or lines[0].split() != list(SCORE_COLUMNS):
        raise DataError(path, f"the header must be {' '.join(SCORE_COLUMNS)}", line=1)
    systems: dict[str, None] = {}
    scores: dict[tuple[str, int], tuple[float, int]] = {}
    for line, raw in enumerate(lines[1:], start=2):
        if not raw.strip():
            continue
        fields = raw.split()
        if len(fields) != 3:
            raise DataError(path, f"expected 3 fields ({' '.join(SCORE_COLUMNS)}), found {len(fields)}", line=line,
                            fix="the file may be cut short")
        system, value, segment = fields
        seg = _segment(path, line, segment)
        if value == "None":
            number = float("nan")
        else:
            try:
                number = float(value)
            except ValueError:
                number = float("nan")
            if not np.isfinite(number) or abs(number) > MAX_SCORE:
                raise DataError(path, f"field mqm_avg_score: {value[:40]!r} is not a finite number within "
                                      f"±{MAX_SCORE:g}, nor None", line=line)
        if (system, seg) in scores:
            raise DataError(path, f"field seg_id: segment {seg} of {system} is scored twice (first on line "
                                  f"{scores[(system, seg)][1]})", line=line)
        systems.setdefault(system)
        scores[(system, seg)] = (number, line)
    return list(systems), scores


def _segment(path: Path, line: int, text: str) -> int:
    if not _SEGMENT_ID.fullmatch(text):
        raise DataError(path, f"field seg_id: {text[:40]!r} is not a segment number", line=line)
    return int(text)


def _read_errors(path: Path, lines: list[str], systems: list[str]) -> tuple[dict[tuple[str, int], _Output],
                                                                          dict[int, tuple[str, int]]]:
    """(system, segment) -> its output, raters' MQM sums and spans; segment -> (source, line)."""
    limits = active_limits()
    header = lines[0].split("\t") if lines else []
    if tuple(header[:len(ERROR_COLUMNS)]) != ERROR_COLUMNS or any(h not in OPTIONAL_COLUMNS
                                                                  for h in header[len(ERROR_COLUMNS):]):
        raise DataError(path, f"the header must be the tab-separated columns {' '.join(ERROR_COLUMNS)} "
                              f"(then optionally {', '.join(OPTIONAL_COLUMNS)})", line=1)
    if len(lines) - 1 > limits.max_pairs:
        raise DataError(path, limits.exceeded("max_pairs", len(lines) - 1, "the file"))
    known = set(systems)
    col = {name: i for i, name in enumerate(header)}
    outputs: dict[tuple[str, int], _Output] = {}
    sources: dict[int, tuple[str, int]] = {}
    for line, raw in enumerate(lines[1:], start=2):
        fields = raw.split("\t")
        if len(fields) != len(header):
            raise DataError(path, f"expected {len(header)} tab-separated fields, found {len(fields)}", line=line,
                            fix="a truncated or damaged row; the file is read without quoting, so a field holds no tab")
        system = SYSTEM_ALIASES.get(fields[col["system"]], fields[col["system"]])
        if system not in known:
            raise DataError(path, f"field system: unknown system {fields[col['system']][:60]!r}; the scores file "
                                  f"names {', '.join(systems)}", line=line)
        seg = _segment(path, line, fields[col["seg_id"]])
        severity, category, rater = fields[col["severity"]], fields[col["category"]], fields[col["rater"]]
        if severity not in SEVERITY_WEIGHTS:
            raise DataError(path, f"field severity: {severity[:40]!r} is not one of {', '.join(SEVERITY_WEIGHTS)}",
                            line=line)
        if not rater.strip():
            raise DataError(path, "field rater: empty", line=line)
        for column in ("source", "target"):
            try:
                limits.check_text(fields[col[column]], f"field {column}")
            except MuttlabError as exc:
                raise DataError(path, str(exc), line=line) from None
        source, source_spans = unmarked(fields[col["source"]])
        target, target_spans = unmarked(fields[col["target"]])
        first_source = sources.setdefault(seg, (source, line))
        if first_source[0] != source:
            raise DataError(path, f"field source: segment {seg}'s source differs from line {first_source[1]}'s "
                                  "(after removing the <v> marks)", line=line)
        output = outputs.setdefault((system, seg), _Output(target, line, {}, []))
        if output.text != target:
            raise DataError(path, f"field target: the output of {system} for segment {seg} differs from line "
                                  f"{output.line}'s (after removing the <v> marks)", line=line)
        output.raters[rater] = output.raters.get(rater, 0.0) + weight(category, severity)
        output.spans += [ErrorSpan(a, b, category, severity, rater) for a, b in target_spans]
        output.spans += [ErrorSpan(a, b, category, severity, rater, in_source=True) for a, b in source_spans]
    return outputs, sources


def read_mqm(errors_path: Path, scores_path: Path, reference: str, pair: str, name: str | None = None) -> Judgments:
    """Judgments from an MQM error file and its segment-score file.

    Args:
      reference: the human translation that is every item's reference (as the score file names it); it is
        not scored as a system.
      pair: the language pair, ``en-de``; its second code is the target language.
    Returns:
      :class:`Judgments` whose items are the segments rated for at least one system, in segment order; the
      gold is the score file's (negated MQM, higher is better).
    Raises:
      DataError: naming the file, the line and the field, for every problem listed in the module docstring.
    """
    errors_path, scores_path = Path(errors_path), Path(scores_path)
    systems, scores = _read_scores(scores_path, read_lines(scores_path))
    if reference not in systems:
        raise DataError(scores_path, f"names no system {reference!r} to use as the reference; it names "
                                     f"{', '.join(systems)}")
    outputs, sources = _read_errors(errors_path, read_lines(errors_path), systems)
    for (system, seg), output in outputs.items():
        score = scores.get((system, seg))
        if score is None or np.isnan(score[0]):
            state = "no score" if score is None else f"score None (line {score[1]})"
            raise DataError(errors_path, f"field seg_id: {system}'s segment {seg} has error rows but {state} in "
                                         f"{scores_path.name}", line=output.line)
    for (system, seg), (value, line) in scores.items():
        if not np.isnan(value) and (system, seg) not in outputs:
            raise DataError(scores_path, f"{system}'s segment {seg} is rated but has no row in {errors_path.name}",
                            line=line, fix="is the error file cut short?")
    segments = sorted({seg for (_, seg), (value, _) in scores.items() if not np.isnan(value)})
    scored = [s for s in systems if s != reference]
    index = {seg: i for i, seg in enumerate(segments)}
    row = {s: k for k, s in enumerate(scored)}
    gold = np.full((len(scored), len(segments)), np.nan)
    reference_gold = np.full(len(segments), np.nan)
    hypotheses = [[""] * len(segments) for _ in scored]
    refs: list[str | None] = [None] * len(segments)
    errors: dict[tuple[int, int], tuple[ErrorSpan, ...]] = {}
    for (system, seg), output in outputs.items():
        i = index[seg]
        value = scores[(system, seg)][0]
        if system == reference:
            refs[i], reference_gold[i] = output.text, value
            continue
        s = row[system]
        gold[s, i] = value
        hypotheses[s][i] = output.text
        if output.spans:
            errors[(s, i)] = tuple(output.spans)
    missing = [seg for seg, ref in zip(segments, refs) if ref is None]
    if missing:
        raise DataError(errors_path, f"segment {missing[0]} has no output of the reference {reference} "
                                     f"({len(missing)} segment(s) lack one); a reference-based metric has "
                                     "nothing to compare with")
    digest = hashlib.sha256(read_bytes(errors_path))
    digest.update(read_bytes(scores_path))
    return Judgments(name=name or errors_path.stem, pair=pair, target_language=pair.rsplit("-", 1)[-1],
                     systems=tuple(scored), items=tuple(str(s) for s in segments), gold=gold,
                     hypotheses=tuple(tuple(h) for h in hypotheses), references=tuple((r,) for r in refs),
                     sources=tuple(sources[seg][0] for seg in segments), errors=errors, reference_system=reference,
                     reference_gold=reference_gold, human="MQM", files=(str(errors_path), str(scores_path)),
                     data_digest=digest.hexdigest())


def mqm_from_errors(errors_path: Path, scores_path: Path) -> dict[tuple[str, int], float]:
    """Each rated (system, segment)'s score recomputed from its error rows with :func:`weight`: the errors
    summed per rater, averaged over raters and negated (what the score file holds; Freitag et al. 2021, §3)."""
    systems, _ = _read_scores(scores_path, read_lines(scores_path))
    outputs, _ = _read_errors(errors_path, read_lines(errors_path), systems)
    return {key: -float(np.mean(list(o.raters.values()))) for key, o in outputs.items()}


def system_table(judgments: Judgments) -> list[tuple[str, float]]:
    """Every rated output's system with its MQM score per segment (the negated mean of the gold), best first,
    the reference translation included: the published system-level MQM table's form."""
    means = judgments.system_gold(with_reference=True)
    return sorted(((system, -mean) for system, mean in means.items()), key=lambda pair: pair[1])


def measure_published(settings: Settings, rows, registry, progress: ProgressFn) -> dict[int, tuple[float, str]]:
    """The published system-level MQM numbers of the TED pairs (``muttlab reproduce``): each row's ``subset``
    is ``<pair>:<system>``; the measured value is that system's MQM per segment from the judgment files."""
    out: dict[int, tuple[float, str]] = {}
    tables: dict[str, dict[str, float] | str] = {}
    for i, subset in rows["subset"].items():
        pair, _, system = str(subset).partition(":")
        if pair not in tables:
            progress(0, 1, f"MQM TED {pair}")
            try:
                tables[pair] = dict(system_table(load_ted(settings, pair)))
            except MuttlabError as exc:  # no judgments in this data dir: the numbers are not computed, with why
                tables[pair] = str(exc)
        table = tables[pair]
        if isinstance(table, str):
            out[i] = (np.nan, table)
        else:
            value = table.get(system)
            out[i] = (np.nan, f"no system {system!r} in the {pair} judgments") if value is None else (value, "")
    return out
