"""Reference–candidate similarity scores from relative-ranking judgments (ReVal §5, Algorithm 1).

Gupta, Orasan & van Genabith (EMNLP 2015) train ReVal on WMT relative-ranking judgments turned into
similarity scores: each (segment, system) translation collects the ranks it received on the screens it
was shown on; translations ranked fewer than ``n`` times are dropped; a translation's score comes from
its mean rank; and translations whose ranks disagree too much (high variance) are dropped, with the
variance threshold set by a search — the largest threshold at which the scores still agree with the
judgments at Kendall τ ≥ 0.78.

Input: a table (CSV, or TSV when the file ends in ``.tsv``/``.txt``), header row, one row per system
per judgment screen:

========== ==========================================================
judgment   id of one ranking screen (one annotator ranking the systems shown together)
segment    id of the source segment
system     system name
rank       the system's rank on that screen, 1 = best, ties allowed
reference  the segment's reference translation
candidate  the system's translation of the segment
========== ==========================================================

WMT's own wide CSVs (WMT 2012–2014 "WMT format": ``srcIndex``, ``judgeId``, ``system1Id`` …
``system5rank``) are read by :func:`read_wmt_rankings`, which melts the system columns into this table
and joins the plain-text reference and system-output files by ``srcIndex``.

Scores: score = hi − (mean rank − 1)·(hi − lo)/(R − 1), R the largest rank in the file, so rank 1 on
every screen maps to ``hi`` (5) and rank R to ``lo`` (1), the relatedness scale ReVal is trained on.

Agreement: WMT-style Kendall τ = (concordant − discordant)/(concordant + discordant) over every pair of
kept translations shown on the same screen with different ranks; equal scores count as discordant
(the WMT 2012/2013 convention, which keeps ties from looking like agreement).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from muttlab.errors import DataError, MuttlabError
from muttlab.sources import read_lines, read_table

COLUMNS = ("judgment", "segment", "system", "rank", "reference", "candidate")
DEFAULT_MIN_JUDGMENTS = 2
DEFAULT_TAU = 0.78
SCALE = (1.0, 5.0)


def read_rankings(path: Path) -> pd.DataFrame:
    """The judgments table of ``path`` (columns :data:`COLUMNS`), validated; DataError on bad input."""
    path = Path(path)
    sep = "\t" if path.suffix.lower() in (".tsv", ".txt") else ","
    frame = read_table(path, sep, fix="give the path of a CSV/TSV ranking file")
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise DataError(path, f"missing column(s) {', '.join(missing)}; the header must name "
                              f"{', '.join(COLUMNS)}", line=1)
    return validate(frame[list(COLUMNS)], path)


WMT_REQUIRED = ("srclang", "trglang", "srcIndex", "system1Id", "system1rank")
# WMT 2012-2014 files name languages in full (Czech); later ones use ISO 639-2 codes (ces). --pair may
# use either, or ISO 639-1 (cs-en); all are compared by the full name.
WMT_LANGUAGES = {
    "czech": ("cs", "ces", "cze"), "german": ("de", "deu", "ger"), "english": ("en", "eng"),
    "spanish": ("es", "spa"), "french": ("fr", "fra", "fre"), "hindi": ("hi", "hin"), "russian": ("ru", "rus"),
    "finnish": ("fi", "fin"), "romanian": ("ro", "ron", "rum"), "turkish": ("tr", "tur"),
}
_LANGUAGE_NAMES = {code: name for name, codes in WMT_LANGUAGES.items() for code in codes}


def is_wmt_format(path: Path) -> bool:
    """Whether the file's header is WMT's wide ranking format (``system1Id`` …)."""
    path = Path(path)
    if not path.is_file():
        return False  # the reader that follows names the problem
    try:
        with open(path, "rb") as handle:
            # A bounded read: a file without line ends must not be read whole to find its first line.
            first = handle.read(65536).split(b"\n", 1)[0]
    except OSError:
        return False
    header = first.decode("utf-8", "replace").strip().split(",")
    return all(column in header for column in WMT_REQUIRED)


@dataclass
class WmtRankings:
    """A WMT ranking file as the judgments table (:data:`COLUMNS`) and what reading it left out.

    Attributes:
      frame: one row per ranked system per screen; a screen (``judgment``) is a line of the CSV.
      pair: the language pair read, as written in the file (``Czech-English``).
      blank: ranks left blank by the annotator (-1 in WMT files), dropped.
      missing_outputs: systems with no output file, and how many of their ranks were dropped.
      empty_texts: ranks dropped because the reference or the system output line was empty.
    """

    frame: pd.DataFrame
    pair: str
    blank: int
    missing_outputs: dict[str, int]
    empty_texts: int


def _language(value: str) -> str:
    value = value.strip().lower()
    return _LANGUAGE_NAMES.get(value, value)


def read_wmt_rankings(path: Path, references: Path, systems: Path, pair: str | None = None) -> WmtRankings:
    """Judgments from a WMT ranking CSV, with texts from a plain reference file and a system-output folder.

    Args:
      path: the CSV (header ``srclang,trglang,srcIndex,…,system1Id,…,system1rank,…``).
      references: the reference translations, one line per source segment; ``srcIndex`` (1-based) is the line.
      systems: a folder with one file per system, named as the ``systemNId`` values, lines as the references.
      pair: ``src-trg`` (codes such as ``cs-en`` or names such as ``Czech-English``) when the CSV holds
        several language pairs; the reference and outputs must be that pair's.

    Raises:
      DataError: a missing file or column, a pair not in the file (or several and none chosen), a bad
        ``srcIndex`` or rank, a ``srcIndex`` past the end of the reference file.
    """
    path, references, systems = Path(path), Path(references), Path(systems)
    wide = read_table(path, fix="give the path of a WMT ranking CSV")
    if not references.is_file():
        raise DataError(references, "no such file", fix="give the plain-text reference file, one segment per line")
    if not systems.is_dir():
        raise DataError(systems, "not a folder", fix="give the folder of system outputs, one file per system")
    missing = [c for c in WMT_REQUIRED if c not in wide.columns]
    if missing:
        raise DataError(path, f"missing column(s) {', '.join(missing)}; not a WMT ranking CSV", line=1)
    wide["line"] = np.arange(len(wide)) + 2
    pairs = wide["srclang"].str.strip() + "-" + wide["trglang"].str.strip()
    present = list(dict.fromkeys(pairs))
    if pair is None:
        if len(present) > 1:
            raise DataError(path, f"holds {len(present)} language pairs ({', '.join(present)})",
                            fix="choose the one the reference and system outputs belong to, e.g. --pair cs-en")
        chosen = present[0] if present else ""
    else:
        src, _, trg = pair.partition("-")
        matches = [p for p in present if [_language(x) for x in p.split("-", 1)] == [_language(src), _language(trg)]]
        if not matches:
            raise DataError(path, f"has no judgments for {pair!r}; it holds {', '.join(present) or 'none'}")
        chosen = matches[0]
    wide = wide[pairs == chosen]
    index = pd.to_numeric(wide["srcIndex"], errors="coerce")
    bad = np.flatnonzero(index.isna() | (index < 1) | (index != index.round()))
    if bad.size:
        raise DataError(path, f"srcIndex must be a whole number >= 1, got {wide['srcIndex'].iloc[bad[0]]!r}",
                        line=int(wide["line"].iloc[bad[0]]))
    ref_lines = read_lines(references)
    beyond = np.flatnonzero(index.to_numpy() > len(ref_lines))
    if beyond.size:
        raise DataError(path, f"srcIndex {int(index.iloc[beyond[0]])} is past the {len(ref_lines)} lines of "
                              f"{references}", line=int(wide["line"].iloc[beyond[0]]),
                        fix="give the reference file of this test set and language pair")
    slots = sorted(int(c[len("system"):-len("Id")]) for c in wide.columns
                   if c.startswith("system") and c.endswith("Id") and c[len("system"):-len("Id")].isdigit())
    rows, blank, empty, seen = [], 0, 0, set()
    missing_outputs: dict[str, int] = {}
    outputs: dict[str, list[str] | None] = {}
    for slot in slots:
        rank_column = f"system{slot}rank"
        if rank_column not in wide.columns:
            continue
        for line, segment, system, rank in zip(wide["line"], index.astype(int), wide[f"system{slot}Id"],
                                                wide[rank_column]):
            system = system.strip()
            if not system:
                continue
            if rank.strip() == "-1":
                blank += 1
                continue
            if not rank.strip().isdigit() or int(rank) < 1:
                raise DataError(path, f"{rank_column} must be a whole number >= 1 (or -1 for blank), got {rank!r}",
                                line=int(line))
            if (line, system) in seen:
                raise DataError(path, f"system {system!r} appears twice on one screen", line=int(line))
            seen.add((line, system))
            if system not in outputs:
                file = systems / system
                outputs[system] = read_lines(file) if file.is_file() else None
            lines = outputs[system]
            if lines is None:
                missing_outputs[system] = missing_outputs.get(system, 0) + 1
                continue
            reference = ref_lines[segment - 1].strip()
            candidate = lines[segment - 1].strip() if segment <= len(lines) else ""
            if not reference or not candidate:
                empty += 1
                continue
            rows.append({"judgment": str(line), "segment": str(segment), "system": system, "rank": rank,
                         "reference": reference, "candidate": candidate, "line": line})
    if not rows:
        if missing_outputs:
            present = sorted(f.name for f in systems.iterdir() if f.is_file())
            raise DataError(path, f"no usable judgments for {chosen}: no file in {systems} is named as a ranked "
                                  f"system (e.g. {next(iter(missing_outputs))!r}); the folder holds "
                                  f"{', '.join(present[:5]) or 'no files'}{', ...' if len(present) > 5 else ''}",
                            fix="give the folder of this pair's system outputs, one file per systemNId value")
        raise DataError(path, f"no usable judgments for {chosen}: every rank is blank or has an empty text")
    # Ranks, blanks and repeats are checked above with the CSV's own line numbers; validate() adds the
    # one-text-per-segment checks, which a consistent reference file and output folder always pass.
    frame = pd.DataFrame(rows).sort_values(["line", "system"], kind="stable")
    frame = validate(frame[list(COLUMNS)].reset_index(drop=True), path)
    return WmtRankings(frame, chosen, blank, missing_outputs, empty)


def validate(frame: pd.DataFrame, origin: object = "rankings") -> pd.DataFrame:
    """A copy with integer ranks; DataError naming the first bad row (1-based file line)."""
    frame = frame.copy()
    ranks = pd.to_numeric(frame["rank"], errors="coerce")
    bad = np.flatnonzero(ranks.isna() | (ranks < 1) | (ranks != ranks.round()))
    if bad.size:
        raise DataError(origin, f"rank must be a whole number >= 1, got {frame['rank'].iloc[bad[0]]!r}",
                        line=int(bad[0]) + 2)
    frame["rank"] = ranks.astype(int)
    for column in ("judgment", "segment", "system", "candidate", "reference"):
        empty = np.flatnonzero(frame[column].astype(str).str.strip() == "")
        if empty.size:
            raise DataError(origin, f"empty {column}", line=int(empty[0]) + 2)
    repeated = frame.duplicated(["judgment", "system"])
    if repeated.any():
        i = int(np.flatnonzero(repeated)[0])
        raise DataError(origin, f"system {frame['system'].iloc[i]!r} appears twice on judgment "
                                f"{frame['judgment'].iloc[i]!r}", line=i + 2)
    for keys, column in ((["segment"], "reference"), (["segment", "system"], "candidate")):
        texts = frame.groupby(keys)[column].nunique()
        if (texts > 1).any():
            key = texts.index[int(np.flatnonzero(texts.to_numpy() > 1)[0])]
            raise DataError(origin, f"{column} differs between rows of {dict(zip(keys, np.atleast_1d(key)))}",
                            fix=f"one {column} per {' and '.join(keys)}")
    return frame


@dataclass
class Conversion:
    """What the converter produced.

    Attributes:
      pairs: kept translations: segment, system, reference, candidate, score, n, mean_rank, variance.
      threshold: the chosen variance threshold (kept: variance <= threshold).
      tau: Kendall τ of the kept scores with the judgments at that threshold.
      curve: threshold, kept, tau for every threshold tried, ascending.
      ranked: translations ranked at least ``min_judgments`` times (before the variance filter).
    """

    pairs: pd.DataFrame
    threshold: float
    tau: float
    curve: pd.DataFrame
    ranked: int


def aggregate(frame: pd.DataFrame, max_rank: int | None = None) -> pd.DataFrame:
    """One row per (segment, system): n, mean rank, rank variance (population) and the similarity score."""
    max_rank = int(max_rank or frame["rank"].max())
    if max_rank < 2:
        raise MuttlabError("every rank is 1: a ranking file needs at least two rank levels")
    grouped = frame.groupby(["segment", "system"], sort=True)
    out = grouped.agg(reference=("reference", "first"), candidate=("candidate", "first"),
                      n=("rank", "size"), mean_rank=("rank", "mean"),
                      variance=("rank", lambda r: float(np.var(r.to_numpy(dtype=np.float64))))).reset_index()
    lo, hi = SCALE
    out["score"] = hi - (out["mean_rank"] - 1) * (hi - lo) / (max_rank - 1)
    return out


def kendall_tau(frame: pd.DataFrame, scores: dict[tuple[str, str], float]) -> float:
    """WMT-style τ of ``scores`` with the screens of ``frame`` (only translations present in ``scores``)."""
    concordant = discordant = 0
    for _, screen in frame.groupby("judgment", sort=False):
        keys = list(zip(screen["segment"], screen["system"]))
        present = [i for i, k in enumerate(keys) if k in scores]
        if len(present) < 2:
            continue
        ranks = screen["rank"].to_numpy()[present]
        vals = np.array([scores[keys[i]] for i in present])
        i, j = np.triu_indices(len(present), k=1)
        human = np.sign(ranks[j] - ranks[i])  # +1: i ranked better than j
        metric = np.sign(vals[i] - vals[j])  # +1: i scored higher than j
        judged = human != 0
        agree = (human == metric) & judged
        concordant += int(agree.sum())
        discordant += int((judged & ~agree).sum())
    total = concordant + discordant
    return (concordant - discordant) / total if total else float("nan")


def convert(frame: pd.DataFrame, min_judgments: int = DEFAULT_MIN_JUDGMENTS, tau: float = DEFAULT_TAU,
            max_rank: int | None = None) -> Conversion:
    """Algorithm 1 of ReVal §5: rank judgments -> (reference, candidate, score) with the variance filter.

    Thresholds tried are the distinct rank variances of the translations ranked at least
    ``min_judgments`` times, ascending; the chosen one is the largest reached before τ first drops
    below ``tau`` (τ "stays" at or above it).

    Raises:
      MuttlabError: nothing is ranked often enough, or τ is below ``tau`` even at the strictest threshold.
    """
    if min_judgments < 1:
        raise MuttlabError(f"min_judgments must be at least 1, got {min_judgments}")
    table = aggregate(frame, max_rank)
    table = table[table["n"] >= min_judgments].reset_index(drop=True)
    if table.empty:
        raise MuttlabError(f"no translation was ranked {min_judgments} or more times; lower --min-judgments")
    rows, chosen = [], None
    for threshold in np.unique(table["variance"].to_numpy()):
        kept = table[table["variance"] <= threshold]
        scores = dict(zip(zip(kept["segment"], kept["system"]), kept["score"]))
        value = kendall_tau(frame, scores)
        rows.append({"threshold": float(threshold), "kept": len(kept), "tau": value})
        if np.isnan(value) or value < tau:
            break
        chosen = rows[-1]
    curve = pd.DataFrame(rows, columns=["threshold", "kept", "tau"])
    if chosen is None:
        first = rows[0]["tau"]
        raise MuttlabError(f"Kendall tau is {first:.3f} < {tau} even keeping only the most consistent "
                           "translations; lower --tau or check the rank direction (1 = best)")
    kept = table[table["variance"] <= chosen["threshold"]].reset_index(drop=True)
    columns = ["segment", "system", "reference", "candidate", "score", "n", "mean_rank", "variance"]
    return Conversion(kept[columns], chosen["threshold"], chosen["tau"], curve, len(table))


def write_pairs(conversion: Conversion, path: Path) -> None:
    """The kept pairs as TSV (reference, candidate, score, then segment, system, n, mean_rank, variance)."""
    columns = ["reference", "candidate", "score", "segment", "system", "n", "mean_rank", "variance"]
    try:
        conversion.pairs[columns].to_csv(path, sep="\t", index=False)
    except OSError as exc:
        raise MuttlabError(f"cannot write {path}: {exc.strerror}") from None
