"""Multi-level metrics: classify each candidate's quality, then score it with that level's weighting.

Chen, Guo & Kuhn, "Multi-level evaluation for machine translation" (WMT 2015): a candidate is compared
with a reference by F = λ·F_word + (1 − λ)·F_dep (§2; F_dep over dependency triplets, see
:mod:`muttlab.metrics.dependencies`); thresholds θ1 < θ2 put it in the low (F < θ1), medium or high (F ≥ θ2)
level, and each level has its own tuned weighting of the underlying metric: Meteor's α, β, γ, δ for
ML-METEOR, the representation weights and length-penalty exponent for ML-DREEM. With several references
each (candidate, reference) pair is classified and scored on its own and the best score counts. λ, θ and
the per-level parameters come from ``muttlab multilevel tune`` (``multilevel-meteor.json`` /
``ml-dreem.json`` in the model folder, else the copies bundled in ``data/models``).
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Mapping, Sequence

import numpy as np

from muttlab.metrics.base import Metric, MetricError
from muttlab.metrics.dependencies import pair_f
from muttlab.metrics.dreem import (COMPONENTS, DEFAULT_LENGTH_PENALTY, best_per_candidate,
                           check_representations, check_weights, flatten, load_model_file, pair_components,
                           pinned_encoder, weighted)

LEVELS = ("low", "medium", "high")
# Meteor 1.5's English "rank" task parameters (Denkowski & Lavie 2014, Table 1), the jar's defaults.
METEOR_DEFAULTS = {"alpha": 0.85, "beta": 0.2, "gamma": 0.6, "delta": 0.75}


@dataclass(frozen=True)
class LevelClassifier:
    """λ and the thresholds θ1 < θ2 of the quality classifier."""

    lam: float
    theta1: float
    theta2: float

    def __post_init__(self):
        if not 0.0 <= self.lam <= 1.0:
            raise MetricError(f"lambda must lie in [0, 1], got {self.lam}")
        if not self.theta1 < self.theta2:
            raise MetricError(f"thresholds must satisfy theta1 < theta2, got {self.theta1}, {self.theta2}")

    def levels(self, word_f: np.ndarray, dep_f: np.ndarray) -> np.ndarray:
        """0 (low), 1 (medium) or 2 (high) for each pair, from F = λ·F_word + (1 − λ)·F_dep."""
        f = self.lam * np.asarray(word_f, dtype=np.float64) + (1 - self.lam) * np.asarray(dep_f, dtype=np.float64)
        return np.digitize(f, [self.theta1, self.theta2])


def document_score(scores: Sequence[float], reference_lengths: Sequence[float]) -> float:
    """A document's score: the segment scores' mean weighted by reference length (Chen et al. 2015, §3)."""
    scores = np.asarray(scores, dtype=np.float64)
    weights = np.asarray(reference_lengths, dtype=np.float64)
    if scores.shape != weights.shape or not scores.size or weights.sum() <= 0:
        raise MetricError("document_score needs one positive reference length per segment score")
    return float((scores * weights).sum() / weights.sum())


class _MultiLevel(Metric):
    """Shared plumbing: load λ, θ and per-level parameters lazily, classify pairs, keep the best reference."""
    languages = ("en",)  # English resources (see muttlab.metrics.base.Metric.languages)
    language_reason = "quality levels tuned on English data over METEOR's or DREEM's English resources"

    model_file: ClassVar[str]
    level_keys: ClassVar[tuple[str, ...]]

    def __init__(self, model_dir: Path | None = None, model: Mapping | None = None):
        self.model_dir = Path(model_dir) if model_dir is not None else None
        self._given = dict(model) if model is not None else None
        self._model: dict | None = None
        self._source = "given" if model is not None else None
        self._tuned_id: str | None = None  # the installed tuned file's id; None for the bundled or given ones
        if model is not None:
            # Workers rebuild metrics by registry name, i.e. from the tuned file, not from this model.
            self.parallel = False


    def _check_level(self, params: Mapping) -> dict:
        raise NotImplementedError

    @property
    def model(self) -> dict:
        """{"lambda", "theta": [θ1, θ2], "levels": {low|medium|high: parameters}}, validated."""
        if self._model is None:
            data = self._given
            if data is None:
                data, self._source, self._tuned_id = load_model_file(self.model_dir, self.model_file, self.name,
                                                                     ("lambda", "theta", "levels"))
            try:
                theta = [float(t) for t in data["theta"]]
                levels = {lv: self._check_level(data["levels"][lv]) for lv in LEVELS}
                classifier = LevelClassifier(float(data["lambda"]), *theta)
            except (KeyError, TypeError, ValueError) as exc:
                raise MetricError(f"{self.name}: malformed tuned parameters from {self._source} ({exc!r}); "
                                  "re-run `muttlab multilevel tune`") from None
            self._model = {"lambda": classifier.lam, "theta": theta, "levels": levels,
                           "classifier": classifier}
        return self._model

    @property
    def source(self) -> str:
        """Where the parameters came from: a file path, ``given`` or ``defaults``."""
        _ = self.model
        return self._source

    def params(self) -> dict[str, object]:
        model = self.model
        out: dict[str, object] = {"lambda": model["lambda"], "theta": "/".join(f"{t:g}" for t in model["theta"])}
        for lv in LEVELS:
            out[lv] = "/".join(f"{model['levels'][lv][k]:g}" for k in self.level_keys)
        if self._tuned_id:
            out["tuned"] = self._tuned_id
        return out

    def levels_of(self, candidates: Sequence[str], references: Sequence[str]) -> np.ndarray:
        """The quality level (0 low, 1 medium, 2 high) of each (candidate, reference) pair."""
        pf = pair_f(candidates, references)
        word = np.array([p.word for p in pf])
        dep = np.array([p.dep for p in pf])
        return self.model["classifier"].levels(word, dep)

    def _score(self, candidates: list[str], references: list[list[str]]) -> np.ndarray:
        cands, refs, owner = flatten(candidates, references)
        level = self.levels_of(cands, refs)
        pair_scores = np.zeros(len(cands))
        for index, lv in enumerate(LEVELS):
            rows = np.flatnonzero(level == index)
            if rows.size:
                pair_scores[rows] = self._score_level(self.model["levels"][lv],
                                                      [cands[i] for i in rows], [refs[i] for i in rows])
        return best_per_candidate(pair_scores, owner, len(candidates))

    def _score_level(self, params: dict, cands: list[str], refs: list[str]) -> np.ndarray:
        raise NotImplementedError


class MultiLevelMeteor(_MultiLevel):
    """ML-METEOR: Meteor 1.5 with α, β, γ, δ chosen per quality level."""

    name: ClassVar[str] = "ML-METEOR"
    version: ClassVar[str] = "1"
    requires: ClassVar[tuple[str, ...]] = ("java", "spacy")
    description: ClassVar[str] = "Meteor 1.5 with parameters per quality level (word + dependency F classifier)"
    parallel: ClassVar[bool] = False  # one JVM per parameter set, kept in this process
    model_file: ClassVar[str] = "multilevel-meteor.json"
    level_keys: ClassVar[tuple[str, ...]] = ("alpha", "beta", "gamma", "delta")

    def __init__(self, model_dir: Path | None = None, model: Mapping | None = None):
        super().__init__(model_dir, model)
        self._meteors: dict[tuple, Metric] = {}
        self._aligner: threading.Thread | None = None


    def _check_level(self, params: Mapping) -> dict:
        out = {k: float(params.get(k, METEOR_DEFAULTS[k])) for k in self.level_keys}
        if not all(0.0 <= v <= 1.0 for k, v in out.items() if k != "beta") or out["beta"] < 0:
            raise ValueError(f"Meteor parameters out of range: {out}")
        return out

    def meteor(self, params: Mapping) -> Metric:
        """The Meteor metric with these parameters, started once and kept until :meth:`close`."""
        key = tuple(float(params[k]) for k in self.level_keys)
        if key not in self._meteors:
            from muttlab.metrics.meteor import Meteor
            self._meteors[key] = Meteor(**dict(zip(self.level_keys, key)))
        return self._meteors[key]

    def check_available(self) -> None:
        from muttlab.metrics.meteor import Meteor
        Meteor(**METEOR_DEFAULTS).check_available()

    def _score(self, candidates: list[str], references: list[list[str]]) -> np.ndarray:
        # A pair's level and its Meteor score depend on that pair alone, so each distinct pair is classified
        # and scored once (a MUTT trial's 5/10/20-reference pools are nested and its original recurs); the
        # Meteor alignments themselves are shared with METEOR-1.5 and every level in the one process.
        cands, refs, owner = flatten(candidates, references)
        distinct: dict[tuple[str, str], int] = {}
        where = np.array([distinct.setdefault(pair, len(distinct)) for pair in zip(cands, refs)], dtype=np.int64)
        pairs = list(distinct)
        # The alignments do not depend on the level: the JVM computes them while spaCy parses for the
        # classifier here; a failure there shows again, as a MetricError, when the levels are scored.
        self._aligner = threading.Thread(target=self._align_quietly,
                                         args=([c for c, _ in pairs], [r for _, r in pairs]), daemon=True)
        self._aligner.start()
        try:
            scores = super()._score([c for c, _ in pairs], [[r] for _, r in pairs])
        finally:
            self._aligner.join()
        return best_per_candidate(scores[where], owner, len(candidates))

    def _align_quietly(self, cands: list[str], refs: list[str]) -> None:
        try:
            self.meteor(METEOR_DEFAULTS).align(cands, refs)
        except Exception:  # noqa: BLE001 - reported by the scoring that follows
            pass

    def _score_level(self, params: dict, cands: list[str], refs: list[str]) -> np.ndarray:
        if self._aligner is not None:
            self._aligner.join()  # its alignments are this level's: wait rather than align twice
        return self.meteor(params).score(cands, [[r] for r in refs])

    def close(self) -> None:
        for metric in self._meteors.values():
            metric.close()
        self._meteors.clear()


class MultiLevelDreem(_MultiLevel):
    """ML-DREEM: DREEM with representation weights and length-penalty exponent chosen per quality level."""

    name: ClassVar[str] = "ML-DREEM"
    version: ClassVar[str] = "3"  # 2: ReVal encodings no longer depend on the batch; 3: ReVal run by the float64 kernels
    requires: ClassVar[tuple[str, ...]] = ("glove-6B-50d", "spacy", "a trained ReVal Tree-LSTM if reval is weighted")
    description: ClassVar[str] = "DREEM with weights per quality level (word + dependency F classifier)"
    model_file: ClassVar[str] = "ml-dreem.json"
    level_keys: ClassVar[tuple[str, ...]] = (*COMPONENTS, "length_penalty")


    def _check_level(self, params: Mapping) -> dict:
        weights = check_weights(params["weights"])
        return {**weights, "length_penalty": float(params.get("length_penalty", DEFAULT_LENGTH_PENALTY))}

    def _uses_reval(self) -> bool:
        return any(level["reval"] > 0 for level in self.model["levels"].values())

    def params(self) -> dict[str, object]:
        out = super().params()
        if self._uses_reval():
            out["reval"] = pinned_encoder(self).model_id
        return out

    def check_available(self) -> None:
        check_representations({"reval": 1.0 if self._uses_reval() else 0.0}, self.model_dir)

    def _score_level(self, params: dict, cands: list[str], refs: list[str]) -> np.ndarray:
        weights = {k: params[k] for k in COMPONENTS}
        encoder = pinned_encoder(self) if weights["reval"] > 0 else None
        comps = pair_components(cands, refs, weighted(weights), self.model_dir, encoder)
        return comps.combine(weights, params["length_penalty"])
