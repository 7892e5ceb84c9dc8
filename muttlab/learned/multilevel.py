"""Tuning and held-out evaluation of the multi-level metrics (ML-METEOR, DREEM, ML-DREEM).

Data (see docs/multilevel.md):

* **Flickr8K-Expert** — candidate = the judged caption, references = the image's 5 Flickr8k captions;
  pairs whose caption is one of the image's own captions are dropped (5,664 of 5,822 pairs remain);
  each of the three expert ratings is its own sample, so a caption's score appears three times.
  Correlation: Kendall τ-c. Images are split at random (seeded) into a development half and a
  held-out half.
* **SICK** — reference = sentence A, candidate = sentence B, human score = relatedness. Tuned on the
  TRAIN split, reported on TEST; TRIAL is not used. Correlation: Pearson.

Tuning follows the Meteor habit of a small parameter grid scored once and searched offline: every
(candidate, reference) pair is scored once per entry of the per-level parameter grid (Meteor: one jar
per parameter set, through the score cache; DREEM: the representation cosines are computed once and
combined), the word and dependency F-measures are computed once, and λ, θ1 < θ2 and the per-level choice
are then searched on these arrays, maximising the development correlation. The single-level baseline is
the best single grid entry on the same development data, so "did the levels help" compares like with like.
"""
from __future__ import annotations

import itertools
import json
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from muttlab import stats
from muttlab.errors import MuttlabError
from muttlab.engine.runner import model_dir, score_batches, writable_model_dir
from muttlab.settings import Settings
from muttlab import judged
from muttlab.judged import JudgedSet
from muttlab.metrics.base import Metric
from muttlab.metrics.dependencies import pair_f
from muttlab.metrics.dreem import BUNDLED_MODELS, COMPONENTS, Dreem, flatten, pair_components
from muttlab.metrics.multilevel import LEVELS, METEOR_DEFAULTS, LevelClassifier, MultiLevelDreem, MultiLevelMeteor

DATASETS = ("flickr8k", "sick")
METRICS = ("meteor", "dreem")
CORRELATION = {"flickr8k": "kendall_c", "sick": "pearson"}
MODEL_STEMS = {"meteor": "multilevel-meteor", "dreem": "ml-dreem", "dreem-single": "dreem"}

LAMBDAS = (0.0, 0.25, 0.5, 0.75, 1.0)
# θ candidates: the deciles of F on the development pairs (per λ), so the grid follows each dataset's
# spread of F (Flickr8k captions of other images overlap little with the references, SICK pairs a lot).
THETA_QUANTILES = tuple(round(q, 2) for q in np.arange(0.1, 0.91, 0.1))
# A threshold pair is only tried when every level holds at least this share of the development pairs:
# a level of a handful of pairs would be tuned to noise.
MIN_LEVEL_SHARE = 0.05
METEOR_ALPHAS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.75, 0.85, 0.95)
DREEM_WEIGHT_STEP = 0.25
DREEM_LP_EXPONENTS = (0.0, 0.5, 1.0)
# Exhaustive search over per-level choices up to this many combinations, coordinate ascent beyond.
EXHAUSTIVE_LIMIT = 216


# --------------------------------------------------------------------------- data

def load_eval_set(name: str, settings: Settings) -> JudgedSet:
    """The tuning data, split into ``dev`` and held-out ``test``: Flickr8K-Expert with its images shuffled
    into halves (seeded), or SICK with TRAIN as dev and TEST held out (TRIAL left out)."""
    if name == "flickr8k":
        return judged.flickr_expert(settings).split_by_group(0.5, settings.seed)
    if name == "sick":
        data = judged.sick(settings)
        kept = data.subset(np.flatnonzero(np.isin(data.split, ("TRAIN", "TEST"))))
        return replace(kept, split=np.where(kept.split == "TRAIN", "dev", "test"))
    raise MuttlabError(f"unknown dataset {name!r}; choose from {', '.join(DATASETS)}")


# --------------------------------------------------------------------------- per-pair arrays

@dataclass
class PairArrays:
    """Every (candidate, reference) pair of an JudgedSet: its candidate, word F and dependency F."""

    owner: np.ndarray
    starts: np.ndarray  # first pair of each candidate (pairs are grouped by candidate)
    word_f: np.ndarray
    dep_f: np.ndarray
    cands: list[str]
    refs: list[str]

    @classmethod
    def build(cls, data: JudgedSet) -> "PairArrays":
        cands, refs, owner = flatten(data.candidates, data.references)
        pf = pair_f(cands, refs)
        starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
        return cls(owner, starts, np.array([p.word for p in pf]), np.array([p.dep for p in pf]), cands, refs)

    def best(self, pair_scores: np.ndarray) -> np.ndarray:
        return np.maximum.reduceat(pair_scores, self.starts)


def meteor_grid(alphas: Sequence[float] = METEOR_ALPHAS) -> list[dict]:
    """Meteor parameter sets to choose from per level: α varied, β, γ, δ at the jar's defaults."""
    grid = [{**METEOR_DEFAULTS, "alpha": float(a)} for a in alphas]
    if METEOR_DEFAULTS not in grid:
        grid.append(dict(METEOR_DEFAULTS))
    return grid


def dreem_grid(step: float = DREEM_WEIGHT_STEP, lp_exponents: Sequence[float] = DREEM_LP_EXPONENTS,
               components: Sequence[str] = COMPONENTS) -> list[dict]:
    """DREEM settings: representation weights on a simplex grid, times the length-penalty exponents.

    Representations left out of ``components`` weigh 0 everywhere.
    """
    ticks = int(round(1 / step))
    weights = [w for w in itertools.product(range(ticks + 1), repeat=len(components)) if sum(w) == ticks]
    return [{"weights": {k: round(dict(zip(components, w)).get(k, 0) * step, 4) for k in COMPONENTS},
             "length_penalty": float(p)}
            for w in sorted(weights, reverse=True) for p in lp_exponents]


def meteor_pair_scores(pairs: PairArrays, grid: Sequence[dict], settings: Settings,
                       progress: Callable[[str], None] | None = None) -> np.ndarray:
    """(len(grid), n_pairs) Meteor scores, one row per parameter set, through the score cache. Every set
    re-weights the same alignments in the one METEOR process, which is stopped once at the end."""
    from muttlab.metrics.meteor import Meteor
    rows = []
    try:
        for params in grid:
            if progress:
                progress(f"METEOR {params}")
            rows.append(score_batches(Meteor(**params), [(pairs.cands, [[r] for r in pairs.refs])], settings)[0])
    finally:
        Meteor().close()
    return np.vstack(rows)


def dreem_pair_scores(pairs: PairArrays, grid: Sequence[dict], settings: Settings) -> np.ndarray:
    """(len(grid), n_pairs) DREEM scores; the representation cosines are computed once."""
    used = [k for k in COMPONENTS if any(p["weights"][k] > 0 for p in grid)]
    comps = pair_components(pairs.cands, pairs.refs, used, model_dir(settings))
    return np.vstack([comps.combine(p["weights"], p["length_penalty"]) for p in grid])


# --------------------------------------------------------------------------- search

@dataclass
class SearchResult:
    """The best single-level choice and the best multi-level configuration on the development data."""

    single_choice: int
    single_corr: float
    lam: float
    theta: tuple[float, float]
    level_choice: tuple[int, int, int]
    multi_corr: float
    level_counts: tuple[int, int, int]
    evaluated: int
    singles: list[float] = field(default_factory=list)


def _levels(pairs: PairArrays, lam: float, t1: float, t2: float) -> np.ndarray:
    return LevelClassifier(lam, t1, t2).levels(pairs.word_f, pairs.dep_f)


def theta_grid(pairs: PairArrays, lam: float, quantiles: Sequence[float] = THETA_QUANTILES) -> list[float]:
    """Threshold candidates for one λ: quantiles of F = λ·F_word + (1 − λ)·F_dep, rounded to 0.001."""
    f = lam * pairs.word_f + (1 - lam) * pairs.dep_f
    return sorted({round(float(v), 3) for v in np.quantile(f, quantiles)})


def search(pair_scores: np.ndarray, pairs: PairArrays, human: np.ndarray, kind: str,
           lambdas: Sequence[float] = LAMBDAS, thetas: Sequence[float] | None = None,
           min_share: float = MIN_LEVEL_SHARE) -> SearchResult:
    """Grid search of λ, θ1 < θ2 and the per-level grid entry, maximising the correlation.

    θ candidates are ``thetas`` if given, else the deciles of F for each λ (:func:`theta_grid`).
    Threshold pairs leaving any level with less than ``min_share`` of the pairs are skipped.
    Per-level choices are searched exhaustively when there are at most EXHAUSTIVE_LIMIT combinations,
    else by coordinate ascent (each level in turn, until no level changes) from the best single entry.
    Ties keep the earlier configuration, so a multi-level setting must be strictly better to win.
    """
    n_choices = pair_scores.shape[0]
    cols = np.arange(pair_scores.shape[1])

    correlator = stats.RatingsCorrelator(kind, human)

    def corr_of(pair_score: np.ndarray) -> float:
        return correlator(pairs.best(pair_score))

    singles = [corr_of(pair_scores[c]) for c in range(n_choices)]
    single = int(np.nanargmax(singles))
    best = (singles[single], float("nan"), (float("nan"), float("nan")), (single, single, single))
    evaluated = n_choices
    exhaustive = n_choices ** 3 <= EXHAUSTIVE_LIMIT
    for lam in lambdas:
        for t1, t2 in itertools.combinations(thetas if thetas is not None else theta_grid(pairs, lam), 2):
            level = _levels(pairs, lam, t1, t2)
            if np.bincount(level, minlength=3).min() < min_share * level.size:
                continue

            def value(choice) -> float:
                return corr_of(pair_scores[np.asarray(choice)[level], cols])

            if exhaustive:
                for choice in itertools.product(range(n_choices), repeat=3):
                    v = value(choice)
                    evaluated += 1
                    if v > best[0]:
                        best = (v, lam, (t1, t2), tuple(int(c) for c in choice))
            else:
                choice = [single] * 3
                current = singles[single]
                changed = True
                while changed:
                    changed = False
                    for lv in range(3):
                        for c in range(n_choices):
                            if c == choice[lv]:
                                continue
                            trial = list(choice)
                            trial[lv] = c
                            v = value(trial)
                            evaluated += 1
                            if v > current + 1e-12:
                                current, choice, changed = v, trial, True
                if current > best[0]:
                    best = (current, lam, (t1, t2), tuple(choice))
    corr, lam, theta, choice = best
    if np.isnan(lam):
        # No threshold pair beat one level for all: record it as one level holding every pair.
        lam, theta = 0.5, (1.5, 2.0)
    level = _levels(pairs, lam, *theta)
    counts = tuple(int((level == i).sum()) for i in range(3))
    return SearchResult(single, float(singles[single]), float(lam), (float(theta[0]), float(theta[1])),
                        choice, float(corr), counts, evaluated, [float(v) for v in singles])


# --------------------------------------------------------------------------- tuning

@dataclass
class TuneReport:
    """What ``tune`` found for one metric on one dataset, and where it was written."""

    metric: str
    dataset: str
    correlation: str
    dev_candidates: int
    single_params: dict
    single_dev: float
    multi_model: dict
    multi_dev: float
    level_counts: tuple[int, int, int]
    evaluated: int
    files: list[str] = field(default_factory=list)


def _model_json(result: SearchResult, grid: Sequence[dict], dataset: str, kind: str) -> dict:
    return {"lambda": result.lam, "theta": list(result.theta),
            "levels": {lv: grid[c] for lv, c in zip(LEVELS, result.level_choice)},
            "tuned_on": f"{dataset} dev", "correlation": kind, "dev_correlation": round(result.multi_corr, 6),
            "dev_level_counts": dict(zip(LEVELS, result.level_counts)),
            "single": grid[result.single_choice], "single_dev_correlation": round(result.single_corr, 6),
            "grid_dev_correlation": [{"params": p, "dev": round(v, 6)} for p, v in zip(grid, result.singles)]}


def tuned_file(stem: str, dataset: str, folder: Path) -> Path:
    return folder / f"{stem}.{dataset}.json"


def _write(path: Path, data: dict) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return str(path)


def tune(metric: str, dataset: str, settings: Settings, out_dir: Path | None = None,
         progress: Callable[[str], None] | None = None, lambdas: Sequence[float] = LAMBDAS,
         thetas: Sequence[float] | None = None, representations: Sequence[str] = COMPONENTS) -> TuneReport:
    """Tune one multi-level metric on one dataset's development split and save its parameters.

    Writes ``<stem>.<dataset>.json`` into ``out_dir`` (default: the model folder of ``settings``), DREEM's
    single-level weights to ``dreem.<dataset>.json``; ``representations`` limits the ones DREEM's grid may
    weight. Tuning changes nothing the metrics compute: they use the bundled parameters until a maintainer
    installs a tuned file (``muttlab models install <id>``, :mod:`muttlab.learned.models`).
    """
    if metric not in METRICS:
        raise MuttlabError(f"unknown metric {metric!r} for tuning; choose from {', '.join(METRICS)}")
    unknown = [r for r in representations if r not in COMPONENTS]
    if unknown or not representations:
        raise MuttlabError(f"unknown DREEM representation(s) {', '.join(unknown) or '(none given)'}; "
                           f"choose from {', '.join(COMPONENTS)}")
    out_dir = Path(out_dir) if out_dir is not None else writable_model_dir(settings)
    data = load_eval_set(dataset, settings).subset("dev")
    if progress:
        progress(f"parsing {len(data)} {dataset} dev candidates")
    pairs = PairArrays.build(data)
    if metric == "meteor":
        grid = meteor_grid()
        scores = meteor_pair_scores(pairs, grid, settings, progress)
    else:
        grid = dreem_grid(components=representations)
        scores = dreem_pair_scores(pairs, grid, settings)
    if progress:
        progress(f"searching λ, θ and {len(grid)} per-level choices")
    result = search(scores, pairs, data.human, CORRELATION[dataset], lambdas=lambdas, thetas=thetas)
    model = _model_json(result, grid, dataset, CORRELATION[dataset])
    report = TuneReport(metric, dataset, CORRELATION[dataset], len(data), grid[result.single_choice],
                        result.single_corr, model, result.multi_corr, result.level_counts, result.evaluated)
    stem = MODEL_STEMS[metric]
    report.files.append(_write(tuned_file(stem, dataset, out_dir), model))
    if metric == "dreem":
        single = {**grid[result.single_choice], "tuned_on": f"{dataset} dev", "correlation": CORRELATION[dataset],
                  "dev_correlation": round(result.single_corr, 6)}
        report.files.append(_write(tuned_file(MODEL_STEMS["dreem-single"], dataset, out_dir), single))
    return report


# --------------------------------------------------------------------------- held-out evaluation

def _load_tuned(stem: str, dataset: str, settings: Settings) -> tuple[dict, str]:
    for folder in [f for f in (model_dir(settings), BUNDLED_MODELS) if f is not None]:
        path = tuned_file(stem, dataset, folder)
        if path.is_file():
            try:
                return json.loads(path.read_text(encoding="utf-8")), str(path)
            except json.JSONDecodeError as exc:
                raise MuttlabError(f"{path}: malformed JSON ({exc.msg}); re-run `muttlab multilevel tune`") from None
    raise MuttlabError(f"no tuned {stem} parameters for {dataset}; run `muttlab multilevel tune --dataset {dataset}`")


@dataclass
class Variant:
    """One metric of a comparison: its label, the metric, where its parameters came from, its dev correlation."""

    label: str
    metric: Metric
    source: str
    dev: float


def evaluation_metrics(metric: str, dataset: str, settings: Settings) -> list[Variant]:
    """The single-level baselines, then the multi-level metric, with tuned parameters for ``dataset``."""
    if metric == "meteor":
        from muttlab.metrics.meteor import Meteor
        model, source = _load_tuned(MODEL_STEMS["meteor"], dataset, settings)
        if "single" not in model:
            raise MuttlabError(f"{source} lacks the tuned single-level entry; re-run `muttlab multilevel tune`")
        default_dev = next((g["dev"] for g in model.get("grid_dev_correlation", [])
                            if g["params"] == METEOR_DEFAULTS), float("nan"))
        return [Variant("METEOR-1.5", Meteor(), "jar defaults", default_dev),
                Variant("METEOR (tuned)", Meteor(**model["single"]), source, model["single_dev_correlation"]),
                Variant("ML-METEOR", MultiLevelMeteor(model=model), source, model["dev_correlation"])]
    single, single_source = _load_tuned(MODEL_STEMS["dreem-single"], dataset, settings)
    model, source = _load_tuned(MODEL_STEMS["dreem"], dataset, settings)
    # The model folder is where the reval representation's ReVal model is looked for first.
    folder = model_dir(settings)
    return [Variant("DREEM", Dreem(weights=single["weights"], length_penalty=single["length_penalty"],
                                   model_dir=folder), single_source, single["dev_correlation"]),
            Variant("ML-DREEM", MultiLevelDreem(model_dir=folder, model=model), source, model["dev_correlation"])]


@dataclass
class EvalRow:
    dataset: str
    correlation: str
    metric: str
    n: int
    dev: float
    test: float
    ci_low: float
    ci_high: float
    delta: float = float("nan")  # test correlation minus the single-level baseline's
    delta_low: float = float("nan")
    delta_high: float = float("nan")
    params_from: str = ""


def evaluate(metric: str, dataset: str, settings: Settings, n_resamples: int = 1000,
             progress: Callable[[str], None] | None = None) -> list[EvalRow]:
    """Held-out correlation of the single- and multi-level variants, with bootstrap 95% CIs.

    The multi-level row also carries the paired bootstrap CI of its difference from the tuned
    single-level row (same resampled candidates for both). The ``dev`` column is the development
    correlation recorded by ``tune`` in the parameter file (NaN where the grid did not hold the setting).
    """
    test = load_eval_set(dataset, settings).subset("test")

    def correlate(scores: np.ndarray, items: np.ndarray) -> float:
        return stats.correlation_with_ratings(scores, test.human[items], CORRELATION[dataset])

    variants = evaluation_metrics(metric, dataset, settings)
    rows, test_scores = [], {}
    try:
        for v in variants:
            if progress:
                progress(f"scoring {v.label} on {len(test)} {dataset} test candidates")
            (s_test,) = score_batches(v.metric, [(test.candidates, test.references)], settings)
            test_scores[v.label] = s_test
            ci = stats.bootstrap_over_items(lambda idx, s=s_test: correlate(s[idx], idx), len(test), settings.seed,
                                            n_resamples)
            source = Path(v.source).name if v.source.endswith(".json") else v.source
            rows.append(EvalRow(dataset, CORRELATION[dataset], v.label, len(test), float(v.dev), ci.value, ci.ci_low,
                                ci.ci_high, params_from=source))
    finally:
        for v in variants:
            v.metric.close()
    baseline = rows[-2].metric
    base, multi = test_scores[baseline], test_scores[rows[-1].metric]
    diff = stats.bootstrap_over_items(lambda idx: correlate(multi[idx], idx) - correlate(base[idx], idx),
                                      len(test), settings.seed, n_resamples)
    rows[-1].delta, rows[-1].delta_low, rows[-1].delta_high = diff.value, diff.ci_low, diff.ci_high
    return rows


def rows_frame(rows: Sequence[EvalRow]) -> pd.DataFrame:
    return pd.DataFrame([asdict(r) for r in rows])
