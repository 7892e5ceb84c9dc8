"""Training and evaluating the ReVal models on SICK, with checkpoints cached on disk.

SICK's own splits are used as Tai et al. (2015, §5.2) do: TRAIN to train, TRIAL to select the epoch,
TEST to report. The full SICK release read here has 4,439 / 495 / 4,906 pairs; Tai et al. used the
SemEval-2014 files (4,500 / 500 / 4,927). Parses of every SICK sentence are computed once and cached; a
checkpoint is keyed by its model and training configuration and by a hash of the data it saw, so the
same command twice trains once.
"""
from __future__ import annotations

import hashlib
import json
import shutil
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from muttlab.access.roles import Action, Identity, require
from muttlab import stats
from muttlab.errors import DataError, MuttlabError
from muttlab.engine.runner import model_dir, writable_model_dir
from muttlab.settings import Settings
from muttlab.sources import load_sick, read_table
from muttlab.metrics.reval.metric import (PUBLISHED_DIR, checkpoint_info, checkpoint_name, find_checkpoint,
                                         installed_checkpoint, model_id)  # noqa: F401 (model_id: re-export)
from muttlab.metrics.reval.model import (MODELS, ModelConfig, ReValEnsemble, WordVectors, load_checkpoint,
                                 save_checkpoint)
from muttlab.learned.reval_training import Inputs, Pair, Progress, TrainConfig, TrainResult, pearson, predict, train
from muttlab.metrics.reval.trees import DepTree, load_trees, parse_trees, save_trees

SPLITS = {"train": "TRAIN", "dev": "TRIAL", "test": "TEST"}

# Tai et al. (2015), Table 3, SICK test set, 300-d GloVe: the published numbers ours are set beside.
PUBLISHED = {
    "lstm": {"pearson": 0.8528, "spearman": 0.7911, "mse": 0.2831},
    "treelstm": {"pearson": 0.8676, "spearman": 0.8083, "mse": 0.2532},
}


@dataclass(frozen=True)
class PairData:
    """Similarity pairs by split (train/dev/test), every sentence's tree, and a hash of all of it.

    ``source`` names where the pairs came from (``SICK``, or the pairs file) for the checkpoint's JSON.
    """

    splits: dict[str, list[Pair]]
    trees: dict[str, DepTree]
    data_hash: str
    source: str = "SICK"


@dataclass(frozen=True)
class Trained:
    """A trained model: where its checkpoint is and what training reported."""

    model: str
    path: Path
    cached: bool
    info: dict


@dataclass(frozen=True)
class Evaluation:
    """Correlation of predictions with SICK gold scores on one split, with bootstrap 95% CIs."""

    model: str
    split: str
    n: int
    pearson: float
    pearson_ci: tuple[float, float]
    spearman: float
    spearman_ci: tuple[float, float]
    mse: float
    mse_ci: tuple[float, float]
    checkpoint: str
    predictions: np.ndarray = field(repr=False, compare=False, default_factory=lambda: np.zeros(0))
    gold: np.ndarray = field(repr=False, compare=False, default_factory=lambda: np.zeros(0))

    def as_row(self) -> dict:
        # Tai et al.'s numbers are SICK TEST numbers; beside anything else they would mislead.
        pub = PUBLISHED.get(self.model, {}) if self.split == "test" else {}
        return {"model": self.model, "split": self.split, "n": self.n,
                "pearson": self.pearson, "pearson_lo": self.pearson_ci[0], "pearson_hi": self.pearson_ci[1],
                "spearman": self.spearman, "spearman_lo": self.spearman_ci[0],
                "spearman_hi": self.spearman_ci[1],
                "mse": self.mse, "mse_lo": self.mse_ci[0], "mse_hi": self.mse_ci[1],
                "published_pearson": pub.get("pearson"), "published_spearman": pub.get("spearman"),
                "published_mse": pub.get("mse"), "checkpoint": self.checkpoint}


def _hash(lines) -> str:
    digest = hashlib.sha256()
    for line in lines:
        digest.update(line.encode("utf-8"))
        digest.update(b"\n")
    return digest.hexdigest()


def _spacy_version() -> str:
    from muttlab.resources.spacy_nlp import load_nlp

    nlp = load_nlp()
    return f"{nlp.meta.get('name', '?')}-{nlp.meta.get('version', '?')}"


def reval_dir(settings: Settings) -> Path:
    """Where trained ReVal checkpoints (each under a name of its own) and parse caches are written."""
    return writable_model_dir(settings) / "reval"


def load_sick_data(settings: Settings, limit: int | None = None) -> PairData:
    """SICK as ReVal training data, with trees from the on-disk parse cache (parsed once per data set).

    ``limit`` keeps only the first ``limit`` pairs of each split (for quick experiments and tests).
    """
    if settings.data_dir is None:
        raise MuttlabError("ReVal trains on SICK, which needs the datasets folder; "
                           "pass --data-dir or set MUTTLAB_DATA_DIR")
    splits: dict[str, list[Pair]] = {name: [] for name in SPLITS}
    by_sick = {v: k for k, v in SPLITS.items()}
    for p in load_sick(settings):
        if p.split in by_sick:
            splits[by_sick[p.split]].append(Pair(p.sentence_a, p.sentence_b, float(p.relatedness)))
    if limit is not None:
        splits = {k: v[:limit] for k, v in splits.items()}
    return _pair_data(settings, splits, "SICK")


def _pair_data(settings: Settings, splits: dict[str, list[Pair]], source: str) -> PairData:
    data_hash = _hash(f"{name}\t{p.sentence_a}\t{p.sentence_b}\t{p.score!r}"
                      for name, pairs in splits.items() for p in pairs)[:16]
    sentences = list(dict.fromkeys(s for pairs in splits.values() for p in pairs
                                   for s in (p.sentence_a, p.sentence_b)))
    return PairData(splits, cached_trees(settings, sentences), data_hash, source)


# Column pairs accepted in a pairs file: the ranking converter writes reference/candidate.
PAIR_COLUMNS = (("sentence_a", "sentence_b"), ("reference", "candidate"))


def read_pairs_file(path: Path) -> list[Pair]:
    """(sentence_a, sentence_b, score) pairs from a TSV with a header, scores on ReVal's 1–5 scale.

    The header names ``sentence_a``/``sentence_b`` or ``reference``/``candidate`` (what ``muttlab ranking
    convert --pairs`` writes), and ``score``; other columns are ignored.
    """
    frame = read_table(path, "\t", fix="give a TSV of sentence pairs with a score column")
    columns = next((c for c in PAIR_COLUMNS if set(c) <= set(frame.columns)), None)
    if columns is None or "score" not in frame.columns:
        raise DataError(path, f"the header must name score and one of "
                              f"{' or '.join('/'.join(c) for c in PAIR_COLUMNS)}; it has {', '.join(frame.columns)}",
                        line=1)
    scores = pd.to_numeric(frame["score"], errors="coerce")
    lo, hi = 1.0, float(ModelConfig().classes)  # ŷ = rᵀp̂ with r = (1, …, K)
    bad = np.flatnonzero(scores.isna() | (scores < lo) | (scores > hi))
    if bad.size:
        raise DataError(path, f"score must be a number in [{lo:g}, {hi:g}] (ReVal predicts on that scale), "
                              f"got {frame['score'].iloc[bad[0]]!r}", line=int(bad[0]) + 2)
    for column in columns:
        empty = np.flatnonzero(frame[column].str.strip() == "")
        if empty.size:
            raise DataError(path, f"empty {column}", line=int(empty[0]) + 2)
    return [Pair(a.strip(), b.strip(), float(y)) for a, b, y in zip(frame[columns[0]], frame[columns[1]], scores)]


def load_pair_files(settings: Settings, train: Path, dev: Path | None = None, dev_share: float = 0.1) -> PairData:
    """ReVal training data from pairs files (e.g. converted ranking judgments) instead of SICK.

    Without ``dev`` a seeded ``dev_share`` of the training pairs is held out to select the epoch. There is
    no test split: evaluate a model trained this way on SICK or on data of your own.
    """
    pairs = read_pairs_file(train)
    if dev is not None:
        dev_pairs = read_pairs_file(dev)
    else:
        order = np.random.default_rng(settings.seed).permutation(len(pairs))
        n_dev = int(round(dev_share * len(pairs)))
        dev_pairs = [pairs[i] for i in sorted(order[:n_dev])]
        pairs = [pairs[i] for i in sorted(order[n_dev:])]
    if len(pairs) < 2 or len(dev_pairs) < 2:
        raise MuttlabError(f"{train}: training needs at least 2 training and 2 dev pairs, got {len(pairs)} and "
                           f"{len(dev_pairs)}; give more pairs or a --dev-pairs file")
    name = Path(train).name + (f" + {Path(dev).name}" if dev is not None else "")
    return _pair_data(settings, {"train": pairs, "dev": dev_pairs, "test": []}, f"pairs: {name}")


def cached_trees(settings: Settings, sentences: list[str]) -> dict[str, DepTree]:
    """Trees for the sentences, read from the parse cache or parsed now and cached."""
    if model_dir(settings) is None:  # a read-only server writes no parse cache
        return dict(zip(sentences, parse_trees(sentences)))
    key = _hash([_spacy_version(), *sentences])[:16]
    path = reval_dir(settings) / f"parses-{key}.json"
    if path.is_file():
        try:
            trees = load_trees(path)
            if all(s in trees for s in sentences):
                return trees
        except (ValueError, KeyError, IndexError):
            pass  # a damaged cache is parsed again and overwritten
    trees = dict(zip(sentences, parse_trees(sentences)))
    try:
        save_trees(path, trees)
    except OSError:
        pass  # the parse cache only saves time; a cache dir we cannot write costs a parse next time
    return trees


def _word_vectors() -> WordVectors:
    from muttlab.resources.glove import DIM, VectorsMissing, load_glove

    try:
        return WordVectors(load_glove(), DIM)
    except VectorsMissing as exc:
        raise MuttlabError(str(exc)) from None


def checkpoint_key(model_config: ModelConfig, train_config: TrainConfig, data_hash: str) -> str:
    config = json.dumps({"model": model_config.to_dict(), "train": train_config.to_dict()}, sort_keys=True)
    return _hash([config, data_hash])[:16]


def train_model(settings: Settings, model: str = "treelstm", train_config: TrainConfig | None = None,
                progress: Callable[[Progress], None] | None = None, force: bool = False,
                limit: int | None = None, data: PairData | None = None, *, actor: Identity) -> Trained:
    """Train ReVal on SICK TRAIN, selecting the epoch on TRIAL; a cached checkpoint is reused.

    ``data`` trains on other pairs instead (:func:`load_pair_files`). The checkpoint gets a name of its own
    in the model folder and changes nothing the metrics compute until a maintainer installs it
    (:func:`muttlab.learned.models.install`).

    Raises:
      PermissionDenied: ``actor`` may not train (only maintainers may), or the server is read-only.
    """
    require(actor, Action.TRAIN, settings)
    if model not in MODELS:
        raise MuttlabError(f"unknown ReVal model {model!r}; choose one of {', '.join(MODELS)}")
    train_config = train_config or TrainConfig(seed=settings.seed)
    data = data or load_sick_data(settings, limit=limit)
    model_config = ModelConfig(model=model)
    key = checkpoint_key(model_config, train_config, data.data_hash)
    path = reval_dir(settings) / f"{model}-{key}.pt"
    if path.is_file() and path.with_suffix(".json").is_file() and not force:
        info = checkpoint_info(path)
        if info.get("complete"):
            return Trained(model, path, True, info)
    inputs = Inputs(data.trees, _word_vectors())

    def info_of(result: TrainResult, complete: bool) -> dict:
        return {"model": model, "key": key, "data_hash": data.data_hash, "train": train_config.to_dict(),
                "data": {"source": data.source, "train": len(data.splits["train"]),
                         "dev": len(data.splits["dev"]), "test": len(data.splits["test"])},
                "inputs": "glove-6B-50d (frozen)", "parser": _spacy_version(),
                "best_epoch": result.best_epoch, "dev_pearson": result.best_dev_pearson,
                "history": [vars(h) for h in result.history], "train_seconds": round(result.seconds, 1),
                "complete": complete}

    def checkpoint(result: TrainResult) -> None:
        # Saved after every epoch, so an interrupted run still leaves its best model so far.
        save_checkpoint(result.model, path, info_of(result, complete=False))

    result = train(data.splits["train"], data.splits["dev"], inputs, model_config, train_config,
                   progress=progress, on_epoch=checkpoint)
    info = info_of(result, complete=True)
    save_checkpoint(result.model, path, info)
    return Trained(model, path, False, info)


def train_best_of_seeds(settings: Settings, model: str, seeds: list[int], train_config: TrainConfig | None = None,
                        progress: Callable[[int, Progress], None] | None = None, force: bool = False,
                        limit: int | None = None, ensemble: bool = False,
                        data: PairData | None = None, *, actor: Identity) -> tuple[Trained, list[Trained]]:
    """Train one model per seed (each cached) and pick the one with the best dev Pearson r, or, with
    ``ensemble``, build all of them into one :class:`~muttlab.metrics.reval.model.ReValEnsemble`
    (see :func:`build_ensemble`).

    Model selection stays on the dev split (TRIAL), as for the epoch; TEST is never looked at.
    Returns the chosen model (to install, if wanted) and all runs, in seed order.
    """
    require(actor, Action.TRAIN, settings)
    if not seeds:
        raise MuttlabError("give at least one seed")
    base = train_config or TrainConfig(seed=settings.seed)
    runs = []
    for seed in seeds:
        report = (lambda p, seed=seed: progress(seed, p)) if progress else None
        runs.append(train_model(settings, model, replace(base, seed=seed), progress=report, force=force,
                                limit=limit, data=data, actor=actor))
    best = build_ensemble(settings, model, runs, limit=limit, data=data) if ensemble else max(
        runs, key=lambda r: r.info["dev_pearson"])
    return best, runs


def build_ensemble(settings: Settings, model: str, runs: list[Trained], limit: int | None = None,
                   data: PairData | None = None) -> Trained:
    """One checkpoint holding every run's model; it predicts their mean ŷ (mean p̂).

    Its dev Pearson r is measured on the same TRIAL pairs the runs were selected on. The checkpoint is
    keyed by the members' weights, so building the same ensemble twice writes it once and retraining a
    member (``--force``) builds it again.
    """
    if len({r.info["data_hash"] for r in runs}) != 1:
        raise MuttlabError("ensemble members were trained on different data; train them with the same --limit")
    key = _hash(hashlib.sha256(r.path.read_bytes()).hexdigest() for r in runs)[:16]
    path = reval_dir(settings) / f"{model}-ensemble-{key}.pt"
    if path.is_file() and path.with_suffix(".json").is_file():
        return Trained(model, path, True, checkpoint_info(path))
    net = ReValEnsemble([load_checkpoint(r.path) for r in runs])
    data = data or load_sick_data(settings, limit=limit)
    if data.data_hash != runs[0].info["data_hash"]:
        raise MuttlabError("the ensemble's dev pairs are not the data its members were trained on")
    dev = data.splits["dev"]
    pred = predict(net, [(p.sentence_a, p.sentence_b) for p in dev], Inputs(data.trees, _word_vectors()))
    first = runs[0].info
    info = {"model": model, "key": key, "data_hash": first["data_hash"], "data": first["data"],
            "inputs": first["inputs"], "parser": first["parser"], "ensemble": True,
            "train": {k: v for k, v in first["train"].items() if k != "seed"},
            "members_info": [{"seed": r.info["train"]["seed"], "key": r.info["key"],
                              "best_epoch": r.info["best_epoch"], "dev_pearson": r.info["dev_pearson"],
                              "train_seconds": r.info["train_seconds"]} for r in runs],
            "dev_pearson": pearson(pred, np.array([p.score for p in dev])),
            "train_seconds": round(sum(r.info["train_seconds"] for r in runs), 1), "complete": True}
    save_checkpoint(net, path, info)
    return Trained(model, path, False, checkpoint_info(path))


def _copy_checkpoint(src: Path, dest: Path, extra: dict | None = None) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dest)
    info = checkpoint_info(src)
    info.update(extra or {})
    dest.with_suffix(".json").write_text(json.dumps(info, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def _mse_rows(pred: np.ndarray, gold: np.ndarray) -> np.ndarray:
    return np.mean((pred - gold) ** 2, axis=1)


EVALUATION_STEPS = 4  # reading the pairs, loading the vectors, predicting, bootstrapping


def evaluate_model(settings: Settings, model: str = "treelstm", split: str = "test",
                   checkpoint: Path | None = None, bootstrap: int = 1000, limit: int | None = None,
                   pairs_file: Path | None = None,
                   progress: Callable[[int, int, str], None] | None = None) -> Evaluation:
    """Pearson r, Spearman ρ and MSE of a trained model's predictions on a SICK split (Tai et al. §5.2),
    or on the scored pairs of ``pairs_file`` (:func:`read_pairs_file`; the split is then its name).

    The model is the one the ReVal metric would use (model dir first, then the bundled ``data/models``)
    unless ``checkpoint`` names a file. CIs: percentile bootstrap over pairs (``muttlab.stats``), seeded by ``settings.seed``.
    ``progress(step, total, message)`` is told each of the :data:`EVALUATION_STEPS` steps as it starts and, while
    predicting, the sentences encoded (``1,024 of 9,000 sentences encoded``).
    """
    report = progress or (lambda step, total, message: None)
    if pairs_file is None and split not in SPLITS:
        raise MuttlabError(f"unknown split {split!r}; choose one of {', '.join(SPLITS)}")
    path = checkpoint or find_checkpoint(model, model_dir(settings))
    if path is None or not Path(path).is_file():
        raise MuttlabError(f"no trained ReVal {model} model; train it with `muttlab reval train --model {model}`")
    try:
        net = load_checkpoint(path)
    except ValueError as exc:
        raise MuttlabError(str(exc)) from None
    report(0, EVALUATION_STEPS, "reading the pairs and their dependency trees (parsed once, then cached)")
    if pairs_file is not None:
        pairs = read_pairs_file(pairs_file)[:limit]
        split = Path(pairs_file).name
        trees = cached_trees(settings, list(dict.fromkeys(s for p in pairs for s in (p.sentence_a, p.sentence_b))))
    else:
        data = load_sick_data(settings, limit=limit)
        pairs, trees = data.splits[split], data.trees
    if len(pairs) < 3:
        raise MuttlabError(f"{len(pairs)} pairs are too few to correlate; give at least 3")
    report(1, EVALUATION_STEPS, "loading the GloVe vectors")
    inputs = Inputs(trees, _word_vectors())

    def encoded(done: int, total: int) -> None:
        # In sentences, so that the bar moves within the step.
        report(2 * total + done, EVALUATION_STEPS * total,
               f"predicting {len(pairs):,} pairs: {done:,} of {total:,} sentences encoded")

    encoded(0, len({s for p in pairs for s in (p.sentence_a, p.sentence_b)}))
    # Batches of 128 sentences: a report every 1-3 s on a CPU, where a Tree-LSTM batch of 512 took up to 7 s (and
    # the whole prediction longer); the predictions differ from 512's by float32 rounding only (< 1e-6).
    pred = predict(net, [(p.sentence_a, p.sentence_b) for p in pairs], inputs, batch_size=128, progress=encoded)
    report(3, EVALUATION_STEPS, f"bootstrapping Pearson r, Spearman ρ and MSE ({bootstrap:,} resamples each)")
    gold = np.array([p.score for p in pairs], dtype=np.float64)
    seed = settings.seed
    pearson = stats.correlate(pred, gold, "pearson", n_boot=bootstrap, seed=seed)
    spearman = stats.correlate(pred, gold, "spearman", n_boot=bootstrap, seed=seed)
    mse = stats.bootstrap_ci(_mse_rows, (pred, gold), n_boot=bootstrap, seed=seed)
    return Evaluation(
        model=net.config.model, split=split, n=len(pairs),
        pearson=pearson.value, pearson_ci=(pearson.ci_low, pearson.ci_high),
        spearman=spearman.value, spearman_ci=(spearman.ci_low, spearman.ci_high),
        mse=mse.value, mse_ci=(mse.ci_low, mse.ci_high),
        checkpoint=str(path), predictions=pred, gold=gold)


@dataclass(frozen=True)
class Comparison:
    """Is model A's Pearson r with the gold scores above model B's, on the same pairs?"""

    model_a: str
    model_b: str
    bootstrap: stats.PairedComparison
    williams: stats.WilliamsResult


def compare_evaluations(a: Evaluation, b: Evaluation, bootstrap: int = 1000, seed: int = 0) -> Comparison:
    """Paired bootstrap of r_a − r_b and Williams' test (one-sided, A better) of two evaluations of one split.

    Two models scored on the same pairs are dependent, so their separate CIs overlapping says little; the
    paired tests are the ones to read (Graham & Baldwin 2014).
    """
    if a.split != b.split or a.n != b.n or not np.array_equal(a.gold, b.gold):
        raise MuttlabError("compare two evaluations of the same split")
    return Comparison(a.model, b.model,
                      stats.paired_bootstrap(a.gold, a.predictions, b.predictions, "pearson",
                                             n_boot=max(1, bootstrap), seed=seed),
                      stats.compare_williams(a.gold, a.predictions, b.predictions, "pearson"))


def publish(settings: Settings, model: str, evaluations: list[Evaluation], dest_dir: Path = PUBLISHED_DIR) -> Path:
    """Copy the installed model into the repository's ``data/models`` with its scores in the JSON."""
    src = installed_checkpoint(model, model_dir(settings))
    if src is None or not src.is_file():
        raise MuttlabError(f"no installed ReVal {model} model to publish; train it with `muttlab reval train "
                           f"--model {model} --install`")
    scores = {e.split: {k: v for k, v in e.as_row().items()
                        if k not in ("model", "split", "checkpoint") and not k.startswith("published_")}
              for e in evaluations}
    dest = dest_dir / checkpoint_name(model)
    _copy_checkpoint(src, dest, {"scores": scores, "published": time.strftime("%Y-%m-%d"),
                                 "reference_test_scores": {"source": "Tai et al. 2015, Table 3 (300-d GloVe)",
                                                           **PUBLISHED[model]}})
    return dest
