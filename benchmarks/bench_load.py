"""Load: many sessions asking for Playground scores while another session runs a full grid.

The requests take the path the dashboard's do (``dashboard/services.py``): every piece of scoring work goes
through the fair queue (:func:`muttlab.engine.queue.shared_queue`) with the session's id; the grid is cut
into metric x corruption chunks. ``--sessions`` threads each send ``--requests`` Playground requests (one
candidate pair scored by the n-gram metrics and METEOR), paced like a person typing; one more session runs
the full grid. Prints the Playground latency (median, p95, max), how long the grid took, and the process's
resident memory with its children (the METEOR JVMs) after ``--warm-all`` scored once with every shipped
metric.

    MUTTLAB_DATA_DIR=../shared/data .venv/bin/python benchmarks/bench_load.py [--sessions 20] [--warm-all]
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from muttlab import api
from muttlab.engine import queue as work_queue
from muttlab.engine import runner
from muttlab.settings import load_settings

PLAYGROUND = ("BLEU-4", "ROUGE-L", "CIDEr-D", "METEOR-1.5")
GRID = ("BLEU-4", "ROUGE-L", "CIDEr-D", "METEOR-1.5", "TER")


def rss_mb() -> float:
    """Resident memory of this process and all its descendants (the JVMs), in MB."""
    import psutil

    me = psutil.Process()
    return sum(p.memory_info().rss for p in [me, *me.children(recursive=True)]) / 2 ** 20


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--requests", type=int, default=5, help="Playground requests per session")
    parser.add_argument("--warm-all", action="store_true", help="also score once with every available metric")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cache:
        settings = load_settings(cache_dir=Path(cache))
        suite = api.load_suite(settings, "mutt" if settings.data_dir else "sample")
        registry = runner.registry_for(settings)
        queue = work_queue.shared_queue()
        trials = suite.trials
        latencies: list[float] = []
        lock = threading.Lock()

        def grid() -> float:
            start = time.perf_counter()
            futures = [queue.submit("grid", lambda m=m, c=c: api.run_grid(settings, [m], [c], suite=suite,
                                                                          registry=registry),
                                    cost=2 * len(suite.of(c)) * 3)
                       for m in GRID for c in suite.corruptions()]
            for f in futures:
                f.result()
            return time.perf_counter() - start

        def visitor(k: int) -> None:
            rng = random.Random(k)
            for _ in range(args.requests):
                t = rng.choice(trials)
                # A typed pair is new text: no cache hit (a suffix makes it unique).
                cands = (t.original + f" {k}{rng.random():.6f}", t.corrupted)
                start = time.perf_counter()
                queue.run(f"visitor-{k}", lambda: api.score(settings, PLAYGROUND, cands,
                                                            [list(t.refs(5))] * 2, registry), cost=8)
                with lock:
                    latencies.append(time.perf_counter() - start)
                time.sleep(rng.uniform(0.5, 2.0))

        # Start the metrics (JVM) first so that latencies are about waiting, not a one-time start.
        queue.run("warm", lambda: api.score(settings, PLAYGROUND, ["a man rides"], [["a man is riding"]], registry))
        grid_result: list[float] = []
        grid_thread = threading.Thread(target=lambda: grid_result.append(grid()))
        grid_thread.start()
        time.sleep(2.0)  # the grid is running
        threads = [threading.Thread(target=visitor, args=(k,)) for k in range(args.sessions)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        grid_thread.join()
        rss_after_load = rss_mb()
        if args.warm_all:
            names = [i.name for i in api.metric_catalogue(settings, registry) if i.available]
            queue.run("warm", lambda: api.score(settings, names, ["a man rides a horse"],
                                                [["a man is riding a horse", "a person rides"]], registry))
        rss_all = rss_mb()
        registry.close()
    lat = sorted(latencies)
    p95 = lat[min(len(lat) - 1, int(round(0.95 * (len(lat) - 1))))]
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; {args.sessions} sessions x "
          f"{args.requests} Playground requests ({', '.join(PLAYGROUND)}) during a full grid "
          f"({', '.join(GRID)}, {len(trials)} trials x 5/10/20 refs)")
    print(f"Playground latency: median {statistics.median(lat):.2f} s, p95 {p95:.2f} s, max {lat[-1]:.2f} s "
          f"({len(lat)} requests)")
    print(f"full grid under load: {grid_result[0]:.1f} s")
    print(f"RSS (process + JVMs): {rss_after_load:.0f} MB after the load"
          + (f", {rss_all:.0f} MB with every available metric warm" if args.warm_all else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
