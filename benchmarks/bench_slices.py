"""Benchmark: what slicing a drill-down cell costs beside building the cell itself.

    MUTTLAB_DATA_DIR=../shared/data .venv/bin/python benchmarks/bench_slices.py [--metric BLEU-4] [--repeat 5]

For every MUTT corruption type at 20 references: the cell's frame as the Drill-down builds it
(``cell_view.from_grid`` over the scored table, the baseline, run in this process), then the trials' properties
(``api.slice_properties``) and the slice finder (``api.worst_slices``); prints the best of ``--repeat`` times of
each and their ratio to the baseline. Scores come from the cache (scored once first). Run on demand.
"""
from __future__ import annotations

import argparse
import time

from muttlab import api
from muttlab.dashboard import cell_view


def best(repeat: int, work) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--metric", default="BLEU-4")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    settings = api.load_settings()
    suite = api.load_suite(settings)
    by_id = {t.id: t for t in suite.trials}
    table = api.run_grid(settings, metrics=[args.metric], ref_counts=[20], suite=suite).table
    print(f"{'corruption':<14}{'trials':>7}{'cell s':>9}{'props s':>9}{'finder s':>9}{'ratio':>7}")
    for corruption in suite.corruptions():
        cell = cell_view.from_grid(table, args.metric, corruption, 20, by_id)
        base = best(args.repeat, lambda: cell_view.from_grid(table, args.metric, corruption, 20, by_id))
        props = best(args.repeat, lambda: api.slice_properties(cell, by_id))
        properties = api.slice_properties(cell, by_id)
        finder = best(args.repeat, lambda: api.worst_slices(properties))
        print(f"{corruption:<14}{len(cell):>7}{base:>9.3f}{props:>9.3f}{finder:>9.3f}{(props + finder) / base:>7.1f}")


if __name__ == "__main__":
    main()
