"""ReVal: target distribution, level-by-level tree batching, training, checkpoints, the metric."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from muttlab.settings import Settings
from muttlab.engine.sources import load_sick
from muttlab.metrics.base import MetricError, MetricUnavailable
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
    # a blank reference (the study's MUTT pools have three) is skipped; only blank ones are an error
    with_blank = metric.score(candidates[:3], [[r[0], "   "] for r in references[:3]])
    assert np.allclose(with_blank, singles[0][:3])
    with pytest.raises(MetricError, match="every reference of candidate 0 is empty"):
        metric.score(["A dog runs"], [["  "]])


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
