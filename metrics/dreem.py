"""DREEM: a representation-based similarity of a candidate and its references.

After Chen & Guo, "Representation based translation evaluation metrics" (ACL 2015): the candidate and the
reference are each represented several ways, the cosine similarity of each representation is taken, and a
weighted sum of the cosines is multiplied by a length penalty. The representations here:

* ``bow`` — one-hot bag of words (token counts after PTB tokenisation);
* ``glove`` — the average of the words' GloVe 6B-50d vectors (:mod:`muttlab.resources.glove`);
* ``sent`` — a sentence encoding. The paper uses a recursive auto-encoder; here it is a SIF-weighted
  GloVe average (Arora, Liang & Ma, ICLR 2017, eq. of §3 with a = 1e-3), word probabilities from
  Zipf's law over the GloVe vocabulary's frequency rank. The common-component removal of SIF is left
  out because it would make a sentence's vector depend on the batch.
* ``reval`` — a learned sentence encoding: the ReVal Tree-LSTM's root state (:mod:`muttlab.metrics.reval`, the
  installed ``reval-treelstm`` model). Computed only when its weight is above zero, so DREEM without it
  needs neither torch nor a trained model; with it, the checkpoint's digest is part of the signature.

With several references the best score is kept. The weights and the length-penalty exponent are tuned
(``muttlab multilevel tune``) and read from ``dreem.json`` in the model folder, falling back to the copy
bundled in ``data/models``.
"""
from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Mapping, Sequence

import numpy as np

from muttlab.metrics.base import Metric, MetricError, MetricUnavailable
from muttlab.metrics.reval.installed import checked_installed, installed_entry
from muttlab.metrics.tokenize import ptb_tokenize
from muttlab.resources.bundled import models_dir

COMPONENTS = ("bow", "glove", "sent", "reval")
REVAL_ENCODER = "treelstm"
DEFAULT_LENGTH_PENALTY = 1.0
MODEL_FILE = "dreem.json"
BUNDLED_MODELS = models_dir()
SIF_A = 1e-3
_EULER_GAMMA = 0.5772156649


def find_model_file(model_dir: Path | None, filename: str, metric: str) -> Path:
    """The tuned-parameter file: the one a maintainer installed in the model folder, else the bundled one.

    A file merely lying in the model folder is not used: tuning writes there, and only installing one (a
    maintainer's recorded action, ``muttlab models install``) changes what the metric computes. Raises
    MetricUnavailable naming the file when there is none: untuned defaults would give numbers under the
    metric's name that no tuning produced.
    """
    found = installed_entry(Path(filename).stem, model_dir)
    if found is not None:
        return found[0]
    if (BUNDLED_MODELS / filename).is_file():
        return BUNDLED_MODELS / filename
    raise MetricUnavailable(f"{metric}: tuned parameters {filename} not found in {BUNDLED_MODELS}; reinstall "
                            "muttlab (the package ships them)")


def load_model_file(model_dir: Path | None, filename: str, metric: str,
                    required: Sequence[str]) -> tuple[dict, str, str | None]:
    """The tuned parameters in use (:func:`find_model_file`), where they came from, and the installed file's
    id (None for the bundled file): the id is computed from the very bytes parsed, and must be the id the
    file was installed under, so that the id in the signature names the numbers."""
    path = find_model_file(model_dir, filename, metric)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise MetricUnavailable(f"{metric}: cannot read tuned parameters {path} ({exc.strerror or exc}); "
                                f"`muttlab models uninstall {Path(filename).stem}` goes back to the bundled ones")
    ident = None
    if path != BUNDLED_MODELS / filename:
        ident = checked_installed(Path(filename).stem, model_dir, raw)[1]
    return read_model_file(path, required, raw), str(path), ident


def read_model_file(path: Path, required: Sequence[str], raw: bytes | None = None) -> dict:
    """A tuned-parameter JSON object with the required keys, or a MetricError naming the file and the fix."""
    try:
        data = json.loads(raw if raw is not None else Path(path).read_bytes())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise MetricError(f"{path}: cannot read tuned parameters ({exc}); re-run `muttlab multilevel tune` "
                          "and install the result, or uninstall it to use the bundled one") from None
    missing = [k for k in required if not isinstance(data, dict) or k not in data]
    if missing:
        raise MetricError(f"{path}: tuned parameters lack {', '.join(missing)}; re-run `muttlab multilevel tune`")
    return data


def check_weights(weights: Mapping[str, float]) -> dict[str, float]:
    """Weights of the representations, validated (known names, non-negative, not all zero); a missing
    one weighs 0 (files tuned before ``reval`` existed have three)."""
    unknown = set(weights) - set(COMPONENTS)
    if unknown:
        raise MetricError(f"DREEM: unknown representation(s) {sorted(unknown)}; use {', '.join(COMPONENTS)}")
    out = {k: float(weights.get(k, 0.0)) for k in COMPONENTS}
    if any(v < 0 for v in out.values()) or sum(out.values()) <= 0:
        raise MetricError(f"DREEM: weights must be non-negative and not all zero, got {out}")
    return out


@dataclass(frozen=True)
class _Sentence:
    counts: Counter
    length: int
    mean: np.ndarray  # averaged GloVe; zeros when no word is known
    sif: np.ndarray


class _Encoder:
    """Per-process sentence representations, cached by sentence text."""

    def __init__(self):
        self._kv = None
        self._norm = 0.0
        self._cache: dict[str, _Sentence] = {}

    def _vectors(self):
        if self._kv is None:
            from muttlab.resources.glove import VectorsMissing, load_glove
            try:
                self._kv = load_glove()
            except VectorsMissing as exc:
                raise MetricUnavailable(str(exc)) from None
            # Zipf: p(rank r) = 1 / (r * H_N), H_N ~ ln N + gamma.
            self._norm = math.log(len(self._kv.index_to_key)) + _EULER_GAMMA
        return self._kv

    def encode(self, sentence: str) -> _Sentence:
        found = self._cache.get(sentence)
        if found is not None:
            return found
        kv = self._vectors()
        tokens = ptb_tokenize(sentence).split()
        index = [kv.key_to_index[t] for t in tokens if t in kv.key_to_index]
        if index:
            vecs = kv.vectors[index].astype(np.float64)
            prob = 1.0 / ((np.asarray(index, dtype=np.float64) + 1.0) * self._norm)
            sif_w = SIF_A / (SIF_A + prob)
            mean = vecs.mean(axis=0)
            sif = (sif_w[:, None] * vecs).sum(axis=0) / len(tokens)
        else:
            mean = sif = np.zeros(kv.vector_size)
        found = _Sentence(Counter(tokens), len(tokens), mean, sif)
        if len(self._cache) > 200_000:
            self._cache.clear()
        self._cache[sentence] = found
        return found


_ENCODER = _Encoder()


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    return float(a @ b / (na * nb)) if na > 0 and nb > 0 else 0.0


def _bow_cosine(a: Counter, b: Counter) -> float:
    dot = sum(v * b[k] for k, v in a.items() if k in b)
    if dot == 0:
        return 0.0
    return dot / math.sqrt(sum(v * v for v in a.values()) * sum(v * v for v in b.values()))


def length_penalty(cand_len: np.ndarray, ref_len: np.ndarray) -> np.ndarray:
    """exp(1 − longer/shorter): 1 for equal lengths, falling as they differ, in either direction.

    BLEU's brevity penalty (Papineni et al. 2002, §2.2.2) applied symmetrically, as DREEM penalises both
    too-short and too-long candidates.
    """
    cand_len = np.maximum(np.asarray(cand_len, dtype=np.float64), 1.0)
    ref_len = np.maximum(np.asarray(ref_len, dtype=np.float64), 1.0)
    return np.exp(1.0 - np.maximum(cand_len, ref_len) / np.minimum(cand_len, ref_len))


@dataclass(frozen=True)
class PairComponents:
    """Per (candidate, reference) pair: the cosine of each computed representation and the length penalty."""

    cosines: dict[str, np.ndarray]
    length_penalty: np.ndarray

    def combine(self, weights: Mapping[str, float], lp_exponent: float) -> np.ndarray:
        """LP^p · Σ_k w_k·cos_k / Σ_k w_k: DREEM's score of each pair."""
        weights = check_weights(weights)
        missing = [k for k in COMPONENTS if weights[k] > 0 and k not in self.cosines]
        if missing:
            raise ValueError(f"representation(s) {missing} are weighted but were not computed")
        total = sum(weights.values())
        mixed = sum(weights[k] * self.cosines[k] for k in COMPONENTS if weights[k] > 0) / total
        return mixed * self.length_penalty ** lp_exponent


def reval_encoder(model_dir: Path | None):
    """The ReVal Tree-LSTM metric whose sentence encodings are DREEM's ``reval`` representation: one per
    model folder and checkpoint in use, per process, so its encodings are kept across calls and installing
    another model gives a new encoder (with the new model's id) instead of changing this one."""
    from muttlab.metrics.reval.metric import ReVal, find_checkpoint

    path = find_checkpoint(REVAL_ENCODER, model_dir)
    key = (str(model_dir) if model_dir is not None else None, str(path))
    if key not in _REVAL:
        _REVAL[key] = ReVal(model=REVAL_ENCODER, model_dir=model_dir, checkpoint=path)
    return _REVAL[key]


_REVAL: dict[tuple[str | None, str], Metric] = {}


def pinned_encoder(metric) -> Metric:
    """``metric``'s ReVal encoder, chosen at first use and kept: its signature and its scores then come
    from the same model even if a maintainer installs another one meanwhile."""
    if getattr(metric, "_reval", None) is None:
        metric._reval = reval_encoder(metric.model_dir)
    return metric._reval


def pair_components(candidates: Sequence[str], references: Sequence[str],
                    components: Sequence[str] = ("bow", "glove", "sent"),
                    model_dir: Path | None = None, encoder: Metric | None = None) -> PairComponents:
    """The cosines of the named representations and the length penalty of each (candidate, reference) pair.

    ``reval`` (not computed by default) encodes with ``encoder``, else the ReVal model found from ``model_dir``.
    """
    if len(candidates) != len(references):
        raise ValueError(f"{len(candidates)} candidates but {len(references)} references")
    unknown = set(components) - set(COMPONENTS)
    if unknown:
        raise ValueError(f"unknown representation(s) {sorted(unknown)}; use {', '.join(COMPONENTS)}")
    pairs: dict[tuple[str, str], int] = {}
    which = np.fromiter((pairs.setdefault(p, len(pairs)) for p in zip(candidates, references)), dtype=np.int64,
                        count=len(candidates))
    if len(pairs) < len(candidates):
        # A pair's components are a function of the pair: compute each distinct pair once (the reference
        # pools of 5/10/20 references repeat the same pairs).
        once = pair_components([c for c, _ in pairs], [r for _, r in pairs], components, model_dir, encoder)
        return PairComponents({k: v[which] for k, v in once.cosines.items()}, once.length_penalty[which])
    cands = [_ENCODER.encode(s) for s in candidates]
    refs = [_ENCODER.encode(s) for s in references]
    cosines = {}
    if "bow" in components:
        cosines["bow"] = np.array([_bow_cosine(c.counts, r.counts) for c, r in zip(cands, refs)])
    if "glove" in components:
        cosines["glove"] = np.array([_cosine(c.mean, r.mean) for c, r in zip(cands, refs)])
    if "sent" in components:
        cosines["sent"] = np.array([_cosine(c.sif, r.sif) for c, r in zip(cands, refs)])
    if "reval" in components:
        # A blank sentence has no tree; like the other representations of an empty text, its cosine is 0
        # (three MUTT reference pools of the study hold a blank reference).
        full = np.array([bool(c.strip() and r.strip()) for c, r in zip(candidates, references)], dtype=bool)
        keep = np.flatnonzero(full)
        cosines["reval"] = np.zeros(len(candidates))
        cosines["reval"][keep] = _encoding_cosines(encoder or reval_encoder(model_dir),
                                                   [candidates[i] for i in keep], [references[i] for i in keep])
    lp = length_penalty([c.length for c in cands], [r.length for r in refs])
    # Rounding can put the cosine of identical vectors a hair above 1.
    return PairComponents({k: np.clip(v, -1.0, 1.0) for k, v in cosines.items()}, lp)


def _encoding_cosines(encoder: Metric, first: list[str], second: list[str], block: int = 4096) -> np.ndarray:
    """Cosine of the ReVal encodings of each pair (first[i], second[i]), 0 for a zero vector.

    Each distinct sentence is encoded once and the pairs are taken in blocks, so memory grows with the
    sentences, not the pairs; every dot product and norm is one row's own reduction, so a pair's cosine
    has the same bits in any batch.
    """
    sentences = list(dict.fromkeys(first + second))
    index = {s: k for k, s in enumerate(sentences)}
    encoded = encoder.encodings(sentences)
    norms = np.linalg.norm(encoded, axis=1) if len(sentences) else np.zeros(0)
    a = np.fromiter((index[s] for s in first), dtype=np.int64, count=len(first))
    b = np.fromiter((index[s] for s in second), dtype=np.int64, count=len(second))
    out = np.zeros(len(first))
    for k in range(0, len(first), block):
        i, j = a[k:k + block], b[k:k + block]
        dot = (encoded[i] * encoded[j]).sum(axis=1)
        scale = norms[i] * norms[j]
        out[k:k + block] = np.divide(dot, scale, out=np.zeros(len(i)), where=scale > 0)
    return out


def weighted(weights: Mapping[str, float]) -> tuple[str, ...]:
    """The representations with a weight above zero: the ones worth computing."""
    return tuple(k for k in COMPONENTS if weights.get(k, 0.0) > 0)


def flatten(candidates: Sequence[str], references: Sequence[Sequence[str]]) -> tuple[list[str], list[str], np.ndarray]:
    """Every (candidate, reference) pair, and for each pair the index of its candidate."""
    cands, refs, owner = [], [], []
    for i, (cand, rs) in enumerate(zip(candidates, references)):
        for ref in rs:
            cands.append(cand)
            refs.append(ref)
            owner.append(i)
    return cands, refs, np.asarray(owner, dtype=np.int64)


def best_per_candidate(pair_scores: np.ndarray, owner: np.ndarray, n: int) -> np.ndarray:
    """The highest pair score of each candidate (several references: the best one counts)."""
    out = np.full(n, -np.inf)
    np.maximum.at(out, owner, pair_scores)
    return out


class Dreem(Metric):
    """DREEM with tuned representation weights (see the module docstring)."""

    name: ClassVar[str] = "DREEM"
    # 2: ReVal encodings no longer depend on the batch; 3: ReVal encodings from its float64 kernels (ReVal v3)
    version: ClassVar[str] = "3"
    requires: ClassVar[tuple[str, ...]] = ("glove-6B-50d", "a trained ReVal Tree-LSTM if reval is weighted")
    languages = ("en",)  # English resources (see muttlab.metrics.base.Metric.languages)
    language_reason = "English GloVe vectors, SIF weights and ReVal sentence vectors"
    description: ClassVar[str] = ("cosines of bag-of-words, averaged GloVe, SIF and ReVal sentence vectors, "
                                  "weighted, times a length penalty; best reference")

    def __init__(self, weights: Mapping[str, float] | None = None, length_penalty: float | None = None,
                 model_dir: Path | None = None):
        self.model_dir = Path(model_dir) if model_dir is not None else None
        self._weights = check_weights(weights) if weights is not None else None
        self._lp = float(length_penalty) if length_penalty is not None else None
        self._source = "given" if weights is not None else None
        self._tuned_id: str | None = None  # the installed tuned file's id; None for the bundled or given ones
        if weights is not None or length_penalty is not None:
            # The runner rebuilds parallel metrics by registry name in its workers, which would read the
            # tuned file instead of these explicit parameters.
            self.parallel = False

    def _load(self) -> None:
        if self._weights is not None and self._lp is not None:
            return
        data, source, ident = load_model_file(self.model_dir, MODEL_FILE, self.name, ("weights", "length_penalty"))
        self._tuned_id = ident
        if self._weights is None:
            self._weights = check_weights(data["weights"])
            self._source = source
        if self._lp is None:
            self._lp = float(data["length_penalty"])

    @property
    def weights(self) -> dict[str, float]:
        self._load()
        return dict(self._weights)

    @property
    def lp_exponent(self) -> float:
        self._load()
        return self._lp

    def params(self) -> dict[str, object]:
        w = self.weights
        out = {"w_bow": round(w["bow"], 4), "w_glove": round(w["glove"], 4), "w_sent": round(w["sent"], 4),
               "w_reval": round(w["reval"], 4), "lp": round(self.lp_exponent, 4), "sent": "sif"}
        if w["reval"] > 0:
            out["reval"] = pinned_encoder(self).model_id
        if self._tuned_id:
            out["tuned"] = self._tuned_id
        return out

    def check_available(self) -> None:
        check_representations(self.weights, self.model_dir)

    def _score(self, candidates: list[str], references: list[list[str]]) -> np.ndarray:
        cands, refs, owner = flatten(candidates, references)
        encoder = pinned_encoder(self) if self.weights["reval"] > 0 else None
        comps = pair_components(cands, refs, weighted(self.weights), self.model_dir, encoder)
        return best_per_candidate(comps.combine(self.weights, self.lp_exponent), owner, len(candidates))


def check_representations(weights: Mapping[str, float], model_dir: Path | None) -> None:
    """MetricUnavailable unless GloVe (and, when ``reval`` is weighted, a trained ReVal model) is there."""
    from muttlab.resources.glove import VectorsMissing, glove_root
    try:
        glove_root()
    except VectorsMissing as exc:
        raise MetricUnavailable(str(exc)) from None
    if weights.get("reval", 0.0) > 0:
        reval_encoder(model_dir).check_available()
