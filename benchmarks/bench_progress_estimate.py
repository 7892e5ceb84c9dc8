"""Benchmark: how honest a cold Run's progress is. The estimate shown against the time actually left, and the
longest wait between two advances of the done count.

    .venv/bin/python benchmarks/bench_progress_estimate.py [--metrics BLEU-4,METEOR-1.5,...] [--refs 5,10,20]

Runs the Run page's grid (default: its default metrics, every MUTT corruption type, 5/10/20 references) with an
empty score cache, through the dashboard's executor (the fair queue, one grid cell a piece, the caller polling
every 0.25 s), and records every progress message with its time. For each message that shows an estimate
("about 40 s left", for the metric being scored while another is to come, else for the run), the actual time left
is the time from that message to the end of what it estimated; the ratio shown / actual is printed (median, worst,
share within a factor of 2) for every estimate made with at least 2 s actually left (below that, "about 1 s" is
the text's own resolution), and per metric the longest gap between two advances of the done count. The estimate
is read as shown (seconds; tens of seconds from 60 s; minutes from 180 s). Run on demand; nothing here is a test.
"""
from __future__ import annotations

import argparse
import re
import statistics
import tempfile
import time
from pathlib import Path

from muttlab import api
from muttlab.engine import queue as work_queue
from muttlab.engine import runner
from muttlab.settings import load_settings

MIN_ACTUAL_S = 2.0
SCORING = re.compile(r"^scoring (\S+) \(\d+ of \d+ metrics\): ([\d,]+) of ([\d,]+) items"
                     r"(?: · about (\d+) (s|min) left( for this metric)?)?")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--metrics", default=",".join(api.DEFAULT_METRICS))
    parser.add_argument("--refs", default="5,10,20")
    parser.add_argument("--all", action="store_true", help="print every estimate shown, not a dozen of them")
    args = parser.parse_args()
    metrics = [m for m in args.metrics.split(",") if m]
    refs = [int(k) for k in args.refs.split(",")]
    with tempfile.TemporaryDirectory() as cache:
        settings = load_settings(None, cache_dir=Path(cache), workers=1)
        suite = api.load_suite(settings)
        registry = runner.registry_for(settings)
        queue = work_queue.FairQueue(workers=1)
        log: list[tuple[float, str]] = []
        start = time.perf_counter()
        try:
            scorer = work_queue.QueuedScorer(runner.cache_for(settings), registry, queue, "bench")
            runner.run(suite, metrics, refs, settings, registry, scorer=scorer,
                       progress=lambda step, total, message: log.append((time.perf_counter() - start, message)))
        finally:
            queue.close()
            registry.close()
    report(log, metrics, every=args.all)
    return 0


def report(log: list[tuple[float, str]], metrics: list[str], every: bool = False) -> None:
    parsed = [(t, SCORING.match(message)) for t, message in log]
    scoring = [(t, m) for t, m in parsed if m]
    end_of = {}
    for t, m in scoring:
        end_of[m.group(1)] = t  # the metric's last report: its last piece scored
    run_end = log[-1][0]
    ratios, lines = [], []
    for t, m in scoring:
        if not m.group(4):
            continue
        shown = int(m.group(4)) * (60 if m.group(5) == "min" else 1)
        actual = (end_of[m.group(1)] if m.group(6) else run_end) - t
        if actual < MIN_ACTUAL_S:  # "about 1 s" is the text's resolution: no factor to judge below it
            continue
        ratios.append(shown / actual)
        lines.append((t, m.group(1), shown, actual))
    print(f"cold run of {', '.join(metrics)}: {run_end:.1f} s, {len(log)} progress messages")
    for name in metrics:
        times = [t for t, m in scoring if m.group(1) == name]
        counts = [int(m.group(2).replace(",", "")) for _, m in scoring if m.group(1) == name]
        advances = [t for t, (a, b) in zip(times[1:], zip(counts, counts[1:])) if b > a]
        points = times[:1] + advances
        gap = max((b - a for a, b in zip(points, points[1:])), default=0.0)
        span = (times[-1] - times[0]) if times else 0.0
        print(f"  {name:12s} scored for {span:6.1f} s; longest wait between two advances of the count {gap:5.1f} s")
    if not ratios:
        print("no estimate was shown")
        return
    worst = max(max(r, 1 / r) for r in ratios)
    within = sum(0.5 <= r <= 2 for r in ratios) / len(ratios)
    print(f"estimates shown: {len(ratios)}; shown / actual time left: median {statistics.median(ratios):.2f}, "
          f"worst factor {worst:.2f}, within a factor of 2: {within:.0%}")
    for t, name, shown, actual in (lines if every else lines[::max(1, len(lines) // 12)]):
        print(f"  at {t:6.1f} s  {name:12s} shown {shown:4d} s  actual {actual:6.1f} s")


if __name__ == "__main__":
    raise SystemExit(main())
