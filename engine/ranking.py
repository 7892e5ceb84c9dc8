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

WMT's wide CSVs (``system1Id`` … ``system5rank``) become this table by melting the five system columns
and joining the reference and system outputs by segment.

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

from engine.errors import DataError, MuttlabError

COLUMNS = ("judgment", "segment", "system", "rank", "reference", "candidate")
DEFAULT_MIN_JUDGMENTS = 2
DEFAULT_TAU = 0.78
SCALE = (1.0, 5.0)


def read_rankings(path: Path) -> pd.DataFrame:
    """The judgments table of ``path`` (columns :data:`COLUMNS`), validated; DataError on bad input."""
    path = Path(path)
    if not path.is_file():
        raise DataError(path, "no such file", fix="give the path of a CSV/TSV ranking file")
    sep = "\t" if path.suffix.lower() in (".tsv", ".txt") else ","
    try:
        frame = pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False, encoding="utf-8")
    except UnicodeDecodeError:
        raise DataError(path, "not valid UTF-8", fix="re-save the file as UTF-8") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise DataError(path, f"cannot parse as {'TSV' if sep == chr(9) else 'CSV'}: {exc}") from None
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise DataError(path, f"missing column(s) {', '.join(missing)}; the header must name "
                              f"{', '.join(COLUMNS)}", line=1)
    return validate(frame[list(COLUMNS)], path)


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
