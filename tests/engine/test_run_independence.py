"""A cell's result is a function of that cell's trials alone (issue 13, item 3).

For every shipped metric available here, the cell det_sub @ 5 references scores the same, to the last bit,
whether it is run alone, inside a larger run (three corruptions, 5/10/20 references), inside that run in
reversed order (cells and trials), or read back from the score cache. Learned and Java-backed metrics use a
slice of the cell to keep the runtime down; each run gets its own registry, so no metric object or memo is shared
between the runs being compared. METEOR's JVM is (the test session keeps one per process, tests/conftest.py):
a JVM whose answers depended on what it had scored before would give the later runs other scores than the
first.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from muttlab.engine.runner import registry_for, run
from muttlab.trials import Suite
from muttlab.metrics.base import MetricUnavailable
from muttlab.metrics.registry import BUILTIN
from muttlab.settings import Settings

CELL = "det_sub"
REFS = 5
# Slow to score (a trained network, a transformer, a JVM, a parser per sentence): a slice of the cell is enough
# to compare.
SLOW = {"METEOR-1.5", "ML-METEOR", "TERp", "BADGER", "ReVal-LSTM", "ReVal-TreeLSTM", "DREEM", "ML-DREEM",
        "BERTScore-F1", "EmbeddingCosine"}


def _cell_scores(suite: Suite, metric: str, refs: list[int], settings: Settings) -> pd.DataFrame:
    registry = registry_for(settings)
    try:
        table = run(suite, [metric], refs, settings, registry).table
    finally:
        registry.close()
    cell = table[(table["corruption"] == CELL) & (table["refs"] == REFS)]
    return cell.sort_values("trial").reset_index(drop=True)[["trial", "s_orig", "s_corr", "passed", "tied"]]


def _assert_same(expected: pd.DataFrame, got: pd.DataFrame, what: str) -> None:
    assert list(got["trial"]) == list(expected["trial"]), what
    for column in ("s_orig", "s_corr"):
        a, b = expected[column].to_numpy(), got[column].to_numpy()
        differ = np.flatnonzero(~((a == b) | (np.isnan(a) & np.isnan(b))))
        assert differ.size == 0, (f"{what}: {column} differs on {differ.size} trials, e.g. "
                                  f"{expected['trial'][differ[0]]}: {a[differ[0]]!r} vs {b[differ[0]]!r}")
    assert (got["passed"] == expected["passed"]).all(), what
    assert (got["tied"] == expected["tied"]).all(), what


@pytest.mark.parametrize("metric", list(BUILTIN))
def test_cell_scores_do_not_depend_on_the_rest_of_the_run(metric, mutt_suite, data_dir, tmp_path):
    uncached = Settings(data_dir=data_dir, cache_dir=tmp_path / "none", use_cache=False, workers=1)
    cached = Settings(data_dir=data_dir, cache_dir=tmp_path / "cache", workers=1)
    try:
        registry_for(uncached).get(metric)
    except MetricUnavailable as exc:
        pytest.skip(f"{metric} is not available here: {exc}")
    size = 12 if metric in SLOW else None
    cell = mutt_suite.of(CELL)[:size]
    others = mutt_suite.of("neg_verb")[:size or 40] + mutt_suite.of("swap_chunks")[:size or 20]
    assert len(cell) == (size or 65)

    alone = _cell_scores(Suite("mutt", cell), metric, [REFS], uncached)
    larger = Suite("mutt", others[:len(others) // 2] + cell + others[len(others) // 2:])
    _assert_same(alone, _cell_scores(larger, metric, [5, 10, 20], uncached), "inside a larger run")
    _assert_same(alone, _cell_scores(Suite("mutt", larger.trials[::-1]), metric, [20, 10, 5], uncached),
                 "inside a larger run in reversed order")
    first = _cell_scores(larger, metric, [5, 10, 20], cached)
    _assert_same(alone, first, "cached run, first pass")
    _assert_same(alone, _cell_scores(larger, metric, [5, 10, 20], cached), "cached run, read back")


def test_cell_scored_in_worker_processes_equals_the_cell_alone(mutt_suite, data_dir, tmp_path, monkeypatch):
    """The metrics the runner may split over worker processes: the same cell, scored by two spawned workers
    inside a larger run, equals the cell scored alone in this process."""
    from muttlab.engine import runner

    metrics = ["BLEU-4", "ROUGE-L", "chrF", "TER", "W2V-AVG", "DeltaBLEU"]
    cell = mutt_suite.of(CELL)
    larger = Suite("mutt", mutt_suite.of("neg_verb")[:40] + cell + mutt_suite.of("swap_chunks")[:20])
    alone_settings = Settings(data_dir=data_dir, cache_dir=tmp_path, use_cache=False, workers=1)
    alone = {m: _cell_scores(Suite("mutt", cell), m, [REFS], alone_settings) for m in metrics}
    monkeypatch.setattr(runner, "PARALLEL_MIN_ITEMS", 100)
    pools = []

    class CountedPool(runner.ProcessPoolExecutor):
        def __init__(self, *args, **kwargs):
            pools.append(self)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(runner, "ProcessPoolExecutor", CountedPool)
    pooled = run(larger, metrics, [5, 10, 20], Settings(data_dir=data_dir, cache_dir=tmp_path, use_cache=False,
                                                           workers=2)).table
    assert pools, "the larger run was expected to use worker processes"
    for metric in metrics:
        got = pooled[(pooled["metric"] == metric) & (pooled["corruption"] == CELL) & (pooled["refs"] == REFS)]
        got = got.sort_values("trial").reset_index(drop=True)[["trial", "s_orig", "s_corr", "passed", "tied"]]
        _assert_same(alone[metric], got, f"{metric} in worker processes")
