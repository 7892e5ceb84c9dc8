"""The runner on real MUTT trials: results table, accuracy rules, cache, errors."""
from __future__ import annotations

import numpy as np
import pytest

from muttlab.errors import MuttlabError
from muttlab.engine.runner import run
from muttlab.rules import EXACT_RULE
from muttlab.settings import Settings
from muttlab.trials import Suite, Trial
from muttlab.metrics.registry import Registry
from tests.engine.counting_metric import WordOverlap

COUNTING = "tests.engine.counting_metric:make"


@pytest.fixture
def small_suite(mutt_suite):
    return Suite("mutt", mutt_suite.of("neg_verb")[:40] + mutt_suite.of("det_sub")[:30])


def test_results_table_is_tidy_and_complete(small_suite, data_settings):
    results = run(small_suite, ["BLEU-4", "TER"], [5, 10], data_settings)
    table = results.table
    assert list(table.columns) == ["trial", "corruption", "metric", "refs", "s_orig", "s_corr", "margin", "passed",
                                   "tied"]
    assert len(table) == 70 * 2 * 2
    assert set(table["refs"]) == {5, 10}
    assert results.signatures["BLEU-4"].startswith("BLEU-4|n:4")
    acc = results.accuracy()
    assert set(acc.columns) >= {"metric", "corruption", "refs", "n", "passed", "accuracy", "ci_low", "ci_high"}
    assert (acc["ci_low"] <= acc["accuracy"]).all() and (acc["accuracy"] <= acc["ci_high"]).all()


def test_rules_follow_family_and_metric_direction(small_suite, data_settings):
    table = run(small_suite, ["BLEU-4", "TER"], [5], data_settings).table
    bleu = table[(table.metric == "BLEU-4") & (table.corruption == "neg_verb")]
    assert (bleu["passed"] == ((bleu["s_orig"] > bleu["s_corr"]) & ~bleu["tied"])).all()
    ter = table[(table.metric == "TER") & (table.corruption == "neg_verb")]
    # An error rate: lower is better.
    assert (ter["passed"] == ((ter["s_orig"] < ter["s_corr"]) & ~ter["tied"])).all()
    det = table[(table.metric == "BLEU-4") & (table.corruption == "det_sub")]
    rel = (det["s_orig"] - det["s_corr"]).abs() / (det["s_orig"].abs() + 1e-9)
    assert (det["passed"] == (rel <= 0.15)).all()


def test_ties_fail_the_strict_rule_and_are_counted(mutt_suite, data_settings):
    """BLEU-1 on remove_prep: coco-caption's smoothing constants leave equal precisions 1e-10 apart. Within
    1e-9 · max(1, |s_orig|) the two scores are a tie, and a tie fails the strict rule."""
    suite = Suite("mutt", mutt_suite.of("remove_prep") + mutt_suite.of("det_sub"))
    results = run(suite, ["BLEU-1"], [20], data_settings)
    table = results.table
    delta = (table["s_orig"] - table["s_corr"]).abs()
    assert (table["tied"] == (delta <= 1e-9 * np.maximum(1.0, table["s_orig"].abs()))).all()
    strict = table[table.corruption == "remove_prep"]
    near = strict[strict["tied"] & (delta[strict.index] > 0)]
    assert len(near) > 10 and (near["s_orig"] > near["s_corr"]).any()
    assert not strict.loc[strict["tied"], "passed"].any()
    # The Difference rule is unchanged: a tie is no relative change at all, so it passes.
    det = table[table.corruption == "det_sub"]
    assert det["tied"].any() and det.loc[det["tied"], "passed"].all()
    acc = results.accuracy().set_index("corruption")
    assert acc.loc["remove_prep", "tie_rate"] == pytest.approx(100 * strict["tied"].mean())
    assert acc.loc["remove_prep", "signature"].endswith("|tol:0.15|tie:1e-9")

    # With no tie tolerance the comparison is exact, as in the study's code: the near-ties pass again.
    exact = run(suite, ["BLEU-1"], [20], data_settings.with_rules(tie=EXACT_RULE)).table
    exact = exact[exact.corruption == "remove_prep"].set_index("trial")
    near = near.set_index("trial")
    assert exact.loc[near.index, "passed"].eq(near["s_orig"] > near["s_corr"]).all()
    assert (exact["passed"] == (exact["s_orig"] > exact["s_corr"])).all()


def test_cached_rerun_scores_nothing_and_gives_same_numbers(small_suite, data_settings):
    registry = Registry(extra_paths=[COUNTING])
    first = run(small_suite, ["word-overlap", "CIDEr-D"], [5, 10], data_settings, registry)
    scored_once = WordOverlap.scored
    assert scored_once > 0
    second = run(small_suite, ["word-overlap", "CIDEr-D"], [5, 10], data_settings, Registry(extra_paths=[COUNTING]))
    assert WordOverlap.scored == scored_once
    assert np.array_equal(first.table[["s_orig", "s_corr"]].to_numpy(), second.table[["s_orig", "s_corr"]].to_numpy())


def test_edited_pair_is_rescored_alone(small_suite, data_settings):
    registry = Registry(extra_paths=[COUNTING])
    run(small_suite, ["word-overlap"], [5], data_settings, registry)
    before = WordOverlap.scored
    edited = list(small_suite.trials)
    t = edited[0]
    edited[0] = Trial(t.id, t.corruption, t.original, t.corrupted + " again", t.references)
    run(Suite("mutt", edited), ["word-overlap"], [5], data_settings, registry)
    assert WordOverlap.scored == before + 1


def test_no_cache_scores_again(small_suite, data_dir, tmp_path):
    settings = Settings(data_dir=data_dir, cache_dir=tmp_path, use_cache=False, workers=1)
    registry = Registry(extra_paths=[COUNTING])
    run(small_suite, ["word-overlap"], [5], settings, registry)
    before = WordOverlap.scored
    run(small_suite, ["word-overlap"], [5], settings, registry)
    # Identical (candidate, references) items are scored once per run, even without a cache.
    distinct = {(s, t.refs(5)) for t in small_suite.trials for s in (t.original, t.corrupted)}
    assert WordOverlap.scored == before + len(distinct)
    assert not (tmp_path / "scores.sqlite").exists()


def test_corpus_dependent_scores_come_from_their_batch(small_suite, data_settings):
    """CIDEr-D's document frequencies come from the batch: cached scores must not leak across batches."""
    together = run(small_suite, ["CIDEr-D"], [5], data_settings).table
    alone = run(Suite("mutt", small_suite.of("det_sub")), ["CIDEr-D"], [5], data_settings).table
    merged = together[together.corruption == "det_sub"].merge(alone, on="trial")
    assert np.allclose(merged["s_orig_x"], merged["s_orig_y"])  # each corruption set is its own batch


def test_parallel_workers_give_the_same_scores(mutt_suite, data_dir, tmp_path, monkeypatch):
    from muttlab.engine import runner as runner_module
    monkeypatch.setattr(runner_module, "PARALLEL_MIN_ITEMS", 100)  # fan out even this small job
    suite = Suite("mutt", mutt_suite.of("det_sub"))
    serial = run(suite, ["chrF"], [5, 20], Settings(data_dir=data_dir, cache_dir=tmp_path / "a", workers=1))
    parallel = run(suite, ["chrF"], [5, 20], Settings(data_dir=data_dir, cache_dir=tmp_path / "b", workers=2))
    assert np.array_equal(serial.table[["s_orig", "s_corr"]].to_numpy(), parallel.table[["s_orig", "s_corr"]].to_numpy())


def test_metric_with_own_parameters_is_not_rebuilt_in_workers(mutt_suite, data_dir, tmp_path, monkeypatch):
    """A worker rebuilds a metric by name; an instance with other parameters must be scored as it is."""
    from muttlab.engine import runner as runner_module
    from muttlab.metrics.bleu import Bleu
    monkeypatch.setattr(runner_module, "PARALLEL_MIN_ITEMS", 10)
    settings = Settings(data_dir=data_dir, cache_dir=tmp_path, workers=2)
    registry = Registry()
    untokenized = Bleu(4, tokenize="none")  # same name as the registry's BLEU-4, other parameters
    trials = mutt_suite.of("det_sub")
    batch = ([t.original for t in trials], [list(t.refs(5)) for t in trials])
    scores = runner_module.score_batches(untokenized, [batch], settings, registry)[0]
    assert np.array_equal(scores, untokenized.score(*batch))


@pytest.mark.parametrize("metrics, refs, message", [
    (["BLEU-9"], [5], "unknown metric 'BLEU-9'"),
    (["BLEU-4"], [25], "reference count(s) [25] not possible"),
    (["BLEU-4"], [0], "reference count(s) [0] not possible"),
])
def test_bad_requests_name_the_problem(small_suite, data_settings, metrics, refs, message):
    with pytest.raises(MuttlabError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")
                       .replace("]", r"\]")):
        run(small_suite, metrics, refs, data_settings)


def test_empty_suite_and_unknown_corruption(data_settings):
    with pytest.raises(MuttlabError, match="no trials"):
        run(Suite("empty"), ["BLEU-4"], [1], data_settings)
    odd = Suite("odd", [Trial("x/0", "no_such_type", "a cat", "a dog", ("a cat sits",))])
    with pytest.raises(MuttlabError, match="unknown corruption type 'no_such_type'"):
        run(odd, ["BLEU-4"], [1], data_settings)


def test_metrics_scored_in_a_forked_child_give_the_same_scores(mutt_suite, data_dir, tmp_path, monkeypatch):
    """With two workers the last n-gram metrics are scored in a forked copy of the process; the numbers, and
    what reaches the cache, are those of a one-process run."""
    from muttlab.engine import forked, runner as runner_module
    from muttlab.engine.cache import ScoreCache
    if not forked.AVAILABLE:
        pytest.skip("forking is used on Linux only")
    forks = []
    monkeypatch.setattr(forked.ForkedCalls, "__init__", _counting(forked.ForkedCalls.__init__, forks))
    monkeypatch.setattr(runner_module, "PARALLEL_MIN_ITEMS", 100)
    suite = Suite("mutt", mutt_suite.of("det_sub") + mutt_suite.of("neg_verb"))
    metrics = ["BLEU-1", "BLEU-4", "ROUGE-L", "CIDEr-D"]
    serial = run(suite, metrics, [5, 20], Settings(data_dir=data_dir, cache_dir=tmp_path / "a", workers=1))
    assert not forks
    both = run(suite, metrics, [5, 20], Settings(data_dir=data_dir, cache_dir=tmp_path / "b", workers=2))
    assert len(forks) == 1
    columns = ["trial", "metric", "refs", "s_orig", "s_corr", "passed"]
    assert serial.table[columns].equals(both.table[columns])
    assert len(ScoreCache(tmp_path / "a" / "scores.sqlite")) == len(ScoreCache(tmp_path / "b" / "scores.sqlite"))


def _counting(init, calls):
    def counted(self, *args, **kwargs):
        calls.append(args)
        init(self, *args, **kwargs)
    return counted
