"""Word vectors trained on the loaded corpus, for W2V-AVG's ``vectors="word2vec-corpus"``.

Sentences come from SICK (both sentences of every pair) and the Flickr8k captions, tokenised as the metric
tokenises them (PTB, lowercase, no punctuation). The MUTT trial pools are left out: vectors trained on the
corruptions they are then tested on would learn from the test. gensim's word2vec (skip-gram, Mikolov et al.
2013) is trained with a fixed seed and one worker thread (so a retrain gives the same vectors) and the
KeyedVectors are saved in the settings' model folder as ``word2vec-corpus.kv``. Training changes nothing
W2V-AVG-corpus computes: it uses the vectors a maintainer installed by their id (``muttlab models install
<id>``, :mod:`muttlab.learned.models`), which copies them, so the next training run replaces only its own
output.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from muttlab.errors import MuttlabError
from muttlab.engine.runner import writable_model_dir
from muttlab.settings import Settings
from muttlab.sources import load_flickr_captions, load_sick
from muttlab.metrics.tokenize import ptb_tokenize
from muttlab.metrics.reval.installed import file_id
from muttlab.metrics.w2v import CORPUS_FILE

DEFAULT_DIM = 100
DEFAULT_WINDOW = 5
DEFAULT_MIN_COUNT = 2
DEFAULT_EPOCHS = 10


@dataclass(frozen=True)
class TrainedVectors:
    """What ``muttlab vectors train`` produced."""

    path: Path
    id: str  # the model id to install (``muttlab models install <id>``)
    sentences: int
    tokens: int
    vocabulary: int
    dim: int
    seconds: float


def corpus_vectors_path(settings: Settings) -> Path:
    """Where training writes the corpus vectors (installing them is another step)."""
    return writable_model_dir(settings) / CORPUS_FILE


def corpus_sentences(settings: Settings) -> list[list[str]]:
    """Distinct tokenised sentences of SICK and Flickr8k (needs the real data dir)."""
    if settings.data_dir is None:
        raise MuttlabError("training word vectors needs the real datasets; set MUTTLAB_DATA_DIR or pass --data-dir")
    texts: dict[str, None] = {}
    for pair in load_sick(settings):
        texts.setdefault(pair.sentence_a, None)
        texts.setdefault(pair.sentence_b, None)
    for captions in load_flickr_captions(settings).values():
        for caption in captions:
            texts.setdefault(caption, None)
    sentences = [ptb_tokenize(t).split() for t in texts]
    return [s for s in sentences if s]


def train_corpus_vectors(settings: Settings, dim: int = DEFAULT_DIM, window: int = DEFAULT_WINDOW,
                         min_count: int = DEFAULT_MIN_COUNT, epochs: int = DEFAULT_EPOCHS) -> TrainedVectors:
    """Train word2vec on :func:`corpus_sentences` and save its KeyedVectors; returns where and how big."""
    from gensim.models import Word2Vec

    if dim < 1 or window < 1 or min_count < 1 or epochs < 1:
        raise MuttlabError("--dim, --window, --min-count and --epochs must be positive integers")
    start = time.perf_counter()
    sentences = corpus_sentences(settings)
    model = Word2Vec(sentences=sentences, vector_size=dim, window=window, min_count=min_count, sg=1,
                     epochs=epochs, workers=1, seed=settings.seed)
    path = corpus_vectors_path(settings)
    tmp = path.with_name(path.name + ".tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        model.wv.save(str(tmp))
        for extra in path.parent.glob(tmp.name + "*"):
            # gensim may write big arrays beside the main file (name + ".vectors.npy").
            extra.replace(path.parent / extra.name.replace(tmp.name, path.name, 1))
    except OSError as exc:
        raise MuttlabError(f"cannot save the vectors in {path.parent}: {exc.strerror or exc}; point "
                           "--cache-dir / MUTTLAB_CACHE_DIR at a writable folder") from None
    return TrainedVectors(path=path, id=file_id(path), sentences=len(sentences), tokens=sum(len(s) for s in sentences),
                          vocabulary=len(model.wv), dim=dim, seconds=time.perf_counter() - start)
