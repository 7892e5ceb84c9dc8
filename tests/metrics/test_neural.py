"""BERTScore-F1 and EmbeddingCosine against the libraries themselves (bert-score, sentence-transformers) on a
fixed subset of the MUTT grid, and what float32 noise can and cannot change.

The subset: the first three trials of each MUTT corruption set plus neg_subj #123 (whose corruption, "There is
no man thinking", is where bert-score's padded batches differ), both sides, at 5, 10 and 20 references.
``benchmarks/bench_neural.py`` checks every pair of the grid.
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

from muttlab.corruptions import catalog
from muttlab.engine import verdict
from muttlab.sources import MUTT_REF_COUNTS, load_mutt_experiments
from muttlab.metrics.neural import BertScore, EmbeddingCosine
from muttlab.rules import Rules
from muttlab.settings import Settings

ARTEFACT = "There is no man thinking"


@pytest.fixture(scope="module")
def grid(data_dir):
    """(corruption, refs, originals, corruptions, references) per cell of the subset."""
    suite = load_mutt_experiments(Settings(data_dir=data_dir))
    cells = []
    for name in suite.corruptions():
        trials = suite.of(name)
        chosen = trials[:3] + [t for t in trials[3:] if t.corrupted == ARTEFACT]
        for k in MUTT_REF_COUNTS:
            cells.append((name, k, [t.original for t in chosen], [t.corrupted for t in chosen],
                          [list(t.refs(k)) for t in chosen]))
    return cells


def _pairs(grid):
    candidates, references = [], []
    for _, _, originals, corrupted, refs in grid:
        candidates += originals + corrupted
        references += refs + refs
    return candidates, references


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    """The libraries' reference computations on one thread, as ours encodes: a second OpenMP thread spin-waits for a
    core on a busy machine (metrics/neural.py)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def metrics():
    made = {kind: kind() for kind in (BertScore, EmbeddingCosine)}
    yield made
    for metric in made.values():
        metric.close()


def _bert_score_unpadded(scorer, candidates, references):
    """bert-score's own embedding and greedy matching, each sentence embedded alone and each (candidate,
    reference) matched alone, so that nothing is padded; best F1 over the references."""
    import torch
    from bert_score.utils import get_bert_embedding, greedy_cos_idf

    tokenizer = scorer._tokenizer
    idf = defaultdict(lambda: 1.0, {tokenizer.sep_token_id: 0.0, tokenizer.cls_token_id: 0.0})
    cache = {}

    def embedded(sentence):
        if sentence not in cache:
            cache[sentence] = get_bert_embedding([sentence], scorer._model, tokenizer, idf, device="cpu")
        return [x.clone() for x in cache[sentence]]  # greedy_cos_idf normalises in place

    best = []
    with torch.no_grad():
        for candidate, refs in zip(candidates, references):
            f1 = [greedy_cos_idf(*embedded(ref), *embedded(candidate))[2].item() for ref in refs]
            best.append(max(f1))
    return np.array(best)


def test_bertscore_equals_bert_score_without_padding(grid, metrics):
    candidates, references = _pairs(grid)
    metric = metrics[BertScore]
    ours = metric.score(candidates, references)
    want = _bert_score_unpadded(metric.loaded(), candidates, references)
    np.testing.assert_allclose(ours, want, rtol=0, atol=1e-6)
    # bert-score's batched call pads, and multiplies the similarities by the padding mask: a padded slot
    # scores 0 and beats a token whose best cosine is negative. Only that pair is off.
    _, _, batched = metric.loaded().score(candidates, references, verbose=False)
    off = {candidates[i] for i in np.flatnonzero(np.abs(batched.double().numpy() - want) > 1e-6)}
    assert off == {ARTEFACT}


def test_embedding_cosine_equals_sentence_transformers(grid, metrics):
    candidates, references = _pairs(grid)
    metric = metrics[EmbeddingCosine]
    ours = metric.score(candidates, references)
    model = metric.loaded()
    want = []
    for candidate, refs in zip(candidates, references):
        vectors = model.encode([candidate, *refs], normalize_embeddings=True, convert_to_numpy=True)
        want.append(float((vectors[1:] @ vectors[0]).max()))
    np.testing.assert_allclose(ours, want, rtol=0, atol=1e-6)


def _verdicts(metric, grid, rules):
    scores, verdicts = [], []
    for name, _, originals, corrupted, refs in grid:
        s_orig, s_corr = metric.score(originals, refs), metric.score(corrupted, refs)
        expectation = verdict.EXPECTATION_OF_RULE[catalog.get(name).rule]
        judged = verdict.judge(s_orig, s_corr, expectation, metric.higher_is_better, rules)
        scores += [s_orig, s_corr]
        verdicts.append(judged.passed)
    return np.concatenate(scores), np.concatenate(verdicts)


@pytest.mark.parametrize("kind", [BertScore, EmbeddingCosine])
def test_float32_noise_changes_no_verdict_and_no_score_beyond_the_noise_floor(kind, grid, metrics, monkeypatch):
    """What another CPU's kernels or another batch do to an embedding, done on purpose: every batch's encoder
    output moved by ~1e-7. No verdict changes (ties at the noise floor) and no score moves by the noise floor."""
    clean = metrics[kind]
    rules = Rules().for_metric(kind.noise_floor)  # the default tie rule, raised to the metric's noise floor
    want_scores, want_verdicts = _verdicts(clean, grid, rules)

    rng = np.random.default_rng(7)
    encoded: list[str] = []

    def noisy(self, sentences, ids):
        # Every pass has the same number of rows: a short one is filled with copies of its first sentence.
        assert len(sentences) == self.batch_size
        encoded.extend(dict.fromkeys(sentences))
        entries = [clean._embeddings[s] for s in sentences]
        move = lambda x: x + rng.normal(0.0, 1e-7, x.shape)  # noqa: E731
        return [(move(e[0]), e[1]) if isinstance(e, tuple) else move(e) for e in entries]

    monkeypatch.setattr(kind, "_encode", noisy)
    perturbed = kind()
    scores, verdicts = _verdicts(perturbed, grid, rules)

    assert sorted(encoded) == sorted(set(encoded)), "a sentence was encoded twice"
    assert np.abs(scores - want_scores).max() > 0  # the noise reached the scores
    assert np.abs(scores - want_scores).max() <= kind.noise_floor
    np.testing.assert_array_equal(verdicts, want_verdicts)
