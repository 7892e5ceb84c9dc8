"""Benchmark: what a long pure-Python computation on the server costs the visitors' page runs, run in a thread of
the server's process (as the ΔBLEU unit study was) or apart, in a forked child at niceness 10
(``muttlab.engine.forked.computed_apart``, the dashboard's ``services.apart``).

A page run's stand-in is a fixed slice of pure Python (about 50 ms alone, as a Playground answer's page run
costs). It is timed again and again: alone, then while the unit study (Flickr8K-Expert, ``--assignments``
random assignments and the page's sweeps) runs in a thread, then while it runs apart. The interpreter switches threads
every millisecond, as the server does (``dashboard/services/warmup.py``). Printed: the slice's median and p95
in each phase, as ratios to alone's, and the study's own time each way.

    MUTTLAB_DATA_DIR=../shared/data .venv/bin/python benchmarks/bench_apart.py [--assignments 1000] [--no-sweeps]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time

from bench_load import percentile  # this folder, on the path when run as a script
from muttlab import api
from muttlab.dashboard.services.core import APART_NICENESS
from muttlab.dashboard.services.warmup import SWITCH_INTERVAL_S
from muttlab.human import dbleu
from muttlab.settings import load_settings


def page_run(n: int = 1_000_000) -> float:
    start = time.perf_counter()
    total = 0
    for i in range(n):
        total += (i * 7) % 13
    return time.perf_counter() - start


def timed_while(running: threading.Thread) -> list[float]:
    times = []
    while running.is_alive():
        times.append(page_run())
        time.sleep(0.02)  # a visitor's pause: the run is one of many, not a busy loop
    return times


def summary(times: list[float], alone: list[float] | None = None) -> str:
    p95 = percentile(times, 0.95)
    text = f"median {statistics.median(times) * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms ({len(times)} runs)"
    if alone:
        text += (f"; {statistics.median(times) / statistics.median(alone):.2f}x and "
                 f"{p95 / percentile(alone, 0.95):.2f}x alone's")
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assignments", type=int, default=dbleu.DEFAULT_ASSIGNMENTS)
    parser.add_argument("--no-sweeps", dest="sweeps", action="store_false",
                        help="the main comparison only (the page sweeps unit size, order and threshold too)")
    args = parser.parse_args()
    settings = load_settings()
    sys.setswitchinterval(SWITCH_INTERVAL_S)

    def study(report=None):
        return api.correlate(settings, "dbleu", assignments=args.assignments, sweeps=args.sweeps,
                             seed=settings.seed, progress=report)

    study()  # the data read and the code imported once, as on a warm server
    alone = [page_run() for _ in range(40)]
    ways = {"in a thread of this process": lambda: study(),
            f"apart (forked, niceness {APART_NICENESS})": lambda: api.computed_apart(study,
                                                                                    niceness=APART_NICENESS)}
    print(f"a page run's slice of Python, alone: {summary(alone)}")
    for name, run in ways.items():
        took: list[float] = []

        def timed() -> None:
            start = time.perf_counter()
            run()
            took.append(time.perf_counter() - start)

        thread = threading.Thread(target=timed)
        thread.start()
        during = timed_while(thread)
        thread.join()
        print(f"while the unit study runs {name} ({took[0]:.1f} s): {summary(during, alone)}")


if __name__ == "__main__":
    main()
