"""What scoring an outside metric in its sandboxed worker process costs, against scoring it in this process.

The outside metric is the tests' ``word-overlap`` (tests/engine/counting_metric.py), registered by import path.
Both ways score the same batches, the whole MUTT grid's candidates (each side of every corruption set at 5, 10
and 20 references, as the runner hands them over), ``--repeat`` times; the worker way also pays for starting
the process, sandboxing it and loading the metric once. Run::

    MUTTLAB_DATA_DIR=../shared/data .venv/bin/python benchmarks/bench_outside.py
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.engine.counting_metric lives in the repository

from muttlab.metrics.registry import Registry  # noqa: E402
from muttlab.settings import load_settings  # noqa: E402
from muttlab.sources import load_mutt_experiments  # noqa: E402

PATH = "tests.engine.counting_metric:make"


def batches() -> list[tuple[list[str], list[list[str]]]]:
    suite = load_mutt_experiments(load_settings())
    out = []
    for name in suite.corruptions():
        trials = suite.of(name)
        for k in (5, 10, 20):
            refs = [list(t.refs(k)) for t in trials]
            out += [([t.original for t in trials], refs), ([t.corrupted for t in trials], refs)]
    return out


def seconds(metric, work, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for candidates, references in work:
            metric.score(candidates, references)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    work = batches()
    candidates = sum(len(c) for c, _ in work)
    here = Registry(extra_paths=[PATH], use_entry_points=False)
    start = time.perf_counter()
    isolated = Registry(extra_paths=[PATH], use_entry_points=False, isolate=True)
    started = time.perf_counter() - start
    try:
        in_process = seconds(here.get("word-overlap"), work, args.repeat)
        in_worker = seconds(isolated.get("word-overlap"), work, args.repeat)
        print(f"work: {len(work)} batches, {candidates:,} candidates; median of {args.repeat} runs; "
              f"worker sandbox: {isolated.sandbox or 'none'}")
        print(f"{'way':<24}{'seconds':>10}{'ratio':>8}")
        print(f"{'in this process':<24}{in_process:>10.3f}{1.0:>8.2f}")
        print(f"{'in the worker process':<24}{in_worker:>10.3f}{in_worker / in_process:>8.2f}")
        print(f"starting the worker (process, sandbox, import of the metric): {started:.3f} s, once per registry")
    finally:
        isolated.close()
        here.close()


if __name__ == "__main__":
    main()
