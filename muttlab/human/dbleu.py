"""The ΔBLEU correlation study on observation units (Galley et al., ACL 2015, §5–6).

Design of the paper (§5): the rated sentences are split at random into *observation units* of M sentences
(M = 100 by default); a unit's human quality is the mean rating of its sentences, and a metric's value of
the unit is its *corpus* score on those sentences. Spearman's ρ and Kendall's τ between the two are
computed over the units, for each of 1,000 random assignments of sentences to units; the study reports the
mean over assignments and the 2.5–97.5 percentiles of the per-assignment values as the 95% interval.
Compared (§6): BLEU, sentence-level BLEU (BLEU+1) averaged over the unit, and ΔBLEU, with sweeps over the
unit size M, the n-gram order and a threshold on the reference weights.

The data of this project's experiment (:func:`flickr_expert_set`) is built from Flickr8K-Expert: each
rated caption of an image (the image's own captions excepted, as in the Expert protocol of
:mod:`muttlab.human.flickr`) is a hypothesis whose human quality is its mean expert score (1-4); its
references are the image's five captions with weight 1 plus the *other* rated captions of that image with
weight ``(mean expert score - 2.5) / 1.5`` ∈ [-1, 1] — never the caption itself. BLEU uses the image's own
captions only (all weight 1). Text is PTB-tokenised as coco-caption does (:func:`muttlab.metrics.tokenize.ptb_tokenize`).
A user's set in the ΔBLEU input format (:mod:`muttlab.human.dbleu_io`) with one human rating per segment works
the same way (:func:`user_set`); its BLEU baseline uses the positively weighted references, each with weight 1.

Speed: the n-gram matching is done once (:func:`match_table`); every configuration (reference threshold,
weights on or off, n-gram order) is then a few array operations giving the ΔBLEU sufficient statistics
(:func:`muttlab.metrics.delta_bleu.segment_statistics`, the ones the metric computes), and every unit's corpus score is a sum of rows, vectorised
over all assignments at once.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd
from scipy import stats as _sp

from muttlab import stats
from muttlab.judged import JudgedSet, caption_text
from muttlab.errors import DataError, MuttlabError
from muttlab.settings import Settings
from muttlab.sources import DATA_LAYOUT, load_flickr_captions, load_flickr_expert, read_lines
from muttlab.metrics import delta_bleu
from muttlab.metrics.delta_bleu import MAX_N, MatchTable, order_columns, segment_statistics

METRICS = ("BLEU", "sentence-BLEU", "DeltaBLEU")
DEFAULT_UNIT = 100
DEFAULT_ASSIGNMENTS = 1000
DEFAULT_SWEEP_ASSIGNMENTS = 200
UNIT_SIZES = (1, 2, 5, 10, 20, 50, 100)
ORDERS = (1, 2, 3, 4)
# Thresholds on the weight of the extra (rated) references: only those with weight >= t are used.
THRESHOLDS = (-1.0, -0.5, 0.0, 0.5, 1.0)
RESULT_COLUMNS = ["metric", "unit_size", "order", "threshold", "units", "assignments",
                  "rho", "rho_low", "rho_high", "tau", "tau_low", "tau_high"]


# --------------------------------------------------------------------------- the data

def flickr_expert_set(settings: Settings) -> JudgedSet:
    """This project's ΔBLEU experiment data from Flickr8K-Expert (see the module docstring).

    On the shipped data: 5,664 hypotheses over 1,000 images, ~4.7 rated references each besides the five
    own captions.
    """
    from muttlab.metrics.tokenize import ptb_tokenize

    captions = load_flickr_captions(settings)
    judgments = load_flickr_expert(settings)
    by_image: dict[str, list] = {}
    for j in judgments:
        by_image.setdefault(j.image, []).append(j)

    def text(caption_id: str) -> str:
        return caption_text(captions, caption_id, DATA_LAYOUT["flickr_expert"])

    hyps, refs, weights, base, human, ids = [], [], [], [], [], []
    for image, rated in by_image.items():
        if image not in captions:
            raise DataError(DATA_LAYOUT["flickr_expert"], f"image {image!r} has no captions in "
                            f"{DATA_LAYOUT['flickr_captions']}", fix="use Flickr8k files that belong together")
        own = [ptb_tokenize(c) for c in captions[image]]
        others = [(j.caption_id, ptb_tokenize(text(j.caption_id)), (float(np.mean(j.scores)) - 2.5) / 1.5)
                  for j in rated if j.caption_image != image]
        for j in rated:
            if j.caption_image == image:
                continue  # the candidate is one of the image's own captions (dropped, as in the Expert protocol)
            hyp = ptb_tokenize(text(j.caption_id))
            if not hyp:
                continue
            extra = [(t, w) for cid, t, w in others if cid != j.caption_id and t != hyp and t]
            hyps.append(hyp)
            refs.append(own + [t for t, _ in extra])
            weights.append([1.0] * len(own) + [w for _, w in extra])
            base.append([True] * len(own) + [False] * len(extra))
            human.append(float(np.mean(j.scores)))
            ids.append(f"{image}|{j.caption_id}")
    return JudgedSet("flickr8k-expert", hyps, refs, np.array(human), ids=ids, groups=[i.split("|")[0] for i in ids],
                     weights=weights, plain=base)


def user_set(path: Path, ratings: Path | None = None) -> JudgedSet:
    """A user's ΔBLEU file (:func:`muttlab.human.dbleu_io.read_weighted_segments`) with one human rating per segment.

    The rating comes from a ``"human"`` number in each JSONL record, or from ``ratings``: a text file with
    one number per segment (blank lines and ``#`` comments skipped). Text is split on whitespace as it is.
    """
    from muttlab.human.dbleu_io import read_weighted_segments

    data = read_weighted_segments(path)
    if ratings is not None:
        values = []
        for number, line in enumerate(read_lines(Path(ratings)), start=1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            try:
                values.append(float(line))
            except ValueError:
                raise DataError(ratings, f"expected one number per line, got {line.strip()[:40]!r}",
                                line=number) from None
        if len(values) != len(data.hypotheses):
            raise DataError(ratings, f"has {len(values)} ratings for {len(data.hypotheses)} segments of {path}",
                            fix="give exactly one rating per segment, in file order")
    else:
        lines = read_lines(Path(path))
        values = []
        for number in data.lines:
            try:
                record = json.loads(lines[number - 1])
                values.append(float(record["human"]))
            except (json.JSONDecodeError, KeyError, TypeError, ValueError):
                raise DataError(path, "no numeric 'human' rating in this segment", line=number,
                                fix='add "human": <rating> to every JSONL record or pass --ratings FILE') from None
    human = np.array(values, dtype=np.float64)
    if np.isnan(human).any():
        raise DataError(ratings or path, "a human rating is NaN", fix="give a number for every segment")
    return JudgedSet(Path(path).name, list(data.hypotheses), [[r for r, _ in refs] for refs in data.references],
                     human, ids=[str(n) for n in data.lines], weights=[[w for _, w in refs] for refs in data.references],
                     plain=[[w > 0 for _, w in refs] for refs in data.references])


# --------------------------------------------------------------------------- sufficient statistics

def match_table(data: JudgedSet, max_n: int = MAX_N) -> MatchTable:
    """The n-gram matches of a judged set's candidates against its weighted references, the own (plain)
    references marked as the base that every threshold keeps."""
    return delta_bleu.match_table(data.candidates, [data.weighted_references(i) for i in range(len(data))],
                                  [data.plain_mask(i) for i in range(len(data))], max_n)


def bleu_rows(stats_sum: np.ndarray, order: int, max_n: int = MAX_N, smooth: bool = False) -> np.ndarray:
    """(Δ)BLEU in 0..1 of every row of summed statistics, vectorised; ``order`` <= ``max_n``.

    Equals :func:`muttlab.metrics.delta_bleu.corpus_bleu` (and with ``smooth``, ``sentence_bleu``'s BLEU+1,
    Lin & Och 2004) on each row: 0 when some order has no net positive match.
    """
    s = np.asarray(stats_sum, dtype=np.float64)
    num = s[..., :order].copy()
    den = s[..., max_n:max_n + order].copy()
    c, r = s[..., 2 * max_n], s[..., 2 * max_n + 1]
    first_ok = num[..., 0] > 0
    if smooth:
        num[..., 1:] += 1.0
        den[..., 1:] += 1.0
    valid = (c > 0) & np.all(den > 0, axis=-1) & np.all(num > 0, axis=-1)
    if smooth:
        valid &= first_ok
    with np.errstate(divide="ignore", invalid="ignore"):
        log_p = np.mean(np.log(np.where(valid[..., None], num / np.where(den > 0, den, 1), 1.0)), axis=-1)
        bp = np.where(c >= r, 1.0, np.exp(1.0 - r / np.where(c > 0, c, 1)))
    return np.where(valid, bp * np.exp(log_p), 0.0)


# --------------------------------------------------------------------------- the unit study

@dataclass(frozen=True)
class SegmentScores:
    """What a metric contributes per segment: summable statistics (corpus metrics) or a score to average."""

    name: str
    stats: np.ndarray | None = None  # (segments, 2 * max_n + 2), corpus score of a unit = BLEU of the row sum
    scores: np.ndarray | None = None  # (segments,), unit value = mean
    order: int = MAX_N
    max_n: int = MAX_N


@dataclass(frozen=True)
class UnitCorrelation:
    """ρ and τ of one metric over units, averaged over assignments, with 2.5–97.5 percentiles."""

    metric: str
    unit_size: int
    units: int
    assignments: int
    rho: float
    rho_low: float
    rho_high: float
    tau: float
    tau_low: float
    tau_high: float
    rho_all: np.ndarray = field(repr=False, compare=False, default=None)
    tau_all: np.ndarray = field(repr=False, compare=False, default=None)


def unit_assignments(n: int, unit_size: int, assignments: int, seed: int) -> np.ndarray:
    """``(assignments, units, unit_size)`` segment indices: each row a random partition into units.

    ``n // unit_size`` units; the ``n % unit_size`` segments left over in an assignment are not used.
    """
    if not 1 <= unit_size <= n:
        raise MuttlabError(f"unit size {unit_size} is not possible with {n} segments; choose 1 to {n}")
    units = n // unit_size
    rng = np.random.default_rng(seed)
    order = np.argsort(rng.random((assignments, n)), axis=1)[:, :units * unit_size]
    return order.reshape(assignments, units, unit_size)


def _unit_values(metric: SegmentScores, index: np.ndarray) -> np.ndarray:
    if metric.scores is not None:
        return metric.scores[index].mean(axis=-1)
    out = np.empty(index.shape[:2])
    block = max(1, 2_000_000 // max(1, index.shape[1] * index.shape[2] * metric.stats.shape[1]))
    for start in range(0, index.shape[0], block):
        summed = metric.stats[index[start:start + block]].sum(axis=2)
        out[start:start + block] = bleu_rows(summed, metric.order, metric.max_n)
    return out


def unit_correlations(human: np.ndarray, metrics: Sequence[SegmentScores], unit_size: int = DEFAULT_UNIT,
                      assignments: int = DEFAULT_ASSIGNMENTS, seed: int = 0) -> list[UnitCorrelation]:
    """Galley et al. §5's unit-level correlation for each metric, on the same random assignments.

    Returns:
      one :class:`UnitCorrelation` per metric: Spearman ρ and Kendall τ-b between unit human means and unit
      metric values, averaged over ``assignments`` random partitions, with the 2.5 and 97.5 percentiles.
    """
    human = np.asarray(human, dtype=np.float64)
    index = unit_assignments(human.size, unit_size, assignments, seed)
    human_units = human[index].mean(axis=-1)
    human_ranks = _sp.rankdata(human_units, axis=1)
    out = []
    for metric in metrics:
        values = _unit_values(metric, index)
        rho = stats.pearson_rows(human_ranks, _sp.rankdata(values, axis=1))
        tau = stats.kendall_b_rows(human_units, values)

        def summary(x):
            x = x[~np.isnan(x)]
            if not x.size:
                return float("nan"), float("nan"), float("nan")
            low, high = np.percentile(x, [2.5, 97.5])
            return float(x.mean()), float(low), float(high)

        out.append(UnitCorrelation(metric.name, unit_size, index.shape[1], assignments, *summary(rho),
                                   *summary(tau), rho_all=rho, tau_all=tau))
    return out


@dataclass
class DbleuStudy:
    """Results of :func:`unit_study`: the main comparison and the sweeps, as tidy tables.

    ``main`` and ``sweeps`` have the columns of :data:`RESULT_COLUMNS`; ``sweeps`` adds ``sweep``
    (``unit_size``, ``order`` or ``threshold``). ``threshold`` is NaN where only base references are used.
    """

    dataset: str
    segments: int
    main: pd.DataFrame
    sweeps: pd.DataFrame
    seed: int
    notes: list[str] = field(default_factory=list)
    comparison: pd.DataFrame = field(default_factory=pd.DataFrame)


def _metrics_for(table: MatchTable, order: int, threshold: float | None, cache: dict) -> list[SegmentScores]:
    base = _cached(cache, table, None, False)
    sentence = bleu_rows(base[:, order_columns(table.max_n, order)], order, order, smooth=True)
    return [SegmentScores("BLEU", stats=base, order=order, max_n=table.max_n),
            SegmentScores("sentence-BLEU", scores=sentence),
            SegmentScores("DeltaBLEU", stats=_cached(cache, table, threshold, True), order=order, max_n=table.max_n)]


COMPARISON_COLUMNS = ["metric", "baseline", "statistic", "mean_diff", "diff_low", "diff_high", "share_better"]


def compare_on_assignments(results: Sequence[UnitCorrelation], metric: str = "DeltaBLEU") -> pd.DataFrame:
    """``metric`` against each other metric on the *same* assignments: ρ and τ differences.

    Returns:
      one row per baseline and statistic (rho, tau): the mean difference over assignments, its 2.5-97.5
      percentiles, and the share of assignments where ``metric`` correlates better (ties count half).
    """
    by_name = {r.metric: r for r in results}
    rows = []
    for other in results:
        if other.metric == metric or metric not in by_name:
            continue
        for statistic in ("rho", "tau"):
            diff = getattr(by_name[metric], f"{statistic}_all") - getattr(other, f"{statistic}_all")
            diff = diff[~np.isnan(diff)]
            if not diff.size:
                continue
            low, high = np.percentile(diff, [2.5, 97.5])
            rows.append({"metric": metric, "baseline": other.metric, "statistic": statistic,
                         "mean_diff": float(diff.mean()), "diff_low": float(low), "diff_high": float(high),
                         "share_better": float(np.mean(diff > 0) + 0.5 * np.mean(diff == 0))})
    return pd.DataFrame(rows, columns=COMPARISON_COLUMNS)


def _records(results: list[UnitCorrelation], order: int, thresholds: dict[str, float | None]) -> list[dict]:
    rows = []
    for r in results:
        th = thresholds.get(r.metric)
        rows.append({"metric": r.metric, "unit_size": r.unit_size, "order": order,
                     "threshold": float("nan") if th is None else th, "units": r.units,
                     "assignments": r.assignments, "rho": r.rho, "rho_low": r.rho_low, "rho_high": r.rho_high,
                     "tau": r.tau, "tau_low": r.tau_low, "tau_high": r.tau_high})
    return rows


def unit_study(data: JudgedSet, unit_size: int = DEFAULT_UNIT, order: int = MAX_N,
               threshold: float = -1.0, assignments: int = DEFAULT_ASSIGNMENTS, seed: int = 0,
               sweeps: bool = True, sweep_assignments: int = DEFAULT_SWEEP_ASSIGNMENTS,
               unit_sizes: Sequence[int] = UNIT_SIZES, orders: Sequence[int] = ORDERS,
               thresholds: Sequence[float] = THRESHOLDS, table: MatchTable | None = None,
               progress=None) -> DbleuStudy:
    """The ΔBLEU observation-unit study: BLEU vs sentence-BLEU averaged vs ΔBLEU (Galley et al. §5–6).

    Args:
      data: :func:`flickr_expert_set` or :func:`user_set`.
      unit_size: M, sentences per unit (paper: 100). order: n-gram order (1-4).
      threshold: ΔBLEU uses the extra references with weight >= threshold (-1 = all of them).
      assignments: random assignments of the main comparison (paper: 1,000); sweeps use
        ``sweep_assignments`` each.
      table: ``match_table(data)`` when the caller already has it (it is the slow part).
      progress: called as ``progress(step, total, message)`` before each part (matching, the main comparison,
        each sweep setting) and once at the end.
    Returns:
      :class:`DbleuStudy`. In the threshold sweep, BLEU uses the same references as ΔBLEU but all with
      weight 1 (does adding the references help, or their weights?).
    """
    if not 1 <= order <= MAX_N:
        raise MuttlabError(f"n-gram order {order} is not possible; choose 1 to {MAX_N}")
    if assignments < 1 or sweep_assignments < 1:
        raise MuttlabError("the number of random assignments must be at least 1")
    if not 1 <= unit_size <= len(data):
        raise MuttlabError(f"unit size {unit_size} is not possible with {len(data)} segments; choose 1 to {len(data)}")
    unit_sizes = [m for m in unit_sizes if m <= len(data)]
    parts = 2 + (len(unit_sizes) + len(orders) + len(thresholds) if sweeps else 0)
    done = iter(range(parts + 1))

    def step(message: str) -> None:
        if progress is not None:
            progress(next(done), parts, message)

    step("matching n-grams")
    table = table if table is not None else match_table(data)
    cache: dict = {}
    step(f"correlating units of {unit_size}, {assignments:,} random assignments")
    main_results = unit_correlations(data.mean_human, _metrics_for(table, order, threshold, cache), unit_size,
                                     assignments, seed)
    labels = {"BLEU": None, "sentence-BLEU": None, "DeltaBLEU": threshold}
    main = pd.DataFrame(_records(main_results, order, labels), columns=RESULT_COLUMNS)
    frames = []
    if sweeps:
        for m in unit_sizes:
            step(f"sweep: units of {m}")
            res = unit_correlations(data.mean_human, _metrics_for(table, order, threshold, cache), m,
                                    sweep_assignments, seed)
            frames.append(pd.DataFrame(_records(res, order, labels)).assign(sweep="unit_size"))
        for n in orders:
            step(f"sweep: n-gram order {n}")
            res = unit_correlations(data.mean_human, _metrics_for(table, n, threshold, cache), unit_size,
                                    sweep_assignments, seed)
            frames.append(pd.DataFrame(_records(res, n, labels)).assign(sweep="order"))
        for th in thresholds:
            step(f"sweep: reference weight threshold {th:g}")
            metrics = [SegmentScores("BLEU", stats=_cached(cache, table, th, False), order=order, max_n=table.max_n),
                       SegmentScores("DeltaBLEU", stats=_cached(cache, table, th, True), order=order,
                                     max_n=table.max_n)]
            res = unit_correlations(data.mean_human, metrics, unit_size, sweep_assignments, seed)
            frames.append(pd.DataFrame(_records(res, order, {"BLEU": th, "DeltaBLEU": th})).assign(sweep="threshold"))
    sweep_frame = (pd.concat(frames, ignore_index=True)[["sweep"] + RESULT_COLUMNS] if frames
                   else pd.DataFrame(columns=["sweep"] + RESULT_COLUMNS))
    step("done")
    notes = [f"{data.name}: {len(data)} segments, {int(table.ref_exists.sum())} references "
             f"({int((table.ref_exists & ~table.ref_base).sum())} extra rated ones, "
             f"{int((table.ref_exists & (table.ref_weight < 0)).sum())} with negative weight)"]
    return DbleuStudy(data.name, len(data), main, sweep_frame, seed, notes, compare_on_assignments(main_results))


def study(settings: Settings, registry=None, progress=None, data: JudgedSet | None = None,
          **options) -> DbleuStudy:
    """The study as registered (:mod:`muttlab.human.studies`): :func:`unit_study` of ``data``, by default
    :func:`flickr_expert_set`. It works on n-gram statistics, so it does not score through ``registry``."""
    return unit_study(data if data is not None else flickr_expert_set(settings), progress=progress, **options)


def _cached(cache: dict, table: MatchTable, threshold: float | None, weighted: bool) -> np.ndarray:
    key = (threshold, weighted)
    if key not in cache:
        cache[key] = segment_statistics(table, threshold, weighted)
    return cache[key]
