"""MSLC24-B's edge cases (Knowles, Larkin and Lo, WMT 2024) as contrastive trials.

``mslc/2024/data/MSLC-B/<pair>/`` holds one segment per line in ``source.txt``, ``reference.txt`` and
``hypothesis.txt``, and in ``types.tsv`` what each line targets (data dir README; docs/suites.md): an empty
hypothesis, a fluent hypothesis for an empty source and reference, an untranslated source, a translation into
the wrong language, a mix of languages, a correct translation other than the reference (``refB``), language
variants. The data set gives no expected score; the expectation every metric is held to here is the one the
set is built to probe — an edge-case output is worse than a correct translation of the same segment:

* ``<type>``: the reference itself (a perfect translation; for an empty source and reference, the empty
  output a correct system gives) scores strictly better than the line's hypothesis, against that reference
  (as DEMETR's reference baseline, Karpinska et al. 2022, where the reference must win);
* ``<type> vs refB``: where MSLC-B gives a second human translation of the same source (en-de's ten
  ``correct-language`` lines), that translation scores strictly better than each edge case of the source.

A tie fails (the verdict's rule). ``language-variants`` (en-es) has no better side and is left out, and so is
``correct-language`` itself (the refB lines are the anchors). Each trial's phenomenon is ``<pair>/<type>``, its
target language the pair's.
"""
from __future__ import annotations

from pathlib import Path

from muttlab.errors import DataError
from muttlab.settings import Settings
from muttlab.sources import data_file, read_bytes
from muttlab.suites.model import CONTRASTIVE_JSONL, SuiteFile
from muttlab.trials import Expectation, Suite, Trial

FOLDER = "mslc/2024/data/MSLC-B"
PAIRS = ("en-de", "en-es", "ja-zh")
FILES = ("source.txt", "reference.txt", "hypothesis.txt", "types.tsv")
# The edge cases an output can be (types.tsv's GENERAL column), in the order reports list them.
EDGE_CASES = ("empty-hypothesis", "empty-source-and-reference", "untranslated", "wrong-language", "mix-language")
CORRECT = "correct-language"
AGAINST_REF_B = " vs refB"


def data_files(root: Path | None = None) -> list[str]:
    """The MSLC-B files read, relative to the data dir."""
    return [f"{FOLDER}/{pair}/{name}" for pair in PAIRS for name in FILES]


def _lines(path: Path) -> list[str]:
    """One segment per line; an empty segment is an empty line. ``str.splitlines`` would also split on
    U+2028 inside a segment."""
    try:
        text = read_bytes(path).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(path, f"is not UTF-8 text (byte {exc.start})") from None
    if not text.endswith("\n"):
        raise DataError(path, "does not end with a newline: the file is cut", fix="copy it again from nrc-cnrc/MSLC")
    return text[:-1].split("\n")


def _pair_trials(settings: Settings, pair: str) -> tuple[list[Trial], dict[str, str]]:
    folder = f"{FOLDER}/{pair}"
    sources, references, hypotheses, types = (_lines(data_file(settings, f"{folder}/{name}")) for name in FILES)
    counts = {name: len(lines) for name, lines in zip(FILES, (sources, references, hypotheses, types))}
    if len(set(counts.values())) != 1:
        raise DataError(f"{folder}", f"the files must have one line per segment each, but have "
                                     f"{', '.join(f'{n} {k}' for k, n in counts.items())} lines")
    kinds = []
    for number, line in enumerate(types, start=1):
        fields = line.split("\t")
        if len(fields) != 5 or not fields[1]:
            raise DataError(f"{folder}/types.tsv", "expected SEGID, GENERAL, SOURCE, REFERENCE and HYPOTHESIS "
                                                   "separated by tabs", line=number)
        kinds.append(fields[1])
    second = {(s, r): h for s, r, h, k in zip(sources, references, hypotheses, kinds) if k == CORRECT}
    trials, trial_sources = [], {}
    for number, (source, reference, hypothesis, kind) in enumerate(zip(sources, references, hypotheses, kinds), 1):
        if kind not in EDGE_CASES:
            continue
        anchors = [(kind, reference)]
        if (source, reference) in second:
            anchors.append((kind + AGAINST_REF_B, second[(source, reference)]))
        for phenomenon, better in anchors:
            trial = Trial(id=f"mslc/{pair}/{phenomenon}/{number}", corruption=f"{pair}/{phenomenon}", original=better,
                          corrupted=hypothesis, references=(reference,), source=f"mslc:{pair}#{number}",
                          expectation=Expectation.FIRST_BETTER)
            trials.append(trial)
            trial_sources[trial.id] = source
    return trials, trial_sources


def read_mslc(settings: Settings) -> SuiteFile:
    """The edge-case trials of every MSLC-B pair of the data dir (module doc), as a contrastive suite: each
    trial's target language is its pair's (``de``, ``es``, ``zh``), its source the pair's source segment.

    Raises:
      DataError: no data dir, a missing or cut file, files of different lengths, a malformed types line.
    """
    trials, sources, languages = [], {}, {}
    for pair in PAIRS:
        found, found_sources = _pair_trials(settings, pair)
        trials += found
        sources.update(found_sources)
        languages.update({t.id: pair.split("-")[1] for t in found})
    return SuiteFile(Suite("mslc24-b", trials, languages=tuple(sorted(set(languages.values())))),
                     CONTRASTIVE_JSONL, sources, languages)
