"""MSLC24-B (Knowles, Larkin and Lo, WMT 2024), format ``mslc24-b``: its edge cases as contrastive trials.

The set is a folder per language pair (``MSLC-B/<pair>/``, e.g. ``en-de``), each holding one segment per line in
``source.txt``, ``reference.txt`` and ``hypothesis.txt``, and in ``types.tsv`` (``SEGID GENERAL SOURCE REFERENCE
HYPOTHESIS``, tab-separated) what each line targets: an empty hypothesis, a fluent hypothesis for an empty
source and reference, an untranslated source, a translation into the wrong language, a mix of languages, a
correct translation other than the reference (``refB``), language variants (the data set's README). The data
set gives no expected score; the expectation every metric is held to here is the one the set is built to
probe — an edge-case output is worse than a correct translation of the same segment:

* ``<type>``: the reference itself (a perfect translation; for an empty source and reference, the empty
  output a correct system gives) scores strictly better than the line's hypothesis, against that reference
  (as DEMETR's reference baseline, Karpinska et al. 2022, where the reference must win);
* ``<type> vs refB``: where MSLC-B gives a second human translation of the same source (en-de's ten
  ``correct-language`` lines), that translation scores strictly better than each edge case of the source.

A tie fails (the verdict's rule). ``language-variants`` (en-es) has no better side and is left out, and so is
``correct-language`` itself (the refB lines are the anchors). Each trial's phenomenon is ``<pair>/<type>``, its
target language the pair's, its source the pair's source segment.

Empty lines are test items, not errors. A file that is not UTF-8, whose last line is cut, or whose line count
differs from the pair's other files refuses the pair (a DataError naming the file and the line). A ``types.tsv``
row that is malformed, names a type MSLC-B does not have, or says a text is ``empty`` when it is not (or the
reverse) is left out with its line (``SuiteFile.problems``); the other lines are read.

Read from a folder (:func:`read_folder`: MSLC-B's root with its pair folders, or one pair's folder) or from the
files' bytes, keyed ``<pair>/<file name>`` (:func:`read_mslc`; an upload of one pair's four files).
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Mapping

from muttlab.errors import DataError, MuttlabError
from muttlab.settings import active_limits
from muttlab.sources import read_bytes
from muttlab.suites.decoding import decode
from muttlab.suites.model import MSLC24_B, RowProblem, SuiteFile
from muttlab.trials import Expectation, Suite, Trial

FILES = ("source.txt", "reference.txt", "hypothesis.txt", "types.tsv")
TEXTS = FILES[:3]
# The edge cases an output can be (types.tsv's GENERAL column), in the order reports list them.
EDGE_CASES = ("empty-hypothesis", "empty-source-and-reference", "untranslated", "wrong-language", "mix-language")
CORRECT = "correct-language"
TYPES = (*EDGE_CASES, CORRECT, "language-variants")
AGAINST_REF_B = " vs refB"
TYPE_COLUMNS = ("SEGID", "GENERAL", "SOURCE", "REFERENCE", "HYPOTHESIS")
EMPTY = "empty"  # what types.tsv's SOURCE, REFERENCE and HYPOTHESIS columns say of an empty text
# A pair folder is named for its language pair; the target language is its second code.
PAIR = re.compile(r"[a-z]{2,3}-[a-z]{2,3}")


def check_pair(pair: str) -> str:
    """``pair`` when it names a language pair (``en-de``); a DataError otherwise."""
    if not isinstance(pair, str) or not PAIR.fullmatch(pair):
        shown = pair[:40] if isinstance(pair, str) else type(pair).__name__
        raise DataError(repr(shown), "is not a language pair: MSLC24-B's pairs are named by two language codes, "
                                     "such as en-de")
    return pair


def _lines(data: bytes | str, label: str) -> list[str]:
    """One segment per line; an empty segment is an empty line. ``str.splitlines`` would also split on U+2028
    inside a segment; a carriage return before the newline is no part of the segment."""
    text = decode(bytes(data), label) if isinstance(data, (bytes, bytearray)) else data
    if not text:
        return []
    if not text.endswith("\n"):
        raise DataError(label, "the last line does not end with a newline: the file is cut (every segment, the last "
                               "one too, ends with a newline)", line=text.count("\n") + 1)
    return [line[:-1] if line.endswith("\r") else line for line in text[:-1].split("\n")]


def _check_lines(pair: str, lines: dict[str, list[str]]) -> None:
    counts = {name: len(found) for name, found in lines.items()}
    if len(set(counts.values())) == 1:
        return
    # The file named is the odd one out: its count is shared by the fewest files (the shortest among those).
    odd = min(counts, key=lambda name: (list(counts.values()).count(counts[name]), counts[name]))
    usual = max(counts.values(), key=list(counts.values()).count)
    raise DataError(f"{pair}/{odd}", "the four files must have one line per segment each, but they have "
                    + ", ".join(f"{n:,} ({name})" for name, n in counts.items()) + " lines",
                    line=min(counts[odd], usual) + 1)


def _kind(fields: list[str], texts: tuple[str, str, str]) -> str:
    """The line's GENERAL type, or a ValueError saying what is wrong with its types.tsv row."""
    if len(fields) != len(TYPE_COLUMNS):
        raise ValueError(f"expected the {len(TYPE_COLUMNS)} tab-separated columns {' '.join(TYPE_COLUMNS)}, found "
                         f"{len(fields)}")
    kind = fields[1].strip()
    if kind not in TYPES:
        raise ValueError(f"GENERAL {kind[:40]!r} is not one of MSLC-B's types ({', '.join(TYPES)})")
    for column, said, text in zip(TYPE_COLUMNS[2:], fields[2:], texts):
        if (said.strip() == EMPTY) != (text == ""):
            state = "empty" if text == "" else "not empty"
            raise ValueError(f"{column} says {said.strip()[:40]!r} but the line of {column.lower()}.txt is {state}")
    return kind


def pair_trials(pair: str, source: bytes | str, reference: bytes | str, hypothesis: bytes | str,
                types: bytes | str) -> tuple[list[Trial], dict[str, str], list[RowProblem]]:
    """The edge-case trials of one language pair (module doc) from its four files' contents.

    Returns:
      (trials, trial id -> source segment, the types.tsv lines left out with what is wrong).
    Raises:
      DataError: a pair that is no language pair, a file that is not UTF-8 or is cut, files of different line
        counts (each names the file and the line).
    """
    check_pair(pair)
    lines = {name: _lines(data, f"{pair}/{name}") for name, data in zip(FILES, (source, reference, hypothesis, types))}
    _check_lines(pair, lines)
    sources, references, hypotheses = (lines[name] for name in TEXTS)
    limits = active_limits()
    kinds, problems = [], []
    for number, row in enumerate(lines["types.tsv"], start=1):
        texts = (sources[number - 1], references[number - 1], hypotheses[number - 1])
        try:
            kind = _kind(row.split("\t"), texts)
            for text, name in zip(texts, TEXTS):
                limits.check_text(text, f"line {number} of {name}")
        except (ValueError, MuttlabError) as exc:
            problems.append(RowProblem(number, f"{pair}/types.tsv: {exc}"))
            kind = None
        kinds.append(kind)
    second = {(s, r): h for s, r, h, k in zip(sources, references, hypotheses, kinds) if k == CORRECT}
    trials, trial_sources = [], {}
    for number, (source_text, ref, hyp, kind) in enumerate(zip(sources, references, hypotheses, kinds), start=1):
        if kind not in EDGE_CASES:
            continue
        anchors = [(kind, ref)]
        if (source_text, ref) in second:
            anchors.append((kind + AGAINST_REF_B, second[(source_text, ref)]))
        for phenomenon, better in anchors:
            trial = Trial(id=f"mslc/{pair}/{phenomenon}/{number}", corruption=f"{pair}/{phenomenon}", original=better,
                          corrupted=hyp, references=(ref,), source=f"mslc:{pair}#{number}",
                          expectation=Expectation.FIRST_BETTER)
            trials.append(trial)
            trial_sources[trial.id] = source_text
    return trials, trial_sources, problems


def _by_pair(files: Mapping[str, bytes | str]) -> dict[str, dict[str, bytes | str]]:
    """``<pair>/<file name>`` -> content, grouped by pair (each with its four files), pairs sorted."""
    pairs: dict[str, dict[str, bytes | str]] = {}
    for key, data in files.items():
        pair, _, name = str(key).rpartition("/")
        if name not in FILES:
            raise DataError(str(key)[:80], f"is not one of MSLC24-B's files; a pair has {', '.join(FILES)}")
        pairs.setdefault(check_pair(pair), {})[name] = data
    for pair, found in pairs.items():
        missing = [name for name in FILES if name not in found]
        if missing:
            raise DataError(pair, f"lacks {', '.join(missing)}; a pair's four files are {', '.join(FILES)}, "
                                  "read together")
    return dict(sorted(pairs.items()))


def _check_limits(pairs: dict[str, dict[str, bytes | str]], name: str) -> None:
    """Refuse, before any line is read, files over the upload size (the four files of all pairs together) or
    holding more lines than ``MUTTLAB_MAX_PAIRS`` (each line is at least one pair)."""
    limits = active_limits()
    size = sum(len(data) for found in pairs.values() for data in found.values())
    if size > limits.max_upload_bytes:
        raise DataError(name, limits.exceeded("max_upload_mb", size / 2 ** 20, "the set"))
    seen = 0
    for pair, found in pairs.items():
        data = found["types.tsv"]
        lines = data.count(b"\n" if isinstance(data, (bytes, bytearray)) else "\n")
        if seen + lines > limits.max_pairs:
            raise DataError(f"{pair}/types.tsv", limits.exceeded("max_pairs", seen + lines, "the set") +
                            "; split it into smaller sets", line=limits.max_pairs - seen + 1)
        seen += lines


def read_mslc(files: Mapping[str, bytes | str], name: str = MSLC24_B) -> SuiteFile:
    """MSLC24-B's edge-case trials (module doc) from its files' contents, keyed ``<pair>/<file name>``.

    Args:
      files: each pair's ``source.txt``, ``reference.txt``, ``hypothesis.txt`` and ``types.tsv``
        (``{"en-de/source.txt": b"...", ...}``).
      name: the suite's name.
    Returns:
      a contrastive :class:`SuiteFile` of format ``mslc24-b``: each trial's target language its pair's (``de``),
      its source the pair's source segment; the types.tsv lines left out in ``problems``.
    Raises:
      DataError: no pair, a file that is not one of the four or missing, files over the size or pair limits,
        not UTF-8, cut, of different line counts, or no edge case at all.
    """
    pairs = _by_pair(files)
    if not pairs:
        raise DataError(name, f"no MSLC24-B file; a pair's four files are {', '.join(FILES)}")
    _check_limits(pairs, name)
    trials, sources, languages, problems = [], {}, {}, []
    for pair, found in pairs.items():
        pair_found, pair_sources, pair_problems = pair_trials(pair, *(found[n] for n in FILES))
        trials += pair_found
        sources.update(pair_sources)
        languages.update({t.id: pair.split("-")[1] for t in pair_found})
        problems += pair_problems
    if not trials:
        first = f"; first problem: {problems[0]}" if problems else ""
        raise DataError(f"{next(iter(pairs))}/types.tsv", f"no line names an edge case ({', '.join(EDGE_CASES)})"
                        f"{first}", line=problems[0].line if problems else 1)
    return SuiteFile(Suite(name, trials, languages=tuple(sorted(set(languages.values())))), MSLC24_B, sources,
                     languages, problems)


def folder_files(path: Path) -> dict[str, str]:
    """The files :func:`read_folder` reads in the folder ``path``: ``<pair>/<file name>`` -> the file's path
    relative to ``path``. ``path`` is one pair's folder (it holds ``types.tsv``; its name is the pair) or
    MSLC-B's root (every subfolder holding a ``types.tsv`` is a pair; others, such as ``metric-scores``, are not
    read).

    Raises:
      DataError: not a folder, or a folder holding no pair (named as given, never the server's path).
    """
    path = Path(path)
    if not path.is_dir():
        raise DataError(path, "is not a folder: MSLC24-B is read from its folder (MSLC-B, or one pair's "
                                   "folder such as MSLC-B/en-de)")
    if (path / "types.tsv").is_file():
        return {f"{check_pair(path.name)}/{name}": name for name in FILES}
    pairs = sorted(p.name for p in path.iterdir() if p.is_dir() and (p / "types.tsv").is_file())
    if not pairs:
        raise DataError(path, "holds no MSLC24-B pair: a pair's folder is named for its language pair (such as "
                                   f"en-de) and holds {', '.join(FILES)}")
    return {f"{check_pair(pair)}/{name}": f"{pair}/{name}" for pair in pairs for name in FILES}


def read_folder(path: Path) -> dict[str, bytes]:
    """The contents of the files :func:`folder_files` names, keyed as there (each within the upload size)."""
    return {key: read_bytes(Path(path) / inner) for key, inner in folder_files(path).items()}
