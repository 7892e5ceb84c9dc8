"""Throughput of MUTT Lab's n-gram metrics against pycocoevalcap on the whole MUTT experiment set.

Work: 10 corruption sets x 5/10/20 references x (originals, corruptions), scored with BLEU-1..4,
ROUGE-L and CIDEr-D. Every timing is *cold*: a fresh Python process, imports included. MUTT Lab is
``muttlab run`` on an empty cache, then the same command on the now warm cache; pycocoevalcap (in its own
fresh process) tokenises with its Java PTB tokenizer and runs its Bleu, Rouge and Cider scorers.

Usage: MUTTLAB_DATA_DIR=../shared/data .venv/bin/python benchmarks/bench_ngram.py [--workers N] [--repeat R]
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.coco_reference: the pycocoevalcap side

from muttlab.settings import load_settings  # noqa: E402
from muttlab.sources import load_mutt_experiments  # noqa: E402
from tests.coco_reference import coco_scores, java_ptb  # noqa: E402

METRICS = ["BLEU-1", "BLEU-2", "BLEU-3", "BLEU-4", "ROUGE-L", "CIDEr-D"]
REFS = (5, 10, 20)


def pycocoevalcap_run(suite) -> None:
    tok = java_ptb([s for t in suite.trials for s in (t.original, t.corrupted, *t.references)])
    for name in suite.corruptions():
        trials = suite.of(name)
        for k in REFS:
            refs = [[tok[r] for r in t.refs(k)] for t in trials]
            for side in ("original", "corrupted"):
                coco_scores([tok[getattr(t, side)] for t in trials], refs)


def counting_run(suite) -> None:
    """The scoring alone, in a fresh process after imports and data loading: the six metrics over the grid's
    batches as the runner hands them over (a sentence-level metric gets all its items in one call, CIDEr-D
    one call per cell and side). Prints wall and CPU seconds."""
    from muttlab.engine.runner import registry_for
    registry = registry_for(load_settings())
    batches = []
    for name in suite.corruptions():
        trials = suite.of(name)
        for k in REFS:
            refs = [list(t.refs(k)) for t in trials]
            batches += [([t.original for t in trials], refs), ([t.corrupted for t in trials], refs)]
    everything = ([c for cands, _ in batches for c in cands], [r for _, refs in batches for r in refs])
    metrics = [registry.get(name) for name in METRICS]
    start, cpu = time.perf_counter(), time.process_time()
    for metric in metrics:
        for cands, refs in (batches if metric.corpus_dependent else [everything]):
            metric.score(cands, refs)
    print(time.perf_counter() - start, time.process_time() - cpu)


def _timed(command: list[str], env: dict) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system, the process and its children: the JVM) of a command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--repeat", type=int, default=1, help="repetitions; the best of each is reported")
    parser.add_argument("--coco-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--counting-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    settings = load_settings()
    if settings.data_dir is None:
        sys.exit("set MUTTLAB_DATA_DIR to the datasets folder")
    suite = load_mutt_experiments(settings)
    if args.coco_child:
        pycocoevalcap_run(suite)
        return
    if args.counting_child:
        counting_run(suite)
        return
    env = dict(os.environ)
    if args.workers:
        env["MUTTLAB_WORKERS"] = str(args.workers)
    ours = [sys.executable, "-m", "muttlab", "run", "--suite", "mutt", "--metrics", ",".join(METRICS),
            "--refs", ",".join(map(str, REFS)), "--format", "csv"]
    coco_cmd = [sys.executable, str(Path(__file__).resolve()), "--coco-child"]
    counting_cmd = [sys.executable, str(Path(__file__).resolve()), "--counting-child"]
    colds, warms, cocos, countings = [], [], [], []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as cache:
            colds.append(_timed(ours + ["--cache-dir", cache], env))
            warms.append(_timed(ours + ["--cache-dir", cache], env))
        cocos.append(_timed(coco_cmd, env))
        out = subprocess.run(counting_cmd, env=env, check=True, capture_output=True, text=True).stdout.split()
        countings.append((float(out[0]), float(out[1])))
    n_items = len(suite.trials) * 2 * len(REFS)
    print(f"work: {len(suite.trials)} trials x {len(REFS)} reference counts x 2 sides = {n_items} candidates, "
          f"metrics {', '.join(METRICS)}; every run a fresh process (imports included); best of {args.repeat}; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    # On a shared machine wall time depends on the neighbours; CPU time (with the JVM's) much less so.
    coco_wall, coco_cpu = min(w for w, _ in cocos), min(c for _, c in cocos)
    print(f"{'run':<34}{'wall s':>9}{'cand/s':>9}{'speed-up':>10}{'CPU s':>9}{'CPU speed-up':>14}")
    for label, runs in (("pycocoevalcap (+ Java PTB), cold", cocos), ("MUTT Lab, cold (empty cache)", colds),
                        ("MUTT Lab, warm cache", warms)):
        wall, cpu = min(w for w, _ in runs), min(c for _, c in runs)
        print(f"{label:<34}{wall:>9.2f}{n_items / wall:>9.0f}{coco_wall / wall:>9.1f}x{cpu:>9.2f}"
              f"{coco_cpu / cpu:>13.1f}x")
    wall, cpu = min(w for w, _ in countings), min(c for _, c in countings)
    print(f"{'MUTT Lab, the scoring alone':<34}{wall:>9.2f}{n_items / wall:>9.0f}{'':>10}{cpu:>9.2f}")
    print(f"(the scoring alone: the six metrics' score calls on the grid, in a fresh process after its imports "
          f"and data loading, no cache); load average {os.getloadavg()[0]:.1f} at the end")

if __name__ == "__main__":
    main()
