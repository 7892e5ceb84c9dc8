"""METEOR 1.5's English paraphrase table as a stand-in for TERp's phrase table (``phrases.db``).

TERp-A's phrase table (pivot paraphrases, Snover et al. 2009 §3.3) is not distributed with this project;
METEOR 1.5's ``paraphrase-en.gz`` (Denkowski & Lavie 2011, also pivot paraphrases) ships in pycocoevalcap. Its
5.3 million entries are line triples (probability, phrase, paraphrase); read as TERp reads its table, the phrase
is the reference side and the paraphrase the hypothesis side, the probability p(paraphrase | phrase).

Keeping the strings would take gigabytes, so the table is kept as three sorted arrays: a 64-bit hash of the
reference phrase, a hash of the hypothesis phrase and the probability. Building them reads the whole table once
(about a minute) and caches them as ``.npy`` files; later loads take well under a second. A lookup finds the
entries whose reference phrase occurs in the reference and whose hypothesis phrase occurs, contiguously, in the
hypothesis (TERp's own filter only asks that every word of it occurs; a phrase that becomes contiguous only
after a shift is missed).
"""
from __future__ import annotations

import gzip
import hashlib
import itertools
import os
import tempfile
import threading
from pathlib import Path
from typing import Sequence

import numpy as np


def phrase_hash(text: str) -> int:
    """A stable signed 64-bit hash of a phrase (blake2b), the same in every process."""
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little", signed=True)


class PhraseTable:
    """(reference phrase, hypothesis phrase, probability) entries, looked up by hash."""

    FORMAT = "terp-1"

    def __init__(self, path, cache_dir=None):
        self.path = Path(path)
        stat = self.path.stat()
        folder = Path(cache_dir) if cache_dir else Path(tempfile.gettempdir()) / "muttlab-paraphrase"
        stem = f"paraphrase-{stat.st_size}-{int(stat.st_mtime)}-{self.FORMAT}"
        files = [folder / f"{stem}.{part}.npy" for part in ("src", "tgt", "prob", "len")]
        if all(f.is_file() for f in files):
            self._src, self._tgt, self._prob, self._len = (np.load(f) for f in files)
        else:
            self._src, self._tgt, self._prob, self._len = self._build()
            folder.mkdir(parents=True, exist_ok=True)
            for arr, target in zip((self._src, self._tgt, self._prob, self._len), files):
                tmp = target.with_name(f"{target.stem}.{os.getpid()}.tmp.npy")
                np.save(tmp, arr)
                os.replace(tmp, target)
        self.max_words = int(self._len.max()) if len(self._len) else 0

    def _build(self):
        src, tgt, prob, lens = [], [], [], []
        with gzip.open(self.path, "rt", encoding="utf-8", errors="replace") as fh:
            while True:
                chunk = list(itertools.islice(fh, 3 * 200_000))
                if not chunk:
                    break
                for p, a, b in zip(chunk[0::3], chunk[1::3], chunk[2::3]):
                    a, b = a.strip(), b.strip()
                    if a == b:
                        continue
                    src.append(phrase_hash(a))
                    tgt.append(phrase_hash(b))
                    prob.append(float(p))
                    lens.append(max(a.count(" "), b.count(" ")) + 1)
        src_a, tgt_a = np.array(src, dtype=np.int64), np.array(tgt, dtype=np.int64)
        order = np.lexsort((tgt_a, src_a))
        return src_a[order], tgt_a[order], np.array(prob)[order], np.array(lens, dtype=np.int16)[order]

    def __len__(self) -> int:
        return len(self._src)

    def matches(self, hyp: Sequence[str], ref: Sequence[str]):
        """Entries usable between two token sequences, as tuples
        (reference start, reference length, hypothesis length, hypothesis words, reference words, probability)."""
        limit = self.max_words
        hyp_grams: dict[int, tuple[str, ...]] = {}
        for n in range(1, min(limit, len(hyp)) + 1):
            for i in range(len(hyp) - n + 1):
                words = tuple(hyp[i:i + n])
                hyp_grams.setdefault(phrase_hash(" ".join(words)), words)
        out = []
        for n in range(1, min(limit, len(ref)) + 1):
            for i in range(len(ref) - n + 1):
                words = tuple(ref[i:i + n])
                h = phrase_hash(" ".join(words))
                lo = np.searchsorted(self._src, h, side="left")
                hi = np.searchsorted(self._src, h, side="right")
                for k in range(lo, hi):
                    hyp_words = hyp_grams.get(int(self._tgt[k]))
                    if hyp_words is not None:
                        out.append((i, n, len(hyp_words), hyp_words, words, float(self._prob[k])))
        return out


_TABLES: dict[str, PhraseTable] = {}
_TABLES_LOCK = threading.Lock()


def load_phrase_table(path, cache_dir=None) -> PhraseTable:
    """The paraphrase table at ``path``, loaded once per process (arrays cached in ``cache_dir``)."""
    with _TABLES_LOCK:
        key = str(path)
        if key not in _TABLES:
            _TABLES[key] = PhraseTable(path, cache_dir)
        return _TABLES[key]
