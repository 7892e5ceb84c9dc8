"""ReVal: target distribution, level-by-level tree batching, training, checkpoints, the metric."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from muttlab.settings import Settings
from muttlab.sources import load_sick
from muttlab.metrics.base import MetricUnavailable
from muttlab.metrics.reval import metric as reval_metric
from muttlab.metrics.reval.metric import ReVal, checkpoint_name
from muttlab.metrics.reval.model import (ChildSumTreeLSTM, ModelConfig, ReValEnsemble, ReValModel, WordVectors,
                                 load_checkpoint, save_checkpoint, target_distribution)
from muttlab.learned.reval_training import Inputs, Pair, TrainConfig, mean_loss, predict, train
from muttlab.metrics.reval.trees import DepTree, TreeBatch, parse_trees

N_TRAIN, N_DEV = 250, 60


@pytest.fixture(scope="module")
def sick_subset(data_dir):
    """The first SICK TRAIN and TRIAL pairs, as training examples."""
    pairs = load_sick(Settings(data_dir=data_dir))
    train_pairs = [Pair(p.sentence_a, p.sentence_b, p.relatedness) for p in pairs if p.split == "TRAIN"][:N_TRAIN]
    dev_pairs = [Pair(p.sentence_a, p.sentence_b, p.relatedness) for p in pairs if p.split == "TRIAL"][:N_DEV]
    return train_pairs, dev_pairs


@pytest.fixture(scope="module")
def inputs(sick_subset):
    from muttlab.resources.glove import DIM, load_glove

    sentences = list(dict.fromkeys(s for pairs in sick_subset for p in pairs for s in (p.sentence_a, p.sentence_b)))
    return Inputs(dict(zip(sentences, parse_trees(sentences))), WordVectors(load_glove(), DIM))


# --------------------------------------------------------------------------- target distribution

@pytest.mark.parametrize("score, expected", [
    # Tai et al. (2015, §4.2): p_i = y - floor(y) for i = floor(y) + 1, floor(y) - y + 1 for i = floor(y).
    (3.6, [0, 0, 0.4, 0.6, 0]),
    (1.0, [1, 0, 0, 0, 0]),
    (5.0, [0, 0, 0, 0, 1]),
    (4.5, [0, 0, 0, 0.5, 0.5]),
    (2.2, [0, 0.8, 0.2, 0, 0]),
])
def test_target_distribution_follows_tai_et_al(score, expected):
    target = target_distribution(torch.tensor([score]))
    assert target[0].tolist() == pytest.approx(expected, abs=1e-6)
    # its expectation r^T p is the score itself
    assert float(target[0] @ torch.arange(1.0, 6.0)) == pytest.approx(score, abs=1e-5)


# --------------------------------------------------------------------------- trees and batching

def test_spacy_trees_cover_every_word_under_one_root(inputs):
    for sentence, tree in list(inputs.trees.items())[:50]:
        assert tree.heads.count(-1) == 1
        # the tokens cover the sentence: no word dropped, none invented
        assert "".join(tree.tokens) == sentence.lower().replace(" ", "")
        heights = tree.heights()
        assert heights[tree.root] == max(heights)


def test_dependency_heights_and_levels():
    # "a man plays guitar": plays is the root, man <- a, guitar leaf
    tree = DepTree(("a", "man", "plays", "guitar"), (1, 2, -1, 2))
    assert tree.heights() == [0, 1, 2, 0]
    batch = TreeBatch.build([tree, DepTree(("run",), (-1,))])
    assert [lv.size for lv in batch.levels] == [3, 1, 1]
    for level in batch.levels:
        assert bool((level.child_index < level.start).all())
    assert [batch.order[r] for r in batch.roots.tolist()] == [(0, 2), (1, 0)]


def test_bad_trees_are_rejected():
    with pytest.raises(ValueError, match="exactly one root"):
        DepTree(("a", "b"), (-1, -1))
    with pytest.raises(ValueError, match="one tree"):
        DepTree(("a", "b", "c"), (-1, 2, 1)).heights()


def _node_at_a_time(cell: ChildSumTreeLSTM, tree: DepTree, x: torch.Tensor) -> torch.Tensor:
    """Reference: Tai et al. (2015) eqs. 2-8 evaluated recursively, one node per call."""
    kids = tree.children()

    def node(j):
        states = [node(k) for k in kids[j]]
        h_sum = sum((h for h, _ in states), torch.zeros(cell.memory))
        iou = cell.w_iou(x[j]) + cell.u_iou(h_sum)
        i, o, u = iou.chunk(3)
        c = torch.sigmoid(i) * torch.tanh(u)
        for h_k, c_k in states:
            c = c + torch.sigmoid(cell.w_f(x[j]) + cell.u_f(h_k)) * c_k
        return torch.sigmoid(o) * torch.tanh(c), c

    return node(tree.root)[0]


def test_level_batching_matches_node_at_a_time(inputs):
    torch.manual_seed(0)
    model = ReValModel(ModelConfig(model="treelstm"))
    sentences = list(inputs.trees)[:12]
    trees, vectors = inputs(sentences)
    assert max(max(t.heights()) for t in trees) >= 3  # real, nested trees
    with torch.no_grad():
        batched = model.encode(trees, vectors)
        reference = torch.stack([_node_at_a_time(model.encoder, t, v) for t, v in zip(trees, vectors)])
    assert torch.allclose(batched, reference, atol=1e-6)


def test_level_batching_gradients_match_node_at_a_time(inputs):
    torch.manual_seed(1)
    model = ReValModel(ModelConfig(model="treelstm"))
    trees, vectors = inputs(list(inputs.trees)[:6])
    model.encode(trees, vectors).sum().backward()
    batched = [p.grad.clone() for p in model.encoder.parameters()]
    model.zero_grad()
    torch.stack([_node_at_a_time(model.encoder, t, v) for t, v in zip(trees, vectors)]).sum().backward()
    for got, want in zip(batched, [p.grad for p in model.encoder.parameters()]):
        assert torch.allclose(got, want, atol=1e-5)


# --------------------------------------------------------------------------- training

@pytest.fixture(scope="module", params=["treelstm", "lstm"])
def one_epoch(request, sick_subset, inputs):
    train_pairs, dev_pairs = sick_subset
    torch.manual_seed(5)
    before = mean_loss(ReValModel(ModelConfig(model=request.param)), train_pairs, inputs)
    result = train(train_pairs, dev_pairs, inputs, ModelConfig(model=request.param),
                   TrainConfig(epochs=1, seed=5))
    return request.param, before, result


def test_one_epoch_lowers_the_loss(one_epoch, sick_subset, inputs):
    _, before, result = one_epoch
    after = mean_loss(result.model, sick_subset[0], inputs)
    assert after < before


def test_predictions_lie_in_one_to_five(one_epoch, sick_subset, inputs):
    _, _, result = one_epoch
    pred = predict(result.model, [(p.sentence_a, p.sentence_b) for p in sick_subset[1]], inputs)
    assert pred.shape == (N_DEV,)
    assert np.all(pred >= 1.0) and np.all(pred <= 5.0)
    assert result.history[0].dev_pearson == pytest.approx(
        float(np.corrcoef(pred, [p.score for p in sick_subset[1]])[0, 1]), abs=1e-6)


def test_training_is_seeded(sick_subset, inputs):
    train_pairs = sick_subset[0][:50]
    runs = [train(train_pairs, [], inputs, ModelConfig(model="lstm"), TrainConfig(epochs=1, seed=3))
            for _ in range(2)]
    for a, b in zip(runs[0].model.parameters(), runs[1].model.parameters()):
        assert torch.equal(a, b)


def test_checkpoint_round_trip(one_epoch, sick_subset, inputs, tmp_path):
    name, _, result = one_epoch
    path = tmp_path / checkpoint_name(name)
    save_checkpoint(result.model, path, {"note": "test"})
    loaded = load_checkpoint(path)
    pairs = [(p.sentence_a, p.sentence_b) for p in sick_subset[1]]
    assert np.allclose(predict(loaded, pairs, inputs), predict(result.model, pairs, inputs), atol=1e-6)
    with pytest.raises(ValueError, match="not a"):
        (tmp_path / "junk.pt").write_bytes(b"junk")
        load_checkpoint(tmp_path / "junk.pt")


def test_format_1_checkpoints_still_load(one_epoch, sick_subset, inputs, tmp_path):
    name, _, result = one_epoch
    path = tmp_path / "old.pt"
    torch.save({"format": 1, "config": result.model.config.to_dict(), "state_dict": result.model.state_dict()}, path)
    pairs = [(p.sentence_a, p.sentence_b) for p in sick_subset[1]]
    assert np.array_equal(predict(load_checkpoint(path), pairs, inputs), predict(result.model, pairs, inputs))


@pytest.fixture(scope="module")
def ensemble(one_epoch, sick_subset, inputs):
    """The one-epoch model plus a second one trained with another seed, as an ensemble."""
    name, _, result = one_epoch
    other = train(sick_subset[0][:100], [], inputs, ModelConfig(model=name), TrainConfig(epochs=1, seed=11)).model
    return name, [result.model, other], ReValEnsemble([result.model, other])


def test_ensemble_predicts_the_mean_of_its_members(ensemble, sick_subset, inputs, tmp_path):
    _, members, net = ensemble
    pairs = [(p.sentence_a, p.sentence_b) for p in sick_subset[1]]
    each = [predict(m, pairs, inputs) for m in members]
    assert not np.allclose(each[0], each[1], atol=1e-3)  # two different models, or the test proves nothing
    assert np.allclose(predict(net, pairs, inputs), np.mean(each, axis=0), atol=1e-5)
    save_checkpoint(net, tmp_path / "ensemble.pt", {"note": "test"})
    loaded = load_checkpoint(tmp_path / "ensemble.pt")
    assert isinstance(loaded, ReValEnsemble) and len(loaded.members) == 2
    assert np.allclose(predict(loaded, pairs, inputs), predict(net, pairs, inputs), atol=1e-6)


def test_ensemble_members_must_share_an_architecture():
    with pytest.raises(ValueError, match="one architecture"):
        ReValEnsemble([ReValModel(ModelConfig(model="lstm")), ReValModel(ModelConfig(model="treelstm"))])
    with pytest.raises(ValueError, match="at least one"):
        ReValEnsemble([])


# --------------------------------------------------------------------------- the metric

def test_metric_without_model_says_how_to_train(tmp_path, monkeypatch):
    monkeypatch.setattr(reval_metric, "PUBLISHED_DIR", tmp_path / "none")
    metric = ReVal(model="treelstm", model_dir=tmp_path)
    with pytest.raises(MetricUnavailable, match="muttlab reval train --model treelstm"):
        metric.check_available()


def test_metric_is_best_similarity_over_references(one_epoch, sick_subset, inputs, tmp_path, monkeypatch):
    name, _, result = one_epoch
    monkeypatch.setattr(reval_metric, "PUBLISHED_DIR", tmp_path / "none")
    save_checkpoint(result.model, tmp_path / checkpoint_name(name))
    metric = ReVal(model=name, checkpoint=tmp_path / checkpoint_name(name))
    metric.check_available()
    dev = sick_subset[1][:20]
    candidates = [p.sentence_b for p in dev]
    references = [[p.sentence_a, dev[(k + 1) % len(dev)].sentence_a] for k, p in enumerate(dev)]
    scores = metric.score(candidates, references)
    assert scores.shape == (20,) and np.all((scores >= 0) & (scores <= 1))
    singles = [metric.score(candidates, [[r[j]] for r in references]) for j in range(2)]
    assert np.allclose(scores, np.maximum(*singles))
    if name == "treelstm":
        # same tokens and trees as training: the metric is (y_hat - 1) / 4 of the trained model
        y_hat = predict(result.model, [(r[0], c) for c, r in zip(candidates, references)], inputs)
        assert np.allclose(singles[0], (y_hat - 1) / 4, atol=1e-5)
    assert f"model:{name}" in metric.signature()
    # a blank reference (the study's MUTT pools have three) is skipped; an item with only blank references,
    # or a blank candidate, is unsupported (NaN: ReVal has no encoding of an empty sentence)
    with_blank = metric.score(candidates[:3], [[r[0], "   "] for r in references[:3]])
    assert np.allclose(with_blank, singles[0][:3])
    mixed = metric.score(["A dog runs", "", candidates[0]], [["  "], [references[0][0]], [references[0][0]]])
    assert np.isnan(mixed[:2]).all() and mixed[2] == pytest.approx(singles[0][0])


def test_metric_scores_with_an_ensemble_checkpoint(ensemble, sick_subset, inputs, tmp_path, monkeypatch):
    name, members, net = ensemble
    monkeypatch.setattr(reval_metric, "PUBLISHED_DIR", tmp_path / "none")
    save_checkpoint(net, tmp_path / checkpoint_name(name))
    dev = sick_subset[1][:20]
    scores = ReVal(model=name, checkpoint=tmp_path / checkpoint_name(name)).score([p.sentence_b for p in dev], [[p.sentence_a] for p in dev])
    if name == "treelstm":
        y_hat = np.mean([predict(m, [(p.sentence_a, p.sentence_b) for p in dev], inputs) for m in members], axis=0)
        assert np.allclose(scores, (y_hat - 1) / 4, atol=1e-5)
    assert scores.shape == (20,) and np.all((scores >= 0) & (scores <= 1))


def test_instances_of_one_checkpoint_share_their_encodings(one_epoch, sick_subset, tmp_path, monkeypatch):
    name, _, result = one_epoch
    monkeypatch.setattr(reval_metric, "PUBLISHED_DIR", tmp_path / "none")
    save_checkpoint(result.model, tmp_path / checkpoint_name(name))
    path = tmp_path / checkpoint_name(name)
    first, second = ReVal(model=name, checkpoint=path), ReVal(model=name, checkpoint=path)
    sentences = [p.sentence_a for p in sick_subset[1][:5]]
    encoded = first.encodings(sentences)
    second._load()
    assert all(s in second._encoded for s in sentences)  # nothing left to encode
    np.testing.assert_array_equal(second.encodings(sentences), encoded)
    first.close()
    second.close()


# --------------------------------------------------------------------------- scoring kernels

@pytest.fixture(scope="module")
def mutt_sentences(data_dir):
    """Distinct sentences of two MUTT experiment sets (originals, corruptions and reference pools)."""
    from muttlab.sources import load_mutt_experiments

    suite = load_mutt_experiments(Settings(data_dir=data_dir))
    trials = suite.of("neg_subj")[:40] + suite.of("passive")[:40]
    return list(dict.fromkeys(s for t in trials for s in (t.original, t.corrupted, *t.refs(5)) if s.strip()))


@pytest.mark.parametrize("model", ["lstm", "treelstm"])
def test_scoring_kernels_equal_the_torch_modules(model, mutt_sentences):
    """The shipped 7-member ensembles: numba encodings and head against the torch forward pass."""
    from muttlab.metrics.reval.inference import Encoder, Head
    from muttlab.metrics.reval.trees import tokenize
    from muttlab.resources.glove import DIM, load_glove

    metric = ReVal(model=model)
    net = metric._load()
    assert len(net.members) == 7
    vectors = WordVectors(load_glove(), DIM)
    sentences = mutt_sentences[:150]
    trees = (parse_trees(sentences) if model == "treelstm"
             else [DepTree(t, tuple(range(-1, len(t) - 1))) for t in tokenize(sentences)])
    with torch.no_grad():
        want = torch.cat([net.encode([t], [vectors.encode(t.tokens)]) for t in trees]).numpy()
        got = Encoder(net, vectors.vector).encode(trees)
        np.testing.assert_allclose(got, want, atol=2e-6)
        a, b = torch.from_numpy(want[:-1]), torch.from_numpy(want[1:])
        y_torch = net.expected_score(net.log_probs(a, b)).numpy()
    k = np.arange(len(trees) - 1)
    np.testing.assert_allclose(Head(net)(got[:-1], got[1:], k, k), y_torch, atol=1e-5)


@pytest.mark.parametrize("model", ["lstm", "treelstm"])
def test_an_encoding_does_not_depend_on_the_other_sentences(model, mutt_sentences):
    """Shared prefixes (LSTM) and subtrees (Tree-LSTM) are reused, which must not change a single bit."""
    metric = ReVal(model=model)
    together = metric.encodings(mutt_sentences)
    for k in (0, 7, len(mutt_sentences) - 1):
        reval_metric._ENCODED.clear()  # a fresh memo: the sentence is encoded by itself
        alone = ReVal(model=model)
        np.testing.assert_array_equal(alone.encodings([mutt_sentences[k]])[0], together[k])
        assert len(alone._encoded) == 1
    reval_metric._ENCODED.clear()
    np.testing.assert_array_equal(ReVal(model=model).encodings(mutt_sentences[::-1])[::-1], together)


def test_parser_only_pipeline_gives_the_full_pipelines_trees(mutt_sentences):
    from muttlab.metrics.reval.trees import tree_from_doc
    from muttlab.resources.spacy_nlp import load_nlp

    full = [tree_from_doc(d) for d in load_nlp().pipe(mutt_sentences)]
    assert full == parse_trees(mutt_sentences)
