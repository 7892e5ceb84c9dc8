"""ReVal on SICK through the engine and ``muttlab reval``: checkpoint cache, evaluation, scoring, the runner."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from muttlab.access.roles import local_operator
from muttlab.learned import models, reval
from muttlab.cli import main
from muttlab.engine.runner import model_dir, registry_for, score_batches
from muttlab.settings import Settings
from muttlab.metrics.reval import metric as reval_metric
from muttlab.learned.reval_training import TrainConfig

LIMIT = 60  # pairs per split: enough to exercise everything, small enough to train in seconds
OPERATOR = local_operator()


@pytest.fixture(scope="module")
def settings(data_dir, tmp_path_factory):
    return Settings(data_dir=data_dir, cache_dir=tmp_path_factory.mktemp("cache"), workers=1)


@pytest.fixture(autouse=True)
def no_bundled_models(tmp_path, monkeypatch):
    # Only models trained here count; the ones shipped in data/models must not hide a missing checkpoint.
    monkeypatch.setattr(reval_metric, "PUBLISHED_DIR", tmp_path / "no-bundled-models")


def install(settings, trained) -> None:
    models.install(settings, OPERATOR, models.model_id(trained.path.read_bytes()))


def in_use(settings, model: str):
    return reval_metric.find_checkpoint(model, model_dir(settings))


@pytest.fixture(scope="module")
def trained(settings):
    result = reval.train_model(settings, "treelstm", TrainConfig(epochs=2, seed=7), limit=LIMIT, actor=OPERATOR)
    install(settings, result)
    return result


def test_training_is_cached_with_config_and_data_hash(settings, trained):
    assert not trained.cached
    info = json.loads(trained.path.with_suffix(".json").read_text())
    assert info["complete"] and info["data"] == {"source": "SICK", "train": LIMIT, "dev": LIMIT, "test": LIMIT}
    assert [h["epoch"] for h in info["history"]] == [1, 2]
    assert info["dev_pearson"] == max(h["dev_pearson"] for h in info["history"])
    again = reval.train_model(settings, "treelstm", TrainConfig(epochs=2, seed=7), limit=LIMIT, actor=OPERATOR)
    assert again.cached and again.path == trained.path
    other = reval.checkpoint_key(reval.ModelConfig("treelstm"), TrainConfig(epochs=2, seed=8), info["data_hash"])
    assert other != info["key"]
    # installed (by the fixture), the metric uses it
    assert in_use(settings, "treelstm") == trained.path


def test_evaluation_matches_scipy(settings, trained):
    ev = reval.evaluate_model(settings, "treelstm", "dev", bootstrap=200, limit=LIMIT)
    assert ev.n == LIMIT
    metric = registry_for(settings).get("ReVal-TreeLSTM")
    data = reval.load_sick_data(settings, limit=LIMIT)
    pairs = data.splits["dev"]
    pred = 1 + 4 * metric.score([p.sentence_b for p in pairs], [[p.sentence_a] for p in pairs])
    gold = np.array([p.score for p in pairs])
    assert ev.pearson == pytest.approx(sps.pearsonr(gold, pred)[0], abs=1e-5)
    assert ev.spearman == pytest.approx(sps.spearmanr(gold, pred)[0], abs=1e-4)
    assert ev.mse == pytest.approx(np.mean((gold - pred) ** 2), abs=1e-5)
    assert ev.pearson_ci[0] <= ev.pearson <= ev.pearson_ci[1]
    assert ev.as_row()["published_pearson"] is None  # Tai et al.'s numbers are for TEST only
    test = reval.evaluate_model(settings, "treelstm", "test", bootstrap=0, limit=LIMIT)
    assert test.as_row()["published_pearson"] == 0.8676  # Tai et al. 2015, Table 3


def test_runner_scores_reval_through_the_cache(settings, trained):
    registry = registry_for(settings)
    metric = registry.get("ReVal-TreeLSTM")
    batch = (["A man is playing a guitar", "A dog is running"],
             [["A man is playing a flute", "Someone is playing a guitar"], ["A cat is sleeping"]])
    first = score_batches(metric, [batch], settings, registry)[0]
    again = score_batches(metric, [batch], settings, registry)[0]
    assert np.array_equal(first, again) and np.all((first >= 0) & (first <= 1))


def test_cli_train_eval_score(settings, trained, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MUTTLAB_CACHE_DIR", str(settings.cache_dir))
    data = ["--data-dir", str(settings.data_dir)]
    assert main(["reval", "train", *data, "--model", "treelstm", "--epochs", "2", "--seed", "7",
                 "--limit", str(LIMIT), "--no-progress"]) == 0
    header, row = capsys.readouterr().out.splitlines()[:2]
    assert dict(zip(header.split(), row.split()))["cached"] == "True"  # reused the cached checkpoint
    assert main(["reval", "eval", *data, "--model", "treelstm", "--split", "dev", "--limit", str(LIMIT),
                 "--bootstrap", "50", "--format", "json"]) == 0
    row = json.loads(capsys.readouterr().out)[0]
    assert row["model"] == "treelstm" and row["n"] == LIMIT
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("A man is playing a guitar\tA man plays a guitar\nA dog runs\tA cat sleeps\n")
    assert main(["reval", "score", "--pairs", str(pairs), "--format", "csv"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == '"candidate","references","score"' and len(out) == 3


@pytest.mark.parametrize("args, message", [
    (["eval", "--model", "lstm"], "muttlab reval train --model lstm"),
    (["score", "--candidate", "a dog"], "at least one --candidate and one --reference"),
    (["train", "--epochs", "0"], "--epochs"),
])
def test_cli_errors_name_the_fix(args, message, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MUTTLAB_CACHE_DIR", str(tmp_path / "empty-cache"))
    assert main(["reval", *args]) == 2
    assert message in capsys.readouterr().err


def test_best_of_seeds_picks_the_best_dev_run_and_installs_nothing(settings, trained):
    before = in_use(settings, "lstm")
    best, runs = reval.train_best_of_seeds(settings, "lstm", [3, 4], TrainConfig(epochs=1), limit=LIMIT,
                                           actor=OPERATOR)
    assert [r.info["train"]["seed"] for r in runs] == [3, 4]
    assert best.info["dev_pearson"] == max(r.info["dev_pearson"] for r in runs)
    assert in_use(settings, "lstm") == before  # training never changes what the metric uses


def test_seeds_as_an_ensemble_are_installed_with_their_dev_score(settings, trained):
    best, runs = reval.train_best_of_seeds(settings, "lstm", [3, 4], TrainConfig(epochs=1), limit=LIMIT,
                                           ensemble=True, actor=OPERATOR)
    assert best.info["ensemble"] and [m["seed"] for m in best.info["members_info"]] == [3, 4]
    install(settings, best)
    assert in_use(settings, "lstm") == best.path
    ev = reval.evaluate_model(settings, "lstm", "dev", bootstrap=0, limit=LIMIT)
    assert ev.pearson == pytest.approx(best.info["dev_pearson"], abs=1e-6)
    again, _ = reval.train_best_of_seeds(settings, "lstm", [3, 4], TrainConfig(epochs=1), limit=LIMIT,
                                         ensemble=True, actor=OPERATOR)
    assert again.cached and again.path == best.path


def test_cli_ensemble_needs_two_seeds(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MUTTLAB_CACHE_DIR", str(tmp_path / "empty-cache"))
    assert main(["reval", "train", "--seeds", "3", "--ensemble"]) == 2
    assert "at least two seeds" in capsys.readouterr().err


def test_comparison_is_paired_and_matches_the_evaluations(settings, trained):
    lstm = reval.train_model(settings, "lstm", TrainConfig(epochs=1, seed=7), limit=LIMIT, actor=OPERATOR)
    a = reval.evaluate_model(settings, "treelstm", "dev", checkpoint=trained.path, bootstrap=0, limit=LIMIT)
    b = reval.evaluate_model(settings, "lstm", "dev", checkpoint=lstm.path, bootstrap=0, limit=LIMIT)
    c = reval.compare_evaluations(a, b, bootstrap=300, seed=1)
    assert c.bootstrap.r_a == pytest.approx(a.pearson) and c.bootstrap.r_b == pytest.approx(b.pearson)
    assert c.bootstrap.ci_low <= c.bootstrap.diff <= c.bootstrap.ci_high
    r_ab = sps.pearsonr(a.predictions, b.predictions)[0]
    assert c.williams.r23 == pytest.approx(r_ab) and np.sign(c.williams.t) == np.sign(a.pearson - b.pearson)
    test = reval.evaluate_model(settings, "lstm", "test", checkpoint=lstm.path, bootstrap=0, limit=LIMIT)
    with pytest.raises(reval.MuttlabError, match="same split"):
        reval.compare_evaluations(a, test)


def test_training_on_a_pairs_file_instead_of_sick(settings, tmp_path, capsys):
    sick = reval.load_sick_data(settings, limit=LIMIT).splits["train"]
    path = tmp_path / "pairs.tsv"
    # the columns `muttlab ranking convert --pairs` writes, plus one it adds that training ignores
    pd.DataFrame({"reference": [p.sentence_a for p in sick], "candidate": [p.sentence_b for p in sick],
                  "score": [p.score for p in sick], "system": "sys"}).to_csv(path, sep="\t", index=False)
    data = reval.load_pair_files(settings, path)
    assert (len(data.splits["train"]), len(data.splits["dev"]), data.splits["test"]) == (54, 6, [])
    assert sorted(data.splits["train"] + data.splits["dev"], key=sick.index) == sick
    assert main(["reval", "train", "--model", "lstm", "--train-pairs", str(path), "--epochs", "1",
                 "--no-progress", "--install", "--cache-dir", str(settings.cache_dir)]) == 0
    installed = json.loads(in_use(settings, "lstm").with_suffix(".json").read_text())
    assert installed["data"] == {"source": "pairs: pairs.tsv", "train": 54, "dev": 6, "test": 0}
    assert main(["reval", "score", "--model", "lstm", "-c", sick[0].sentence_b, "-r", sick[0].sentence_a,
                 "--cache-dir", str(settings.cache_dir)]) == 0
    # evaluated on a pairs file, the numbers are the metric's own on those pairs
    ev = reval.evaluate_model(settings, "lstm", bootstrap=0, pairs_file=path)
    pred = 1 + 4 * registry_for(settings).get("ReVal-LSTM").score([p.sentence_b for p in sick],
                                                                   [[p.sentence_a] for p in sick])
    assert (ev.split, ev.n) == ("pairs.tsv", LIMIT) and ev.as_row()["published_pearson"] is None
    assert ev.pearson == pytest.approx(sps.pearsonr([p.score for p in sick], pred)[0], abs=1e-5)
    capsys.readouterr()
    assert main(["reval", "eval", "--model", "lstm", "--pairs", str(path), "--publish",
                 "--cache-dir", str(settings.cache_dir)]) == 2
    assert "drop --limit, --checkpoint and --pairs" in capsys.readouterr().err


@pytest.mark.parametrize("text, message", [
    ("reference\tcandidate\tscore\na dog\ta cat\t7\n", r"line 2: score must be a number in \[1, 5\]"),
    ("first\tsecond\tscore\na dog\ta cat\t3\n", "the header must name score and one of sentence_a/sentence_b"),
    ("sentence_a\tsentence_b\tscore\na dog\t \t3\n", "line 2: empty sentence_b"),
])
def test_bad_pairs_files_name_line_and_fix(tmp_path, text, message):
    path = tmp_path / "pairs.tsv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(reval.DataError, match=message):
        reval.read_pairs_file(path)
