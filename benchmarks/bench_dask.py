"""Scaling of a run over a Dask cluster: a LocalCluster of 1 and of 2 worker processes on this machine.

Each configuration scores the same work from an empty cache (loopback only; nothing listens beyond
127.0.0.1): wall time, speed-up and parallel efficiency = T1 / (N x TN), and, from the cluster's task
stream, each metric's compute seconds per candidate on a worker -- the per-shard cost docs/scale.md
extrapolates from. Model and JVM loading happen in each worker's first task of a metric and are counted.

Usage: MUTTLAB_DATA_DIR=../shared/data .venv/bin/python benchmarks/bench_dask.py \\
           [--metrics BLEU-4,CIDEr-D,METEOR-1.5] [--corruptions neg_subj,det_sub] [--refs 5,10,20] [--workers 1,2]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from distributed import Client, LocalCluster, get_task_stream

from muttlab import api
from muttlab.engine import runner
from muttlab.engine.distributed import DaskScorer
from muttlab.settings import load_settings


def one(n_workers: int, suite, metrics: list[str], refs: list[int]) -> dict:
    with tempfile.TemporaryDirectory() as cache, \
            LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                         dashboard_address="127.0.0.1:0") as cluster, Client(cluster) as client:
        settings = load_settings(cache_dir=Path(cache))
        registry = runner.registry_for(settings)
        scorer = DaskScorer(runner.cache_for(settings), registry, client, runner.resolve_metrics(metrics, registry))
        start = time.perf_counter()
        with get_task_stream(client) as stream:
            runner.run(suite, metrics, refs, settings, registry, scorer=scorer)
        wall = time.perf_counter() - start
        registry.close()
    compute: dict[str, float] = defaultdict(float)
    tasks: dict[str, int] = defaultdict(int)
    for task in stream.data:
        name = next((m for m in metrics if task["key"].startswith(f"muttlab-{m}-")), None)
        if name is None:
            continue
        tasks[name] += 1
        compute[name] += sum(s["stop"] - s["start"] for s in task["startstops"] if s["action"] == "compute")
    return {"workers": n_workers, "wall": wall, "compute": dict(compute), "tasks": dict(tasks)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--metrics", default="BLEU-4,CIDEr-D,METEOR-1.5")
    parser.add_argument("--corruptions", default="all")
    parser.add_argument("--refs", default="5,10,20")
    parser.add_argument("--workers", default="1,2")
    args = parser.parse_args()
    settings = load_settings()
    if settings.data_dir is None:
        sys.exit("set MUTTLAB_DATA_DIR to the datasets folder")
    suite = api.select_corruptions(api.load_suite(settings, "mutt"), args.corruptions.split(","))
    metrics = args.metrics.split(",")
    refs = [int(k) for k in args.refs.split(",")]
    candidates = len(suite.trials) * 2 * len(refs)
    print(f"work: {len(suite.trials)} trials x {len(refs)} reference counts x 2 sides = {candidates} candidates "
          f"per metric; metrics {', '.join(metrics)}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    rows = [one(int(n), suite, metrics, refs) for n in args.workers.split(",")]
    base = rows[0]
    print(f"{'workers':>8}{'wall s':>10}{'speed-up':>10}{'efficiency':>12}")
    for row in rows:
        speedup = base["wall"] / row["wall"] * base["workers"]
        print(f"{row['workers']:>8}{row['wall']:>10.1f}{speedup:>9.2f}x{speedup / row['workers']:>11.0%}")
    print(f"\nper-shard cost on a worker (from the task stream of the {base['workers']}-worker run; first tasks "
          "include loading)")
    print(f"{'metric':<14}{'tasks':>7}{'compute s':>11}{'ms/candidate':>14}")
    for name in metrics:
        secs = base["compute"].get(name, 0.0)
        print(f"{name:<14}{base['tasks'].get(name, 0):>7}{secs:>11.1f}{1000 * secs / candidates:>14.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
