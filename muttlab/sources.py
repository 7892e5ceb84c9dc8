"""Readers for the datasets MUTT Lab works on.

The real datasets live outside the repository and are found through ``Settings.data_dir``
(``MUTTLAB_DATA_DIR`` / ``--data-dir``); see ``data/README.md`` for the expected layout. Every reader
raises :class:`~muttlab.errors.DataError` naming the file, the line and what was expected.
"""
from __future__ import annotations

import io
import json
import math
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from muttlab.corruptions.extract import EXTRACTORS
from muttlab.errors import DataError
from muttlab.allocation import collections_paused
from muttlab.resources.bundled import sample_dir
from muttlab.settings import Settings, active_limits
from muttlab.trials import Suite, Trial

# The ten trial sets of the MUTT study, in the order of its tables.
MUTT_SETS = ("neg_subj", "neg_verb", "sem_opps", "shuffled", "passive", "near_syms", "det_sub",
             "double_PP", "remove_prep", "swap_chunks")
MUTT_REF_COUNTS = (5, 10, 20)

DATA_LAYOUT = {
    "mutt": "mutt/experiments/<set>_a.json, _b.json, _r5.json, _r10.json, _r20.json",
    "sick": "sick/SICK.txt",
    "flickr_captions": "flickr8k/Flickr8k.token.txt",
    "flickr_expert": "flickr8k/ExpertAnnotations.txt",
    "flickr_crowdflower": "flickr8k/CrowdFlowerAnnotations.txt",
}


def data_file(settings: Settings, relative: str) -> Path:
    """The path of a file inside the data dir, or a DataError saying what is missing and how to fix it."""
    if settings.data_dir is None:
        raise DataError(relative, "no data dir is configured",
                        fix="set MUTTLAB_DATA_DIR or pass --data-dir pointing at the datasets folder")
    if not settings.data_dir.is_dir():
        raise DataError(settings.data_dir, "the data dir does not exist or is not a folder",
                        fix="point MUTTLAB_DATA_DIR / --data-dir at the datasets folder")
    path = settings.data_dir / relative
    if not path.is_file():
        raise DataError(path, f"expected file is missing; the data dir must contain {relative}",
                        fix="see data/README.md for the layout")
    return path


def read_bytes(path: Path) -> bytes:
    """The bytes of a user's or a dataset's file, with a DataError for a missing, unreadable or folder
    path and for a file over the upload size limit (``MUTTLAB_MAX_UPLOAD_MB``)."""
    limits = active_limits()
    path = Path(path)
    try:
        if path.is_dir():
            raise DataError(path, "is a folder, not a file", fix="give the path of the file")
        if path.exists() and not path.is_file():
            # A pipe would block until someone writes to it, a device may never end.
            raise DataError(path, "is not a regular file (a pipe or a device)", fix="give the path of a file")
        with path.open("rb") as handle:
            # One byte past the cap tells an oversized file (or an endless device) without reading it all.
            raw = handle.read(limits.max_upload_bytes + 1)
    except FileNotFoundError:
        raise DataError(path, "no such file", fix="check the path") from None
    except OSError as exc:
        raise DataError(path, f"cannot be read ({exc.strerror or exc})") from None
    if len(raw) > limits.max_upload_bytes:
        # Where the limit is passed: no line beyond it is read.
        raise DataError(path, limits.exceeded("max_upload_mb", len(raw) / 2 ** 20, "the file"),
                        line=raw.count(b"\n", 0, limits.max_upload_bytes) + 1)
    return raw


def read_text(path: Path) -> str:
    """A UTF-8 text file's text (without a byte-order mark); a non-UTF-8 byte is a DataError."""
    return decode_text(read_bytes(path), path)


def decode_text(raw: bytes, where) -> str:
    """UTF-8 bytes (a file's, an upload's) as text without a byte-order mark; a non-UTF-8 byte is a DataError
    naming ``where`` and the line."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise DataError(where, f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})", line=line,
                        fix="re-save the file as UTF-8") from None
    return text[1:] if text.startswith("\ufeff") else text  # a byte-order mark written by some editors


def read_lines(path: Path) -> list[str]:
    """Lines of a UTF-8 text file without line ends (CRLF or LF); a non-UTF-8 byte is a DataError.

    Only LF ends a line (a CR before it is dropped): U+2028, U+2029, U+0085 and form feeds inside a
    sentence are text, not line breaks as ``str.splitlines`` would take them.
    """
    lines = read_text(path).split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def read_table(path: Path, sep: str = ",", fix: str = "give the path of the file"):
    """A delimited text file with a header as a pandas DataFrame of strings (blank cells stay ""),
    with a DataError for a missing, non-UTF-8 or unparsable file, or one of more rows than ``MUTTLAB_MAX_PAIRS``."""
    import pandas as pd

    path = Path(path)
    if not path.exists():
        raise DataError(path, "no such file", fix=fix)
    raw = read_bytes(path)
    limits = active_limits()
    try:
        # One row past the cap tells a file over it, without parsing the rest.
        frame = pd.read_csv(io.BytesIO(raw), sep=sep, dtype=str, keep_default_na=False, encoding="utf-8",
                            nrows=limits.max_pairs + 1)
    except UnicodeDecodeError:
        raise DataError(path, "not valid UTF-8", fix="re-save the file as UTF-8") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as exc:
        raise DataError(path, f"cannot parse as {'TSV' if sep == chr(9) else 'CSV'}: {exc}") from None
    if len(frame) > limits.max_pairs:
        raise DataError(path, limits.exceeded("max_pairs", len(frame), "the file") + " (or more); split it into "
                        "smaller files", line=limits.max_pairs + 2)
    return frame


# No data file of the lab holds a number this long or nests this deep; either is refused with its line.
MAX_NUMBER_CHARS = 1000
MAX_JSON_DEPTH = 100
_JSON_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]|-?(?:\d+)(?:\.\d+)?(?:[eE][+-]?\d+)?|NaN|-?Infinity')


class _BadNumber(ValueError):
    def __init__(self, token: str, problem: str):
        super().__init__(problem)
        self.token, self.problem = token, problem


def _json_int(token: str) -> int:
    if len(token) > MAX_NUMBER_CHARS:
        raise _BadNumber(token, f"a number of {len(token):,} characters (at most {MAX_NUMBER_CHARS})")
    return int(token)


def _json_float(token: str) -> float:
    if len(token) > MAX_NUMBER_CHARS:
        raise _BadNumber(token, f"a number of {len(token):,} characters (at most {MAX_NUMBER_CHARS})")
    value = float(token)
    if not math.isfinite(value):
        raise _BadNumber(token, f"the number {token[:20]!r} is not a finite number (too large for a float)")
    return value


def _json_constant(token: str):
    raise _BadNumber(token, f"{token} is not a finite number (and not JSON)")


def _line_of(text: str, found: int) -> int:
    return text.count("\n", 0, found) + 1


def _token_line(text: str, token: str) -> int | None:
    """The line of the first number ``token`` outside a string."""
    for match in _JSON_TOKENS.finditer(text):
        if match.group() == token:
            return _line_of(text, match.start())
    return None


def _depth_line(text: str, limit: int = MAX_JSON_DEPTH) -> int | None:
    """The line on which the nesting (outside strings) first passes ``limit`` levels."""
    depth = 0
    for match in _JSON_TOKENS.finditer(text):
        token = match.group()
        if token in ("[", "{"):
            depth += 1
            if depth > limit:
                return _line_of(text, match.start())
        elif token in ("]", "}"):
            depth -= 1
    return None


def parse_json(text: str | bytes, path, line: int | None = None, fix: str | None = None):
    """``json.loads`` with every way it can fail on bad input turned into a DataError naming the file and the
    line (``line`` when ``text`` is one line of it, else found in ``text``): malformed syntax; nesting deeper
    than the parser can follow (the line where it passes :data:`MAX_JSON_DEPTH` levels); a number longer than
    :data:`MAX_NUMBER_CHARS` characters, too large for a float, NaN or Infinity."""
    try:
        return json.loads(text, parse_int=_json_int, parse_float=_json_float, parse_constant=_json_constant)
    except json.JSONDecodeError as exc:
        where = line if line is not None else exc.lineno
        raise DataError(path, f"malformed JSON: {exc.msg} (column {exc.colno})", line=where, fix=fix) from None
    except _BadNumber as exc:
        where = line if line is not None else _token_line(_as_text(text), exc.token)
        raise DataError(path, f"malformed JSON: {exc.problem}", line=where, fix=fix) from None
    except RecursionError:
        where = line if line is not None else _depth_line(_as_text(text))
        raise DataError(path, f"malformed JSON: nested too deeply (past {MAX_JSON_DEPTH} levels here)", line=where,
                        fix=fix) from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise DataError(path, f"malformed JSON: {exc}", line=line, fix=fix) from None


def _as_text(text: str | bytes) -> str:
    return text if isinstance(text, str) else text.decode("utf-8", "replace")


def read_json(path: Path):
    # A CR before a line end is whitespace to JSON: the text is parsed as it is, line numbers unchanged.
    return parse_json(read_text(path), path)


# --------------------------------------------------------------------------- MUTT experiment sets

def _captions_by_id(path: Path, records) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for i, rec in enumerate(records):
        if not isinstance(rec, dict) or "image_id" not in rec or not isinstance(rec.get("caption"), str):
            raise DataError(path, f"record {i} must be an object with image_id and caption, got {rec!r:.80}")
        out.setdefault(int(rec["image_id"]), []).append(rec["caption"])
    return out


def _load_mutt_set(data_dir: Path, name: str) -> list[Trial]:
    settings = Settings(data_dir=data_dir)
    originals_path = data_file(settings, f"mutt/experiments/{name}_a.json")
    corrupted_path = data_file(settings, f"mutt/experiments/{name}_b.json")
    originals = _captions_by_id(originals_path, read_json(originals_path))
    corrupted = _captions_by_id(corrupted_path, read_json(corrupted_path))
    # The study's pools are nested (r5 is the first five of r10, r10 of r20), so the r20 file is the pool.
    refs_path = data_file(settings, f"mutt/experiments/{name}_r{max(MUTT_REF_COUNTS)}.json")
    refs_doc = read_json(refs_path)
    if not isinstance(refs_doc, dict) or not isinstance(refs_doc.get("annotations"), list):
        raise DataError(refs_path, "expected a COCO captions object with an 'annotations' list")
    pools = _captions_by_id(refs_path, refs_doc["annotations"])
    if originals.keys() != corrupted.keys():
        raise DataError(corrupted_path, f"image ids differ from {originals_path.name}; the two files must align")
    trials = []
    for image_id in sorted(originals):
        if image_id not in pools:
            raise DataError(refs_path, f"no references for image_id {image_id}")
        trials.append(Trial(
            id=f"{name}/{image_id}", corruption=name,
            original=originals[image_id][0], corrupted=corrupted[image_id][0],
            references=tuple(pools[image_id]), source=f"mutt:{name}#{image_id}"))
    return trials


@lru_cache(maxsize=8)
def _mutt_suite_cached(data_dir: Path, names: tuple[str, ...]) -> tuple[Trial, ...]:
    with collections_paused():
        trials = [t for name in names for t in _load_mutt_set(data_dir, name)]
        sick_path = data_dir / DATA_LAYOUT["sick"]
        if sick_path.is_file():
            trials = join_sick(trials, _sick_cached(sick_path))
    return tuple(trials)


def load_mutt_experiments(settings: Settings, names=MUTT_SETS) -> Suite:
    """The MUTT study's trial sets (``mutt/experiments``), references ordered as in the r20 pool.

    When the data dir holds ``sick/SICK.txt`` too, every SICK-derived trial carries its SICK pair ids,
    splits and gold relatedness (:func:`join_sick`).
    """
    data_file(settings, f"mutt/experiments/{names[0]}_a.json")
    return Suite("mutt", list(_mutt_suite_cached(settings.data_dir, tuple(names))))


def mutt_originals(settings: Settings) -> list[tuple[str, str, tuple[str, ...]]]:
    """The distinct original sentences of the MUTT experiment sets, each once (the sets share many), as
    (id of the first trial it is the original of, sentence, that trial's references)."""
    seen: dict[str, tuple[str, str, tuple[str, ...]]] = {}
    for trial in load_mutt_experiments(settings).trials:
        seen.setdefault(trial.original.strip(), (trial.id, trial.original.strip(), trial.references))
    return list(seen.values())


# --------------------------------------------------------------------------- SICK

SICK_COLUMNS = ("pair_ID", "sentence_A", "sentence_B", "entailment_label", "relatedness_score",
                "entailment_AB", "entailment_BA", "sentence_A_original", "sentence_B_original",
                "sentence_A_dataset", "sentence_B_dataset", "SemEval_set")


@dataclass(frozen=True)
class SickPair:
    """One SICK pair (Marelli et al. 2014) with the original captions it was made from."""

    pair_id: int
    sentence_a: str
    sentence_b: str
    entailment: str  # NEUTRAL / ENTAILMENT / CONTRADICTION
    relatedness: float  # 1..5
    entailment_ab: str
    entailment_ba: str
    original_a: str
    original_b: str
    dataset_a: str  # FLICKR / SEMEVAL
    dataset_b: str
    split: str  # TRIAL / TRAIN / TEST


@lru_cache(maxsize=4)
def _sick_cached(path: Path) -> tuple[SickPair, ...]:
    lines = read_lines(path)
    if not lines or tuple(lines[0].split("\t")) != SICK_COLUMNS:
        raise DataError(path, "header row must be the 12 SICK columns: " + ", ".join(SICK_COLUMNS), line=1)
    pairs = []
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        cols = line.split("\t")
        if len(cols) != len(SICK_COLUMNS):
            raise DataError(path, f"expected {len(SICK_COLUMNS)} tab-separated columns, found {len(cols)}", line=number)
        try:
            pair_id, score = int(cols[0]), float(cols[4])
        except ValueError:
            raise DataError(path, f"pair_ID must be an integer and relatedness_score a number, got {cols[0]!r}, "
                                  f"{cols[4]!r}", line=number) from None
        pairs.append(SickPair(pair_id, cols[1], cols[2], cols[3], score, cols[5], cols[6], cols[7], cols[8],
                              cols[9], cols[10], cols[11]))
    if not pairs:
        raise DataError(path, "holds a header but no pairs", fix="point the data dir at the full SICK.txt")
    return tuple(pairs)


def load_sick(settings: Settings) -> list[SickPair]:
    """All SICK pairs from ``sick/SICK.txt``."""
    return list(_sick_cached(data_file(settings, DATA_LAYOUT["sick"])))


def _sentence_key(sentence: str) -> str:
    # Only whitespace differs between the experiment files and SICK.txt (stray trailing spaces in both).
    return " ".join(sentence.split())


def _study_pair(corruption: str, pair: SickPair, original: str) -> bool:
    """Whether the type's extractor takes this pair with this sentence as the clean one."""
    extract = EXTRACTORS.get(corruption)
    found = extract(pair) if extract else None
    return found is not None and _sentence_key(found.original) == original


def join_sick(trials, pairs) -> list[Trial]:
    """The trials with ``sick_pairs``, ``sick_splits`` and (when unset) ``human_score`` filled in from the
    SICK pairs made of the same two sentences, in either order.

    The MUTT experiment files carry image ids only; their sentences are SICK's verbatim up to whitespace,
    so the join is on the text. A trial matching no pair (a generated type, or an edited pair) is kept
    unchanged. The pair the corruption type's extractor takes (the study's pair) comes first and gives the
    gold relatedness; among equals, the pair with sentence A = the original.
    """
    by_sentences: dict[frozenset, list[SickPair]] = {}
    for pair in pairs:
        key = frozenset((_sentence_key(pair.sentence_a), _sentence_key(pair.sentence_b)))
        by_sentences.setdefault(key, []).append(pair)
    out = []
    for trial in trials:
        original = _sentence_key(trial.original)
        found = by_sentences.get(frozenset((original, _sentence_key(trial.corrupted))), [])
        if not found:
            out.append(trial)
            continue
        if len(found) > 1:  # the order needs the corruption type's extractor run on each pair: only when it matters
            found = sorted(found, key=lambda p: (not _study_pair(trial.corruption, p, original),
                                                 _sentence_key(p.sentence_a) != original, p.pair_id))
        score = trial.human_score if trial.human_score is not None else found[0].relatedness
        out.append(replace(trial, sick_pairs=tuple(p.pair_id for p in found),
                           sick_splits=tuple(p.split for p in found), human_score=score))
    return out


@dataclass(frozen=True)
class SickJoin:
    """How the trials of one corruption type joined to SICK (:func:`sick_join_report`)."""

    corruption: str
    trials: int
    joined: int
    two_pairs: int  # trials whose sentences SICK holds in both orders (two pair ids)
    splits: dict[str, int]  # trials per split (TRIAL / TRAIN / TEST / MIXED)
    why_not: str = ""


def sick_join_report(suite: Suite) -> list[SickJoin]:
    """Per corruption type: how many trials carry a SICK pair, by split, and why the others do not."""
    rows = []
    for name in suite.corruptions():
        trials = suite.of(name)
        joined = [t for t in trials if t.sick_pairs]
        splits: dict[str, int] = {}
        for t in joined:
            splits[t.split] = splits.get(t.split, 0) + 1
        missing = len(trials) - len(joined)
        why = ("" if not missing else "generated from a sentence, not taken from a SICK pair"
               if name not in EXTRACTORS else "the two sentences are no SICK pair (edited, or not from SICK)")
        rows.append(SickJoin(name, len(trials), len(joined), sum(len(t.sick_pairs) > 1 for t in joined),
                             dict(sorted(splits.items())), why))
    return rows


# --------------------------------------------------------------------------- Flickr8k

@dataclass(frozen=True)
class CaptionJudgment:
    """A human judgment of a caption (``caption_id`` = ``<image>.jpg#k``) for an image."""

    image: str
    caption_id: str
    scores: tuple[float, ...]  # Expert: three ratings 1..4; CrowdFlower: (fraction yes, n yes, n no)

    @property
    def caption_image(self) -> str:
        return self.caption_id.rsplit("#", 1)[0]


@lru_cache(maxsize=4)
def _flickr_captions_cached(path: Path) -> dict[str, tuple[str, ...]]:
    captions: dict[str, dict[int, str]] = {}
    for number, line in enumerate(read_lines(path), start=1):
        if not line.strip():
            continue
        key, tab, caption = line.partition("\t")
        image, hash_, k = key.rpartition("#")
        if not tab or not hash_ or not k.isdigit():
            raise DataError(path, f"expected '<image>.jpg#<k>' TAB caption, got {line[:60]!r}", line=number)
        captions.setdefault(image, {})[int(k)] = caption.strip()
    if not captions:
        raise DataError(path, "holds no captions", fix="point the data dir at the full Flickr8k.token.txt")
    return {image: tuple(c for _, c in sorted(by_k.items())) for image, by_k in captions.items()}


def load_flickr_captions(settings: Settings) -> dict[str, tuple[str, ...]]:
    """Image id -> its captions ordered by caption number (Flickr8k.token.txt)."""
    return _flickr_captions_cached(data_file(settings, DATA_LAYOUT["flickr_captions"]))


def _judgments(path: Path, n_scores: int) -> list[CaptionJudgment]:
    out = []
    for number, line in enumerate(read_lines(path), start=1):
        if not line.strip():
            continue
        cols = line.split("\t")
        if len(cols) != 2 + n_scores:
            raise DataError(path, f"expected image, caption id and {n_scores} scores separated by tabs, "
                                  f"found {len(cols)} columns", line=number)
        try:
            scores = tuple(float(c) for c in cols[2:])
        except ValueError:
            raise DataError(path, f"scores must be numbers, got {cols[2:]!r}", line=number) from None
        out.append(CaptionJudgment(cols[0], cols[1], scores))
    if not out:
        raise DataError(path, "holds no judgments", fix="see data/README.md for the expected file")
    return out


def load_flickr_expert(settings: Settings) -> list[CaptionJudgment]:
    """Flickr8K-Expert: 5,822 (image, caption) pairs, three expert ratings 1-4 each."""
    return _judgments(data_file(settings, DATA_LAYOUT["flickr_expert"]), 3)


def load_flickr_crowdflower(settings: Settings) -> list[CaptionJudgment]:
    """Flickr8K-CrowdFlower: (fraction of 'yes', number of yes, number of no) per (image, caption)."""
    return _judgments(data_file(settings, DATA_LAYOUT["flickr_crowdflower"]), 3)


# --------------------------------------------------------------------------- the bundled sample

SAMPLE_TRIALS = sample_dir() / "trials.jsonl"
SAMPLE_SCENES = sample_dir() / "scenes.jsonl"


def read_jsonl(path: Path) -> list[dict]:
    """The JSON objects of a JSONL file, one per non-blank line; a DataError names the first bad line, and
    a file of more records than ``MUTTLAB_MAX_PAIRS`` is refused."""
    records = []
    lines = read_lines(path)
    count = sum(1 for line in lines if line.strip())
    limits = active_limits()
    if count > limits.max_pairs:
        raise DataError(path, limits.exceeded("max_pairs", count, "the file"))
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        rec = parse_json(line, path, line=number)
        if not isinstance(rec, dict):
            raise DataError(path, "each line must be a JSON object", line=number)
        records.append(rec)
    return records


def load_sample_scenes(path: Path = SAMPLE_SCENES) -> list[dict]:
    """The sample corpus: scenes with an ``original`` sentence and ordered ``references``."""
    scenes = read_jsonl(path)
    for number, scene in enumerate(scenes, start=1):
        if not isinstance(scene.get("original"), str) or not isinstance(scene.get("references"), list):
            raise DataError(path, "each scene needs 'id', 'original' and a 'references' list", line=number)
    return scenes


def load_sample(path: Path = SAMPLE_TRIALS) -> Suite:
    """The bundled sample suite: the sample scenes corrupted by the project's own generators."""
    trials = []
    for number, rec in enumerate(read_jsonl(path), start=1):
        try:
            trials.append(Trial(id=rec["id"], corruption=rec["corruption"], original=rec["original"],
                                corrupted=rec["corrupted"], references=tuple(rec["references"]),
                                source=rec.get("source", "sample"), status=rec.get("status", "accepted")))
        except (KeyError, TypeError) as exc:
            raise DataError(path, f"trial is missing field {exc}", line=number) from None
    return Suite("sample", trials, is_sample=True)


def load_default_suite(settings: Settings) -> Suite:
    """The MUTT experiment sets when a data dir is configured, else the bundled sample."""
    return load_sample() if settings.using_sample else load_mutt_experiments(settings)
