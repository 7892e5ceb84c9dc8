"""Benchmark: every metric over the whole MUTT experiment set (10 sets x 5/10/20 references x original and
corruption), one table: seconds cold, seconds cached, sentences per second (cold), peak memory (RSS).

*Cold* is a fresh process with an empty score cache, measured from the moment the parent launches it:
interpreter start, imports, JVM / model / vectors loading and scoring through ``muttlab.engine.runner.run``.
*Cached* is the same run again in that process, every score now in the cache. *Cold CPU* is the CPU time
of the cold run (this process and the JVM it started), the figure to compare when the shared machine is
busy: on 2 cores a cold run cannot take less than about half of it. ``--compare-meteor``
also runs the older side-by-side of METEOR 1.5 against pycocoevalcap's wrapper.

    .venv/bin/python benchmarks/bench_metrics.py [--data-dir ../shared/data] [--only NAME[,NAME]] [--compare-meteor]

Each metric runs in its own child process, so the time includes loading (JVM, vectors, WordNet, the hashed
paraphrase table, spaCy and the ReVal model bundled in data/models) and the peak memory (ru_maxrss) is that
metric's alone. Nothing here is a test; the numbers depend on the machine and on what else runs on it (the
load average is printed).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path


from muttlab.settings import Settings  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
from muttlab.sources import MUTT_REF_COUNTS, load_mutt_experiments  # noqa: E402

TABLE = ("BLEU-4", "ROUGE-L", "CIDEr-D", "TER", "METEOR-1.5", "ML-METEOR", "W2V-AVG", "BADGER-like", "TERp", "DeltaBLEU",
         "ReVal-LSTM", "ReVal-TreeLSTM", "DREEM", "ML-DREEM")
OTHERS = TABLE + ("TERp-no-para",)


def _batches(data_dir: Path):
    suite = load_mutt_experiments(Settings(data_dir=data_dir))
    for name in suite.corruptions():
        trials = suite.of(name)
        for k in MUTT_REF_COUNTS:
            refs = [list(t.refs(k)) for t in trials]
            for side in ("orig", "corr"):
                yield [t.original if side == "orig" else t.corrupted for t in trials], refs


def _metric(name: str):
    from muttlab.metrics.registry import Registry

    if name == "TERp-no-para":
        from muttlab.metrics.terp import TerPlus
        return TerPlus(paraphrases=False)
    return Registry(use_entry_points=False).get(name)


def run_one(name: str, data_dir: Path) -> dict:
    """Score every batch with one metric in this process; time and peak memory."""
    batches = list(_batches(data_dir))
    start = time.perf_counter()
    metric = _metric(name)
    segments = 0
    for cands, refs in batches:
        metric.score(cands, refs)
        segments += len(cands)
    seconds = time.perf_counter() - start
    metric.close()
    return {"metric": name, "segments": segments, "seconds": round(seconds, 1), "cpu_s": round(_cpu(), 1),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}


def run_cold(name: str, data_dir: Path, launched: float) -> dict:
    """The runner on the whole grid from an empty cache, then again from the cache, in this fresh process."""
    import tempfile

    from muttlab.engine import runner

    with tempfile.TemporaryDirectory() as cache:
        settings = Settings(data_dir=data_dir, cache_dir=Path(cache), workers=1)
        suite = load_mutt_experiments(settings)
        registry = runner.registry_for(settings)
        runner.run(suite, [name], list(MUTT_REF_COUNTS), settings, registry)
        cold = time.time() - launched
        # CPU seconds of this process and its children (the JVM) for the cold run: unlike the wall time,
        # nearly independent of what else runs on a shared machine. Children count once they have exited,
        # so the registry is closed (stopping the JVM) before the cached run, which starts nothing.
        registry.close()
        cold_cpu_self = _cpu()
        start = time.perf_counter()
        runner.run(suite, [name], list(MUTT_REF_COUNTS), settings, registry)
        cached = time.perf_counter() - start
        registry.close()
        cold_cpu = cold_cpu_self + _cpu(resource.RUSAGE_CHILDREN)
    segments = len(suite.trials) * 2 * len(MUTT_REF_COUNTS)
    return {"metric": name, "segments": segments, "cold_s": round(cold, 1), "cached_s": round(cached, 2),
            "cpu_s": round(cold_cpu, 1), "per_s": round(segments / cold),
            # This process plus its largest child (the METEOR JVM), the memory the metric really holds.
            "peak_rss_mb": round((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                                  + resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024)}


def _cpu(who=resource.RUSAGE_SELF) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def run_meteor(data_dir: Path) -> dict:
    """The same 60 batches through our shared process and through pycocoevalcap's wrapper."""
    import numpy as np
    from pycocoevalcap.meteor.meteor import Meteor as CocoMeteor

    from muttlab.metrics.meteor import Meteor
    from muttlab.metrics.tokenize import ptb_tokenize

    batches = list(_batches(data_dir))
    warm = (["a man is playing a guitar"], [["a man plays a guitar"]])

    # Ours: start the shared process with one segment, then all batches.
    t0 = time.perf_counter()
    ours_metric = Meteor()
    ours_metric.score(*warm)
    t1 = time.perf_counter()
    ours = [ours_metric.score(c, r) for c, r in batches]
    t2 = time.perf_counter()
    ours_metric.close()
    ours_cpu = _cpu(resource.RUSAGE_CHILDREN)

    # pycocoevalcap: one wrapper for all batches, its best case (COCOEvalCap builds one per evaluate()).
    t3 = time.perf_counter()
    coco = CocoMeteor()
    coco.compute_score({0: warm[1][0]}, {0: warm[0]})
    t4 = time.perf_counter()
    theirs = []
    for cands, refs in batches:
        gts = {i: [ptb_tokenize(x) for x in rs] for i, rs in enumerate(refs)}
        res = {i: [ptb_tokenize(c)] for i, c in enumerate(cands)}
        theirs.append(np.asarray(coco.compute_score(gts, res)[1]))
    t5 = time.perf_counter()
    coco.meteor_p.kill()
    coco.meteor_p.wait()
    coco_cpu = _cpu(resource.RUSAGE_CHILDREN) - ours_cpu
    diff = max(float(np.abs(a - b).max()) for a, b in zip(ours, theirs))
    return {"segments": sum(len(c) for c, _ in batches), "ours_s": round(t2 - t0, 1),
            "ours_start_s": round(t1 - t0, 1), "ours_scoring_s": round(t2 - t1, 1), "ours_jvm_cpu_s": round(ours_cpu, 1),
            "pycocoevalcap_s": round(t5 - t3, 1), "coco_start_s": round(t4 - t3, 1),
            "coco_scoring_s": round(t5 - t4, 1), "coco_jvm_cpu_s": round(coco_cpu, 1),
            "ratio": round((t5 - t3) / (t2 - t0), 2), "scoring_ratio": round((t5 - t4) / (t2 - t1), 2),
            "max_abs_diff": diff}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, default=Path(os.environ.get("MUTTLAB_DATA_DIR")
                                                              or REPO.parent / "shared" / "data"))
    parser.add_argument("--only", help="comma-separated metric names (default: the whole table)")
    parser.add_argument("--compare-meteor", action="store_true")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--launched", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        if args.child == "METEOR":
            result = run_meteor(args.data_dir)
        elif args.launched is not None:
            result = run_cold(args.child, args.data_dir, args.launched)
        else:
            result = run_one(args.child, args.data_dir)
        print(json.dumps(result))
        return 0

    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs", flush=True)
    names = args.only.split(",") if args.only else list(TABLE)
    print(f"{'metric':<16}{'segments':>9}{'cold s':>9}{'cold CPU s':>12}{'cached s':>10}{'sent/s':>9}"
          f"{'peak RSS MB':>13}", flush=True)
    for name in names:
        out = subprocess.run([sys.executable, __file__, "--data-dir", str(args.data_dir), "--child", name,
                              "--launched", repr(time.time())], capture_output=True, text=True)
        if out.returncode != 0:
            print(f"{name:<16} failed: {(out.stderr.strip().splitlines() or ['?'])[-1]}", flush=True)
            continue
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"{r['metric']:<16}{r['segments']:>9}{r['cold_s']:>9}{r['cpu_s']:>12}{r['cached_s']:>10}{r['per_s']:>9}"
              f"{r['peak_rss_mb']:>13}", flush=True)
    if args.compare_meteor:
        out = subprocess.run([sys.executable, __file__, "--data-dir", str(args.data_dir), "--child", "METEOR"],
                             capture_output=True, text=True, check=True)
        result = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"METEOR-1.5, {result['segments']} segments (10 sets x 5/10/20 refs x 2 sides), max |diff| = "
              f"{result['max_abs_diff']}\n"
              f"  ours          {result['ours_s']:>7} s = start {result['ours_start_s']} s + scoring "
              f"{result['ours_scoring_s']} s (JVM CPU {result['ours_jvm_cpu_s']} s)\n"
              f"  pycocoevalcap {result['pycocoevalcap_s']:>7} s = start {result['coco_start_s']} s + scoring "
              f"{result['coco_scoring_s']} s (JVM CPU {result['coco_jvm_cpu_s']} s)\n"
              f"  pycocoevalcap / ours: {result['ratio']}x overall, {result['scoring_ratio']}x scoring only")
    print(f"load average at end: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
