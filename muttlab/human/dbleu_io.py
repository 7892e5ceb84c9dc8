"""Reading ΔBLEU inputs: hypotheses with human-weighted references (Galley et al. 2015).

Two formats, chosen by the file's extension (``.jsonl`` / ``.json`` → JSONL, anything else → TSV):

* JSONL, one segment per line::

    {"hypothesis": "a man is playing a guitar", "references": [["a man plays a guitar", 1.0], ["a dog runs", -0.5]]}

* TSV, one segment per line, no header: the hypothesis, then alternating reference / weight columns::

    a man is playing a guitar<TAB>a man plays a guitar<TAB>1.0<TAB>a dog runs<TAB>-0.5

Blank lines and lines starting with ``#`` are skipped. Weights are numbers in [-1, 1]; every segment needs
at least one positive weight (the paper assumes one), otherwise the file is rejected naming the line.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from muttlab.errors import DataError
from muttlab.settings import active_limits
from muttlab.sources import parse_json, read_lines
from muttlab.metrics.delta_bleu import WeightedRef

FORMAT_HINT = ('each line must be {"hypothesis": str, "references": [[str, weight], ...]} (JSONL) or '
               "hypothesis<TAB>reference<TAB>weight[<TAB>reference<TAB>weight...] (TSV); see docs/metrics.md")


@dataclass(frozen=True)
class WeightedSegments:
    """Hypotheses and their weighted references, aligned; ``lines`` are the 1-based source lines."""

    hypotheses: list[str]
    references: list[list[WeightedRef]]
    lines: list[int]


def _weight(path: Path, lineno: int, value) -> float:
    try:
        w = float(value)
    except (TypeError, ValueError, OverflowError):
        raise DataError(path, f"reference weight {str(value)[:40]!r} is not a number in [-1, 1]", line=lineno,
                        fix=FORMAT_HINT) from None
    if math.isnan(w) or not -1.0 <= w <= 1.0:
        raise DataError(path, f"reference weight {w} is outside [-1, 1]", line=lineno,
                        fix="ΔBLEU weights are human ratings rescaled to [-1, 1]")
    return w


def _parse_jsonl(path: Path, lineno: int, line: str) -> tuple[str, list[WeightedRef]]:
    record = parse_json(line, path, line=lineno, fix=FORMAT_HINT)
    if not isinstance(record, dict) or not isinstance(record.get("hypothesis"), str) \
            or not isinstance(record.get("references"), list):
        raise DataError(path, "expected an object with a string 'hypothesis' and a list 'references'",
                        line=lineno, fix=FORMAT_HINT)
    refs = []
    for ref in record["references"]:
        if not (isinstance(ref, (list, tuple)) and len(ref) == 2 and isinstance(ref[0], str)):
            raise DataError(path, f"reference {ref!r:.60} is not a [text, weight] pair", line=lineno, fix=FORMAT_HINT)
        refs.append((ref[0], _weight(path, lineno, ref[1])))
    return record["hypothesis"], refs


def _parse_tsv(path: Path, lineno: int, line: str) -> tuple[str, list[WeightedRef]]:
    cols = line.split("\t")
    if len(cols) < 3 or len(cols) % 2 == 0:
        raise DataError(path, f"expected a hypothesis then reference/weight column pairs, got {len(cols)} columns",
                        line=lineno, fix=FORMAT_HINT)
    refs = [(cols[k], _weight(path, lineno, cols[k + 1])) for k in range(1, len(cols), 2)]
    return cols[0], refs


def read_weighted_segments(path: Path) -> WeightedSegments:
    """Segments of a ΔBLEU input file (format by extension, see the module docstring).

    Raises:
      DataError: unreadable file, malformed line, a weight outside [-1, 1], an empty hypothesis, a
        segment without references or without any positive weight — naming the line.
    """
    path = Path(path)
    if not path.exists():
        raise DataError(path, "no such file", fix="give the path of a ΔBLEU JSONL or TSV file")
    parse = _parse_jsonl if path.suffix.lower() in (".jsonl", ".json") else _parse_tsv
    hyps, refs, lines = [], [], []
    limits = active_limits()
    for lineno, line in enumerate(read_lines(path), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if len(hyps) == limits.max_pairs:  # before this segment is parsed
            raise DataError(path, limits.exceeded("max_pairs", len(hyps) + 1, "the file") + " (or more); split it "
                            "into smaller files", line=lineno)
        hyp, seg_refs = parse(path, lineno, line)
        if not hyp.strip():
            raise DataError(path, "the hypothesis is empty", line=lineno, fix="give a non-empty hypothesis")
        if not seg_refs:
            raise DataError(path, "the segment has no references", line=lineno, fix=FORMAT_HINT)
        if max(w for _, w in seg_refs) <= 0:
            raise DataError(path, "the segment has no reference with a positive weight; ΔBLEU (Galley et al. "
                            "2015, §3) needs at least one", line=lineno, fix="add one or drop the segment")
        hyps.append(hyp)
        refs.append(seg_refs)
        lines.append(lineno)
    if not hyps:
        raise DataError(path, "the file holds no segments", line=1, fix=FORMAT_HINT)
    return WeightedSegments(hyps, refs, lines)
