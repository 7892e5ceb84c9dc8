"""The verdict of a trial: its semantics, the tie rule as a setting, and that every path that judges goes
through :func:`muttlab.engine.verdict.judge` (a sentinel put in its place decides every path's results)."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from muttlab import api
from muttlab.engine import runner, verdict
from muttlab.engine.queue import FairQueue, QueuedScorer
from muttlab.trials import Expectation, Suite
from muttlab.errors import MuttlabError
from muttlab.rules import DEFAULT_RULES, EXACT_RULE, Rules, TieRule
from muttlab.settings import Settings, load_settings

FIRST, SECOND, SAME = Expectation.FIRST_BETTER, Expectation.SECOND_BETTER, Expectation.ABOUT_SAME
SHIPPED_GRID = Path(__file__).resolve().parents[2] / "data" / "results" / "grid.json"
CHALLENGE_FILE = Path(__file__).resolve().parents[1] / "suites" / "files" / "wmt_challenge.tsv"


# --------------------------------------------------------------------------- semantics

def test_first_better_passes_strictly_and_a_tie_fails():
    v = verdict.judge([0.5, 0.4, 0.4], [0.4, 0.5, 0.4], FIRST, higher_is_better=True)
    assert v.outcome.tolist() == ["passed", "failed", "tie"]
    assert v.passed.tolist() == [True, False, False]
    assert v.margin == pytest.approx([0.1, -0.1, 0.0])


def test_an_error_rate_flips_the_direction():
    v = verdict.judge([0.5, 0.4], [0.4, 0.5], FIRST, higher_is_better=False)
    assert v.outcome.tolist() == ["failed", "passed"]
    assert v.margin == pytest.approx([-0.1, 0.1])


def test_second_better_wants_the_second_text_to_score_better():
    v = verdict.judge([0.4, 0.5, 0.3], [0.5, 0.4, 0.3], SECOND, higher_is_better=True)
    assert v.outcome.tolist() == ["passed", "failed", "tie"]
    # For an error rate the second text is better when it scores lower.
    assert verdict.judge([0.4], [0.5], SECOND, higher_is_better=False).outcome.tolist() == ["failed"]


def test_about_same_is_the_difference_formula_and_a_tie_passes_it():
    # |1.0 - 0.86| / 1.0 = 0.14 <= 0.15; 0.16 > 0.15; equal scores are the same.
    v = verdict.judge([1.0, 1.0, 0.7], [0.86, 0.84, 0.7], SAME, higher_is_better=True)
    assert v.outcome.tolist() == ["passed", "failed", "passed"]
    assert v.margin == pytest.approx([0.01, -0.01, 0.15])
    assert v.tied.tolist() == [False, False, True]
    # The relative change is on the scores as reported, whatever the direction.
    assert verdict.judge([1.0], [0.84], SAME, higher_is_better=False).outcome.tolist() == ["failed"]
    assert verdict.judge([1.0], [0.84], SAME, True, Rules(tolerance=0.2)).outcome.tolist() == ["passed"]


def test_a_nan_score_is_unsupported_not_failed():
    v = verdict.judge([np.nan, 0.5, 0.5], [0.2, np.nan, 0.2], FIRST, higher_is_better=True)
    assert v.outcome.tolist() == ["unsupported", "unsupported", "passed"]
    assert np.isnan(v.margin[:2]).all() and not v.passed[:2].any() and not v.tied[:2].any()
    assert verdict.judge([np.nan], [1.0], SAME, True).outcome.tolist() == ["unsupported"]


def test_the_tie_tolerance_is_relative_to_the_larger_of_one_and_the_first_score():
    close = [0.3 + 1e-12, 1000.0 + 1e-7]
    assert verdict.judge([0.3, 1000.0], close, SECOND, True).outcome.tolist() == ["tie", "tie"]
    exact = verdict.judge([0.3, 1000.0], close, SECOND, True, Rules(tie=EXACT_RULE))
    assert exact.outcome.tolist() == ["passed", "passed"]
    # 1e-7 on a score of 1000 is within 1e-9 x 1000 = 1e-6; on a score of 1 it is not.
    assert verdict.judge([1.0], [1.0 + 1e-7], SECOND, True).outcome.tolist() == ["passed"]


def test_expectations_per_trial_are_judged_each_by_its_own_rule():
    s1, s2 = [0.5, 0.5, 1.0, 0.5], [0.4, 0.4, 0.9, 0.5]
    mixed = verdict.judge(s1, s2, [FIRST, SECOND, SAME, FIRST], True)
    assert mixed.outcome.tolist() == ["passed", "failed", "passed", "tie"]
    for i, e in enumerate([FIRST, SECOND, SAME, FIRST]):
        alone = verdict.judge(s1[i:i + 1], s2[i:i + 1], e, True)
        assert alone.code[0] == mixed.code[i] and alone.margin[0] == pytest.approx(mixed.margin[i])


def test_a_trials_own_expectation_overrides_its_types_rule():
    from muttlab.corruptions.base import Rule
    from muttlab.trials import Trial

    plain = Trial("a/1", "neg_subj", "x", "y", ("r",))
    assert verdict.expectations([plain, plain], Rule.ORIG_BETTER) is FIRST
    assert verdict.expectations([plain], Rule.DIFFERENCE) is SAME
    baseline = Trial("a/2", "neg_subj", "x", "y", ("r",), expectation=SECOND)
    assert verdict.expectations([plain, baseline], Rule.ORIG_BETTER).tolist() == [FIRST, SECOND]


def test_a_metrics_noise_floor_raises_its_tie_tolerance_never_lowers_it():
    assert Rules().for_metric(1e-6).relative_tolerance == 1e-6
    assert Rules(tie=TieRule(tolerance=1e-3)).for_metric(1e-6).relative_tolerance == 1e-3
    assert Rules(tie=EXACT_RULE).for_metric(0.0).relative_tolerance == 0.0
    # A difference of 5e-7 on scores near 0.5 is noise for a float32 encoder (floor 1e-6), not for BLEU.
    assert verdict.judge([0.5], [0.5 - 5e-7], FIRST, True, Rules().for_metric(1e-6)).outcome.tolist() == ["tie"]
    assert verdict.judge([0.5], [0.5 - 5e-7], FIRST, True, Rules().for_metric(0.0)).outcome.tolist() == ["passed"]


# --------------------------------------------------------------------------- the tie rule as a setting

def test_the_tie_rule_comes_from_the_environment():
    assert load_settings({}).rules == DEFAULT_RULES and DEFAULT_RULES.tie == TieRule("relative", 1e-9)
    assert load_settings({"MUTTLAB_TIE_RULE": "exact"}).rules.tie == EXACT_RULE
    assert load_settings({"MUTTLAB_TIE_RULE": " 1e-6 "}).rules.tie == TieRule("relative", 1e-6)
    assert load_settings({"MUTTLAB_TIE_RULE": "0"}).rules.tie == EXACT_RULE
    for bad in ("loose", "-1e-9", "0.5", "nan", "inf", "0.01"):
        with pytest.raises(MuttlabError, match="MUTTLAB_TIE_RULE"):
            load_settings({"MUTTLAB_TIE_RULE": bad})


def test_one_range_for_the_relative_tie_rule_in_the_api_the_cli_and_the_environment(monkeypatch):
    from muttlab.cli import build_parser
    from muttlab.cli.common import settings_from_args

    monkeypatch.delenv("MUTTLAB_TIE_RULE", raising=False)
    # 1e8 was accepted by load_settings where the command line capped it; 1e-400 underflows to 0.0 and silently
    # became the exact rule. Both are refused everywhere, by the same message.
    for value in ("1e8", "1e-400", "1e-16"):
        with pytest.raises(MuttlabError, match=r"from 1e-15 to below 0\.01") as env:
            load_settings({"MUTTLAB_TIE_RULE": value})
        with pytest.raises(MuttlabError, match=r"from 1e-15 to below 0\.01") as cli:
            settings_from_args(build_parser().parse_args(["run", "--tie-rule", value]))
        assert "MUTTLAB_TIE_RULE" in str(env.value) and "--tie-rule" in str(cli.value)
    for value in (1e8, 1e-16, 0.01, -1e-9, float("nan"), True):
        with pytest.raises(MuttlabError, match="load_settings.tie_tolerance."):
            load_settings({}, tie_tolerance=value)
    # The edges of the range, in all three.
    assert load_settings({}, tie_tolerance=1e-15).rules.tie.tolerance == 1e-15
    assert load_settings({}, tie_tolerance=0.0).rules.tie == EXACT_RULE
    assert load_settings({"MUTTLAB_TIE_RULE": "1e-15"}).rules.tie.tolerance == 1e-15
    assert load_settings({"MUTTLAB_TIE_RULE": "0.0099"}).rules.tie.tolerance == 0.0099
    assert load_settings({}, tie_rule="exact").rules.tie == EXACT_RULE
    with pytest.raises(MuttlabError, match="give one of them"):
        load_settings({}, tie_rule="exact", tie_tolerance=0.0)
    with pytest.raises(MuttlabError, match="tolerance"):
        load_settings({}, tolerance=2.0)
    assert load_settings({}, tolerance=0.2).rules.tolerance == 0.2


def test_rule_signatures_name_the_tie_rule_and_a_deciding_noise_floor():
    assert Rules().signature() == "tol:0.15|tie:1e-9"
    assert Rules(tie=EXACT_RULE).signature() == "tol:0.15|tie:exact"
    assert Rules().for_metric(1e-6).signature() == "tol:0.15|tie:1e-9|floor:1e-6"
    assert Rules(tie=EXACT_RULE).for_metric(1e-6).signature() == "tol:0.15|tie:exact|floor:1e-6"
    # A floor below the setting decides nothing and is not shown.
    assert Rules(tie=TieRule(tolerance=1e-3)).for_metric(1e-6).signature() == "tol:0.15|tie:0.001"
    assert Settings().rules.signature() == "tol:0.15|tie:1e-9"


def test_the_cli_flag_sets_the_tie_rule(monkeypatch):
    from muttlab.cli import build_parser
    from muttlab.cli.common import settings_from_args

    monkeypatch.delenv("MUTTLAB_TIE_RULE", raising=False)
    for command in (["run"], ["severity", "--corruption", "remove_prep"], ["reproduce"],
                    ["report", "--view", "/run", "--output", "r.html"]):
        args = build_parser().parse_args([*command, "--tie-rule", "exact"])
        assert settings_from_args(args).rules.tie == EXACT_RULE
        with pytest.raises(MuttlabError, match="--tie-rule"):
            settings_from_args(build_parser().parse_args([*command, "--tie-rule", "sometimes"]))


def test_scores_cache_keys_do_not_depend_on_the_tie_rule(sample_settings):
    """A second run with another tie rule reads every score back from the cache."""
    from tests.engine.counting_metric import WordOverlap

    suite = api.load_suite(sample_settings, "sample")
    registry = runner.registry_for(sample_settings)
    metric = WordOverlap()
    registry.add(metric)
    runner.run(suite, [metric.name], [1], sample_settings, registry)
    scored = WordOverlap.scored
    exact = runner.run(suite, [metric.name], [1], sample_settings.with_rules(tie=EXACT_RULE), registry)
    assert scored > 0 and WordOverlap.scored == scored and exact.rules.tie == EXACT_RULE


# --------------------------------------------------------------------------- every path calls the verdict

class Sentinel:
    """Stands in for verdict.judge: records the tie rule of the rules each call got and decides by position alone
    (even trials pass, odd ones tie; every margin 42), which no real verdict of real scores does."""

    def __init__(self):
        self.ties: list[str] = []

    def __call__(self, s_first, s_second, expectation, higher_is_better, rules=DEFAULT_RULES):
        self.ties.append(str(rules.tie))
        n = len(np.asarray(s_first))
        return verdict.Verdicts(margin=np.full(n, 42.0), code=(np.arange(n) % 2).astype(np.int8),
                                tied=np.ones(n, dtype=bool))


def _sentinels(passed) -> bool:
    passed = np.asarray(passed, dtype=bool)
    return passed.tolist() == [i % 2 == 0 for i in range(len(passed))]


@pytest.fixture
def sentinel(monkeypatch):
    judge = Sentinel()
    monkeypatch.setattr(verdict, "judge", judge)
    return judge


@pytest.fixture
def exact(sample_settings):
    """A tie rule other than the default."""
    return sample_settings.with_rules(tie=EXACT_RULE)


def _sample_cell(settings):
    suite = api.load_suite(settings, "sample")
    corruption = suite.corruptions()[0]
    return suite, corruption, suite.max_refs(corruption)


def test_runner(sentinel, exact):
    suite, corruption, refs = _sample_cell(exact)
    results = runner.run(suite.select([corruption]), ["BLEU-4", "TER"], [refs], exact)
    for _, part in results.table.groupby("metric"):
        assert _sentinels(part["passed"]) and (part["margin"] == 42.0).all()
    assert sentinel.ties and set(sentinel.ties) == {"exact"}
    assert all(s.endswith("|tol:0.15|tie:exact") for s in results.accuracy()["signature"])


def test_dashboard_queue(sentinel, exact):
    from muttlab.dashboard import services

    suite, corruption, refs = _sample_cell(exact)
    results = services.run_grid(exact, services.Selection(("BLEU-4",), (corruption,), (refs,)))
    assert _sentinels(results.table["passed"]) and (results.table["margin"] == 42.0).all()
    assert set(sentinel.ties) == {"exact"}
    assert results.accuracy()["signature"].str.endswith("|tie:exact").all()


def test_api_sentence_verdicts(sentinel, exact):
    corrupted = pd.DataFrame({"corruption": ["neg_subj", "passive", "neg_verb"], "label": ["a", "b", "c"],
                              "corrupted": ["no man rides a bike", "a bike is ridden", "a man does not ride a bike"]})
    scores = api.score(exact, ["BLEU-4"], ["a man rides a bike", "no man rides a bike", "a bike is ridden",
                                           "a man does not ride a bike"], [["a man is riding a bicycle"]] * 4)
    table = api.sentence_verdicts(scores, corrupted, exact)
    # One call for the metric's trials: the sentinel's pattern by position, under the settings' tie rule.
    assert _sentinels(table["passed"]) and (table["margin"] == 42.0).all() and sentinel.ties == ["exact"]


def test_severity(sentinel, exact):
    from muttlab.severity import severity_curve

    curve = severity_curve(exact, "remove_prep", ["BLEU-4"], [1, 2])
    n = curve["n"].iloc[0]
    assert (curve["pass_rate"] == 100.0 * math.ceil(n / 2) / n).all()
    assert set(sentinel.ties) == {"exact"} and curve["signature"].str.endswith("|tol:0.15|tie:exact").all()


def test_contrastive_suites(sentinel, exact):
    from muttlab.suites import read_suite
    from muttlab.suites.contrastive import CONCORDANT, TIE, run_challenge

    results = run_challenge(exact, read_suite(CHALLENGE_FILE), ["sentBLEU"])
    n = len(results.table)
    assert results.table["outcome"].tolist() == [CONCORDANT if i % 2 == 0 else TIE for i in range(n)]
    assert set(sentinel.ties) == {"exact"} and results.signature("sentBLEU").endswith("|tol:0.15|tie:exact")


def test_reproduction_applies_the_papers_exact_rule_whatever_the_setting(sentinel, data_settings, monkeypatch):
    from muttlab.human.reproduce import measure_mutt_accuracy

    def by_rule(s_first, s_second, expectation, higher_is_better, rules=DEFAULT_RULES):
        """Every trial passes under the exact rule and fails under any other: which rule gave a number shows."""
        sentinel.ties.append(str(rules.tie))
        n = len(np.asarray(s_first))
        code = np.zeros(n, np.int8) if rules.tie == EXACT_RULE else np.full(n, 2, np.int8)
        return verdict.Verdicts(margin=np.zeros(n), code=code, tied=np.zeros(n, dtype=bool))

    monkeypatch.setattr(verdict, "judge", by_rule)

    rows = pd.DataFrame([
        {"study": "mutt_accuracy", "source": "Table 4", "metric": "CIDEr", "subset": "det_sub", "refs": 5,
         "rule": "strict", "statistic": "accuracy_pct", "value": 50.0},
        # Table 7 applies the Difference formula to negations: decided here, not by the runner.
        {"study": "mutt_accuracy", "source": "Table 7", "metric": "CIDEr", "subset": "neg_subj", "refs": 5,
         "rule": "difference", "statistic": "accuracy_pct", "value": 50.0}])
    loose = data_settings.with_rules(tie=TieRule(tolerance=1e-3))
    registry = runner.registry_for(loose)
    measured = measure_mutt_accuracy(loose, rows, registry, lambda *a: None)
    # The paper's number under the exact rule; the lab's, beside it, under the rules set (1e-3).
    assert [m[0] for m in measured.values()] == [100.0, 100.0] and [m[2] for m in measured.values()] == [0.0, 0.0]
    assert set(sentinel.ties) == {"exact", "0.001"}


@pytest.mark.slow
def test_dask_cluster(sentinel, data_dir, mutt_suite, tmp_path):
    distributed = pytest.importorskip("distributed")
    from muttlab.engine.distributed import DaskScorer

    settings = Settings(data_dir=data_dir, cache_dir=tmp_path, workers=1, rules=Rules(tie=EXACT_RULE))
    suite = Suite("mutt", mutt_suite.of("det_sub")[:24])
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address="127.0.0.1:0") as cluster:
        with distributed.Client(cluster, set_as_default=False) as client:
            registry = runner.registry_for(settings)
            metrics = runner.resolve_metrics(["BLEU-4"], registry)
            scorer = DaskScorer(runner.cache_for(settings), registry, client, metrics, block=10)
            results = runner.run(suite, ["BLEU-4"], [5], settings, registry, scorer=scorer)
            registry.close()
    assert scorer.tasks > 0  # scored on the cluster, judged here
    assert _sentinels(results.table["passed"]) and set(sentinel.ties) == {"exact"}
    assert results.accuracy()["signature"].str.endswith("|tie:exact").all()


# --------------------------------------------------------------------------- the queue as executor

def test_the_queue_executor_gives_the_runners_results_one_cell_per_job(data_settings, mutt_suite, tmp_path):
    suite = mutt_suite.select(["det_sub", "passive"])
    metrics, counts = ["BLEU-4", "CIDEr-D"], [5, 10]
    local = runner.run(suite, metrics, counts, data_settings)
    settings = data_settings.with_overrides(cache_dir=tmp_path / "queued")
    registry = runner.registry_for(settings)
    queue = FairQueue(workers=1)
    costs: list[int] = []
    submit = queue.submit
    queue.submit = lambda session, fn, cost=1: costs.append(cost) or submit(session, fn, cost)
    try:
        queued = runner.run(suite, metrics, counts, settings, registry,
                            scorer=QueuedScorer(runner.cache_for(settings), registry, queue, "s"))
    finally:
        queue.close()
        registry.close()
    pd.testing.assert_frame_equal(queued.table, local.table, check_exact=True)
    largest_cell = 2 * max(len(suite.of(c)) for c in suite.corruptions())
    # No job larger than one cell; CIDEr-D's batches (one side of a cell) whole.
    assert max(costs) <= largest_cell
    assert costs.count(len(suite.of("det_sub"))) >= 2 * len(counts)


# --------------------------------------------------------------------------- the shipped grid

@pytest.mark.slow
@pytest.mark.parametrize("metric", ["BLEU-1", "BLEU-4", "ROUGE-L", "CIDEr-D", "TER", "chrF"])
def test_every_shipped_cell_keeps_its_n_and_passed_count(metric, data_settings, mutt_suite):
    """The verdict function judges the released MUTT sets exactly as the grid that ships with the package."""
    shipped = [c for c in json.loads(SHIPPED_GRID.read_text())["content"]["cells"] if c["metric"] == metric]
    cells = runner.run(mutt_suite, [metric], [5, 10, 20], data_settings).accuracy()
    ours = {(c, int(k)): (int(n), int(p)) for c, k, n, p in cells[["corruption", "refs", "n", "passed"]].itertuples(
        index=False)}
    assert len(shipped) == len(ours) == 30
    changed = [(c["corruption"], c["refs"], (c["n"], c["passed"]), ours[c["corruption"], c["refs"]])
               for c in shipped if ours[c["corruption"], c["refs"]] != (c["n"], c["passed"])]
    assert not changed
