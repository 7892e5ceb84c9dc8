"""Scoring on a Dask cluster gives the local run's results, for every kind of metric.

A real LocalCluster (one worker process running two tasks at a time, loopback only) scores a slice of the MUTT
det_sub set; the local runner is the oracle. Blocks are made small so every cell is split over several tasks: a
corpus-level metric (CIDEr-D) only matches when the cell's document frequencies travel with each block.
"""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from muttlab.engine import runner
from muttlab.engine.cache import ScoreCache
from muttlab.trials import Suite
from muttlab.settings import Settings

distributed = pytest.importorskip("distributed")
from muttlab.engine.distributed import DaskScorer  # noqa: E402

# One metric of each kind: sentence-level n-gram, corpus-level, JVM-backed, learned (PyTorch).
KINDS = ["BLEU-4", "CIDEr-D", "METEOR-1.5", "ReVal-LSTM"]


@pytest.fixture(scope="module")
def cluster():
    # One worker process: tasks still cross a process boundary (pickled, metrics rebuilt by name) and two run at
    # once (the per-metric locks); a second process would load the JVM and the model again for no other check.
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True, host="127.0.0.1",
                                  dashboard_address="127.0.0.1:0") as local_cluster:
        with distributed.Client(local_cluster, set_as_default=False) as client:
            yield client


@pytest.fixture
def det_sub(mutt_suite):
    return Suite("mutt", mutt_suite.of("det_sub")[:48])


@pytest.mark.slow
@pytest.mark.java
def test_distributed_run_equals_local_for_every_metric_kind(cluster, det_sub, data_dir, tmp_path):
    local_settings = Settings(data_dir=data_dir, cache_dir=tmp_path / "local", workers=1)
    local = runner.run(det_sub, KINDS, [5], local_settings)

    settings = Settings(data_dir=data_dir, cache_dir=tmp_path / "dask", workers=1)
    registry = runner.registry_for(settings)
    metrics = runner.resolve_metrics(KINDS, registry)
    # A loopback cluster this process started: trusted, so its scores go into the cache (docs/scale.md).
    scorer = DaskScorer(runner.cache_for(settings), registry, cluster, metrics, block=10, trusted=True)
    remote = runner.run(det_sub, KINDS, [5], settings, registry, scorer=scorer)
    registry.close()

    # 4 metrics x 2 sides x ceil(48 / 10) blocks, all scored on the workers.
    assert scorer.tasks == 4 * 2 * 5
    exact = ~local.table["metric"].eq("ReVal-LSTM")
    pd.testing.assert_frame_equal(remote.table[exact], local.table[exact], check_exact=True)
    # ReVal runs in float32 and its encodings depend on which sentences share a forward pass (the batch's
    # shape changes the summation order), so blocks of 10 agree with the whole cell to float32 resolution.
    learned_remote, learned_local = remote.table[~exact], local.table[~exact]
    for column in ("s_orig", "s_corr"):
        assert np.abs(learned_remote[column].to_numpy() - learned_local[column].to_numpy()).max() < 1e-6
    assert (learned_remote["passed"].to_numpy() == learned_local["passed"].to_numpy()).all()
    assert remote.signatures == local.signatures
    # The workers' scores were merged into the client's cache, under the local run's keys.
    assert len(ScoreCache(tmp_path / "dask" / "scores.sqlite")) == len(ScoreCache(tmp_path / "local" / "scores.sqlite"))


def test_a_cell_split_without_its_statistics_would_differ(det_sub):
    """Guards the test above: CIDEr-D of a block alone is not CIDEr-D of the block within its cell."""
    from muttlab.metrics.cider import CiderD

    metric = CiderD()
    cands = [t.original for t in det_sub.trials]
    refs = [list(t.refs(5)) for t in det_sub.trials]
    whole = metric.score(cands, refs)
    stats = metric.corpus_stats(refs)
    assert (metric.score(cands[:10], refs[:10], stats=stats) == whole[:10]).all()
    assert (metric.score(cands[:10], refs[:10]) != whole[:10]).any()


def test_a_local_run_never_imports_dask(data_dir, tmp_path):
    code = ("import sys; from muttlab import api; from muttlab.settings import Settings; "
            f"s = Settings(data_dir=None, cache_dir=__import__('pathlib').Path({str(tmp_path)!r})); "
            "api.run_grid(s, ['BLEU-4', 'CIDEr-D'], suite='sample'); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
