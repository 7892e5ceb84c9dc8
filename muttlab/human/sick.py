"""MUTT's human-inconsistency study on SICK (Boag et al. 2016, §5).

Every SICK-derived corruption type is a list of SICK pairs (sentence A → sentence B) that all follow the
same transformation, each with a gold *relatedness* score (1-5). If people judged consistently, pairs of
one type would get similar scores; the study shows that they do not, by putting the distribution of gold
relatedness next to the distribution of each metric's scores, and by the pairwise correlation matrix of
gold and the metrics (the paper's table: gold, METEOR, BADGER, TERp).

Where the numbers come from:

* the pairs: the study's lists ``mutt/corruptions/<type>.txt`` (:func:`parse_corruption_list`): blocks of
  ``dataset`` / ``orig`` (source caption) / ``sent`` (SICK sentence A) / ``corr`` (sentence B) / ``score``;
* the references: the MUTT experiment pool of the trial with the same (original, corruption) sentences
  (``mutt/experiments``, :func:`muttlab.sources.load_mutt_experiments`); list entries with no such trial
  had no reference cluster in the study and are left out (counted in ``SickStudy.unmatched``);
* a metric's score of a pair: the corrupted sentence B scored against the original's references — the
  metric's counterpart of "how related is B to A" — with ``reference="sentence"``, B is scored against
  sentence A alone instead (relatedness taken literally). The original's own score is kept too.

That is the ``trials`` reading (the default): it studies the MUTT trials, and reports scores as the metrics
give them (TERp is an error rate, so it correlates negatively with gold). The ``paper`` reading is the one
behind the paper's Table 3: *every* SICK pair of the transformation that the type's extractor finds in
SICK.txt (:mod:`muttlab.corruptions.extract`; 543 for the negated subject, the count of the study's list),
SICK sentence B scored against sentence A alone, and error rates negated so that every variable reads "larger
= more related". It reproduces the table within about 0.1; the trials reading does not (METEOR–TERp is
negative there, +0.80 in the paper).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from muttlab import stats
from muttlab.errors import DataError, MuttlabError
from muttlab.engine.runner import registry_for
from muttlab.settings import Settings
from muttlab.corruptions.extract import EXTRACTORS
from muttlab.sources import data_file, load_mutt_experiments, load_sick, read_lines
from muttlab.human.scoring import ProgressFn, choose_metrics, oriented, score_with
from muttlab.trials import Trial
from muttlab.metrics.registry import Registry

# The corruption types the study took from SICK (the others were generated and have no gold score).
SICK_CORRUPTIONS = ("neg_subj", "neg_verb", "sem_opps", "shuffled", "passive", "near_syms", "det_sub")
# The metrics of the study's table (MUTT §5).
STUDY_METRICS = ("METEOR-1.5", "BADGER-like", "TERp")
REFERENCE_SOURCES = ("pool", "sentence")
# trials: the MUTT trials, scores as reported; paper: every SICK pair of the type, B against A, oriented.
READINGS = ("trials", "paper")
GOLD = "gold"

_FIELD = re.compile(r"^\s*(dataset|orig|sent|corr|score):\s*(.*?)\s*$")
_HEADER_NUMBER = re.compile(r"^\s*(num|mean|stddev):\s*(\S+)\s*$")


@dataclass(frozen=True)
class CorruptionPair:
    """One entry of a study list: SICK sentence A (``sentence``), its corruption B, gold relatedness."""

    corruption: str
    dataset: str  # FLICKR / SEMEVAL
    original: str  # the source caption sentence A was made from
    sentence: str
    corrupted: str
    relatedness: float
    line: int


@dataclass(frozen=True)
class CorruptionList:
    """A parsed ``mutt/corruptions/<type>.txt``: header facts and the pairs in file order."""

    name: str
    description: str
    declared_count: int | None
    declared_mean: float | None
    declared_stddev: float | None
    pairs: tuple[CorruptionPair, ...]


def parse_corruption_list(path: Path) -> CorruptionList:
    """Parse one of the study's corruption lists.

    Format: the type's name, a description, ``num:``/``mean:``/``stddev:`` lines, then blocks of five
    tab-indented ``key: value`` lines (dataset, orig, sent, corr, score) in that order.
    Raises:
      DataError: a block is incomplete or out of order, or a score is not a number — naming the line.
    """
    path = Path(path)
    lines = read_lines(path)
    content = [(i, line) for i, line in enumerate(lines, start=1) if line.strip()]
    if len(content) < 2:
        raise DataError(path, "expected the corruption name and a description at the top")
    name, description = content[0][1].strip(), content[1][1].strip()
    header: dict[str, float] = {}
    pairs: list[CorruptionPair] = []
    block: dict[str, str] = {}
    block_line = 0
    order = ("dataset", "orig", "sent", "corr", "score")
    for number, line in content[2:]:
        head = _HEADER_NUMBER.match(line)
        if head and not block and not pairs:
            try:
                header[head.group(1)] = float(head.group(2))
            except ValueError:
                raise DataError(path, f"{head.group(1)} must be a number, got {head.group(2)!r}", line=number) from None
            continue
        match = _FIELD.match(line)
        if not match:
            raise DataError(path, f"expected one of {', '.join(order)} followed by ':', got {line.strip()[:60]!r}",
                            line=number)
        key, value = match.groups()
        expected = order[len(block)]
        if key != expected:
            raise DataError(path, f"expected '{expected}:' in the block starting at line {block_line or number}, "
                                  f"got '{key}:'", line=number)
        if not block:
            block_line = number
        block[key] = value
        if key == "score":
            try:
                score = float(value)
            except ValueError:
                raise DataError(path, f"score must be a number, got {value!r}", line=number) from None
            pairs.append(CorruptionPair(name, block["dataset"], block["orig"], block["sent"], block["corr"],
                                        score, block_line))
            block = {}
    if block:
        raise DataError(path, "the last block is incomplete (needs dataset, orig, sent, corr, score)", line=block_line)
    count = header.get("num")
    return CorruptionList(name, description, int(count) if count is not None else None, header.get("mean"),
                          header.get("stddev"), tuple(pairs))


def load_corruption_list(settings: Settings, corruption: str) -> CorruptionList:
    """The study's list for a SICK-derived corruption type (``mutt/corruptions/<type>.txt``)."""
    if corruption not in SICK_CORRUPTIONS:
        raise MuttlabError(f"corruption {corruption!r} has no SICK gold scores; choose one of "
                           f"{', '.join(SICK_CORRUPTIONS)}")
    return parse_corruption_list(data_file(settings, f"mutt/corruptions/{corruption}.txt"))


@dataclass
class SickStudy:
    """The inconsistency study for one corruption type.

    Attributes:
      pairs: one row per pair: ``trial`` (experiment trial id; ``sick:<id>`` in the paper reading),
        ``pair_id`` and ``split`` (the SICK pair and its SemEval split), ``sentence``, ``corrupted`` (in the
        paper reading SICK sentence A and B), ``gold`` (relatedness), then per metric ``<metric>`` (score of
        the corruption, of B) and, for the pool, ``<metric>:orig`` (score of the original sentence).
      correlations: the square matrix of ``method`` correlations between gold and the metrics' scores
        of the corruption (index and columns: ``gold``, then the metrics).
      summary: per variable, n / mean / std / min / max (the gold row's mean and std are the study's
        header statistics restricted to the matched pairs).
    """

    corruption: str
    description: str
    pairs: pd.DataFrame
    correlations: pd.DataFrame
    summary: pd.DataFrame
    method: str
    metrics: list[str]
    reference: str
    refs: int | None
    unmatched: int
    listed: int
    skipped: dict[str, str] = field(default_factory=dict)
    signatures: dict[str, str] = field(default_factory=dict)
    reading: str = "trials"

    def notes(self) -> list[str]:
        if self.reading == "paper":
            notes = [f"{self.corruption}: every SICK pair of the type ({len(self.pairs)}; the study lists "
                     f"{self.listed}), sentence B scored against sentence A, error rates negated"]
        else:
            notes = [f"{self.corruption}: {len(self.pairs)} of {self.listed} listed SICK pairs have an experiment "
                     f"trial with references ({self.unmatched} without are left out)"]
        return notes + [f"{name} skipped: {why}" for name, why in self.skipped.items()]

    def correlation_table(self) -> pd.DataFrame:
        """The matrix with its row labels as a first column (for CSV/Markdown/LaTeX output)."""
        return self.correlations.reset_index(names="")

    def histograms(self, bins: int = 20) -> pd.DataFrame:
        """Histogram data of gold and each metric: columns variable, bin, left, right, count, density.

        Gold relatedness is binned on its 1-5 scale; each metric on the range of its own scores.
        """
        rows = []
        for variable in [GOLD] + self.metrics:
            values = self.pairs[variable].to_numpy(dtype=np.float64)
            span = (1.0, 5.0) if variable == GOLD else (float(values.min()), float(values.max()))
            if span[0] == span[1]:
                span = (span[0] - 0.5, span[1] + 0.5)
            counts, edges = np.histogram(values, bins=bins, range=span)
            density = counts / max(1, counts.sum())
            for b in range(bins):
                rows.append({"variable": variable, "bin": b, "left": edges[b], "right": edges[b + 1],
                             "count": int(counts[b]), "density": float(density[b])})
        return pd.DataFrame(rows)


def match_pairs(settings: Settings, corruption: str) -> tuple[list[tuple[CorruptionPair, Trial]], CorruptionList]:
    """Pairs of the study list joined to the experiment trials with the same (sentence, corruption).

    Returns:
      the matched (pair, trial) tuples in list order, and the parsed list itself.
    """
    listing = load_corruption_list(settings, corruption)
    trials = load_mutt_experiments(settings, names=(corruption,)).of(corruption)
    by_pair: dict[tuple[str, str], Trial] = {}
    for t in trials:
        by_pair.setdefault((t.original.strip(), t.corrupted.strip()), t)
    matched = [(p, by_pair[(p.sentence, p.corrupted)]) for p in listing.pairs
               if (p.sentence, p.corrupted) in by_pair]
    return matched, listing


def _paper_frame(settings: Settings, corruption: str) -> pd.DataFrame:
    """Every SICK pair the type's extractor takes, as SICK has it (sentence A, sentence B)."""
    extract = EXTRACTORS[corruption]
    pairs = [p for p in load_sick(settings) if extract(p) is not None]
    return pd.DataFrame({
        "trial": [f"sick:{p.pair_id}" for p in pairs], "pair_id": [p.pair_id for p in pairs],
        "split": [p.split for p in pairs], "dataset": [p.dataset_a for p in pairs],
        "sentence": [p.sentence_a.strip() for p in pairs], "corrupted": [p.sentence_b.strip() for p in pairs],
        GOLD: [p.relatedness for p in pairs]})


def _trials_frame(matched: list[tuple[CorruptionPair, Trial]]) -> pd.DataFrame:
    return pd.DataFrame({
        "trial": [t.id for _, t in matched],
        "pair_id": [t.sick_pair for _, t in matched],
        "split": [t.split for _, t in matched],
        "dataset": [p.dataset for p, _ in matched],
        "sentence": [p.sentence for p, _ in matched],
        "corrupted": [p.corrupted for p, _ in matched],
        GOLD: [p.relatedness for p, _ in matched],
    })


def sick_study(settings: Settings, corruption: str = "neg_subj", metrics=STUDY_METRICS, refs: int | None = None,
               method: str = "pearson", reference: str = "pool", registry: Registry | None = None,
               progress: ProgressFn | None = None, reading: str = "trials") -> SickStudy:
    """Gold relatedness against metric scores for one SICK-derived corruption type (MUTT §5).

    Args:
      corruption: one of :data:`SICK_CORRUPTIONS`.
      metrics: registry names (default: the study's METEOR-1.5, BADGER-like, TERp); ``all`` for every available
        metric. Unavailable ones are skipped and listed in ``skipped``.
      refs: how many references of the pool to use (the first k; default: the whole pool of 20).
      method: correlation of the matrix: ``pearson`` (default), ``spearman``, ``kendall_b``, ``kendall_c``.
      reference: ``pool`` (the original's references) or ``sentence`` (sentence A is the only reference).
      reading: ``trials`` (the MUTT trials, scores as reported; ``reference`` and ``refs`` apply) or
        ``paper`` (every SICK pair of the type, B against A, error rates negated: the paper's Table 3).
    Returns:
      :class:`SickStudy`.
    Raises:
      MuttlabError: unknown corruption, metric, method, reading or reference source; impossible ``refs``.
    """
    if method not in stats.METHODS:
        raise MuttlabError(f"unknown correlation method {method!r}; use one of {', '.join(stats.METHODS)}")
    if reference not in REFERENCE_SOURCES:
        raise MuttlabError(f"unknown reference source {reference!r}; use one of {', '.join(REFERENCE_SOURCES)}")
    if reading not in READINGS:
        raise MuttlabError(f"unknown reading {reading!r}; use one of {', '.join(READINGS)}")
    registry = registry or registry_for(settings)
    listing = load_corruption_list(settings, corruption)
    if reading == "paper":
        if refs is not None:
            raise MuttlabError("--refs applies to the trials reading; the paper reading scores sentence B "
                               "against sentence A alone")
        frame, reference, unmatched = _paper_frame(settings, corruption), "sentence", 0
        references = [[a] for a in frame["sentence"]]
    else:
        matched, listing = match_pairs(settings, corruption)
        if not matched:
            raise MuttlabError(f"no pair of mutt/corruptions/{corruption}.txt matches an experiment trial; "
                               "check that the data dir holds the study's files unchanged")
        pool = min(len(t.references) for _, t in matched)
        if refs is not None and not 1 <= refs <= pool:
            raise MuttlabError(f"--refs {refs} is not possible: the pools have {pool} references; choose 1 to {pool}")
        refs = (refs or pool) if reference == "pool" else None
        frame, unmatched = _trials_frame(matched), len(listing.pairs) - len(matched)
        if reference == "pool":
            references = [list(t.refs(refs)) for _, t in matched]
        else:
            references = [[p.sentence] for p, _ in matched]
    choice = choose_metrics(metrics, registry)
    for step, metric in enumerate(choice.metrics):
        if progress:
            progress(step, len(choice.metrics), f"scoring {metric.name}")
        scores = score_with(metric, list(frame["corrupted"]), references, settings, registry)
        frame[metric.name] = oriented(scores, metric) if reading == "paper" else scores
        if reference == "pool":
            frame[f"{metric.name}:orig"] = score_with(metric, list(frame["sentence"]), references, settings, registry)
    if progress:
        progress(len(choice.metrics), len(choice.metrics), "done")
    variables = [GOLD] + choice.names
    matrix = pd.DataFrame(np.eye(len(variables)), index=variables, columns=variables)
    for i, a in enumerate(variables):
        for b in variables[i + 1:]:
            matrix.loc[a, b] = matrix.loc[b, a] = stats.correlation(frame[a], frame[b], method)
    summary = frame[variables].agg(["count", "mean", "std", "min", "max"]).T.reset_index(names="variable")
    summary = summary.rename(columns={"count": "n"}).astype({"n": int})
    return SickStudy(corruption=corruption, description=listing.description, pairs=frame, correlations=matrix,
                     summary=summary, method=method, metrics=choice.names, reference=reference, refs=refs,
                     unmatched=unmatched, listed=len(listing.pairs), skipped=dict(choice.skipped),
                     signatures={m.name: m.signature() for m in choice.metrics}, reading=reading)
